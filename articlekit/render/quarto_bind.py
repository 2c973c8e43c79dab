"""The bindings the pre-render of Quarto's own `quarto render` and `quarto
preview` hands the page: made in this process when only the article's text
changed since Snakemake last made what the page needs, by Snakemake otherwise.

A Snakemake plan costs seconds on every save, even when all it has to do is
lint and bind the edited text again (18 s from save to page on a busy
machine, against under 2 s for Quarto alone). So after each Snakemake run
that succeeds, the pre-render records in build/quarto-state.json what that
run was given (taken just before it started, so that an edit made while it
ran counts as a change):

- the modification time and size of every file of the project that a rule
  may read, the article's text aside: experiments, config, the baseline,
  the Snakefile, the package (articlekit's modules, wherever installed),
  every other file but the ones a rule writes (build/, results/, figures/,
  logs/, benchmarks/out/), the hidden ones and __pycache__/; and the
  modification time of each folder Python imports from outside it (an
  install or an upgrade changes it);
- the Snakemake options ($ARTICLEKIT_SNAKEMAKE_ARGS) and this Python;
- what of the article's text the plan itself reads beyond the rules'
  inputs (plan_facts): its figure links and, when it binds robustness.*
  keys, the keys it prints and the claims it makes (the seed sweep's
  summary takes them as a param);
- the article, baseline and strict that rule bind was run with.

When all of that is as recorded, the article is linted and bound here, by
the very commands the rules lint_article and bind run (their `main`, with
the rules' arguments; what they print is shown when they fail, as
Snakemake shows a failed job's log), into build/quarto-bindings.json: byte
for byte what Snakemake's bind would write; and its prose is checked as
rule parse_article checks it (raw HTML, an image that is no figure, an
attribute that loads: refused), on the pieces the save changed
(articlekit.render.prose_pieces: Pandoc's read of the whole article would
cost more than the rest of the save). Anything else changed, or no run recorded,
and Snakemake runs (`snakemake build/article.html --omit-from html`: the
experiments that need it, the values, the bindings, the lint, the figures,
never the render). A value the page shows is never older than its inputs.
"""

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import articlekit
from articlekit.core.errors import ArticlekitError, run_command
from articlekit.article.figures import figure_links
from articlekit.core.jsonio import read_json, write_json, write_text_atomic
from articlekit.core.log import log
from articlekit.core.sources import SourceError, read_text
from articlekit.data.config import ConfigError, read_configs
from articlekit.render.extension import INSTALLED_COPY
from articlekit.render.renderers import RenderError

SNAKEMAKE_ARGS = "ARTICLEKIT_SNAKEMAKE_ARGS"
STATE = Path("build/quarto-state.json")  # paths relative to the project's folder
# What the page's bindings were last made from: the text, strict, the state
# they were bound under. `quarto preview` runs the pre-render more than once
# for one save (and once per render of a start); a second finds this
# record true and binds nothing.
LAST_BOUND = Path("build/quarto-last-bound.json")
PAGE_BINDINGS = Path("build/quarto-bindings.json")  # what the page reads: bound here, or a copy of BINDINGS
BINDINGS = Path("build/bindings.json")  # Snakemake's (rule bind): never written here
VALUES = Path("build/values.json")
LINT_REPORT = Path("build/quarto-lint.txt")  # lint's report of the text bound here (rule lint_article's is its own)
# Where the module's rules write (articlekit/workflow/*.smk): never what a
# bind reads but through build/values.json. A rule product elsewhere costs
# one more Snakemake run after it changes, never a stale value.
OUTPUT_FOLDERS = ("build", "logs", "results", "figures", "benchmarks/out")
# What Quarto's own render writes beside a text, the author profile setting
# no output-dir: each format's page (X.html, X.md for gfm, X.docx, ...) and
# X_files/, where X.qmd is the text, or X.md for a markdown one. No rule
# reads them: counted as inputs, every save's page would send the next save
# through Snakemake.
QUARTO_PAGE_SUFFIXES = (".html", ".md", ".docx", ".pdf", ".tex", ".xml", ".typ", ".epub", ".ipynb")
STATE_FORMAT = 1
DEFAULT_ARTICLE, DEFAULT_BASELINE = "article/index.qmd", "baseline/published.yaml"


