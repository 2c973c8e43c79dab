"""The prose puts nothing on the page that loads, runs or embeds a file: it
is checked on the tree Pandoc reads from it, before any renderer runs.

A renderer follows what the text names: Pandoc's and Quarto's embedding
read any path an <img src> or <script src> gives (/etc/passwd included),
and the browser then fetches whatever is left. So the article's tree
(Pandoc's JSON form, as `articlekit parse` writes it) may hold:

- raw HTML only from a short safe list: HTML comments and the tags
  <br>, <wbr>, <sub>, <sup>, <kbd>, <mark>, <small> without attributes
  (SAFE_TAGS). Any other raw HTML, and raw markup of any other format
  (`{=typst}`, `{=latex}`, ...: it would reach the PDF), is refused, with
  the Markdown to write instead;
- images only of figures: a relative link into the build's figures/
  folder (../figures/NAME.svg from article/), the files an experiment's
  rule writes. articlekit embeds them itself (articlekit.article.figures,
  figure_file), never a renderer by following the link;
- attributes ({key=value}, or those of an HTML <div>/<span> Pandoc reads as
  its own) from an allowlist only (ATTRIBUTES), each with the values it may
  hold: the few an author's Markdown needs (title, lang, a callout's
  collapse, a figure's width) and the ones articlekit writes into the
  bound document (claim-mark, data-claim, name), whose values are its own
  vocabulary, so that one typed by hand prints nothing articlekit would
  not. Identifiers and classes are names and nothing else. No style=, no
  handler, nothing that loads: every format has its own ways to load a
  file, so a denylist is always one short;
- links that navigate, never run, judged as a browser reads them
  (articlekit.core.urls: control characters and whitespace dropped first):
  a fragment, http, https or mailto, or a file of the build's folder;
- no metadata block in the body (Pandoc reads a YAML block anywhere, and
  its css: or header-includes: would reach the page); the front matter's
  values are checked like the body (check_front_matter).

Pandoc's markdown reader keeps no source positions, so each problem's line
is found by looking for what the tree holds (the raw tag, the image's
link, the attribute) in the text, in document order.
"""

import os
import re
from dataclasses import dataclass

from articlekit.article.figures import FIGURES
from articlekit.core.status import MARK_CLASSES
from articlekit.core.urls import link_problem
from articlekit.core.errors import ArticlekitError

# Tags that load, run and link nothing, allowed bare (no attribute).
SAFE_TAGS = ("br", "wbr", "sub", "sup", "kbd", "mark", "small")
_VOID = ("br", "wbr")
_SAFE_TAG = re.compile(
    r"<(?:(?:%s)\s*/?|(?:%s)|/(?:%s))\s*>"
    % ("|".join(_VOID), "|".join(SAFE_TAGS), "|".join(t for t in SAFE_TAGS if t not in _VOID)),
    re.I,
)
# A comment as a browser ends it: not "<!-->" or "<!--->" (which end at
# once, leaving what follows live), and no "--!>" inside (which ends one).
_COMMENT = re.compile(r"<!--(?!-?>)(?:(?!--!?>).)*-->", re.S)
HTML_FORMATS = ("html", "html4", "html5")

# The attributes a piece of the bound article may carry, each with the
# values it may hold (a pattern the whole value matches; ANY_TEXT: any text,
# which every format writes escaped, as text). Everything else is refused.
ANY_TEXT = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")
_BOOLEAN = re.compile(r"true|false")
_LENGTH = re.compile(r"\d{1,4}(?:\.\d{1,3})?(?:%|px|pt|cm|mm|in|em)?")
CLAIM_MARKS = MARK_CLASSES  # a claim's status, or a disclosed out-of-band value (claim-outlier)
ARTICLEKIT_ATTRIBUTES = {
    # articlekit.article.bound writes these; their values are its own words
    "claim-mark": re.compile("|".join(map(re.escape, CLAIM_MARKS))),
    "data-claim": ANY_TEXT,
    "name": re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}"),
}
AUTHOR_ATTRIBUTES = {
    "title": ANY_TEXT,
    "lang": re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}"),
    "dir": re.compile(r"ltr|rtl|auto"),
    "collapse": _BOOLEAN,
    "icon": _BOOLEAN,
    "appearance": re.compile(r"default|simple|minimal"),
    "fig-alt": ANY_TEXT,
    "fig-cap": ANY_TEXT,
    "fig-align": re.compile(r"left|right|center|default"),
    "width": _LENGTH,
    "height": _LENGTH,
    "shortcodes": _BOOLEAN,
}
ATTRIBUTES = {**AUTHOR_ATTRIBUTES, **ARTICLEKIT_ATTRIBUTES}
# An identifier or a class: a name, with nothing a writer would have to quote.
NAME = re.compile(r"[^\s\"'<>&`\\(){}\[\];#$\x00-\x1f\x7f]{1,200}")

