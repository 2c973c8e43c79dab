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
from the file its rule wrote (figure_data): filters/embed_figures.lua
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
"""

import argparse
import base64
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

import yaml

from articlekit.core.css import fetched_at, loads_nothing
from articlekit.core.log import log
from articlekit.core.status import claim_said
from articlekit.core.text import md_text
from articlekit.core.jsonio import DiskFull
from articlekit.core.sources import SourceError, load_yaml, parse_yaml, read_text, yaml_error_message
from articlekit.render.citations import citation_args, quarto_paths, unknown_citation
from articlekit.render.extension import refresh_if_installed
from articlekit.render import formats
from articlekit.render.formats import Format, Job
from articlekit.render.luafilters import (
    BOUND_FILTER,
    CROSSREF_FILTER,
    EMBED_FIGURES_FILTER,
    LIBRARY,
    QUARTO_LAYOUT_FILTER,
    SCROLL_REGIONS_FILTER,
)
from articlekit.render.pagecheck import script_digests
from articlekit.render.renderers import (
    CHOICES,
    RenderError,
    choose,
    display_name,
    pandoc_path,
    quarto_path,
    quarto_version,
    tool_version,
)
from articlekit.core.workfiles import owner_tag, remove_stale
from articlekit.article.bindings import load_bindings
from articlekit.article.figures import FigureError, alt_text, checked_figure, figure_file
from articlekit.article.prose_guard import check_front_matter, check_tree
from articlekit.article.bound import BoundError, bound_markdown
from articlekit.article.shortcodes import ShortcodeSyntaxError, regions, scan, to_quarto_markdown
from articlekit.core.errors import ArticlekitError

# Front matter Pandoc understands; everything else (format, execute, filters,
# jupyter, ...) is Quarto's and is dropped on the Pandoc path.
PANDOC_METADATA = {"title", "subtitle", "author", "date", "abstract", "lang", "keywords", "description", "toc-title"}


# --- inputs ------------------------------------------------------------------


def split_front_matter(text, path="the front matter"):
    """-> (front matter dict, body). The body keeps its line count so
    Pandoc's messages still point at the right lines. The front matter is
    read strictly (articlekit.core.sources); SourceError names `path` and the
    line of a key given twice or of a YAML error."""
    if text.startswith("---\n"):
        end = re.search(r"^(---|\.\.\.)\s*$", text[4:], re.M)
        if end:
            try:
                front = parse_yaml(text[4 : 4 + end.start()], path, first_line=2).data or {}
            except yaml.YAMLError as exc:
                raise SourceError(yaml_error_message(exc, path)) from None
            body_start = 4 + end.end()
            return front, "\n" * text.count("\n", 0, body_start) + text[body_start:]
    return {}, text


def project_root(article_dir):
    """The folder holding _quarto.yml (the article's own folder if none)."""
    return next((f for f in [article_dir, *article_dir.parents] if (f / "_quarto.yml").exists()), article_dir)


def project_config(project_dir):
    """The project's _quarto.yml as a dict ({} without one)."""
    path = project_dir / "_quarto.yml"
    if not path.exists():
        return {}
    config = load_yaml(path) or {}
    return config if isinstance(config, dict) else {}


def project_options(project_dir):
    """The html format options of the project's _quarto.yml: what Pandoc
    needs, and what the page is checked against."""
    html = (project_config(project_dir).get("format") or {}).get("html") or {}
    return html if isinstance(html, dict) else {}


def quarto_options(project_dir, article_dir, document=None, folder=None, unknown=None):
    """What Quarto is handed as --metadata-file: _quarto.yml's settings
    (its project: aside), so that a render applies them even where Quarto
    does not read the project (a path with a folder starting with "."),
    and articlekit's style sheet before the article's. The bibliography is
    its copy in `folder` (under build/), bound by the bindings `document`
    (articlekit.render.citations.quarto_paths, with its `unknown`).

    Where Quarto does read the project, it merges the two (checked with
    1.9.38): a list such as css is joined without repeats, a top-level
    css before the format's. So the format's css keeps its own strings
    (relative to the article's folder, where Quarto resolves a document's
    paths), and page.css goes on top, as before."""
    config = {key: value for key, value in project_config(project_dir).items() if key not in ("project", "profile")}
    config = quarto_paths(config, project_dir, document, folder, unknown)
    formats = {fmt: dict(options) for fmt, options in (config.get("format") or {}).items() if isinstance(options, dict)}
    for options in formats.values():
        if "css" in options:
            sheets = [options["css"]] if isinstance(options["css"], str) else options["css"] or []
            options["css"] = [os.path.relpath(project_dir / sheet, article_dir) for sheet in sheets]
    if formats:
        config["format"] = formats
    top = config.get("css")
    config["css"] = [str(PAGE_CSS), *([top] if isinstance(top, str) else top or [])]
    return config


# The look of what articlekit puts on a page (bound values, failed claims,
# the provenance table), for every article, before the article's own css.
PAGE_CSS = Path(__file__).resolve().parent / "page.css"


# --- the two renderers --------------------------------------------------------


# A Lua filter's error, as Pandoc and Quarto both print it: the message sits
# between "Error running filter FILE:" and the traceback.
FILTER_ERROR = re.compile(r"Error running filter [^\n]*:\n(?:[^\n]*?\.lua:\d+: )?(.*?)\n(?:stack traceback:|$)", re.S)


def tool_error(stderr):
    """The one message that says what went wrong: a Lua filter's own message
    when there is one (not the traceback under it), else the whole output."""
    found = FILTER_ERROR.search(stderr)
    return found.group(1).strip() if found else stderr.strip()


# Pandoc's warning for math it cannot convert, which it leaves as TeX: the
# math and the parser's complaint (the line under the caret).
_BAD_MATH = re.compile(r"Could not convert TeX math (.*?), rendering as TeX:\n(?:[^\n]*\n){2}\s*([^\n]*)", re.S)


def bad_math(stderr):
    """[(tex, why)] for each formula Pandoc said it could not convert."""
    return [(tex.strip(), why.strip()) for tex, why in _BAD_MATH.findall(stderr)]


def run_tool(cmd, article, cwd=None, env=None):
    """Run a renderer's command; a failure stops with the tool's own message.
    env: its environment, when not this process's (the Word edition's epoch)."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0 and "No space left on device" in done.stderr:
        raise DiskFull(cmd[cmd.index("--output") + 1])  # the tool's own backtrace adds nothing to that
    if done.returncode != 0:
        raise RenderError(f"{article}: {Path(cmd[0]).name} failed (exit {done.returncode}): {tool_error(done.stderr)}")
    unknown = unknown_citation(done.stderr, article)
    if unknown is not None:
        raise unknown
    math = bad_math(done.stderr)
    if math:
        tex, why = math[0]
        raise RenderError(
            f"{_line_of(article, tex)}the math ${tex}$ is not TeX that {Path(cmd[0]).name} can convert "
            f"({why}): correct it{f', and {len(math) - 1} more' if len(math) > 1 else ''}"
        )
    if done.stderr.strip():
        log.warning(done.stderr.rstrip())
    # Pandoc only warns when a figure is missing; the article must not ship without it.
    missing = [line for line in done.stderr.splitlines() if "Could not fetch resource" in line]
    if missing:
        raise RenderError("missing resource(s): " + "; ".join(missing))


def pandoc_metadata(front, pandoc):
    """The metadata file's contents: Pandoc's share of the front matter and
    the renderer's name ({{< meta renderer >}})."""
    metadata = {key: value for key, value in front.items() if key in PANDOC_METADATA}
    if "author" in metadata:
        # Pandoc's templates print an author as text: a {name: ...} of the
        # form Quarto takes would print "true" (the JATS edition puts the
        # structured form back, which its template reads)
        metadata["author"] = author_names(metadata["author"])
    metadata["renderer"] = display_name("pandoc", tool_version(pandoc))
    # A page says its language (screen readers pick their voice by it):
    # English unless the front matter says otherwise, as Quarto does.
    metadata.setdefault("lang", "en")
    return metadata


def author_names(value):
    """The front matter's authors as Pandoc's templates print them: names."""
    authors = value if isinstance(value, list) else [value]
    names = []
    for author in authors:
        name = author.get("name") if isinstance(author, dict) else author
        if isinstance(name, dict):  # Quarto's {given, family}
            name = " ".join(str(name.get(part, "")) for part in ("given", "family")).strip()
        names.append(name)
    return names


def filter_files():
    """The Lua filters the Pandoc route runs, in order: the bound spans,
    the cross-references numbered, then callouts and figures as Quarto
    lays them out."""
    return [BOUND_FILTER, CROSSREF_FILTER, QUARTO_LAYOUT_FILTER]


def filter_library_files():
    return list(LIBRARY)


def pandoc_common_args(pandoc, source, meta_file, resource_dir, reader="markdown"):
    """Reader, filters and resource path: shared by the HTML, the markdown
    and the preview's pieces of the page. reader "json": source is the
    article's tree (write_ast). resource_dir: an empty folder, so that no
    relative link reaches a file (the figures come embedded: figure_data)."""
    return [
        pandoc,
        str(source),
        "--from",
        reader,
        "--wrap",
        "preserve",
        "--metadata-file",
        str(meta_file),
        *(arg for path in filter_files() for arg in ("--lua-filter", str(path))),
        "--resource-path",
        str(resource_dir),
    ]


def html_filter_args():
    """The filters only the page runs (the html format's)."""
    return [arg for path in formats.get("html").filters for arg in ("--lua-filter", str(path))]


def empty_folder(workdir):
    """A resource path with nothing in it, made in the render's work folder."""
    folder = Path(workdir) / "no-resources"
    folder.mkdir(exist_ok=True)
    return folder


# --- the article as Pandoc reads it, once for every page ----------------------------
#
# Reading the markdown is most of what Pandoc spends on a page of this kind
# (its shortcodes arrive as nested spans), and the HTML, the GitHub markdown
# and the PDF's Typst source each read the same text. `articlekit parse`
# reads it once into Pandoc's JSON form of the document (its tree), and
# render and pdf given --ast write their pages from the tree, byte for byte
# as from the markdown: filters and metadata apply after reading. Quarto
# reads the article itself; the tree is Pandoc's alone.


def bound_text(article, document, bound=None):
    """The bound document's text (articlekit.article.bound): the file
    `bound` that bind wrote, when given, else made now from the bindings
    document. A shortcode that does not parse is named by the article's line."""
    if bound is not None:
        return read_text(bound)
    try:
        return bound_markdown(read_text(article), document, article)
    except ShortcodeSyntaxError as exc:  # "LINE: ...": named by the article, as bind names it
        raise RenderError(f"{article}:{exc}") from None
    except BoundError as exc:  # "FILE:LINE: ...", with its fix
        raise RenderError(str(exc)) from None


def pandoc_source(article, ast):
    """(front matter, the tree Pandoc writes from, its reader)."""
    front, _ = split_front_matter(read_text(article), article)
    return front, Path(ast).resolve(), "json"


def read_tree(article, workdir, out, bound):
    """Pandoc's reading of the bound document's text `bound` (its tree, JSON)
    into `out`, unchecked. The front matter's lines are blank, so that a
    message still names the article's line."""
    _, body = split_front_matter(bound, article)
    source = Path(workdir) / "article.md"
    source.write_text(body, encoding="utf-8")
    run_tool(
        [pandoc_path(), str(source), "--from", "markdown", "--to", "json", "--output", str(out)],
        article,
        cwd=article.parent.resolve(),
    )


def unbound_text(article):
    """The article as a prose check reads it before any value is bound: each
    prose shortcode as the span Quarto's pre-processing writes
    (to_quarto_markdown), so that nothing in its arguments reads as markup."""
    try:
        return to_quarto_markdown(read_text(article))
    except ShortcodeSyntaxError as exc:  # "LINE: ...": named by the article, as bind names it
        raise RenderError(f"{article}:{exc}") from None


def write_ast(article, out, root=None, bound=None):
    """Read the bound document (the file `bound`, bind's) with Pandoc into
    `out` (its tree, as JSON), atomically, once the prose check passed
    (check_prose, whose messages name the article's lines): a tree that
    holds raw HTML, an image that is not a figure or an attribute that
    loads is never written, and no renderer runs. Without `bound`, the
    article unbound (unbound_text): a tree to check, not to render."""
    article, out = Path(article), Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".parse-{owner_tag()}-") as tmp:
        workdir = Path(tmp).resolve()  # pandoc runs in the article's folder
        tree = workdir / "article.ast.json"
        text = read_text(bound) if bound is not None else unbound_text(article)
        read_tree(article, workdir, tree, text)
        shown = check_prose(article, tree, workdir, root, unbound=bound is None)
        # each figure the file its rule wrote, checked once before any
        # format's rule starts (and removes its old output): each checks again
        for figure in shown:
            try:
                figure_file(build_root(root, article), figure.path, article, figure.line)
            except FigureError as exc:
                raise RenderError(str(exc)) from None
        os.replace(tree, out)


