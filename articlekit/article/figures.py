"""The figures an article shows: its image links into figures/, each with
its line, what to say of one that no rule builds, and the alt text a
figure's file carries.

The workflow reads them (articlekit/workflow/rules/common.smk, article_figures)
as the render's inputs: the manuscript declares what the page depends on.
"""

import difflib
import html
import os
import re
from dataclasses import dataclass

from articlekit.core.errors import ArticlekitError

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
FIGURES = "figures/"


@dataclass(frozen=True)
class FigureLink:
    line: int  # 1-based, in the article
    link: str  # as written, relative to the article's folder (../figures/x.svg)
    path: str  # relative to the article's root, as the rules name it (figures/x.svg)


def figure_links(text, article_dir):
    """Every image link of the article into figures/, in the order written."""
    found = []
    for match in IMAGE_LINK.finditer(text):
        link = match.group(1)
        path = os.path.normpath(os.path.join(article_dir, link))
        if path.startswith(FIGURES):
            found.append(FigureLink(text.count("\n", 0, match.start()) + 1, link, path))
    return found


def unbuilt_figures(article, links, built):
    """The message naming each link whose figure no rule builds, with its
    line and the closest figure a rule does build; None when all are built.
    built: every path some rule writes."""
    figures = sorted(path for path in built if path.startswith(FIGURES))
    problems = []
    for each in links:
        if each.path in built:
            continue
        close = difflib.get_close_matches(each.path, figures, n=1)
        guess = f"did you mean {os.path.relpath(close[0], os.path.dirname(article) or '.')}? " if close else ""
        problems.append(
            f"{article}:{each.line}: shows {each.path}, which no rule builds; {guess}"
            f"figures that rules build: {', '.join(figures) or 'none'} (an experiment's figures are "
            f"declared in experiments: of config.yaml, each with its path)"
        )
    return "\n".join(problems) or None


class FigureError(ArticlekitError):
    """A figure the page cannot embed: FILE:LINE, why, and the fix."""


def figure_file(root, path, article, line):
    """The file a figure link names, once it is one a rule could have written:
    root/path (path relative to the build's root, figures/NAME) must be a
    regular file, reached through no symbolic link (the file itself or a
    folder on the way), inside root. A renderer never follows the link
    itself: articlekit reads this file and embeds its bytes."""
    root = os.path.realpath(root)
    target = os.path.join(root, path)
    where = f"{article}:{line}" if line else str(article)
    if os.path.realpath(target) != os.path.normpath(target):
        raise FigureError(
            f"{where}: the figure {path} is, or lies under, a symbolic link (to "
            f"{os.path.realpath(target)}): a figure must be the file its experiment's rule wrote into "
            f"{FIGURES}, never a link to another file; remove the link and rebuild (snakemake)"
        )
    if not os.path.commonpath([root, target]) == root:
        raise FigureError(f"{where}: the figure {path} resolves outside the project ({root})")
    if not os.path.isfile(target):
        raise FigureError(
            f"{where}: the figure {path} was not found ({target}): build it first (snakemake), or correct the link"
        )
    return target


# The title an SVG opens with (a direct child of its root, as matplotlib
# writes it from save_figure's metadata): the figure's accessible name.
SVG_TITLE = re.compile(rb"<svg\b[^>]*>\s*<title>([^<]*)</title>")


def alt_text(payload, media):
    """The alt text a figure's file carries, or None: an SVG's own <title>,
    which articlekit.experiment.artifacts.save_figure writes from the data
    it plots (articlekit.experiment.figure_text)."""
    if media != "image/svg+xml":
        return None
    found = SVG_TITLE.search(payload[:4096])
    if not found:
        return None
    return " ".join(html.unescape(found.group(1).decode("utf-8", "replace")).split()) or None
