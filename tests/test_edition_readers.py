"""Every edition is checked by a reader of its own (issue 38): the PDF, the
Word document and the JATS bundle carry only what the build made, and
nothing in them runs, loads or opens another file. Each reader passes the
edition the build writes and refuses a hostile one, naming what it found;
the PDF's Typst reads nothing outside a root that holds its source and
the article's figures."""

import base64
import dataclasses
import io
import shutil
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pypdf
import pypdf.actions
import pytest
from pypdf.annotations import Link
from pypdf.generic import DictionaryObject, NameObject, TextStringObject

from articlekit.article.bind import bind
from articlekit.core.jsonio import write_json
from articlekit.render import formats
from articlekit.render.formats import jats
from articlekit.render.formats import pdf as pdfmod
from articlekit.render.page import render_format
from articlekit.render.renderers import RenderError
from tests.test_pdf import EXTRA, SVG
from tests.test_render import make_article

pytestmark = pytest.mark.workflow


def png(width=4, height=3):
    """A small PNG with an alpha channel (Typst gives it a soft mask)."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# the PDF tests' figure with a raster picture inside, a PNG figure, and a
# link of each kind an article writes: a web page, mail, and a file beside
# the edition (the real article links to its audit.html)
WITH_PICTURE = SVG.replace("</svg>", f'<image href="data:image/png;base64,{base64.b64encode(png()).decode()}"/></svg>')
LINKS = (
    "\n![A raster figure.](../figures/raster.png)\n\n"
    "See the [audit](audit.html#row), <https://example.com/a> and [mail](mailto:a@b.c).\n"
)


@dataclasses.dataclass
class Editions:
    folder: Path
    jobs: dict  # format name -> the Job its render checked
    outs: dict  # format name -> the edition the build wrote


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    """The fixture article rendered to PDF, Word and JATS, each render's
    Job kept to hand its check other files."""
    folder = tmp_path_factory.mktemp("readers") / "article"
    article, values = make_article(folder)
    (folder.parent / "figures").mkdir()
    (folder.parent / "figures" / "demo.svg").write_text(WITH_PICTURE, encoding="utf-8")
    (folder.parent / "figures" / "raster.png").write_bytes(png())
    text = article.read_text(encoding="utf-8").replace("## Code", EXTRA + LINKS + "\n## Code", 1)
    article.write_text(text, encoding="utf-8")
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), text, values, strict=False))
    jobs, outs = {}, {}
    for name in ("pdf", "docx", "jats"):
        fmt = formats.get(name)

        def keep(job, fmt=fmt):
            jobs[fmt.name] = job
            return fmt.write(job)

        outs[name] = folder / "build" / Path(fmt.output).name
        render_format(dataclasses.replace(fmt, write=keep), article, bindings, outs[name])
    return Editions(folder, jobs, outs)


def checked(editions, name, produced, tmp_path):
    """Run format `name`'s check on the file `produced`, as render_format would."""
    job = dataclasses.replace(editions.jobs[name], produced=produced, out=produced, workdir=tmp_path)
    formats.get(name).check(job)


def rezipped(source, path, edit):
    """The zip at source with its entries {name: bytes} changed by edit(entries), written to path."""
    with zipfile.ZipFile(source) as package:
        entries = {info.filename: package.read(info) for info in package.infolist()}
    edit(entries)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in entries.items():
            package.writestr(name, data)
    return path


def with_entry(source, path, info):
    """The zip at source with one more entry, `info` (a ZipInfo), holding a line."""
    shutil.copyfile(source, path)
    with zipfile.ZipFile(path, "a") as package:
        package.writestr(info, b"root:x:0:0:root:/root:/bin/bash\n")
    return path


def symlink(name):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


# --- the PDF: Typst's root -----------------------------------------------------


def test_typst_compiles_in_a_root_that_holds_its_source_and_the_figures_alone(tmp_path):
    (tmp_path / "figure.svg").write_text(SVG, encoding="utf-8")
    typ = tmp_path / "article.typ"
    typ.write_text('#image("/project/figures/figure.svg")\n', encoding="utf-8")
    root, _ = pdfmod.typst_root(typ, {"/project/article/../figures/figure.svg": tmp_path / "figure.svg"})
    assert root.parent == tmp_path
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "article.typ",
        "project/figures/figure.svg",
    ]
    assert pdfmod.compile_pdf(typ, {"/project/figures/figure.svg": tmp_path / "figure.svg"}).startswith(b"%PDF-")


