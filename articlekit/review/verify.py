"""python -m articlekit verify: is this build what its manifest says, and is it the release?

    python -m articlekit verify [--against releases/LABEL]
    python -m articlekit verify --pin LABEL

Run in the article's folder after a build (or in a copy of it that ships
build/ro-crate-metadata.json, the build's RO-Crate). The build is held to each anchor there is, and the
output says, for each, what it checked and what it cannot prove:

- the manifest (articlekit/review/manifest.py): every output and input it
  lists is digested again; a page edited after the build, an artifact
  rewritten, a source changed since the build is named, with the rule that
  made or read it and what to do. It lies beside the files it lists, so it
  catches accidents, not a forger who rewrites a file and the manifest alike;
- the ledger (.snakemake/articlekit/ledger.json), where it is at hand: the
  manifest must be the one rule manifest wrote. It stops the build's own
  jobs; it too is a file a forger can rewrite after the build;
- a release's digests committed in git (releases/LABEL/digests.json, written
  by `--pin LABEL` after `snakemake release`, then committed): every file
  the release's build wrote and read, with its SHA-256. verify reads the
  committed version (git show HEAD:...), so rewriting it takes a commit,
  which git log shows, or rewritten history. By default it is the newest
  release pinned with this build's sources and values; `--against` names
  one, and then a build made again since the release fails too.

Without a committed anchor the output says so: integrity, not authenticity.
Exit status 0 when every anchor agrees, 1 otherwise (a missing or
unreadable manifest or pin included). docs/reliability.md says what each
anchor proves.
"""

import argparse
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import read_json, write_json
from articlekit.core.ledger import LEDGER, Ledger, file_digest, now, rerun_command, short
from articlekit.core.log import log
from articlekit.review.manifest import MANIFEST, ManifestError, load_manifest
from articlekit.review.snapshot import SnapshotError, load_snapshot
from articlekit.review.snapshot_digest import canonical

RELEASES = "releases"
PIN = "digests.json"  # beside a release's snapshot.json
PIN_FORMAT = 1
VALUES = "build/values.json"  # what selects a release's pin, with the sources

# What each anchor cannot prove, said beside what it checked.
MANIFEST_LIMIT = "a checksum kept beside the files: it catches accidents, not a forger who rewrites both"
LEDGER_LIMIT = "a record kept beside the build: it stops the build's own jobs, not a forger who rewrites it afterwards"
INTEGRITY_ONLY = "this proves integrity, not authenticity"


class VerifyError(ArticlekitError):
    pass


@dataclass
class Check:
    """The build held to one anchor."""

    anchor: str  # the file it was held to
    problems: list  # one sentence per file that disagrees, each with what to do
    held: str  # what it showed, when nothing disagrees, and what it cannot prove


# ---- the manifest and the ledger ----------------------------------------------------


def manifest_problems(manifest, manifest_path=MANIFEST):
    """One sentence per file that does not match the manifest, each with what to do."""
    found = []
    for path, entry in manifest["outputs"].items():
        now, rule = file_digest(path), entry.get("rule") or "?"
        if now != entry.get("sha256"):
            what = "missing" if now is None else f"changed since rule {rule} made it"
            found.append(
                f"{path}: {what} (SHA-256 {short(entry.get('sha256'))} in {manifest_path}, {short(now)} "
                f"now): the build did not write what is there. Make it again: {rerun_command([rule])}"
            )
    for path, entry in manifest["inputs"].items():
        now = file_digest(path)
        if now != entry.get("sha256"):
            what = "missing" if now is None else "changed since the build"
            readers = ", ".join(entry.get("read_by") or ["?"])
            found.append(
                f"{path}: {what} (SHA-256 {short(entry.get('sha256'))} in {manifest_path}, {short(now)} "
                f"now; read by {readers}): the build's outputs were made from the earlier version. Build "
                "again (snakemake --cores all) to make them from this one, or restore the file"
            )
    return found


def ledger_problems(ledger, manifest_path=MANIFEST):
    forged = ledger.unowned(manifest_path, "manifest")
    if not forged:
        return []
    return [
        f"{forged}: the manifest is not the build's own, so nothing it lists is vouched for; "
        f"rebuild it: {rerun_command(['manifest'])}"
    ]


def problems(manifest, ledger=None, manifest_path=MANIFEST):
    """The ledger's and the manifest's problems together, the ledger's first."""
    found = ledger_problems(ledger, manifest_path) if ledger is not None else []
    return found + manifest_problems(manifest, manifest_path)


def check_manifest(manifest, manifest_path):
    files = len(manifest["outputs"]) + len(manifest["inputs"])
    return Check(
        manifest_path, manifest_problems(manifest, manifest_path), f"all {files} files match ({MANIFEST_LIMIT})"
    )


def check_ledger(ledger, ledger_path, manifest_path):
    if ledger is None:
        return Check(ledger_path, [], "not here, so not checked (a shipped copy of a build has none)")
    held = f"{manifest_path} is the one rule manifest wrote, as recorded there ({LEDGER_LIMIT})"
    return Check(ledger_path, ledger_problems(ledger, manifest_path), held)


