"""Render the article to build/article.pdf through Typst. No TeX.

    python -m articlekit pdf article/index.qmd --bindings build/bindings.json --out build/article.pdf

Pandoc 3 (the same one `articlekit render` uses) writes Typst source from the
bound document (articlekit.article.bound, bind's), its spans written for
Typst by articlekit/render/filters/bound.lua, so the PDF prints the very
texts of build/bindings.json. The `typst` package then compiles it in-process, with
Typst's embedded fonts only, so the PDF looks the same on every machine.

This route serves whichever renderer built the HTML: the Quarto on our
machines ships without Quarto's Typst resources. Its own filters, beside
it (articlekit/render/formats/pdf_prepare.lua and pdf_finish.lua), make the
provenance section an appendix, size tables to the page and give Typst
absolute image paths; articlekit/render/formats/pdf_style.typ sets
code, tables, figures and the marks of claims that do not hold, each in its
status's colour (their words come from articlekit.core.status, as on the page).
"""

import argparse
import importlib.metadata
import os
import subprocess
from importlib import resources
from pathlib import Path

import yaml

from articlekit.core.log import log
from articlekit.core.status import STATUS
from articlekit.core.text import md_text
from articlekit.article.figures import figure_file
from articlekit.render.formats import Format
from articlekit.render.luafilters import BOUND_FILTER
from articlekit.render.renderers import RenderError, pandoc_path, tool_version
from articlekit.core.errors import ArticlekitError
from articlekit.core.sources import read_text

# This format's own filters and Typst style lie beside it. What renders
# (articlekit.render.page) is imported by the functions that render: the
# Plan reads FORMAT on every Snakemake call.
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
    bound document's tree (articlekit.render.page.write_ast), written from
    instead of reading it again (bound: bind's file, else made now from
    the bindings); checked either way, as the page's is
    (raw Typst in the prose is refused there), unless `shown` says it was:
    the figures the check of that very tree found (render_format's, the
    job's). Each figure must be the file its rule wrote (figure_file: no
    symbolic link), which Typst reads."""
    # what renders is imported when it renders: the Plan reads FORMAT on every Snakemake call
    from articlekit.article.bindings import load_bindings
    from articlekit.render.page import PANDOC_METADATA, bound_text, build_root, checked_tree, pandoc_source

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
        str(HERE / "pdf_style.typ"),
        "--include-in-header",
        str(marks),
        "--output",
        str(out),
    ]
    prepare, finish = FORMAT.filters  # around the bound spans' own filter: its Div of the table, its marks
    for lua in (prepare, BOUND_FILTER, finish):
        cmd += ["--lua-filter", str(lua)]
    run_pandoc(cmd, cwd=article_dir)
    return out


def run_pandoc(cmd, cwd):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.stderr.strip():
        log.warning(done.stderr.rstrip())
    if done.returncode != 0:
        raise RenderError(f"pandoc failed (exit {done.returncode}): {done.stderr.strip()}")


def check_source(typ, article):
    """No shortcode may survive into the PDF (Typst escapes `<` as `\\<`)."""
    from articlekit.render.page import expected_literal_shortcodes

    text = typ.read_text(encoding="utf-8")
    left = text.count("{{<") + text.count("{{\\<")
    allowed = expected_literal_shortcodes(read_text(article))
    if left > allowed:
        raise RenderError(f"{article}: {left - allowed} shortcode(s) were not resolved in the PDF source")


def compile_pdf(typ):
    """Typst source -> PDF bytes. Image paths are absolute, so the root is /.
    SOURCE_DATE_EPOCH, when set, fixes the PDF's creation date (reproducible builds)."""
    import typst

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    try:
        pdf, warnings = typst.compile_with_warnings(
            str(typ), root="/", ignore_system_fonts=True, timestamp=int(epoch) if epoch else None
        )
    except typst.TypstError as exc:
        raise RenderError(f"typst could not compile {typ.name}: {exc}") from None
    for warning in warnings:
        log.warning(f"typst warning: {warning}")
    return pdf


def write(job):
    """The Typst source from the bound tree (checked by render_format),
    compiled in-process."""
    typ = typst_source(job.article, job.bindings, job.workdir, job.tree, job.root, shown=job.figures)
    check_source(typ, job.article)
    job.produced.write_bytes(compile_pdf(typ))
    return renderer_name(pandoc_path())


def check(job):
    """A whole PDF: Typst's bytes, from the header to the end-of-file mark."""
    data = job.produced.read_bytes()
    if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-1024:]:
        raise RenderError(f"{job.out}: Typst wrote no whole PDF ({len(data)} bytes)")


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
    from articlekit.render.page import render_format

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
