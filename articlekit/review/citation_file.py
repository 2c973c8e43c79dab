"""CITATION.cff: how to cite the article, written from its front matter.

    python -m articlekit cite [--article article/index.qmd] [--out CITATION.cff] [--check]

The Citation File Format (CFF 1.2.0) is what GitHub, Zenodo and Zotero read
to cite a repository. Its title, authors, version, date and licence are the
article's (articlekit/render/metadata.py), so they are written once, in the
front matter every edition prints them from; this command writes the file
from there, and `--check` fails when the file in the repository no longer
says what the front matter says (run it in CI, beside cffconvert's schema
check: tests/test_citation_file.py).
"""

import argparse
import sys
from pathlib import Path

import yaml

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.jsonio import write_text_atomic
from articlekit.core.log import log
from articlekit.render.metadata import read_metadata

CFF_VERSION = "1.2.0"
HEADER = "# Written by `python -m articlekit cite` from the article's front matter: edit that, then run it again.\n"


class CitationFileError(ArticlekitError):
    pass


def person(author):
    """A CFF author: a person's given and family names (the last word is
    the family name), or an entity's name when it is one word or says
    "The ..."; their ORCID and affiliation where given."""
    words = author.name.split()
    if len(words) < 2 or words[0].lower() == "the":
        entry = {"name": author.name}
    else:
        entry = {"given-names": " ".join(words[:-1]), "family-names": words[-1]}
    if author.orcid:
        entry["orcid"] = f"https://orcid.org/{author.orcid.removeprefix('https://orcid.org/')}"
    if author.affiliation:
        entry["affiliation"] = author.affiliation
    return entry


def citation(metadata, repository=None):
    """The CFF document (a dict) citing the article of `metadata`."""
    if not metadata.authors:
        raise CitationFileError(
            "the front matter names no author: CITATION.cff needs one (author: - name: ...), "
            "which every edition prints too"
        )
    authors = [person(a) for a in metadata.authors]
    document = {
        "cff-version": CFF_VERSION,
        "message": "If you use this article or its code, please cite it as below.",
        "type": "software",
        "title": metadata.title,
        "authors": authors,
    }
    if metadata.abstract or metadata.subtitle:
        document["abstract"] = metadata.abstract or metadata.subtitle
    if metadata.version:
        document["version"] = metadata.version
    if metadata.date:
        document["date-released"] = metadata.date
    if metadata.license:
        document["license"] = metadata.license
    if metadata.keywords:
        document["keywords"] = list(metadata.keywords)
    if repository:
        document["repository-code"] = repository
    # what to cite is the article itself, not only its repository
    document["preferred-citation"] = {
        "type": "article",
        "title": metadata.title,
        "authors": [dict(a) for a in authors],  # a copy: YAML would write an anchor and alias
        **({"year": int(metadata.date[:4])} if metadata.date[:4].isdigit() else {}),
    }
    return document


def citation_text(metadata, repository=None):
    return HEADER + yaml.safe_dump(citation(metadata, repository), sort_keys=False, allow_unicode=True, width=100)


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit cite", description=__doc__.splitlines()[0])
    parser.add_argument("--article", default="article/index.qmd", help="the article (default article/index.qmd)")
    parser.add_argument("--out", default="CITATION.cff", help="the file to write (default CITATION.cff)")
    parser.add_argument("--repository", help="the repository's URL, for repository-code")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; fail when the file differs from what would be written"
    )
    args = parser.parse_args(argv)
    text = citation_text(read_metadata(args.article), args.repository)
    out = Path(args.out)
    if args.check:
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            state = "does not exist" if not out.is_file() else "does not say what the front matter says"
            raise CitationFileError(
                f"{out} {state} ({args.article}): write it again with python -m articlekit cite --out {out}"
            )
        log.info(f"cite: {out} says what {args.article}'s front matter says")
        return 0
    write_text_atomic(out, text)
    log.info(f"cite: {out} written from {args.article}'s front matter")
    return 0


if __name__ == "__main__":
    sys.exit(run_command("cite", main, sys.argv[1:]))
