"""CITATION.cff: the article's is written from its front matter and says
what it says; articlekit's names the library's version; both are valid
CFF 1.2.0 as cffconvert reads them (in an environment of its own: it pins
jsonschema below 4, which articlekit's own checks need above)."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import articlekit
from articlekit.render.metadata import Author, ArticleMetadata, from_front_matter
from articlekit.review.citation_file import CitationFileError, citation, citation_text, main

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "CITATION.cff", ROOT / "articlekit" / "CITATION.cff"]


def test_the_article_s_citation_file_says_what_its_front_matter_says():
    # python -m articlekit cite --check, as CI runs it
    assert main(["--article", str(ROOT / "article/index.qmd"), "--out", str(ROOT / "CITATION.cff"), "--check"]) == 0


def test_a_title_changed_in_the_front_matter_makes_the_file_stale_until_written_again(tmp_path):
    article = tmp_path / "index.qmd"
    article.write_text('---\ntitle: "One"\nauthor: Ada Lovelace\n---\nText.\n', encoding="utf-8")
    out = tmp_path / "CITATION.cff"
    assert main(["--article", str(article), "--out", str(out)]) == 0
    assert main(["--article", str(article), "--out", str(out), "--check"]) == 0
    article.write_text('---\ntitle: "Two"\nauthor: Ada Lovelace\n---\nText.\n', encoding="utf-8")
    with pytest.raises(CitationFileError, match="does not say what the front matter says.*articlekit cite --out"):
        main(["--article", str(article), "--out", str(out), "--check"])


def test_authors_are_people_with_given_and_family_names_or_an_entity():
    front = {
        "title": "T",
        "author": [
            {"name": "Ada King Lovelace", "orcid": "0000-0002-1825-0097", "affiliation": "Analytical Society"},
            "The articlekit maintainers",
        ],
        "license": "CC-BY-4.0",
        "version": "2.0.0",
        "date": "2026-12-06",
    }
    document = citation(from_front_matter(front))
    assert document["authors"] == [
        {
            "given-names": "Ada King",
            "family-names": "Lovelace",
            "orcid": "https://orcid.org/0000-0002-1825-0097",
            "affiliation": "Analytical Society",
        },
        {"name": "The articlekit maintainers"},
    ]
    assert (document["license"], document["version"], document["date-released"]) == ("CC-BY-4.0", "2.0.0", "2026-12-06")
    assert document["preferred-citation"]["type"] == "article" and document["preferred-citation"]["year"] == 2026
    assert "&id" not in citation_text(from_front_matter(front))  # no YAML anchors: plain for every reader


def test_a_front_matter_without_an_author_is_refused_with_the_fix():
    with pytest.raises(CitationFileError, match=r"names no author.*author: - name:"):
        citation(ArticleMetadata(title="T"))
    assert citation(ArticleMetadata(title="T", authors=(Author("Ada Lovelace"),)))["title"] == "T"


def test_articlekit_s_citation_file_names_the_library_s_version():
    document = yaml.safe_load((ROOT / "articlekit" / "CITATION.cff").read_text(encoding="utf-8"))
    assert document["version"] == articlekit.__version__ and document["title"].startswith("articlekit")


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=["article", "articlekit"])
def test_cffconvert_finds_each_citation_file_valid(path, tmp_path):
    uvx = shutil.which("uvx")
    assert uvx, "uv's uvx is not on PATH: pip install -r requirements-dev.txt installs it"
    done = subprocess.run(
        [uvx, "--from", "cffconvert>=2.0", "cffconvert", "--validate", "-i", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and "valid according to schema version 1.2.0" in done.stdout + done.stderr, (
        done.stdout + done.stderr
    )
