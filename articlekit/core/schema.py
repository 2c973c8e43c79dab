"""A document checked against a JSON Schema, each problem naming its entry.

    problems(document, schema, path) -> ["FILE: ENTRY: what is wrong", ...]

sorted by entry, ENTRY written as a reader finds it in the file:
bindings['k|.2e|'].claim.holds, claims[3].status, (top level). The
bindings document (articlekit.article.bindings) and release snapshots
(articlekit.review.snapshot) are checked through here.

    unless_passed(record, schema, text, check) -> check(), or [] for a text
    that passed this schema before

remembers the texts that passed (the baseline's, the bindings bind
writes), so that an unchanged one is not checked again.
"""

import hashlib
import json
from pathlib import Path

from articlekit.core.jsonio import read_json, write_json

# The records of the texts that passed a schema, by name: kept where Snakemake
# keeps its own, in the folder the check runs in (a rule's, the quarto
# pre-render's: the project's), and only where Snakemake has run there;
# elsewhere every check runs.
RECORDS = Path(".snakemake/articlekit")
KEPT = 8  # digests a record keeps: a few texts, configs or edits that alternate


def problems(document, schema, path, prefix=()):
    """Every way `document` breaks `schema`, first entry first."""
    # Imported here, not at the top: importing jsonschema costs tens of
    # milliseconds, and Snakemake's plan imports the formats (and through
    # them this module) on every run, where a warm plan checks nothing
    # (tests/test_plan_memory.py holds it to that).
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{path}: {entry_name([*prefix, *error.absolute_path])}: {error.message}" for error in errors]


def entry_name(where):
    """["bindings", "k|.2e|", "text"] -> "bindings['k|.2e|'].text": the
    entry's own key quoted, since value keys hold dots themselves."""
    where = list(where)
    if not where:
        return "(top level)"
    name = str(where[0])
    for depth, step in enumerate(where[1:]):
        if isinstance(step, int):
            name += f"[{step}]"
        elif depth == 0:
            name += f"[{step!r}]"
        else:
            name += f".{step}"
    return name


def unless_passed(record, schema, text, check):
    """check() (-> problems), or [] without running it when `text` passed
    `schema` before: RECORDS/record keeps the digests of the last texts
    that passed, each of the text and the schema together. The digest is of
    the text itself, not its size or time: any edit is checked again, and
    so is a text under another schema; a failure is never remembered.
    `text` must be what the document checked is read from, or written as."""
    checked = json.dumps(schema, sort_keys=True) + "\0" + text
    digest = hashlib.sha256(checked.encode("utf-8")).hexdigest()
    path = RECORDS / record
    passed = _passed(path)
    if digest in passed:
        return []
    found = check()
    if not found and RECORDS.parent.is_dir():  # Snakemake's .snakemake/: a project's folder
        try:
            write_json(path, {"passed": [digest, *(d for d in passed if d != digest)][:KEPT]})
        except OSError:
            pass  # a folder that cannot be written: checked again next time
    return found


def _passed(path):
    """The digests the record at path holds; none when it is missing or unreadable."""
    try:
        passed = read_json(path).get("passed")
    except (OSError, ValueError, AttributeError):
        return []
    return [d for d in passed if isinstance(d, str)] if isinstance(passed, list) else []
