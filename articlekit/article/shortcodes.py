"""Find and parse the shortcodes of a .qmd, the way Quarto reads them.

The article's shortcodes (the Quarto extension articlekit/render/quarto/_extensions/value):

    {{< value KEY >}}                      print a value (default format)
    {{< value KEY fmt=".6f" >}}            ... with a Python format spec
    {{< value KEY fmt="r" expect="< 1e-12" >}}   ... and check a claim about it
    {{< claim KEY expect="== 0.0" >}}      check a claim the text makes about a
                                           value it does not print; prints nothing
    {{< value KEY code=true >}}            ... printed as inline code, still linked
    {{< source KEY >}}                     the key, linked to its provenance row: the way
                                           back for values printed in a code block
    {{< provenance >}}                     the "where every number comes from" table
    {{< meta NAME >}}                      Quarto's built-in: document metadata

Arguments follow Quarto's shortcode syntax (its lpegshortcode.lua): tokens
separated by white space, each bare (`fmt=.6f`) or quoted with " or '
(`fmt=".6f"`, `expect='contains "->"'`), a key-value pair being `key=value`.
Quotes are stripped (and \\" unescaped) here, exactly once, in every context.
`{{{< ... >}}}` is an escaped shortcode: it prints as `{{< ... >}}`.

Each occurrence records its line and where it sits: "prose" (Quarto calls
the handler with context "inline" or "block"), "code" (inside a fenced code
block or inline code: context "text"), or "comment" (inside an HTML comment;
Quarto treats the raw HTML as text too). Fenced blocks with the attribute
shortcodes="false" are shown verbatim, as in Quarto.

This module is the one parser of that grammar. What it parsed is resolved
once, into the bound document every format renders
(articlekit.article.bound); under an editor's Quarto, Quarto's own parser
hands value.lua the same parameters.

The lookup id (`lookup_id`) is how a shortcode finds its binding in
build/bindings.json; it is defined here, once, and value.lua follows it.
"""

import bisect
import math
import re
from dataclasses import dataclass, field

from articlekit.core.errors import ArticlekitError

OPEN, CLOSE = "{{<", ">}}"

# Fence lines: ``` or ~~~ (3 or more), optionally indented (inside lists).
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_VERBATIM = re.compile(r"""shortcodes\s*=\s*["']?false["']?""")


@dataclass
class Shortcode:
    name: str
    args: list
    kwargs: dict
    raw: str  # the source text, {{< ... >}}
    line: int
    context: str  # "prose" | "code" | "comment"
    start: int  # offsets into the document text
    end: int
    escaped: bool = False
    raw_args: list = field(default_factory=list)  # tokens as written, quotes kept
    # every argument after the name in written order: (key or None, value unquoted, token as written)
    params: list = field(default_factory=list)

    def where(self, path):
        return f"{path}:{self.line}"

    @property
    def lookup_parts(self):
        """(KEY, FMT, EXPECT) of the lookup id: the first argument, fmt= and expect=."""
        return lookup_parts(
            self.args[0] if self.args else "", self.kwargs.get("fmt", ""), self.kwargs.get("expect", "")
        )

    @property
    def lookup_id(self):
        return "|".join(self.lookup_parts)


class ShortcodeSyntaxError(ArticlekitError):
    """A malformed shortcode; str() is "LINE: what is wrong and what to do",
    so that a caller prefixing the file gets "article/index.qmd:LINE: ..."."""

    def __init__(self, line, message):
        self.line = line
        super().__init__(f"{line}: {message}")


# Shortcodes that make blocks (a table): written inside a paragraph, Pandoc
# would flatten them into its text.
BLOCK_SHORTCODES = {"provenance"}


def lookup_id(key, fmt="", expect=""):
    """The lookup id: how a shortcode finds its binding in build/bindings.json.

    The contract, which value.lua (render/quarto/_extensions/value) follows
    from the arguments Quarto hands it:

        KEY|FMT|EXPECT

    KEY is the shortcode's first argument after its name, FMT the value of
    fmt=, EXPECT the value of expect=; each without its quotes (and \\" read
    as "), every run of white space in it (spaces, tabs, a line break)
    written as one space, none at either end; an absent part is empty.
    So {{< value k fmt=".2e" >}} is "k|.2e|", {{< claim k expect="<  1" >}}
    is "k||< 1", and {{< source k >}} is "k||". tests/test_render.py checks
    that value.lua builds the id this function does for every shortcode of
    the article."""
    return "|".join(lookup_parts(key, fmt, expect))


def lookup_parts(key, fmt="", expect=""):
    return tuple(normalize_space(part or "") for part in (key, fmt, expect))


def normalize_space(text):
    return " ".join(text.split())


