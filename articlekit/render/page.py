"""Render the article to build/article.html (self-contained) and
build/article.md (GitHub markdown, for diffs between builds).

    python -m articlekit render article/index.qmd --bindings build/bindings.json \\
        --renderer auto --html build/article.html --md build/article.md

--renderer auto picks Quarto when `quarto` is on PATH, otherwise Pandoc 3
(the pypandoc-binary wheel's, or `pandoc` on PATH). Neither looks a value
up: both render the bound document (articlekit.article.bound: bind wrote
it, --bound; made now from the bindings when not given), whose shortcodes
are already the values, marks and tables they print, and both run
articlekit/render/filters/bound.lua first, which writes those spans as a
page shows them. The Quarto extension (render/quarto/_extensions/value)
is what an editor's own `quarto render` runs on the article itself.

- quarto: `quarto render` of the bound document, written beside the
  article (render-*-bound.qmd, so that its links and _quarto.yml resolve as
  the article's) in the article's folder (where a bare --output lands), with
  the renderer name passed as metadata (-M) and _quarto.yml's settings as a
  metadata file: Quarto ignores _quarto.yml when a folder of the path
  starts with ".", and renders the same page either way with them handed
  over. It renders with the profile articlekit-build, so the article's
  default profile (a Quarto user's own `quarto render`: its pre-render, its
  output-dir; articlekit.render.quarto_hooks) never applies here. Its
  leftovers are removed, even when it fails.
- pandoc: Pandoc writes the page from the bound document's tree (--ast,
  `articlekit parse`'s), Quarto-only front matter dropped, running bound.lua
  and then articlekit/render/filters/quarto_layout.lua, which writes
  callouts and figures as Quarto does. toc and css are read from
  _quarto.yml's html format.

Both write build/article.md in the same form. A Lua filter's error is
reported once, as its own message, without the traceback.

Before either runs, the prose is checked on Pandoc's tree of it (the tree
--ast names, checked again, or read now: articlekit.article.prose_guard),
the style sheets are checked to load nothing, and each figure is read
from the file its rule wrote (articlekit.render.figuredata): filters/embed_figures.lua
hands it to the renderer as a data: URL, so no renderer follows a link
of the text. Quarto also renders a page of the article's title over an
empty body, whose scripts are the ones the page check takes as its own.

The article can name its renderer with Quarto's built-in {{< meta renderer >}}
("Quarto 1.6.40" or "Pandoc 3.9"). Outputs are written atomically, and a
render fails, keeping the old outputs, when its page loads, runs or
navigates to anything, or lacks an option _quarto.yml asks for
(articlekit.render.pagecheck), or leaves any shortcode unresolved (or an
unknown ?meta: key). The command keeps each page that passed as
build/last-good/article.html, which Snakemake (deleting a job's outputs
when it starts it) leaves alone, and a failed render names it. Which renderer `auto`
means, and its version, is articlekit.render.renderers' to say.

This module is the pipeline (render_format, render, the last good page,
the command); each stage it and the formats share has its module:
articlekit.render.project (front matter, _quarto.yml), .tools (running
Pandoc and Quarto), .source (the bound document and its tree, the prose
check), .figuredata, .pandoc_route, .quarto_route and .checks (of a
written output).
"""

import argparse
import errno
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from articlekit.article.bindings import load_bindings
from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import DiskFull
from articlekit.core.log import log
from articlekit.core.sources import read_text
from articlekit.core.workfiles import owner_tag, remove_stale
from articlekit.render import formats
from articlekit.render.checks import check_output, failed_claim_warnings, shown_shortcodes
from articlekit.render.formats import Format, Job
from articlekit.render.renderers import CHOICES, RenderError, choose
from articlekit.render.source import bound_text, build_root, checked_tree


# The preview's, in its output folder: by default preview/ beside the build's
# outputs (build/preview), where a build clears a killed preview's too.
PREVIEW_FOLDER, PREVIEW_WORK_PREFIX = "preview", ".preview-"


def remove_stale_render_folders(folder):
    """Remove the work folders of renders that were killed (their process is
    gone), every format's (.render-TAG-*, .pdf-TAG-*, ...: the registry's
    work_prefixes), and those of a killed preview in FOLDER/preview; a live
    render's or preview's are left alone. Every format's render clears every
    kind: after a kill, Snakemake may rerun only one of them, and a preview
    may never start again."""
    for prefix in formats.work_prefixes():
        remove_stale(folder, prefix, "-")
    remove_stale_preview_folders(Path(folder) / PREVIEW_FOLDER)


def remove_stale_preview_folders(out_dir):
    """Remove the .preview-TAG-* work folders of killed previews in their
    output folder (its pieces and the page it was checking)."""
    remove_stale(out_dir, PREVIEW_WORK_PREFIX, "-")