@pytest.mark.parametrize(
    "source, said",
    [
        ('#read("/etc/passwd")', r"file not found \(searched at /etc/passwd\) \(line 2 of its Typst source: "),
        ('#image("../../etc/hostname")', r'path `"\.\./\.\./etc/hostname"` would escape the project root'),
    ],
)
def test_a_typst_source_cannot_read_a_file_of_the_machine(tmp_path, source, said):
    typ = tmp_path / "article.typ"
    typ.write_text(f"Hello.\n{source}\n", encoding="utf-8")
    with pytest.raises(RenderError, match=r"^article/index\.qmd: Typst could not compile the PDF: " + said) as caught:
        pdfmod.compile_pdf(typ, article=Path("article/index.qmd"))
    assert pdfmod.TYPST_ROOT not in str(caught.value)  # the article is named, not a scratch folder


def test_an_svg_figure_that_links_a_picture_outside_figures_cannot_bring_it_in(tmp_path):
    """The hostile tester's SVG: its <image href="../..."> names a file the
    build did not make, which Typst embedded while its root was /. The
    root alone refuses it, whatever checked the figure before."""
    (tmp_path / "project" / "figures").mkdir(parents=True)
    (tmp_path / "project" / "secret.png").write_bytes(png())
    evil = tmp_path / "project" / "figures" / "evil.svg"
    evil.write_text(SVG.replace("</svg>", '<image href="../secret.png" width="4" height="3"/></svg>'), encoding="utf-8")
    typ = tmp_path / "article.typ"
    typ.write_text(f'#image("{evil}")\n', encoding="utf-8")
    with pytest.raises(RenderError, match=rf"failed to load linked image \.\./secret\.png in SVG .*\(in {evil}\)"):
        pdfmod.compile_pdf(typ, {str(evil): evil}, Path("article/index.qmd"))


# --- the PDF's reader ----------------------------------------------------------


def test_the_pdf_reader_passes_the_pdf_the_build_writes(editions, tmp_path):
    reader = pypdf.PdfReader(editions.outs["pdf"])
    uris = {str(obj.get("/URI")) for obj in pdfmod.pdf_objects(reader) if isinstance(obj, dict) and "/URI" in obj}
    assert uris == {"audit.html#row", "https://example.com/a", "mailto:a@b.c"}
    checked(editions, "pdf", editions.outs["pdf"], tmp_path)


def test_the_pdf_reader_reaches_every_page_from_the_trailer(editions):
    """pdf_objects walks what a viewer reaches: the catalogue and every page."""
    reader = pypdf.PdfReader(io.BytesIO(editions.outs["pdf"].read_bytes()))
    objects = list(pdfmod.pdf_objects(reader))
    assert any(isinstance(o, dict) and o.get("/Type") == "/Catalog" for o in objects)
    assert sum(isinstance(o, dict) and o.get("/Type") == "/Page" for o in objects) == len(reader.pages) > 1


def hostile_pdf(editions, path, plant):
    writer = pypdf.PdfWriter(clone_from=editions.outs["pdf"])
    plant(writer)
    writer.write(path)
    return path


def launch(writer):
    """A link on the first page that runs a program when clicked."""
    action = {NameObject("/S"): NameObject("/Launch"), NameObject("/F"): TextStringObject("/bin/sh")}
    link = Link(rect=(0, 0, 20, 20), url="https://example.com")
    link[NameObject("/A")] = DictionaryObject(action)
    writer.add_annotation(0, link)