def strip_quotes(token):
    """'".6f"' -> '.6f', "'a \\'b'" -> "a 'b"; bare tokens unchanged."""
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        quote = token[0]
        return token[1:-1].replace("\\" + quote, quote).replace("\\\\", "\\")
    return token


# --- regions of the document ------------------------------------------------


def regions(text):
    """Split the document into (start, end, kind) spans covering all of it;
    kind is one of: frontmatter, fence (the ``` lines), code, verbatim (code
    with shortcodes="false"), comment, inline_code, prose."""
    spans = []
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    i = 0
    if lines and lines[0].rstrip() == "---":
        for j in range(1, len(lines)):
            if lines[j].rstrip() in ("---", "..."):
                spans.append((0, offsets[j + 1], "frontmatter"))
                i = j + 1
                break
    prose_start = offsets[i]
    while i < len(lines):
        m = _FENCE.match(lines[i].rstrip("\n"))
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        kind = "verbatim" if _VERBATIM.search(m.group("info")) else "code"
        end = len(lines)
        for j in range(i + 1, len(lines)):
            close = lines[j].strip()
            if close.startswith(fence[0] * len(fence)) and set(close) <= {fence[0]}:
                end = j
                break
        spans.extend(_prose_spans(text, prose_start, offsets[i]))
        spans.append((offsets[i], offsets[i + 1], "fence"))
        spans.append((offsets[i + 1], offsets[end], kind))
        close_end = offsets[min(end + 1, len(lines))]
        spans.append((offsets[end], close_end, "fence"))
        i = end + 1
        prose_start = close_end
    spans.extend(_prose_spans(text, prose_start, len(text)))
    return [s for s in spans if s[1] > s[0]]


_COMMENT_OR_CODE = re.compile(r"<!--.*?(?:-->|\Z)|(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)


def _prose_spans(text, start, end):
    """Prose between code blocks, with HTML comments and inline code cut out."""
    spans, pos = [], start
    for m in _COMMENT_OR_CODE.finditer(text, start, end):
        if _inside_shortcode(text, start, m.start()):
            continue  # a backtick or <!-- inside a shortcode's argument
        spans.append((pos, m.start(), "prose"))
        spans.append((m.start(), m.end(), "comment" if m.group(0).startswith("<!--") else "inline_code"))
        pos = m.end()
    spans.append((pos, end, "prose"))
    return spans


def _inside_shortcode(text, floor, at):
    opened = text.rfind(OPEN, floor, at)
    return opened >= 0 and text.find(CLOSE, opened, at) < 0


def kind_at(spans, offset):
    """The kind of the region of `spans` (regions': in order, end to end)
    that holds `offset`, found by bisection."""
    found = bisect.bisect_right(spans, (offset, math.inf)) - 1
    return spans[found][2] if found >= 0 and offset < spans[found][1] else "prose"


# --- parsing ----------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<key>[^\s"'=:/?]+)\s*=\s*(?P<value>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|(?:(?!>}})\S)+)
      | (?P<arg>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|(?:(?!>}})\S)+)
    )""",
    re.X,
)


def parse_inner(inner):
    """'value k fmt=".6f"' -> (name, args, kwargs, raw_tokens, params):
    params is every argument after the name in written order, as (key or
    None, value unquoted, token as written)."""
    params = []
    pos = 0
    while pos < len(inner):
        if not inner[pos:].strip():
            break
        m = _TOKEN.match(inner, pos)
        if not m or m.end() == pos:
            raise ArticlekitError(f"cannot parse shortcode arguments at {inner[pos:]!r}")
        token = m.group("value") if m.group("key") is not None else m.group("arg")
        params.append((m.group("key"), strip_quotes(token), token))
        pos = m.end()
    first = next((i for i, (key, _, _) in enumerate(params) if key is None), None)
    if first is None:
        raise ArticlekitError("shortcode has no name")
    name, params = params[first][1], params[:first] + params[first + 1 :]
    args = [value for key, value, _ in params if key is None]
    kwargs = {key: value for key, value, _ in params if key is not None}
    return name, args, kwargs, [token for _, _, token in params], params


# The characters _find_close acts on; it jumps over every other one.
_SIGNIFICANT = re.compile(r"""[\n\\"'>{]""")
_BLANK_LINE_AHEAD = re.compile(r"[ \t]*\n")


