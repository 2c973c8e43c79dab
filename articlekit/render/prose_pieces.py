"""The build's prose check (articlekit.article.prose_guard), made on the
pieces of the article that changed: for the Quarto pre-render's
in-process bind (articlekit.render.quarto_bind).

Rule parse_article reads the whole article with Pandoc and checks its
tree before any renderer runs: raw HTML, an image that is no figure, an
attribute that loads are refused there. That read costs a second and a
half or more of Pandoc on this article (7 to 15 s on a busy machine),
most of a save's budget. So the article is split as the preview splits it
(articlekit.render.incremental: at its top-level headings, where a split
cannot change the parse; citations and labels do not stop the split here,
for they read alike in any piece, only footnotes and link definitions
do), each
piece is read by Pandoc and checked as `articlekit parse` checks the whole
text (its lines numbered as in the article), and the digest of every piece
that passed is kept in build/quarto-prose.json with the ids it defines and
the @ids it uses: a save reads only the pieces it changed, and checks every
reference against the ids of all of them, as the whole text's check does.
The front matter is checked as check_prose checks it.
"""

import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from articlekit.article.prose_guard import ProseError, check_front_matter, read_piece, unknown_references
from articlekit.article.shortcodes import ShortcodeSyntaxError, to_quarto_markdown
from articlekit.core.jsonio import read_json, write_json
from articlekit.render.incremental import PARSE_WIDE, split_body
from articlekit.render.project import split_front_matter
from articlekit.render.renderers import RenderError, pandoc_path
from articlekit.render.source import build_root
from articlekit.render.tools import run_tool

PASSED = Path("build/quarto-prose.json")  # relative to the project's folder
# its form: {"format": FORMAT, "pieces": {digest: {"ids": [...], "used": [[id, line], ...]}}}
FORMAT = 2


def pieces(article, text):
    """-> (front matter, [(first line, markdown of a piece as Pandoc is
    handed it, lines as in the article)]). Raises RenderError naming the
    article's line on a shortcode that does not parse."""
    front, body = split_front_matter(text, article)
    layout = split_body(body, document_wide=PARSE_WIDE)
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
    """The piece's cross-references, {"ids": [...], "used": [[id, line in
    the piece], ...]}, once it is as the build allows; else ProseError
    naming the article's lines."""
    with tempfile.TemporaryDirectory(prefix="articlekit-prose-") as tmp:
        source, tree = Path(tmp) / "piece.md", Path(tmp) / "piece.json"
        source.write_text(markdown, encoding="utf-8")
        run_tool(
            [pandoc, str(source), "--from", "markdown", "--to", "json", "--output", str(tree)],
            article,
            cwd=article.parent.resolve(),
        )
        _, ids, used = read_piece(
            json.loads(tree.read_text(encoding="utf-8")),
            "\n" * (first_line - 1) + markdown,
            article,
            article_dir,
            shortcodes=True,  # the article unbound: its shortcodes as Quarto's spans
        )
    return {"ids": sorted(ids), "used": [[ref, line - first_line + 1 if line else 0] for ref, line in used]}


def check_front(pandoc, article, text, front):
    with tempfile.TemporaryDirectory(prefix="articlekit-prose-") as tmp:
        source, tree = Path(tmp) / "front-matter.md", Path(tmp) / "front-matter.json"
        source.write_text("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n", encoding="utf-8")
        run_tool(
            [pandoc, str(source), "--from", "markdown", "--to", "json", "--output", str(tree)], article, cwd=Path(tmp)
        )
        check_front_matter(json.loads(tree.read_text(encoding="utf-8")), text, article)
    return {"ids": [], "used": []}


def passed_before(root):
    """{digest of a piece that passed: its cross-references}; {} for none,
    or for a record of an older form (its pieces are read again)."""
    try:
        known = read_json(Path(root) / PASSED)
    except (OSError, ValueError):
        return {}
    if not (isinstance(known, dict) and known.get("format") == FORMAT and isinstance(known.get("pieces"), dict)):
        return {}
    return known["pieces"]


def check_changed(root, article, text):
    """Check the pieces of `text` (the article at `article`, relative to the
    project's folder `root`) that no earlier check passed, then every
    piece's cross-references against the ids of all of them; remember the
    pieces that pass. Raises ProseError (every problem of every piece, each
    with its line) or RenderError (Pandoc could not read a piece). -> pieces
    read now."""
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
                return k, check_front(pandoc, article, text, front)
            return k, check_piece(pandoc, article, article_dir, line, markdown)
        except ProseError as exc:
            return k, exc

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        checked = list(pool.map(check, todo))
    problems = [problem for _, got in checked if isinstance(got, ProseError) for problem in got.problems]
    passed = {**known, **{k: got for k, got in checked if not isinstance(got, ProseError)}}
    # the pieces of this text that passed, now or before: the file stays as big as the article
    write_json(root / PASSED, {"format": FORMAT, "pieces": {k: passed[k] for k, *_ in keyed if k in passed}})
    if not problems:  # every piece read: the references against the ids of them all
        problems = reference_problems(article, keyed, passed)
    if problems:
        raise ProseError(problems)
    return len(todo)


def reference_problems(article, keyed, passed):
    """The article's @fig-/@tbl-/... references to an id none of its pieces
    has, each at its line in the article as it is now."""
    ids = {i for k, *_ in keyed for i in passed[k]["ids"]}
    used = [(ref, line + at - 1) for k, line, _ in keyed for ref, at in passed[k]["used"]]
    return [f"{article}:{line}: {what}" for line, what in unknown_references(ids, used)]


def remember_all(root, article, text):
    """After rule parse_article checked this very text whole: read its
    pieces now, while `quarto preview` starts, so that a save reads only
    what it changes (their cross-references are not in the whole's check).
    A problem is the rule's to report: nothing is said here."""
    try:
        check_changed(root, article, text)
    except (ProseError, RenderError, OSError):
        pass
