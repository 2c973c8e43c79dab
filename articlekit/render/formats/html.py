"""The page: build/article.html, self-contained, by Quarto or Pandoc.

Its figures are embedded by articlekit (articlekit.render.figuredata,
filters/embed_figures.lua), its style sheets checked to load nothing
first, and what it wrote must pass the page check (articlekit.render.pagecheck:
nothing loaded, run or navigated to but the page itself; every option
_quarto.yml asks for) and show the provenance table as a table. It is kept
as build/last-good/article.html too, the page a failed render names.
"""

from articlekit.render import pagecheck
from articlekit.render.checks import check_page_structure
from articlekit.render.figuredata import embedded_figures
from articlekit.render.formats import Format
from articlekit.render.luafilters import EMBED_FIGURES_FILTER, SCROLL_REGIONS_FILTER
from articlekit.render.pandoc_route import pandoc_page
from articlekit.render.project import check_style_sheets, project_options, project_root
from articlekit.render.quarto_route import quarto_render


def write(job):
    project_dir = project_root(job.article.parent.resolve())
    check_style_sheets(project_dir, project_options(project_dir))
    job.extra["figure-data"] = embedded_figures(job)
    if job.renderer == "quarto":
        name = quarto_render(job, scripts=True)
    else:
        name = pandoc_page(job)
    pagecheck.add_policy(job.produced)  # the reader's browser's own lock, whatever the check misses
    return name


def check(job):
    project_dir = project_root(job.article.parent.resolve())
    # the options the page is checked against are the ones the render read
    pagecheck.check_page(
        job.produced,
        project_options(project_dir),
        project_dir / "_quarto.yml",
        out=job.out,
        own_scripts=job.extra["own-scripts"],
    )
    check_page_structure(job.source, job.document["provenance_md"], job.produced)


FORMAT = Format(
    name="html",
    output="build/article.html",
    describe="the page, self-contained",
    writer="html5",
    write=write,
    check=check,
    # the page's own filters, after the bound spans' and the layout's
    filters=(EMBED_FIGURES_FILTER, SCROLL_REGIONS_FILTER),
    work_folder=".render-",
    quarto=True,
    quarto_writer="html",
    keeps_last_good=True,
    says_failed_claims=True,
    priority=1,  # the page: what `quarto preview`, `articlekit preview` and a browser show
)
