"""docx: the Word edition (articlekit/render/formats/docx.py) holds every
bound value the page shows, each still a link to its provenance row (an
internal hyperlink to the row's bookmark); the mark of a failed claim
bold, in its own character style; each figure embedded, an SVG with a PNG
beside it for readers that do not read SVG; the same bytes on every
render; and its check stops a document that lost a value, naming it."""

import dataclasses
import re
import subprocess
import zipfile
from collections import Counter
from html.parser import HTMLParser

import docx
from docx.enum.section import WD_ORIENT
from docx.shared import Pt, Twips
import pytest

from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json, write_json
from articlekit.render import page as rendermod
from articlekit.render.formats import docx as docxmod
from articlekit.render.renderers import RenderError, pandoc_path
from tests.test_pdf import EXTRA, SVG
from tests.test_render import BoundValues, make_article

pytestmark = pytest.mark.workflow

# the PDF tests' figure, with the alt text a figure's file carries (its <title>)
ALT = "One line rising then falling, in a box."
TITLED_SVG = SVG.replace(">", f"><title>{ALT}</title>", 1)


class RowLinks(HTMLParser):
    """(anchor, text) of every <a class="bound-value"> and <a class="bound-source">
    (a key, linked to its row as a value is)."""

    def __init__(self):
        super().__init__()
        self.links, self._in = [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and {"bound-value", "bound-source"} & set((attrs.get("class") or "").split()):
            self._in = True
            self.links.append([attrs["href"].removeprefix("#"), ""])

    def handle_endtag(self, tag):
        self._in = self._in and tag != "a"

    def handle_data(self, data):
        if self._in:
            self.links[-1][1] += data


def article_with_figure(folder):
    """The render tests' fixture, with the PDF tests' figure and failed claim."""
    article, values = make_article(folder)
    (folder.parent / "figures").mkdir()
    (folder.parent / "figures" / "demo.svg").write_text(TITLED_SVG, encoding="utf-8")
    article.write_text(article.read_text(encoding="utf-8").replace("## Code", EXTRA + "\n## Code", 1), encoding="utf-8")
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict=False))
    return article, bindings


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docx--_x_") / "article"
    article, bindings = article_with_figure(folder)
    html, out = folder / "build" / "article.html", folder / "build" / "article.docx"
    rendermod.render_format("html", article, bindings, html, "pandoc")
    rendermod.render_format("docx", article, bindings, out)
    return article, bindings, html.read_text(encoding="utf-8"), out


def hyperlinks(document):
    """(bookmark it links to, its text) of every internal hyperlink, tables' cells included."""
    return [
        (link.fragment, link.text) for p in docxmod.every_paragraph(document) for link in p.hyperlinks if link.fragment
    ]


def test_every_bound_value_of_the_page_is_a_link_to_its_row_in_word(built):
    _, _, html, out = built
    values, page = BoundValues(), RowLinks()
    values.feed(html)
    page.feed(html)
    assert values.texts and len(page.links) > len(values.texts)  # the sources' links too
    # the same links in Word, each to its row's bookmark
    expected = Counter((docxmod.word_bookmark(anchor), text) for anchor, text in page.links)
    rows = {docxmod.word_bookmark(anchor) for anchor, _ in page.links}
    links = [(anchor, text) for anchor, text in hyperlinks(docx.Document(out)) if anchor in rows]
    assert Counter(links) == expected
    xml = zipfile.ZipFile(out).read("word/document.xml").decode()
    assert rows <= set(re.findall(r'w:bookmarkStart [^>]*w:name="([^"]+)"', xml))


def test_the_provenance_table_is_a_word_table_of_one_row_per_key(built):
    _, bindings, _, out = built
    keys = {b["key"] for b in read_json(bindings)["bindings"].values()}
    table, found, rows = docxmod.provenance_rows(docx.Document(out), keys)
    assert found == keys and rows == len(keys)
    assert table.style.name == "Table"  # Pandoc's table style, from the reference document


def test_the_section_of_the_provenance_table_is_on_landscape_pages_the_body_on_portrait_a4(built):
    """As the PDF's supplement: seven columns on a portrait page broke every word."""
    _, bindings, _, out = built
    document = docx.Document(out)
    body, appendix = document.sections[0], document.sections[-1]
    assert len(document.sections) == 2
    assert (body.orientation, body.page_width, body.page_height) == (
        WD_ORIENT.PORTRAIT,
        Twips(docxmod.A4[0]),
        Twips(docxmod.A4[1]),
    )
    assert (appendix.orientation, appendix.page_width) == (WD_ORIENT.LANDSCAPE, Twips(docxmod.A4[1]))
    keys = {b["key"] for b in read_json(bindings)["bindings"].values()}
    table, _, _ = docxmod.provenance_rows(document, keys)
    sizes = {run.font.size for row in table.rows for cell in row.cells for p in cell.paragraphs for run in p.runs}
    assert sizes == {Pt(8)}
    # the section break sits right before the supplement's title, then the heading of the table's section
    xml = zipfile.ZipFile(out).read("word/document.xml").decode()
    assert re.search(
        r'<w:sectPr><w:pgSz w:w="11906" w:h="16838" w:orient="portrait"/>.*?</w:p>'
        r'<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Supplementary material</w:t></w:r></w:p>'
        r'<w:p><w:pPr><w:pStyle w:val="Heading',
        xml,
        re.S,
    )
    # the body holds no supplement: its title is the first paragraph of the last section
    titles = [p.text for p in document.paragraphs if p.style.name == "Title"]
    assert titles.count("Supplementary material") == 1


