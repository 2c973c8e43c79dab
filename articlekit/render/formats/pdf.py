"""Render the article to build/article.pdf through Typst. No TeX.

    python -m articlekit pdf article/index.qmd --bindings build/bindings.json --out build/article.pdf

Pandoc 3 (the same one `articlekit render` uses) writes Typst source from the
bound document (articlekit.article.bound, bind's), its spans written for
Typst by articlekit/render/filters/bound.lua, so the PDF prints the very
texts of build/bindings.json. The `typst` package then compiles it in-process, with
Typst's embedded fonts only, so the PDF looks the same on every machine,
and with its root at a folder of the work folder that holds the source
and the figures alone (compile_pdf): no file of the machine can reach the
PDF. The check reads the PDF back (its objects with pypdf, its pages' text
with PDFium) for what a viewer would run, open or fetch, pictures no figure
holds, and lines of the machine's files.

This route serves whichever renderer built the HTML: the Quarto on our
machines ships without Quarto's Typst resources. Its own filters, beside
it (articlekit/render/formats/pdf_prepare.lua and pdf_finish.lua), make the
provenance section an appendix, size tables to the page and give Typst
absolute image paths (which it reads from its root, where typst_root
copies each figure under that path); articlekit/render/formats/pdf_style.typ sets
code, tables, figures and the marks of claims that do not hold, each in its
status's colour (their words come from articlekit.core.status, as on the page).
"""

import argparse
import importlib.metadata
import io
import json
import os
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path

import yaml

from articlekit.article.bindings import load_bindings
from articlekit.article.figures import FigureError, checked_figure, figure_file
from articlekit.core.errors import ArticlekitError
from articlekit.core.log import log
from articlekit.core.status import STATUS
from articlekit.core.text import md_text
from articlekit.core.urls import link_problem
from articlekit.render.checks import shown_shortcodes
from articlekit.render.citations import citation_args
from articlekit.render.figuredata import figure_bytes
from articlekit.render.formats import Format
from articlekit.render.luafilters import BOUND_FILTER, CROSSREF_FILTER
from articlekit.render.page import render_format
from articlekit.render.project import PANDOC_METADATA, project_config, project_root
from articlekit.render.renderers import RenderError, pandoc_file, pandoc_path, tool_version
from articlekit.render.source import bound_text, build_root, checked_tree, pandoc_source
from articlekit.render.tools import run_tool

# This format's own filters and Typst style lie beside it.
HERE = resources.files("articlekit.render.formats")

# Pandoc's Typst template variables: an A4 paper, numbered sections.
PAGE = {
    "papersize": "a4",
    "margin": {"x": "2.4cm", "y": "2.5cm"},
    "mainfont": "Libertinus Serif",
    "codefont": "DejaVu Sans Mono",
    "fontsize": "10.5pt",
    "section-numbering": "1.1",
    "page-numbering": "1",
}


def typst_keywords(keywords):
    """The front matter's keywords as Typst string literals, each a raw
    Typst inline: Pandoc's Typst template writes them bare, so that a word
    is read as a variable ("unknown variable: attention") and the PDF does
    not compile."""
    out = []
    for keyword in keywords if isinstance(keywords, list) else [keywords]:
        text = " ".join(str(keyword).split())
        if not text:
            continue
        literal = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        fence = "`" * (max((len(run) for run in re.findall(r"`+", literal)), default=0) + 1)
        out.append(f"{fence}{literal}{fence}{{=typst}}")
    return out


def claim_mark_rules():
    """Typst show rules giving each claim mark its colour where no class can
    reach it: inside code, where value.lua prints the mark as plain text.
    pdf_style.typ's claim-mark colours it by the mark's class."""
    return "".join(
        f'#show "{s.page_mark}": it => claim-mark("{s.page_class}", it)\n' for s in STATUS.values() if s.page_mark
    )


def renderer_name(pandoc):
    return f"Pandoc {tool_version(pandoc)} and Typst (typst {importlib.metadata.version('typst')} for Python)"


