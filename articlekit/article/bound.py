"""The bound document: the article with every shortcode already resolved.

`articlekit bind` checks the article's shortcodes against the values and
writes this document beside build/bindings.json; every format the build
writes (the page, its markdown, the PDF, Word, JATS) is rendered from it,
by Pandoc or by Quarto, so no renderer looks a value up. What a shortcode
becomes is plain Pandoc markdown that every reader takes apart the same way:

    {{< value K >}}            [TEXT](#ANCHOR "TITLE"){#at-ANCHOR .bound-value}
                               (the id on the key's first place in the document only;
                               code=true puts TEXT in backticks)
    ... a claim that fails     followed by [MARK: EXPECT]{claim-mark=CLASS title="MESSAGE"}
    ... band="outside"         followed by [NOTE]{claim-mark="claim-outlier" title="..."}: a
                               seeded value outside its seeds' 5-95 % band (seed_band); where
                               the shortcode does not say so (strict=false), the warning
    ... a notice (strict=false) followed by [TEXT]{claim-mark=CLASS title="MESSAGE"}
    {{< claim K expect=E >}}   []{.claim-checked data-claim="K E"} (or its mark)
    {{< source K >}}           [`K`](#ANCHOR "TITLE"){.bound-source}
    {{< meta NAME >}}          []{.bound-meta name=NAME}: the renderer fills it in
    {{< provenance >}}         ::: {.provenance .column-screen-inset}  the table  :::
    {{< departures >}}         ::: {.bound-departures}  the section  :::

Inside code, an HTML comment or raw HTML, a shortcode becomes its plain
text. Each format's Lua filter (articlekit/render/filters/bound.lua) then
writes these spans as the format shows them: links on the page, plain
numbers in the markdown that diffs read, coloured marks in the PDF. The
text of every value is escaped for markdown (articlekit.core.text.md_text),
so a value never turns into markup.

value.lua, Quarto's shortcode extension, still resolves the article's own
shortcodes where an editor renders it (`quarto render`, `quarto preview`);
tests/test_bound.py holds the two to the same values and marks.
"""

import re

from articlekit.article import seed_band
from articlekit.article.shortcodes import regions, scan
from articlekit.core.errors import ArticlekitError
from articlekit.core.text import md_code, md_text

# The block shortcodes and the fenced div each becomes.
BLOCK_DIVS = {
    "provenance": ("provenance_md", "{.provenance .column-screen-inset}"),
    "departures": ("departures_md", "{.bound-departures}"),
}


# A fenced block's opening line, as articlekit.article.shortcodes finds it.
_FENCE_LINE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")


class BoundError(ArticlekitError):
    """A shortcode the bound document cannot hold (the article's line)."""


def _quoted(text):
    """A link title or attribute value in double quotes, as Pandoc reads it:
    backslash and quote escaped, and | too (a pipe table's cell ends at one);
    on one line (a blank line would end the paragraph around it). A {{< in
    it gets a zero-width space after its braces: Quarto runs shortcodes in
    attribute values, and its escape for them does not survive there."""
    text = " ".join(text.splitlines()).replace("{{<", "{{\u200b<")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("|", "\\|") + '"'


def claim_mark(binding):
    """{text, class} shown beside a claim that does not hold, or None."""
    claim = binding.get("claim")
    mark = claim.get("mark") if isinstance(claim, dict) else None
    return mark if isinstance(mark, dict) else None


def _mark(binding, mark):
    text = md_text(f"{mark['text']}: {binding['expect']}")
    return f"[{text}]{{claim-mark={_quoted(mark['class'])} title={_quoted(binding['claim'].get('message', ''))}}}"


def _notes(binding, sc):
    """(text, class, tooltip) of every note printed beside a value at this
    place, after its claim's mark: its band's (seed_band.shown), its notice."""
    notes = []
    band = seed_band.shown(binding)
    if band:
        notes.append(band)
    notice = binding.get("notice")
    if isinstance(notice, dict):
        notes.append((notice["text"], notice["class"], notice["message"]))
    return notes


def _note(text, css, tooltip):
    return f"[{md_text(text)}]{{claim-mark={_quoted(css)} title={_quoted(tooltip)}}}"


