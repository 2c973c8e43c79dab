"""The page: build/article.html, self-contained, by Quarto or Pandoc.

Its figures are embedded by articlekit (articlekit.render.page.figure_data,
filters/embed_figures.lua), its style sheets checked to load nothing
first, and what it wrote must pass the page check (articlekit.render.pagecheck:
nothing loaded, run or navigated to but the page itself; every option
_quarto.yml asks for) and show the provenance table as a table. It is kept
as build/last-good/article.html too, the page a failed render names.
"""

from articlekit.core.sources import read_text
from articlekit.render.formats import Format
from articlekit.render.page import (
    HTML_FILTERS,
    check_page_structure,
    check_style_sheets,
    embedded_figures,
    pandoc_page,
    project_options,
    project_root,
    quarto_render,
)
from articlekit.render.pagecheck import check_page


def write(job):
    project_dir = project_root(job.article.parent.resolve())
    check_style_sheets(project_dir, project_options(project_dir))
    job.extra["figure-data"] = embedded_figures(job)
    if job.renderer == "quarto":
        return quarto_render(job, "html", scripts=True)
    return pandoc_page(job)


def check(job):
    project_dir = project_root(job.article.parent.resolve())
    # the options the page is checked against are the ones the render read
    check_page(
        job.produced,
        project_options(project_dir),
        project_dir / "_quarto.yml",
        out=job.out,
        own_scripts=job.extra["own-scripts"],
    )
    check_page_structure(read_text(job.article), job.document["provenance_md"], job.produced)


FORMAT = Format(
    name="html",
    output="build/article.html",
    describe="the page, self-contained",
    writer="html5",
    write=write,
    check=check,
    filters=HTML_FILTERS,
    work_folder=".render-",
    quarto=True,
    keeps_last_good=True,
    says_failed_claims=True,
)
