"""A release snapshot carries a digest of its contents, and the diff trusts
nothing else: a snapshot edited by hand, cut short or stripped of its digest
is refused with exit 1, naming the file and the first entry that differs,
and nothing is reported as what that release printed.

Everything runs through the commands the build runs (`python -m articlekit
release`, `python -m articlekit diff`); tests/test_faults.py runs the same
faults through Snakemake.
"""

import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from articlekit.core.jsonio import read_json, write_json

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "audit"
COMMITTED = ROOT / "releases/numpy-2.4.6_torch-2.13.0+cpu/snapshot.json"
EDITED_VALUE = "scaling.dk64.unscaled.max_weight"  # 0.9219455027665324, printed with .6f in the fixture


def articlekit(*args):
    return subprocess.run([sys.executable, "-m", "articlekit", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def snapshot(tmp_path):
    """A release of the audit fixture's build, made by the command."""
    write_json(tmp_path / "audit.json", {"summary": {"reproduced": 1}, "entries": []})
    made = articlekit(
        "release",
        "--label",
        "v1",
        "--values",
        FIXTURES / "values.json",
        "--bindings",
        FIXTURES / "bindings.json",
        "--audit",
        tmp_path / "audit.json",
        "--releases",
        tmp_path / "releases",
    )
    assert made.returncode == 0, made.stderr
    return tmp_path / "releases/v1/snapshot.json"


def diff(snapshot_path, values=FIXTURES / "values.json", bindings=FIXTURES / "bindings.json"):
    out = Path(snapshot_path).parent
    proc = articlekit(
        "diff",
        "--values",
        values,
        "--bindings",
        bindings,
        "--baseline",
        FIXTURES / "baseline.yaml",
        "--json",
        out / "diff.json",
        "--md",
        out / "diff.md",
        snapshot_path,
    )
    proc.md = out / "diff.md"
    return proc


def sed(path, old, new):
    """What `sed -i s/OLD/NEW/` does to a file: every line's first OLD."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text("\n".join(line.replace(old, new, 1) for line in text.split("\n")), encoding="utf-8")


def refused(proc, path, *needles):
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"diff: {path}: "), proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


# ---- what the digest covers ---------------------------------------------------------


def test_a_release_is_sealed_with_the_sha256_of_everything_but_its_digest_and_diffs_cleanly(snapshot):
    document = json.loads(snapshot.read_text(encoding="utf-8"))
    digest = document.pop("digest")
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert digest["algorithm"] == "sha256"
    assert digest["sha256"] == hashlib.sha256(canonical).hexdigest()
    assert document["snapshot_format"] == 2
    assert list(json.loads(snapshot.read_text()))[-1] == "digest"  # last: sealing only appends

    proc = diff(snapshot)
    assert proc.returncode == 0, proc.stderr
    assert "Nothing changed beyond its agreement rule." in proc.md.read_text()


def test_reindenting_a_snapshot_is_not_an_edit(snapshot):
    document = json.loads(snapshot.read_text(encoding="utf-8"))
    snapshot.write_text(json.dumps(document, indent=4, sort_keys=True), encoding="utf-8")
    assert diff(snapshot).returncode == 0


# ---- what it refuses -----------------------------------------------------------------


def test_a_value_edited_by_hand_is_refused_naming_the_file_the_key_and_what_the_release_printed(snapshot):
    """The issue's edit, done as sed does it (the value, its claim and the
    claim's message all change; the printed text 0.921946 does not)."""
    sed(snapshot, "0.9219455027665324", "0.9319455027665324")
    proc = diff(snapshot)
    refused(
        proc,
        snapshot,
        "does not match its digest",
        f"first difference: values['{EDITED_VALUE}'] changed (now 0.9319455027665324)",
        f"the release printed '0.921946' for {EDITED_VALUE}, which the snapshot's value prints as '0.931946'",
        f"git checkout -- {snapshot}",
    )
    assert not proc.md.exists()  # nothing reported as what the release printed


def test_a_snapshot_with_half_its_entries_removed_is_refused_not_read_as_keys_added(snapshot):
    document = read_json(snapshot)
    keys = list(document["values"])
    for key in keys[::2]:
        del document["values"][key]
        del document["sources"][key]
    write_json(snapshot, document)  # still valid JSON, and every value still has its source
    proc = diff(snapshot)
    removed = len(keys[::2])
    refused(
        proc,
        snapshot,
        f"first difference: values['{keys[0]}'] removed",
        f"values: {removed} removed",
        f"sources: {removed} removed",
    )
    assert not proc.md.exists()


def test_a_removed_claim_is_named_by_its_place(snapshot):
    document = read_json(snapshot)
    del document["claims"][1]
    write_json(snapshot, document)
    refused(diff(snapshot), snapshot, "first difference: claims[1] removed", "in all: claims: 1 removed")


def test_an_edit_that_breaks_the_snapshot_s_shape_is_still_a_sentence(snapshot):
    document = read_json(snapshot)
    document["bindings"] = list(document["bindings"])
    write_json(snapshot, document)
    refused(diff(snapshot), snapshot, "first difference: bindings changed")


def test_a_snapshot_stripped_of_its_digest_is_refused_and_cannot_be_sealed_again(snapshot):
    document = read_json(snapshot)
    del document["digest"]
    write_json(snapshot, document)
    before = snapshot.read_bytes()
    refused(diff(snapshot), snapshot, "its digest was removed", "snapshot_format 2 is written with one")
    resealed = articlekit("release", "--seal", snapshot)
    assert resealed.returncode == 1 and "its digest was removed" in resealed.stderr, resealed.stderr
    assert snapshot.read_bytes() == before


def test_an_edited_digest_is_refused(snapshot):
    document = read_json(snapshot)
    document["digest"]["sha256"] = "0" * 64
    write_json(snapshot, document)
    refused(diff(snapshot), snapshot, "every entry matches its recorded hash, so the digest itself")


def test_an_edited_released_at_cannot_hide_a_snapshot_from_the_diff(tmp_path):
    """Backdating the newest release would make the diff compare against an
    older one: the lookup the workflow uses hands the edited snapshot to the
    diff instead, which refuses it."""
    from articlekit.review.release import release
    from articlekit.review.snapshot import latest_snapshot

    values, bindings = read_json(FIXTURES / "values.json"), read_json(FIXTURES / "bindings.json")
    for label, month in (("older", 1), ("newer", 6)):
        release(
            label,
            values,
            bindings,
            {"summary": {}, "entries": []},
            tmp_path,
            now=datetime(2026, month, 1, tzinfo=timezone.utc),
        )
    newer = tmp_path / "newer/snapshot.json"
    assert latest_snapshot(tmp_path) == newer
    sed(newer, "2026-06-01T00:00:00+00:00", "2025-06-01T00:00:00+00:00")
    assert latest_snapshot(tmp_path) == newer
    refused(diff(newer), newer, "first difference: released_at changed (now '2025-06-01T00:00:00+00:00')")


def test_a_snapshot_cut_short_is_refused_with_the_command_that_restores_it(snapshot):
    text = snapshot.read_text(encoding="utf-8")
    snapshot.write_text(text[: len(text) // 2], encoding="utf-8")  # a copy or a checkout stopped half way
    proc = diff(snapshot)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert re.match(
        rf"diff: {re.escape(str(snapshot))}:\d+:\d+: not valid JSON \(.*\): the snapshot is cut short or "
        rf"was overwritten\. Restore it as released: git checkout -- {re.escape(str(snapshot))} ",
        proc.stderr,
    ), proc.stderr
    assert not proc.md.exists()


# ---- strays: what in releases/ is no release ----------------------------------------------


def test_what_is_no_release_is_named_a_stray_and_does_not_block_the_diff_against_the_release(snapshot):
    """A contributor's copy of build/values.json left under releases/ (JSON,
    no snapshot's key) was taken for the newest release and refused as
    "its digest was removed", blocking the diff against the real one."""
    from articlekit.review.snapshot import latest_snapshot, release_folders

    releases = snapshot.parent.parent
    (releases / "scratch").mkdir()
    stray = releases / "scratch/snapshot.json"
    write_json(stray, read_json(FIXTURES / "values.json"))
    (releases / "drafts").mkdir()
    (releases / "drafts/notes.md").write_text("to do\n")

    snapshots, strays = release_folders(releases)
    assert snapshots == [snapshot] and latest_snapshot(releases) == snapshot
    assert strays == [
        f"{releases}/drafts/: holds no snapshot.json, so it is no release and the diff leaves it out; if it was one, "
        f"restore its snapshot (git checkout -- {releases}/drafts/snapshot.json), else move the folder out of "
        f"{releases}/",
        f"{stray}: not a release snapshot: it holds a JSON object with none of a snapshot's keys (snapshot_format, "
        "digest, released_at, label), so `snakemake release` did not write it. The build's diff leaves it out and "
        f"compares against the newest real release; move it out of {releases}/ (each folder there holds one release, as "
        "snakemake release writes it)",
    ]
    assert diff(snapshot).returncode == 0
    proc = diff(stray)  # handed to the diff by hand, it is named for what it is
    refused(proc, stray, "not a release snapshot")
    assert "digest was removed" not in proc.stderr


def test_a_snapshot_whose_marks_were_edited_away_is_still_a_release(snapshot):
    """Only JSON with none of a snapshot's keys is a stray: an edited release
    cannot leave the diff by losing one of them."""
    from articlekit.review.snapshot import latest_snapshot

    document = read_json(snapshot)
    del document["snapshot_format"], document["digest"]
    write_json(snapshot, document)
    assert latest_snapshot(snapshot.parent.parent) == snapshot
    assert diff(snapshot).returncode == 1


# ---- snapshots released before digests -------------------------------------------------


def unsealed_copy(tmp_path):
    """The committed release as it was before it was sealed: its digest was
    appended by `release --seal`, so without it the rest is the original."""
    document = read_json(COMMITTED)
    del document["digest"]
    path = tmp_path / "releases" / COMMITTED.parent.name / "snapshot.json"
    write_json(path, document)
    return path


def test_the_committed_release_was_sealed_by_appending_only(tmp_path):
    original = unsealed_copy(tmp_path).read_text(encoding="utf-8")
    committed = COMMITTED.read_text(encoding="utf-8")
    assert original.endswith("\n}\n") and committed.startswith(original[: -len("\n}\n")] + ",\n  \"digest\": {")
    assert json.loads(original)["snapshot_format"] == 1


def bindings_document_printing(snapshot):
    """The bindings document of a build that printed what the snapshot
    printed: its bindings, with the fields a snapshot leaves out as bind
    writes them (a snapshot_format 1 claim has no status: its holds says it)."""
    from articlekit.article.bind import anchor
    from articlekit.core.keys import lookup

    def claim(c):
        return c and {**c, "status": c.get("status") or ("holds" if c["holds"] else "fails")}

    bindings = {
        ident: {
            **b,
            "raw": lookup(snapshot["values"], b["key"]),
            "title": b["key"],
            "claim": claim(b["claim"]),
            "source": snapshot["sources"][b["key"].split("[")[0]],
            "anchor": anchor(b["key"]),
            "printed": True,
            "in_prose": True,
            "in_text": True,
        }
        for ident, b in snapshot["bindings"].items()
    }
    return {
        "article": snapshot["article"],
        "strict": True,
        "bindings": bindings,
        "claims": [claim(c) for c in snapshot["claims"]],
        "provenance_md": "",
        "departures_md": "",
        "departures": [],
        "departure_warnings": [],
    }


def test_an_older_snapshot_is_refused_until_sealed_then_diffs_exactly_as_before(tmp_path):
    """A diff against a build that moved one number: the sealed snapshot's
    diff is the one the unsealed snapshot gave before digests (what
    articlekit.review.diff.compare makes of it, unread digest and all)."""
    from articlekit.review import diff as diff_module
    from articlekit.data.baseline import load_baseline
    from articlekit.data.publishing import parse as parse_publishing

    old = unsealed_copy(tmp_path)
    document = read_json(old)
    build = {
        "values": dict(document["values"], **{EDITED_VALUE: 0.8}),
        "sources": document["sources"],
        "versions": document["versions"],
    }
    write_json(tmp_path / "values.json", build)
    printed = bindings_document_printing(document)
    write_json(tmp_path / "bindings.json", printed)
    publishing = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["publishing"]

    def run_diff():
        return articlekit(
            "diff",
            "--values",
            tmp_path / "values.json",
            "--bindings",
            tmp_path / "bindings.json",
            "--baseline",
            ROOT / "baseline/published.yaml",
            "--publishing",
            json.dumps(publishing),
            "--json",
            tmp_path / "diff.json",
            "--md",
            tmp_path / "diff.md",
            old,
        )

    proc = run_diff()
    assert proc.returncode == 1 and "has no digest" in proc.stderr, proc.stderr
    assert f"python -m articlekit release --seal {old}" in proc.stderr

    sealing = articlekit("release", "--seal", old)
    assert sealing.returncode == 0, sealing.stderr
    assert "114 printed texts and 35 claims agree with their values" in sealing.stderr
    assert read_json(old) == read_json(COMMITTED)

    proc = run_diff()
    assert proc.returncode == 0, proc.stderr
    before = diff_module.compare(
        document, build, printed, load_baseline(ROOT / "baseline/published.yaml"), parse_publishing(publishing)
    )
    before["against"]["snapshot"] = str(old)
    assert read_json(tmp_path / "diff.json") == json.loads(json.dumps(before))
    assert (tmp_path / "diff.md").read_text() == diff_module.to_markdown(before, parse_publishing(publishing))
    assert [r["key"] for r in before["numbers"]] == [EDITED_VALUE]

    again = articlekit("release", "--seal", old)
    assert again.returncode == 0 and "sealed already" in again.stderr


def test_an_older_snapshot_edited_by_hand_is_not_sealed(tmp_path):
    old = unsealed_copy(tmp_path)
    sed(old, "0.9219455027665324", "0.9319455027665324")
    before = old.read_bytes()
    sealing = articlekit("release", "--seal", old)
    assert sealing.returncode == 1, sealing.stderr
    assert f"{old}: not sealed: the snapshot contradicts itself" in sealing.stderr
    assert (
        f"bindings['{EDITED_VALUE}|.6f|'].text: the release printed '0.921946' for {EDITED_VALUE}, "
        "which the snapshot's value prints as '0.931946'"
    ) in sealing.stderr
    assert old.read_bytes() == before


def test_a_sealed_snapshot_edited_by_hand_is_not_sealed_again(snapshot):
    sed(snapshot, "0.9219455027665324", "0.9319455027665324")
    before = snapshot.read_bytes()
    sealing = articlekit("release", "--seal", snapshot)
    assert sealing.returncode == 1 and "does not match its digest" in sealing.stderr, sealing.stderr
    assert snapshot.read_bytes() == before
