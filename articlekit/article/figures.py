"""The figures an article shows: its image links into figures/, each with
its line, what to say of one that no rule builds, the one check of a
figure's file that every format's figure passes, and the alt text the file
carries.

The workflow reads the links (articlekit/workflow/rules/common.smk,
article_figures) as the render's inputs: the manuscript declares what the
page depends on. Every format reads a figure's file through figure_file or
checked_figure (articlekit.render.figuredata.figure_data for the page and Word,
the PDF's typst_source, the JATS bundle): a regular file in figures/, no
symbolic link, at most MAX_FIGURE_BYTES, the image its name says and, an
SVG, one that names nothing outside itself (svg_problem). This module is
what reads an SVG; articlekit.experiment.figure_text only says what a
matplotlib figure plots, for save_figure to write.
"""

import base64
import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.core.sources import SourceError, load_yaml

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
FIGURES = "figures/"


@dataclass(frozen=True)
class FigureLink:
    line: int  # 1-based, in the article
    link: str  # as written, relative to the article's folder (../figures/x.svg)
    path: str  # relative to the article's root, as the rules name it (figures/x.svg)


def figure_links(text, article_dir):
    """Every image link of the article into figures/, in the order written."""
    found = []
    for match in IMAGE_LINK.finditer(text):
        link = match.group(1)
        path = os.path.normpath(os.path.join(article_dir, link))
        if path.startswith(FIGURES):
            found.append(FigureLink(text.count("\n", 0, match.start()) + 1, link, path))
    return found


def unbuilt_figures(article, links, built):
    """The message naming each link whose figure no rule builds, with its
    line and the closest figure a rule does build; None when all are built.
    built: every path some rule writes."""
    figures = sorted(path for path in built if path.startswith(FIGURES))
    problems = []
    for each in links:
        if each.path in built:
            continue
        close = difflib.get_close_matches(each.path, figures, n=1)
        guess = f"did you mean {os.path.relpath(close[0], os.path.dirname(article) or '.')}? " if close else ""
        problems.append(
            f"{article}:{each.line}: shows {each.path}, which no rule builds; {guess}"
            f"figures that rules build: {', '.join(figures) or 'none'} (an experiment's figures are "
            f"declared in experiments: of config.yaml, each with its path)"
        )
    return "\n".join(problems) or None


class FigureError(ArticlekitError):
    """A figure the page cannot embed: FILE:LINE, why, and the fix."""


# The most bytes one figure file may hold. Every format carries the whole
# file (the page and Word as a data: URI, a third larger again; the PDF and
# the JATS zip as it is): a plot of hundreds of points is tens of kB, and one
# that draws millions of them as vector paths makes a page no browser opens.
MAX_FIGURE_BYTES = 5 * 1024 * 1024


def figure_file(root, path, article, line):
    """The file a figure link names, once it is one a rule could have written
    (located_figure) and holds a figure every format may embed
    (checked_figure): -> its path, for a renderer that reads the file itself
    (Typst, for the PDF)."""
    return checked_figure(root, path, article, line)[0]


def checked_figure(root, path, article, line):
    """(the file, its bytes): the figure read once, through no symbolic
    link, no larger than MAX_FIGURE_BYTES, and refused when it is not the
    image its name says or, an SVG, when it names anything outside itself
    (figure_problem). A format that embeds the bytes embeds these: the
    file read again could be another one."""
    target = located_figure(root, path, article, line)
    where = _where(article, line)
    payload = _read_figure(target, path, where, root)
    found = figure_problem(payload, Path(path).suffix)
    if found:
        raise FigureError(_refusal(found, path, where, root))
    return target, payload


def _where(article, line):
    return f"{article}:{line}" if line else str(article)


