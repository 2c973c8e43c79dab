"""The article's authors, written once in its front matter, in every
edition: a plain name and Quarto's {name: ..., orcid: ...} form alike are
printed as the name (Pandoc's templates would print a {name: ...} as
"true"), and the JATS edition keeps the structured form its template
reads."""

import re
import zipfile

import pytest

from articlekit.render import formats
from tests.test_crossref import read
from tests.test_hostile_editions import every_edition
from tests.test_jats import bound_project

pytestmark = pytest.mark.workflow

# keywords as an author writes them, one a Typst string could not hold as typed
KEYWORDS = 'keywords: [attention, "C# and `code`", "a \\\\ \\"quoted\\" word"]\n'

AUTHORS = """author:
  - Ada Lovelace
  - name: Alan Turing
    orcid: 0000-0002-1825-0097
"""


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    def with_authors(text):
        text = re.sub(r"(?m)^keywords:.*\n", KEYWORDS, text, count=1)
        return re.sub(r"(?m)^author:\n(  - .*\n)+", AUTHORS, text, count=1)

    return every_edition(*bound_project(tmp_path_factory.mktemp("authors") / "article", with_authors))


@pytest.mark.parametrize("fmt", sorted(formats.names()))
def test_every_edition_prints_each_author_by_name(editions, fmt):
    text = " ".join(read(editions[fmt]).split())
    assert "Ada Lovelace" in text and "Alan Turing" in text, (fmt, text[:600])
    head = text[: text.find("Alan Turing") + 40]
    assert not re.search(r"\btrue\b", head), (fmt, head)  # a {name: ...} printed as a boolean


def test_the_jats_edition_keeps_the_structured_author(editions):
    with zipfile.ZipFile(editions["jats"]) as bundle:
        article = bundle.read("article.xml").decode("utf-8")
    assert '<contrib-id contrib-id-type="orcid">' in article and "0000-0002-1825-0097" in article, article[:3000]


def test_the_pdf_compiles_with_any_keyword_and_carries_them_in_its_metadata(editions):
    from pypdf import PdfReader

    keywords = PdfReader(editions["pdf"]).metadata.get("/Keywords", "")
    # (Typst 0.15 itself writes the lone backslash of the third out of the PDF's metadata)
    assert "attention" in keywords and "C# and `code`" in keywords and '"quoted" word' in keywords, keywords


def test_the_markdown_puts_the_authors_under_the_title_as_quarto_s_gfm_does(editions):
    head = read(editions["gfm"]).splitlines()[:3]
    assert head == ["# Fixture: every shortcode form", "Ada Lovelace, Alan Turing", "2024-05-01"], head
