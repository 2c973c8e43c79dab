"""Release snapshots: freeze a build under releases/<label>/ so the next
build can say what changed since (articlekit.review.diff).

    python -m articlekit release --label L --values build/values.json \\
        --bindings build/bindings.json --audit build/audit.json --releases releases [--force]
    python -m articlekit release --seal releases/<label>/snapshot.json

releases/<label>/snapshot.json holds every value with its source, the text
each shortcode printed, every claim and its result, the library versions,
the audit's statuses, the label and released_at (UTC), and last a digest of
all that (articlekit/review/snapshot_digest.py says what it covers): the diff
refuses a snapshot that no longer matches it. A README.md beside it says
the same for a person. A label is never overwritten without --force: a
published snapshot is what readers compare against.

--seal adds the digest to a snapshot released before snapshots carried one,
after checking that it agrees with itself (articlekit/review/snapshot.py); nothing
else in the file changes."""

import argparse
import re
from datetime import datetime, timezone
from pathlib import Path

from articlekit.core.log import log
from articlekit.data.classes import AUDIT_STATUS, ERRATUM, EXPECTED, NOT_REPRODUCIBLE, REPRODUCED, UNEXPECTED
from articlekit.data.environment import field_name
from articlekit.data.environment import record as environment_record
from articlekit.article.bindings import load_bindings
from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import dumps, loads, read_json, write_json, write_text_atomic
from articlekit.core.status import FAILS, INCONCLUSIVE, STATUS, status_of
from articlekit.data.publishing import Publishing
from articlekit.data.publishing import add_argument as add_publishing_argument
from articlekit.review.snapshot import LABEL_PATTERN, SNAPSHOT_FORMAT, SnapshotError, seal_file
from articlekit.review.snapshot_digest import sealed

LABEL = re.compile(LABEL_PATTERN)


def snapshot_of(label, values_doc, bindings_doc, audit_doc, released_at):
    bindings = {
        binding_id: {
            "key": b.get("key"),
            "fmt": b.get("fmt"),
            "expect": b.get("expect"),
            "text": b.get("text"),
            "claim": b.get("claim"),
            "locations": b.get("locations", []),
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
            "entries": {
                r["id"]: {"status": r["status"], "regenerated": r.get("regenerated")}
                for r in audit_doc.get("entries", [])
            },
        },
    }


def machine_line(values, publishing):
    """The README's line on the machine: the keys publishing.machine names,
    each with its value ('?' where the build did not record it); none
    without such keys."""
    if not publishing.machine:
        return []
    return ["- Machine: " + "; ".join(f"{field_name(key)} {values.get(key, '?')}" for key in publishing.machine)]


def readme_of(snapshot, publishing=Publishing()):
    env = snapshot["environment"]
    s = snapshot["audit"]["summary"]
    claims = snapshot["claims"]
    failed, undecided = (sum(1 for c in claims if status_of(c) == status) for status in (FAILS, INCONCLUSIVE))
    lines = [
        f"# Release {snapshot['label']}",
        "",
        f"Frozen {snapshot['released_at']} by `snakemake release` (`python -m articlekit release`).",
        "",
        "- " + ", ".join(f"{publishing.display(lib)} {env.get(lib, '?')}" for lib in publishing.libraries),
        *machine_line(snapshot["values"], publishing),
        f"- {len(snapshot['values'])} values, {len(snapshot['bindings'])} bound in the article, "
        f"{len(claims)} claims ({failed} {STATUS[FAILS].counted}"
        + (f", {undecided} {STATUS[INCONCLUSIVE].counted}" if undecided else "")
        + ")",
    ]
    if s:
        # an older audit's summary may lack a status: said only where counted
        said = [
            AUDIT_STATUS[status].after(s[AUDIT_STATUS[status].counted])
            for status in (REPRODUCED, EXPECTED, ERRATUM, NOT_REPRODUCIBLE, UNEXPECTED)
            if AUDIT_STATUS[status].counted in s
        ]
        lines.append(f"- Audit against the published edition: {', '.join(said)}")
    lines += [
        "",
        "`snapshot.json` is what the next build's `build/diff.md` compares against: values, the text each",
        "shortcode printed, claim results and library versions. Do not edit it by hand: its digest no",
        "longer matches and the diff refuses it. Release again under a new label instead.",
    ]
    return "\n".join(lines) + "\n"


def release(label, values_doc, bindings_doc, audit_doc, releases_dir, force=False, now=None, publishing=Publishing()):
    """Write releases/<label>/{snapshot.json,README.md}; returns the snapshot path."""
    if not LABEL.match(label):
        raise ArticlekitError(f"label {label!r}: use letters, digits and . _ + - (starting with a letter or digit)")
    folder = Path(releases_dir) / label
    target = folder / "snapshot.json"
    if target.exists() and not force:
        previous = read_json(target).get("released_at", "?")
        raise FileExistsError(
            f"{target} already exists (released {previous}); a published snapshot is never overwritten. "
            f"To release under another label: snakemake release --config release_label=NEW_LABEL "
            f"(by hand: python -m articlekit release --label NEW_LABEL ...). To replace it: "
            f"git rm -r {folder} (or rm -r {folder}), then snakemake release again "
            f"(by hand: python -m articlekit release --force ...)."
        )
    now = now or datetime.now(timezone.utc)
    snapshot = snapshot_of(label, values_doc, bindings_doc, audit_doc, now.isoformat(timespec="seconds"))
    snapshot = sealed(loads(dumps(snapshot)))  # the digest of what the file will hold, read back
    write_json(target, snapshot)
    write_text_atomic(folder / "README.md", readme_of(snapshot, publishing))
    return target


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit release", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--label",
        help="folder name under --releases, e.g. mylib-1.2.0 (release_label: auto names it "
        "after the versions of publishing.release_label)",
    )
    parser.add_argument("--values", help="build/values.json")
    parser.add_argument("--bindings", help="build/bindings.json")
    parser.add_argument("--audit", help="build/audit.json")
    parser.add_argument("--releases", help="folder holding one sub-folder per release")
    parser.add_argument("--force", action="store_true", help="replace an existing release of this label")
    parser.add_argument(
        "--seal",
        nargs="+",
        metavar="SNAPSHOT",
        help="add the digest to snapshots released before snapshots carried one (instead of releasing)",
    )
    add_publishing_argument(parser)
    args = parser.parse_args(argv)
    making = ("label", "values", "bindings", "audit", "releases")
    if args.seal:
        given = [f"--{name}" for name in (*making, "force") if getattr(args, name)]
        if given:
            parser.error(f"--seal seals existing snapshots; it takes no {', '.join(given)}")
        return _seal(args.seal)
    missing = [f"--{name}" for name in making if getattr(args, name) is None]
    if missing:
        parser.error(f"a release needs {', '.join(missing)} (or --seal SNAPSHOT to seal an older one)")
    target = release(
        args.label,
        read_json(args.values),
        load_bindings(args.bindings),
        read_json(args.audit),
        args.releases,
        force=args.force,
        publishing=args.publishing,
    )
    log.info(f"release: froze this build as {target}")
    return 0


def _seal(paths):
    failed = 0
    for path in paths:
        try:
            log.info(f"release: {seal_file(path)}")
        except SnapshotError as exc:
            log.error(f"release: {exc}")
            failed += 1
    return 1 if failed else 0