# What to write instead of a raw tag, by tag; DEFAULT_INSTEAD otherwise.
INSTEAD = {
    "img": "show a figure as ![caption](../figures/NAME.svg){#fig-NAME}, a file an experiment's rule writes",
    "a": "write a link as [text](https://...)",
    "b": "write **bold**",
    "strong": "write **bold**",
    "i": "write *emphasis*",
    "em": "write *emphasis*",
    "code": "write `code`",
    "pre": "write a fenced code block (```)",
    "p": "separate paragraphs by a blank line",
    "h1": "write a heading as # Heading",
    "h2": "write a heading as ## Heading",
    "h3": "write ### Heading",
    "ul": "write a list as - item",
    "ol": "write a list as 1. item",
    "li": "write a list item as - item",
    "blockquote": "write a quotation as > text",
    "hr": "write a rule as ---",
    "table": "write a pipe table (| a | b |)",
    "div": "write a fenced div: ::: {.class} ... :::",
    "span": "write a span: [text]{.class}",
    "sub": "write H~2~O, or <sub> without attributes",
    "sup": "write x^2^, or <sup> without attributes",
    "details": "write a callout: ::: {.callout-note collapse=\"true\" title=\"...\"} ... :::",
}
DEFAULT_INSTEAD = (
    "write it in Markdown; raw HTML is limited to comments and the bare tags "
    + ", ".join(f"<{t}>" for t in SAFE_TAGS)
    + " (docs/reference.md, Raw HTML)"
)
RUNS_NOTHING = (
    "the page runs no script and loads nothing the build did not make: bind a value with "
    "{{< value KEY >}}, show a figure as ![caption](../figures/NAME.svg)"
)
for _tag in (
    "script",
    "style",
    "iframe",
    "frame",
    "object",
    "embed",
    "link",
    "meta",
    "base",
    "form",
    "input",
    "button",
    "video",
    "audio",
    "source",
    "svg",
    "math",
    "template",
    "noscript",
    "portal",
    "applet",
    "textarea",
    "select",
    "picture",
    "canvas",
):
    INSTEAD[_tag] = RUNS_NOTHING


class ProseError(ArticlekitError):
    """Problems of the prose, each "FILE:LINE: what; what to write instead"."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class ShownFigure:
    line: int  # in the article, 0 when not found in the text
    link: str  # as written (../figures/x.svg)
    path: str  # relative to the build's root, as the rules name it (figures/x.svg)


def is_safe_raw(fmt, text):
    return fmt.lower() in HTML_FORMATS and bool(_SAFE_TAG.fullmatch(text.strip()) or _COMMENT.fullmatch(text.strip()))


def first_tag(text):
    found = re.match(r"\s*<\s*/?\s*([A-Za-z][A-Za-z0-9:-]*)", text)
    return found.group(1).lower() if found else None


def short(text, limit=80):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Lines:
    """Finds a piece of the tree in the text: its line, searching forward
    from the last one found (the tree is in document order), then from the
    start."""

    def __init__(self, text):
        self.text, self.at = text, 0

    def line(self, *needles):
        for needle in filter(None, needles):
            found = self.text.find(needle, self.at)
            if found < 0:
                found = self.text.find(needle)
            if found >= 0:
                self.at = found
                return self.text.count("\n", 0, found) + 1
        return 0


def _is_attr(node):
    """Pandoc's Attr: [identifier, [classes], [[key, value], ...]]."""
    return (
        isinstance(node, list)
        and len(node) == 3
        and isinstance(node[0], str)
        and isinstance(node[1], list)
        and isinstance(node[2], list)
        and all(isinstance(c, str) for c in node[1])
        and all(isinstance(kv, list) and len(kv) == 2 and all(isinstance(x, str) for x in kv) for kv in node[2])
    )


