"""python -m articlekit verify: is this build what its manifest says it is?

Run in the article's folder after a build (or in a copy of it that ships
build/manifest.json). Every output and input build/manifest.json lists
(articlekit/review/manifest.py) is digested again: a page edited after the
build, an artifact rewritten, a source changed since the build (the prose,
a config file, the baseline, an experiment's script) is named, with the
rule that made or read it and what to do. Where the build's
.snakemake/articlekit/ledger.json is at hand, the manifest itself is held
against it, so a manifest rewritten to match a forged file is named too.

Exit status 0 when every file matches, 1 otherwise (a missing or unreadable
manifest included). A checksum, not a signature: docs/reliability.md says
what it proves.
"""

import argparse
import os

from articlekit.core.ledger import LEDGER, Ledger, file_digest, rerun_command, short
from articlekit.core.log import log
from articlekit.review.manifest import MANIFEST, ManifestError, load_manifest


def problems(manifest, ledger=None, manifest_path=MANIFEST):
    """One sentence per file that does not match, each with what to do."""
    found = []
    if ledger is not None:
        forged = ledger.unowned(manifest_path, "manifest")
        if forged:
            found.append(
                f"{forged}: the manifest is not the build's own, so nothing it lists is vouched for; "
                f"rebuild it: {rerun_command(['manifest'])}"
            )
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


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit verify", description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", default=MANIFEST, help=f"the build's manifest (default {MANIFEST})")
    parser.add_argument(
        "--ledger",
        default=LEDGER,
        help=f"Snakemake's record of what each rule wrote (default {LEDGER}); skipped when there is none",
    )
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(args.manifest)
    except ManifestError as exc:
        log.error(f"verify: {exc}")
        return 1
    ledger = Ledger.load(args.ledger) if os.path.exists(args.ledger) else None
    found = problems(manifest, ledger, args.manifest)
    files = len(manifest["outputs"]) + len(manifest["inputs"])
    if found:
        log.error(f"verify: {len(found)} of {files} files do not match {args.manifest}:")
        for problem in found:
            log.error(f"  {problem}")
        return 1
    against = f"{args.manifest} and {args.ledger}" if ledger else f"{args.manifest} (no {args.ledger} here)"
    print(f"verify: all {files} files match {against}")
    return 0