def test_a_failed_claim_is_bold_in_its_own_character_style(built):
    _, _, _, out = built
    document = docx.Document(out)
    marks = [run for p in docxmod.every_paragraph(document) for run in p.runs if "⚠ claim failed" in run.text]
    assert marks
    for run in marks:
        assert run.style.name == "Claim Failed"
        assert run.bold
        assert run.style.font.color.rgb == docx.shared.RGBColor.from_string(docxmod.CLAIM_COLOURS["claim-failed"])


def test_the_figure_is_embedded_as_svg_with_a_png_beside_it(built):
    _, _, _, out = built
    document = docx.Document(out)
    assert len(document.inline_shapes) == 1
    # embedded by articlekit (embed_figures.lua), with the file's alt text, not the caption
    assert document.inline_shapes[0]._inline.docPr.get("descr") == ALT
    media = sorted(name for name in zipfile.ZipFile(out).namelist() if name.startswith("word/media/"))
    assert [name.rsplit(".", 1)[1] for name in media] == ["png", "svg"]
    assert zipfile.ZipFile(out).read(next(n for n in media if n.endswith(".svg"))).decode() == TITLED_SVG
    assert "data:" not in zipfile.ZipFile(out).read("word/document.xml").decode()  # no second copy as its name
    blip = document.inline_shapes[0]._inline.xpath(".//a:blip")[0]
    png = document.part.related_parts[blip.get(docxmod.EMBED)]
    assert png.blob.startswith(b"\x89PNG")


def test_two_renders_give_the_same_bytes(built, tmp_path, monkeypatch):
    article, bindings, _, out = built
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    again = tmp_path / "again.docx"
    rendermod.render_format("docx", article, bindings, again)
    assert again.read_bytes() == out.read_bytes()
    core = zipfile.ZipFile(out).read("docProps/core.xml").decode()
    assert "1980-01-01T00:00:00Z" in core  # no date in the front matter: the undated epoch
    custom = zipfile.ZipFile(out).read("docProps/custom.xml").decode()
    assert "figure-data" not in custom and str(tmp_path.parent) not in custom  # no work folder's path


def test_source_date_epoch_sets_the_documents_date(built, tmp_path, monkeypatch):
    article, bindings, _, _ = built
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    out = tmp_path / "dated.docx"
    rendermod.render_format("docx", article, bindings, out)
    assert "2026-01-01T00:00:00Z" in zipfile.ZipFile(out).read("docProps/core.xml").decode()


def test_a_document_that_lost_a_value_fails_its_check_naming_the_key(built, tmp_path):
    article, bindings, _, _ = built
    lost = read_json(bindings)["bindings"]["demo.masked_max_weight||"]
    assert lost["in_prose"]

    def write_then_lose_it(job):
        name = docxmod.write(job)
        with zipfile.ZipFile(job.produced) as package:
            files = {info.filename: package.read(info) for info in package.infolist()}
        document = files["word/document.xml"].decode()
        files["word/document.xml"] = document.replace(f">{lost['text']}<", "><").encode()
        with zipfile.ZipFile(job.produced, "w") as package:
            for name_, data in files.items():
                package.writestr(name_, data)
        return name

    out = tmp_path / "article.docx"
    tampered = dataclasses.replace(docxmod.FORMAT, write=write_then_lose_it)
    with pytest.raises(RenderError, match=r"the value of demo\.masked_max_weight .* is not in the document"):
        rendermod.render_format(tampered, article, bindings, out)
    assert not out.exists()


def test_a_long_anchor_is_the_bookmark_pandoc_writes(tmp_path):
    """Word takes 40 characters to a bookmark; the check must name the one
    Pandoc writes for a longer anchor (the real article's keys are long)."""
    anchor = "v-robustness-scaling-dk64-unscaled-max-weight-holds-fraction"
    source, out = tmp_path / "a.md", tmp_path / "a.docx"
    source.write_text(f"[76%](#{anchor})\n\n[row]{{#{anchor}}}\n", encoding="utf-8")
    subprocess.run([pandoc_path(), str(source), "--to", "docx", "--output", str(out)], check=True)
    document = docx.Document(out)
    assert hyperlinks(document) == [(docxmod.word_bookmark(anchor), "76%")]
    assert f'w:name="{docxmod.word_bookmark(anchor)}"' in zipfile.ZipFile(out).read("word/document.xml").decode()
