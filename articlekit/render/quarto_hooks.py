"""What a Quarto user's own `quarto render` and `quarto preview` run around
each render of the article: the real page, bound, or a failure that says why.

    python -m articlekit quarto pre-render     # before each render (preview's too)
    python -m articlekit quarto post-render    # after it

One Quarto project names them: the project's _quarto.yml (in the folder
with the Snakefile) holds the article's settings and names a default
Quarto profile, `author`, whose file (_quarto-author.yml) lists these
hooks, reads the metadata file the pre-render writes and sets no
output-dir: the page goes beside its text, article/index.html (an
output-dir makes Quarto walk every file of the project, hidden folders
included, each time it reads the project). `quarto render` and `quarto preview`
in the article's folder find that project too (Quarto looks up), so both
give the article wherever an author runs them, one render per save: a
project of the article's own below it would make `quarto preview` in the
project's folder render each save twice (its serve files the nested
project's render under the wrong paths). The project's index page,
index.md (LANDING_PAGE), leads to the article's: Quarto previews a
project's folder only from one. The build renders in the article's folder
with the profile `articlekit-build` (articlekit.render.quarto_route),
which has no file: nothing of this reaches Snakemake's page, and a render
Snakemake runs cannot call Snakemake again.

pre-render, in the Quarto project's folder (Quarto runs project scripts there):
- refuses a document other than the article the build binds (its values
  would be another file's), or the index page that leads to it;
- installs or refreshes the packaged value extension into the article's
  _extensions/articlekit/ (articlekit.render.extension);
- makes the bindings (articlekit.render.quarto_bind): in this process, as
  rules lint_article and bind do (and the prose checked as rule
  parse_article checks it, on the pieces that changed), when only the article's text changed
  since Snakemake last ran for it (a second, not a Snakemake plan per
  save); otherwise through Snakemake, `snakemake build/article.html
  --omit-from html`, from the project's folder (the first folder above
  holding a Snakefile and a config.yaml), options of its own in
  $ARTICLEKIT_SNAKEMAKE_ARGS (e.g. `--configfile config/test.yaml`);
- writes the bound document (build/quarto-bound.txt: the text with its
  values in, as the build's Quarto route renders it), which Quarto 1.9 and
  later renders in the text's place (the bound engine, articlekit/render/
  quarto/_extensions/bound/, while the text is the one bound): reading
  and resolving several hundred shortcodes cost most of a render;
- writes the metadata file its project reads (build/quarto-project-metadata.yml,
  or build/quarto-metadata.yml for a Quarto project in the article's own
  folder): the bindings file for value.lua (the shortcodes of a text the
  engine does not take, and of a page of problems, which has no bound
  document), the renderer's name for {{< meta renderer >}}, articlekit's
  page.css as the build's page has it, the bibliography as
  build/cited-bibliography.bib (its values bound,
  articlekit.render.citations; metadata files override the project's
  settings), and, where the article's folder has a project of its own
  below the one rendering (the layout before one project), that
  project's settings.
A style sheet _quarto.yml names outside the project, or one that loads a
file (articlekit.render.project.check_style_sheets), stops the render
under `quarto preview` too: Quarto would embed it in any page.
A failure (a typed number, a failed claim, an unknown key, a broken
experiment) stops `quarto render` with the message of the step that found
it and the command to rerun. Under `quarto preview` it does not stop the
render, whose page Quarto would replace by a blank "Quarto Render Error":
the page is rendered with a banner listing the problems, each with its
file:line, over the best bindings there are (the text bound with
strict=false, or else the last good bindings, a shortcode they lack marked
on the page), and the terminal says the same.

post-render: a page that still shows a `{{<` the article does not escape
(the extension missing, a profile not applied) is removed and the render
fails, naming the fix: Quarto itself only warns and exits 0.
"""

import argparse
import hashlib
import html
import json
import os
import re
from pathlib import Path

import yaml