def _find_close(text, pos):
    """Offset of the >}} that closes a shortcode whose arguments start at pos,
    skipping quoted strings (an expect may contain '>}}' in quotes); -1 when
    the paragraph ends (a blank line) or another {{< opens first: a
    shortcode never spans paragraphs, so the next one's >}} is not its."""
    quote = None
    found = _SIGNIFICANT.search(text, pos)
    while found:
        i = found.start()
        c = text[i]
        if c == "\n" and _BLANK_LINE_AHEAD.match(text, i + 1):
            return -1
        if quote:
            if c == "\\":
                found = _SIGNIFICANT.search(text, i + 2)
                continue
            if c == quote:
                quote = None
        elif c in "\"'" and (i == pos or text[i - 1] in " \t\n="):
            quote = c
        elif text.startswith(CLOSE, i):
            return i
        elif text.startswith(OPEN, i):
            return -1
        found = _SIGNIFICANT.search(text, i + 1)
    return -1


def _stands_alone(text, start, end):
    """Is text[start:end] a paragraph of its own: nothing else on its lines,
    and the lines around it blank, a div fence (:::), a heading or the
    document's edge?"""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip() or text[end:line_end].strip():
        return False
    before = text[: max(line_start - 1, 0)].rsplit("\n", 1)[-1] if line_start else ""
    after = text[line_end + 1 :].split("\n", 1)[0]
    return all(not line.strip() or line.lstrip().startswith((":::", "#")) for line in (before, after))


def scan(text):
    """Every shortcode in the document, in order, with line and context.
    Shortcodes in front matter and in shortcodes="false" blocks are skipped."""
    spans = regions(text)
    found = []
    pos = 0
    # Shortcodes come in order: the line is carried forward from the last
    # one, not counted from the top each time.
    line, counted = 1, 0
    while True:
        at = text.find(OPEN, pos)
        if at < 0:
            return found
        escaped = at > 0 and text[at - 1] == "{"
        start = at - 1 if escaped else at
        close = _find_close(text, at + len(OPEN))
        line += text.count("\n", counted, at)
        counted = at
        if close < 0:
            opening = text[at:].split("\n", 1)[0][:60]
            raise ShortcodeSyntaxError(
                line,
                f"shortcode {opening!r} is never closed: end it with >}}}} "
                "before the paragraph ends or the next {{< opens",
            )
        end = close + len(CLOSE)
        if escaped and text.startswith("}", end):
            end += 1
        kind = kind_at(spans, at)
        pos = end
        if kind in ("frontmatter", "verbatim"):
            continue
        context = {"prose": "prose", "comment": "comment"}.get(kind, "code")
        inner = text[at + len(OPEN) : close]
        try:
            name, args, kwargs, raw_args, params = parse_inner(inner)
        except ValueError as exc:
            raise ShortcodeSyntaxError(line, str(exc)) from None
        if name in BLOCK_SHORTCODES and context == "prose" and not escaped and not _stands_alone(text, start, end):
            raise ShortcodeSyntaxError(
                line,
                f"{{{{< {name} >}}}} makes a block (a table) and must stand alone "
                "in its paragraph: put a blank line before and after it",
            )
        found.append(
            Shortcode(name, args, kwargs, text[start:end], line, context, start, end, escaped, raw_args, params)
        )


# --- the article as a prose check reads it, before any value is bound ----------
#
# The bound document (articlekit.article.bound) is what every format renders;
# a check of the prose alone (a preview's piece, a pre-render) reads the
# article with each prose shortcode as the span Quarto's own pre-processing
# writes, so that nothing in a shortcode's arguments reads as markup.


def _attr(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def as_quarto_span(sc):
    """The markdown Quarto writes for a prose shortcode before Pandoc parses
    it (lpegshortcode.lua's md_shortcode): a span of class quarto-shortcode__
    holding one param span per argument, values already unquoted."""
    if sc.escaped:
        return "[]{.quarto-shortcode__-escaped data-value=" + _attr(sc.raw[1:-1]) + "}"
    params = [
        "[]{.quarto-shortcode__-param data-value=" + _attr(a) + " data-raw=" + _attr(a) + "}"
        for a in [sc.name, *sc.args]
    ]
    for key, value in sc.kwargs.items():
        params.append("[]{.quarto-shortcode__-param data-key=" + _attr(key) + " data-value=" + _attr(value) + "}")
    return "[" + "".join(params) + "]{.quarto-shortcode__ data-raw=" + _attr(" ".join(sc.raw.split())) + "}"


def to_quarto_markdown(text):
    """The document as a prose check reads it: every prose shortcode replaced
    by its Quarto span; one in code or raw HTML left as written (code is
    never markup), an escaped one there printed as the shortcode it shows.
    Shortcodes in shortcodes="false" code blocks are left as written."""
    out, pos = [], 0
    for sc in scan(text):
        out.append(text[pos : sc.start])
        if sc.context == "prose":
            out.append(as_quarto_span(sc))
        else:
            out.append(sc.raw[1:-1] if sc.escaped else sc.raw)
        pos = sc.end
    out.append(text[pos:])
    return "".join(out)
