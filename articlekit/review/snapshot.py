"""Release snapshots as files: what releases/<label>/snapshot.json holds,
how it is read, and how an older one is sealed.

A snapshot is trusted only as `articlekit release` wrote it: its digest
(articlekit/review/snapshot_digest.py) must match its contents, or it is refused,
naming the file and the first entry that differs. A hand edit is never
reported as what a release printed.

snapshot_format 2 is written with a digest. A snapshot_format 1 snapshot
was written before snapshots carried one; it is refused until sealed:

    python -m articlekit release --seal releases/<label>/snapshot.json

checks that the snapshot agrees with itself (each printed text and claim
with its value, each value with its source, the environment record) and
appends the digest, changing nothing else.

releases/ holds one folder per release. A folder there without a snapshot,
or whose snapshot.json is JSON with none of a snapshot's marks
(snapshot_format, digest, released_at, label: a copy of build/values.json,
notes), is a stray: named as such (`strays`), and left out when the newest
release is chosen, so it never blocks the diff against the real one. A
snapshot.json that is not JSON at all is a release cut short until shown
otherwise: it is refused with the command that restores it.
"""

from pathlib import Path

from articlekit.core.equality import same_value
from articlekit.core.errors import ArticlekitError
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import read_json, write_json
from articlekit.core.keys import lookup
from articlekit.core.schema import entry_name
from articlekit.core.schema import problems as schema_problems
from articlekit.core.text import shorten
from articlekit.data.environment import record as environment_record
from articlekit.review import snapshot_digest

SNAPSHOT_FORMAT = 2
UNSEALED_FORMAT = 1  # written before snapshots carried a digest
LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"

DIGEST_SCHEMA = {
    "type": "object",
    "required": ["algorithm", "sha256", "entries"],
    "properties": {
        "algorithm": {"const": snapshot_digest.ALGORITHM},
        "covers": {"type": "string"},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "entries": {"type": "object"},
    },
}

# What articlekit.review.diff relies on; anything else in a snapshot is kept but
# unread. `digest` is required too, but checked before the schema (a
# missing one has its own message: which fix applies depends on the format).
SNAPSHOT_SCHEMA = {
    "type": "object",
    "required": ["snapshot_format", "label", "released_at", "values", "sources", "versions", "bindings", "claims"],
    "properties": {
        "snapshot_format": {"enum": [UNSEALED_FORMAT, SNAPSHOT_FORMAT]},
        "label": {"type": "string", "pattern": LABEL_PATTERN},
        "released_at": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"},
        "values": {"type": "object"},
        "sources": {"type": "object"},
        "versions": {"type": "object", "additionalProperties": {"type": "object"}},
        "environment": {"type": "object"},
        "bindings": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["key", "text", "claim"],
                "properties": {
                    "key": {"type": "string"},
                    "text": {"type": "string"},
                    "claim": {
                        "oneOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "required": ["expect", "holds"],
                                "properties": {"expect": {"type": "string"}, "holds": {"type": "boolean"}},
                            },
                        ]
                    },
                },
            },
        },
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "expect", "holds"],
                "properties": {"holds": {"type": "boolean"}},
            },
        },
        "audit": {"type": "object"},
        "digest": DIGEST_SCHEMA,
    },
}

RESTORE = (
    "Restore it as released: git checkout -- {path} (git diff -- {path} shows the edit). A release "
    "is never edited; to compare against another state, release that state under a new label "
    "(snakemake release --config release_label=NEW_LABEL)."
)


# Keys every snapshot `articlekit release` wrote has (any format): a JSON
# object with none of them is no snapshot.
SNAPSHOT_MARKS = ("snapshot_format", "digest", "released_at", "label")


class SnapshotError(ArticlekitError):
    """A snapshot that cannot be compared against; the message names file and entry."""


class NotASnapshot(SnapshotError):
    """A file in a release's place that is no snapshot (a stray)."""


# ---- reading -------------------------------------------------------------------------


def load_snapshot(path):
    """A snapshot whose digest matches and whose shape is valid;
    SnapshotError naming the file and the entry otherwise."""
    path = Path(path)
    snapshot = _read(path)
    _check_digest(snapshot, path)
    _check_schema(snapshot, path)
    return snapshot


