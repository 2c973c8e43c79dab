"""A value as text for a person, and text made safe for markdown.

`reader_text` spells a raw value as a reader knows it (nan, not the JSON
tag), `short_text` keeps it to one bounded line for tooltips and tables,
`shorten` cuts any text to a limit, and `md_text` escapes plain text for
Pandoc's markdown, so that no value can turn into markup.
"""

import json
import re

from articlekit.core.fmt import format_value

SHOWN = 60  # characters of a value shown in tooltips and the provenance table


def reader_text(value):
    """A raw value as a reader knows it: numbers at full precision with NaN
    and infinities spelled nan, inf, -inf (never the JSON tag
    {"$float": "nan"}), lists and maps in Python's brackets."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(reader_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {reader_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # quoted inside a list or map
    return format_value(value)


def short_text(value):
    """A one-line, bounded rendering of a raw value for tooltips and tables."""
    text = value if isinstance(value, str) else reader_text(value)
    lines = text.splitlines() or [""]
    one = lines[0] + (" …" if len(lines) > 1 else "")
    return one if len(one) <= SHOWN else one[: SHOWN - 1] + "…"


def shorten(text, limit=100, mark="…"):
    """The start of a long text (a code listing is bound too), whitespace
    folded: at most `limit` characters, `mark` showing the cut."""
    text = " ".join(str("" if text is None else text).split())
    return text if len(text) <= limit else text[: limit - len(mark)] + mark


_MD_PUNCT = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")


def md_code(text):
    """TEXT as Markdown inline code, which Pandoc reads back character for
    character, runs of spaces included: fenced by more backticks than it
    holds in a row, on one line (a blank line would end the span and free
    what follows). Also how a path goes into Pandoc's metadata, which is
    Markdown: md_text would give `a  b` back as `a b`."""
    text = " ".join(text.splitlines())
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_text(text):
    """Plain text for a markdown table cell: every ASCII punctuation mark
    backslash-escaped (Pandoc reads each as a literal), so a value such as
    "a -> b <c>" can never turn into markup, a smart dash or a cell break;
    on one line, since a blank line would end the paragraph (or the table)
    the value sits in."""
    return _MD_PUNCT.sub(r"\\\1", " ".join(text.splitlines()))
