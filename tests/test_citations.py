"""Citations: a bibliography named once in _quarto.yml, cited in every edition.

A small article citing two entries (a paper and software) and a
cross-reference, rendered in all five formats on the Pandoc route and the
page on the Quarto route; each edition read back: the citation printed as
its style says, the reference list holding both entries, no `[@` left,
and JATS with an <xref ref-type="bibr"> per citation and one <ref> with an
<element-citation> per cited entry.

Software cited with the version the build ran: a BibTeX field holding
{{< value KEY >}} prints the value as the prose does, on both routes and in
every edition, escaped; a key the bindings lack, any other shortcode, or a
value in a CSL JSON bibliography stops the render at the bibliography's line.
"""

import json
import re
import zipfile

import pytest
from lxml import etree

from articlekit.render import formats
from articlekit.render import page as rendermod
from articlekit.render.renderers import RenderError
from tests.test_crossref import NBSP, SVG, project, read
from tests.test_hostile_editions import every_edition, hostile_project

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


def cited_project(
    folder, text=ARTICLE, config_line="bibliography: references.bib\n", bib=BIB, value=None, bib_name="references.bib"
):
    """The article citing from `bib` (written as bib_name), _quarto.yml's
    config_line naming its bibliography; the value the article prints
    (demo.error_message) `value` where given."""
    if value is None:
        article, bindings = project(folder, text)
    else:
        (folder.parent / "figures").mkdir(parents=True, exist_ok=True)
        (folder.parent / "figures" / "a.svg").write_text(SVG, encoding="utf-8")
        article, bindings = hostile_project(folder, text, value)
    (folder / bib_name).write_text(bib, encoding="utf-8")
    quarto_yml = folder / "_quarto.yml"  # the project's, which names its own bibliography: this one's instead
    text = re.sub(r"(?m)^bibliography:.*\n", "", quarto_yml.read_text(encoding="utf-8"))
    quarto_yml.write_text(config_line + text, encoding="utf-8")
    return article, bindings


# A folder name that Pandoc would misread where it reads a path: it decodes
# each %XX in a path it fetches (the bibliography, the style sheet, the Word
# file's reference document, the PDF's header and figures), and reads the
# paths of its metadata as Markdown (emphasis, a dash, an ellipsis, a quote,
# two spaces as one).
AWKWARD_FOLDER = "drafts%20v2  -_x_ --it's ..."


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    return every_edition(*cited_project(tmp_path_factory.mktemp("cited") / AWKWARD_FOLDER / "article"))


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