def release_folders(releases_dir):
    """(snapshot paths, strays) of releases/: each releases/*/snapshot.json
    that is, or was, a snapshot, sorted; and a sentence for each folder that
    holds no snapshot or a snapshot.json that is no snapshot (what it is,
    that the diff ignores it, what to do)."""
    releases_dir = Path(releases_dir)
    if not releases_dir.is_dir():
        return [], []
    snapshots, strays = [], []
    for folder in sorted(p for p in releases_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        path = folder / "snapshot.json"
        if not path.exists():
            strays.append(
                f"{folder}/: holds no snapshot.json, so it is no release and the diff leaves it out; if it "
                f"was one, restore its snapshot (git checkout -- {path}), else move the folder out of "
                f"{releases_dir}/"
            )
            continue
        try:
            _read(path)
        except NotASnapshot as exc:
            strays.append(str(exc))
            continue
        except SnapshotError:
            pass  # a snapshot cut short: still a release, refused by the diff with the restore hint
        snapshots.append(path)
    return snapshots, strays


def strays(releases_dir):
    """The sentences of release_folders: each folder of releases/ that is no release."""
    return release_folders(releases_dir)[1]


def latest_snapshot(releases_dir):
    """Path of the newest releases/*/snapshot.json by its released_at, or None.

    By the snapshot's own timestamp, not the file's, so a fresh clone orders
    releases the same way. A snapshot that cannot be trusted (edited, cut
    short, unsealed) is returned in place of the newest, so that the diff,
    which refuses it, says why: its released_at may itself be the edit that
    would make another release the newest. Two snapshots sharing the newest
    released_at cannot be ordered, and picking one by name would diff
    against the wrong release: SnapshotError naming both. A stray folder
    (release_folders) is no release, and is left out."""
    snapshots = release_folders(releases_dir)[0]
    if not snapshots:
        return None
    stamps = {}
    for path in snapshots:
        try:
            stamps[path] = str(load_snapshot(path)["released_at"])
        except SnapshotError:
            return path
    newest = max(stamps.values())
    tied = [p for p, stamp in stamps.items() if stamp == newest]
    if len(tied) > 1:
        raise SnapshotError(
            f"{len(tied)} release snapshots share the newest released_at {newest!r}: "
            + ", ".join(map(str, tied))
            + "; the diff cannot tell which is the last release. "
            "Remove the one that is not (git rm -r releases/<label>), or release again under a new label."
        )
    return tied[0]


def _read(path):
    """The snapshot's JSON object; NotASnapshot for JSON that is no
    snapshot, SnapshotError with the restore hint for a file cut short."""
    try:
        snapshot = read_json(path)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read the snapshot ({exc.strerror})") from None
    except ValueError as exc:
        raise SnapshotError(
            f"{exc}: the snapshot is cut short or was overwritten. "
            + RESTORE.format(path=path)
            + f" If it was never a release, move it out of {Path(path).parent.parent}/."
        ) from None
    if not isinstance(snapshot, dict) or not any(mark in snapshot for mark in SNAPSHOT_MARKS):
        what = (
            f"a JSON {type(snapshot).__name__}"
            if not isinstance(snapshot, dict)
            else f"a JSON object with none of a snapshot's keys ({', '.join(SNAPSHOT_MARKS)})"
        )
        raise NotASnapshot(
            f"{path}: not a release snapshot: it holds {what}, so `snakemake release` did not write it. The "
            f"build's diff leaves it out and compares against the newest real release; move it out of "
            f"{Path(path).parent.parent}/ (each folder there holds one release, as snakemake release writes it)"
        )
    return snapshot


def _check_schema(snapshot, path):
    problems = schema_problems(snapshot, SNAPSHOT_SCHEMA, path)
    if problems:
        raise SnapshotError(
            "malformed snapshot (write it with `snakemake release`, or repair the entry):\n  " + "\n  ".join(problems)
        )


# ---- the digest ------------------------------------------------------------------------


def _check_digest(snapshot, path):
    if "digest" not in snapshot:
        if snapshot.get("snapshot_format") == UNSEALED_FORMAT:
            raise SnapshotError(
                f"{path}: has no digest: it was released before snapshots carried one (snapshot_format "
                f"{UNSEALED_FORMAT}), so nothing shows it is unchanged since. Check that it is as released "
                f"(git log -p -- {path} shows every change), then seal it: python -m articlekit release "
                f"--seal {path} (it checks the snapshot against itself and adds the digest, changing nothing "
                "else), and commit it."
            )
        raise SnapshotError(
            f"{path}: its digest was removed: snapshot_format {snapshot.get('snapshot_format')!r} is "
            "written with one, so the file was edited after `articlekit release` wrote it. " + RESTORE.format(path=path)
        )
    problems = schema_problems(snapshot["digest"], DIGEST_SCHEMA, path, prefix=["digest"])
    if problems:
        raise SnapshotError(
            f"{path}: its digest is not one `articlekit release` writes:\n  "
            + "\n  ".join(problems)
            + "\n"
            + RESTORE.format(path=path)
        )
    if not snapshot_digest.matches(snapshot):
        raise SnapshotError(_tampered(snapshot, path))


def _tampered(snapshot, path):
    changes = snapshot_digest.changed_entries(snapshot)
    lines = [
        f"{path}: does not match its digest: it was changed after `articlekit release` wrote it, so it "
        "no longer says what that release printed, and the diff will not compare against it."
    ]
    if changes:
        where, how = changes[0]
        lines.append(f"  first difference: {entry_name(where)} {how}{_now(snapshot, where, how)}")
        lines.append(f"  in all: {_tally(changes)}")
    else:
        lines.append("  every entry matches its recorded hash, so the digest itself (digest.sha256) was edited")
    found = contradictions(snapshot, touching={tuple(where[:2]) for where, _ in changes})
    if found:
        lines.append("  and there the snapshot contradicts itself:")
        lines += [f"    {c}" for c in found[:3]] + ([f"    ... ({len(found) - 3} more)"] if len(found) > 3 else [])
    lines.append(RESTORE.format(path=path))
    return "\n".join(lines)


def _now(snapshot, where, how):
    """' (now 0.93...)' for a changed or added plain value."""
    if how == "removed" or len(where) > 2:
        return ""
    value = snapshot[where[0]] if len(where) == 1 else snapshot[where[0]][where[1]]
    return f" (now {_show(value)})" if not isinstance(value, (dict, list)) else ""


def _tally(changes):
    """'values: 100 removed (values['a'], values['b'], values['c'], ...); sources: 1 changed'."""
    groups = {}
    for where, how in changes:
        groups.setdefault((where[0], how), []).append(where)
    parts = []
    for (field, how), places in groups.items():
        named = ", ".join(entry_name(w) for w in places[:3]) + (", ..." if len(places) > 3 else "")
        parts.append(f"{field}: {len(places)} {how} ({named})")
    return "; ".join(parts)


def _show(value):
    return repr(value) if isinstance(value, str) else shorten(format_value(value), 80, mark="...")


# ---- agreeing with itself --------------------------------------------------------------


def contradictions(snapshot, touching=None):
    """Where a snapshot disagrees with itself, as sentences naming both
    entries: a printed text or a claim's value that its value no longer
    gives, a value without its source or a source without its value, an
    environment record that is not the environment.* values. A release
    writes none; a hand edit of a value that nothing else repeats shows
    here only through the digest. touching: only those involving one of
    these entries ({(field, key)}, a key's base name for values)."""
    return [sentence for involved, sentence in _contradictions(snapshot) if touching is None or involved & touching]


def _contradictions(snapshot):
    """-> [(the entries involved, a sentence)]."""
    values, sources = snapshot.get("values", {}), snapshot.get("sources", {})
    bindings, claims = snapshot.get("bindings", {}), snapshot.get("claims", [])
    if not (
        all(isinstance(x, dict) for x in (values, sources, bindings))
        and isinstance(claims, list)
        and all(isinstance(x, dict) for x in [*bindings.values(), *claims])
    ):
        return []  # not a snapshot's shape: the schema says what is wrong with it
    found = []
    found += _unmatched(values, sources, "values", "sources", "has no source")
    found += _unmatched(sources, values, "sources", "values", "has no value")
    for binding_id, binding in bindings.items():
        key, place = binding.get("key"), entry_name(["bindings", binding_id])
        involved = {("bindings", binding_id), ("values", str(key).split("[")[0])}
        try:
            printed = format_value(_value_of(values, key), binding.get("fmt") or "")
        except ValueError as exc:  # no such value, a bad index, a fmt that does not apply
            found.append((involved, f"{place}: {exc}"))
            continue
        if printed != binding.get("text"):
            found.append(
                (
                    involved,
                    f"{place}.text: the release printed {binding.get('text')!r} for {key}, "
                    f"which the snapshot's value prints as {printed!r}",
                )
            )
    for n, claim in enumerate(claims):
        key = claim.get("key")
        involved = {("claims", n), ("values", str(key).split("[")[0])}
        try:
            value = _value_of(values, key)
        except ValueError as exc:
            found.append((involved, f"claims[{n}]: {exc}"))
            continue
        if "value" in claim and not same_value(value, claim["value"]):
            found.append(
                (
                    involved,
                    f"claims[{n}].value: the claim on {key} recorded {_show(claim['value'])}, "
                    f"values[{key!r}] holds {_show(value)}",
                )
            )
    if isinstance(snapshot.get("environment"), dict):
        expected = environment_record(values)
        for name in sorted(set(expected) | set(snapshot["environment"])):
            if not same_value(expected.get(name), snapshot["environment"].get(name)):
                found.append(
                    (
                        {("environment", name), ("values", f"environment.{name}")},
                        f"environment.{name} is {_show(snapshot['environment'].get(name))}, "
                        f"values['environment.{name}'] {_show(expected.get(name))}",
                    )
                )
    return found


def _value_of(values, key):
    try:
        return lookup(values, key)
    except KeyError:  # UnknownKey: its message guesses at a typo, which a missing entry is not
        raise ArticlekitError(f"its key {key!r} is not in values") from None


def _unmatched(these, those, name, other, what):
    missing = [key for key in these if key not in those]
    if not missing:
        return []
    named = ", ".join(f"{name}[{key!r}]" for key in missing[:3]) + (", ..." if len(missing) > 3 else "")
    involved = {(field, key) for key in missing for field in (name, other)}
    return [(involved, f"{len(missing)} of {name} {what} in {other}: {named}")]


# ---- sealing an older snapshot --------------------------------------------------------


def seal_file(path):
    """Append the digest to a snapshot_format 1 snapshot that agrees with
    itself; -> a sentence saying what was checked. SnapshotError, with the
    file untouched, for anything else: a sealed snapshot is never sealed
    again (that would bless an edit), an inconsistent one is not sealed."""
    path = Path(path)
    snapshot = _read(path)
    if "digest" in snapshot:
        _check_digest(snapshot, path)
        return f"{path} is sealed already, and its digest matches its contents: nothing to do"
    if snapshot.get("snapshot_format") != UNSEALED_FORMAT:
        _check_digest(snapshot, path)  # raises: a digest was removed
    _check_schema(snapshot, path)
    found = contradictions(snapshot)
    if found:
        raise SnapshotError(
            f"{path}: not sealed: the snapshot contradicts itself, as a hand edit would leave it:\n  "
            + "\n  ".join(found)
            + "\n"
            + RESTORE.format(path=path)
        )
    write_json(path, snapshot_digest.sealed(snapshot))
    bound = {binding.get("key", "").split("[")[0] for binding in snapshot["bindings"].values()}
    bound |= {claim.get("key", "").split("[")[0] for claim in snapshot["claims"]}
    unchecked = sum(1 for key in snapshot["values"] if key not in bound and not key.startswith("environment."))
    return (
        f"sealed {path}: its {len(snapshot['bindings'])} printed texts and {len(snapshot['claims'])} claims "
        f"agree with their values, each of its {len(snapshot['values'])} values has its source; "
        f"{unchecked} values nothing else repeats could not be checked against anything: "
        f"if in doubt, git log -p -- {path}"
    )
