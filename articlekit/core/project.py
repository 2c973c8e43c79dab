"""The project a command serves, found from any folder inside it.

An articlekit project is the folder holding its Snakefile and config.yaml
(what `python -m articlekit new` writes, and this repository): Snakemake
runs there, and every path of the build (article/index.qmd, build/,
results/) is relative to it. A command an author may start from article/
or another folder inside (`python -m articlekit preview`, the pre-render
of Quarto's own `quarto render`) walks up to it instead of failing on a
path that only the project's folder has.
"""

from pathlib import Path

from articlekit.core.errors import ArticlekitError

MARKERS = ("Snakefile", "config.yaml")


class NoProject(ArticlekitError):
    """No folder from here up holds a Snakefile and a config.yaml."""


def project_folder(start="."):
    """The first folder from start up that holds a Snakefile and a config.yaml."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if all((folder / marker).is_file() for marker in MARKERS):
            return folder
    raise NoProject(
        f"no articlekit project in {start} or above it (no folder there holds both "
        f"{' and '.join(MARKERS)}): run this inside an article's project, or make one with "
        "`python -m articlekit new PATH`"
    )