class Unbound(ArticlekitError):
    """The article could not be linted and bound: why (a line for the
    terminal), and its problems in the words of the step that found them."""

    def __init__(self, why, lines):
        super().__init__(why)
        self.why, self.lines = why, list(lines)


@dataclass(frozen=True)
class Settings:
    """What the module reads from the config for lint and bind, as Snakemake
    would be given it by the pre-render."""

    root: Path
    args: tuple  # the extra Snakemake options
    article: str  # config `article:`, relative to root, as the rules spell it
    baseline: str  # config `baseline:`

    @property
    def command(self):
        """Snakemake for everything the page needs and nothing after it. The
        target first and --omit-from last: --config in the extra options
        takes every word after it."""
        return [
            sys.executable,
            "-m",
            "snakemake",
            "build/article.html",
            "--cores",
            "all",
            "--show-failed-logs",
            *self.args,
            "--omit-from",
            "html",  # the page's rule (articlekit/render/formats/html.py): the editor's Quarto renders it
        ]

    @property
    def shown_command(self):
        return shlex.join(["snakemake", *self.command[3:]])


def settings(root):
    """The article and baseline the module binds: config.yaml, then each
    --configfile of $ARTICLEKIT_SNAKEMAKE_ARGS (later files override
    earlier ones, as Snakemake merges them), then its --config KEY=VALUE."""
    extra = tuple(shlex.split(os.environ.get(SNAKEMAKE_ARGS, "")))
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--configfile", "--configfiles", nargs="+", default=[])
    parser.add_argument("--config", "-C", nargs="+", default=[])
    given, _ = parser.parse_known_args(list(extra))
    files = [root / "config.yaml"] if (root / "config.yaml").is_file() else []
    try:
        config = read_configs([*files, *(root / f for f in given.configfile)])
    except (ConfigError, SourceError, OSError) as exc:
        raise Unbound(f"the config cannot be read: {exc}", [str(exc)]) from None
    for entry in given.config:
        key, _, value = entry.partition("=")
        config[key] = value
    return Settings(
        root, extra, str(config.get("article") or DEFAULT_ARTICLE), str(config.get("baseline") or DEFAULT_BASELINE)
    )


def input_files(root, article):
    """{path: [mtime_ns, size]} of the files a rule may read besides the
    article's text (see the module's docstring); folders Python imports
    from outside the project as {path: [mtime_ns]}."""
    root, article = Path(root), Path(article)
    # the extensions' copies the pre-render installs (the article's folder's,
    # the project's own for its `quarto preview`): no rule reads them
    skipped = {root / folder for folder in OUTPUT_FOLDERS} | {article.parent / INSTALLED_COPY, root / INSTALLED_COPY}
    found = {}

    def walk(top):
        for folder, dirs, files in os.walk(top):
            here = Path(folder)
            pages = quarto_pages(files)
            dirs[:] = sorted(
                d
                for d in dirs
                if not d.startswith(".") and d != "__pycache__" and here / d not in skipped and d not in pages
            )
            for name in files:
                path = here / name
                if name.startswith(".") or path == article or name in pages:
                    continue
                try:
                    stat = path.stat()
                except OSError:  # removed meanwhile, or a dangling link
                    continue
                found[str(path.relative_to(root) if path.is_relative_to(root) else path)] = [
                    stat.st_mtime_ns,
                    stat.st_size,
                ]

    walk(root)
    package = Path(articlekit.__file__).resolve().parent
    if not package.is_relative_to(root):
        walk(package)
    for entry in sys.path:
        folder = Path(entry or ".").resolve()
        if folder.is_dir() and not folder.is_relative_to(root) and not folder.is_relative_to(package):
            found[str(folder)] = [folder.stat().st_mtime_ns]
    return found


def quarto_pages(names):
    """The names Quarto's own render gives the pages of the texts among a
    folder's file `names` (QUARTO_PAGE_SUFFIXES), and their X_files/."""
    texts = {name[: -len(".qmd")] for name in names if name.endswith(".qmd")}
    markdown = {name[: -len(".md")] for name in names if name.endswith(".md")} - texts
    pages = {f"{stem}_files" for stem in texts | markdown}
    pages.update(f"{stem}{suffix}" for stem in texts for suffix in QUARTO_PAGE_SUFFIXES)
    pages.update(f"{stem}{suffix}" for stem in markdown for suffix in QUARTO_PAGE_SUFFIXES if suffix != ".md")
    return pages


