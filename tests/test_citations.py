"""Citations: a bibliography named once in _quarto.yml, cited in every edition.

A small article citing two entries (a paper and software) and a
cross-reference, rendered in all five formats on the Pandoc route and the
page on the Quarto route; each edition read back: the citation printed as
its style says, the reference list holding both entries, no `[@` left,
and JATS with an <xref ref-type="bibr"> per citation and one <ref> with an
<element-citation> per cited entry.
"""

import re
import zipfile

import pytest

from articlekit.render import formats
from articlekit.render import page as rendermod
from articlekit.render.renderers import RenderError
from tests.test_crossref import NBSP, project, read
from tests.test_hostile_editions import every_edition

pytestmark = pytest.mark.workflow

BIB = """@inproceedings{vaswani2017,
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  title = {Attention Is All You Need},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2017},
  doi = {10.48550/arXiv.1706.03762}
}

@software{numpy,
  author = {Harris, Charles R. and Millman, K. Jarrod},
  title = {NumPy},
  year = {2020},
  url = {https://numpy.org},
  version = {2.1.0}
}
"""

ARTICLE = """---
title: "Citations"
---

## Intro

Attention comes from [@vaswani2017]; the arrays are @numpy's. See @fig-a.

![A figure.](../figures/a.svg){#fig-a}

The value: {{< value demo.error_message >}}.

## References

::: {#refs}
:::

## Where every number comes from

{{< provenance >}}
"""


def cited_project(folder, text=ARTICLE, config_line="bibliography: references.bib\n"):
    article, bindings = project(folder, text)
    (folder / "references.bib").write_text(BIB, encoding="utf-8")
    quarto_yml = folder / "_quarto.yml"  # the project's, which names its own bibliography: this one's instead
    text = re.sub(r"(?m)^bibliography:.*\n", "", quarto_yml.read_text(encoding="utf-8"))
    quarto_yml.write_text(config_line + text, encoding="utf-8")
    return article, bindings


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    return every_edition(*cited_project(tmp_path_factory.mktemp("cited") / "article"))


@pytest.mark.parametrize("fmt", sorted(formats.names()))
def test_every_edition_prints_the_citations_and_the_reference_list(editions, fmt):
    text = " ".join(read(editions[fmt]).replace(NBSP, " ").split())
    assert "Vaswani et al. 2017" in text, fmt  # the citation, in the default style (Chicago author-date)
    assert "Attention Is All You Need" in text or "Attention is all you need" in text, fmt  # its entry
    assert "NumPy" in text and "Harris" in text, fmt
    assert "[@" not in text and "@vaswani2017" not in text and "@numpy" not in text, fmt
    assert "Figure 1" in text and "@fig-a" not in text, fmt


@pytest.mark.parametrize("fmt", sorted(formats.names()))
def test_no_edition_carries_the_path_of_the_bibliography(editions, fmt):
    """A writer keeps the metadata it is given (Word as document properties):
    the checked copy's path is the build machine's, and differs per build."""
    path = editions[fmt]
    if path.suffix in (".docx", ".zip"):
        with zipfile.ZipFile(path) as bundle:
            raw = b"".join(bundle.read(name) for name in bundle.namelist())
    else:
        raw = path.read_bytes()
    assert b"cited-bibliography" not in raw and str(path.parent).encode() not in raw


def test_jats_holds_a_bibr_xref_per_citation_and_an_element_citation_per_entry(editions):
    with zipfile.ZipFile(editions["jats"]) as bundle:
        xml = bundle.read("article.xml").decode("utf-8")
    assert len(re.findall(r'<xref [^>]*ref-type="bibr"', xml)) == 2
    refs = re.findall(r'<ref id="ref-(\w+)">\s*<element-citation', xml)
    assert sorted(refs) == ["numpy", "vaswani2017"]
    assert "<pub-id pub-id-type=\"doi\">10.48550/arXiv.1706.03762</pub-id>" in xml
    assert re.search(r"<ref-list>\s*<title>References</title>", xml)


def test_a_citation_of_a_key_the_bibliography_lacks_fails_with_its_line(tmp_path):
    text = ARTICLE.replace("[@vaswani2017]", "[@vaswani2018]")
    article, bindings = cited_project(tmp_path / "article", text)
    with pytest.raises(RenderError) as refused:
        rendermod.render_format("docx", article, bindings, tmp_path / "out.docx", "pandoc")
    assert str(refused.value).startswith(f"{article}:7: the citation @vaswani2018 names no entry"), refused.value


@pytest.mark.parametrize(
    "config_line, said",
    [
        ("bibliography: ../../etc/refs.bib\n", "is not a file of the article's folder"),
        ("bibliography: missing.bib\n", "is not a regular file here"),
        ("bibliography: index.qmd\n", "a bibliography is one of"),
        ("format:\n  html:\n    bibliography: references.bib\n", "name it once at the top of _quarto.yml"),
    ],
)
def test_a_bibliography_that_is_not_the_articles_own_file_is_refused(tmp_path, config_line, said):
    article, bindings = cited_project(tmp_path / "article", config_line=config_line)
    if "format:" in config_line:  # a second format: key would not be YAML; fold it into the one there
        quarto_yml = article.parent / "_quarto.yml"
        text = quarto_yml.read_text(encoding="utf-8").replace(config_line, "")
        quarto_yml.write_text(text.replace("  html:\n", "  html:\n    bibliography: references.bib\n", 1))
    with pytest.raises(RenderError, match=re.escape(said)):
        rendermod.render_format("gfm", article, bindings, tmp_path / "out.md", "pandoc")


def test_on_the_quarto_route_the_page_cites_alike(tmp_path, monkeypatch):
    from tests.test_quarto import require_quarto

    monkeypatch.setenv("PATH", require_quarto()["PATH"])
    article, bindings = cited_project(tmp_path / "article")
    out = tmp_path / "article" / "build" / "article.html"
    rendermod.render_format("html", article, bindings, out, "quarto")
    text = " ".join(re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8")).replace("&nbsp;", " ").split())
    assert "Vaswani et al. 2017" in text and "Attention Is All You Need" in text and "[@" not in text