from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import write_text_atomic
from articlekit.core.log import log
from articlekit.core.project import NoProject, project_folder
from articlekit.core.sources import read_text
from articlekit.core.text import md_code
from articlekit.render import quarto_bind
from articlekit.render.extension import BOUND_POINTER, INSTALLED_COPY, install
from articlekit.render.citations import KEYS, quarto_paths
from articlekit.render.checks import check_output, expected_literal_shortcodes
from articlekit.render.project import PAGE_CSS, check_style_sheets, project_config, project_options, quarto_options
from articlekit.render.project import project_root as settings_folder
from articlekit.render.renderers import RenderError, display_name, pandoc_file, version
from articlekit.render.luafilters import (
    BOUND_FILTER,
    EMBED_FIGURES_FILTER,
    SCROLL_REGIONS_FILTER,
)

PROFILE = "author"  # what the project's _quarto.yml names as Quarto's default profile
# The metadata file a Quarto project reads (relative to the project's
# folder). Two names: in the layout before one project, the project's and
# article/'s each read one, and a project whose metadata file is written
# renders everything again.
METADATA = Path("build/quarto-metadata.yml")  # a project in the article's folder
PROJECT_METADATA = Path("build/quarto-project-metadata.yml")  # the project folder's _quarto-author.yml's
FAILURE_BANNER = Path("build/quarto-problems.html")  # the banner of a failure page of quarto preview
# the bound document Quarto renders in the article's place (the bound
# engine): no .qmd or .md, which the project's own `quarto preview` would
# take for a page of its own
BOUND_DOCUMENT = Path("build/quarto-bound.txt")
FIGURE_DATA = Path("build/quarto-figures")  # the figures' data and alt text, as the build's page has them
# the page in the Quarto project's folder that leads to the article's: no
# `quarto preview` of a project's folder without one (quarto-cli's serve.ts)
LANDING_PAGE = "index.md"
# where the bibliography Quarto reads is written, its values bound (cited-bibliography.bib)
BIBLIOGRAPHY_FOLDER = Path("build")


class HookError(ArticlekitError):
    pass


def project_root(start):
    """The project's folder: the first from start up with a Snakefile and a config.yaml."""
    try:
        return project_folder(start)
    except NoProject as exc:
        raise HookError(
            f"{exc}. `quarto render` here binds the article through articlekit's Snakemake module, "
            "so the article's folder must sit inside its project"
        ) from None


def quarto_files(variable):
    """Quarto's list of a script's files ($QUARTO_PROJECT_INPUT_FILES or
    ..._OUTPUT_FILES: one a line, relative to the Quarto project's folder),
    or the file Quarto names instead."""
    named = os.environ.get(f"QUARTO_USE_FILE_FOR_{variable}")
    text = Path(named).read_text(encoding="utf-8") if named else os.environ.get(f"QUARTO_{variable}", "")
    return [line for line in text.splitlines() if line.strip()]


def check_inputs(project_dir, article, root):
    for name in quarto_files("PROJECT_INPUT_FILES"):
        if (project_dir / name).resolve() != article and not is_landing_page(project_dir, name):
            raise HookError(
                f"{project_dir / name} is not the article this project builds "
                f"({article.relative_to(root)}, config.yaml's `article:`), so there are no "
                f"bindings for it: render the article (`quarto render {article.name}` in "
                f"{article.parent.relative_to(root) or '.'}/, or `quarto render` in the project's "
                "folder), or bind this file with `python -m articlekit bind` and render it with "
                "`python -m articlekit render`"
            )


def is_landing_page(project_dir, name):
    """Whether the input `name` is the Quarto project's LANDING_PAGE, which
    shows no value: Quarto previews a project's folder only where it has
    an index page, and this one leads to the article's page."""
    path = project_dir / name
    if Path(name).as_posix() != LANDING_PAGE or not path.is_file():
        return False
    return not re.search(r"\{\{<\s*value\b", read_text(path))


def quarto_command():
    """The Quarto command this hook runs under ("render", "preview", ...),
    read from the command line of the Quarto process above it (Quarto tells
    its project scripts nothing of the kind); None when there is none."""
    import psutil  # the pre-render's alone: the post-render need not load it

    try:
        process = psutil.Process().parent()
        for _ in range(4):  # Quarto, or the launcher script that started it
            if process is None:
                break
            words = process.cmdline()
            for at, word in enumerate(words):
                if re.search(r"(^|[/\\])quarto(\.js|\.ts|\.exe)?$", word):
                    rest = [w for w in words[at + 1 :] if not w.startswith("-")]
                    if rest:
                        return rest[0]
            process = process.parent()
    except psutil.Error:
        pass
    return None