# ---- git: what was committed ----------------------------------------------------------


def git(*args):
    """git's stdout, or None when there is no git, no repository, or it says no."""
    try:
        run = subprocess.run(["git", *args], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout if run.returncode == 0 else None


def committed(path):
    """(the bytes committed at HEAD, 'commit abc1234 (2026-05-01)' that last
    changed them), or (None, why there are none)."""
    text = git("show", f"HEAD:./{path}")
    if text is None:
        inside = git("rev-parse", "--is-inside-work-tree") is not None
        return None, "not committed in git" if inside else "not in a git repository"
    last = (git("log", "-1", "--format=%h (%cs)", "HEAD", "--", path) or b"").decode().strip()
    return text, f"commit {last or '?'}"


def committed_pins(releases):
    """The releases/*/digests.json committed at HEAD, whether or not they are on disk."""
    listed = (git("ls-tree", "-r", "--name-only", "HEAD", "--", f"{releases}/") or b"").decode().splitlines()
    return {os.path.normpath(p) for p in listed if Path(p).name == PIN and Path(p).parent.parent == Path(releases)}


# ---- a release's pinned digests ----------------------------------------------------------


@dataclass
class Pin:
    path: str
    document: dict  # as committed when it is, else as on disk
    where: str  # 'commit abc1234 (2026-05-01)', or why it is not committed
    is_committed: bool
    edited: str = None  # the sentence when the file on disk is not the committed one

    @property
    def label(self):
        return self.document["label"]


def read_pin(path):
    """The pin at path, read from git's HEAD when committed there (an edit on
    disk is then named, not believed); VerifyError when it is none."""
    path = os.path.normpath(path)
    text, where = committed(path)
    on_disk = Path(path).read_bytes() if Path(path).is_file() else None
    if text is None and on_disk is None:
        raise VerifyError(f"{path}: no such file, on disk or committed: pin the release's build first ({PIN_HINT})")
    document = _pin_document(text if text is not None else on_disk, path)
    pin = Pin(path, document, where, is_committed=text is not None)
    if pin.is_committed and on_disk != text:
        how = "removed" if on_disk is None else "edited"
        pin.edited = (
            f"{path}: {how} since {where} (git diff -- {path} shows how): the build is held to the committed "
            f"version; restore it: git checkout -- {path}"
        )
    return pin


PIN_HINT = "python -m articlekit verify --pin LABEL, after snakemake release, then commit it"


def _pin_document(text, path):
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    shaped = (
        isinstance(document, dict)
        and document.get("pin_format") == PIN_FORMAT
        and isinstance(document.get("label"), str)
        and all(isinstance(document.get(part), dict) for part in ("outputs", "inputs"))
    )
    if not shaped:
        raise VerifyError(f"{path}: not a release's digests of format {PIN_FORMAT} ({PIN_HINT})")
    return document


def all_pins(releases=RELEASES):
    """Every readable pin under releases/, committed or on disk; those that
    are not pins are left out (--against names them)."""
    paths = committed_pins(releases) | {os.path.normpath(p) for p in Path(releases).glob(f"*/{PIN}")}
    pins = []
    for path in sorted(paths):
        try:
            pins.append(read_pin(path))
        except VerifyError:
            continue
    return pins


def digests(manifest, part):
    return {path: entry.get("sha256") for path, entry in manifest[part].items()}


def pinned_for(manifest, pins):
    """The newest pin made from this build's sources and with its values,
    committed ones first (a file dropped beside them is no rival), or None.
    The values matter: the same sources under another library version, or
    measured again, make other files, and are no forgery."""
    fitting = [
        pin
        for pin in pins
        if pin.document["inputs"] == digests(manifest, "inputs")
        and pin.document["outputs"].get(VALUES) == digests(manifest, "outputs").get(VALUES)
    ]
    return max(fitting, key=lambda pin: (pin.is_committed, str(pin.document.get("pinned_at"))), default=None)


def pin_problems(manifest, pin):
    """One sentence per file that is not what the release's build wrote or read."""
    label, found = pin.label, [pin.edited] if pin.edited else []
    for path, sha in pin.document["outputs"].items():
        now = file_digest(path)
        if now != sha:
            rule = (manifest["outputs"].get(path) or {}).get("rule")
            again = f": {rerun_command([rule])}" if rule else ""
            found.append(
                f"{path}: not the file release {label} shipped: SHA-256 {short(now)} here, {short(sha)} in "
                f"{pin.path} ({pin.where}): edited after the build (the manifest and the ledger agree with "
                f"whatever was last written there), or made again since the release. Make it again from the "
                f"release's sources{again}, or take the release's files from where it was published"
            )
    for path, sha in pin.document["inputs"].items():
        now = file_digest(path)
        if now != sha:
            found.append(
                f"{path}: not the source release {label} was built from: SHA-256 {short(now)} here, "
                f"{short(sha)} in {pin.path} ({pin.where}); check out the release's commit and build it"
            )
    found += [
        f"{path}: the build wrote it, but release {label} shipped no such file ({pin.path}): another build"
        for path in manifest["outputs"]
        if path not in pin.document["outputs"]
    ]
    return found


def counted(items, noun):
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def check_pin(manifest, pin):
    counts = f"all {counted(pin.document['outputs'], 'output')} and {counted(pin.document['inputs'], 'input')}"
    if pin.is_committed:
        held = (
            f"{counts} match release {pin.label}'s digests committed in git by {pin.where} (a forger must "
            f"also commit new digests, which git log -- {pin.path} shows, or rewrite git history)"
        )
    else:
        held = f"{counts} match release {pin.label}'s digests, but they are {pin.where}: no committed anchor, so {INTEGRITY_ONLY}"
    return Check(pin.path, pin_problems(manifest, pin), held)


def check_release(manifest, against=None, releases=RELEASES):
    """The build held to the release named (--against) or to the newest
    pinned with its sources and values; without one, a Check that says so."""
    if against:
        path = pin_path(against)
        try:
            return check_pin(manifest, read_pin(path))
        except VerifyError as exc:
            return Check(path, [str(exc)], "")
    pins = all_pins(releases)
    pin = pinned_for(manifest, pins)
    if pin:
        return check_pin(manifest, pin)
    labels = ", ".join(pin.label for pin in pins)
    others = f"; the releases pinned here ({labels}) are other builds: --against holds it to one" if pins else ""
    held = f"none of {releases}/*/{PIN} records this build's sources and values ({PIN_HINT}){others}: {INTEGRITY_ONLY}"
    return Check("no committed anchor", [], held)


def pin_path(against):
    """releases/L, releases/L/snapshot.json or releases/L/digests.json -> releases/L/digests.json."""
    path = Path(against)
    folder = path.parent if path.suffix == ".json" else path
    return os.path.normpath(folder / PIN)


# ---- pinning a release's build ----------------------------------------------------------


def pin_build(label, manifest, releases=RELEASES):
    """Write releases/LABEL/digests.json for this build, which must be the
    one released as LABEL (its values are the snapshot's); never over one."""
    folder = Path(releases) / label
    try:
        snapshot = load_snapshot(folder / "snapshot.json")
    except (SnapshotError, OSError) as exc:
        raise VerifyError(
            f"{folder}: no release to pin this build to ({exc}); release it first: snakemake release"
        ) from None
    target = folder / PIN
    if target.exists():
        raise VerifyError(
            f"{target} exists: a release's digests are never overwritten; to replace them: git rm {target}"
        )
    if VALUES not in manifest["outputs"] or canonical(read_json(VALUES).get("values")) != canonical(snapshot["values"]):
        raise VerifyError(
            f"{VALUES}: its values are not those release {label} froze, so this is not that release's build; "
            "build the release's commit, or release this build under a new label"
        )
    document = {
        "pin_format": PIN_FORMAT,
        "label": label,
        "pinned_at": now(),
        "outputs": digests(manifest, "outputs"),
        "inputs": digests(manifest, "inputs"),
    }
    write_json(target, document)
    return target, document


# ---- the command ----------------------------------------------------------------------


def report(check):
    if not check.problems:
        print(f"verify: {check.anchor}: {check.held}")
        return
    count = len(check.problems)
    log.error(f"verify: {check.anchor}: {count} {'file does' if count == 1 else 'files do'} not match:")
    for problem in check.problems:
        log.error(f"  {problem}")


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit verify", description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", default=MANIFEST, help=f"the build's manifest (default {MANIFEST})")
    parser.add_argument(
        "--ledger",
        default=LEDGER,
        help=f"Snakemake's record of what each rule wrote (default {LEDGER}); skipped when there is none",
    )
    parser.add_argument("--releases", default=RELEASES, help=f"the releases' folder (default {RELEASES})")
    anchor = parser.add_mutually_exclusive_group()
    anchor.add_argument(
        "--against",
        metavar=f"{RELEASES}/LABEL",
        help=f"hold the build to this release's committed {PIN} (default: the newest pinned with this "
        "build's sources and values, if any)",
    )
    anchor.add_argument(
        "--pin",
        metavar="LABEL",
        help=f"write {RELEASES}/LABEL/{PIN} for this build, released as LABEL, once it verifies (then commit it)",
    )
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(args.manifest)
    except ManifestError as exc:
        log.error(f"verify: {exc}")
        return 1
    ledger = Ledger.load(args.ledger) if os.path.exists(args.ledger) else None
    checks = [check_manifest(manifest, args.manifest), check_ledger(ledger, args.ledger, args.manifest)]
    if not args.pin:
        checks.append(check_release(manifest, args.against, args.releases))
    for check in checks:
        report(check)
    if any(check.problems for check in checks):
        return 1
    return pin_command(args.pin, manifest, args.releases) if args.pin else 0


def pin_command(label, manifest, releases=RELEASES):
    try:
        target, document = pin_build(label, manifest, releases)
    except VerifyError as exc:
        log.error(f"verify: not pinned: {exc}")
        return 1
    print(
        f"verify: pinned {counted(document['outputs'], 'output')} and {counted(document['inputs'], 'input')} to {target}; "
        f"commit it (git add {target} && git commit): until then it is a file beside the build like the manifest"
    )
    return 0
