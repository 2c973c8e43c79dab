"""jats: the article as a journal takes it, build/article.jats.zip.

The zip holds article.xml (Pandoc's jats_archiving writer over the bound
tree), the figures it shows and a MECA manifest. article.xml is valid
against the JATS 1.3 Archiving DTD and shows every bound value the HTML
page shows, linked to its provenance row; its <front> carries the front
matter; each <graphic> names a file of the zip holding the figure's very
bytes; two renders of one build are the same bytes. Its check refuses a
bundle that breaks any of that, naming the line or the value."""

import io
import re
import zipfile

import pytest
from lxml import etree

from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json, write_json
from articlekit.render.formats import Job
from articlekit.render.formats import jats
from articlekit.render.page import render_format
from articlekit.render.renderers import RenderError
from tests.test_pdf import EXTRA, SVG
from tests.test_render import BoundValues, make_article

pytestmark = pytest.mark.workflow

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"

# the PDF tests' figure, with the accessible name save_figure writes
ALT = "A line rising from the left, dipping in the middle, ending at mid height."
TITLED_SVG = SVG.replace('viewBox="0 0 400 200">', f'viewBox="0 0 400 200"><title>{ALT}</title>', 1)

# front matter of every kind the JATS template takes
FRONT = """title: "Fixture: every shortcode form"
subtitle: "Its JATS edition"
author:
  - Ada Lovelace
  - name: Alan Turing
date: 2024-05-01
abstract: "A fixture with *every* shortcode."
keywords: [attention, reproducibility]
lang: en-GB
"""


def bound_project(folder, edit=lambda text: text):
    """The fixture article (PDF tests' figure and extras), its front matter
    FRONT, bound -> (article, bindings)."""
    article, values = make_article(folder)
    (folder.parent / "figures").mkdir(exist_ok=True)  # beside the article's folder, where a rule writes it
    (folder.parent / "figures" / "demo.svg").write_text(TITLED_SVG, encoding="utf-8")
    text = article.read_text(encoding="utf-8").replace("## Code", EXTRA + "\n## Code", 1)
    text = edit(text.replace('title: "Fixture: every shortcode form"\n', FRONT, 1))
    article.write_text(text, encoding="utf-8")
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), text, values, strict=False))
    return article, bindings


def unzipped(path):
    with zipfile.ZipFile(path) as bundle:
        return {name: bundle.read(name) for name in bundle.namelist()}


def parse(data):
    return etree.fromstring(data, etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False))


def plain(text):
    return " ".join(text.split())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jats--_x_") / "article"
    article, bindings = bound_project(folder)
    out = folder / "build" / "article.jats.zip"
    render_format("jats", article, bindings, out)
    page = folder / "build" / "article.html"
    render_format("html", article, bindings, page, "pandoc")
    return article, bindings, out, page


def job_for(built, produced, tmp_path):
    """The check's view of a bundle at `produced` (as render_format hands it)."""
    from articlekit.render.source import bound_text

    article, bindings, _, _ = built
    return Job(
        fmt=jats.FORMAT,
        article=article,
        source=article.read_text(encoding="utf-8"),
        bindings=bindings,
        document=read_json(bindings),
        bound=bound_text(article, read_json(bindings)),
        tree=None,
        figures=[],
        workdir=tmp_path,
        produced=produced,
        out=produced,
        renderer="pandoc",
        root=article.parent.parent,
    )


def planted(built, tmp_path, edit, entry="article.xml"):
    """The built bundle with its entry (article.xml) edited by edit(text) -> text."""
    entries = unzipped(built[2])
    entries[entry] = edit(entries[entry].decode("utf-8")).encode("utf-8")
    path = tmp_path / "planted.jats.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in entries.items():
            bundle.writestr(name, data)
    return job_for(built, path, tmp_path)


def test_the_bundle_holds_the_xml_its_figures_and_a_manifest(built):
    entries = unzipped(built[2])
    assert sorted(entries) == ["article.xml", "figures/demo.svg", "manifest.xml"]
    manifest = parse(entries["manifest.xml"])
    ns = {"m": "https://manuscriptexchange.org/schema/manifest"}
    listed = {
        i.find("m:instance", ns).get(XLINK_HREF): (i.get("item-type"), i.find("m:instance", ns).get("media-type"))
        for i in manifest.findall("m:item", ns)
    }
    assert listed == {
        "article.xml": ("article-metadata", "application/xml"),
        "figures/demo.svg": ("article-supporting-file", "image/svg+xml"),
    }