def typst_source(article, bindings, workdir, ast=None, root=None, bound=None, shown=None):
    """Write the article as Typst source in workdir -> its path. ast: the
    bound document's tree (articlekit.render.source.write_ast), written from
    instead of reading it again (bound: bind's file, else made now from
    the bindings); checked either way, as the page's is
    (raw Typst in the prose is refused there), unless `shown` says it was:
    the figures the check of that very tree found (render_format's, the
    job's). Each figure must be the file its rule wrote (figure_file: no
    symbolic link), which Typst reads."""
    # what renders is imported when it renders: the Plan reads FORMAT on every Snakemake call

    article_dir = article.parent.resolve()
    pandoc = pandoc_path()
    try:
        if shown is not None:
            tree, figures = Path(ast).resolve(), shown
        else:
            text = None if ast is not None else bound_text(article, load_bindings(bindings), bound)
            tree, figures = checked_tree(article, workdir, ast, root, text)
        for figure in figures:
            figure_file(build_root(root, article), figure.path, article, figure.line)
    except ValueError as exc:  # ProseError, FigureError: their message names the line and the fix
        raise RenderError(str(exc)) from None
    front, source, reader = pandoc_source(article, tree)
    metadata = {key: value for key, value in front.items() if key in PANDOC_METADATA}
    if metadata.get("keywords"):
        metadata["keywords"] = typst_keywords(metadata["keywords"])
    metadata.update(PAGE)
    metadata["renderer"] = md_text(renderer_name(pandoc))
    meta_file = workdir / "metadata.yaml"
    meta_file.write_text(yaml.safe_dump(metadata, allow_unicode=True), encoding="utf-8")
    out = workdir / "article.typ"
    marks = workdir / "claim_marks.typ"
    marks.write_text(claim_mark_rules(), encoding="utf-8")
    cmd = [
        pandoc,
        str(source),
        "--from",
        reader,
        "--to",
        "typst",
        "--standalone",
        "--wrap",
        "preserve",
        "--shift-heading-level-by",
        "-1",
        "--metadata-file",
        str(meta_file),
        "--include-in-header",
        pandoc_file(HERE / "pdf_style.typ"),
        "--include-in-header",
        pandoc_file(marks),
        "--output",
        str(out),
    ]
    prepare, finish = FORMAT.filters  # around the bound spans' own filter: its Div of the table, its marks
    for lua in (prepare, BOUND_FILTER, CROSSREF_FILTER, finish):
        cmd += ["--lua-filter", str(lua)]
    project_dir = project_root(article_dir)
    document = load_bindings(bindings) if bindings is not None else None  # for the bibliography's values
    cmd += citation_args(project_config(project_dir), project_dir, workdir, document)  # after the filters: citeproc
    # one runner for every Pandoc: a filter's, a citation's and a formula's
    # errors named by the article's line
    run_tool(cmd, article, cwd=article_dir)
    return out


def check_source(typ, article, bound):
    """No shortcode may survive into the PDF (Typst escapes `<` as `\\<`)
    beyond those the bound document prints."""

    text = typ.read_text(encoding="utf-8")
    left = text.count("{{<") + text.count("{{\\<")
    allowed = shown_shortcodes(bound)
    if left > allowed:
        raise RenderError(f"{article}: {left - allowed} shortcode(s) were not resolved in the PDF source")


# The folder Typst compiles in, inside the work folder: its root. Typst
# refuses a path that leaves its root and reads a path from / as one from
# the root, so the source reads only what is put here.
TYPST_ROOT = "typst-root"


def typst_root(typ, figures):
    """A fresh folder beside typ, Typst's root: a copy of typ and one of
    each figure, under the path the source names it by (pdf_prepare.lua
    writes absolute paths, which Typst reads from its root), nothing else.
    figures: {path as the source names it: the figure's checked bytes
    (typst_figures), or a file to read}. -> (the root, the source's copy there)."""

    root = Path(tempfile.mkdtemp(prefix=f"{TYPST_ROOT}-", dir=typ.parent)).resolve()
    for named, path in figures.items():
        copy = root / os.path.normpath(named).lstrip("/")
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path if isinstance(path, bytes) else figure_bytes(path))
    source = root / typ.name
    shutil.copyfile(typ, source)
    return root, source