def located_figure(root, path, article, line):
    """root/path (path relative to the build's root, figures/NAME), once it
    is a regular file, reached through no symbolic link (the file itself or
    a folder on the way), inside root. A renderer never follows the link
    itself: articlekit reads this file and embeds its bytes."""
    root = os.path.realpath(root)
    target = os.path.join(root, path)
    where = _where(article, line)
    if os.path.realpath(target) != os.path.normpath(target):
        raise FigureError(
            f"{where}: the figure {path} is, or lies under, a symbolic link (to "
            f"{os.path.realpath(target)}): a figure must be the file its experiment's rule wrote into "
            f"{FIGURES}, never a link to another file; remove the link and rebuild (snakemake)"
        )
    if not os.path.commonpath([root, target]) == root:
        raise FigureError(f"{where}: the figure {path} resolves outside the project ({root})")
    if not os.path.isfile(target):
        raise FigureError(
            f"{where}: the figure {path} was not found ({target}): build it first (snakemake), or correct the link"
        )
    return target


def _read_figure(target, path, where, root):
    """The file's bytes, opened without following a symbolic link (one made
    after located_figure looked is refused too), at most MAX_FIGURE_BYTES:
    one byte more is read to see a file that grew since its size was taken."""
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            payload = b"" if size > MAX_FIGURE_BYTES else handle.read(MAX_FIGURE_BYTES + 1)
    except OSError as exc:
        raise FigureError(f"{where}: the figure {path} cannot be read: {exc.strerror}") from None
    if size > MAX_FIGURE_BYTES or len(payload) > MAX_FIGURE_BYTES:
        raise FigureError(
            f"{where}: the figure {path}{_drawn_by(_writer(root, path))} is {max(size, len(payload))} bytes, more than "
            f"the {MAX_FIGURE_BYTES // 2**20} MB a figure may be (MAX_FIGURE_BYTES, articlekit/article/figures.py): "
            "every format embeds the whole file; draw fewer points, pass rasterized=True to the plot call "
            "that draws most of them (matplotlib then embeds that layer as one image), or plot a summary"
        )
    return payload


# ---- what a figure's file may hold -------------------------------------------------


@dataclass(frozen=True)
class Problem:
    what: str  # what the file holds, as written: <image href="../x.png">
    why: str  # what a reader of the file would do with it
    line: int | None = None  # its line in the figure's file, when known
    fix: str | None = None  # when not the default: draw it again with save_figure


def _refusal(found, path, where, root):
    """The message for a figure that holds `found`: the article's line, the
    figure, the experiment that drew it when config.yaml says, the fix."""
    writer = _writer(root, path)
    at = f", at its line {found.line}," if found.line else ""
    rerun = f"rerun its rule (snakemake --forcerun {writer[0]})" if writer else "rebuild it (snakemake)"
    fix = found.fix or (
        "draw it with matplotlib in the experiment's plot() and save it with "
        f"articlekit.experiment.artifacts.save_figure, which writes a self-contained SVG, then {rerun}"
    )
    return f"{where}: the figure {path}{_drawn_by(writer)} holds{at} {found.what}: {found.why}; {fix}"


def _drawn_by(writer):
    return (
        f" (drawn by the experiment {writer[0]}: experiments.{writer[0]}.figures.{writer[1]} in config.yaml)"
        if writer
        else ""
    )


def _writer(root, path):
    """(experiment, output name) whose figures: entry in root/config.yaml is
    `path`, or None: a message's pointer to the code that drew the figure,
    so any config that cannot be read just leaves it out."""
    try:
        config = load_yaml(Path(root) / "config.yaml")
    except (SourceError, OSError):
        return None
    for name, entry in _mapping(_mapping(config).get("experiments")).items():
        for key, declared in _mapping(_mapping(entry).get("figures")).items():
            if isinstance(declared, str) and os.path.normpath(declared) == os.path.normpath(path):
                return name, key
    return None


def _mapping(value):
    return value if isinstance(value, dict) else {}


def _starts_with(*magic):
    return lambda data: data.startswith(magic)