def render_format(fmt, article, bindings, out, renderer="auto", ast=None, root=None, bound=None, keep_last_good=False):
    """Write the article in the format `fmt` (a name, or a Format of
    articlekit.render.formats) to `out`, atomically. What every format
    shares happens here: the bound document (bind's file `bound`, else made
    now from the bindings), its tree (`ast`, written by articlekit parse,
    else read now) checked by the prose check, a work folder of the
    format's beside the output (a killed render's is removed), no shortcode
    left in a text output, then the format's own check, then the move.
    renderer: "quarto" or "pandoc" (or "auto") for a format Quarto can
    write; every other format is Pandoc's. keep_last_good: keep the output,
    once in place, as last_good_page(out) too. -> the renderer's name."""
    fmt = fmt if isinstance(fmt, Format) else formats.get(fmt)
    article, bindings, out = Path(article), Path(bindings), Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    route = choose(renderer) if fmt.quarto else "pandoc"
    text = read_text(article)  # first: a byte that is not UTF-8 is named before any renderer runs
    document = load_bindings(bindings)  # and a bindings file that is not one, with its fix
    remove_stale_render_folders(out.parent)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f"{fmt.work_prefix}{owner_tag()}-") as tmp:
        workdir = Path(tmp).resolve()  # pandoc runs in the article folder
        bound_doc = bound_text(article, document, bound)
        try:
            tree, shown = checked_tree(article, workdir, ast, root, bound_doc)
        except ValueError as exc:  # ProseError, FigureError: their message names the line and the fix
            raise RenderError(str(exc)) from None
        job = Job(
            fmt,
            article,
            text,
            bindings,
            document,
            bound_doc,
            tree,
            shown,
            workdir,
            workdir / out.name,
            out,
            route,
            build_root(root, article),
        )
        name = fmt.write(job)
        if fmt.text:
            check_output(job.produced, shown_shortcodes(job.bound), out, article)
        fmt.check(job)
        os.replace(job.produced, out)
        if keep_last_good:
            kept = last_good_page(out)
            kept.parent.mkdir(exist_ok=True)
            shutil.copyfile(out, workdir / "last-good")
            os.replace(workdir / "last-good", kept)
    return name


def render(article, bindings, renderer, html_path, md_path=None, ast=None, root=None, keep_last_good=False, bound=None):
    """The page (format html) and, unless md_path is None (the preview's
    quick route), its markdown (format gfm), each through render_format.
    keep_last_good: also keep the page, once it replaced html_path, as
    last_good_page(html_path). -> the renderer's name."""
    name = render_format("html", article, bindings, html_path, renderer, ast, root, bound, keep_last_good)
    if md_path is not None:
        render_format("gfm", article, bindings, md_path, renderer, ast, root, bound)
    return name


# A page that passed its check, kept where Snakemake leaves it alone: it
# deletes a job's outputs (build/article.html) when the job starts, and a
# failed render's with them.
LAST_GOOD = "last-good"


def last_good_page(html_path):
    return Path(html_path).parent / LAST_GOOD / Path(html_path).name


def after_failure(html_path):
    """What a failed render adds about the page a reader would get: where
    the last good page is, when Snakemake removed build/article.html (None
    when the old page is still in place, or there never was one)."""
    html_path, kept = Path(html_path), last_good_page(html_path)
    if html_path.exists() or not kept.exists():
        return None
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(kept.stat().st_mtime))
    return (
        f"{html_path} is gone (Snakemake removes a job's outputs when it starts it); the last page that passed "
        f"its check, rendered {when}, is {kept}"
    )


def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m articlekit render",
        description=__doc__.splitlines()[0],
        epilog="formats: " + ", ".join(f"{name} ({formats.get(name).describe})" for name in formats.names()),
    )
    parser.add_argument("article")
    parser.add_argument("--bindings", required=True, help="build/bindings.json from `articlekit bind`")
    parser.add_argument("--renderer", choices=CHOICES, default="auto", help="for the formats Quarto can write")
    parser.add_argument("--to", help="the format to write (one of the formats below), with --out")
    parser.add_argument("--out", help="where --to's format goes (build/article.docx, ...)")
    parser.add_argument("--html", help="the page (format html), without --to")
    parser.add_argument("--md", help="and its markdown (format gfm)")
    parser.add_argument("--bound", help="build/article.bound.md from `articlekit bind`: the document rendered")
    parser.add_argument(
        "--ast", help="build/article.ast.json from `articlekit parse` (checked there), for Pandoc to write from"
    )
    args = parser.parse_args(argv)
    if bool(args.to) != bool(args.out) or bool(args.to) == bool(args.html):
        parser.error("give --to FORMAT --out PATH, or --html PATH (and --md PATH)")
    jobs = [(args.to, args.out)] if args.to else [("html", args.html), *([("gfm", args.md)] if args.md else [])]
    try:
        for name, out in jobs:
            fmt = formats.get(name)
            renderer = render_format(
                fmt,
                args.article,
                args.bindings,
                out,
                args.renderer,
                args.ast,
                keep_last_good=fmt.keeps_last_good,
                bound=args.bound,
            )
    except (ArticlekitError, OSError) as exc:  # RenderError, ProseError among them
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            exc = DiskFull(out)  # named by the output, not by the work folder it was written in
        log.error(f"render: {exc}")
        if after_failure(out):
            log.error(f"render: {after_failure(out)}")
        return 1
    log.info(f"render: {args.article} -> {', '.join(out for _, out in jobs)} ({renderer})")
    if any(formats.get(name).says_failed_claims for name, _ in jobs):
        for line in failed_claim_warnings(args.bindings):
            say_in_log_and_terminal(line)
    return 0


def say_in_log_and_terminal(line):
    """A warning the author must see: a rule sends stderr to its log and
    stdout to the terminal, so it goes to both; where they are one stream
    (the command typed in a terminal, 2>&1), it is said once."""
    log.warning(line)  # the handler flushes sys.stderr, before stdout is written
    try:
        one_stream = os.path.samestat(os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno()))
    except (OSError, ValueError, AttributeError):  # a stream with no file under it (captured): two streams
        one_stream = False
    if not one_stream:
        print(line)
