"""The preview's page, rendered piece by piece: only the edited section goes
through Pandoc again.

Pandoc's markdown reader costs about a second and a half on the whole
article, and most of an edit's wait was that. So the body is split into
chunks at its level-1 and level-2 headings (and around a paragraph that is
only {{< provenance >}} or {{< departures >}}: those tables change with any
value), each chunk rendered on its own to an HTML fragment with the very
options and Lua filters of `articlekit render` (through a template that is
only $body$), and the fragments are cached by a hash of everything they
depend on: the chunk's text, the bindings its shortcodes look up (without
their file:line, which moves whenever lines above move), the tables it
places, the metadata, the filter and extension files, and the figures it
embeds. Changed chunks are rendered in parallel, one Pandoc per core. Each
is read to Pandoc's tree first and checked as the build checks the article
(articlekit.article.prose_guard), its figures embedded by articlekit
(articlekit.render.figuredata.figure_data), then written to HTML from the tree.

The page around them (head, embedded style, title block, table of
contents) is Pandoc's own standalone page for a skeleton document: the
front matter, a marker, and the article's top-level heading lines. Its
table of contents is therefore Pandoc's, identifiers included; it is
rendered again only when the headings, the front matter, the style or
_quarto.yml change.

Assembling undoes what rendering apart changes, to give the page a full
render gives (tests/test_preview.py compares them):
- figures are numbered in page order ("Figure N:", crossref.lua counts
  per render);
- each key's first place in the prose keeps its id (at-...) and the others
  lose theirs, as the bound document of the whole article gives it
  (articlekit.article.bound: the first in document order).
- Two chunks giving a heading the same identifier (Pandoc would have made
  the second one unique) or an article with footnotes, reference-link
  definitions, cross-references, citations or labelled tables, equations
  and sections (whose numbering and targets span the document) is
  rendered as one chunk: slower, never different.
"""

import hashlib
import json
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from articlekit.core.text import md_code
from articlekit.render import formats
from articlekit.render.citations import citation_args, named_files
from articlekit.render.luafilters import CITED_FILTER
from articlekit.render.figuredata import figure_data
from articlekit.render.pandoc_route import (
    filter_files,
    filter_library_files,
    pandoc_common_args,
    pandoc_metadata,
    pandoc_page_args,
)
from articlekit.render.project import project_config, project_options, project_root, split_front_matter
from articlekit.render.renderers import RenderError, pandoc_file, pandoc_path
from articlekit.render.source import build_root, empty_folder
from articlekit.render.tools import run_tool
from articlekit.article.prose_guard import check_tree
from articlekit.article.bound import bound_markdown
from articlekit.article.shortcodes import CLOSE, OPEN, ShortcodeSyntaxError, parse_inner, scan
from articlekit.core.sources import read_text

BODY_MARK = "<!--articlekit-preview-body-->"
BODY_TEMPLATE = "$body$\n"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DIV_OPEN = re.compile(r"^:{3,}\s*\S")
_DIV_CLOSE = re.compile(r"^:{3,}\s*$")
_SPLIT_HEADING = re.compile(r"^#{1,2}\s")
_TOC_HEADING = re.compile(r"^#{1,6}\s")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
# document-wide constructs a chunk cannot see whole
# Footnotes, link definitions, cross-references and citations (their
# numbers and targets span the document: crossref.lua and citeproc number
# the whole), and labelled tables, equations and sections (numbered in order)
_DOCUMENT_WIDE = re.compile(
    r"\[\^[^\]]+\]|^ {0,3}\[[^\]]+\]:\s|(?<![\w.])@[A-Za-z_]|\{#(?:tbl|eq|sec)-",
    re.M,
)
# What a piece cannot even *read* alone: a footnote's text or a link's
# target defined in another piece. Citations and labels parse the same in
# any piece (only their numbering spans the document), so a check of the
# prose may split where a render may not.
PARSE_WIDE = re.compile(r"\[\^[^\]]+\]|^ {0,3}\[[^\]]+\]:\s", re.M)
# An image's link as the article writes it (](../figures/NAME.svg)): the
# figures a piece, or Quarto's own page, shows.
IMAGE_LINK = re.compile(r"\]\(<?([^)\s>]+\.(?:svg|png|jpe?g|gif|webp))", re.I)