# --- what the prose may put on the page ------------------------------------------
#
# articlekit.article.prose_guard says what the article's tree may hold; here
# it is read, the front matter with it, and the figures it shows are read
# from their files and embedded by articlekit, not by a renderer.


def build_root(root=None, article=None):
    """The folder the rules run in, whose figures/ holds the article's
    figures: `root` when given; else the current folder (where the rules
    run) when the article lies under it; else the folder above the
    article's own (article/ and figures/ side by side, as every project
    lays them out)."""
    if root is not None:
        return Path(root).resolve()
    here = Path.cwd().resolve()
    if article is None or Path(article).resolve().is_relative_to(here):
        return here
    return Path(article).resolve().parent.parent


def check_prose(article, tree, workdir, root=None, unbound=False):
    """-> the figures the article's tree (the JSON file `tree`) shows, or
    ProseError (a ValueError) naming each problem with its line. The front
    matter's values are read by Pandoc as the page's metadata is, and
    checked as the body is."""
    article = Path(article)
    text = read_text(article)
    front, body = split_front_matter(text, article)
    article_dir = os.path.relpath(article.parent.resolve(), build_root(root, article))
    figures = check_tree(json.loads(Path(tree).read_text(encoding="utf-8")), body, article, article_dir, unbound)
    if front:
        source, front_tree = Path(workdir) / "front-matter.md", Path(workdir) / "front-matter.json"
        source.write_text("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n", encoding="utf-8")
        run_tool(
            [pandoc_path(), str(source), "--from", "markdown", "--to", "json", "--output", str(front_tree)],
            article,
            cwd=Path(workdir),
        )
        check_front_matter(json.loads(front_tree.read_text(encoding="utf-8")), text, article)
    return figures


