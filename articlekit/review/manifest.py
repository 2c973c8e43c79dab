"""build/manifest.json: every file a build wrote and read, with its SHA-256
and the rule that made or read it.

    python -m articlekit.review.manifest --ledger .snakemake/articlekit/ledger.json \\
        --read config.yaml ... --out build/manifest.json OUTPUT...

The manifest rule runs it last, with every other output of the default
build as its input. It takes from Snakemake's ledger (articlekit/core/ledger.py)
the rule that wrote each output and what that rule's job read (the
experiments' scripts and the articlekit modules it ran, the baseline, the
release snapshot, the prose), adds the files the plan read (--read: the
config files, their schemas, the Snakefiles), and digests them all. It
refuses to write a manifest over an output its rule did not write, or a
source that changed while the build ran: each is named with its rule and
the command that makes it again.

    {"manifest_format": 1,
     "outputs": {PATH: {"sha256": HEX, "rule": NAME}},
     "inputs": {PATH: {"sha256": HEX, "read_by": [RULE, ...]}}}

`python -m articlekit verify` (articlekit/review/verify.py) checks a
shipped build against it. A digest here is a checksum, not a signature:
whoever rewrites a file and the manifest alike defeats it; where the
build's .snakemake/ is at hand, verify holds the manifest itself against
the ledger, which the build's own jobs cannot keep rewritten. Whoever
rewrites the ledger too defeats that; only digests committed in git (a
release's, `verify --pin`) stand against them.
"""

import argparse
import sys
from collections import defaultdict

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.jsonio import read_json, write_json
from articlekit.core.ledger import Ledger, file_digest, key
from articlekit.core.log import log

FORMAT = 1
MANIFEST = "build/manifest.json"


class ManifestError(ArticlekitError):
    pass


def build_manifest(ledger, outputs, plan_sources=()):
    """The manifest document for `outputs` (each recorded in the ledger) and
    the files the plan read; ManifestError naming every output the ledger
    does not vouch for and every source that changed during the run."""
    outputs = [key(path) for path in outputs]
    problems = [ledger.output_problem(path) for path in outputs]
    readers = defaultdict(set)
    made = set(outputs)
    for path in outputs:
        for source in (ledger.entry(path) or {}).get("inputs", []):
            if source not in made:
                readers[key(source)].add(ledger.rule_of(path))
    for source in plan_sources:
        readers[key(source)].add("the plan")
    problems += [ledger.source_problem(path) for path in sorted(readers)]
    problems = [problem for problem in problems if problem]
    if problems:
        raise ManifestError("\n  ".join(problems))
    return {
        "manifest_format": FORMAT,
        "outputs": {path: {"sha256": file_digest(path), "rule": ledger.rule_of(path)} for path in sorted(outputs)},
        "inputs": {path: {"sha256": file_digest(path), "read_by": sorted(readers[path])} for path in sorted(readers)},
    }


def load_manifest(path=MANIFEST):
    """The manifest at path, checked for its shape; ManifestError saying how
    to get one when it is missing or is not a manifest."""
    try:
        document = read_json(path)
    except FileNotFoundError:
        raise ManifestError(
            f"{path}: no such file: a build writes it (snakemake --cores all); "
            "run this in the article's folder after a build"
        ) from None
    except ValueError as exc:
        raise ManifestError(f"{exc}: rebuild it (snakemake --cores all --forcerun manifest)") from None
    shaped = (
        isinstance(document, dict)
        and document.get("manifest_format") == FORMAT
        and all(isinstance(document.get(part), dict) for part in ("outputs", "inputs"))
    )
    if not shaped:
        raise ManifestError(
            f"{path}: not a build manifest of format {FORMAT}: rebuild it (snakemake --cores all --forcerun manifest)"
        )
    return document


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit.review.manifest", description=__doc__.splitlines()[0])
    parser.add_argument("outputs", nargs="+", help="every other output of the build")
    parser.add_argument("--ledger", required=True, help="Snakemake's record of each output's rule and digest")
    parser.add_argument(
        "--read",
        nargs="*",
        default=[],
        metavar="FILE",
        help="files the plan read that no job reads (config files, schemas, Snakefiles)",
    )
    parser.add_argument("--out", required=True, help="where to write build/manifest.json")
    args = parser.parse_args(argv)
    document = build_manifest(Ledger.load(args.ledger), args.outputs, args.read)
    write_json(args.out, document)
    log.info(f"manifest: {len(document['outputs'])} outputs and {len(document['inputs'])} inputs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_command("manifest", main, sys.argv[1:]))
