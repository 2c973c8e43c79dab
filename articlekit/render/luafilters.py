"""The renderers' Lua filters (articlekit/render/filters/), named once.

Light on purpose: each format's module names the filters it runs from
here, and the Plan reads every format on every Snakemake call. Named here,
beside the folder, the files are in the code graph of every step that
imports this module (articlekit.workflow.codegraph: a module's data files
are those under its own folder).
"""

from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "filters"

# The bound document's spans written as the format shows them: every
# format runs it first (articlekit.article.bound says what the spans are).
BOUND_FILTER = FOLDER / "bound.lua"
# Figures, tables, equations and sections numbered, and @fig-x references
# resolved, as Quarto's crossref does: every Pandoc-route format.
CROSSREF_FILTER = FOLDER / "crossref.lua"
# After citeproc: the paths of the bibliography's copy dropped from the
# metadata (a writer would keep them: articlekit.render.citations).
CITED_FILTER = FOLDER / "cited.lua"
# Callouts and figures as Quarto lays them out, on the Pandoc route.
QUARTO_LAYOUT_FILTER = FOLDER / "quarto_layout.lua"
# Each figure's link swapped for the data: URI articlekit made of the
# figure's file, with its alt text (page.figure_data): the page, Word.
EMBED_FIGURES_FILTER = FOLDER / "embed_figures.lua"
# Each code block and table, the boxes that scroll sideways, focusable
# under a name: the page.
SCROLL_REGIONS_FILTER = FOLDER / "scroll_regions.lua"
# Lua the filters load themselves (dofile, from their folder): the formats
# depend on it as on the filters (the preview's cache too).
LIBRARY = (FOLDER / "callouts.lua",)