class _Walk:
    def __init__(self, text, article, article_dir, shortcodes=False):
        self.lines, self.article, self.article_dir = _Lines(text), article, article_dir
        self.shortcodes = shortcodes  # the unbound article: its shortcodes as Quarto's spans
        self.problems, self.figures = [], []
        self.ids, self.references = set(), []  # cross-references: the ids there are, the @ids used

    def problem(self, line, what):
        self.problems.append(f"{self.article}:{line}: {what}" if line else f"{self.article}: {what}")

    def node(self, node):
        if isinstance(node, dict):
            kind = node.get("t")
            if kind in ("RawInline", "RawBlock"):
                self.raw(*node["c"])
                return
            if kind == "Cite":
                self.references += [c["citationId"] for c in node["c"][0]]
            elif kind == "Str" and EQUATION_LABEL.fullmatch(node["c"]):
                self.ids.add(EQUATION_LABEL.fullmatch(node["c"]).group(1))
            if kind == "Image":
                self.image(node["c"])
            elif kind == "Link":
                self.link(node["c"][2][0], node["c"][1])
            children = [node.get("c")] if "t" in node else node.values()  # an element, or a MetaMap's map
            for child in children:
                self.node(child)
        elif isinstance(node, list):
            if _is_attr(node):
                self.attributes(*node)
                return
            for item in node:
                self.node(item)

    def raw(self, fmt, text):
        if is_safe_raw(fmt, text):
            return
        first = text.strip().splitlines()[0] if text.strip() else ""
        tag = first_tag(text)
        # Pandoc writes attributes back its own way (&lt; for <): the tag's
        # start finds the line when the whole does not
        line = self.lines.line(first, first[:24], tag and f"<{tag}")
        if fmt.lower() not in HTML_FORMATS:
            self.problem(
                line,
                f"raw {fmt} markup ({short(text)}) is not allowed in the prose: it would reach the "
                f"{'PDF' if fmt.lower() in ('typst', 'latex', 'tex') else 'pages'} unchecked; "
                "write it in Markdown",
            )
            return
        instead = INSTEAD.get(tag, DEFAULT_INSTEAD)
        self.problem(
            line,
            f"raw HTML {short(text)} is not allowed in the prose (the build renders Markdown, and "
            f"its page loads nothing it did not make): {instead}",
        )

    def image(self, content):
        link = content[2][0]
        line = self.lines.line(f"]({link}", f"({link}", link)
        path = os.path.normpath(os.path.join(self.article_dir, link)) if link else ""
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", link) or link.startswith("/") or not path.startswith(FIGURES):
            self.problem(
                line,
                f"the image {short(link)} is not a figure the build makes: an image on the page "
                f"must be a file an experiment's rule writes into {FIGURES}, linked relative to "
                f"the article (../{FIGURES}NAME.svg from article/), which articlekit embeds itself",
            )
            return
        self.figures.append(ShownFigure(line, link, path))

    def link(self, target, content):
        problem = link_problem(target)
        if problem:
            self.problem(
                self.lines.line(f"]({target}", target, _after_scheme(target), f"[{_text_of(content)}]("),
                f"the link {short(ascii(target)[1:-1])} {problem}: link to a page (https://...), "
                "a section (#id) or a file of the build (audit.html)",
            )

    def attributes(self, ident, classes, pairs):
        self.ids.add(ident)
        shortcode = [c for c in classes if c.startswith(SHORTCODE_CLASS)]
        if shortcode and self.shortcodes:
            return  # a shortcode as to_quarto_markdown writes it: its arguments are checked by bind
        if shortcode:
            self.problem(
                self.lines.line(shortcode[0]),
                f"the class .{shortcode[0]} is Quarto's mark of a shortcode, which Quarto would run: "
                "write a shortcode as {{< value KEY >}}",
            )
        for name in [ident] * bool(ident) + classes:
            if not NAME.fullmatch(name):
                self.problem(
                    self.lines.line(name, name.split('"')[0]),
                    f"the identifier or class {short(ascii(name)[1:-1], 40)} is not a plain name: "
                    "use letters, digits, - _ . and :",
                )
        for key, value in pairs:
            line = self.lines.line(f'{key}="{value}', f"{key}={value}", f"{key}=", key)
            allowed = ATTRIBUTES.get(key.lower())
            if allowed is None:
                self.problem(line, f'the attribute {key}="{short(value, 40)}" is not allowed: {_instead(key)}')
            elif not allowed.fullmatch(value):
                self.problem(
                    line,
                    f'the attribute {key}="{short(ascii(value)[1:-1], 40)}" has a value it may not hold: '
                    f"{_expected(key.lower())}",
                )


def _text_of(inlines):
    """A link's text, as written, when it is plain words (to find its line)."""
    return "".join(
        " " if i.get("t") in ("Space", "SoftBreak") else i.get("c", "") if i.get("t") == "Str" else "\0"
        for i in inlines
    ).split("\0")[0]


def _after_scheme(target):
    """What follows the scheme: the part written the same when the article
    spells the scheme with an entity (&#x6A;avascript:) Pandoc decoded."""
    return target.split(":", 1)[1] if ":" in target and len(target.split(":", 1)[1]) >= 6 else ""


def _instead(key):
    name = key.lower()
    if name.startswith("on"):
        return "it runs code in the reader's browser; remove it (the page runs no script of the article's)"
    if name == "style":
        return "put the look in the article's style.css, which is checked to load nothing"
    return (
        "an attribute may only be one of " + ", ".join(sorted(AUTHOR_ATTRIBUTES)) + f"; show a figure as "
        f"![caption](../{FIGURES}NAME.svg), link with [text](https://...)"
    )