def test_the_manifest_is_valid_against_meca_s_dtd_and_names_it(built):
    data = unzipped(built[2])["manifest.xml"]
    assert etree.DTD(str(jats.MANIFEST_DTD)).validate(parse(data))
    assert '"-//MECA//DTD Manifest v1.0//en"' in data.decode("utf-8").split("<manifest", 1)[0]


@pytest.mark.parametrize(
    "edit, complaint",
    [
        # MECA requires the manifest's version
        (lambda xml: xml.replace(' manifest-version="1"', ""), r"not valid against MECA's manifest DTD(.|\n)*line \d+"),
        # an element MECA's manifest does not have
        (lambda xml: xml.replace("<instance ", "<blink/><instance ", 1), r"not valid against MECA's manifest DTD"),
        # a DOCTYPE of its own, with an entity a reader would expand
        (
            lambda xml: re.sub(r"<!DOCTYPE[^>]*>", '<!DOCTYPE manifest [<!ENTITY x SYSTEM "/etc/passwd">]>', xml),
            r"DOCTYPE is not MECA's manifest DTD's alone",
        ),
        (lambda xml: re.sub(r"<!DOCTYPE[^>]*>", "", xml), r"DOCTYPE is not MECA's manifest DTD's alone"),
    ],
    ids=["no-version", "unknown-element", "own-entity", "no-doctype"],
)
def test_the_check_refuses_a_manifest_meca_would_not_take(built, tmp_path, edit, complaint):
    job = planted(built, tmp_path, edit, entry="manifest.xml")
    with pytest.raises(RenderError, match=complaint):
        jats.check(job)


def test_it_is_valid_jats_archiving_1_3(built):
    data = unzipped(built[2])["article.xml"]
    doc = parse(data)
    assert etree.DTD(str(jats.DTD)).validate(doc)
    # the DOCTYPE names the DTD it is valid against, not Pandoc's 1.2
    assert "JATS-archivearticle1-3-mathml3.dtd" in data.decode("utf-8").split("<article", 1)[0]
    assert doc.get("dtd-version") == "1.3"


def test_every_value_the_page_shows_is_in_the_xml_linked_to_its_provenance_row(built):
    _, bindings, out, page = built
    parser = BoundValues()
    parser.feed(page.read_text(encoding="utf-8"))
    shown = [plain(t) for t in parser.texts]
    assert "0.921946" in shown and "92.19%" in shown
    doc = parse(unzipped(out)["article.xml"])
    ids = {e.get("id") for e in doc.iter() if e.get("id")}
    keys = {b["key"] for b in read_json(bindings)["bindings"].values()}
    # a value's xref, in document order ({{< source >}} is an xref whose text is its key)
    xrefs = [x for x in doc.find("body").iter("xref") if plain("".join(x.itertext())) not in keys]
    assert [plain("".join(x.itertext())) for x in xrefs] == shown
    assert all(x.get("rid") in ids and x.get("rid").startswith("v-") for x in xrefs)
    # the first place of a key keeps the id the audit links to
    assert xrefs[0].get("id") == "at-v-demo-dk64-unscaled-max-weight"


def test_front_matter_is_in_front(built):
    doc = parse(unzipped(built[2])["article.xml"])
    meta = doc.find("front/article-meta")
    text = lambda path: plain("".join(meta.find(path).itertext()))  # noqa: E731
    assert text("title-group/article-title") == "Fixture: every shortcode form"
    assert text("title-group/subtitle") == "Its JATS edition"
    assert [plain(n.text) for n in meta.iterfind("contrib-group/contrib/string-name")] == [
        "Ada Lovelace",
        "Alan Turing",
    ]
    assert meta.find("pub-date").get("iso-8601-date") == "2024-05-01"
    assert meta.find("abstract/p") is not None and text("abstract/p") == "A fixture with every shortcode."
    assert meta.find("abstract/p/italic").text == "every"
    assert [k.text for k in meta.iterfind("kwd-group/kwd")] == ["attention", "reproducibility"]
    assert doc.get("{http://www.w3.org/XML/1998/namespace}lang") == "en-GB"


