"""The formats the article is written in: one module each, found here by name.

Every module of this package (html.py, gfm.py, pdf.py, docx.py, jats.py)
defines FORMAT, a Format: its name (the entry of config `publishing.formats`,
`python -m articlekit render --to NAME`, and the name of the rule that
writes it), its output, its writer, its filters, its work folder and its
check of what it wrote. Nothing else lists them: the registry reads the
package's modules, the Plan makes one rule per chosen format, and the
render command runs the one it is asked for. A new format is one module here
and one line of the config.

Each format renders the bound document (articlekit.article.bound) from its
tree, through articlekit/render/filters/bound.lua first
(articlekit.render.page.render_format does what every format shares: the
prose check, the figures, the work folder, the atomic move, the check for a
shortcode left over). What a format's write and check share with the
others they import at the top of their module, each from the module of
its stage: articlekit.render.project (the front matter, _quarto.yml),
.tools (running Pandoc and Quarto), .source (the bound document and its
tree), .figuredata (figures as data: URLs), .pandoc_route and
.quarto_route (the two renderers), .checks (checks of a written output).
What differs between formats is a field of their Format, never a branch
on its name.
"""

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from articlekit.core.errors import ArticlekitError

# What a build writes when config publishing.formats does not say.
DEFAULT = ("html", "gfm", "pdf", "docx", "jats")


class UnknownFormat(ArticlekitError):
    """A format name the registry does not know; the message lists the known ones."""


@dataclass(frozen=True)
class Format:
    name: str  # publishing.formats entry, `render --to NAME`, the rule's name
    output: str  # the file the rule writes
    describe: str  # one line: what a reader gets
    writer: str  # Pandoc's writer (--to), or Quarto's on the Quarto route
    write: Callable  # write(job) -> the renderer's name; writes job.produced
    check: Callable  # check(job): raises RenderError when what it wrote is not whole
    filters: tuple = ()  # its Lua filters, after bound.lua, in order
    work_folder: str = ""  # prefix of its work folder beside the output: .NAME- by default
    text: bool = True  # UTF-8 text, in which a shortcode left over is looked for
    quarto: bool = False  # Quarto writes it when the build renders with Quarto
    quarto_writer: str = ""  # Quarto's --to on the Quarto route (its output's suffix is the output's)
    tools: tuple = ("pandoc",)  # what writes it otherwise: their versions are its rule's params
    keeps_last_good: bool = False  # also kept as build/last-good/<output>, which Snakemake leaves alone
    says_failed_claims: bool = False  # its rule says a strict=false build's failed claims on the terminal
    # its rule's Snakemake priority: after a prose edit, the edition the
    # author is looking at is written before the others wait their turn
    priority: int = 0

    @property
    def work_prefix(self):
        return self.work_folder or f".{self.name}-"

    @property
    def module(self):
        return f"{__name__}.{self.name}"


@dataclass
class Job:
    """One format's render, as its write and check see it."""

    fmt: Format
    article: Path  # the article's .qmd (its lines name every message)
    source: str  # its text, read once for the render
    bindings: Path  # build/bindings.json
    document: dict  # its contents
    bound: str  # the bound document's text
    tree: Path  # the bound document's tree (Pandoc's JSON), checked
    figures: list  # the figures it shows (articlekit.article.prose_guard.ShownFigure)
    workdir: Path  # its work folder: everything it writes goes here first
    produced: Path  # where write() writes the output, moved into place once checked
    out: Path  # the output's final path
    renderer: str  # "quarto" or "pandoc": the route of a format Quarto can write
    root: Path  # the build's folder, figures/ under it
    extra: dict = field(default_factory=dict)  # what write() leaves for check()


def names():
    """Every format this package has a module for, sorted."""
    return tuple(
        sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_"))
    )


def get(name):
    """The Format called NAME, or UnknownFormat naming the ones there are."""
    if name not in names():
        raise UnknownFormat(
            f"no format {name!r}: the formats are {', '.join(names())} (a module each in {Path(__file__).parent})"
        )
    return importlib.import_module(f"{__name__}.{name}").FORMAT


def work_prefixes():
    """Every format's work folder prefix: a killed render of any leaves one."""
    return tuple(sorted({get(name).work_prefix for name in names()}))
