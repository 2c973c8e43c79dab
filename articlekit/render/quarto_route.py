"""The Quarto route: `quarto render` of the bound document (quarto_render),
written beside the article with every shortcode it shows made inert
(inert_for_quarto), under the build's own profile (BUILD_PROFILE), with
_quarto.yml's settings handed over as a metadata file.
"""

import re
import shutil
from pathlib import Path

import yaml

from articlekit.article.shortcodes import regions
from articlekit.core.sources import read_text
from articlekit.core.workfiles import owner_tag, remove_stale
from articlekit.render.extension import refresh_if_installed
from articlekit.render.luafilters import BOUND_FILTER, EMBED_FIGURES_FILTER, SCROLL_REGIONS_FILTER
from articlekit.render.project import (
    PANDOC_METADATA,
    project_root,
    quarto_options,
    refuse_front_matter_files,
    split_front_matter,
)
from articlekit.render.renderers import display_name, quarto_path, quarto_version
from articlekit.render.tools import run_tool


# The Quarto profile the build renders with. The project's _quarto.yml
# names another as Quarto's default (articlekit.render.quarto_hooks), for
# a Quarto user's own `quarto render`; this one has no _quarto-*.yml.
BUILD_PROFILE = "articlekit-build"

# What Quarto renders besides the article to learn its own scripts: the
# front matter's PANDOC_METADATA over a body with nothing of the article's.
SCRIPTS_BODY = "## Contents\n\nA paragraph.\n"


def quarto_render(job, scripts=False):
    """Quarto writes job.produced, in the format's job.fmt.quarto_writer,
    from the bound document (written beside the article, so that its links
    and _quarto.yml resolve as the article's), with figures embedded where job.extra names their
    data. scripts: also render a page of the article's front matter over an
    empty body, whose scripts are Quarto's own (job.extra["own-scripts"],
    for the page check). -> the renderer's name."""
    article, to = job.article, job.fmt.quarto_writer
    quarto = quarto_path()
    name = display_name("quarto", quarto_version(quarto))
    article_dir = article.parent.resolve()
    front, _ = split_front_matter(read_text(article), article)
    refuse_front_matter_files(article, front)
    config = quarto_options(project_root(article_dir), article_dir, job.document, job.workdir)
    listed = config.get("filters")
    # the bound spans first, as shortcodes are resolved before any other
    # filter; scroll_regions after Quarto's own filters, which write tables anew
    config["filters"] = [
        str(BOUND_FILTER),
        *([listed] if isinstance(listed, str) else listed or []),
        str(EMBED_FIGURES_FILTER),
        {"path": str(SCROLL_REGIONS_FILTER), "at": "post-render"},
    ]
    options = job.workdir / "quarto-options.yaml"
    options.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    # Quarto resolves a bare --output name against its working directory
    # (quarto-cli src/command/render/output.ts) and refuses one with a path,
    # so it runs in the article's folder and the output lands there.
    remove_stale(article_dir, "render-", "-")  # outputs of a Quarto render killed before its move
    # Quarto loads the article's copy of the extension too, when a Quarto
    # user's render installed one: the package's own, never an older one
    refresh_if_installed(article_dir)
    tag = f"render-{owner_tag()}"
    bound_source = article_dir / f"{tag}-bound-{to}.qmd"
    scripts_source = article_dir / f"{tag}-scripts.qmd"
    scripts_page = job.workdir / "quarto-scripts.html"
    # (source, Quarto's format, where it goes, the suffix of what Quarto writes: the format's output's)
    renders = [
        (bound_source, to, job.produced, Path(job.fmt.output).suffix),
        *([(scripts_source, "html", scripts_page, ".html")] if scripts else []),
    ]
    leftovers = []
    metadata = ["-M", f"renderer:{name}"]
    if "figure-data" in job.extra:
        metadata += ["-M", f"figure-data:{job.extra['figure-data']}"]
    try:
        for source, *_ in renders:
            leftovers += [source, article_dir / f"{source.stem}_files"]
        bound_source.write_text(inert_for_quarto(job.bound), encoding="utf-8")
        if scripts:
            # the front matter both routes render: a script another key of it
            # adds is the article's, not Quarto's own
            rendered = {key: value for key, value in front.items() if key in PANDOC_METADATA}
            scripts_source.write_text(
                "---\n" + yaml.safe_dump(rendered, allow_unicode=True) + "---\n\n" + SCRIPTS_BODY, encoding="utf-8"
            )
        for n, (source, fmt, out, suffix) in enumerate(renders):
            produced = article_dir / f"{tag}-{n}-{fmt}{suffix}"
            leftovers.append(produced)
            # --profile: the build's, which no file configures, so none of a
            # Quarto user's own profile (pre-render, output-dir) applies
            run_tool(
                [
                    quarto,
                    "render",
                    source.name,
                    "--to",
                    fmt,
                    "--output",
                    produced.name,
                    "--profile",
                    BUILD_PROFILE,
                    *metadata,
                    "--metadata-file",
                    str(options),
                ],
                article,
                cwd=article_dir,
            )
            shutil.move(str(produced), out)
    finally:
        for path in leftovers:
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    if scripts:
        # here, not at the top: its HTML parser costs a fortieth of a second,
        # and the quarto pre-render imports this module for inert_for_quarto alone
        from articlekit.render.pagecheck import script_digests

        job.extra["own-scripts"] = script_digests(scripts_page)
    return name


# Quarto resolves shortcodes again in whatever it renders, inside code and
# in any attribute's value too (quarto-cli's customnodes/shortcodes.lua):
# {{< env HOME >}} in an experiment's message would print the machine's
# environment. The bound document holds no shortcode for Quarto to run, so
# every one it shows is written as Quarto's escape, which prints it as is.
_QUARTO_SHORTCODE = re.compile(r"\{\{<(.*?)>\}\}", re.S)


def inert_for_quarto(bound):
    """The bound document with every {{< ... >}} it shows (a value's, an
    escaped one's) written {{{< ... >}}}, which Quarto prints as
    {{< ... >}}; shortcodes="false" blocks, which Quarto leaves alone, as
    they are."""
    out = []
    for start, end, kind in regions(bound):
        piece = bound[start:end]
        out.append(piece if kind in ("verbatim", "frontmatter") else _QUARTO_SHORTCODE.sub(r"{{{<\1>}}}", piece))
    return "".join(out)