class _Binder:
    def __init__(self, document, article):
        self.bindings = document["bindings"]
        self.document = document
        self.article = article
        self.placed = set()  # anchors whose first place has its id

    def binding(self, sc):
        found = self.bindings.get(sc.lookup_id)
        if found is None:
            raise BoundError(
                f"{sc.where(self.article)}: no binding for key {sc.lookup_parts[0]!r} in {sc.raw} "
                f"(lookup id {sc.lookup_id!r}): the bindings file is older than the article or the key is "
                "misspelled; run python -m articlekit bind again"
            )
        claim = found.get("claim")
        if isinstance(claim, dict) and claim.get("holds") is False and claim_mark(found) is None:
            # never a claim left unmarked
            raise BoundError(
                f"{sc.where(self.article)}: the claim '{found['key']} {found['expect']}' is {claim.get('status')}, "
                "but its binding carries no mark to show: the bindings file is older than articlekit; "
                "rerun python -m articlekit bind"
            )
        return found

    def block(self, sc):
        field, attributes = BLOCK_DIVS[sc.name]
        markdown = self.document.get(field)
        if markdown is None:
            raise BoundError(f"{sc.where(self.article)}: {field} is missing from the bindings file: bind again")
        return markdown, attributes

    def in_prose(self, sc):
        if sc.name in BLOCK_DIVS:
            markdown, attributes = self.block(sc)
            return f"::: {attributes}\n{markdown.rstrip()}\n:::"
        if sc.name == "meta":
            return f"[]{{.bound-meta name={_quoted(sc.args[0] if sc.args else '')}}}"
        b = self.binding(sc)
        mark = claim_mark(b)
        if sc.name == "claim":
            return (
                _mark(b, mark) if mark else f"[]{{.claim-checked data-claim={_quoted(b['key'] + ' ' + b['expect'])}}}"
            )
        if sc.name == "source":
            return f"[{md_code(b['key'])}](#{b['anchor']} {_quoted(b['title'])}){{.bound-source}}"
        shown = md_code(b["text"]) if sc.kwargs.get("code") == "true" else md_text(b["text"])
        ident = ""
        if b["anchor"] not in self.placed:
            self.placed.add(b["anchor"])
            ident = f"#at-{b['anchor']} "
        link = f"[{shown}](#{b['anchor']} {_quoted(b['title'])}){{{ident}.bound-value}}"
        out = f"{link} {_mark(b, mark)}" if mark else link
        return "".join([out, *(" " + _note(*note) for note in _notes(b, sc))])

    def in_text(self, sc):
        """Inside code or raw HTML: the plain string, nothing that could become markup."""
        if sc.name in BLOCK_DIVS:
            return self.block(sc)[0]
        if sc.name == "meta":
            raise BoundError(
                f"{sc.where(self.article)}: {sc.raw} sits in code or raw HTML, where the renderer's "
                "metadata is not known when the article is bound; move it into the prose"
            )
        b = self.binding(sc)
        mark = claim_mark(b)
        if sc.name == "claim":
            return f"{mark['text']}: {b['key']} {b['expect']}" if mark else ""
        out = f"{b['text']}  {mark['text']}: {b['expect']}" if mark else b["text"]
        return "".join([out, *(f"  {text}" for text, _, _ in _notes(b, sc))])


def bound_markdown(text, document, article="the article"):
    """The article `text` with each shortcode resolved from the bindings
    `document` (articlekit.article.bind's). An escaped shortcode,
    {{{< x >}}}, prints as {{< x >}}; one in a shortcodes="false" block is
    left as written.

    A value is data wherever it lands, never markup: in prose it is escaped
    (md_text); inside code it is the code's text, and the code's own fence
    is widened past any run of its fence character the values bring in
    (a fenced block's ``` lines, an inline span's backticks), so no value
    can close the code it sits in and write live markdown after it."""
    binder = _Binder(document, article)
    shortcodes = scan(text)
    out, at = [], 0
    for start, end, kind in regions(text):
        inside = []
        while at < len(shortcodes) and shortcodes[at].start < end:
            inside.append(shortcodes[at])
            at += 1
        out.append([kind, _bind_region(binder, text, start, end, inside, kind)])
    _fence_past_values(out)
    return "".join(piece for _, piece in out)


def _bind_region(binder, text, start, end, shortcodes, kind):
    """The region text[start:end] of the given kind with its shortcodes bound."""
    out, pos = [], start
    for sc in shortcodes:
        out.append(text[pos : sc.start])
        literal = sc.raw[1:-1] if sc.escaped else None
        if sc.context == "prose":
            out.append(md_text(literal) if literal is not None else binder.in_prose(sc))
        elif literal is not None:
            out.append(literal)
        elif kind == "comment":
            out.append(_inert_in_comment(binder.in_text(sc)))
        elif kind == "inline_code":
            out.append(" ".join(binder.in_text(sc).splitlines()))  # a blank line would end the span
        else:
            out.append(binder.in_text(sc))
        pos = sc.end
    out.append(text[pos:end])
    return "".join(out)


def _inert_in_comment(value):
    """A value inside an HTML comment, unable to end it (--> or --!>)."""
    return re.sub(r"-(?=-)", "- ", value)


def _fence_past_values(regions_out):
    """Widen each code fence past the longest run of its character inside.
    regions_out: [kind, bound text] in document order; a fenced block is
    the three regions fence, code (or verbatim), fence."""
    for i, (kind, piece) in enumerate(regions_out):
        if kind == "inline_code":
            regions_out[i][1] = _code_span_of(piece)
        elif kind == "fence" and i + 2 < len(regions_out) and regions_out[i + 2][0] == "fence":
            opening, body, closing = piece, regions_out[i + 1][1], regions_out[i + 2][1]
            found = _FENCE_LINE.match(opening)
            char, width = found.group("fence")[0], len(found.group("fence"))
            longest = max((len(run) for run in re.findall(re.escape(char) + "+", body)), default=0)
            if longest >= width:
                longer = char * (longest + 1)
                regions_out[i][1] = opening.replace(found.group("fence"), longer, 1)
                regions_out[i + 2][1] = re.sub(re.escape(char) + "+", longer, closing, count=1)


def _code_span_of(piece):
    """An inline code span (`...` as written) fenced past its contents' runs."""
    ticks = len(piece) - len(piece.lstrip("`"))
    inner = piece[ticks : len(piece) - ticks]
    longest = max((len(run) for run in re.findall("`+", inner)), default=0)
    if longest < ticks:
        return piece
    fence = "`" * (longest + 1)
    pad = " " if inner[:1] == "`" or inner[-1:] == "`" else ""
    return f"{fence}{pad}{inner}{pad}{fence}"