def html_filter_args():
    """The filters only the page runs (the html format's)."""
    return [arg for path in formats.get("html").filters for arg in ("--lua-filter", str(path))]


@dataclass
class Layout:
    chunks: list  # texts; "".join(chunks) is the body
    headings: list  # the top-level heading lines, for the table of contents


def is_table_shortcode(line):
    """Is the line only {{< provenance >}} or {{< departures >}} (a table
    that changes with any value)? Read by the one shortcode parser."""
    text = line.rstrip()  # from the line's start: indented four spaces, it would be code
    if not (text.startswith(OPEN) and text.endswith(CLOSE)):
        return False
    try:
        name, args, kwargs, _, _ = parse_inner(text[len(OPEN) : -len(CLOSE)])
    except ValueError:
        return False
    return name in ("provenance", "departures") and not args and not kwargs


def split_body(body, document_wide=_DOCUMENT_WIDE):
    """-> Layout. Splits only where a chunk boundary cannot change the
    parse: before a heading (levels 1-2), a table shortcode paragraph or
    an unindented code fence after a blank line, outside code fences and
    fenced divs, and after such a paragraph or fence. (A fence of a language
    Pandoc's highlighter does not know, such as text, makes it load every
    syntax: half a second, paid only by the fence's own chunk.) None when the
    body has to be rendered whole: a setext heading (the skeleton would
    miss it) or a construct document_wide matches (by default, what a
    render numbers or resolves across the document; PARSE_WIDE for a read
    of the pieces)."""
    if document_wide.search(body):
        return None
    chunks, current, headings = [], [], []
    fence, depth, blank_before, own_paragraph, previous, fence_alone = None, 0, True, False, "", False
    for line in body.splitlines(keepends=True):
        text = line.rstrip("\n")
        if fence:
            current.append(line)
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", text):
                fence, own_paragraph = None, fence_alone
            blank_before = False
            continue
        if own_paragraph and not text.strip():
            chunks.append("".join(current))
            current, own_paragraph = [], False
        at_top = depth == 0 and blank_before
        fenced = _FENCE.match(text)
        fence_alone = bool(at_top and fenced and text[:1] in "`~")
        if at_top and (_SPLIT_HEADING.match(text) or is_table_shortcode(text) or fence_alone):
            if current:
                chunks.append("".join(current))
            current = []
            own_paragraph = is_table_shortcode(text)
        if at_top and _TOC_HEADING.match(text):
            headings.append(text)
        if not blank_before and _SETEXT.match(text) and not _TOC_HEADING.match(previous):
            return None
        if fenced:
            fence = fenced.group(1)
        elif _DIV_OPEN.match(text):
            depth += 1
        elif _DIV_CLOSE.match(text) and depth:
            depth -= 1
        current.append(line)
        blank_before, previous = not text.strip(), text
    chunks.append("".join(current))
    return Layout([c for c in chunks if c], headings)


@lru_cache(maxsize=256)
def lookups(text):
    """-> (lookup ids, table fields) a text's shortcodes read."""
    idents, tables = [], []
    for sc in scan(text):
        if sc.escaped:
            continue
        if sc.name in ("provenance", "departures"):
            tables.append(f"{sc.name}_md")
        elif sc.name in ("value", "claim", "source") and sc.args:
            idents.append(sc.lookup_id)
    return tuple(dict.fromkeys(idents)), tuple(dict.fromkeys(tables))


def looked_up(text, document):
    """What a chunk's shortcodes read from the bindings document: the
    bindings by lookup id (without their locations, which move whenever a
    line above moves) and the tables."""
    idents, tables = lookups(text)
    used = {"bindings": {}}
    used.update({field: document.get(field) for field in tables})
    for ident in idents:
        binding = document["bindings"].get(ident)
        if binding is not None:
            used["bindings"][ident] = {k: v for k, v in binding.items() if k != "locations"}
    return used


