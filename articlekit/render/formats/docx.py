"""The Word edition: build/article.docx, written by Pandoc from the bound tree.

Every value, table, code listing and the provenance table come out in
Word's own styles (Pandoc's docx writer maps headings, tables, captions and
code to them). The bound values stay links, each to its row of the
provenance table (metadata `bound-links: keep`: internal hyperlinks to the
rows' bookmarks), and the mark of a claim that does not hold is bold, in a
character style named after its class ("claim-failed" is "Claim Failed",
filters/bound.lua), coloured by the reference document made here. The
figures are embedded, from the files their rules wrote
(filters/embed_figures.lua, as on the page). An SVG goes in as the SVG
picture Word reads since 2016, with a PNG beside it for every reader that
does not (LibreOffice, older Word): Typst draws it, as it draws the PDF's
figures, with its own fonts only (add_png_fallbacks). Pandoc 3.9 writes
the SVG alone, whether or not it finds rsvg-convert (it runs it, and drops
what it prints: measured), so the render gives it one that prints nothing
rather than let it warn on every render (pandoc_env).

Two renders of the same input give the same bytes: Pandoc stamps the time
into docProps/core.xml and the zip's entries, and is handed
SOURCE_DATE_EPOCH for it (see document_epoch). The check reads the file
back with python-docx, and first as the zip it is (check_package): no
field Word computes, no linked picture, template, chunk, object or macro,
no relationship out of it but a hyperlink, and no picture but the figures.
"""

import calendar
import datetime
import hashlib
import os
import posixpath
import re
import time
import zipfile
from pathlib import PurePosixPath

from articlekit.article.figures import FigureError, checked_figure
from articlekit.core.status import MARK_CLASSES
from articlekit.core.text import md_code
from articlekit.core.urls import link_problem
from articlekit.render.checks import expected_literal_shortcodes, provenance_placed
from articlekit.render.figuredata import embedded_figures
from articlekit.render.formats import Format
from articlekit.render.formats.jats import zip_entries
from articlekit.render.luafilters import EMBED_FIGURES_FILTER
from articlekit.render.pandoc_route import pandoc_run
from articlekit.render.project import split_front_matter
from articlekit.render.renderers import RenderError, pandoc_file, pandoc_path
from articlekit.render.tools import run_tool

# python-docx is imported by the functions that render: the Plan reads
# FORMAT on every Snakemake call.

# The colour of each claim mark's style: the page's and the PDF's
# (page.css, pdf_style.typ), by the mark's class.
CLAIM_COLOURS = {"claim-failed": "9A1C1C", "claim-inconclusive": "8A5300", "claim-outlier": "1F4E79"}

# When neither SOURCE_DATE_EPOCH nor the front matter's date says when the
# document was made: 1980-01-01T00:00:00Z, the earliest time a zip entry
# holds, which no reader takes for a real date.
UNDATED_EPOCH = 315532800


def word_bookmark(anchor):
    """The bookmark Pandoc writes for an anchor: Word takes 40 characters at
    most, so a longer one becomes "X" and the rest of its SHA-1 (Pandoc
    3.9's docx writer; its links name the same)."""
    if len(anchor) <= 40:
        return anchor
    return "X" + hashlib.sha1(anchor.encode("utf-8")).hexdigest()[1:]


def claim_style(page_class):
    """The Word character style of a claim mark: its class in words
    ("claim-failed" -> "Claim Failed"), as filters/bound.lua names it."""
    return " ".join(word.capitalize() for word in page_class.split("-"))