def pre_render(project_dir):
    project_dir = Path(project_dir).resolve()
    root = project_root(project_dir)
    try:
        config = quarto_bind.settings(root)
    except quarto_bind.Unbound as exc:
        raise HookError(exc.why) from None
    article = (root / config.article).resolve()
    check_inputs(project_dir, article, root)
    warn_of_a_nested_project(root, article)
    # Quarto embeds the style sheets _quarto.yml names as it reads them: one
    # outside the project, or one that loads a file, stops the render here,
    # under `quarto preview` too (a page of problems would embed it as well)
    settings = settings_folder(article.parent)
    check_style_sheets(settings, project_options(settings))
    # the article's folder finds the value extension; the Quarto project's,
    # the bound engine (Quarto looks for engines in the project's folder only)
    for folder in copies_for(project_dir, article):
        if install(folder):
            log.info(
                f"quarto pre-render: installed articlekit's Quarto extensions into "
                f"{(folder / INSTALLED_COPY).relative_to(root)}/"
            )
    os.chdir(root)  # the rules' paths are the project's
    failure, previewing = None, quarto_command() == "preview"
    try:
        bindings, how = quarto_bind.bindings_for_render(config, previewing)
    except quarto_bind.Unbound as exc:
        if not previewing:
            raise HookError(
                f"the article's values, bindings or lint could not be made ({exc.why}, its "
                f"message above); fix what it names, then render again, or run "
                f"`{config.shown_command}` in {root}"
            ) from None
        bindings, failure = root / quarto_bind.PAGE_BINDINGS, failure_page(config, exc)
        how = "rendered with the problems at the top of the page (`quarto render` would stop here)"
    write_metadata(root, project_dir, article, bindings, failure)
    log.info(f"quarto pre-render: {config.article}: {how}")


def warn_of_a_nested_project(root, article):
    """Say how to leave the layout before one project (a _quarto.yml in the
    article's folder inside the project's): it still renders, but `quarto
    preview` in the project's folder renders each save twice there."""
    inner, outer = article.parent / "_quarto.yml", root / "_quarto.yml"
    if article.parent == root or not (inner.is_file() and outer.is_file()):
        return
    log.warning(
        f"quarto pre-render: {inner.relative_to(root)} makes {article.parent.relative_to(root)}/ a Quarto "
        f"project of its own inside the project's ({outer.name}), so `quarto preview` in the project's "
        f"folder renders each save twice. Keep one project: move its settings into {outer.name} (their "
        f"paths relative to the project's folder), its pre-render and post-render into "
        f"_quarto-{PROFILE}.yml, and remove it, as `python -m articlekit new` lays a project out"
    )


def copies_for(project_dir, article):
    """The folders that hold a copy of the extensions: the article's, and
    the Quarto project's when it is another."""
    return list(dict.fromkeys([article.parent, project_dir]))


def failure_page(config, unbound):
    """The banner of the page `quarto preview` shows when the article could
    not be bound, and that page's bindings: the current text bound with
    strict=false where it binds at all, else the last ones made. -> lines."""
    from articlekit.article.bind import BindError, bind
    from articlekit.article.bindings import write_bindings
    from articlekit.core.jsonio import read_json
    from articlekit.data.baseline import load_baseline

    root, page = config.root, config.root / quarto_bind.PAGE_BINDINGS
    lines = [
        f"articlekit: this page is not the article: {unbound.why}. `quarto render` would stop here; "
        "fix what is named below and save.",
        *(f"  {line}" for line in unbound.lines),
    ]
    try:
        baseline = root / config.baseline
        document = bind(
            config.article,
            read_text(root / config.article),
            read_json(root / quarto_bind.VALUES),
            False,
            load_baseline(baseline) if baseline.is_file() else None,
        )
        write_bindings(page, document)
        return lines + [
            f"The numbers below: the text as saved, bound with strict=false to {quarto_bind.VALUES} "
            "as it stands; a failed claim is marked beside its number."
        ]
    except (BindError, OSError, ValueError):
        pass
    if page.is_file():
        return lines + [
            f"The numbers below are from the last bindings made ({quarto_bind.PAGE_BINDINGS}); a "
            "shortcode they lack is marked ⚠."
        ]
    return lines + ["Nothing could be bound yet: every shortcode is marked ⚠."]