def checked_tree(article, workdir, ast=None, root=None, bound=None):
    """(the bound document's tree file, the figures it shows): the tree
    `ast` when given (articlekit parse wrote it), else read now from the
    bound text `bound`; checked either way."""
    tree = Path(ast).resolve() if ast is not None else Path(workdir) / "article.ast.json"
    if ast is None:
        read_tree(Path(article), workdir, tree, bound)
    return tree, check_prose(article, tree, workdir, root)


# The media types a page shows a figure in, by the figure file's suffix.
FIGURE_TYPES = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def figure_bytes(path):
    """A figure's bytes, opened without following a symbolic link (one made
    after figure_file looked is refused too)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def figure_data(figures, article, workdir, root=None):
    """Write workdir/figures.json: each figure's link as written -> {"src": a
    data: URI of the bytes checked_figure read and checked (a regular file in
    figures/, no symbolic link, an image that names nothing outside itself:
    the bytes embedded are the bytes checked, never the file read again),
    "alt": the alt text the file carries (figures.alt_text), when it has
    one}; -> its path. embed_figures.lua puts them on the page, so no
    renderer reads a figure by its link, and the image says what the
    figure's data are rather than repeating its caption."""
    data = {}
    for figure in figures:
        path, payload = checked_figure(build_root(root, article), figure.path, article, figure.line)
        media = FIGURE_TYPES[Path(path).suffix.lower()]  # checked_figure refuses any other kind
        data[figure.link] = {"src": f"data:{media};base64,{base64.b64encode(payload).decode('ascii')}"}
        alt = alt_text(payload, media)
        if alt:
            data[figure.link]["alt"] = alt
    out = Path(workdir) / "figures.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def pandoc_page_args(project_dir, options):
    """What makes the HTML a page: the table of contents and the style sheets."""
    args = ["--toc"] if options.get("toc") else []
    args += ["--css", str(PAGE_CSS)]
    css = options.get("css")
    for sheet in [css] if isinstance(css, str) else css or []:
        args += ["--css", str((project_dir / sheet).resolve())]
    return args