def plan_facts(article, text):
    """What Snakemake's plan reads from the article's text beyond the rules'
    inputs (articlekit/workflow: every read_text(ARTICLE) there;
    tests/test_quarto_hooks.py holds this list to them): the figures it
    links (inputs of the render, and checked to be built) and, for an article
    that binds robustness.* keys, what it prints and claims (a param of the
    seed sweep's summary, whose values it binds). A text without the word
    robustness binds none."""
    facts = {"figures": [link.path for link in figure_links(text, os.path.dirname(article) or ".")]}
    if "robustness" in text:
        from articlekit.article.robustness import RobustnessError, article_shortcodes  # only for such a text

        try:
            facts["robustness"] = article_shortcodes(article, text)
        except RobustnessError as exc:  # bind names it; the plan reads it as no shortcodes
            facts["robustness"] = str(exc)
    return facts


def load_state(root):
    try:
        state = read_json(Path(root) / STATE)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and state.get("format") == STATE_FORMAT else None


def changed_since(state, config, text):
    """Why the text cannot be bound here (-> a phrase), or None when only
    the article's text changed since the run the state records."""
    root = config.root
    if state is None:
        return f"no Snakemake run recorded yet ({STATE})"
    if state.get("args") != list(config.args) or state.get("python") != sys.executable:
        return f"the Snakemake options (${SNAKEMAKE_ARGS}) or the Python changed"
    if state.get("article") != config.article or state.get("baseline") != config.baseline:
        return "the config names another article or baseline"
    if not (root / VALUES).is_file() or not (root / config.baseline).is_file():
        return f"{VALUES} or {config.baseline} is missing"
    now, then = input_files(root, root / config.article), state.get("files") or {}
    moved = sorted(path for path in set(now) | set(then) if now.get(path) != then.get(path))
    if moved:
        return f"{', '.join(moved[:3])}{f' and {len(moved) - 3} more' if len(moved) > 3 else ''} changed"
    if plan_facts(config.article, text) != state.get("facts"):
        return f"{config.article}'s figure links, or the keys and claims its seed sweep reads, changed"
    return None


def bind_here(config, strict, text):
    """Lint and bind in this process, with the arguments of rules lint_article
    and bind, and check the prose as rule parse_article does (the pieces of
    `text`, the article as read, that changed: articlekit.render.prose_pieces):
    -> the bindings file. Their output goes to the terminal as theirs would;
    Unbound carries it when any of them fails."""
    # only here: the plan's way needs none of them, the post-render (settings) neither
    from articlekit.article import bind, lint
    from articlekit.render import prose_pieces

    steps = [
        ("lint", lint.main, [config.article, "--values", str(VALUES), "--out", str(LINT_REPORT)]),
        (
            "bind",
            bind.main,
            [
                config.article,
                "--values",
                str(VALUES),
                "--strict",
                "true" if strict else "false",
                "--baseline",
                config.baseline,
                "--out",
                str(PAGE_BINDINGS),
            ],
        ),
    ]
    said = []
    # rule parse_article's check, on the pieces this save changed: Pandoc runs
    # while lint and bind do (it prints nothing, so their redirect is no matter)
    prose = ThreadPoolExecutor(max_workers=1)
    checked = prose.submit(prose_pieces.check_changed, config.root, config.article, text)
    prose.shutdown(wait=False)
    for name, main, argv in steps:
        out = io.StringIO()
        with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
            status = run_command(name, main, argv)  # as `python -m articlekit NAME` runs it
        if status != 0:  # what the rule's log would hold, which Snakemake would show
            if out.getvalue():
                log.error(out.getvalue().removesuffix("\n"))
            said += [line for line in out.getvalue().splitlines() if line.strip()]
    try:
        checked.result()
    except (ValueError, RenderError, OSError) as exc:  # a ProseError is a ValueError
        log.error(f"parse: {exc}")
        said += [f"parse: {line}" if at == 0 else line for at, line in enumerate(str(exc).splitlines())]
    if said:
        raise Unbound("lint, bind or the prose check found problems in the article", said)
    return config.root / PAGE_BINDINGS