@pytest.mark.quarto
@pytest.mark.parametrize("fmt, name", [("html", "article.html"), ("gfm", "article.md")])
def test_on_the_quarto_route_the_page_and_the_markdown_cite_alike(tmp_path, monkeypatch, fmt, name):
    from tests.test_quarto import require_quarto

    monkeypatch.setenv("PATH", require_quarto()["PATH"])
    # in a folder whose name Pandoc would misread (AWKWARD_FOLDER): the
    # bibliography's path Quarto is handed reaches Pandoc's metadata, which
    # is Markdown, and Pandoc decodes its %XX as it reads the file
    folder = tmp_path / AWKWARD_FOLDER / "article"
    article, bindings = cited_project(folder)
    out = folder / "build" / name
    rendermod.render_format(fmt, article, bindings, out, "quarto")
    text = " ".join(re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8")).replace("&nbsp;", " ").split())
    text = text.replace(NBSP, " ").replace("\\", "")
    assert "Vaswani et al. 2017" in text and "Attention Is All You Need" in text, text[-800:]
    assert "[@" not in text and "@vaswani2017" not in text


# --- software cited with the version the build ran ------------------------------------------

VERSION = "2.1.0+cpu"

# the value the article prints (demo.error_message, here the version) bound
# into the entry's field, inside the field's own braces
SOFTWARE = """
@software{numpy-software,
  author  = {{The NumPy community}},
  title   = {NumPy},
  version = {{{< value demo.error_message >}}},
  url     = {https://numpy.org}
}
"""

VERSIONED = ARTICLE.replace("the arrays are @numpy's", "the arrays are NumPy's [@numpy-software; @numpy]")


def versioned_project(folder, value=VERSION, entry=SOFTWARE, text=VERSIONED):
    return cited_project(folder, text, bib=BIB + entry, value=value)


@pytest.fixture(scope="module")
def versioned(tmp_path_factory):
    return every_edition(*versioned_project(tmp_path_factory.mktemp("versioned") / "article"))


@pytest.mark.parametrize("fmt", sorted(formats.names()))
def test_every_edition_cites_the_software_with_the_version_the_build_ran(versioned, fmt):
    """The reference list prints the entry's version as the bindings print
    the value; no edition shows the shortcode. JATS's element citation is
    software with its <version>, which Pandoc's JATS writer leaves out (its
    References.hs) and the JATS edition adds from the bound bibliography."""
    text = " ".join(read(versioned[fmt]).replace(NBSP, " ").split())
    assert "{{<" not in text and "value demo" not in text, fmt
    text = re.sub(r"<[^>]+>|\*", "", text)  # the page's and the markdown's markup: the title in italics
    if fmt == "jats":
        with zipfile.ZipFile(versioned[fmt]) as bundle:
            xml = bundle.read("article.xml").decode("utf-8")
        entry = re.search(r'<ref id="ref-numpy-software">\s*<element-citation publication-type="(\w+)"', xml)
        assert entry and entry.group(1) == "software"
        assert "The NumPy community" in text
        parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
        (version,) = etree.fromstring(xml.encode("utf-8"), parser).xpath(
            "//ref[@id='ref-numpy-software']/element-citation/version/text()"
        )
        assert version == VERSION
    else:
        assert f"The NumPy community. n.d. NumPy. V. {VERSION}." in text, (fmt, text[-600:])


def test_a_value_the_bindings_lack_stops_the_render_at_the_bibliographys_line(tmp_path):
    entry = SOFTWARE.replace("demo.error_message", "environment.numpy")
    article, bindings = versioned_project(tmp_path / "article", entry=entry)
    bib = article.parent / "references.bib"
    line = bib.read_text(encoding="utf-8").splitlines().index("  version = {{{< value environment.numpy >}}},") + 1
    with pytest.raises(RenderError) as refused:
        rendermod.render_format("gfm", article, bindings, tmp_path / "out.md", "pandoc")
    said = str(refused.value)
    assert said.startswith(f"{bib.resolve()}:{line}: {{{{< value environment.numpy >}}}}: the bindings"), said
    assert "print it in the article too" in said


@pytest.mark.parametrize(
    "field, said",
    [
        ("{{{< meta title >}}}", "a bibliography prints a value only"),
        ('{{{< value demo.error_message expect="== 1" >}}}', "a bibliography prints a value only"),
        ("{{{< value demo.error_message }}", "is not closed on its line"),
    ],
)
def test_any_other_shortcode_in_the_bibliography_is_refused_with_its_line(tmp_path, field, said):
    entry = SOFTWARE.replace("{{{< value demo.error_message >}}}", field)
    article, bindings = versioned_project(tmp_path / "article", entry=entry)
    bib = (article.parent / "references.bib").resolve()
    line = BIB.count("\n") + 5  # the version field's line
    with pytest.raises(RenderError, match=re.escape(said)) as refused:
        rendermod.render_format("html", article, bindings, tmp_path / "out.html", "pandoc")
    assert str(refused.value).startswith(f"{bib}:{line}: "), refused.value


def test_a_value_in_a_csl_json_bibliography_is_refused(tmp_path):
    """citeproc reads a CSL JSON string as markup (<i>, <b>, ...): a value
    is bound in BibTeX, whose text articlekit escapes, only."""
    entry = {
        "id": "numpy-software",
        "type": "software",
        "title": "NumPy",
        "version": "{{< value demo.error_message >}}",
    }
    article, bindings = cited_project(
        tmp_path / "article",
        VERSIONED.replace("; @numpy]", "]"),
        config_line="bibliography: references.json\n",
        bib=json.dumps([entry], indent=1),
        bib_name="references.json",
    )
    with pytest.raises(RenderError, match=r"references\.json:\d+: .* a BibTeX bibliography \(\.bib\) only"):
        rendermod.render_format("gfm", article, bindings, tmp_path / "out.md", "pandoc")


SPECIALS = "1.0 {x} 50% #1 & a~b ^2 $5 C:\\path a--b it's `q` \"d\" a_b @c"


def test_a_value_with_bibtex_specials_is_printed_as_its_text(tmp_path):
    """Each of BibTeX's specials, and what LaTeX in a field would make of
    a character (a dash of --, a curly quote), is escaped: the reference
    list prints the value as the prose does."""
    article, bindings = versioned_project(tmp_path / "article", value=SPECIALS)
    out = tmp_path / "article" / "build" / "article.html"
    rendermod.render_format("html", article, bindings, out, "pandoc")
    import html

    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", out.read_text(encoding="utf-8"))).split())
    assert f"NumPy. V. {SPECIALS}" in text, text[-800:]


@pytest.mark.quarto
def test_on_the_quarto_route_the_reference_list_shows_the_bound_version(tmp_path, monkeypatch):
    """Quarto reads a bound copy of the bibliography (under build/, in the
    render's work folder), never the author's file."""
    from tests.test_quarto import require_quarto

    monkeypatch.setenv("PATH", require_quarto()["PATH"])
    article, bindings = versioned_project(tmp_path / "article")
    out = tmp_path / "article" / "build" / "article.html"
    rendermod.render_format("html", article, bindings, out, "quarto")
    text = " ".join(re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8")).replace("&nbsp;", " ").split())
    assert f"NumPy. V. {VERSION}" in text.replace(" .", "."), text[-800:]
    assert "{{<" not in text and "value demo" not in text