def check_style_sheets(project_dir, options):
    """The style sheets a renderer embeds (page.css, and the css of
    _quarto.yml's html format) load nothing: each a regular file reached
    through no symbolic link, whose CSS names no URL but data: ones and
    fragments. A renderer's embedding would otherwise read what a url()
    names (url(/etc/passwd) included) into the page, past the page check."""
    css = options.get("css")
    sheets = [PAGE_CSS, *(project_dir / sheet for sheet in ([css] if isinstance(css, str) else css or []))]
    for sheet in sheets:
        path = os.path.normpath(os.path.abspath(sheet))
        if os.path.realpath(path) != path:
            raise RenderError(
                f"{sheet}: the style sheet is, or lies under, a symbolic link (to "
                f"{os.path.realpath(path)}): the page embeds the file itself; copy it in instead"
            )
        for form, url, line in fetched_at(read_text(sheet)):
            if not loads_nothing(url):
                raise RenderError(
                    f"{sheet}:{line}: {form} makes the page load a file: a style sheet of the page "
                    "names nothing outside itself; write the image or font into it as a data: URL "
                    "(url(\"data:image/svg+xml;base64,...\")), or leave it out"
                )


def embedded_figures(job):
    """figure_data for the job's figures (a format that embeds them: the page,
    Word): a figure that is not the file its rule wrote stops the render at
    the article's line."""
    try:
        return figure_data(job.figures, job.article, job.workdir, job.root)
    except FigureError as exc:
        raise RenderError(str(exc)) from None