def compile_pdf(typ, figures=None, article=None):
    """Typst source -> PDF bytes, compiled with its root at a folder of its
    own that holds the source and the figures (typst_root), so that no
    read(), image() or SVG's linked image can reach any other file; local
    packages are looked for in an empty folder, not the user's. (It does
    not stop an `import "@preview/..."` from downloading that package:
    only raw Typst could write one, and the prose check refuses it.) A
    Typst error names `article` (else typ), not the scratch folder.
    SOURCE_DATE_EPOCH, when set, fixes the PDF's creation date (reproducible builds)."""
    import typst

    root, source = typst_root(Path(typ), figures or {})
    packages = root.parent / f"{root.name}-packages"  # beside the root: the source cannot read it
    packages.mkdir()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    try:
        pdf, warnings = typst.compile_with_warnings(
            str(source),
            root=str(root),
            ignore_system_fonts=True,
            timestamp=int(epoch) if epoch else None,
            package_path=str(packages),
            package_cache_path=str(packages),
        )
    except typst.TypstError as exc:
        raise RenderError(typst_failure(exc, root, article or typ)) from None
    for warning in warnings:
        log.warning(f"typst warning: {unrooted(str(warning), root)}")
    return pdf


def unrooted(text, root):
    """Typst's text with the scratch root taken out of its paths: /etc/passwd
    reads as the source named it, not as the root's etc/passwd."""
    # the longer first: the relative form (../../tmp/...) ends with the absolute one's text
    for form in sorted({str(root), os.path.relpath(root)}, key=len, reverse=True):
        if root.name in form:  # never a bare "." or ".."
            text = text.replace(form + "/", "/").replace(form, "/")
    return text


# where Typst's diagnostic points: "┌─ FILE:LINE:COLUMN", and the line it shows
DIAGNOSTIC_AT = re.compile(r"┌─ (\S+?):(\d+):\d+")
DIAGNOSTIC_LINE = re.compile(r"^\s*(\d+) │ (.*)$", re.M)


def typst_failure(exc, root, article):
    """The message of a Typst error: the article, what Typst said, and where
    in its source (or in which figure) it stopped."""
    said = unrooted(getattr(exc, "message", "") or str(exc), root)
    diagnostic = unrooted(getattr(exc, "diagnostic", "") or "", root)
    at = DIAGNOSTIC_AT.search(diagnostic)
    where = ""
    if at:
        shown = DIAGNOSTIC_LINE.search(diagnostic, at.end())
        code = f": {shown.group(2).strip()[:160]}" if shown else ""
        file = at.group(1).lstrip("/")
        where = f" (line {at.group(2)} of its Typst source{code})" if file.endswith(".typ") else f" (in {at.group(1)})"
    return (
        f"{article}: Typst could not compile the PDF: {said}{where}; Typst reads only its source and the "
        "figures the article shows: its root, where a path from / starts, is a folder that holds nothing else"
    )


def typst_figures(job):
    """{path as the Typst source names it: the bytes checked_figure read and
    checked} for each figure the article shows (the bytes Typst reads are
    the bytes checked, never the file read again): pdf_prepare.lua makes
    each link absolute from the article's folder, where Pandoc ran."""
    article_dir = job.article.parent.resolve()
    try:
        return {
            os.path.normpath(os.path.join(article_dir, figure.link)): checked_figure(
                job.root, figure.path, job.article, figure.line
            )[1]
            for figure in job.figures
        }
    except FigureError as exc:
        raise RenderError(str(exc)) from None


def write(job):
    """The Typst source from the bound tree (checked by render_format),
    compiled in-process."""
    typ = typst_source(job.article, job.bindings, job.workdir, job.tree, job.root, shown=job.figures)
    check_source(typ, job.article, job.bound)
    job.produced.write_bytes(compile_pdf(typ, typst_figures(job), job.article))
    return renderer_name(pandoc_path())


def check(job):
    """A whole PDF that carries only what the build made: Typst's bytes, from
    the header to the end-of-file mark; no action, file or link beyond
    what the article writes (check_active); no more pictures than its
    figures hold (check_pictures); no line of the machine's own files
    (check_canaries)."""
    import pypdf

    data = job.produced.read_bytes()
    if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-1024:]:
        raise RenderError(f"{job.out}: Typst wrote no whole PDF ({len(data)} bytes)")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        objects = list(pdf_objects(reader))
    except Exception as exc:  # pypdf raises its own errors and Python's alike on a broken file
        raise RenderError(f"{job.out}: the PDF cannot be read back ({exc})") from None
    check_active(objects, job.out)
    check_pictures(objects, job)
    check_canaries(data, objects, job)