# What each raster figure's bytes start with. A renderer picks its decoder
# by the bytes, not by the name: a .png holding an SVG would be drawn as
# one, and its references followed, with no check of an SVG ever run.
RASTERS = {
    ".png": ("PNG", _starts_with(b"\x89PNG\r\n\x1a\n")),
    ".jpg": ("JPEG", _starts_with(b"\xff\xd8\xff")),
    ".jpeg": ("JPEG", _starts_with(b"\xff\xd8\xff")),
    ".gif": ("GIF", _starts_with(b"GIF87a", b"GIF89a")),
    ".webp": ("WebP", lambda data: data[:4] == b"RIFF" and data[8:12] == b"WEBP"),
}


def figure_problem(payload, suffix):
    """The first thing that keeps these bytes from being a figure every
    format may embed, as a file named with `suffix`, or None."""
    suffix = suffix.lower()
    if suffix == ".svg":
        return svg_problem(payload)
    if suffix not in RASTERS:
        return Problem(
            f"a file named {suffix or 'with no suffix'}",
            f"a figure is one of {', '.join(['.svg', *RASTERS])}",
            fix="save it as SVG (save_figure) or PNG",
        )
    kind, matches = RASTERS[suffix]
    if matches(payload):
        return None
    return Problem(
        f"bytes that are not a {kind} image (they start {payload[:8].hex(' ') or 'with nothing'})",
        "a renderer reads the bytes as what they are, not as what the name says",
        fix=f"save it as {kind} (fig.savefig(path, format={kind.lower()!r})), or name it by what it holds",
    )


# ---- an SVG: a drawing of its own -------------------------------------------------
#
# Every format reads an SVG figure differently: the page shows it as an
# <img> (a browser loads nothing it names), Word embeds it, Typst draws it
# for the PDF and follows its <image href> to any file on the machine, and
# unpacks gzip. So one check, here, decides for all of them: the file is
# plain UTF-8 SVG, read as XML with no DTD and no entity, and names nothing
# outside itself but its own fragments (#id) and, in an <image>, a PNG or
# JPEG written into it as data. Matplotlib's SVG is exactly that.

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
HTML_NS = "http://www.w3.org/1999/xhtml"
XML_NS = "http://www.w3.org/XML/1998/namespace"
XML_BASE = f"{{{XML_NS}}}base"

# The DOCTYPEs an SVG may declare (matplotlib writes 1.1's): a public name
# no reader fetches, with no declarations of its own.
SVG_DOCTYPES = {
    ("-//W3C//DTD SVG 1.1//EN", "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"),
    ("-//W3C//DTD SVG 1.0//EN", "http://www.w3.org/TR/2001/REC-SVG-20010904/DTD/svg10.dtd"),
}

# Elements no figure needs, by what they would do (names read in lowercase:
# a reader lenient about case must not find one that a strict one missed).
_REFUSED = {
    "a script, which runs": ("script", "handler", "listener"),
    "another vocabulary's content (HTML), which loads and runs what HTML does": ("foreignobject",),
    "another document or medium, loaded from where it names": (
        "iframe",
        "embed",
        "object",
        "audio",
        "video",
        "source",
        "track",
        "link",
        "meta",
        "base",
    ),
    "an animation, which can set an attribute (an href among them) after any check": (
        "animate",
        "animatecolor",
        "animatemotion",
        "animatetransform",
        "set",
        "discard",
    ),
}
REFUSED_ELEMENTS = {name: why for why, names in _REFUSED.items() for name in names}

# Attributes whose value is a URL a reader may fetch (any namespace's: href
# is SVG 2's, xlink:href SVG 1.1's).
URL_ATTRIBUTES = {"href", "src", "srcset"}

# The images an <image> may carry inside the SVG, as data: base64.
EMBEDDED_IMAGES = re.compile(r"data:image/(png|jpeg);base64,", re.I)

OUTSIDE = (
    "a reference to something outside the figure, which a renderer reads into the article (Typst does, for the PDF)"
)