def article_settings(root, article, cited=(None, None)):
    """The article's _quarto.yml settings (its project: and profile: aside)
    and articlekit's page.css first, every path absolute: for the project's
    own _quarto.yml, which renders the article from outside its folder.
    cited: (the bindings document, the text of a value they lack), for
    the bibliography's copy (BIBLIOGRAPHY_FOLDER)."""
    folder = settings_folder(article.parent)
    options = quarto_options(folder, article.parent, cited[0], root / BIBLIOGRAPHY_FOLDER, cited[1])
    for fmt in (options.get("format") or {}).values():
        if "css" in fmt:
            fmt["css"] = [str((article.parent / sheet).resolve()) for sheet in fmt["css"]]
    return options


def cited_values(bindings, failure):
    """(the bindings document, the text for a value it lacks) that bind the
    bibliography Quarto reads: a key the bindings lack stops the render,
    and is marked ⚠ on a page of problems (`quarto preview`'s)."""
    from articlekit.article.bindings import BindingsError, load_bindings

    try:
        return load_bindings(bindings), "⚠" if failure is not None else None
    except BindingsError as exc:
        if failure is None:
            raise HookError(str(exc)) from None
        return None, "⚠"


def write_metadata(root, project_dir, article, bindings, failure):
    """The Quarto project's metadata file (METADATA, PROJECT_METADATA), read
    through its metadata-files after the pre-render (Quarto reads its
    project again then)."""
    cited = cited_values(bindings, failure)
    if project_dir != settings_folder(article.parent):
        # a project of the article's own below this one (the layout before
        # one project): Quarto renders the article through it, so its
        # settings are handed over
        metadata = article_settings(root, article, cited)
    else:  # this project's _quarto.yml names the bibliography: the bound copy instead
        config = project_config(project_dir)
        bound = quarto_paths(config, project_dir, cited[0], root / BIBLIOGRAPHY_FOLDER, cited[1])
        metadata = {"css": [pandoc_file(PAGE_CSS)], **{key: bound[key] for key in KEYS if key in bound}}
    quarto = version("quarto")
    if quarto:
        metadata["renderer"] = display_name("quarto", quarto)
    metadata["value-bindings"] = md_code(str(bindings))  # Pandoc reads metadata as Markdown (core.text.md_code)
    listed = metadata.get("filters")
    filters = [*([listed] if isinstance(listed, str) else listed or [])]
    if failure is None and cited[0] is not None:
        # what Quarto renders in the text's place (the bound engine), its
        # spans written as the build's Quarto route writes them
        write_bound_document(root, article, cited[0], copies_for(project_dir, article))
        filters = [str(BOUND_FILTER), *filters]
    else:  # no bound document: the value extension resolves the shortcodes
        for folder in copies_for(project_dir, article):
            (folder / BOUND_POINTER).unlink(missing_ok=True)
    filters += page_filters(root, article, metadata)
    if filters:
        metadata["filters"] = filters
    if failure is not None:
        from articlekit.render.preview import BANNER

        banner = root / FAILURE_BANNER
        # a message may quote a shortcode ("print it with {{< value KEY >}}"): its
        # braces written as an entity, so that the post-render's count of
        # unresolved shortcodes does not take the banner for one
        said = html.escape("\n".join(failure)).replace("{{", "{&#123;")
        write_if_changed(banner, BANNER.format(said) + "\n")
        metadata["value-unbound"] = "mark"
        html_options = metadata.setdefault("format", {}).setdefault("html", {})
        html_options["include-before-body"] = [str(banner)]
        log.warning("quarto pre-render: " + "\n".join(failure))
    write_if_changed(
        root / (METADATA if project_dir == article.parent else PROJECT_METADATA),
        yaml.safe_dump(metadata, allow_unicode=True, sort_keys=False),
    )