def pandoc_run(job, metadata=None):
    """(the args every Pandoc run of the page shares, its metadata): the
    bound tree, the front matter's share, the renderer's name."""
    pandoc = pandoc_path()
    front, source, reader = pandoc_source(job.article, job.tree)
    meta = {**pandoc_metadata(front, pandoc), **(metadata or {})}
    meta_file = job.workdir / "metadata.yaml"
    meta_file.write_text(yaml.safe_dump(meta, allow_unicode=True), encoding="utf-8")
    project_dir = project_root(job.article.parent.resolve())
    # after the filters above; the bibliography bound as the prose is
    cited = citation_args(project_config(project_dir), project_dir, job.workdir, job.document)
    return pandoc_common_args(pandoc, source, meta_file, empty_folder(job.workdir), reader) + cited, meta


def pandoc_page(job):
    """The HTML page through Pandoc, from the bound tree, its figures
    embedded (job.extra["figure-data"]). -> the renderer's name; the
    scripts it puts on a page: none, Pandoc's page has no script."""
    article_dir = job.article.parent.resolve()
    project_dir = project_root(article_dir)
    common, metadata = pandoc_run(job, {"figure-data": md_text(str(job.extra["figure-data"]))})
    # --embed-resources embeds the style sheets (checked: they load nothing);
    # the figures are data URIs by then, and nothing else names a file
    html = (
        common
        + [arg for path in job.fmt.filters for arg in ("--lua-filter", str(path))]
        + ["--to", job.fmt.writer, "--standalone", "--embed-resources", "--mathml", "--output", str(job.produced)]
        + pandoc_page_args(project_dir, project_options(project_dir))
    )
    run_tool(html, job.article, cwd=article_dir)
    job.extra["own-scripts"] = frozenset()
    return metadata["renderer"]