@pytest.mark.parametrize(
    "plant, found",
    [
        (
            lambda w: w.add_open_action(pypdf.actions.JavaScript("app.alert('hello');")),
            r"an entry /(JS|JavaScript) \(JavaScript",
        ),
        (launch, r"a /Launch action"),
        (lambda w: w.add_attachment("passwd", b"root:x:0:0"), r"an entry /EmbeddedFiles"),
        (
            lambda w: w.add_annotation(0, Link(rect=(0, 0, 9, 9), url="file:///etc/passwd")),
            r"the PDF's link 'file:///etc/passwd' uses the scheme file:",
        ),
    ],
    ids=["javascript", "launch", "attached-file", "file-link"],
)
def test_the_pdf_reader_refuses_what_runs_opens_or_holds_a_file(editions, tmp_path, plant, found):
    path = hostile_pdf(editions, tmp_path / "hostile.pdf", plant)
    with pytest.raises(RenderError, match=found):
        checked(editions, "pdf", path, tmp_path)


def typst_pdf(tmp_path, source, figures=None):
    typ = tmp_path / "page.typ"
    typ.write_text(source, encoding="utf-8")
    path = tmp_path / "hostile.pdf"
    path.write_bytes(pdfmod.compile_pdf(typ, figures))
    return path


def test_the_pdf_reader_refuses_a_picture_no_figure_holds(editions, tmp_path):
    pictures = {}
    for size in (5, 6, 7):  # three pictures Typst keeps apart
        (tmp_path / f"{size}.png").write_bytes(png(size, size))
        pictures[f"/{size}.png"] = tmp_path / f"{size}.png"
    path = typst_pdf(tmp_path, "".join(f'#image("{name}")\n' for name in pictures), pictures)
    # the figures hold two: the PNG, and the picture inside the SVG
    with pytest.raises(RenderError, match=r"holds 3 picture\(s\), but the 2 figure\(s\) .* hold 2"):
        checked(editions, "pdf", path, tmp_path)


def test_the_pdf_reader_refuses_text_of_the_machines_own_files(editions, tmp_path):
    """A heuristic beside the root: the first line of /etc/passwd in the text."""
    if "/etc/passwd" not in dict(pdfmod.canaries(pdfmod.CANARY_FILES)):
        pytest.skip("this machine has no /etc/passwd to read")
    line = Path("/etc/passwd").read_text(encoding="utf-8").splitlines()[0]
    path = typst_pdf(tmp_path, "#" + '"' + line.replace("\\", "\\\\").replace('"', '\\"') + '"\n')
    with pytest.raises(RenderError, match=r"holds the first line of /etc/passwd, a file of this machine"):
        checked(editions, "pdf", path, tmp_path)


def test_a_line_of_the_machine_the_article_prints_itself_is_no_leak(editions, tmp_path, monkeypatch):
    """The real article prints its host's name (a bound value): the
    canary check looks only for what the article does not print."""
    printed, unprinted = tmp_path / "printed", tmp_path / "unprinted"
    printed.write_text("Fixture: every shortcode form\n", encoding="utf-8")  # the article's title
    unprinted.write_text("a line no article prints\n", encoding="utf-8")
    monkeypatch.setattr(pdfmod, "CANARY_FILES", (str(printed), str(unprinted)))
    checked(editions, "pdf", editions.outs["pdf"], tmp_path)
    path = typst_pdf(tmp_path, "Fixture: every shortcode form, and a line no article prints.\n")
    with pytest.raises(RenderError, match=rf"holds the first line of {unprinted}, "):
        checked(editions, "pdf", path, tmp_path)


# --- the Word document's reader ------------------------------------------------


def test_the_word_reader_passes_the_document_the_build_writes(editions, tmp_path):
    checked(editions, "docx", editions.outs["docx"], tmp_path)


def hostile_docx(editions, path, plant):
    """The build's document opened with python-docx, plant(document), saved."""
    import docx

    document = docx.Document(editions.outs["docx"])
    plant(document)
    document.save(path)
    return path


def external(document, kind, target):
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    return document.part.relate_to(target, getattr(RT, kind), is_external=True)


def field(document, instruction, simple):
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    run = document.add_paragraph().add_run()
    if simple:
        element = OxmlElement("w:fldSimple")
        element.set(qn("w:instr"), instruction)
        run._r.addnext(element)
    else:
        code = OxmlElement("w:instrText")
        code.text = instruction
        run._r.append(code)


def linked_picture(document):
    from docx.oxml.ns import qn

    blip = next(document.element.body.iter(qn("a:blip")))
    blip.set(qn("r:link"), external(document, "IMAGE", "file:///etc/passwd"))


