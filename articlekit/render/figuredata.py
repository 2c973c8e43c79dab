"""Figures as data: each figure the article shows, read (once, checked:
articlekit.article.figures.checked_figure) from the file its rule wrote and
handed to the renderer as a data: URL (figure_data, embedded_figures;
filters/embed_figures.lua puts it on the page), so that no renderer
follows a link of the text.
"""

import base64
import json
import os
from pathlib import Path

from articlekit.article.figures import FigureError, alt_text, checked_figure
from articlekit.render.renderers import RenderError
from articlekit.render.source import build_root


# The media types a page shows a figure in, by the figure file's suffix.
FIGURE_TYPES = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def figure_bytes(path):
    """A figure's bytes, opened without following a symbolic link (one made
    after figure_file looked is refused too)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def figure_data(figures, article, workdir, root=None):
    """Write workdir/figures.json: each figure's link as written -> {"src": a
    data: URI of the bytes checked_figure read and checked (a regular file in
    figures/, no symbolic link, an image that names nothing outside itself:
    the bytes embedded are the bytes checked, never the file read again),
    "alt": the alt text the file carries (figures.alt_text), when it has
    one}; -> its path. embed_figures.lua puts them on the page, so no
    renderer reads a figure by its link, and the image says what the
    figure's data are rather than repeating its caption."""
    data = {}
    for figure in figures:
        path, payload = checked_figure(build_root(root, article), figure.path, article, figure.line)
        media = FIGURE_TYPES[Path(path).suffix.lower()]  # checked_figure refuses any other kind
        data[figure.link] = {"src": f"data:{media};base64,{base64.b64encode(payload).decode('ascii')}"}
        alt = alt_text(payload, media)
        if alt:
            data[figure.link]["alt"] = alt
    out = Path(workdir) / "figures.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def embedded_figures(job):
    """figure_data for the job's figures (a format that embeds them: the page,
    Word): a figure that is not the file its rule wrote stops the render at
    the article's line."""
    try:
        return figure_data(job.figures, job.article, job.workdir, job.root)
    except FigureError as exc:
        raise RenderError(str(exc)) from None
