"""Release snapshots: freeze a build under releases/<label>/ so the next
build can say what changed since (articlekit.diff).

    python -m articlekit release --label L --values build/values.json \\
        --bindings build/bindings.json --audit build/audit.json --releases releases [--force]

releases/<label>/snapshot.json holds every value with its source, the text
each shortcode printed, every claim and its result, the library versions,
the audit's statuses, the label and released_at (UTC). A README.md beside it
says the same for a person. A label is never overwritten without --force:
a published snapshot is what readers compare against.
"""

import argparse
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import jsonschema

from articlekit.environment import record as environment_record
from articlekit.jsonio import read_json, write_json, write_text_atomic
from articlekit.publishing import Publishing
from articlekit.publishing import add_argument as add_publishing_argument

SNAPSHOT_FORMAT = 1
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")

# What articlekit.diff relies on; anything else in a snapshot is kept but unread.
SNAPSHOT_SCHEMA = {
    "type": "object",
    "required": ["snapshot_format", "label", "released_at", "values", "sources", "versions", "bindings", "claims"],
    "properties": {
        "snapshot_format": {"const": SNAPSHOT_FORMAT},
        "label": {"type": "string", "pattern": LABEL.pattern},
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
                            {"type": "object", "required": ["expect", "holds"],
                             "properties": {"expect": {"type": "string"}, "holds": {"type": "boolean"}}},
                        ]
                    },
                },
            },
        },
        "claims": {
            "type": "array",
            "items": {"type": "object", "required": ["key", "expect", "holds"],
                      "properties": {"holds": {"type": "boolean"}}},
        },
        "audit": {"type": "object"},
    },
}


class SnapshotError(ValueError):
    """A snapshot that cannot be compared against; the message names file and entry."""


def load_snapshot(path):
    """A validated snapshot; SnapshotError naming the file and entry otherwise."""
    path = Path(path)
    try:
        snapshot = read_json(path)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read the snapshot ({exc.strerror})") from None
    except ValueError as exc:
        raise SnapshotError(str(exc)) from None
    validator = jsonschema.Draft202012Validator(SNAPSHOT_SCHEMA)
    problems = []
    for error in sorted(validator.iter_errors(snapshot), key=lambda e: [str(p) for p in e.absolute_path]):
        entry = _entry_name(list(error.absolute_path))
        problems.append(f"{path}: {entry}: {error.message}")
    if problems:
        raise SnapshotError("malformed snapshot (write it with `snakemake release`, or repair the entry):\n  "
                            + "\n  ".join(problems))
    return snapshot


def _entry_name(where):
    """["bindings", "k|.2e|", "text"] -> "bindings['k|.2e|'].text": the
    entry's own key quoted, since value keys hold dots themselves."""
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


def latest_snapshot(releases_dir):
    """Path of the newest releases/*/snapshot.json by its released_at, or None.

    By the snapshot's own timestamp, not the file's, so a fresh clone orders
    releases the same way. Two snapshots sharing the newest released_at
    cannot be ordered, and picking one by name would diff against the wrong
    release: SnapshotError naming both."""
    snapshots = sorted(Path(releases_dir).glob("*/snapshot.json"))
    if not snapshots:
        return None
    stamps = {p: str(read_json(p).get("released_at", "")) for p in snapshots}
    newest = max(stamps.values())
    tied = [p for p, stamp in stamps.items() if stamp == newest]
    if len(tied) > 1:
        raise SnapshotError(
            f"{len(tied)} release snapshots share the newest released_at {newest!r}: "
            + ", ".join(map(str, tied)) + "; the diff cannot tell which is the last release. "
            "Remove the one that is not (git rm -r releases/<label>), or release again under a new label.")
    return tied[0]


