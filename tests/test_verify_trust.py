"""What `python -m articlekit verify` proves, and says it proves (issue 38, item 9).

A digest list kept beside what it lists is integrity against accidents, not
against a forger: a page edited after the build, with its digest recomputed
in build/ro-crate-metadata.json and in .snakemake/articlekit/ledger.json, agrees with
both. What such a forger cannot rewrite unseen is what git holds: a
release's digests (releases/LABEL/digests.json, written by
`verify --pin LABEL` and committed). So:

- the forged page fails verify against the committed digests, naming the
  file and the anchor, even though the manifest and the ledger agree with it;
- the digests on disk are not believed over git's: an edit or a removal is
  named, and the committed version still holds the build;
- without a committed anchor, verify says it proved integrity only;
- each anchor verify held the build to is named in its output, with what
  it cannot prove.

Each case is a tiny build made here (two outputs, one source, a ledger, a
manifest, a release) in a git repository of its own; no Snakemake runs.
"""

import json
import subprocess
from pathlib import Path

import pytest

from articlekit.core.ledger import LEDGER, Ledger, file_digest
from articlekit.review import verify
from articlekit.review.manifest import MANIFEST, write_manifest
from articlekit.review.release import release

PAGE, VALUES, SOURCE = "build/article.html", "build/values.json", "article/index.qmd"
LABEL = "r1"
PIN = f"releases/{LABEL}/digests.json"


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout.strip()


def make_build(page="<p>0.93</p>", value=0.93):
    """The build's outputs, recorded in the ledger as their rules' jobs wrote
    them, and the manifest, written and recorded as rule manifest does."""
    Path(SOURCE).parent.mkdir(parents=True, exist_ok=True)
    Path(SOURCE).write_text("The weight is {{< value w >}}.\n")
    ledger = Ledger(LEDGER)
    for path, rule, text in (
        (VALUES, "values", json.dumps({"values": {"w": value}, "sources": {"w": "x"}, "versions": {}})),
        (PAGE, "html", page),
    ):
        ledger.running(rule, [path], [SOURCE])
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
        ledger.finished([path])
    ledger.running("manifest", [MANIFEST], [PAGE, VALUES])
    write_manifest(MANIFEST, ledger, [PAGE, VALUES])
    ledger.finished([MANIFEST])
    ledger.save()


def make_release():
    values = json.loads(Path(VALUES).read_text())
    release(LABEL, values, {"bindings": {}, "claims": []}, {}, "releases")


def commit(*paths):
    git("add", *paths)
    git("commit", "-q", "-m", "release")
    return git("rev-parse", "--short", "HEAD")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty git repository as the working folder, git configured for it alone."""
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "author",
        "GIT_AUTHOR_EMAIL": "author@example.org",
        "GIT_COMMITTER_NAME": "author",
        "GIT_COMMITTER_EMAIL": "author@example.org",
    }.items():
        monkeypatch.setenv(name, value)
    git("init", "-q")
    return tmp_path


@pytest.fixture
def released(project, capsys):
    """A build released as r1, its digests pinned and committed with its
    sources (build/ is not committed, as in the article): the commit."""
    make_build()
    make_release()
    assert verify.main(["--pin", LABEL]) == 0
    capsys.readouterr()
    return commit(SOURCE, f"releases/{LABEL}")


def run(capsys, *argv):
    code = verify.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def forge_digest(path):
    """The crate's SHA-256 of path made the file's digest now, as a forger
    who knows RO-Crate would write it."""
    crate = json.loads(Path(MANIFEST).read_text())
    for entity in crate["@graph"]:
        if entity.get("name") == path and "sha256" in entity:
            entity["sha256"] = file_digest(path)
    Path(MANIFEST).write_text(json.dumps(crate))


def forge_page(text):
    """What a forger does: rewrite the page, then its digest in the manifest
    and in the ledger, and the manifest's own digest in the ledger."""
    Path(PAGE).write_text(text)
    forge_digest(PAGE)
    ledger = json.loads(Path(LEDGER).read_text())
    ledger["outputs"][PAGE]["sha256"] = file_digest(PAGE)
    ledger["outputs"][MANIFEST]["sha256"] = file_digest(MANIFEST)
    Path(LEDGER).write_text(json.dumps(ledger))


# ---- a forgery ----------------------------------------------------------------------------


def test_a_page_forged_with_its_manifest_and_ledger_fails_against_the_release_committed_in_git(released, capsys):
    forge_page("<p>0.99</p>")
    code, out, err = run(capsys)
    assert code == 1
    # the two records beside the build agree with the forgery: they are no proof
    assert f"verify: {MANIFEST}: all 3 files match" in out
    assert f"verify: {LEDGER}: {MANIFEST} is the one rule manifest wrote" in out
    # the committed digests are
    assert f"verify: {PIN}: 1 file does not match:" in err
    assert f"{PAGE}: not the file release {LABEL} shipped" in err
    assert f"in {PIN} (commit {released} (" in err