def _expected(name):
    pattern = ATTRIBUTES[name].pattern
    if pattern == ANY_TEXT.pattern:
        return "text without control characters"
    if name == "claim-mark":
        return f"articlekit writes claim-mark itself, only as {' or '.join(CLAIM_MARKS)}"
    if name in ARTICLEKIT_ATTRIBUTES:
        return f"articlekit writes {name} itself, only as a name of letters, digits, - and _"
    return f"it is one of {pattern.replace('|', ', ')}" if "\\" not in pattern else "a length such as 80% or 300px"


# What Quarto's crossref numbers: a reference @fig-x names the figure {#fig-x}.
CROSSREF_KINDS = {"fig": "figure", "tbl": "table", "eq": "equation", "sec": "section"}
EQUATION_LABEL = re.compile(r"\{#(eq-[\w.:-]+)\}")


def unknown_references(ids, used):
    """[(line, message)]: one for each @fig-/@tbl-/@eq-/@sec- reference of
    used ([(id, line)]) to an id not in ids, naming the ids of that kind
    there are."""
    first = {}
    for ref, line in used:  # each id once, at its first line
        first.setdefault(ref, line)
    problems = []
    for ref, line in first.items():
        kind = ref.split("-", 1)[0]
        if kind not in CROSSREF_KINDS or "-" not in ref or ref in ids:
            continue
        there = sorted(i for i in ids if i.startswith(kind + "-"))
        problems.append(
            (
                line,
                f"the reference @{ref} names no {CROSSREF_KINDS[kind]} of the article: "
                + (f"its {CROSSREF_KINDS[kind]}s are {', '.join(there)}" if there else f"it has no {kind}- id")
                + f" (give the {CROSSREF_KINDS[kind]} {{#{ref}}}, or correct the reference)",
            )
        )
    return problems


def references_of(walk):
    """[(id, line)]: each @id the walk met, with the line of its first use."""
    return [(ref, walk.lines.line(f"@{ref}")) for ref in dict.fromkeys(walk.references)]


# Quarto's span for a shortcode (articlekit.article.shortcodes.to_quarto_markdown)
SHORTCODE_CLASS = "quarto-shortcode__"


def check_tree(tree, text, article, article_dir, shortcodes=False):
    """The figures the tree shows ([ShownFigure]), or ProseError listing
    every problem. tree: Pandoc's JSON of the article's body (its front
    matter blanked, so any metadata is a block in the body); text: what
    Pandoc read (lines as in the article); article_dir: the article's
    folder relative to the build's root, as figure links are read;
    shortcodes: the tree is of the unbound article, its shortcodes the
    spans Quarto reads them as (allowed there, refused in a bound tree,
    where Quarto would run one an author wrote)."""
    walk = _walked(tree, text, article, article_dir, shortcodes)
    for line, what in unknown_references(walk.ids, references_of(walk)):
        walk.problem(line, what)
    if walk.problems:
        raise ProseError(walk.problems)
    return walk.figures


def _walked(tree, text, article, article_dir, shortcodes):
    walk = _Walk(text, article, article_dir, shortcodes)
    for key in tree.get("meta") or {}:
        line = walk.lines.line(f"\n{key}:")
        walk.problem(
            line + 1 if line else 0,
            f"a YAML metadata block in the body sets {key!r}: Pandoc would apply it to the page; the "
            "front matter (at the top) is the one place for metadata, and a line of three dashes that "
            "is a rule needs a blank line after it",
        )
    walk.node(tree.get("blocks") or [])
    return walk


def read_piece(tree, text, article, article_dir, shortcodes=False):
    """check_tree for a piece of the article (tree and text as check_tree
    takes them), but for its cross-references, which may name another
    piece's ids: -> (figures, the ids it defines, [(@id it uses, line)]),
    or ProseError listing every other problem. Check the references with
    unknown_references once every piece's ids are known."""
    walk = _walked(tree, text, article, article_dir, shortcodes)
    if walk.problems:
        raise ProseError(walk.problems)
    return walk.figures, walk.ids, references_of(walk)


def check_front_matter(tree, text, article):
    """ProseError unless the front matter's values, as Pandoc reads them
    (tree: Pandoc's JSON of a document that is the front matter only), hold
    nothing check_tree refuses in the body. Images are refused there too."""
    walk = _Walk(text, article, ".")
    walk.node(tree.get("meta") or {})
    for figure in walk.figures:
        walk.problem(figure.line, f"the front matter shows the image {figure.link}: figures go in the body")
    if walk.problems:
        raise ProseError(walk.problems)