def bind_with_snakemake(config, text, previewing=False):
    """Run the plan; record what it was given once it succeeds; previewing
    (`quarto preview`: saves will follow), read the prose's pieces for the
    next save. -> the bindings file."""
    from articlekit.render import prose_pieces  # as bind_here's

    root = config.root
    given = {
        "format": STATE_FORMAT,
        "args": list(config.args),
        "python": sys.executable,
        "article": config.article,
        "baseline": config.baseline,
        "files": input_files(root, root / config.article),
        "facts": plan_facts(config.article, text),
    }
    said = []
    with subprocess.Popen(
        config.command,
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
        errors="replace",
    ) as process:
        for line in process.stdout:
            log.info(line.removesuffix("\n"))
            said.append(line.rstrip("\n"))
    if process.returncode != 0:
        raise Unbound(f"snakemake exit {process.returncode}", failed_logs(said))
    try:
        bindings = read_text(root / BINDINGS)
        bound = json.loads(bindings)
    except (OSError, ValueError, SourceError) as exc:
        raise Unbound(f"snakemake made no readable {BINDINGS}", [str(exc)]) from None
    # one file for the page whichever way it was bound: the metadata naming
    # it stays the same, so `quarto preview` sees no change of its config
    write_text_atomic(root / PAGE_BINDINGS, bindings)
    # bind's own record of the article and strict it ran with; a mismatch
    # (a config this module reads otherwise) records nothing: Snakemake again
    if bound.get("article") == config.article and isinstance(bound.get("strict"), bool):
        write_json(root / STATE, {**given, "strict": bound["strict"]})
    if previewing and read_text(root / config.article) == text:  # rule parse_article checked it whole
        prose_pieces.remember_all(root, config.article, text)
    return root / PAGE_BINDINGS


def failed_logs(said):
    """What a failed Snakemake run said that the author needs: each failed
    job's log as --show-failed-logs prints it (where articlekit's steps
    write their message and the fix), without the banner and the job's
    input list; else the end of its output (a plan that stopped before any job)."""
    shown, inside = [], False
    for line in said:
        if re.fullmatch(r"Logfile \S+:", line):
            shown.append(line)
        elif line.startswith("=" * 20):
            inside = not inside
        elif inside and line.strip():
            shown.append(f"  {line}")
    return shown or [line for line in said if line.strip()][-15:]


def bindings_for_render(config, previewing=False):
    """-> (the bindings file the page reads, how it was made: a phrase).
    previewing: under `quarto preview`, where saves follow."""
    try:
        text = read_text(config.root / config.article)
    except (OSError, SourceError) as exc:
        raise Unbound(str(exc), [str(exc)]) from None
    state = load_state(config.root)
    why = changed_since(state, config, text)
    started = time.perf_counter()
    if why is None:
        if last_bound(config.root) == bound_from(config.root, text, state["strict"]):
            return config.root / PAGE_BINDINGS, (
                f"nothing to bind: {config.article}'s text and everything it reads are as when its "
                f"bindings were last made"
            )
        path = bind_here(config, state["strict"], text)
        remember_bound(config.root, text, state["strict"])
        return path, (
            f"bound in {time.perf_counter() - started:.1f} s without Snakemake (only "
            f"{config.article}'s text changed since its last run)"
        )
    log.info(f"quarto pre-render: {why}: running `{config.shown_command}`")
    path = bind_with_snakemake(config, text, previewing)
    if (state := load_state(config.root)) is not None:  # recorded: the run bound this config's article
        remember_bound(config.root, text, state["strict"])
    return path, f"made by Snakemake in {time.perf_counter() - started:.1f} s"


def bound_from(root, text, strict):
    """What the page's bindings are made from now: the text's digest,
    strict, and the digests of the state they were bound under and of the
    bindings file itself (a file edited or removed since is made again)."""
    return {
        "format": STATE_FORMAT,
        "text": digest(text.encode("utf-8")),
        "strict": strict,
        "state": file_digest(root / STATE),
        "bindings": file_digest(root / PAGE_BINDINGS),
    }


def remember_bound(root, text, strict):
    write_json(root / LAST_BOUND, bound_from(root, text, strict))


def last_bound(root):
    try:
        return read_json(Path(root) / LAST_BOUND)
    except (OSError, ValueError):
        return None


def digest(data):
    return hashlib.sha256(data).hexdigest()


def file_digest(path):
    try:
        return digest(Path(path).read_bytes())
    except OSError:
        return None
