"""The build's prose check (articlekit.article.prose_guard), made on the
pieces of the article that changed: for the Quarto pre-render's
in-process bind (articlekit.render.quarto_bind).

Rule parse_article reads the whole article with Pandoc and checks its
tree before any renderer runs: raw HTML, an image that is no figure, an
attribute that loads are refused there. That read costs a second and a
half or more of Pandoc on this article, most of a save's budget. So the
article is split as the preview splits it (articlekit.render.incremental:
at its top-level headings, where a split cannot change the parse), each
piece is read by Pandoc and checked as `articlekit parse` checks the whole
text (its lines numbered as in the article), and the digest of every piece
that passed is kept in build/quarto-prose.json: a save reads only the
pieces it changed. The front matter is checked as check_prose checks it.
"""

import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from articlekit.article.prose_guard import ProseError, check_front_matter, check_tree
from articlekit.article.shortcodes import ShortcodeSyntaxError, to_quarto_markdown
from articlekit.core.jsonio import read_json, write_json
from articlekit.render.incremental import split_body
from articlekit.render.project import split_front_matter
from articlekit.render.renderers import RenderError, pandoc_path
from articlekit.render.source import build_root
from articlekit.render.tools import run_tool

PASSED = Path("build/quarto-prose.json")  # relative to the project's folder


def pieces(article, text):
    """-> (front matter, [(first line, markdown of a piece as Pandoc is
    handed it, lines as in the article)]). Raises RenderError naming the
    article's line on a shortcode that does not parse."""
    front, body = split_front_matter(text, article)
    layout = split_body(body)
    chunks = layout.chunks if layout is not None else [body]
    found, line = [], 1
    for chunk in chunks:
        try:
            found.append((line, to_quarto_markdown(chunk)))
        except ShortcodeSyntaxError as exc:  # its line counts from the piece's first line
            said = str(exc).partition(": ")[2]
            raise RenderError(f"{article}:{exc.line + line - 1}: {said}") from None
        line += chunk.count("\n")
    return front, found


def key(pandoc, article_dir, markdown):
    return hashlib.sha256(json.dumps([pandoc, article_dir, markdown]).encode("utf-8")).hexdigest()


def check_piece(pandoc, article, article_dir, first_line, markdown):
    """ProseError naming the article's lines, or None: the piece is as the build allows."""
    with tempfile.TemporaryDirectory(prefix="articlekit-prose-") as tmp:
        source, tree = Path(tmp) / "piece.md", Path(tmp) / "piece.json"
        source.write_text(markdown, encoding="utf-8")
        run_tool(
            [pandoc, str(source), "--from", "markdown", "--to", "json", "--output", str(tree)],
            article,
            cwd=article.parent.resolve(),
        )
        check_tree(
            json.loads(tree.read_text(encoding="utf-8")),
            "\n" * (first_line - 1) + markdown,
            article,
            article_dir,
            shortcodes=True,  # the article unbound: its shortcodes as Quarto's spans
        )


def check_front(pandoc, article, text, front):
    with tempfile.TemporaryDirectory(prefix="articlekit-prose-") as tmp:
        source, tree = Path(tmp) / "front-matter.md", Path(tmp) / "front-matter.json"
        source.write_text("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n", encoding="utf-8")
        run_tool(
            [pandoc, str(source), "--from", "markdown", "--to", "json", "--output", str(tree)], article, cwd=Path(tmp)
        )
        check_front_matter(json.loads(tree.read_text(encoding="utf-8")), text, article)


def passed_before(root):
    try:
        known = read_json(Path(root) / PASSED)
    except (OSError, ValueError):
        return set()
    return set(known) if isinstance(known, list) else set()


def check_changed(root, article, text):
    """Check the pieces of `text` (the article at `article`, relative to the
    project's folder `root`) that no earlier check passed; remember the ones
    that pass. Raises ProseError (every problem of every piece, each with its
    line) or RenderError (Pandoc could not read a piece). -> pieces read now."""
    root, article = Path(root), Path(article)
    pandoc = pandoc_path()
    article_dir = os.path.relpath((root / article).parent.resolve(), build_root(root, root / article))
    front, found = pieces(article, text)
    keyed = [(key(pandoc, article_dir, markdown), line, markdown) for line, markdown in found]
    if front:
        keyed.append((key(pandoc, "front matter", yaml.safe_dump(front, allow_unicode=True)), 0, None))
    known = passed_before(root)
    todo = [(k, line, markdown) for k, line, markdown in keyed if k not in known]

    def check(item):
        k, line, markdown = item
        try:
            if markdown is None:
                check_front(pandoc, article, text, front)
            else:
                check_piece(pandoc, article, article_dir, line, markdown)
        except ProseError as exc:
            return k, exc
        return k, None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        checked = list(pool.map(check, todo))
    problems = [exc for _, exc in checked if exc is not None]
    passed = {k for k, exc in checked if exc is None}
    # the pieces of this text that passed, now or before: the file stays as big as the article
    write_json(root / PASSED, sorted({k for k, *_ in keyed} & (known | passed)))
    if problems:
        raise ProseError([problem for exc in problems for problem in exc.problems])
    return len(todo)


def remember_all(root, article, text):
    """Every piece of `text` passed (rule parse_article checked this very
    text whole): a save after it reads only what it changes."""
    root, article = Path(root), Path(article)
    pandoc = pandoc_path()
    article_dir = os.path.relpath((root / article).parent.resolve(), build_root(root, root / article))
    try:
        front, found = pieces(article, text)
    except RenderError:
        return
    keys = [key(pandoc, article_dir, markdown) for _, markdown in found]
    if front:
        keys.append(key(pandoc, "front matter", yaml.safe_dump(front, allow_unicode=True)))
    write_json(root / PASSED, sorted(keys))