def test_each_figure_is_packed_with_its_file_s_bytes(built):
    article, _, out, _ = built
    entries = unzipped(out)
    doc = parse(entries["article.xml"])
    hrefs = [g.get(XLINK_HREF) for g in doc.iter("graphic")]
    assert hrefs == ["figures/demo.svg"]  # relative, inside the zip
    # its alt text the file's own, as on the page; its caption the article's
    assert [plain(a.text) for a in doc.iter("alt-text")] == [ALT]
    assert plain("".join(doc.find(".//fig/caption").itertext())) == "A vector figure."
    assert entries["figures/demo.svg"] == (article.parent.parent / "figures" / "demo.svg").read_bytes()


def test_two_renders_give_the_same_bytes(built, tmp_path):
    article, bindings, out, _ = built
    again = tmp_path / "again.jats.zip"
    render_format("jats", article, bindings, again)
    assert again.read_bytes() == out.read_bytes()
    with zipfile.ZipFile(io.BytesIO(out.read_bytes())) as bundle:
        infos = bundle.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_the_check_passes_the_bundle_as_written(built, tmp_path):
    jats.check(job_for(built, built[2], tmp_path))


def test_the_check_names_an_element_jats_does_not_have(built, tmp_path):
    job = planted(built, tmp_path, lambda xml: xml.replace("<title>Extras</title>", "<title>Extras</title><blink/>"))
    with pytest.raises(RenderError, match=r"not valid JATS(.|\n)*line \d+: .*blink(.|\n)*write it another way"):
        jats.check(job)


def test_the_check_names_xml_that_is_not_well_formed(built, tmp_path):
    job = planted(built, tmp_path, lambda xml: xml.replace("</body>", "", 1))
    with pytest.raises(RenderError, match=r"not well-formed XML: line \d+"):
        jats.check(job)


def test_the_check_names_a_value_the_xml_lost(built, tmp_path):
    # the provenance table still quotes it: the prose's own text must show it
    job = planted(built, tmp_path, lambda xml: xml.replace(">92.19%</xref>", ">92.2%</xref>"))
    with pytest.raises(RenderError, match=r"demo\.dk64\.unscaled\.max_weight .*'92\.19%'.*index\.qmd:\d+"):
        jats.check(job)


def test_the_check_names_a_graphic_the_zip_lacks(built, tmp_path):
    job = planted(built, tmp_path, lambda xml: xml.replace('xlink:href="figures/demo.svg"', 'xlink:href="../x.svg"'))
    with pytest.raises(RenderError, match=r"line \d+: <graphic xlink:href='\.\./x\.svg'> names no file"):
        jats.check(job)


def test_the_check_names_a_shortcode_left_over(built, tmp_path):
    job = planted(built, tmp_path, lambda xml: xml.replace("<p>Built by", "<p>{{&lt; value demo.arrow &gt;}} Built by"))
    with pytest.raises(RenderError, match=r"shortcode\(s\) were not resolved"):
        jats.check(job)


def test_the_check_names_a_title_that_is_not_the_front_matter_s(built, tmp_path):
    job = planted(built, tmp_path, lambda xml: re.sub(r"<article-title>[^<]*", "<article-title>Another", xml))
    with pytest.raises(RenderError, match=r"<article-title> is 'Another', not the front matter's title"):
        jats.check(job)


def test_the_provenance_table_is_an_appendix_in_the_back_matter_not_the_body(built):
    """As in the PDF and Word: the body ends before the supplement, which a
    journal keeps in <back> (<app-group><app>); each value still links to its row."""
    from lxml import etree

    xml = unzipped(built[2])["article.xml"]
    root = etree.fromstring(xml[xml.index(b"<article") :])
    body, app = root.find("body"), root.find("back/app-group/app")
    assert app is not None and app.findtext("title") == "Where every number comes from"
    assert not [e for e in body.iter() if (e.get("id") or "").startswith("v-")]
    rows = {e.get("id") for e in app.iter() if (e.get("id") or "").startswith("v-")}
    assert rows and {x.get("rid") for x in body.iter("xref") if (x.get("rid") or "").startswith("v-")} <= rows
