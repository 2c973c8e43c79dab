"""The JATS bundle: build/article.jats.zip, the article as a journal takes it.

Pandoc's jats_archiving writer writes article.xml from the bound tree, its
front matter from the article's (title, subtitle, author, date, abstract,
keywords as <kwd>, lang as xml:lang). The zip holds it beside the figures
it shows, each the file its rule wrote, packed under its build path
(figures/NAME.svg, which <graphic xlink:href> names, its <alt-text> the
one the file carries, as on the page: jats_figures.lua rewrites each
image), and a MECA manifest.xml (valid against MECA's manifest DTD, a
local copy) listing its two kinds of item (article-metadata, and each
figure as an article-supporting-file). Its entries are
sorted and dated 1980-01-01, so that two renders of one build give the
same bytes.

A bound value stays a link to its row of the provenance table: an <xref>
whose rid is the row's id (bind requires the table of an article that binds
a value, and the DTD check requires every rid to name an id), the first
place of each key keeping the id the audit links to (at-v-...).

The check reads the zip back: article.xml is well-formed and valid against
the JATS 1.3 Archiving DTD with MathML 3 (Biopython's copy, read locally;
the DOCTYPE says that DTD), every value the prose prints is in its text,
every <graphic> is a file of the zip, no shortcode is left, and its
article-title is the front matter's title. It also holds the bundle to
carrying only what the build made: entries that unpack in place
(zip_entries), the JATS DOCTYPE alone (no entity), no XInclude or
processing instruction, every link a file of the zip or an address a
reader follows rather than loads, no entry article.xml does not name,
and each figure the bytes its rule wrote.
"""

import copy
import io
import itertools
import json
import re
import stat
import subprocess
import zipfile
from importlib import resources
from importlib.util import find_spec
from pathlib import Path, PurePosixPath
from xml.sax.saxutils import quoteattr

from articlekit.article.figures import FigureError, alt_text, checked_figure
from articlekit.core.text import md_code
from articlekit.core.urls import link_problem, scheme_of
from articlekit.render.checks import check_output, shown_shortcodes
from articlekit.render.figuredata import FIGURE_TYPES
from articlekit.render.formats import Format
from articlekit.render.pandoc_route import pandoc_run
from articlekit.render.project import split_front_matter
from articlekit.render.renderers import RenderError, pandoc_path
from articlekit.render.tools import run_tool

HERE = resources.files("articlekit.render.formats")
# lxml is imported by the functions that render: the Plan reads FORMAT on
# every Snakemake call.

# The DTD the check validates against, and the DOCTYPE that names it:
# JATS 1.3, Archiving and Interchange, with MathML 3 (Pandoc's template
# names 1.2; what it writes is valid against 1.3, which is what we check).
# Found without importing Biopython, whose import warns on stderr ("importing
# Biopython from inside the source tree") wherever site-packages holds a
# stray pyproject.toml, ahead of every message of the JATS rule.
DTD = Path(find_spec("Bio").origin).parent / "Entrez" / "DTDs" / "JATS-archivearticle1-3-mathml3.dtd"
DOCTYPE = (
    '<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD with MathML3 '
    'v1.3 20210610//EN" "JATS-archivearticle1-3-mathml3.dtd">'
)
PANDOC_DOCTYPE = re.compile(r'<!DOCTYPE article PUBLIC "[^"]*"\s+"[^"]*">')
PANDOC_ARTICLE = re.compile(r'<article ([^>]*)dtd-version="1\.2"')

ARTICLE_XML = "article.xml"
MANIFEST_XML = "manifest.xml"
# MECA's manifest DTD (a local copy: the check reads no network) and the
# DOCTYPE that names it, the manifest's whole prolog besides the XML declaration.
MANIFEST_DTD = Path(str(HERE / "meca-manifest-1.0.dtd"))
MANIFEST_DOCTYPE = '<!DOCTYPE manifest PUBLIC "-//MECA//DTD Manifest v1.0//en" "https://meca.zip/manifest-1.0.dtd">'
MANIFEST_PROLOG = re.compile(r"\s*(?:<\?xml [^?]*\?>)?\s*" + re.escape(MANIFEST_DOCTYPE) + r"\s*<manifest[\s>]")
MANIFEST_NS = "https://manuscriptexchange.org/schema/manifest"
XLINK_NS = "http://www.w3.org/1999/xlink"
XLINK_HREF = f"{{{XLINK_NS}}}href"

