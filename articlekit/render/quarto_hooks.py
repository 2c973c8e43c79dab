"""What a Quarto user's own `quarto render` and `quarto preview` run around
each render of the article: the real page, bound, or a failure that says why.

    python -m articlekit quarto pre-render     # before each render (preview's too)
    python -m articlekit quarto post-render    # after it

The article's _quarto.yml names a default Quarto profile, `author`, whose
file (_quarto-author.yml) lists both as the project's pre-render and
post-render scripts, sends the output to build/quarto/, and reads the
metadata file the pre-render writes. The build renders with the profile
`articlekit-build` (articlekit.render.page), which has no file: nothing of
this reaches Snakemake's page, and a render Snakemake runs cannot call
Snakemake again.

pre-render, in the article's folder (Quarto runs project scripts there):
- refuses a document other than the article the build binds (its values
  would be another file's);
- installs or refreshes the packaged value extension into
  _extensions/articlekit/ (articlekit.render.extension);
- runs Snakemake, from the project's root (the first folder above holding a
  Snakefile), for everything the page needs and nothing after it:
  `snakemake build/article.html --omit-from render`, so the values, the
  bindings, the lint and the figures, never the render itself. Options of
  its own in $ARTICLEKIT_SNAKEMAKE_ARGS (e.g. `--configfile config/test.yaml`);
- writes build/quarto-metadata.yml: the renderer's name for
  {{< meta renderer >}} and articlekit's page.css, which the build's page
  has too.
A failure (a typed number, a failed claim, a broken experiment) stops the
render with Snakemake's message and the command to rerun.

post-render: a page that still shows a `{{<` the article does not escape
(the extension missing, a profile not applied) is removed and the render
fails, naming the fix: Quarto itself only warns and exits 0.
"""

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from articlekit.core.errors import ArticlekitError
from articlekit.core.sources import SourceError, load_yaml, read_text
from articlekit.core.jsonio import write_text_atomic
from articlekit.render.extension import INSTALLED_COPY, install
from articlekit.render.page import PAGE_CSS, RenderError, check_output, expected_literal_shortcodes
from articlekit.render.renderers import display_name, version

PROFILE = "author"  # what _quarto.yml names as Quarto's default profile
METADATA = "build/quarto-metadata.yml"  # relative to the project's root
SNAKEMAKE_ARGS = "ARTICLEKIT_SNAKEMAKE_ARGS"


class HookError(ArticlekitError):
    pass


def project_root(start):
    """The first folder from start up that holds a Snakefile."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / "Snakefile").is_file():
            return folder
    raise HookError(f"no Snakefile in {start} or above it: `quarto render` here binds the article through "
                    "articlekit's Snakemake module, so the article's folder must sit inside its project "
                    "(python -m articlekit new writes one)")


def configured_article(root):
    """The article the build binds: config.yaml's `article:`, by default article/index.qmd."""
    config = root / "config.yaml"
    try:
        data = load_yaml(config) if config.is_file() else {}
    except SourceError as exc:
        raise HookError(str(exc)) from None
    return (root / ((data or {}).get("article") or "article/index.qmd")).resolve()


def quarto_files(variable):
    """Quarto's list of a script's files ($QUARTO_PROJECT_INPUT_FILES or
    ..._OUTPUT_FILES: one a line), or the file Quarto names instead."""
    named = os.environ.get(f"QUARTO_USE_FILE_FOR_{variable}")
    text = Path(named).read_text(encoding="utf-8") if named else os.environ.get(f"QUARTO_{variable}", "")
    return [line for line in text.splitlines() if line.strip()]


def check_inputs(project_dir, article, root):
    for name in quarto_files("PROJECT_INPUT_FILES"):
        if (project_dir / name).resolve() != article:
            raise HookError(f"{project_dir / name} is not the article this project builds "
                            f"({article.relative_to(root)}, config.yaml's `article:`), so there are no "
                            f"bindings for it: render the article (`quarto render {article.name}`), or bind "
                            "this file with `python -m articlekit bind` and render it with "
                            "`python -m articlekit render`")


def snakemake_command(root):
    extra = shlex.split(os.environ.get(SNAKEMAKE_ARGS, ""))
    # the target first and --omit-from last: --config in the extra options takes every word after it
    return [sys.executable, "-m", "snakemake", "build/article.html", "--cores", "all", "--show-failed-logs",
            *extra, "--omit-from", "render"]


def pre_render(project_dir):
    project_dir = Path(project_dir).resolve()
    root = project_root(project_dir)
    article = configured_article(root)
    check_inputs(project_dir, article, root)
    if install(project_dir):
        print(f"quarto pre-render: installed articlekit's value extension into "
              f"{(project_dir / INSTALLED_COPY).relative_to(root)}/", file=sys.stderr)
    command = snakemake_command(root)
    done = subprocess.run(command, cwd=root)
    if done.returncode != 0:
        shown = shlex.join(["snakemake", *command[3:]])
        raise HookError(f"the article's values, bindings or lint could not be made (snakemake exit "
                        f"{done.returncode}, its message above); fix what it names, then render again or run "
                        f"`{shown}` in {root}")
    quarto = version("quarto")
    metadata = {"css": [str(PAGE_CSS)]}
    if quarto:
        metadata["renderer"] = display_name("quarto", quarto)
    write_text_atomic(root / METADATA, yaml.safe_dump(metadata, allow_unicode=True))


def post_render(project_dir):
    project_dir = Path(project_dir).resolve()
    root = project_root(project_dir)
    article = configured_article(root)
    allowed = expected_literal_shortcodes(read_text(article))
    for name in quarto_files("PROJECT_OUTPUT_FILES"):
        output = (project_dir / name).resolve()
        if output.suffix not in (".html", ".md") or not output.is_file():
            continue
        try:
            check_output(output, allowed)
        except RenderError as exc:
            output.unlink()
            raise HookError(f"{exc} (removed): the value extension did not run. `quarto render` in "
                            f"{project_dir.relative_to(root) if project_dir != root else '.'} installs it "
                            f"through the `{PROFILE}` profile's pre-render (_quarto.yml: profile: default: "
                            f"{PROFILE}; _quarto-{PROFILE}.yml), or build the article with `snakemake`") from None


HOOKS = {"pre-render": pre_render, "post-render": post_render}


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit quarto", description=__doc__.splitlines()[0])
    parser.add_argument("hook", choices=sorted(HOOKS))
    args = parser.parse_args(argv)
    try:
        HOOKS[args.hook](Path.cwd())
    except (HookError, RenderError, OSError) as exc:
        print(f"quarto {args.hook}: {exc}", file=sys.stderr)
        return 1
    return 0
