"""The source document every format renders: the bound document's text
(bound_text), Pandoc's tree of it (read_tree, write_ast, checked_tree),
checked by the prose check (check_prose) before any renderer runs, the
build's folder its figures lie under (build_root), and an empty resource
folder for Pandoc (empty_folder).
"""

import json
import os
import tempfile
from pathlib import Path

import yaml

from articlekit.article.bound import BoundError, bound_markdown
from articlekit.article.figures import FigureError, figure_file
from articlekit.article.prose_guard import check_front_matter, check_tree
from articlekit.article.shortcodes import ShortcodeSyntaxError, to_quarto_markdown
from articlekit.core.sources import read_text
from articlekit.core.workfiles import owner_tag
from articlekit.render.project import split_front_matter
from articlekit.render.renderers import RenderError, pandoc_path
from articlekit.render.tools import run_tool


def empty_folder(workdir):
    """A resource path with nothing in it, made in the render's work folder."""
    folder = Path(workdir) / "no-resources"
    folder.mkdir(exist_ok=True)
    return folder


# --- the article as Pandoc reads it, once for every page ----------------------------
#
# Reading the markdown is most of what Pandoc spends on a page of this kind
# (its shortcodes arrive as nested spans), and the HTML, the GitHub markdown
# and the PDF's Typst source each read the same text. `articlekit parse`
# reads it once into Pandoc's JSON form of the document (its tree), and
# render and pdf given --ast write their pages from the tree, byte for byte
# as from the markdown: filters and metadata apply after reading. Quarto
# reads the article itself; the tree is Pandoc's alone.


def bound_text(article, document, bound=None):
    """The bound document's text (articlekit.article.bound): the file
    `bound` that bind wrote, when given, else made now from the bindings
    document. A shortcode that does not parse is named by the article's line."""
    if bound is not None:
        return read_text(bound)
    try:
        return bound_markdown(read_text(article), document, article)
    except ShortcodeSyntaxError as exc:  # "LINE: ...": named by the article, as bind names it
        raise RenderError(f"{article}:{exc}") from None
    except BoundError as exc:  # "FILE:LINE: ...", with its fix
        raise RenderError(str(exc)) from None


def pandoc_source(article, ast):
    """(front matter, the tree Pandoc writes from, its reader)."""
    front, _ = split_front_matter(read_text(article), article)
    return front, Path(ast).resolve(), "json"


def read_tree(article, workdir, out, bound):
    """Pandoc's reading of the bound document's text `bound` (its tree, JSON)
    into `out`, unchecked. The front matter's lines are blank, so that a
    message still names the article's line."""
    _, body = split_front_matter(bound, article)
    source = Path(workdir) / "article.md"
    source.write_text(body, encoding="utf-8")
    run_tool(
        [pandoc_path(), str(source), "--from", "markdown", "--to", "json", "--output", str(out)],
        article,
        cwd=article.parent.resolve(),
    )


def unbound_text(article):
    """The article as a prose check reads it before any value is bound: each
    prose shortcode as the span Quarto's pre-processing writes
    (to_quarto_markdown), so that nothing in its arguments reads as markup."""
    try:
        return to_quarto_markdown(read_text(article))
    except ShortcodeSyntaxError as exc:  # "LINE: ...": named by the article, as bind names it
        raise RenderError(f"{article}:{exc}") from None


def write_ast(article, out, root=None, bound=None):
    """Read the bound document (the file `bound`, bind's) with Pandoc into
    `out` (its tree, as JSON), atomically, once the prose check passed
    (check_prose, whose messages name the article's lines): a tree that
    holds raw HTML, an image that is not a figure or an attribute that
    loads is never written, and no renderer runs. Without `bound`, the
    article unbound (unbound_text): a tree to check, not to render."""
    article, out = Path(article), Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".parse-{owner_tag()}-") as tmp:
        workdir = Path(tmp).resolve()  # pandoc runs in the article's folder
        tree = workdir / "article.ast.json"
        text = read_text(bound) if bound is not None else unbound_text(article)
        read_tree(article, workdir, tree, text)
        shown = check_prose(article, tree, workdir, root, unbound=bound is None)
        # each figure the file its rule wrote, checked once before any
        # format's rule starts (and removes its old output): each checks again
        for figure in shown:
            try:
                figure_file(build_root(root, article), figure.path, article, figure.line)
            except FigureError as exc:
                raise RenderError(str(exc)) from None
        os.replace(tree, out)


# --- what the prose may put on the page ------------------------------------------
#
# articlekit.article.prose_guard says what the article's tree may hold; here
# it is read, the front matter with it, and the figures it shows are read
# from their files and embedded by articlekit, not by a renderer.


def build_root(root=None, article=None):
    """The folder the rules run in, whose figures/ holds the article's
    figures: `root` when given; else the current folder (where the rules
    run) when the article lies under it; else the folder above the
    article's own (article/ and figures/ side by side, as every project
    lays them out)."""
    if root is not None:
        return Path(root).resolve()
    here = Path.cwd().resolve()
    if article is None or Path(article).resolve().is_relative_to(here):
        return here
    return Path(article).resolve().parent.parent


def check_prose(article, tree, workdir, root=None, unbound=False):
    """-> the figures the article's tree (the JSON file `tree`) shows, or
    ProseError (a ValueError) naming each problem with its line. The front
    matter's values are read by Pandoc as the page's metadata is, and
    checked as the body is."""
    article = Path(article)
    text = read_text(article)
    front, body = split_front_matter(text, article)
    article_dir = os.path.relpath(article.parent.resolve(), build_root(root, article))
    figures = check_tree(json.loads(Path(tree).read_text(encoding="utf-8")), body, article, article_dir, unbound)
    if front:
        source, front_tree = Path(workdir) / "front-matter.md", Path(workdir) / "front-matter.json"
        source.write_text("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n", encoding="utf-8")
        run_tool(
            [pandoc_path(), str(source), "--from", "markdown", "--to", "json", "--output", str(front_tree)],
            article,
            cwd=Path(workdir),
        )
        check_front_matter(json.loads(front_tree.read_text(encoding="utf-8")), text, article)
    return figures


def checked_tree(article, workdir, ast=None, root=None, bound=None):
    """(the bound document's tree file, the figures it shows): the tree
    `ast` when given (articlekit parse wrote it), else read now from the
    bound text `bound`; checked either way."""
    tree = Path(ast).resolve() if ast is not None else Path(workdir) / "article.ast.json"
    if ast is None:
        read_tree(Path(article), workdir, tree, bound)
    return tree, check_prose(article, tree, workdir, root)
