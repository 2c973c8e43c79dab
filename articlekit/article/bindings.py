"""build/bindings.json, the bindings document: its one owner.

`python -m articlekit bind` resolves every shortcode of the article into it
(articlekit.article.bind); the page, the PDF, the audit, the diff and the
release read it. Its shape is bindings_schema.json, shipped beside this
module (JSON Schema, each field described there):

    {"article", "strict",
     "bindings": {"KEY|FMT|EXPECT": {"key", "fmt", "expect", "text", "raw", "title",
                                     "claim", "source", "anchor", "locations",
                                     "printed", "in_prose", "in_text"}},
     "claims": [{"location", "key", "expect", "value", "holds", "status", "message"}],
     "provenance_md", "departures_md",
     "departures": [{"id", "key", "line", "kind", "status", "explained"}],
     "departure_warnings": [...]}

A binding's id is its lookup id (articlekit.article.shortcodes.lookup_id)
of its own key, fmt and expect, which no schema can say, so it is checked
here too.

Written only through `write_bindings`, which refuses a document its readers
would refuse (a text that passed the schema before is not checked again:
articlekit.core.schema.unless_passed); read only through `load_bindings`,
which names the file, the first entry that is wrong and the fix: a
bindings file from an older articlekit, or edited, is made again by
`snakemake --forcerun bind`.
"""

import json
from functools import lru_cache
from pathlib import Path

from articlekit.article.shortcodes import lookup_id
from articlekit.core import claims
from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import dumps, parse_json, write_text_atomic
from articlekit.core.schema import entry_name, problems, unless_passed

SCHEMA = Path(__file__).resolve().parent / "bindings_schema.json"
# The bindings texts write_bindings found sound (articlekit.core.schema.unless_passed):
# a bind whose document is the last one's, as after most edits of a sentence,
# writes it without the schema's tenth of a second and jsonschema's import
CHECKED = "bindings-checked.json"
REBUILD = "rebuild it with snakemake (snakemake --forcerun bind), which writes it with `python -m articlekit bind`"


class BindingsError(ArticlekitError):
    """A bindings file that cannot be read as one; the message names file, entry and fix."""


@lru_cache(maxsize=1)
def schema():
    """The shipped schema, with the claim statuses from their one definition."""
    loaded = json.loads(SCHEMA.read_text(encoding="utf-8"))
    loaded["$defs"]["status"]["enum"] = [claims.HOLDS, claims.FAILS, claims.INCONCLUSIVE]
    return loaded


def bindings_problems(document, path, text=None):
    """Every way the document is not a bindings document, first entry first.
    text: the document's text, as written or as read, whose schema check
    is remembered once it passes (CHECKED)."""
    if text is None:
        found = problems(document, schema(), path)
    else:
        found = unless_passed(CHECKED, schema(), text, lambda: problems(document, schema(), path))
    if found or not isinstance(document, dict):
        return found
    for ident, b in document["bindings"].items():
        expected = lookup_id(b["key"], b["fmt"], b["expect"])
        if ident != expected:
            found.append(
                f"{path}: {entry_name(['bindings', ident])}: the id is not the lookup id of its key, "
                f"fmt and expect, {expected!r}"
            )
    return found


def check_bindings(document, path, text=None):
    """Raise BindingsError on the first problem (and how many more there are).
    text: the document's text, as read (bindings_problems)."""
    found = bindings_problems(document, path, text)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise BindingsError(f"{found[0]}{more}; this is not a bindings file as `articlekit bind` writes it: {REBUILD}")


def load_bindings(path):
    """The bindings document at path, checked; BindingsError naming the file otherwise."""
    path = Path(path)
    try:
        seen = _as_on_disk(path)  # before the read: a file replaced after it is checked next time
        text = path.read_text(encoding="utf-8")
        document = parse_json(text, path)
    except FileNotFoundError:
        raise BindingsError(f"{path}: no bindings file there; {REBUILD}") from None
    except OSError as exc:
        raise BindingsError(f"{path}: cannot read the bindings file ({exc.strerror})") from None
    except ValueError as exc:  # not JSON: parse_json names file, line and column
        raise BindingsError(f"{exc}; {REBUILD}") from None
    # A render reads the file twice (the page, then its warnings): the schema,
    # a tenth of a second, is checked once per file as it is on disk; and
    # not at all for the text bind wrote, which passed as it was written
    # (each edition's job reads it: CHECKED), unless it was edited since.
    if seen not in _CHECKED:
        check_bindings(document, path, text)
        _CHECKED.add(seen)
    return document


_CHECKED = set()  # (file, mtime, size) of the bindings files this process found sound


def _as_on_disk(path):
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


def write_bindings(path, document):
    """Write the document bind made, atomically, once it is one its readers accept."""
    # the text checked is the text written: what its readers read back
    text = dumps(document)
    found = bindings_problems(document, path, text)
    if found:  # a bug in bind, not in the article: say so rather than write it
        raise BindingsError("bind made a bindings document its readers would refuse: " + "; ".join(found[:3]))
    write_text_atomic(path, text)
    # just checked: a reader in this process (the quarto pre-render binds,
    # then reads the file back) need not check it again as it now is on disk
    _CHECKED.add(_as_on_disk(Path(path)))
