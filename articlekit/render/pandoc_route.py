"""The Pandoc route: what every Pandoc run of a format shares (its
metadata, filters, reader and resource path: pandoc_run), and the page
(pandoc_page) and the GitHub markdown (pandoc_markdown) written by Pandoc
from the bound document's tree.
"""

import yaml

from articlekit.core.text import md_code
from articlekit.render.citations import citation_args
from articlekit.render.luafilters import BOUND_FILTER, CROSSREF_FILTER, LIBRARY, QUARTO_LAYOUT_FILTER
from articlekit.render.project import PAGE_CSS, PANDOC_METADATA, project_config, project_options, project_root
from articlekit.render.renderers import display_name, pandoc_file, pandoc_path, tool_version
from articlekit.render.source import empty_folder, pandoc_source
from articlekit.render.tools import run_tool


def pandoc_metadata(front, pandoc):
    """The metadata file's contents: Pandoc's share of the front matter and
    the renderer's name ({{< meta renderer >}})."""
    metadata = {key: value for key, value in front.items() if key in PANDOC_METADATA}
    if "author" in metadata:
        # Pandoc's templates print an author as text: a {name: ...} of the
        # form Quarto takes would print "true" (the JATS edition puts the
        # structured form back, which its template reads)
        metadata["author"] = author_names(metadata["author"])
    metadata["renderer"] = display_name("pandoc", tool_version(pandoc))
    # A page says its language (screen readers pick their voice by it):
    # English unless the front matter says otherwise, as Quarto does.
    metadata.setdefault("lang", "en")
    return metadata


def author_names(value):
    """The front matter's authors as Pandoc's templates print them: names."""
    authors = value if isinstance(value, list) else [value]
    names = []
    for author in authors:
        name = author.get("name") if isinstance(author, dict) else author
        if isinstance(name, dict):  # Quarto's {given, family}
            name = " ".join(str(name.get(part, "")) for part in ("given", "family")).strip()
        names.append(name)
    return names


def filter_files():
    """The Lua filters the Pandoc route runs, in order: the bound spans,
    the cross-references numbered, then callouts and figures as Quarto
    lays them out."""
    return [BOUND_FILTER, CROSSREF_FILTER, QUARTO_LAYOUT_FILTER]


def filter_library_files():
    return list(LIBRARY)


def pandoc_common_args(pandoc, source, meta_file, resource_dir, reader="markdown"):
    """Reader, filters and resource path: shared by the HTML, the markdown
    and the preview's pieces of the page. reader "json": source is the
    article's tree (write_ast). resource_dir: an empty folder, so that no
    relative link reaches a file (the figures come embedded: figure_data)."""
    return [
        pandoc,
        str(source),
        "--from",
        reader,
        "--wrap",
        "preserve",
        "--metadata-file",
        str(meta_file),
        *(arg for path in filter_files() for arg in ("--lua-filter", str(path))),
        "--resource-path",
        str(resource_dir),
    ]


def pandoc_page_args(project_dir, options):
    """What makes the HTML a page: the table of contents and the style sheets."""
    args = ["--toc"] if options.get("toc") else []
    args += ["--css", pandoc_file(PAGE_CSS)]
    css = options.get("css")
    for sheet in [css] if isinstance(css, str) else css or []:
        args += ["--css", pandoc_file((project_dir / sheet).resolve())]
    return args


def pandoc_run(job, metadata=None):
    """(the args every Pandoc run of the page shares, its metadata): the
    bound tree, the front matter's share, the renderer's name."""
    pandoc = pandoc_path()
    front, source, reader = pandoc_source(job.article, job.tree)
    meta = {**pandoc_metadata(front, pandoc), **(metadata or {})}
    meta_file = job.workdir / "metadata.yaml"
    meta_file.write_text(yaml.safe_dump(meta, allow_unicode=True), encoding="utf-8")
    project_dir = project_root(job.article.parent.resolve())
    # after the filters above; the bibliography bound as the prose is
    cited = citation_args(project_config(project_dir), project_dir, job.workdir, job.document)
    return pandoc_common_args(pandoc, source, meta_file, empty_folder(job.workdir), reader) + cited, meta


def pandoc_page(job):
    """The HTML page through Pandoc, from the bound tree, its figures
    embedded (job.extra["figure-data"]). -> the renderer's name; the
    scripts it puts on a page: none, Pandoc's page has no script."""
    article_dir = job.article.parent.resolve()
    project_dir = project_root(article_dir)
    common, metadata = pandoc_run(job, {"figure-data": md_code(str(job.extra["figure-data"]))})
    # --embed-resources embeds the style sheets (checked: they load nothing);
    # the figures are data URIs by then, and nothing else names a file
    html = (
        common
        + [arg for path in job.fmt.filters for arg in ("--lua-filter", str(path))]
        + ["--to", job.fmt.writer, "--standalone", "--embed-resources", "--mathml", "--output", str(job.produced)]
        + pandoc_page_args(project_dir, project_options(project_dir))
    )
    run_tool(html, job.article, cwd=article_dir)
    job.extra["own-scripts"] = frozenset()
    return metadata["renderer"]


def pandoc_markdown(job):
    """The GitHub markdown through Pandoc, from the bound tree. No
    --standalone: metadata would make two builds' markdown differ; the
    title goes on top as a heading, the authors (joined by commas) and the
    date on the lines under it, as Quarto's gfm writes them. -> the
    renderer's name."""
    common, metadata = pandoc_run(job)
    run_tool(common + ["--to", job.fmt.writer, "--output", str(job.produced)], job.article, cwd=job.article.parent)
    if metadata.get("title"):
        lines = [f"# {metadata['title']}"]
        if metadata.get("author"):
            lines.append(", ".join(map(str, metadata["author"])))
        if metadata.get("date"):
            lines.append(str(metadata["date"]))
        job.produced.write_text("\n".join(lines) + "\n\n" + job.produced.read_text(encoding="utf-8"), encoding="utf-8")
    return metadata["renderer"]