def file_stamp(path):
    try:
        stat = Path(path).stat()
        return [str(path), stat.st_mtime_ns, stat.st_size]
    except OSError:
        return [str(path), None, None]


def digest(*parts):
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()  # NaN hashes too


@lru_cache(maxsize=64)
def _content(path, stamp):
    return Path(path).read_bytes()


def file_content(path):
    """A file's bytes, read again only when its mtime or size changed."""
    return _content(str(path), tuple(file_stamp(path)))


class IncrementalPage:
    """One article's page, re-rendered chunk by chunk. render() -> the page's
    text; `rendered` says how many chunks the last call sent to Pandoc."""

    def __init__(self, article, work_dir, jobs=None, root=None):
        self.article = Path(article)
        self.article_dir = self.article.parent.resolve()
        self.root = build_root(root, self.article)  # figures/ under it, as for `articlekit render`
        self.article_dir_in_root = os.path.relpath(self.article_dir, self.root)
        self.project_dir = project_root(self.article_dir)
        self.work_dir = Path(work_dir)
        self.jobs = jobs or os.cpu_count() or 1
        self.pandoc = pandoc_path()
        self.fragments, self.shells = {}, {}  # hash -> html
        self.document = None  # the bindings of the page being rendered (page_of)
        self.rendered, self.fallback, self.fragments_now = 0, False, []

    # --- what every piece depends on -------------------------------------------

    def shared_inputs(self, front):
        """Everything besides the text and its bindings that a piece's HTML
        depends on: the filters, the metadata, the options."""
        lua = [str(p) for p in (*filter_files(), *filter_library_files(), *formats.get("html").filters, CITED_FILTER)]
        cited = named_files(project_config(self.project_dir), self.project_dir)  # the bibliography's edits too
        return [
            self.pandoc,
            [(p, hashlib.sha256(file_content(p)).hexdigest()) for p in [*lua, *map(str, cited.values())]],
            {k: v for k, v in front.items()},
        ]

    def metadata(self, front):
        return pandoc_metadata(front, self.pandoc)

    # --- rendering pieces --------------------------------------------------------

    def run_pandoc(self, markdown, used, front, extra, where, checked=True, first_line=1):
        """Render some markdown with the build's options; -> the output text.
        checked: read it to a tree first and check it as `articlekit render`
        checks the article (articlekit.article.prose_guard), its figures
        embedded by articlekit (figure_data); False only for the page's
        shell, whose one raw block is this module's marker. first_line: the
        article's line the markdown starts on, for the check's messages."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.work_dir, prefix=".piece-") as tmp:
            tmp = Path(tmp).resolve()
            metadata = self.metadata(front)
            source, out = tmp / "piece.md", tmp / "piece.html"
            written = markdown
            try:
                markdown = bound_markdown(markdown, used, self.article)
            except ShortcodeSyntaxError as exc:
                message = str(exc).split(": ", 1)[1]
                raise RenderError(f"{self.article}:{exc.line + first_line - 1}: {message}") from None
            source.write_text(markdown, encoding="utf-8")
            reader = "markdown"
            try:
                if checked:
                    tree = tmp / "piece.json"
                    run_tool(
                        [self.pandoc, str(source), "--from", "markdown", "--to", "json", "--output", str(tree)],
                        self.article,
                        cwd=self.article_dir,
                    )
                    try:
                        figures = check_tree(
                            json.loads(tree.read_text(encoding="utf-8")),
                            "\n" * (first_line - 1) + written,
                            self.article,
                            self.article_dir_in_root,
                        )
                        metadata["figure-data"] = md_code(str(figure_data(figures, self.article, tmp, self.root)))
                    except ValueError as exc:  # ProseError, FigureError
                        raise RenderError(str(exc)) from None
                    source, reader = tree, "json"
                meta = tmp / "metadata.yaml"
                meta.write_text(yaml.safe_dump(metadata, allow_unicode=True), encoding="utf-8")
                cmd = (
                    pandoc_common_args(self.pandoc, source, meta, empty_folder(tmp), reader)
                    # citations as the build's page has them, before the page's own filters
                    + citation_args(project_config(self.project_dir), self.project_dir, tmp, self.document)
                    + html_filter_args()
                    + ["--to", "html5", "--standalone", "--embed-resources", "--mathml", "--output", str(out), *extra]
                )
                run_tool(cmd, self.article, cwd=self.article_dir)
            except RenderError as exc:
                raise RenderError(f"{exc} (in {where})") from None
            return out.read_text(encoding="utf-8")

    def fragment_key(self, text, used, shared):
        images = [file_stamp((self.article_dir / m).resolve()) for m in IMAGE_LINK.findall(text)]
        return digest("fragment", text, used, shared, images)

    def body_template(self):
        """The template that makes a standalone render (the one
        --embed-resources embeds figures in) print the body alone."""
        template = self.work_dir / "body-template.html"
        if not template.exists() or template.read_text(encoding="utf-8") != BODY_TEMPLATE:
            self.work_dir.mkdir(parents=True, exist_ok=True)
            template.write_text(BODY_TEMPLATE, encoding="utf-8")
        return template.resolve()

    def render_fragment(self, text, used, front, template, where, first_line):
        html = self.run_pandoc(text, used, front, ["--template", pandoc_file(template)], where, first_line=first_line)
        return html[:-1] if html.endswith("\n") else html

    def shell(self, front, headings, document, shared, highlighted):
        """Pandoc's standalone page for front matter + marker + headings
        (and a highlighted line of code when the body has some, for
        Pandoc's template adds the highlighting style only then)."""
        code = "```python\npass\n```\n\n" if highlighted else ""
        skeleton = "\n```{=html}\n" + BODY_MARK + "\n```\n\n" + code + "\n\n".join(headings) + "\n"
        used = looked_up(skeleton, document)
        options = project_options(self.project_dir)
        css = [file_stamp(p) for p in pandoc_page_args(self.project_dir, options) if p.startswith("/")]
        key = digest("shell", skeleton, used, shared, options, css)
        if key not in self.shells:
            self.shells = {
                key: self.run_pandoc(
                    skeleton,
                    used,
                    front,
                    pandoc_page_args(self.project_dir, options),
                    "the page's head and table of contents",
                    checked=False,
                )
            }
            self.rendered += 1
        return self.shells[key]

    # --- the page ----------------------------------------------------------------

    def render(self, document):
        """-> the page for the article as it is now, bound by `document`
        (the bindings document bind returned): the build's page, its
        Content-Security-Policy included (pagecheck.with_policy)."""
        # here, not at the top: its HTML and CSS parsers cost a twentieth of a
        # second, and the quarto pre-render imports this module for the prose
        # check's pieces, never for a page
        from articlekit.render.pagecheck import with_policy

        return with_policy(self.page_of(document), self.article)

    def page_of(self, document):
        self.rendered, self.fallback, self.fragments_now = 0, False, []
        self.document = document  # the bibliography's values: citeproc's copy is bound by all of them
        front, body = split_front_matter(read_text(self.article), self.article)
        shared = self.shared_inputs(front)
        layout = split_body(body)
        if layout is None:
            return self.whole_page(front, body, document, shared)
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            fragments = self.fragments_for(layout.chunks, document, front, shared, pool)
        if duplicate_heading_ids(fragments):
            return self.whole_page(front, body, document, shared)
        self.fragments_now = fragments
        highlighted = any('class="sourceCode' in f for f in fragments)
        return assemble(self.shell(front, layout.headings, document, shared, highlighted), fragments)

    def whole_page(self, front, body, document, shared):
        """The page in one Pandoc run, as `articlekit render` makes it: for
        the articles chunks would render differently."""
        self.fallback = True
        options = project_options(self.project_dir)
        used = looked_up(body, document)
        css = [file_stamp(p) for p in pandoc_page_args(self.project_dir, options) if p.startswith("/")]
        images = [file_stamp((self.article_dir / m).resolve()) for m in IMAGE_LINK.findall(body)]
        key = digest("page", body, used, shared, options, css, images)
        if key not in self.shells:
            self.shells = {
                key: self.run_pandoc(body, used, front, pandoc_page_args(self.project_dir, options), "the article")
            }
            self.rendered += 1
        self.fragments_now = [self.shells[key]]
        return self.shells[key]

    def fragments_for(self, chunks, document, front, shared, pool):
        keyed = []
        for n, text in enumerate(chunks):
            used = looked_up(text, document)
            keyed.append((self.fragment_key(text, used, shared), text, used, n))
        missing = {key: (text, used, n) for key, text, used, n in keyed if key not in self.fragments}

        def where(n):  # for Pandoc's messages, whose line numbers count from the chunk's start
            first = (chunks[n].strip().splitlines() or [""])[0]
            return f"the chunk starting '{first[:60]}'"

        template = self.body_template() if missing else None
        # the body keeps the article's lines (its front matter blanked): chunk n starts after those before it
        first_lines = [1 + sum(chunk.count("\n") for chunk in chunks[:n]) for n in range(len(chunks))]
        futures = {
            key: pool.submit(self.render_fragment, text, used, front, template, where(n), first_lines[n])
            for key, (text, used, n) in missing.items()
        }
        fresh = {key: future.result() for key, future in futures.items()}
        self.rendered += len(fresh)
        # keep the fragments of this version only: the cache is as big as the article
        self.fragments = {key: fresh[key] if key in fresh else self.fragments[key] for key, *_ in keyed}
        return [self.fragments[key] for key, *_ in keyed]


_HEADING_ID = re.compile(r"<h[1-6][^>]*\sid=\"([^\"]+)\"")


def duplicate_heading_ids(fragments):
    seen = set()
    for fragment in fragments:
        ids = set(_HEADING_ID.findall(fragment))
        if ids & seen:
            return True
        seen |= ids
    return False


_FIGURE_NUMBER = re.compile(
    r"(<figure id=\"fig-[^\"]*\"[^>]*>(?:(?!</figure>).)*?<figcaption[^>]*>Figure\u00a0)\d+:", re.S
)
_PLACED = re.compile(r' id="at-([^"]+)"')


def renumber_figures(fragments):
    count = 0

    def number(match):
        nonlocal count
        count += 1
        return f"{match.group(1)}{count}:"

    return [_FIGURE_NUMBER.sub(number, fragment) if "<figure" in fragment else fragment for fragment in fragments]


_CODE_BLOCK_ID = re.compile(r'((?:id="|href="#)cb)(\d+)(?=[-"])')


def renumber_code_blocks(fragments):
    """Pandoc numbers code blocks (cbN, their lines cbN-M) in page order,
    counting every block, highlighted or not."""
    out, before = [], 0
    for fragment in fragments:
        out.append(_CODE_BLOCK_ID.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + before}", fragment))
        before += fragment.count("<pre")
    return out


def keep_first_places(fragments):
    """Each at-ANCHOR id on the one element a single render gives it: the
    first fragment's (each chunk's bound text gives its own first place one)."""
    keep = {}  # anchor -> the first fragment holding it
    for n, fragment in enumerate(fragments):
        for anchor in _PLACED.findall(fragment):
            keep.setdefault(anchor, n)
    return [
        _PLACED.sub(lambda m: m.group(0) if keep[m.group(1)] == n else "", fragment)
        for n, fragment in enumerate(fragments)
    ]


def assemble(shell, fragments):
    """The shell with its marker and skeleton headings replaced by the body."""
    start = shell.find(BODY_MARK)
    end = shell.rfind("</body>")
    if start < 0 or end < start:
        raise RenderError("the preview's page shell has no body marker: Pandoc's template changed?")
    fragments = keep_first_places(renumber_code_blocks(renumber_figures(fragments)))
    body = "\n".join(f for f in fragments if f)
    return shell[:start] + body + "\n" + shell[end:]