def _etree():
    """lxml's etree, imported when an SVG is read: the plan imports this
    module on every Snakemake call (the figure links), and reads no SVG."""
    from lxml import etree

    return etree


def svg_problem(payload):
    """The first thing in an SVG file's bytes that makes it more than a
    drawing of its own, or None."""
    found = _text_problem(payload)
    if found:
        return found
    try:
        root = parse_svg(payload)
    except _etree().XMLSyntaxError as exc:
        return Problem(f"XML that is not well-formed ({exc.msg})", "no two readers agree on what it draws", exc.lineno)
    return _prolog_problem(root) or next(filter(None, map(_node_problem, root.iter())), None)


def parse_svg(payload):
    """The root element of an SVG file's bytes, read as UTF-8 whatever they
    declare, with no DTD loaded, no entity expanded, nothing fetched."""
    etree = _etree()
    parser = etree.XMLParser(encoding="utf-8", resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False)
    return etree.fromstring(payload, parser)


def _text_problem(payload):
    """What the bytes are before any XML is read: gzip (Typst unpacks it,
    nothing else does), not UTF-8, declared in another encoding, or
    declaring entities or a DTD of their own."""
    if payload[:2] == b"\x1f\x8b":
        return Problem(
            "gzip-compressed bytes (an .svgz under an .svg name)",
            "Typst unpacks and draws them for the PDF, where no check reads what they hold",
            fix="save it as plain SVG (save_figure writes it so)",
        )
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(
            f"bytes that are not UTF-8 (from byte {exc.start})",
            "an SVG figure is UTF-8 text, which every reader reads the same",
            fix="save it as plain SVG (save_figure writes UTF-8)",
        )
    declared = re.match(r"\ufeff?\s*<\?xml[^>]*?\bencoding\s*=\s*[\"']([^\"']*)", text)
    if declared and declared.group(1).lower() != "utf-8":
        return Problem(
            f'an XML declaration of encoding="{declared.group(1)}"',
            "readers that believe it read other characters than the UTF-8 the bytes are",
            1,
        )
    for pattern, what in (
        (r"<!ENTITY", "an <!ENTITY> declaration"),
        (r"<!DOCTYPE[^>\[]*\[", "a DOCTYPE with declarations of its own ([...])"),
    ):
        found = re.search(pattern, text, re.I)
        if found:
            why = "an entity puts text, or the file its SYSTEM name names, wherever it is used"
            return Problem(what, why, text.count("\n", 0, found.start()) + 1)
    return None


def _prolog_problem(root):
    """The document around the root element: SVG's own DOCTYPE at most, no
    processing instruction (<?xml-stylesheet?> loads a style sheet), and an
    SVG root."""
    etree = _etree()
    info = root.getroottree().docinfo
    if info.doctype and (info.public_id, info.system_url) not in SVG_DOCTYPES:
        return Problem(f"the DOCTYPE {info.doctype}", "a DTD other than SVG's own, which a reader may fetch", 1)
    around = [*root.itersiblings(preceding=True), *root.itersiblings()]
    found = next((node for node in around if isinstance(node, etree._ProcessingInstruction)), None)
    if found is not None:
        return _node_problem(found)
    if root.tag != f"{{{SVG_NS}}}svg":
        return Problem(
            f"the root element <{root.tag}>, not SVG's <svg xmlns=\"{SVG_NS}\">",
            "an SVG figure is an SVG document",
            root.sourceline,
        )
    return None


def _node_problem(node):
    etree = _etree()
    if isinstance(node, etree._ProcessingInstruction):
        return Problem(
            f"the processing instruction {_short(str(node))}", "it makes a reader load a file", node.sourceline
        )
    if isinstance(node, etree._Entity):
        return Problem(f"the entity reference {node}", "it puts text from outside the drawing into it", node.sourceline)
    if isinstance(node.tag, str):  # an element (not a comment)
        return _element_problem(node)
    return None


