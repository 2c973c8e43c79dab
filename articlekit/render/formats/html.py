"""The page: build/article.html, self-contained, by Quarto or Pandoc.

Its figures are embedded by articlekit (articlekit.render.page.figure_data,
filters/embed_figures.lua), its style sheets checked to load nothing
first, and what it wrote must pass the page check (articlekit.render.pagecheck:
nothing loaded, run or navigated to but the page itself; every option
_quarto.yml asks for) and show the provenance table as a table. It is kept
as build/last-good/article.html too, the page a failed render names.

The Plan reads FORMAT on every Snakemake call: what renders is imported
when it renders (articlekit.render.page and what it imports).
"""

from articlekit.render.formats import Format
from articlekit.render.luafilters import EMBED_FIGURES_FILTER, SCROLL_REGIONS_FILTER


def write(job):
    from articlekit.render import page, pagecheck

    project_dir = page.project_root(job.article.parent.resolve())
    page.check_style_sheets(project_dir, page.project_options(project_dir))
    job.extra["figure-data"] = page.embedded_figures(job)
    if job.renderer == "quarto":
        name = page.quarto_render(job, "html", scripts=True)
    else:
        name = page.pandoc_page(job)
    pagecheck.add_policy(job.produced)  # the reader's browser's own lock, whatever the check misses
    return name


def check(job):
    from articlekit.render import page, pagecheck

    project_dir = page.project_root(job.article.parent.resolve())
    # the options the page is checked against are the ones the render read
    pagecheck.check_page(
        job.produced,
        page.project_options(project_dir),
        project_dir / "_quarto.yml",
        out=job.out,
        own_scripts=job.extra["own-scripts"],
    )
    page.check_page_structure(job.source, job.document["provenance_md"], job.produced)


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
    keeps_last_good=True,
    says_failed_claims=True,
)