@pytest.mark.parametrize("how", ["edited", "removed"])
def test_the_digests_on_disk_are_not_believed_over_the_committed_ones(released, capsys, how):
    forge_page("<p>0.99</p>")
    pin = json.loads(Path(PIN).read_text())
    if how == "edited":
        pin["outputs"][PAGE] = file_digest(PAGE)
        Path(PIN).write_text(json.dumps(pin))
    else:
        Path(PIN).unlink()
    code, out, err = run(capsys)
    assert code == 1
    assert f"{PIN}: {how} since commit {released}" in err and f"git checkout -- {PIN}" in err
    assert f"{PAGE}: not the file release {LABEL} shipped" in err


def test_a_source_changed_with_the_manifest_is_named_when_held_to_the_release(released, capsys):
    """Changing a source dodges the default choice of release (none was
    made from it), and says so; --against holds the build to one."""
    Path(SOURCE).write_text("The weight is exactly {{< value w >}}.\n")
    forge_digest(SOURCE)
    code, out, _ = run(capsys)
    assert "verify: no committed anchor:" in out and f"the releases pinned here ({LABEL}) are other builds" in out
    code, out, err = run(capsys, "--against", f"releases/{LABEL}")
    assert code == 1
    assert f"{SOURCE}: not the source release {LABEL} was built from" in err


def test_digests_dropped_beside_the_committed_ones_do_not_displace_them(released, capsys):
    forge_page("<p>0.99</p>")
    fake = json.loads(Path(PIN).read_text())
    fake.update(label="r2", pinned_at="2999-01-01T00:00:00Z", outputs={**fake["outputs"], PAGE: file_digest(PAGE)})
    Path("releases/r2").mkdir()
    Path("releases/r2/digests.json").write_text(json.dumps(fake))
    code, _, err = run(capsys)
    assert code == 1 and f"{PAGE}: not the file release {LABEL} shipped" in err


# ---- what it says it checked ------------------------------------------------------------


def test_without_a_committed_anchor_it_says_it_proved_integrity_only(project, capsys):
    make_build()
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[-1].startswith("verify: no committed anchor: none of releases/*/digests.json records")
    assert out.rstrip().endswith("this proves integrity, not authenticity")


def test_the_output_names_each_anchor_it_checked_and_what_it_cannot_prove(released, capsys):
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"verify: {MANIFEST}: all 3 files match ({verify.MANIFEST_LIMIT})",
        f"verify: {LEDGER}: {MANIFEST} is the one rule manifest wrote, as recorded there ({verify.LEDGER_LIMIT})",
        f"verify: {PIN}: all 2 outputs and 1 input match release {LABEL}'s digests committed in git by "
        f"commit {released} ({git('log', '-1', '--format=%cs')}) (a forger must also commit new digests, "
        f"which git log -- {PIN} shows, or rewrite git history)",
    ]


def test_a_shipped_copy_without_its_ledger_says_the_ledger_was_not_checked(released, capsys):
    Path(LEDGER).unlink()
    code, out, _ = run(capsys)
    assert code == 0 and f"verify: {LEDGER}: not here, so not checked" in out


def test_digests_not_yet_committed_are_no_committed_anchor(project, capsys):
    make_build()
    make_release()
    assert verify.main(["--pin", LABEL]) == 0
    assert f"commit it (git add {PIN} && git commit)" in capsys.readouterr().out
    code, out, _ = run(capsys)
    assert code == 0
    assert (
        f"verify: {PIN}: all 2 outputs and 1 input match release {LABEL}'s digests, but they are not committed in git"
        in out
    )
    assert out.rstrip().endswith("no committed anchor, so this proves integrity, not authenticity")


# ---- which release, and pinning ------------------------------------------------------------


def test_a_build_measured_again_is_no_forgery_unless_held_to_the_release(released, capsys):
    """The same sources measured anew (or under another library version) make
    other values and pages: by default no release is this build; --against
    holds it to one, and then every file that differs is named."""
    make_build(page="<p>0.94</p>", value=0.94)
    code, out, _ = run(capsys)
    assert code == 0 and "verify: no committed anchor:" in out
    code, _, err = run(capsys, "--against", f"releases/{LABEL}/snapshot.json")
    assert code == 1
    assert f"{VALUES}: not the file release {LABEL} shipped" in err and f"{PAGE}: not the file" in err


def test_against_a_release_never_pinned_fails_saying_how_to_pin_it(project, capsys):
    make_build()
    code, _, err = run(capsys, "--against", f"releases/{LABEL}")
    assert code == 1
    assert f"{PIN}: no such file, on disk or committed" in err and "verify --pin LABEL" in err


def test_a_pin_is_never_written_over_nor_for_another_build(released, capsys):
    code, _, err = run(capsys, "--pin", LABEL)
    assert code == 1 and f"{PIN} exists: a release's digests are never overwritten" in err
    git("rm", "-q", PIN)
    make_build(value=0.94)
    code, _, err = run(capsys, "--pin", LABEL)
    assert code == 1 and f"{VALUES}: its values are not those release {LABEL} froze" in err
    assert not Path(PIN).exists()


def test_a_build_that_does_not_verify_is_not_pinned(project, capsys):
    make_build()
    make_release()
    Path(PAGE).write_text("<p>edited</p>")
    code, _, err = run(capsys, "--pin", LABEL)
    assert code == 1 and f"{PAGE}: changed since rule html made it" in err
    assert not Path(PIN).exists()
