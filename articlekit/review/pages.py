"""The one page writer of the reports: build/audit.md, build/audit.html,
build/diff.md, build/matrix.md and build/matrix.html are written with these
blocks, and with `write_report`.

Markdown: a cell may hold anything the build produced (an error message, a
code listing), so every cell is folded onto one line with its pipes escaped,
or one value would break its table's row. Plain text also has its HTML
escaped (`<b>` in an error message must show as text wherever the Markdown
is rendered); inline code needs no escaping, since Markdown shows a code span
literally.

HTML: a self-contained page, `html_page(TEMPLATE, **data)`: the module that
owns a report computes what its page shows as plain values (text, numbers,
lists, dicts, the status marks it chose) and templates/TEMPLATE lays them
out, on the one base page templates/page.html with the page's stylesheet
inline (report.css, matrix.css). Jinja2 autoescapes every value: no HTML is
assembled in Python outside this module, and an error message holding
`</td>` or `<script>` shows as text (tests/test_pages.py). The audit page's
tables turn into cards of labelled fields on a narrow screen.
"""

import html
import re
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup

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
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(row) + " |" for row in rows]


def counts_table(counts):
    """A report's head: one right-aligned row of (label, count) pairs."""
    return [
        "| " + " | ".join(label for label, _ in counts) + " |",
        "|" + "---:|" * len(counts),
        "| " + " | ".join(str(n) for _, n in counts) + " |",
    ]


def section(title, intro, head, rows):
    """A titled table with its one-line introduction; no lines when there are no rows."""
    return [f"## {title}", "", intro, "", *table(head, rows), ""] if rows else []


# ---- HTML ---------------------------------------------------------------------------

HERE = Path(__file__).parent
# Each page's look, inlined into it; named here so that the rules' code
# inputs (articlekit/workflow/codegraph.py) list them, as they list "templates".
STYLESHEETS = ("report.css", "matrix.css")
_CSS_COMMENT = re.compile(r"/\*.*?\*/\n?", re.S)


def stylesheet(name):
    """A page's stylesheet, its comments left out (they are for whoever edits it)."""
    if name not in STYLESHEETS:
        raise ValueError(f"no stylesheet {name!r} in {HERE}: the pages have {', '.join(STYLESHEETS)}")
    return Markup(_CSS_COMMENT.sub("", (HERE / name).read_text(encoding="utf-8")))


def _escaped(value):
    """Every value a template prints, escaped the way html.escape does
    (quotes as &quot; and &#x27;, the spelling these pages have always had;
    MarkupSafe would write &#34; and &#39;); None prints as nothing. What the
    templates' own macros made is markup already and passes through."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value)))


# A number, version or flag inside running text ("-1e9", "2.14.1+cpu",
# "'> 0.1'") is one word: browsers would otherwise break it after its hyphen.
_TOKEN = re.compile(r"[-+−]?[\w.]*\d[\w.+−-]*")


def word_runs(text):
    """Running text as (piece, whole) pairs, in order: whole is true for a
    number with a sign or hyphen in it, which the `words` macro keeps from
    wrapping; the pieces are plain text, escaped by the template."""
    text = "" if text is None else str(text)
    runs, start = [], 0
    for match in _TOKEN.finditer(text):
        if "-" in match.group(0) or "+" in match.group(0):
            runs += [(text[start : match.start()], False), (match.group(0), True)]
            start = match.end()
    return runs + [(text[start:], False)]


def key_parts(key):
    """A dotted key (or a path) cut after its dots, underscores and slashes:
    where the `key` macro lets it wrap, never inside a word."""
    return re.split(r"(?<=[._/])", "" if key is None else str(key))


@lru_cache(maxsize=None)
def _templates():
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every page, whatever its name: a value is text, never markup
        finalize=_escaped,
        undefined=jinja2.StrictUndefined,  # a field the page names and the data lacks is an error, not ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(runs=word_runs, key_parts=key_parts)
    environment.globals["stylesheet"] = stylesheet
    return environment


def html_page(template, **data):
    """A self-contained page: templates/TEMPLATE (built on page.html, with
    its stylesheet inline) filled with the page's data, plain values only."""
    return _templates().get_template(template).render(**data)


# ---- writing ------------------------------------------------------------------------


def write_report(json_path, data, pages):
    """The report as data, then each page ({path: text}), each file atomic."""
    write_json(json_path, data)
    for path, text in pages.items():
        write_text_atomic(path, text)
