"""Checks of a written output: no shortcode left unresolved in a text
output (check_output, against shown_shortcodes or
expected_literal_shortcodes), the provenance table a table on the page and
in the markdown (check_page_structure, check_markdown_structure), and the
claims a strict=false build kept although they fail (failed_claim_warnings).
A message names the article's line where it can (line_of).
"""

import re
from html.parser import HTMLParser
from pathlib import Path

from articlekit.article.bindings import load_bindings
from articlekit.article.shortcodes import regions, scan
from articlekit.core.sources import read_text
from articlekit.core.status import claim_said
from articlekit.render.renderers import RenderError


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
            f"{line_of(article, shown[:20])}{name}: {left - allowed} shortcode(s) were not resolved, first: "
            f"{shown!r}: check its name and arguments (docs/reference.md lists the shortcodes)"
        )
    if "?meta:" in text:
        at = text.find("?meta:")
        key = re.match(r"\?meta:([\w.-]*)", text[at:]).group(1)
        raise RenderError(
            f"{line_of(article, '{{< meta ' + key)}{name}: unknown metadata key {key!r} in a meta shortcode: "
            "set it in the front matter, or use one the article has (title, author, date, renderer)"
        )


def line_of(article, needle):
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