def snapshot_of(label, values_doc, bindings_doc, audit_doc, released_at):
    bindings = {
        binding_id: {
            "key": b.get("key"), "fmt": b.get("fmt"), "expect": b.get("expect"), "text": b.get("text"),
            "claim": b.get("claim"), "locations": b.get("locations", []),
        }
        for binding_id, b in bindings_doc.get("bindings", {}).items()
    }
    return {
        "snapshot_format": SNAPSHOT_FORMAT,
        "label": label,
        "released_at": released_at,
        "environment": environment_record(values_doc.get("values", {})),
        "versions": values_doc.get("versions", {}),
        "values": values_doc.get("values", {}),
        "sources": values_doc.get("sources", {}),
        "article": bindings_doc.get("article"),
        "bindings": bindings,
        "claims": bindings_doc.get("claims", []),
        "audit": {
            "summary": audit_doc.get("summary", {}),
            "entries": {r["id"]: {"status": r["status"], "regenerated": r.get("regenerated")}
                        for r in audit_doc.get("entries", [])},
        },
    }


def readme_of(snapshot, publishing=Publishing()):
    env = snapshot["environment"]
    s = snapshot["audit"]["summary"]
    claims = snapshot["claims"]
    failed = sum(1 for c in claims if not c.get("holds"))
    lines = [
        f"# Release {snapshot['label']}",
        "",
        f"Frozen {snapshot['released_at']} by `snakemake release` (`python -m articlekit release`).",
        "",
        "- " + ", ".join(f"{publishing.display(lib)} {env.get(lib, '?')}" for lib in publishing.libraries),
        f"- Machine: {env.get('cpu_model', '?')}, {env.get('cores', '?')} cores, {env.get('os', '?')}",
        f"- {len(snapshot['values'])} values, {len(snapshot['bindings'])} bound in the article, "
        f"{len(claims)} claims ({failed} failing)",
    ]
    if s:
        errata = f", {s['erratum']} errata, {s['not_reproducible']} not reproducible" if "erratum" in s else ""
        lines.append(f"- Audit against the published edition: {s.get('reproduced')} reproduced, "
                     f"{s.get('moved_as_expected')} moved as expected{errata}, "
                     f"{s.get('moved_unexpectedly')} moved unexpectedly")
    lines += [
        "",
        "`snapshot.json` is what the next build's `build/diff.md` compares against: values, the text each",
        "shortcode printed, claim results and library versions. Do not edit it by hand; release again",
        "under a new label instead.",
    ]
    return "\n".join(lines) + "\n"


def release(label, values_doc, bindings_doc, audit_doc, releases_dir, force=False, now=None,
            publishing=Publishing()):
    """Write releases/<label>/{snapshot.json,README.md}; returns the snapshot path."""
    if not LABEL.match(label):
        raise ValueError(f"label {label!r}: use letters, digits and . _ + - (starting with a letter or digit)")
    folder = Path(releases_dir) / label
    target = folder / "snapshot.json"
    if target.exists() and not force:
        previous = read_json(target).get("released_at", "?")
        raise FileExistsError(
            f"{target} already exists (released {previous}); a published snapshot is never overwritten. "
            f"To release under another label: snakemake release --config release_label=NEW_LABEL "
            f"(by hand: python -m articlekit release --label NEW_LABEL ...). To replace it: "
            f"git rm -r {folder} (or rm -r {folder}), then snakemake release again "
            f"(by hand: python -m articlekit release --force ...).")
    now = now or datetime.now(timezone.utc)
    snapshot = snapshot_of(label, values_doc, bindings_doc, audit_doc, now.isoformat(timespec="seconds"))
    write_json(target, snapshot)
    write_text_atomic(folder / "README.md", readme_of(snapshot, publishing))
    return target


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit release", description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="folder name under --releases, e.g. mylib-1.2.0 (release_label: auto names it "
                        "after the versions of publishing.release_label)")
    parser.add_argument("--values", required=True, help="build/values.json")
    parser.add_argument("--bindings", required=True, help="build/bindings.json")
    parser.add_argument("--audit", required=True, help="build/audit.json")
    parser.add_argument("--releases", required=True, help="folder holding one sub-folder per release")
    parser.add_argument("--force", action="store_true", help="replace an existing release of this label")
    add_publishing_argument(parser)
    args = parser.parse_args(argv)
    try:
        target = release(args.label, read_json(args.values), read_json(args.bindings), read_json(args.audit),
                         args.releases, force=args.force, publishing=args.publishing)
    except (OSError, ValueError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    print(f"release: froze this build as {target}", file=sys.stderr)
    return 0