def page_filters(root, article, metadata):
    """The build's page filters for Quarto's own page, so that it is the
    build's page: each figure embedded with the alt text its file carries
    (embed_figures.lua, over page.figure_data's file, named in metadata)
    and each scrolling box focusable by keyboard (scroll_regions.lua, after
    Quarto's own). [] while a figure the article shows is not built yet or
    is refused (the render still runs; the prose check names the figure)."""
    from articlekit.article.figures import FigureError
    from articlekit.article.prose_guard import ShownFigure
    from articlekit.render.figuredata import figure_data
    from articlekit.render.incremental import IMAGE_LINK

    links = dict.fromkeys(IMAGE_LINK.findall(read_text(article)))
    shown = [ShownFigure(0, link, os.path.relpath((article.parent / link).resolve(), root.resolve())) for link in links]
    folder = root / FIGURE_DATA
    folder.mkdir(parents=True, exist_ok=True)
    try:
        data = figure_data(shown, article, folder, root)
    except (FigureError, RenderError, OSError) as exc:
        log.warning(f"quarto pre-render: the page's figures are not embedded ({exc})")
        return []
    metadata["figure-data"] = md_code(str(data))
    return [str(EMBED_FIGURES_FILTER), {"path": str(SCROLL_REGIONS_FILTER), "at": "post-render"}]


def write_bound_document(root, article, document, copies):
    """BOUND_DOCUMENT: the article's text bound by the bindings document,
    as the build's Quarto route renders it; and the bound engine's
    BOUND_POINTER, naming the article and the md5 of the very text bound
    (as Quarto reads it: UTF-8, its byte-order mark dropped) in each of
    the copies' folders, so that the engine renders it only in that text's
    place."""
    # the pre-render's alone (a tenth of a second of imports the post-render skips)
    from articlekit.article.bound import BoundError, bound_markdown
    from articlekit.article.shortcodes import ShortcodeSyntaxError
    from articlekit.render.quarto_route import inert_for_quarto

    data = article.read_bytes()
    text = data.decode("utf-8-sig")
    try:
        bound = bound_markdown(text.replace("\r\n", "\n").replace("\r", "\n"), document, article)
    except (ShortcodeSyntaxError, BoundError) as exc:
        raise HookError(f"{article}: the bound document could not be made: {exc}") from None
    write_if_changed(root / BOUND_DOCUMENT, inert_for_quarto(bound))
    pointer = {
        "source": str(article),
        "md5": hashlib.md5(text.encode("utf-8")).hexdigest(),
        "bound": str(root / BOUND_DOCUMENT),
    }
    for folder in copies:  # each copy's engine reads the pointer beside it
        write_if_changed(folder / BOUND_POINTER, json.dumps(pointer, indent=1) + "\n")


def write_if_changed(path, text):
    """Write only what differs: `quarto preview` of a project watches its
    metadata files, and renders the whole project again when one is written."""
    try:
        if Path(path).read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    write_text_atomic(path, text)


def post_render(project_dir):
    project_dir = Path(project_dir).resolve()
    root = project_root(project_dir)
    try:
        config = quarto_bind.settings(root)
    except quarto_bind.Unbound as exc:
        raise HookError(exc.why) from None
    article = root / config.article
    allowed = expected_literal_shortcodes(read_text(article))
    for name in quarto_files("PROJECT_OUTPUT_FILES"):
        output = (project_dir / name).resolve()
        if output.suffix not in (".html", ".md") or not output.is_file():
            continue
        try:
            check_output(output, allowed)
        except RenderError as exc:
            output.unlink()
            where = project_dir.relative_to(root) if project_dir != root else "."
            raise HookError(
                f"{exc} (removed): the value extension did not run. `quarto render` in {where} "
                f"installs it through its pre-render (the project's _quarto.yml, or in the "
                f"article's folder _quarto.yml: profile: default: {PROFILE}; _quarto-{PROFILE}.yml), "
                "or build the article with `snakemake`"
            ) from None


HOOKS = {"pre-render": pre_render, "post-render": post_render}


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit quarto", description=__doc__.splitlines()[0])
    parser.add_argument("hook", choices=sorted(HOOKS))
    args = parser.parse_args(argv)
    try:
        HOOKS[args.hook](Path.cwd())
    except (HookError, RenderError, OSError) as exc:
        log.error(f"quarto {args.hook}: {exc}")
        return 1
    return 0