def chunk(document):
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    alt = OxmlElement("w:altChunk")
    alt.set(qn("r:id"), document.part.relate_to("../../../etc/passwd", RT_AFCHUNK, is_external=True))
    document.element.body.insert(0, alt)


RT_AFCHUNK = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk"


@pytest.mark.parametrize(
    "plant, found",
    [
        (
            lambda d: external(d, "HYPERLINK", "file:///etc/passwd"),
            r"hyperlink relationship to 'file:///etc/passwd', which uses the scheme file:",
        ),
        (
            lambda d: external(d, "IMAGE", "https://example.com/x.png"),
            r"external image relationship to 'https://e.*', which is fetched when Word opens",
        ),
        (lambda d: field(d, 'INCLUDETEXT "/etc/passwd"', True), r"a field code 'INCLUDETEXT \"/etc/passwd\"'"),
        (lambda d: field(d, ' INCLUDEPICTURE "x.png" ', False), r"a field code 'INCLUDEPICTURE \"x\.png\"'"),
        (linked_picture, r"a picture linked, not embedded \(<blip r:link='rId\d+'>\)"),
        (chunk, r"a <altChunk>"),
    ],
    ids=["file-hyperlink", "external-image", "fldSimple", "instrText", "linked-picture", "altChunk"],
)
def test_the_word_reader_refuses_what_word_would_fetch_or_compute(editions, tmp_path, plant, found):
    path = hostile_docx(editions, tmp_path / "hostile.docx", plant)
    with pytest.raises(RenderError, match=found):
        checked(editions, "docx", path, tmp_path)


@pytest.mark.parametrize("instruction", ['TOC \\o "1-3" \\h \\z \\u', "SEQ Figure \\* ARABIC "])
def test_the_word_reader_allows_the_fields_pandoc_writes(editions, tmp_path, instruction):
    """Pandoc's table of contents (--toc) and caption number
    (+native_numbering): fields that read the document alone."""
    path = hostile_docx(editions, tmp_path / "fields.docx", lambda d: field(d, instruction, simple=True))
    checked(editions, "docx", path, tmp_path)


def attached_template(entries):
    settings = entries["word/settings.xml"].decode("utf-8")
    template = '<w:attachedTemplate r:id="rIdT"/>'
    entries["word/settings.xml"] = settings.replace("</w:settings>", template + "</w:settings>").encode("utf-8")


@pytest.mark.parametrize(
    "edit, found",
    [
        (attached_template, r"settings\.xml, line \d+: a <attachedTemplate>"),
        (lambda e: e.update({"word/vbaProject.bin": b"\0"}), r"a macro, an ActiveX control .*word/vbaProject\.bin"),
        (lambda e: e.update({"word/media/extra.png": png(9, 9)}), r"its picture word/media/extra\.png is none of"),
    ],
    ids=["attached-template", "macros", "foreign-picture"],
)
def test_the_word_reader_refuses_a_template_a_macro_or_a_foreign_picture(editions, tmp_path, edit, found):
    path = rezipped(editions.outs["docx"], tmp_path / "hostile.docx", edit)
    with pytest.raises(RenderError, match=found):
        checked(editions, "docx", path, tmp_path)


@pytest.mark.parametrize("name", ["docx", "jats"])
@pytest.mark.parametrize(
    "entry, found",
    [
        (zipfile.ZipInfo("../evil.txt"), r"'\.\./evil\.txt' climbs out of its folder"),
        (zipfile.ZipInfo("/etc/evil.txt"), r"'/etc/evil\.txt' is an absolute path"),
        (symlink("figures/link.svg"), r"'figures/link\.svg' is a symbolic link"),
    ],
    ids=["climbs", "absolute", "symlink"],
)
def test_a_zipped_edition_whose_entry_would_unpack_elsewhere_is_refused(editions, tmp_path, name, entry, found):
    path = with_entry(editions.outs[name], tmp_path / f"hostile-{name}.zip", entry)
    with pytest.raises(RenderError, match=found):
        checked(editions, name, path, tmp_path)


# --- the JATS bundle's reader --------------------------------------------------


