"""Markdown tables for the two reports, build/audit.md and build/diff.md.

A cell may hold anything the build produced (an error message, a code
listing), so every cell is folded onto one line with its pipes escaped:
otherwise one value would break the table's row. Plain text also has its
HTML escaped (`<b>` in an error message must show as text, not as markup,
wherever the Markdown is rendered); inline code needs no escaping, since
Markdown shows a code span literally.
"""

import html

LIBRARIES = {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"}


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


def versions_text(versions):
    """{"numpy": "2.4.6", "torch": None} -> "NumPy 2.4.6"; libraries in a fixed order."""
    return ", ".join(f"{name} {versions[lib]}" for lib, name in LIBRARIES.items() if versions.get(lib))
