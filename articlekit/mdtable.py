"""Markdown tables for the two reports, build/audit.md and build/diff.md.

A cell may hold anything the build produced (an error message, a code
listing), so every cell is folded onto one line with its pipes escaped:
otherwise one value would break the table's row.
"""

LIBRARIES = {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"}


def cell(text):
    """One table cell: line breaks folded, pipes escaped."""
    return " ".join(str("" if text is None else text).split()).replace("|", "\\|")


def code(text):
    """One cell as inline code; '' for no text."""
    if text in (None, ""):
        return ""
    inner = cell(text)
    return f"`` {inner} ``" if "`" in inner else f"`{inner}`"  # a listing may hold backticks


def table(head, rows):
    """The table's lines: header, separator, then one line per row of cells."""
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(row) + " |" for row in rows])


def versions_text(versions):
    """{"numpy": "2.4.6", "torch": None} -> "NumPy 2.4.6"; libraries in a fixed order."""
    return ", ".join(f"{name} {versions[lib]}" for lib, name in LIBRARIES.items() if versions.get(lib))