def _element_problem(element):
    namespace, name = _split(element.tag)
    # matplotlib's RDF in <metadata> (its title, its creator: dc:source may
    # be one) is no reader's to draw or run; SVG and HTML are, anywhere
    inert = namespace not in (SVG_NS, HTML_NS, None) and _in_metadata(element)
    if name.lower() in REFUSED_ELEMENTS and not inert:
        return Problem(f"<{name}>", REFUSED_ELEMENTS[name.lower()], element.sourceline)
    if namespace != SVG_NS and not inert:
        return Problem(
            f"<{element.tag}>, an element outside SVG",
            "a reader may read it as HTML, which loads and runs",
            element.sourceline,
        )
    for attribute, value in element.attrib.items():
        found = _attribute_problem(name, attribute, value)
        if found:
            return Problem(found[0], found[1], element.sourceline)
    if namespace == SVG_NS and name == "style":
        found = _css_problem("".join(element.itertext()), "<style>")
        if found:
            return Problem(found[0], found[1], element.sourceline)
    return None


def _in_metadata(element):
    return any(above.tag == f"{{{SVG_NS}}}metadata" for above in element.iterancestors())


def _attribute_problem(element, attribute, value):
    """(what, why) for an attribute that runs or names something outside
    the figure, or None: an event handler, a URL but a fragment (#id) or an
    embedded PNG or JPEG, and any CSS url() but a fragment's."""
    namespace, name = _split(attribute)
    spelled = {XLINK_NS: "xlink:", XML_NS: "xml:"}.get(namespace, "") + name
    shown = f'<{element} {spelled}="{_short(value)}">'
    if name.lower().startswith("on"):
        return shown, "an event handler: a script, which runs"
    if name.lower() in URL_ATTRIBUTES or attribute == XML_BASE:
        return None if _self_contained(element, value) else (shown, OUTSIDE)
    return _css_problem(value, f"<{element} {spelled}=...>")


def _self_contained(element, value):
    """A URL that names a part of the figure itself: a fragment (#id), or in
    an <image>, a PNG or JPEG written into it (as matplotlib writes imshow's
    pixels), whose bytes are checked to be one: a renderer would draw an
    SVG given as data:image/png, and follow what that one names."""
    value = value.strip()
    if value.startswith("#"):
        return not re.search(r"[\x00-\x1f\x7f]", value)
    embedded = EMBEDDED_IMAGES.match(value)
    if element != "image" or not embedded:
        return False
    head = "".join(value[embedded.end() :].split())[:24]  # 18 bytes: more than any magic number
    try:
        data = base64.b64decode(head + "=" * (-len(head) % 4))
    except ValueError:
        return False
    return RASTERS[f".{embedded.group(1).lower()}"][1](data)


def _css_problem(css, where):
    """(what, why) for the first URL a piece of CSS names that is not a
    fragment of the figure (url(#clip)), @import always; or None."""
    from articlekit.core.css import fetched_at  # tinycss2, when an SVG is read (see _etree)

    for form, url, _ in fetched_at(css):
        if form.startswith("@import") or not url.strip().startswith("#"):
            return f"{form} in {where}", OUTSIDE
    return None


def _split(name):
    """(namespace or None, local name) of an lxml tag or attribute name."""
    if name.startswith("{"):
        namespace, _, local = name[1:].partition("}")
        return namespace, local
    return None, name


def _short(text, limit=80):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def alt_text(payload, media):
    """The alt text a figure's file carries, or None: an SVG's own <title>
    (its first, a child of its root), which
    articlekit.experiment.artifacts.save_figure writes from the data it
    plots (articlekit.experiment.figure_text)."""
    if media != "image/svg+xml":
        return None
    try:
        root = parse_svg(payload)
    except _etree().XMLSyntaxError:
        return None
    title = next((child for child in root if child.tag == f"{{{SVG_NS}}}title"), None)
    if title is None:
        return None
    return " ".join("".join(title.itertext()).split()) or None