def test_the_jats_reader_passes_the_bundle_the_build_writes(editions, tmp_path):
    checked(editions, "jats", editions.outs["jats"], tmp_path)


def article_xml(edit):
    def plant(entries):
        entries["article.xml"] = edit(entries["article.xml"].decode("utf-8")).encode("utf-8")

    return plant


ENTITY = '<!DOCTYPE article SYSTEM "JATS-archivearticle1-3-mathml3.dtd" [<!ENTITY p SYSTEM "file:///etc/passwd">]>'


def with_entity(xml):
    from articlekit.render.formats.jats import DOCTYPE

    return xml.replace(DOCTYPE, ENTITY).replace("<p>Built by", "<p>&p; Built by", 1)


@pytest.mark.parametrize(
    "edit, found",
    [
        (article_xml(with_entity), r"its DOCTYPE is not the JATS 1\.3 DTD's alone \(it declares an ENTITY\)"),
        (
            article_xml(lambda x: x.replace("//NLM//DTD JATS", "//EVIL//DTD JATS", 1)),
            r"its DOCTYPE is not the JATS 1\.3 DTD's alone: .*EVIL",
        ),
        (
            article_xml(
                lambda x: x.replace(
                    "<p>Built by", '<p><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd"/>', 1
                )
            ),
            r"line \d+: an XInclude <include>",
        ),
        (
            article_xml(lambda x: x.replace("<p>Built by", '<p><?xml-stylesheet href="https://x/s.xsl"?>Built by', 1)),
            r"line \d+: a processing instruction <\?xml-stylesheet",
        ),
        (
            article_xml(
                lambda x: x.replace(
                    "<p>Built by", '<p><ext-link ext-link-type="uri" xlink:href="file:///etc/passwd">x</ext-link>', 1
                )
            ),
            r"line \d+: <ext-link> links to 'file:///etc/passwd', which uses the scheme file:",
        ),
        (
            article_xml(lambda x: x.replace('xlink:href="figures/demo.svg"', 'xlink:href="https://e.org/x.svg"')),
            r"<graphic xlink:href='https://e\.org/x\.svg'> names no file of the bundle",
        ),
        (lambda e: e.update({"notes.txt": b"root:x:0:0"}), r"holds notes\.txt, which article\.xml does not name"),
        (lambda e: e.update({"figures/demo.svg": SVG.encode()}), r"its figures/demo\.svg is not the figure its rule"),
        # a manifest MECA takes, but one that leaves the figure out
        (
            lambda e: e.update({"manifest.xml": jats.manifest({})}),
            r"manifest\.xml lists article\.xml, not the bundle's",
        ),
        (
            lambda e: e.update({"manifest.xml": b"<manifest/>"}),
            r"manifest\.xml\): its DOCTYPE is not MECA's manifest DTD's",
        ),
    ],
    ids=[
        "entity",
        "doctype",
        "xinclude",
        "stylesheet",
        "file-link",
        "web-graphic",
        "stray",
        "figure",
        "manifest",
        "manifest-no-doctype",
    ],
)
def test_the_jats_reader_refuses_what_a_journal_would_load_or_follow(editions, tmp_path, edit, found):
    path = rezipped(editions.outs["jats"], tmp_path / "hostile.jats.zip", edit)
    with pytest.raises(RenderError, match=found):
        checked(editions, "jats", path, tmp_path)


def test_a_jats_link_may_also_be_a_doi_or_an_arxiv_id_and_nothing_else_the_page_refuses():
    from lxml import etree

    from articlekit.render.formats.jats import jats_link_problem

    link, doi = etree.Element("ext-link"), etree.Element("ext-link", {"ext-link-type": "doi"})
    for target in ("https://a.org/x", "mailto:a@b.c", "doi:10.1000/182", "arXiv:1706.03762", "audit.html#row"):
        assert jats_link_problem(target, link) is None, target
    assert jats_link_problem("10.1000/182", doi) is None
    for target in ("file:///etc/passwd", "java\tscript:alert(1)", "data:text/html,x", "../x.html", "/etc/passwd"):
        assert jats_link_problem(target, link), target
    assert jats_link_problem("\x01doi:10.1000/182", link)  # a control character: refused, whatever follows
