"""A figure says in words what it plots: save_figure writes, as the SVG's
title, the experiment's headline (made from its values) followed by what
each panel plots, read from the drawn figure (its title, each axis's label,
scale and the range of its data; a heatmap's grid and the range of its
cells), and the page embeds that title as the image's alt text
(articlekit.article.figures.alt_text, read back by the render)."""

import json

import numpy as np

from articlekit.article.figures import FigureLink, alt_text
from articlekit.experiment.artifacts import pyplot, save_figure
from articlekit.experiment.figure_text import describe
from articlekit.render.figuredata import figure_data


def line_figure():
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([8, 64, 512], [0.2, 0.6, 0.97], "o-", label="unscaled")
    ax.plot([8, 64, 512], [0.1, 0.1, 0.12], "s-", label="scaled")
    ax.set(xscale="log", xlabel="$d_k$", ylabel="largest weight", title="Largest softmax weight")
    ax.legend()
    return fig


def test_a_line_plot_is_said_with_its_title_axes_ranges_and_series():
    said = describe(line_figure())
    assert said.startswith(
        "Largest softmax weight: x: d_k, log scale, data from 8 to 512; y: largest weight, data from 0.1 to 0.97;"
    )
    assert "“unscaled”" in said and "“scaled”" in said


def test_a_heatmap_is_said_with_its_grid_and_the_range_of_its_cells():
    plt = pyplot()
    fig, ax = plt.subplots()
    image = ax.imshow(np.array([[0.25, 0.75], [0.0, 1.0], [0.5, 0.5]]))
    ax.set(xlabel="key position j", ylabel="query position i")
    fig.colorbar(image, ax=ax, label="weight")
    assert describe(fig) == "A 3 × 2 grid of weight, from 0 to 1; rows: query position i; columns: key position j."


def test_the_svg_carries_the_headline_and_the_page_reads_it_back(tmp_path):
    path = tmp_path / "figures" / "sweep.svg"
    save_figure(line_figure(), path, alt="At d_k = 512, unscaled attention gives its top key 0.97 & more")
    title = alt_text(path.read_bytes(), "image/svg+xml")
    assert title.startswith("At d_k = 512, unscaled attention gives its top key 0.97 & more. Largest softmax weight:")
    assert alt_text(b"\x89PNG...", "image/png") is None
    # the render's figure data hands it to embed_figures.lua beside the data URI
    out = figure_data(
        [FigureLink(1, "../figures/sweep.svg", "figures/sweep.svg")],
        tmp_path / "article" / "index.qmd",
        tmp_path,
        root=tmp_path,
    )
    entry = json.loads(out.read_text(encoding="utf-8"))["../figures/sweep.svg"]
    assert entry["alt"] == title and entry["src"].startswith("data:image/svg+xml;base64,")


def test_a_figure_without_a_headline_still_says_what_it_plots(tmp_path):
    path = tmp_path / "plain.svg"
    save_figure(line_figure(), path)
    assert alt_text(path.read_bytes(), "image/svg+xml") == describe(line_figure())