def pandoc_markdown(job):
    """The GitHub markdown through Pandoc, from the bound tree. No
    --standalone: metadata would make two builds' markdown differ; the
    title goes on top as a heading, the authors (joined by commas) and the
    date on the lines under it, as Quarto's gfm writes them. -> the
    renderer's name."""
    common, metadata = pandoc_run(job)
    run_tool(common + ["--to", job.fmt.writer, "--output", str(job.produced)], job.article, cwd=job.article.parent)
    if metadata.get("title"):
        lines = [f"# {metadata['title']}"]
        if metadata.get("author"):
            lines.append(", ".join(map(str, metadata["author"])))
        if metadata.get("date"):
            lines.append(str(metadata["date"]))
        job.produced.write_text("\n".join(lines) + "\n\n" + job.produced.read_text(encoding="utf-8"), encoding="utf-8")
    return metadata["renderer"]


# The Quarto profile the build renders with. The article's _quarto.yml
# names another as Quarto's default (articlekit.render.quarto_hooks), for
# a Quarto user's own `quarto render`; this one has no _quarto-*.yml.
BUILD_PROFILE = "articlekit-build"

# What Quarto renders besides the article to learn its own scripts: the
# front matter's PANDOC_METADATA over a body with nothing of the article's.
SCRIPTS_BODY = "## Contents\n\nA paragraph.\n"


# Front matter keys, at any depth, that make Quarto read a file or write the
# text they give into the page (Quarto reads the front matter whole; the
# Pandoc route renders PANDOC_METADATA only).
FILE_KEYS = {
    "css",
    "include-in-header",
    "include-before-body",
    "include-after-body",
    "header-includes",
    "include-before",
    "include-after",
    "template",
    "template-partials",
    "filters",
    "shortcodes",
    "resource-path",
    "resources",
    "metadata-files",
    "bibliography",
    "csl",
    "citation-abbreviations",
    "theme",
    "logo",
    "favicon",
    "brand",
    "highlight-style",
    "syntax-definitions",
    "reference-doc",
    "extensions",
    "pre-render",
    "post-render",
    "output-dir",
    "project",
    "value-bindings",
    "figure-data",
}