# A zip entry's date: the earliest a zip can say; the same for every build.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)

# At most this many of the DTD's complaints are named in one message.
SHOWN_ERRORS = 5


def packed_figures(job):
    """{link as written: {"href": path inside the zip, "alt": the alt text
    the file carries, when it has one}}, {path inside the zip: bytes}: each
    figure the tree shows, read from the file its rule wrote (figure_file:
    a regular file in figures/, no symbolic link), packed under its path in
    the build (figures/NAME)."""

    links, files = {}, {}
    for figure in job.figures:
        inside = PurePosixPath(Path(figure.path).as_posix())
        if Path(figure.path).suffix.lower() not in FIGURE_TYPES:
            raise RenderError(
                f"{job.article}:{figure.line}: {figure.path} is not an image the bundle packs (a figure is "
                f"one of {', '.join(sorted(FIGURE_TYPES))})"
            )
        try:
            files[str(inside)] = checked_figure(job.root, figure.path, job.article, figure.line)[1]
        except FigureError as exc:
            raise RenderError(str(exc)) from None
        except OSError as exc:
            raise RenderError(
                f"{job.article}:{figure.line}: the figure {figure.path} cannot be read: {exc.strerror}"
            ) from None
        links[figure.link] = {"href": str(inside)}
        alt = alt_text(files[str(inside)], FIGURE_TYPES[Path(figure.path).suffix.lower()])
        if alt:
            links[figure.link]["alt"] = alt
    return links, files


def jats_metadata(job, figure_list):
    """What the JATS template takes beyond the front matter's share
    (pandoc_metadata): keywords as its tags, the abstract as blocks (a
    one-line abstract would be inline text, which <abstract> refuses),
    the figures' paths in the zip, and the bound values' links to their
    provenance rows kept (bound.lua's bound-links: keep)."""

    front, _ = split_front_matter(job.source, job.article)
    metadata = {"jats-figures": md_code(str(figure_list)), "bound-links": "keep"}
    if front.get("keywords"):
        metadata["tags"] = front["keywords"]
    if front.get("author"):
        metadata["author"] = front["author"]  # the structured form its template reads (name, orcid, affiliation)
    if isinstance(front.get("abstract"), str):
        metadata["abstract"] = front["abstract"].rstrip("\n") + "\n"  # a block scalar: blocks
    return metadata


def declared(xml, lang, pandoc_version):
    """Pandoc's article.xml naming the DTD it is checked against, in the
    article's language."""
    xml, doctypes = PANDOC_DOCTYPE.subn(DOCTYPE, xml, count=1)
    xml, articles = PANDOC_ARTICLE.subn(
        lambda m: f'<article {m.group(1)}dtd-version="1.3" xml:lang={quoteattr(lang)}', xml, count=1
    )
    if not (doctypes and articles):
        raise RenderError(
            f"{pandoc_version}'s jats_archiving writer wrote a header articlekit does not know "
            f"({xml[:300]!r}): articlekit/render/formats/jats.py (declared) must learn it"
        )
    return xml


MML_NS = "http://www.w3.org/1998/Math/MathML"
# crossref.lua's numbers, as it writes them into a caption and an equation
CAPTION_NUMBER = re.compile(r"^((?:Figure|Table)\u00a0\d+):\s*")
EQUATION_NUMBER = re.compile(r"\s*\\qquad\((\d+)\)\s*$")


