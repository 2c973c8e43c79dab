"""A release snapshot's digest: what shows that snapshot.json is still what
`articlekit release` wrote, and, when it is not, which entries changed.

What `digest.sha256` covers: every field of the snapshot except `digest`
itself, serialised as canonical JSON (object keys sorted at every level, no
whitespace, UTF-8, floats as Python's shortest round-trip repr, NaN and
infinities tagged as articlekit.core.jsonio writes them), hashed with SHA-256.
Reindenting the file or reordering an object's keys keeps it; changing,
adding or removing anything else does not.

`digest.entries` lets a mismatch name what changed: the first 16 hex digits
of SHA-256 over the same canonical form of each entry of each top-level
field: one per key of an object (`values`, `sources`, `bindings`,
`environment`, `versions`, `audit`), one per item of an array (`claims`),
one for a plain field (`label`, `released_at`, ...). The entries need not
be trusted: `sha256` alone decides whether the snapshot is intact.

This is a checksum, not a signature: whoever rewrites the digest as well
can forge a snapshot. It catches what a diff must never trust silently, a
value edited by hand or a file cut short, and says where.
"""

import difflib
import hashlib
import json

from articlekit.core.jsonio import to_jsonable

ALGORITHM = "sha256"
# What the digest covers, in words, written into each snapshot (it names no
# file: a snapshot outlives the layout of the code that sealed it).
COVERS = "every field but digest, as canonical JSON: keys sorted, no whitespace, UTF-8"
ENTRY_DIGITS = 16


def canonical(obj):
    """The bytes that are hashed: one spelling for one content."""
    return json.dumps(
        to_jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _entry_hash(obj):
    return hashlib.sha256(canonical(obj)).hexdigest()[:ENTRY_DIGITS]


def _entry_hashes(field_value):
    if isinstance(field_value, dict):
        return {key: _entry_hash(value) for key, value in field_value.items()}
    if isinstance(field_value, list):
        return [_entry_hash(item) for item in field_value]
    return _entry_hash(field_value)


def contents(snapshot):
    """The snapshot without its digest: what the digest covers."""
    return {field: value for field, value in snapshot.items() if field != "digest"}


def content_hash(snapshot):
    return hashlib.sha256(canonical(contents(snapshot))).hexdigest()


def digest_of(snapshot):
    """The `digest` field for this snapshot's contents."""
    body = contents(snapshot)
    return {
        "algorithm": ALGORITHM,
        "covers": COVERS,
        "sha256": content_hash(snapshot),
        "entries": {field: _entry_hashes(value) for field, value in body.items()},
    }


def sealed(snapshot):
    """The snapshot with its digest as the last field (so that sealing an
    older snapshot only appends to its file)."""
    body = contents(snapshot)
    return {**body, "digest": digest_of(body)}


def matches(snapshot):
    return snapshot["digest"]["sha256"] == content_hash(snapshot)


def changed_entries(snapshot):
    """[(where, how)] for each entry that differs from the digest's record,
    in the order the release wrote them: where is a path such as
    ["values", "scaling.dk64.unscaled.max_weight"] or ["claims", 3], how is
    "changed", "removed" or "added". Empty when every entry matches (then
    only the digest itself was edited)."""
    recorded, body = snapshot["digest"]["entries"], contents(snapshot)
    out = []
    for field in list(recorded) + [f for f in body if f not in recorded]:
        if field not in body:
            out.append(([field], "removed"))
        elif field not in recorded:
            out.append(([field], "added"))
        else:
            out += [([field, *where], how) for where, how in _compare(recorded[field], _entry_hashes(body[field]))]
    return out


def _compare(was, now):
    if isinstance(was, dict) and isinstance(now, dict):
        out = []
        for key in list(was) + [k for k in now if k not in was]:
            if key not in now:
                out.append(([key], "removed"))
            elif key not in was:
                out.append(([key], "added"))
            elif was[key] != now[key]:
                out.append(([key], "changed"))
        return out
    if isinstance(was, list) and isinstance(now, list):
        # Items have no names: align the two lists, so that one item removed
        # is one removal, not every later item "changed".
        out = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, was, now, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            out += [([j1 + n], "changed") for n in range(paired)]
            out += [([i], "removed") for i in range(i1 + paired, i2)]
            out += [([j], "added") for j in range(j1 + paired, j2)]
        return out
    return [] if was == now else [([], "changed")]