def refuse_front_matter_files(article, front):
    """The front matter goes to Quarto whole: a key that names a file Quarto
    would read (css, include-in-header, filters, ...) or text it would write
    into the page is refused, with its line. Page options go in _quarto.yml,
    which both renderers read (and whose style sheets the build checks)."""

    def keys(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                yield [*path, str(key)]
                yield from keys(value, [*path, str(key)])
        elif isinstance(node, list):
            for item in node:
                yield from keys(item, path)

    found = next((path for path in keys(front, []) if path[-1] in FILE_KEYS), None)
    if found:
        text = read_text(article)
        at = re.search(rf"^\s*-?\s*{re.escape(found[-1])}\s*:", text, re.M)
        line = f":{text.count(chr(10), 0, at.start()) + 1}" if at else ""
        raise RenderError(
            f"{article}{line}: the front matter sets {'.'.join(found)}, which makes Quarto read a "
            "file or write its text into the page: the build's page loads nothing it did not make; "
            "put page options under format: html: in _quarto.yml, which both renderers read"
        )


def quarto_render(job, to, scripts=False):
    """Quarto writes job.produced, format `to`, from the bound document
    (written beside the article, so that its links and _quarto.yml resolve
    as the article's), with figures embedded where job.extra names their
    data. scripts: also render a page of the article's front matter over an
    empty body, whose scripts are Quarto's own (job.extra["own-scripts"],
    for the page check). -> the renderer's name."""
    article = job.article
    quarto = quarto_path()
    name = display_name("quarto", quarto_version(quarto))
    article_dir = article.parent.resolve()
    front, _ = split_front_matter(read_text(article), article)
    refuse_front_matter_files(article, front)
    config = quarto_options(project_root(article_dir), article_dir, job.document, job.workdir)
    listed = config.get("filters")
    # the bound spans first, as shortcodes are resolved before any other
    # filter; scroll_regions after Quarto's own filters, which write tables anew
    config["filters"] = [
        str(BOUND_FILTER),
        *([listed] if isinstance(listed, str) else listed or []),
        str(EMBED_FIGURES_FILTER),
        {"path": str(SCROLL_REGIONS_FILTER), "at": "post-render"},
    ]
    options = job.workdir / "quarto-options.yaml"
    options.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    # Quarto resolves a bare --output name against its working directory
    # (quarto-cli src/command/render/output.ts) and refuses one with a path,
    # so it runs in the article's folder and the output lands there.
    remove_stale(article_dir, "render-", "-")  # outputs of a Quarto render killed before its move
    # Quarto loads the article's copy of the extension too, when a Quarto
    # user's render installed one: the package's own, never an older one
    refresh_if_installed(article_dir)
    tag = f"render-{owner_tag()}"
    bound_source = article_dir / f"{tag}-bound-{to}.qmd"
    scripts_source = article_dir / f"{tag}-scripts.qmd"
    scripts_page = job.workdir / "quarto-scripts.html"
    renders = [(bound_source, to, job.produced), *([(scripts_source, "html", scripts_page)] if scripts else [])]
    leftovers = []
    metadata = ["-M", f"renderer:{name}"]
    if "figure-data" in job.extra:
        metadata += ["-M", f"figure-data:{job.extra['figure-data']}"]
    try:
        for source, _, _ in renders:
            leftovers += [source, article_dir / f"{source.stem}_files"]
        bound_source.write_text(inert_for_quarto(job.bound), encoding="utf-8")
        if scripts:
            # the front matter both routes render: a script another key of it
            # adds is the article's, not Quarto's own
            rendered = {key: value for key, value in front.items() if key in PANDOC_METADATA}
            scripts_source.write_text(
                "---\n" + yaml.safe_dump(rendered, allow_unicode=True) + "---\n\n" + SCRIPTS_BODY, encoding="utf-8"
            )
        for n, (source, fmt, out) in enumerate(renders):
            produced = article_dir / f"{tag}-{n}-{fmt}.{'html' if fmt == 'html' else 'md'}"
            leftovers.append(produced)
            # --profile: the build's, which no file configures, so none of a
            # Quarto user's own profile (pre-render, output-dir) applies
            run_tool(
                [
                    quarto,
                    "render",
                    source.name,
                    "--to",
                    fmt,
                    "--output",
                    produced.name,
                    "--profile",
                    BUILD_PROFILE,
                    *metadata,
                    "--metadata-file",
                    str(options),
                ],
                article,
                cwd=article_dir,
            )
            shutil.move(str(produced), out)
    finally:
        for path in leftovers:
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    if scripts:
        job.extra["own-scripts"] = script_digests(scripts_page)
    return name


# Quarto resolves shortcodes again in whatever it renders, inside code and
# in any attribute's value too (quarto-cli's customnodes/shortcodes.lua):
# {{< env HOME >}} in an experiment's message would print the machine's
# environment. The bound document holds no shortcode for Quarto to run, so
# every one it shows is written as Quarto's escape, which prints it as is.
_QUARTO_SHORTCODE = re.compile(r"\{\{<(.*?)>\}\}", re.S)


def inert_for_quarto(bound):
    """The bound document with every {{< ... >}} it shows (a value's, an
    escaped one's) written {{{< ... >}}}, which Quarto prints as
    {{< ... >}}; shortcodes="false" blocks, which Quarto leaves alone, as
    they are."""
    out = []
    for start, end, kind in regions(bound):
        piece = bound[start:end]
        out.append(piece if kind in ("verbatim", "frontmatter") else _QUARTO_SHORTCODE.sub(r"{{{<\1>}}}", piece))
    return "".join(out)


# --- checks and main -----------------------------------------------------------


def expected_literal_shortcodes(text, document=None):
    """How many `{{<` the output may legitimately show: escaped shortcodes
    ({{{< x >}}}), those in shortcodes="false" code blocks, and those a
    value prints (a value is data: an experiment's message may quote one),
    once per place the bindings `document` says it is printed."""
    escaped = sum(1 for sc in scan(text) if sc.escaped)
    verbatim = sum(text.count("{{<", start, end) for start, end, kind in regions(text) if kind == "verbatim")
    return escaped + verbatim + sum(_printed_shortcodes(document))


def _printed_shortcodes(document):
    for binding in ((document or {}).get("bindings") or {}).values():
        if binding.get("printed"):
            yield binding.get("text", "").count("{{<") * len(binding.get("locations") or [1])


def shown_shortcodes(bound):
    """How many `{{<` a page of the bound document may show: every one the
    bound text prints, as text (\\{\\{\\<) or in code: it holds no shortcode
    left to run, so each is an escaped one, a verbatim block's or a
    value's, wherever it lands (the provenance table's raw values too)."""
    return bound.count("{{<") + bound.count("\\{\\{\\<")


def check_output(path, allowed, name=None, article=None):
    """RenderError when the output at `path` shows more `{{<` than allowed,
    or an unknown meta key; named as `name` (the file it becomes, never a
    work folder's) and, where the shortcode is found there, by the line of
    `article` (its text is read)."""
    text = Path(path).read_text(encoding="utf-8")
    name = name or path
    left = text.count("{{<") + text.count("{{&lt;")
    if left > allowed:
        at = text.find("{{<") if "{{<" in text else text.find("{{&lt;")
        shown = text[at : at + 80].replace("{{&lt;", "{{<")
        raise RenderError(
            f"{_line_of(article, shown[:20])}{name}: {left - allowed} shortcode(s) were not resolved, first: "
            f"{shown!r}: check its name and arguments (docs/reference.md lists the shortcodes)"
        )
    if "?meta:" in text:
        at = text.find("?meta:")
        key = re.match(r"\?meta:([\w.-]*)", text[at:]).group(1)
        raise RenderError(
            f"{_line_of(article, '{{< meta ' + key)}{name}: unknown metadata key {key!r} in a meta shortcode: "
            "set it in the front matter, or use one the article has (title, author, date, renderer)"
        )


def _line_of(article, needle):
    """'ARTICLE:LINE: ' where needle is in the article's text, else ''."""
    if article is None:
        return ""
    text = read_text(article)
    found = text.find(needle)
    return f"{article}:{text.count(chr(10), 0, found) + 1}: " if found >= 0 else ""


def failed_claim_warnings(bindings):
    """One line per claim a strict=false build kept although it fails, or
    although its measured interval cannot decide it (inconclusive)."""
    document = load_bindings(bindings)
    return [
        f"WARNING: {c['location']}: {claim_said(c)}: {c['message']} "
        "(strict=false: the article shows it beside the number)"
        for c in document.get("claims", [])
        if not c["holds"]
    ]


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


class _Anchors(HTMLParser):
    """Ids starting with v- (the provenance table's rows), and whether each
    sits inside a table cell."""

    def __init__(self):
        super().__init__()
        self.cells, self.in_cell, self.outside = 0, 0, []

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.in_cell += 1
        anchor = dict(attrs).get("id") or ""
        if anchor.startswith("v-"):
            if self.in_cell:
                self.cells += 1
            else:
                self.outside.append(anchor)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.in_cell:
            self.in_cell -= 1


_TABLE_RULE = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$", re.M)


def provenance_placed(text):
    """How many provenance tables the article places."""
    return sum(1 for sc in scan(text) if sc.name == "provenance" and sc.context == "prose" and not sc.escaped)


def check_page_structure(text, provenance_md, html_path):
    """The provenance table (the bindings document's provenance_md) came out
    as a table on the page: written inside a paragraph, Pandoc would
    flatten it into text, and no shortcode would be left over to tell."""
    if not provenance_placed(text):
        return
    rows = sum(1 for line in provenance_md.splitlines() if line.startswith("|")) - 2
    parser = _Anchors()
    parser.feed(Path(html_path).read_text(encoding="utf-8"))
    if parser.outside or parser.cells < rows:
        raise RenderError(
            f"{html_path}: the provenance table is not a table ({parser.cells} of {rows} rows in "
            f"table cells{', ' + parser.outside[0] + ' outside one' if parser.outside else ''}); "
            "put {{< provenance >}} alone in its paragraph, with blank lines around it"
        )


def check_markdown_structure(text, md_path):
    """The provenance table came out as a table in the markdown too."""
    placed = provenance_placed(text)
    if placed and len(_TABLE_RULE.findall(Path(md_path).read_text(encoding="utf-8"))) < placed:
        raise RenderError(
            f"{md_path}: the provenance table is not a table; put {{{{< provenance >}}}} alone "
            "in its paragraph, with blank lines around it"
        )


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