def document_epoch(article, front):
    """The time Pandoc stamps into the document, as SOURCE_DATE_EPOCH: the
    environment's when set (reproducible builds set it), else the front
    matter's date when it is one (YYYY-MM-DD), else UNDATED_EPOCH. Never
    the clock: two renders of one input give the same bytes."""
    given = os.environ.get("SOURCE_DATE_EPOCH")
    if given is not None:
        if not given.strip().isdigit():
            raise RenderError(
                f"SOURCE_DATE_EPOCH={given!r} is not a whole number of seconds since 1970; unset it or fix it"
            )
        return given.strip()
    date = front.get("date")
    if isinstance(date, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", date.strip()):
        date = datetime.date.fromisoformat(date.strip())
    if isinstance(date, datetime.date):
        return str(max(calendar.timegm(date.timetuple()), UNDATED_EPOCH))
    return str(UNDATED_EPOCH)


def pandoc_env(job, epoch):
    """Pandoc's environment: the epoch, and first on its PATH an
    rsvg-convert that prints nothing (see the module's docstring)."""
    folder = job.workdir / "no-rsvg"
    folder.mkdir(exist_ok=True)
    shim = folder / "rsvg-convert"
    shim.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    shim.chmod(0o755)
    return dict(os.environ, SOURCE_DATE_EPOCH=epoch, PATH=os.pathsep.join([str(folder), os.environ.get("PATH", "")]))


# an SVG picture Pandoc wrote: a blip naming no image, its SVG in the extension
SVG_ONLY_BLIP = re.compile(r'<a:blip>(?=<a:extLst>(?:(?!</a:extLst>).)*?<asvg:svgBlip [^>]*?r:embed="([^"]+)")', re.S)
IMAGE_RELATIONSHIP = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"


# Metadata the render hands its filters, which Pandoc would also write into
# the document's custom properties (a work folder's path among them)
FILTER_METADATA = ("figure-data", "bound-links")


def finish_package(path, workdir, epoch):
    """Rewrite the document at `path` in place, every zip entry stamped with
    the epoch (those Pandoc copies from the reference document keep that
    file's times): the PNG fallbacks added (add_png_fallbacks), no data:
    URI as a picture's name, the filters' metadata out of docProps/custom.xml."""
    with zipfile.ZipFile(path) as package:
        entries = [(info, package.read(info)) for info in package.infolist()]
    files = {info.filename: data for info, data in entries}
    added = add_png_fallbacks(files, workdir)
    # Pandoc names each picture by its link, here the figure's whole data:
    # URI (embed_figures.lua): a second copy of its bytes, in the XML
    document = files["word/document.xml"].decode("utf-8")
    files["word/document.xml"] = re.sub(r'(<pic:cNvPr descr=")data:[^"]*"', r'\1"', document).encode("utf-8")
    if "docProps/custom.xml" in files:
        custom = files["docProps/custom.xml"].decode("utf-8")
        for name in FILTER_METADATA:
            custom = re.sub(rf'<property [^>]*name="{name}">.*?</property>', "", custom, flags=re.S)
        files["docProps/custom.xml"] = custom.encode("utf-8")
    stamp = time.gmtime(max(int(epoch), UNDATED_EPOCH))[:6]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        for info, _ in entries:
            info.date_time = stamp
            package.writestr(info, files[info.filename])
        for name, data in added.items():
            package.writestr(zipfile.ZipInfo(name, date_time=stamp), data, zipfile.ZIP_DEFLATED)


def add_png_fallbacks(files, workdir):
    """Give each SVG picture of the package `files` (name -> bytes, updated)
    a PNG that every reader shows, drawn by Typst (one compile for all of
    them, 192 pixels an inch) -> {name: bytes} of the PNGs to add."""
    import typst

    document = files["word/document.xml"].decode("utf-8")
    rels = files["word/_rels/document.xml.rels"].decode("utf-8")
    svg_ids = sorted(set(SVG_ONLY_BLIP.findall(document)))
    if not svg_ids:
        return {}
    targets = {}
    for rel in re.findall(r"<Relationship [^>]*>", rels):
        rid, target = re.search(r'Id="([^"]+)"', rel).group(1), re.search(r'Target="([^"]+)"', rel).group(1)
        targets[rid] = target
    pages = workdir / "svg-png"
    pages.mkdir(exist_ok=True)
    for n, rid in enumerate(svg_ids):
        (pages / f"{n}.svg").write_bytes(files["word/" + targets[rid]])
    source = pages / "figures.typ"
    source.write_text(
        "#set page(width: auto, height: auto, margin: 0pt)\n"
        + "".join(f'#page(image("{n}.svg"))\n' for n in range(len(svg_ids))),
        encoding="utf-8",
    )
    try:
        pngs = typst.compile(str(source), root=str(pages), format="png", ppi=192, ignore_system_fonts=True)
    except typst.TypstError as exc:
        raise RenderError(f"Typst could not draw a figure of the Word edition as PNG: {exc}") from None
    pngs = pngs if isinstance(pngs, list) else [pngs]
    added = {}
    for rid, png in zip(svg_ids, pngs):
        added[f"word/{targets[rid].rsplit('.', 1)[0]}.png"] = png
        rels = rels.replace(
            "</Relationships>",
            f'<Relationship Type="{IMAGE_RELATIONSHIP}" Id="{rid}png" '
            f'Target="{targets[rid].rsplit(".", 1)[0]}.png" /></Relationships>',
        )
    document = SVG_ONLY_BLIP.sub(lambda m: f'<a:blip r:embed="{m.group(1)}png">', document)
    types = files["[Content_Types].xml"].decode("utf-8")
    if 'Extension="png"' not in types:
        types = types.replace("<Default ", '<Default Extension="png" ContentType="image/png" /><Default ', 1)
    files.update(
        {
            "word/document.xml": document.encode("utf-8"),
            "word/_rels/document.xml.rels": rels.encode("utf-8"),
            "[Content_Types].xml": types.encode("utf-8"),
        }
    )
    return added


def reference_doc(job):
    """Pandoc's own reference document with the claim marks' character
    styles added (bold, in their status's colour) -> its path."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.shared import RGBColor

    path = job.workdir / "reference.docx"
    run_tool([pandoc_path(), "--output", str(path), "--print-default-data-file", "reference.docx"], job.article)
    reference = docx.Document(path)
    for page_class in MARK_CLASSES:
        style = reference.styles.add_style(claim_style(page_class), WD_STYLE_TYPE.CHARACTER)
        style.font.bold = True
        style.font.color.rgb = RGBColor.from_string(CLAIM_COLOURS[page_class])
    reference.save(path)
    return path


# A4, as the PDF edition: (width, height) in twentieths of a point, and the margins
A4 = (11906, 16838)
MARGIN = 1134  # 2 cm


SUPPLEMENT_TITLE = "Supplementary material"


def supplement_title():
    """A paragraph in the style Title reading SUPPLEMENT_TITLE: where the
    supplement (a section of its own, on new pages) begins."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    paragraph, properties, style = OxmlElement("w:p"), OxmlElement("w:pPr"), OxmlElement("w:pStyle")
    style.set(qn("w:val"), "Title")
    properties.append(style)
    paragraph.append(properties)
    run, text = OxmlElement("w:r"), OxmlElement("w:t")
    text.text = SUPPLEMENT_TITLE
    run.append(text)
    paragraph.append(run)
    return paragraph


def appendix_in_landscape(path, keys):
    """The section that places the provenance table (its last heading before
    the table, to the end) becomes the supplement, as in the PDF: a section
    of its own on landscape A4 pages under the title "Supplementary
    material", the table's text at 8 points (seven columns on a portrait
    page break every word). The body before it stays portrait A4."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = docx.Document(path)
    table, found, _ = provenance_rows(document, keys)
    if table is None or not found:
        return
    body = document.element.body
    heading = None
    for element in body.iterchildren():
        if element is table._tbl:
            break
        if element.tag == qn("w:p") and element.pPr is not None and element.pPr.pStyle is not None:
            if element.pPr.pStyle.val.startswith("Heading"):
                heading = element
    if heading is None:
        return
    # the body's own section ends before the appendix's heading: portrait
    portrait = OxmlElement("w:p")
    portrait_pr = OxmlElement("w:pPr")
    portrait_pr.append(section_properties(*A4, "portrait"))
    portrait.append(portrait_pr)
    heading.addprevious(portrait)
    # the supplement's own title, as the PDF's: the body ends above it
    heading.addprevious(supplement_title())
    # the document's last section, the appendix: landscape
    last = body.sectPr
    for child in list(last):
        if child.tag in (qn("w:pgSz"), qn("w:pgMar")):
            last.remove(child)
    for child in reversed(list(section_properties(A4[1], A4[0], "landscape"))):
        last.insert(0, child)
    for row in table.rows:
        for cell in row.cells:
            for paragraph in cell.paragraphs:
                for run in paragraph.runs:
                    run.font.size = Pt(8)
    document.save(path)


def section_properties(width, height, orient):
    """A w:sectPr of one page size and orientation, with the edition's margins."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    sect = OxmlElement("w:sectPr")
    size = OxmlElement("w:pgSz")
    size.set(qn("w:w"), str(width))
    size.set(qn("w:h"), str(height))
    size.set(qn("w:orient"), orient)
    margins = OxmlElement("w:pgMar")
    for side in ("top", "right", "bottom", "left"):
        margins.set(qn(f"w:{side}"), str(MARGIN))
    for side in ("header", "footer", "gutter"):
        margins.set(qn(f"w:{side}"), "0" if side == "gutter" else "709")
    sect.append(size)
    sect.append(margins)
    return sect


def write(job):
    """Pandoc's docx writer over the bound tree, its figures embedded."""

    article_dir = job.article.parent.resolve()
    front, _ = split_front_matter(job.source, job.article)
    figures = embedded_figures(job)
    common, metadata = pandoc_run(job, {"figure-data": md_code(str(figures)), "bound-links": "keep"})
    cmd = (
        common
        + [arg for path in job.fmt.filters for arg in ("--lua-filter", str(path))]
        + ["--to", job.fmt.writer, "--reference-doc", pandoc_file(reference_doc(job)), "--output", str(job.produced)]
    )
    epoch = document_epoch(job.article, front)
    run_tool(cmd, job.article, cwd=article_dir, env=pandoc_env(job, epoch))
    if provenance_placed(job.source):
        appendix_in_landscape(job.produced, {b["key"] for b in job.document["bindings"].values()})
    finish_package(job.produced, job.workdir, epoch)
    return metadata["renderer"]


# --- reading it back -----------------------------------------------------------


def every_paragraph(document):
    """Every paragraph of the body, those in table cells (nested ones too) included."""

    def cells(table):
        for row in table.rows:
            for cell in row.cells:
                yield cell

    def walk(container):
        yield from container.paragraphs
        for table in container.tables:
            for cell in cells(table):
                yield from walk(cell)

    yield from walk(document)


def provenance_rows(document, keys):
    """(the table whose first column holds the most keys, the keys in its
    first column, its number of rows under the header)."""
    best, found, rows = None, set(), 0
    for table in document.tables:
        first = {row.cells[0].text.strip() for row in table.rows[1:]} & keys
        if best is None or len(first) > len(found):
            best, found, rows = table, first, len(table.rows) - 1
    return best, found, rows


def check(job):
    """The document carries only what the build made (check_package), and
    holds every number the page shows in prose, the provenance table as
    a Word table of one row per key, one embedded picture per figure
    shown, and no shortcode left over."""
    import docx

    check_package(job)
    try:
        document = docx.Document(job.produced)
    except Exception as exc:  # python-docx raises zip, XML and its own errors alike
        raise RenderError(f"{job.out}: Pandoc wrote no document Word can open ({exc})") from None
    paragraphs = list(every_paragraph(document))
    text = "\n".join(paragraph.text for paragraph in paragraphs)
    # a value the page shows in prose is a link to its key's row here too:
    # its text, as the hyperlink to the row's bookmark (a bare substring
    # would find a short number anywhere)
    links = {(link.fragment, " ".join(link.text.split())) for p in paragraphs for link in p.hyperlinks}
    bindings = job.document["bindings"]
    for binding in bindings.values():
        if (
            binding.get("in_prose")
            and (word_bookmark(binding["anchor"]), " ".join(binding["text"].split())) not in links
        ):
            raise RenderError(
                f"{job.out}: the value of {binding['key']} ({binding['text']!r}, {binding['locations'][0]}) is "
                f"not in the document as a link to its provenance row (#{binding['anchor']}); the bound "
                "document or filters/bound.lua lost it: render the page (--to html) to see whether it is "
                "there, and look at bound.lua's docx lowering (metadata bound-links: keep)"
            )
    source = job.source
    if provenance_placed(source):
        keys = {b["key"] for b in bindings.values()}
        table, found, rows = provenance_rows(document, keys)
        if table is None or found != keys or rows != len(keys):
            missing = sorted(keys - found)
            raise RenderError(
                f"{job.out}: the provenance table is not a Word table of one row per key ({rows} rows for "
                f"{len(keys)} keys{', missing ' + ', '.join(missing[:3]) if missing else ''}); put "
                "{{< provenance >}} alone in its paragraph, with blank lines around it"
            )
    pictures = embedded_pictures(document)
    if pictures != len(job.figures):
        raise RenderError(
            f"{job.out}: {pictures} embedded picture(s) for the {len(job.figures)} figure(s) the article shows "
            f"({', '.join(f.path for f in job.figures) or 'none'}); filters/embed_figures.lua must act for docx"
        )
    left = text.count("{{<")
    allowed = expected_literal_shortcodes(source)
    if left > allowed:
        at = text.find("{{<")
        raise RenderError(f"{job.out}: {left - allowed} shortcode(s) were not resolved, first: {text[at : at + 80]!r}")


# --- what the document may hold ----------------------------------------------

R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
V_NS = "urn:schemas-microsoft-com:vml"
# a picture Word fetches when it opens the file rather than one the file holds
LINKED = {
    f"{{{R_NS}}}link": "r:link",
    f"{{{R_NS}}}href": "r:href",
    "{urn:schemas-microsoft-com:office:office}href": "o:href",
}
# relationships (by the last word of their type) that bring in another
# document, a template, a program or an object that runs
REFUSED_RELATIONSHIPS = {
    "attachedTemplate", "aFChunk", "oleObject", "package", "vbaProject", "subDocument", "control",
    "activeXControlBinary", "frame", "mailMergeSource", "recipientData", "externalLinkPath",
}  # fmt: skip
# elements (by local name) that do the same from the document's XML
REFUSED_ELEMENTS = {"altChunk", "attachedTemplate", "object", "OLEObject", "control", "subDoc", "frameset"}
# the parts (and content types) of macros, ActiveX and embedded objects
REFUSED_PARTS = re.compile(r"vbaProject|vbaData|activeX|embeddings/|oleObject|macroEnabled", re.I)
# Fields Word may compute: Pandoc 3.9 writes a field only for --toc (this
# TOC, the table of contents from the headings) and +native_numbering
# (SEQ, a caption's number). Both read the document alone, and the build
# asks for neither today; every other field (INCLUDETEXT, INCLUDEPICTURE,
# HYPERLINK, LINK, DDE, IMPORT...) may read a file or the network.
ALLOWED_FIELDS = (re.compile(r'\s*TOC \\o "1-3" \\h \\z \\u\s*'), re.compile(r"\s*SEQ \w+ \\\* ARABIC\s*"))


def check_package(job):
    """The document, read as the zip it is, carries only what the build
    made: its entries stay in the zip (jats.zip_entries), nothing runs or
    comes from elsewhere (check_part, check_relationships) and its
    pictures are the figures (check_media)."""

    entries = zip_entries(job.produced, job.out)
    bad = sorted(name for name in entries if REFUSED_PARTS.search(name))
    if bad or REFUSED_PARTS.search(entries.get("[Content_Types].xml", b"").decode("utf-8", "replace")):
        raise RenderError(
            f"{job.out}: it holds a macro, an ActiveX control or an embedded object "
            f"({', '.join(bad) or 'its [Content_Types].xml names one'})"
        )
    # the parts first: a linked picture or a chunk is named as what it is,
    # before the relationship it goes through
    for name in sorted(name for name in entries if name.endswith(".xml")):
        check_part(package_xml(entries[name], name, job.out), name, job.out)
    for name in sorted(name for name in entries if name.endswith(".rels")):
        check_relationships(package_xml(entries[name], name, job.out), name, entries, job.out)
    check_media(entries, job)


def package_xml(data, name, out):
    """A part's tree, read without a DTD, entities or the network: a part
    of a Word document declares none (a DOCTYPE is refused)."""
    from lxml import etree

    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    try:
        tree = etree.fromstring(data, parser).getroottree()
    except etree.XMLSyntaxError as exc:
        raise RenderError(f"{out}: its part {name} is not well-formed XML ({exc})") from None
    if tree.docinfo.doctype:
        raise RenderError(
            f"{out}: its part {name} declares a DOCTYPE ({tree.docinfo.doctype[:120]}), as no Word part does"
        )
    return tree


def check_relationships(tree, name, entries, out):
    """Proves: every relationship of the part `name` stays in the zip (a
    part it holds), or is a hyperlink that goes where the page's links may
    (articlekit.core.urls: the web, mail, a file of the build's folder);
    none attaches a template, a chunk of another document, a program or
    an object. Does not prove a web address is harmless."""
    folder = PurePosixPath(name).parent.parent  # word/_rels/document.xml.rels speaks from word/
    for rel in tree.getroot():
        kind, target = rel.get("Type", "").rsplit("/", 1)[-1], rel.get("Target", "")
        if kind in REFUSED_RELATIONSHIPS:
            raise RenderError(f"{out}: {name} attaches a {kind} ({target!r}): a Word edition holds its text alone")
        if rel.get("TargetMode") == "External":
            problem = link_problem(target) if kind == "hyperlink" else "is fetched when Word opens the file"
            if problem:
                raise RenderError(
                    f"{out}: {name} has an external {kind} relationship to {target!r}, which {problem}: only a "
                    "hyperlink to a web page, a mail address or a file of the build's folder may leave the document"
                )
        elif part_name(folder, target) not in entries:
            raise RenderError(f"{out}: {name} names a part {target!r} that the document does not hold")


def part_name(folder, target):
    """The zip entry an internal relationship's target names, from `folder`
    (a target from / starts at the zip's top)."""
    if target.startswith("/"):
        return target[1:]
    return posixpath.normpath(posixpath.join(str(folder), target))


def check_part(tree, name, out):
    """Proves: the part has no field but ALLOWED_FIELDS, no linked picture
    (LINKED, or VML's src: Word fetches it when it opens the file), no
    chunk of another document, attached template or object
    (REFUSED_ELEMENTS). Does not prove its text came from the article:
    the check of the values does that for the numbers."""
    for element in tree.getroot().iter():
        found = isinstance(element.tag, str) and element_problem(element)
        if found:
            raise RenderError(f"{out}: {name}, line {element.sourceline}: {found}")


def element_problem(element):
    """What check_part refuses in `element`, in words, or None."""
    from lxml import etree

    local = etree.QName(element).localname
    if local in REFUSED_ELEMENTS:
        return f"a <{local}>, which brings in another document, a template or an object"
    linked = [(LINKED[a], element.get(a)) for a in LINKED if element.get(a)]
    linked += [("src", element.get("src"))] if etree.QName(element).namespace == V_NS and element.get("src") else []
    if linked:
        return f"a picture linked, not embedded (<{local} {linked[0][0]}={linked[0][1]!r}>): Word fetches it"
    instruction = {"fldSimple": element.get(f"{{{W_NS}}}instr"), "instrText": element.text or ""}.get(local)
    if instruction is not None and not any(field.fullmatch(instruction) for field in ALLOWED_FIELDS):
        return (
            f"a field code {instruction.strip()[:120]!r}, which Word computes when it opens the file (an "
            "INCLUDETEXT or INCLUDEPICTURE reads any file); Pandoc writes no such field"
        )
    return None


def check_media(entries, job):
    """Proves: every picture of word/media is a figure the article shows,
    byte for byte (the file its rule wrote), or the PNG beside an SVG
    picture (add_png_fallbacks). Does not prove that PNG was drawn from
    that SVG: Typst draws it, in a root that holds the SVGs alone."""
    figures = {figure_bytes_of(job, figure) for figure in job.figures}
    for name, data in sorted(entries.items()):
        if not name.startswith("word/media/") or data in figures:
            continue
        if name.endswith(".png") and name[: -len(".png")] + ".svg" in entries:
            continue
        raise RenderError(
            f"{job.out}: its picture {name} is none of the figures the article shows "
            f"({', '.join(f.path for f in job.figures) or 'none'}): a picture came from somewhere else"
        )


def figure_bytes_of(job, figure):
    """The figure's bytes as checked_figure read and checked them."""

    try:
        return checked_figure(job.root, figure.path, job.article, figure.line)[1]
    except FigureError as exc:
        raise RenderError(str(exc)) from None


# a picture's blip names its image part: r:embed, or (an SVG without a PNG
# beside it) the svgBlip extension's r:embed
EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"


def embedded_pictures(document):
    """How many of the document's inline pictures name an image part it holds."""
    parts = document.part.related_parts
    count = 0
    for shape in document.inline_shapes:
        names = [el.get(EMBED) for el in shape._inline.iter() if el.get(EMBED)]
        count += bool(names) and all(
            name in parts and parts[name].partname.startswith("/word/media/") for name in names
        )
    return count


FORMAT = Format(
    name="docx",
    output="build/article.docx",
    describe="the Word edition, figures embedded",
    writer="docx",
    write=write,
    check=check,
    filters=(EMBED_FIGURES_FILTER,),
    work_folder=".docx-",
    text=False,
)
