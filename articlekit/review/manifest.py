"""The build's manifest: every file a build wrote and read, with its SHA-256
and the rule that made or read it, written as a Workflow Run RO-Crate
(build/ro-crate-metadata.json: articlekit/review/crate.py says its shape).

    python -m articlekit.review.manifest --ledger .snakemake/articlekit/ledger.json \\
        --read config.yaml ... --bindings build/bindings.json --article article/index.qmd \\
        --out build/ro-crate-metadata.json OUTPUT...

The manifest rule runs it last, with every other output of the default
build as its input. It takes from Snakemake's ledger (articlekit/core/ledger.py)
the rule that wrote each output and what that rule's job read (the
experiments' scripts and the articlekit modules it ran, the baseline, the
release snapshot, the prose), adds the files the plan read (--read: the
config files, their schemas, the Snakefiles), and digests them all. It
refuses to write a manifest over an output its rule did not write, or a
source that changed while the build ran: each is named with its rule and
the command that makes it again. The crate adds each job's run, the
software it ran with, the article's metadata and every bound value.

What verify reads back (load_manifest) is the crate's view of the files:

    {"outputs": {PATH: {"sha256": HEX, "rule": NAME}},
     "inputs": {PATH: {"sha256": HEX, "read_by": [RULE, ...]}}}

There is no build/manifest.json beside it any more: the crate holds all it
held, in the standard a reader's tool understands.

`python -m articlekit verify` (articlekit/review/verify.py) checks a
shipped build against it. A digest here is a checksum, not a signature:
whoever rewrites a file and the manifest alike defeats it; where the
build's .snakemake/ is at hand, verify holds the manifest itself against
the ledger, which the build's own jobs cannot keep rewritten. Whoever
rewrites the ledger too defeats that; only digests committed in git (a
release's, `verify --pin`) stand against them.
"""

import argparse
import os
import sys
from collections import defaultdict

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.render.metadata import read_metadata
from articlekit.core.jsonio import read_json, write_text_atomic
from articlekit.core.ledger import Ledger, file_digest, key
from articlekit.core.log import log
from articlekit.review.crate import METADATA_NAME, build_crate, crate_json

MANIFEST = "build/ro-crate-metadata.json"


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
        "outputs": {path: {"sha256": file_digest(path), "rule": ledger.rule_of(path)} for path in sorted(outputs)},
        "inputs": {path: {"sha256": file_digest(path), "read_by": sorted(readers[path])} for path in sorted(readers)},
    }


def write_manifest(out, ledger, outputs, plan_sources=(), bindings=None, metadata=None):
    """Write the build's crate to out (its folder the crate's root), all
    at once; -> the files view it records (build_manifest's)."""
    document = build_manifest(ledger, outputs, plan_sources)
    crate = build_crate(document, ledger, os.path.dirname(out) or ".", bindings, metadata, software_versions())
    write_text_atomic(out, crate_json(crate))
    return document


def load_manifest(path=MANIFEST):
    """The files view of the build's crate at path (crate.files_view),
    ManifestError saying how to get one when it is missing or is not the
    crate of an articlekit build."""
    from articlekit.review.crate import CrateError, files_view

    try:
        document = read_json(path)
    except FileNotFoundError:
        raise ManifestError(
            f"{path}: no such file: a build writes it (snakemake --cores all); "
            "run this in the article's folder after a build"
        ) from None
    except ValueError as exc:
        raise ManifestError(f"{exc}: rebuild it (snakemake --cores all --forcerun manifest)") from None
    try:
        return files_view(document, root=os.path.dirname(path) or ".")
    except CrateError as exc:
        raise ManifestError(
            f"{path}: {exc}: not the RO-Crate of a build: rebuild it (snakemake --cores all --forcerun manifest)"
        ) from None


def software_versions():
    """{name: version} of the engine and the library that ran the build."""
    import snakemake

    import articlekit

    return {"snakemake": snakemake.__version__, "articlekit": articlekit.__version__}


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
    parser.add_argument("--bindings", help="the bindings document: each bound value becomes an entity of the crate")
    parser.add_argument("--article", help="the article, whose front matter gives the crate its name and authors")
    parser.add_argument("--out", required=True, help=f"where to write the crate ({MANIFEST})")
    args = parser.parse_args(argv)
    metadata = read_metadata(args.article) if args.article else None
    bindings = read_json(args.bindings) if args.bindings else None
    if os.path.basename(args.out) != METADATA_NAME:
        raise ManifestError(f"--out {args.out}: an RO-Crate's metadata file is named {METADATA_NAME}")
    document = write_manifest(args.out, Ledger.load(args.ledger), args.outputs, args.read, bindings, metadata)
    values = len((bindings or {}).get("bindings") or {})
    log.info(
        f"manifest: {len(document['outputs'])} outputs, {len(document['inputs'])} inputs and {values} bound "
        f"values -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_command("manifest", main, sys.argv[1:]))
