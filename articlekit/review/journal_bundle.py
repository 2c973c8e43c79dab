"""build/article.meca.zip: the journal's bundle, the JATS edition with the build's provenance.

    python -m articlekit.review.journal_bundle --jats build/article.jats.zip \\
        --crate build/ro-crate-metadata.json --out build/article.meca.zip

The JATS edition (article.xml, its figures and MECA's manifest.xml) is made
before the build's RO-Crate, which lists it with its digest, so it cannot
hold the crate itself. This bundle, made last, carries both: every entry of
the JATS zip byte for byte, ro-crate-metadata.json beside them, and a
manifest.xml that lists it too, as an article-supporting-file. A journal's
intake reads one zip; a reader's tool finds in it the run behind each
number (articlekit/review/crate.py). The crate does not list this bundle:
it is the crate's package, made from it.

What it writes is read back before it is moved into place: the manifest
valid against MECA's DTD, listing exactly the other entries, the crate the
file the build wrote.
"""

import argparse
import json
import sys
from pathlib import Path

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.jsonio import write_bytes_atomic
from articlekit.core.log import log
from articlekit.render.formats import jats
from articlekit.review.crate import METADATA_NAME

JOURNAL_BUNDLE = "build/article.meca.zip"
CRATE_ITEM = (
    "article-supporting-file",
    METADATA_NAME,
    "application/ld+json",
    "The build's provenance, a Workflow Run RO-Crate: every file it read and wrote, each job, every value printed",
)


class BundleError(ArticlekitError):
    pass


def bundle_entries(jats_zip, crate_bytes):
    """{name: bytes} of the journal's bundle: the JATS zip's entries, the
    crate, and a manifest listing them all."""
    entries = jats.read_bundle(jats_zip)
    if METADATA_NAME in entries:
        raise BundleError(f"{jats_zip}: already holds a {METADATA_NAME}: rebuild it (snakemake --forcerun jats)")
    try:
        json.loads(crate_bytes)
    except ValueError as exc:
        raise BundleError(f"the crate is not JSON ({exc}): rebuild it (snakemake --forcerun manifest)") from None
    figures = {name: data for name, data in entries.items() if name not in (jats.ARTICLE_XML, jats.MANIFEST_XML)}
    return {**entries, METADATA_NAME: crate_bytes, jats.MANIFEST_XML: jats.manifest(figures, [CRATE_ITEM])}


def checked(entries, out):
    """The entries, once their manifest is MECA's and lists exactly them."""
    listed = jats.manifest_items(entries[jats.MANIFEST_XML], out)
    if listed != set(entries) - {jats.MANIFEST_XML}:
        raise BundleError(f"{out}: its manifest lists {sorted(listed)}, not its entries {sorted(entries)}")
    return entries


def write_bundle(jats_zip, crate, out):
    entries = checked(bundle_entries(jats_zip, Path(crate).read_bytes()), out)
    write_bytes_atomic(out, jats.zip_bytes(entries))
    return entries


def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m articlekit.review.journal_bundle", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--jats", required=True, help="the JATS edition's zip")
    parser.add_argument("--crate", required=True, help="the build's RO-Crate")
    parser.add_argument("--out", required=True, help=f"where to write the bundle ({JOURNAL_BUNDLE})")
    args = parser.parse_args(argv)
    entries = write_bundle(args.jats, args.crate, args.out)
    log.info(f"journal bundle: {len(entries)} entries, the crate among them -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_command("journal bundle", main, sys.argv[1:]))