def pdf_objects(reader):
    """Every object a reader of the PDF can reach from its trailer, each
    once: dictionaries (streams among them), strings, names, numbers."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    seen, stack = set(), [reader.trailer]
    while stack:
        obj = stack.pop()
        if isinstance(obj, IndirectObject):
            if (obj.idnum, obj.generation) in seen:
                continue
            seen.add((obj.idnum, obj.generation))
            obj = obj.get_object()
        if isinstance(obj, DictionaryObject):
            stack.extend(obj.values())
        elif isinstance(obj, ArrayObject):
            stack.extend(obj)
        if obj is not None:
            yield obj


# What a PDF viewer runs, opens or fetches, which Typst writes for no
# source the build makes: actions by their /S, dictionary keys, and the
# /Type or /Subtype of files and media.
REFUSED_ACTIONS = {
    "/Launch", "/JavaScript", "/GoToR", "/GoToE", "/ImportData", "/SubmitForm",
    "/RichMediaExecute", "/Rendition", "/Sound", "/Movie",
}  # fmt: skip
REFUSED_KEYS = {"/JS", "/JavaScript", "/AA", "/EmbeddedFiles", "/EF", "/AF", "/XFA"}
REFUSED_TYPES = {"/EmbeddedFile", "/Filespec", "/FileAttachment", "/Movie", "/Sound", "/Screen", "/RichMedia", "/3D"}


def check_active(objects, out):
    """Proves: nothing in the PDF runs, opens another file or holds one
    (JavaScript, launch, remote go-to, form submission, embedded or
    attached files, media), and every URI link goes where the page's may
    (articlekit.core.urls: the web, mail, a file of the build's folder).
    Does not prove a web link is one the article wrote: the prose check
    holds the article's own links to the same rule."""
    from pypdf.generic import DictionaryObject

    for obj in objects:
        if not isinstance(obj, DictionaryObject):
            continue
        found = refused_entry(obj)
        if found:
            raise RenderError(
                f"{out}: the PDF holds {found}, which the Typst source the build writes never asks for: "
                "nothing in an edition may run, open or hold a file"
            )
        uri = obj.get("/URI", "") if obj.get("/S") == "/URI" else None
        uri = uri.decode("latin-1") if isinstance(uri, bytes) else uri
        problem = uri is not None and link_problem(str(uri))
        if problem:
            raise RenderError(
                f"{out}: the PDF's link {str(uri)!r} {problem}: a link may go to a web page (https://...), "
                "a mail address, a place in the document or a file of the build's folder"
            )


def refused_entry(obj):
    """What the PDF dictionary `obj` holds that check_active refuses, in
    words, or None."""
    keys = REFUSED_KEYS & set(obj.keys())
    if keys:
        return f"an entry {sorted(keys)[0]} (JavaScript, an automatic action, or an attached file)"
    if obj.get("/S") in REFUSED_ACTIONS and obj.get("/Type") != "/StructElem":  # a tagged PDF's /S is a role
        return f"a {obj['/S']} action"
    for key in ("/Type", "/Subtype"):
        if obj.get(key) in REFUSED_TYPES:
            return f"a {key} {obj[key]} (a file, or media a viewer plays)"
    return None


def check_pictures(objects, job):
    """Proves: the PDF holds no more raster pictures than the figures the
    article shows hold (one for a PNG or JPEG, one per <image> of an SVG),
    so none came from elsewhere. Typst draws an SVG's shapes as vectors,
    which no picture count sees; their bytes are the figures' (typst_root)."""
    from pypdf.generic import StreamObject

    # each object comes once (pdf_objects); a mask of transparency is no picture of its own
    images = {id(obj): obj for obj in objects if isinstance(obj, StreamObject) and obj.get("/Subtype") == "/Image"}
    masks = {id(obj[key].get_object()) for obj in images.values() for key in ("/SMask", "/Mask") if key in obj}
    found = len(set(images) - masks)
    allowed = sum(raster_pictures(path) for path in typst_figures(job).values())
    if found > allowed:
        raise RenderError(
            f"{job.out}: the PDF holds {found} picture(s), but the {len(job.figures)} figure(s) the article "
            f"shows ({', '.join(f.path for f in job.figures) or 'none'}) hold {allowed}: a picture came from "
            "somewhere else"
        )


def raster_pictures(figure):
    """How many raster pictures a figure (its bytes, or its file) brings
    into the PDF: an SVG its <image> elements, any other figure itself."""
    data = figure if isinstance(figure, bytes) else Path(figure).read_bytes()
    if not data.lstrip().startswith((b"<", b"\xef\xbb\xbf<")):
        return 1  # a raster (checked_figure matched its bytes to its name)
    return len(re.findall(rb"<(?:[\w.-]+:)?image\b", data))


# Files of the machine that no build writes: a line of theirs in the PDF
# was read from the machine, not from the build
CANARY_FILES = ("/etc/passwd", "/etc/hostname", "/etc/machine-id")
SHORTEST_CANARY = 7  # a shorter host name ("vm", "box1") could be a word of any article


def canaries(files):
    """The first line of each file of `files` that can be read, when it is
    long enough to be found only by copying it, without its blanks."""
    found = []
    for name in files:
        try:
            with open(name, encoding="utf-8", errors="replace") as handle:
                line = re.sub(r"\s+", "", handle.readline())
        except OSError:
            continue
        if len(line) >= SHORTEST_CANARY and line != "localhost":
            found.append((name, line))
    return found


def check_canaries(data, objects, job):
    """A heuristic, not a proof: the PDF's text (its pages, its strings
    and metadata) holds no first line of a few files every machine has
    and no build writes (CANARY_FILES), unless the article prints it
    itself (the real one prints its host's name, a bound value). It
    catches a source that read one of them past its root; the guarantee
    that it cannot is Typst's root (compile_pdf). It proves nothing about
    any other file, or one printed in pieces."""
    text = page_text(data)
    text += "".join(str(obj) for obj in objects if isinstance(obj, str))  # text strings, names
    text += "".join(bytes(obj).decode("latin-1") for obj in objects if isinstance(obj, bytes))  # byte strings
    text += "".join(obj.get_data().decode("utf-8", "replace") for obj in objects if metadata_stream(obj))
    text, printed = unspaced(text), unspaced(job.bound + json.dumps(job.document, ensure_ascii=False))
    for name, line in canaries(CANARY_FILES):
        if line in text and line not in printed:
            raise RenderError(
                f"{job.out}: the PDF's text holds the first line of {name}, a file of this machine that no build "
                "writes and the article does not print: the Typst source read it, or an input copied it"
            )


def page_text(pdf):
    """The text of every page of the PDF (its bytes), as a reader copying it would
    get it. PDFium (pypdfium2), not pypdf: pypdf's pure-Python reading of
    every page's content stream took 3 to 4 s of the PDF's job on a quiet
    machine, PDFium about 0.1 s."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        return "".join(page.get_textpage().get_text_bounded() for page in document)
    finally:
        document.close()


def unspaced(text):
    """Text as compared with a canary: no blanks (Typst breaks lines
    anywhere) nor the marks a reader puts where it breaks a word (PDFium's
    \\x02 and \\ufffe, a soft hyphen), Typst's minus sign a hyphen again."""
    return re.sub(r"[\s\u200b\u00ad\x02\ufffe]+", "", text.replace("\u2212", "-"))


def metadata_stream(obj):
    from pypdf.generic import StreamObject

    return isinstance(obj, StreamObject) and obj.get("/Type") == "/Metadata"


FORMAT = Format(
    name="pdf",
    output="build/article.pdf",
    describe="the PDF edition, through Typst (no TeX)",
    writer="typst",
    write=write,
    check=check,
    filters=(HERE / "pdf_prepare.lua", HERE / "pdf_finish.lua"),
    work_folder=".pdf-",
    text=False,
    tools=("pandoc", "typst"),
)


def render_pdf(article, bindings, out, ast=None):

    return render_format(FORMAT, article, bindings, out, ast=ast)


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit pdf", description=__doc__.splitlines()[0])
    parser.add_argument("article")
    parser.add_argument("--bindings", required=True, help="build/bindings.json from `articlekit bind`")
    parser.add_argument("--out", required=True, help="where to write build/article.pdf")
    parser.add_argument("--ast", help="build/article.ast.json from `articlekit parse`, to write from")
    args = parser.parse_args(argv)
    try:
        render_pdf(args.article, args.bindings, args.out, args.ast)
    except (ArticlekitError, OSError) as exc:  # RenderError, ProseError among them
        log.error(f"pdf: {exc}")
        return 1
    log.info(f"pdf: {args.article} -> {args.out}")
    return 0