def software_versions(workdir):
    """{ref id: version} of each entry with a version in the bibliography
    citeproc read (the bound copy in workdir: articlekit.render.citations),
    as Pandoc reads it. Pandoc's JATS writer drops a reference's version,
    which JATS4R and FORCE11 ask of cited software."""

    copies = sorted(Path(workdir).glob("cited-bibliography.*"))
    if not copies:
        return {}
    done = subprocess.run([pandoc_path(), str(copies[0]), "--to", "csljson"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RenderError(f"{copies[0]}: Pandoc could not read the bibliography's entries: {done.stderr.strip()}")
    return {f"ref-{entry['id']}": str(entry["version"]) for entry in json.loads(done.stdout) if entry.get("version")}


def labelled(xml, versions=None):
    """JATS's own places: crossref.lua's "Figure N: " moved from
    a figure's or table's caption into its <label> (the table's id onto its
    <table-wrap>, which a reference names), an equation's "(N)" from its
    TeX and MathML into its <disp-formula>'s <label>, the id with it, and
    the supplement in the back matter, and each reference's <version>
    (`versions`: {ref id: version}). The prolog is kept as written (the
    reader checks it byte for byte)."""
    from lxml import etree

    at = xml.index("<article")
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    root = etree.fromstring(xml[at:].encode("utf-8"), parser)
    for holder in [*root.iter("fig"), *root.iter("table-wrap")]:
        _caption_label(etree, holder)
    for span in list(root.iter("styled-content")):
        if (span.get("id") or "").startswith("eq-") and len(span) == 1 and span[0].tag == "disp-formula":
            _equation_label(etree, span)
    _supplement_in_back(etree, root)
    for ref in root.iter("ref"):
        citation = ref.find("element-citation")
        if ref.get("id") in (versions or {}) and citation is not None and citation.find("version") is None:
            etree.SubElement(citation, "version").text = versions[ref.get("id")]
    return xml[:at] + etree.tostring(root, encoding="unicode") + "\n"


def _supplement_in_back(etree, root):
    """The section holding the provenance table (its rows' ids start v-),
    and every section after it, leave the body for the back matter as an
    appendix (<app-group><app>), where a journal keeps supplementary
    material; each value's <xref> still names its row."""
    body, back = root.find("body"), root.find("back")
    if body is None:
        return
    sections = [sec for sec in body if sec.tag == "sec"]
    first = next(
        (n for n, sec in enumerate(sections) if any((e.get("id") or "").startswith("v-") for e in sec.iter())), None
    )
    if first is None:
        return
    if back is None:
        back = etree.SubElement(root, "back")
    group = etree.Element("app-group")
    back.append(group)
    for sec in sections[first:]:
        app = etree.SubElement(group, "app", id=sec.get("id") or f"app-{len(group)}")
        app.extend(list(sec))
        body.remove(sec)


def _caption_label(etree, holder):
    first = holder.find("caption/p")
    found = CAPTION_NUMBER.match(first.text or "") if first is not None else None
    if found is None:
        return
    first.text = first.text[found.end() :]
    label = etree.Element("label")
    label.text = found.group(1)
    holder.insert(list(holder).index(holder.find("caption")), label)
    table = holder.find("table")
    if holder.tag == "table-wrap" and table is not None and table.get("id") and not holder.get("id"):
        holder.set("id", table.attrib.pop("id"))


def _equation_label(etree, span):
    formula = span[0]
    tex = formula.find(".//tex-math")
    found = EQUATION_NUMBER.search(tex.text or "") if tex is not None else None
    if found is None:
        return
    tex.text = tex.text[: found.start()]
    row = formula.find(f".//{{{MML_NS}}}math/{{{MML_NS}}}mrow")
    if row is not None and len(row) >= 4 and row[-4].tag == f"{{{MML_NS}}}mspace":
        for element in list(row)[-4:]:
            row.remove(element)
    label = etree.Element("label")
    label.text = f"({found.group(1)})"
    formula.insert(0, label)
    formula.set("id", span.get("id"))
    formula.tail = span.tail
    span.getparent().replace(span, formula)


def manifest(figures, extra=()):
    """MECA's manifest.xml: the article's XML, then each figure (a
    supporting file, in MECA's words), with its media type, then each of
    `extra` ((item-type, name, media type, description) of another file)."""
    from lxml import etree

    root = etree.Element(f"{{{MANIFEST_NS}}}manifest", nsmap={None: MANIFEST_NS, "xlink": XLINK_NS})
    root.set("manifest-version", "1")
    items = [("article-metadata", ARTICLE_XML, "application/xml", "")]
    items += [
        ("article-supporting-file", name, FIGURE_TYPES[PurePosixPath(name).suffix.lower()], "")
        for name in sorted(figures)
    ]
    for n, (kind, name, media, description) in enumerate([*items, *extra]):
        item = etree.SubElement(root, f"{{{MANIFEST_NS}}}item", id=f"item-{n}", **{"item-type": kind})
        if description:
            etree.SubElement(item, f"{{{MANIFEST_NS}}}item-description").text = description
        etree.SubElement(item, f"{{{MANIFEST_NS}}}instance", {"media-type": media, XLINK_HREF: name})
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", doctype=MANIFEST_DOCTYPE, pretty_print=True)


def zip_bytes(entries):
    """A zip of {name: bytes}, entries sorted and dated ZIP_DATE, as a Unix
    zip of plain files: the same entries give the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            bundle.writestr(info, entries[name], compresslevel=9)
    return buffer.getvalue()


def write(job):
    """article.xml from the bound tree, its figures and manifest, zipped."""

    links, figures = packed_figures(job)
    figure_list = job.workdir / "jats-figures.json"
    figure_list.write_text(json.dumps(links), encoding="utf-8")
    common, metadata = pandoc_run(job, jats_metadata(job, figure_list))
    xml_path = job.workdir / ARTICLE_XML
    filters = [arg for path in job.fmt.filters for arg in ("--lua-filter", str(path))]
    run_tool(
        common + filters + ["--to", job.fmt.writer, "--standalone", "--output", str(xml_path)],
        job.article,
        cwd=job.article.parent.resolve(),
    )
    xml = declared(xml_path.read_text(encoding="utf-8"), metadata["lang"], metadata["renderer"])
    xml = labelled(xml, software_versions(job.workdir))
    entries = {ARTICLE_XML: xml.encode("utf-8"), MANIFEST_XML: manifest(figures), **figures}
    job.produced.write_bytes(zip_bytes(entries))
    return metadata["renderer"]


# --- the check ---------------------------------------------------------------


def read_bundle(path):
    """{name: bytes} of the zip at path (zip_entries), or RenderError."""
    return zip_entries(path, path)


def zip_entries(path, out):
    """{name: bytes} of the zip at path, once each of its entries is a
    plain file named inside the zip (member_problem): the Word edition's
    reader shares it. RenderError names `out` otherwise."""
    try:
        with zipfile.ZipFile(path) as bundle:
            infos = bundle.infolist()
            for info in infos:
                problem = member_problem(info)
                if problem:
                    raise RenderError(f"{out}: its zip entry {info.filename!r} {problem}: an edition unpacks in place")
            names = [info.filename for info in infos]
            if len(set(names)) != len(names):
                twice = sorted({name for name in names if names.count(name) > 1})
                raise RenderError(f"{out}: its zip holds {', '.join(twice)} twice: a reader would take either")
            return {info.filename: bundle.read(info) for info in infos}
    except zipfile.BadZipFile as exc:
        raise RenderError(f"{out}: not a zip: {exc}") from None


def member_problem(info):
    """Why a zip entry would unpack outside its folder or as no plain file
    (an absolute path, a folder up, a backslash or drive, a symbolic
    link), or None."""
    name = info.filename
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "is an absolute path"
    if "\\" in name:
        return "has a backslash, a folder's separator to some unzippers"
    if ".." in PurePosixPath(name).parts:
        return "climbs out of its folder (..)"
    if info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link"
    return None


def parsed(data, where):
    """article.xml's tree: its own DOCTYPE is not followed (its system id
    names no file here, and nothing is fetched), entities are not expanded."""
    from lxml import etree

    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    try:
        return etree.fromstring(data, parser).getroottree()
    except etree.XMLSyntaxError as exc:
        raise RenderError(f"{where} is not well-formed XML: line {exc.lineno}: {exc.msg}") from None


def check_valid(doc, lines, where):
    """The JATS 1.3 Archiving DTD (MathML 3) takes the document; else the
    first complaints, each with its line of XML."""
    from lxml import etree

    dtd = etree.DTD(str(DTD))
    if dtd.validate(doc):
        return
    errors = dtd.error_log.filter_from_errors()
    shown = [
        f"  line {e.line}: {e.message}\n    {lines[e.line - 1].strip()[:160] if 0 < e.line <= len(lines) else ''}"
        for e in errors[:SHOWN_ERRORS]
    ]
    more = f"\n  ... and {len(errors) - SHOWN_ERRORS} more" if len(errors) > SHOWN_ERRORS else ""
    raise RenderError(
        f"{where} is not valid JATS (the JATS 1.3 Archiving DTD with MathML 3, {DTD.name}):\n"
        + "\n".join(shown)
        + more
        + "\nthe markup of the article (or a filter's: articlekit/render/filters/bound.lua, "
        "articlekit/render/formats/jats_figures.lua) that Pandoc wrote there is one JATS does not have; "
        "write it another way"
    )


def words(text):
    return re.findall(r"\w+", text)


def plain(text):
    return " ".join(text.split())


def prose_text(root):
    """The document's text, whitespace folded, without the provenance
    table (the table-wrap of the rows with v-... ids), which quotes every
    value too: a value the prose lost must not be found there."""
    root = copy.deepcopy(root)
    for table in list(root.iter("table-wrap")):
        if any((e.get("id") or "").startswith("v-") for e in table.iter()):
            table.getparent().remove(table)
    return plain("".join(root.itertext()))


def check(job):
    """The zip as a journal reads it: valid JATS, every value shown, every
    figure packed, no shortcode left, the title the front matter's."""

    where = f"{job.out} ({ARTICLE_XML})"
    entries = read_bundle(job.produced)
    if ARTICLE_XML not in entries:
        raise RenderError(f"{job.out}: the bundle has no {ARTICLE_XML} (it holds {', '.join(sorted(entries))})")
    data = entries[ARTICLE_XML]
    doc = parsed(data, where)
    check_prolog(data, where)
    check_markup(doc.getroot(), where)
    check_valid(doc, data.decode("utf-8").splitlines(), where)
    root = doc.getroot()

    # a shortcode left over, or a metadata key no renderer knew
    unpacked = job.workdir / f"checked-{ARTICLE_XML}"
    unpacked.write_bytes(data)
    try:
        check_output(unpacked, shown_shortcodes(job.bound), where, job.article)
    except RenderError as exc:
        raise RenderError(str(exc).replace(str(unpacked), where)) from None

    front, _ = split_front_matter(job.source, job.article)
    title = root.find("front/article-meta/title-group/article-title")
    if front.get("title") and (title is None or words("".join(title.itertext())) != words(str(front["title"]))):
        shown = "none" if title is None else repr(plain("".join(title.itertext())))
        raise RenderError(
            f"{where}: its <article-title> is {shown}, not the front matter's title {front['title']!r} "
            f"({job.article}): the JATS template takes the title from the front matter's title:"
        )

    text = prose_text(root)
    for binding in job.document["bindings"].values():
        if binding.get("in_prose") and plain(binding["text"]) not in text:
            raise RenderError(
                f"{where}: the value of {binding['key']} that the prose prints, {binding['text']!r} "
                f"({', '.join(binding['locations'])}), is not in its text: a filter dropped or changed it "
                "(articlekit/render/filters/bound.lua writes a bound value for JATS)"
            )

    for graphic in root.iter("graphic", "inline-graphic"):
        href = graphic.get(XLINK_HREF) or ""
        if href not in entries or href.startswith("/") or ".." in PurePosixPath(href).parts:
            raise RenderError(
                f"{where}: line {graphic.sourceline}: <{graphic.tag} xlink:href={href!r}> names no file of "
                f"the bundle (it holds {', '.join(sorted(entries))}): every figure must be an image link "
                "into figures/ that the build wrote (articlekit/render/formats/jats_figures.lua packs it)"
            )
    check_links(root, entries, where)
    check_members(root, entries, job)


# --- what the bundle may hold --------------------------------------------------

# article.xml's prolog as declared() writes it: the XML declaration, then
# the JATS DTD's DOCTYPE, with no internal subset, so no ENTITY declaration
PROLOG = re.compile(r"\s*(?:<\?xml [^?]*\?>)?\s*" + re.escape(DOCTYPE) + r"\s*<article[\s>]")
XINCLUDE_NS = "http://www.w3.org/2001/XInclude"


def check_prolog(data, where):
    """Proves: article.xml opens with the XML declaration and the JATS
    DTD's own DOCTYPE (its public and system id, nothing added), so it
    declares no entity a reader would expand or fetch. Does not prove
    anything of the elements (check_markup, check_links)."""
    if not PROLOG.match(data.decode("utf-8", "replace")):
        head = data[: data.find(b"<article")].decode("utf-8", "replace").strip()
        declares = " (it declares an ENTITY)" if b"<!ENTITY" in data else ""
        raise RenderError(
            f"{where}: its DOCTYPE is not the JATS 1.3 DTD's alone{declares}: {head[:300]!r}; a reader would "
            "follow what it declares"
        )


def check_markup(root, where):
    """Proves: no XInclude element and no processing instruction (an
    xml-stylesheet a reader would fetch) anywhere in article.xml, before
    or after its root too."""
    from lxml import etree

    for node in itertools.chain(root.itersiblings(preceding=True), root.iter(), root.itersiblings()):
        if isinstance(node, etree._ProcessingInstruction):
            raise RenderError(f"{where}: line {node.sourceline}: a processing instruction <?{node.target} ...?>")
        if isinstance(node.tag, str) and etree.QName(node).namespace == XINCLUDE_NS:
            raise RenderError(f"{where}: line {node.sourceline}: an XInclude <{etree.QName(node).localname}>")


# the attributes a JATS or MathML reader follows or loads, by local name:
# xlink:href, MathML's altimg and src, xml:base
LINK_ATTRIBUTES = {"href", "src", "altimg", "base"}
# what a reader loads rather than follows: its file must be in the zip
LOADED = {
    "graphic", "inline-graphic", "media", "inline-media", "supplementary-material", "inline-supplementary-material",
}  # fmt: skip
# beyond the links every edition may carry (articlekit.core.urls): a DOI, an arXiv id
JATS_SCHEMES = ("doi", "arxiv")
BARE_DOI = re.compile(r"10\.\d{4,9}/\S+")


def check_links(root, entries, where):
    """Proves: every link of article.xml (link_targets) names a file of the
    zip (inside it, no folder up), or, on an element a reader follows
    rather than loads, a target jats_link_problem allows (the web, mail,
    a DOI or arXiv id, a file of the build's folder). Does not prove an
    address is still there, or that a file of the build's folder is."""
    from lxml import etree

    for element, target in link_targets(root):
        name = etree.QName(element).localname
        if in_bundle(target, entries):
            continue
        problem = "is no file of the bundle" if name in LOADED else jats_link_problem(target, element)
        if problem:
            raise RenderError(
                f"{where}: line {element.sourceline}: <{name}> links to {target!r}, which {problem}: "
                "a journal's reader would open it on its own machine"
            )


def jats_link_problem(target, element):
    """Why a JATS link a reader follows may not go to `target`, or None:
    the rule of every edition (articlekit.core.urls.link_problem), with a
    DOI or an arXiv id (doi:, arXiv:, or a bare DOI on an ext-link of
    type doi) allowed too."""
    if re.search(r"[\x00-\x1f\x7f]", target) is None and (
        scheme_of(target) in JATS_SCHEMES or (element.get("ext-link-type") == "doi" and BARE_DOI.fullmatch(target))
    ):
        return None
    return link_problem(target)


def link_targets(root):
    """(element, target) of every link attribute of the tree, and the text
    of a <uri> or <self-uri> that has none (a reader links it too)."""
    from lxml import etree

    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        links = [v for k, v in element.attrib.items() if etree.QName(k).localname in LINK_ATTRIBUTES]
        yield from ((element, value.strip()) for value in links)
        if not links and etree.QName(element).localname in ("uri", "self-uri") and (element.text or "").strip():
            yield element, element.text.strip()


def in_bundle(target, entries):
    """Whether target names a file of the zip, from inside it."""
    path = PurePosixPath(target)
    return target in entries and not path.is_absolute() and ".." not in path.parts


def check_members(root, entries, job):
    """Proves: the zip holds article.xml, manifest.xml and nothing that
    article.xml does not name; the manifest lists exactly its other
    entries, and names nothing itself; each figure the article shows
    that it holds is the file its rule wrote, byte for byte. Does not
    prove a named file that is no figure shown came from the build."""
    named = {ARTICLE_XML} | {target for _, target in link_targets(root) if target in entries}
    stray = sorted(set(entries) - named - {MANIFEST_XML})
    if stray:
        raise RenderError(f"{job.out}: the bundle holds {', '.join(stray)}, which {ARTICLE_XML} does not name")
    listed = manifest_items(entries.get(MANIFEST_XML, b""), job.out)
    if listed != set(entries) - {MANIFEST_XML}:
        raise RenderError(
            f"{job.out}: {MANIFEST_XML} lists {', '.join(sorted(listed)) or 'nothing'}, not the bundle's "
            f"entries ({', '.join(sorted(set(entries) - {MANIFEST_XML}))})"
        )
    for figure in job.figures:
        inside = PurePosixPath(Path(figure.path).as_posix()).as_posix()
        if inside in entries and entries[inside] != figure_bytes_of(job, figure):
            raise RenderError(f"{job.out}: its {inside} is not the figure its rule wrote ({figure.path})")


def manifest_items(data, out):
    """The entries manifest.xml lists: MECA's instance xlink:hrefs. Proves
    the manifest is valid against MECA's manifest DTD and declares nothing
    of its own: its prolog is that DTD's DOCTYPE alone (no internal subset,
    no ENTITY)."""
    from lxml import etree

    where = f"{out} ({MANIFEST_XML})"
    if not MANIFEST_PROLOG.match(data.decode("utf-8", "replace")):
        raise RenderError(f"{where}: its DOCTYPE is not MECA's manifest DTD's alone: {data[:300]!r}")
    root = parsed(data, where).getroot()
    dtd = etree.DTD(str(MANIFEST_DTD))
    if not dtd.validate(root):
        errors = dtd.error_log.filter_from_errors()[:SHOWN_ERRORS]
        complaints = "\n".join(f"  line {e.line}: {e.message}" for e in errors)
        raise RenderError(f"{where} is not valid against MECA's manifest DTD ({MANIFEST_DTD.name}):\n{complaints}")
    return {el.get(XLINK_HREF) for el in root.iter(f"{{{MANIFEST_NS}}}instance")}


def figure_bytes_of(job, figure):
    try:
        return checked_figure(job.root, figure.path, job.article, figure.line)[1]
    except (FigureError, OSError) as exc:
        raise RenderError(f"{job.article}:{figure.line}: the figure {figure.path} cannot be read back: {exc}") from None


FORMAT = Format(
    name="jats",
    output="build/article.jats.zip",
    describe="JATS XML (Archiving 1.3) with its figures, zipped as MECA",
    writer="jats_archiving+element_citations",  # a reference as its parts, not a styled string
    write=write,
    check=check,
    filters=(HERE / "jats_figures.lua",),
    work_folder=".jats-",
    text=False,
)
