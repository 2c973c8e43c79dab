"""The one page writer of the reports: build/audit.md, build/audit.html and
build/diff.md are written with these blocks, and with `write_report`.

Markdown: a cell may hold anything the build produced (an error message, a
code listing), so every cell is folded onto one line with its pipes escaped,
or one value would break its table's row. Plain text also has its HTML
escaped (`<b>` in an error message must show as text wherever the Markdown
is rendered); inline code needs no escaping, since Markdown shows a code span
literally.

HTML: a self-contained page (`html_page`, with STYLE) whose tables turn into
cards of labelled fields on a narrow screen.
"""

import html
import re

from articlekit.core.jsonio import write_json, write_text_atomic


# ---- Markdown -----------------------------------------------------------------------



def _fold(text):
    """Line breaks folded, pipes escaped: one table cell's worth of text."""
    return " ".join(str("" if text is None else text).split()).replace("|", "\\|")


def cell(text):
    """Plain text for a table cell or a list item: folded, HTML escaped."""
    return html.escape(_fold(text), quote=False)


def code(text):
    """One cell as inline code; '' for no text."""
    if text in (None, ""):
        return ""
    inner = _fold(text)
    return f"`` {inner} ``" if "`" in inner else f"`{inner}`"  # a listing may hold backticks


def table(head, rows):
    """The table's lines: header, separator, then one line per row of cells."""
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(row) + " |" for row in rows])


def counts_table(counts):
    """A report's head: one right-aligned row of (label, count) pairs."""
    return ["| " + " | ".join(label for label, _ in counts) + " |",
            "|" + "---:|" * len(counts),
            "| " + " | ".join(str(n) for _, n in counts) + " |"]


def section(title, intro, head, rows):
    """A titled table with its one-line introduction; no lines when there are no rows."""
    return [f"## {title}", "", intro, "", *table(head, rows), ""] if rows else []


# ---- HTML ---------------------------------------------------------------------------

# Fits 1280 px without sideways scrolling (four columns, text wraps between
# words only); under 48rem each row becomes a card of labelled fields.
STYLE = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:80rem;margin:1.5rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
table{border-collapse:collapse;width:100%;table-layout:fixed;font-size:.85rem}
th,td{border-bottom:1px solid #e6e8eb;padding:.35rem .45rem;text-align:left;vertical-align:top;overflow-wrap:normal;word-break:normal}
th{background:#f6f8fa}
code{font:.8rem ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-line}
.key{white-space:normal}
col.c-key{width:22%}col.c-printed{width:33%}col.c-why{width:33%}col.c-links{width:12%}
.badge{display:inline-block;border-radius:1rem;padding:.05rem .55rem;font-size:.75rem;font-weight:600;white-space:nowrap}
.reproduced,.holds{background:#dafbe1;color:#116329}.expected{background:#ddf4ff;color:#0a3069}
.erratum{background:#fbefff;color:#6e40c9}.not-reproducible,.inconclusive{background:#fff8c5;color:#7d4e00}
.unexpected,.missing,.fails{background:#ffebe9;color:#a40e26}.cited,.none{background:#eaeef2;color:#57606a}
.cards{display:flex;gap:.6rem;flex-wrap:wrap;padding:0;margin:1rem 0}
.card{display:block;flex:1 1 0;border:1px solid #d0d7de;border-radius:.5rem;padding:.5rem .7rem;color:inherit;text-decoration:none}
.nb{white-space:nowrap}
a.card:hover{border-color:#0969da}.card b{display:block;font-size:1.5rem}.card.zero{opacity:.55}
.muted{color:#57606a}.entry{margin:0 0 .35rem}.entry:last-child{margin:0}
.entry a.id{font-weight:600;color:inherit}.arrow{color:#57606a;padding:0 .2rem}
details{margin:1rem 0}summary{cursor:pointer;font-weight:600;padding:.3rem 0}
:target{background:#fff8c5}
@media (max-width:48rem){
  body{margin:.8rem auto;padding:0 .6rem}
  table.rows,table.rows tbody,table.rows tr,table.rows td{display:block;width:100%}
  table.rows thead,table.rows colgroup{display:none}
  table.rows tr{border:1px solid #d0d7de;border-radius:.4rem;margin:0 0 .7rem;padding:.2rem .3rem}
  table.rows td{border:0;padding:.25rem .3rem}
  table.rows td[data-label]::before{content:attr(data-label);display:block;font-size:.7rem;color:#57606a;text-transform:uppercase;letter-spacing:.03em}
  .card{flex:1 1 40%}
}
"""


def escape(text):
    """Text for HTML; None as nothing."""
    return html.escape("" if text is None else str(text))


# A number, version or flag inside running text ("-1e9", "2.14.1+cpu",
# "'> 0.1'") is one word: browsers would otherwise break it after its hyphen.
_TOKEN = re.compile(r"[-+−]?[\w.]*\d[\w.+−-]*")


def words(text):
    """Escaped running text whose numbers never wrap inside."""
    return _TOKEN.sub(lambda m: f'<span class="nb">{m.group(0)}</span>' if "-" in m.group(0) or "+" in m.group(0)
                      else m.group(0), escape(text))


def key_html(key):
    """A dotted key (or a path) that may wrap after its dots, underscores and
    slashes, never inside a word."""
    return "<code class=key>" + "<wbr>".join(re.split(r"(?<=[._/])", escape(key))) + "</code>"


def badge(label, css):
    return f'<span class="badge {css}">{escape(label)}</span>'


def cols(*names):
    """A table's column widths, by the STYLE's col.c-NAME classes."""
    return "<colgroup>" + "".join(f'<col class="c-{n}">' for n in names) + "</colgroup>"


def html_table(head, rows, colgroup="", css="rows"):
    """A table of ready HTML cells; each cell carries its column's name, shown
    as its label when a narrow screen turns rows into cards."""
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "\n".join("<tr>" + "".join(f'<td data-label="{escape(h)}">{c}</td>' for h, c in zip(head, row)) + "</tr>"
                     for row in rows)
    return f'<table class="{css}">{colgroup}<thead><tr>{header}</tr></thead><tbody>\n{body}\n</tbody></table>'


def html_page(title, body):
    """A self-contained page: STYLE inline, one line per part of the body."""
    head = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>", f"<style>{STYLE}</style></head><body>"]
    return "\n".join([*head, *body, "</body></html>"]) + "\n"


# ---- writing ------------------------------------------------------------------------

def write_report(json_path, data, pages):
    """The report as data, then each page ({path: text}), each file atomic."""
    write_json(json_path, data)
    for path, text in pages.items():
        write_text_atomic(path, text)
