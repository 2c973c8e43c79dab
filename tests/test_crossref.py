"""Cross-references: every edition numbers a figure, table, equation and
section alike, and a reference to an id the article lacks fails the build.

An article with an unlabelled figure (which Quarto does not count, and
Typst would), one figure, table, equation and section each referenced,
rendered in all five formats on the Pandoc route and the page on the
Quarto route; each edition read back as its reader reads it.
"""

import re
import zipfile

import pytest

from articlekit.render import formats
from articlekit.render import page as rendermod
from articlekit.render.renderers import RenderError
from tests.test_hostile_editions import every_edition, hostile_project

pytestmark = pytest.mark.workflow

ARTICLE = """---
title: "Cross-references"
---

## Intro {#sec-intro}

See @fig-a, @tbl-b, @eq-c and @sec-method.

![An unlabelled figure.](../figures/a.svg)

![A labelled figure.](../figures/a.svg){#fig-a}

## Method {#sec-method}

| a | b |
|---|---|
| 1 | 2 |

: A table. {#tbl-b}

$$
x = 1
$$ {#eq-c}

As @eq-c and @fig-a show; {{< value demo.error_message >}}.

## Where every number comes from

{{< provenance >}}
"""

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40"><rect width="40" height="20"/></svg>'
NBSP = "\u00a0"
# what every edition calls each thing: Quarto's words and numbers
NAMED = {"fig-a": "Figure 1", "tbl-b": "Table 1", "eq-c": "Equation 1", "sec-method": "Section 2"}


def project(folder, text=ARTICLE):
    folder.parent.mkdir(parents=True, exist_ok=True)
    (folder.parent / "figures").mkdir(exist_ok=True)
    (folder.parent / "figures" / "a.svg").write_text(SVG, encoding="utf-8")
    return hostile_project(folder, text, "a value")


def read(path):
    """An edition's text as its reader sees it."""
    if path.suffix == ".pdf":
        from pypdf import PdfReader

        return "\n".join(p.extract_text() for p in PdfReader(path).pages)
    if path.suffix in (".docx", ".zip"):
        with zipfile.ZipFile(path) as bundle:
            name = "word/document.xml" if path.suffix == ".docx" else "article.xml"
            return re.sub(r"<[^>]+>", "", bundle.read(name).decode("utf-8"))
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    return every_edition(*project(tmp_path_factory.mktemp("crossref") / "article"))


@pytest.mark.parametrize("fmt", sorted(formats.names()))
def test_every_edition_numbers_each_reference_as_quarto_does(editions, fmt):
    text = " ".join(read(editions[fmt]).replace(NBSP, " ").split())
    for named in NAMED.values():
        assert named in text, (fmt, named)
    assert "Figure 2" not in text  # the unlabelled figure is not counted
    for left in ("@fig-", "@tbl-", "@eq-", "@sec-", "{#"):
        assert left not in text, (fmt, left)


def test_captions_and_the_equation_carry_their_numbers(editions):
    page = editions["html"].read_text(encoding="utf-8")
    assert f"Figure{NBSP}1: A labelled figure." in page and f"Table{NBSP}1: A table." in page
    assert "An unlabelled figure." in page and f"Figure{NBSP}2" not in page
    pdf = " ".join(read(editions["pdf"]).split())
    assert "Figure 1: A labelled figure." in pdf and "Table 1: A table." in pdf and "(1)" in pdf


def test_jats_puts_each_number_in_its_label_and_points_each_reference_at_its_element(editions):
    with zipfile.ZipFile(editions["jats"]) as bundle:
        xml = bundle.read("article.xml").decode("utf-8")
    assert re.search(rf'<fig id="fig-a">\s*<label>Figure{NBSP}1</label>\s*<caption>\s*<p>A labelled figure\.', xml)
    assert re.search(rf'<table-wrap id="tbl-b">\s*<label>Table{NBSP}1</label>', xml)
    assert re.search(r'<disp-formula id="eq-c"><label>\(1\)</label>', xml) and "qquad" not in xml
    for ident, named in NAMED.items():
        assert f'rid="{ident}">{named.replace(" ", NBSP)}</xref>' in xml


@pytest.mark.parametrize(
    "wrong, kind, there",
    [
        ("@fig-b", "figure", "fig-a"),
        ("@tbl-z", "table", "tbl-b"),
        ("@eq-q", "equation", "eq-c"),
        ("@sec-x", "section", "sec-intro, sec-method"),
    ],
)
def test_a_reference_to_an_id_the_article_lacks_fails_with_its_line_and_the_ids_there_are(tmp_path, wrong, kind, there):
    text = ARTICLE.replace("As @eq-c and", f"As {wrong} and")
    line = text.splitlines().index(next(row for row in text.splitlines() if wrong in row)) + 1
    article, bindings = project(tmp_path / "article", text)
    with pytest.raises(RenderError) as refused:
        rendermod.render_format("pdf", article, bindings, tmp_path / "out.pdf", "pandoc")
    message = str(refused.value)
    assert message.startswith(f"{article}:{line}: the reference {wrong} names no {kind}"), message
    assert there in message


def test_on_the_quarto_route_the_page_numbers_alike(tmp_path, monkeypatch):
    from tests.test_quarto import require_quarto

    monkeypatch.setenv("PATH", require_quarto()["PATH"])
    article, bindings = project(tmp_path / "article")
    out = tmp_path / "article" / "build" / "article.html"
    rendermod.render_format("html", article, bindings, out, "quarto")
    text = " ".join(
        re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8")).replace("&nbsp;", " ").replace(NBSP, " ").split()
    )
    for named in NAMED.values():
        assert named in text, named
    assert "Figure 1: A labelled figure." in text and "Figure 2" not in text
