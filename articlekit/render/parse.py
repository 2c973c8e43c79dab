"""Read the bound article as Pandoc does, once, for every page Pandoc writes.

    python -m articlekit parse article/index.qmd --bound build/article.bound.md --out build/article.ast.json

Writes the tree of the bound document (`articlekit bind` wrote it: every
shortcode resolved) in Pandoc's JSON (articlekit.render.source.write_ast),
once the prose check passed, its messages naming the article's lines;
`articlekit render --ast` and `articlekit pdf --ast` write the HTML, the
GitHub markdown and the PDF's Typst source from it instead of each reading
the markdown again, which is most of what Pandoc spends on them. The tree
is Pandoc's own format, tied to its version: the rule that writes it takes
the version as a param, so a new Pandoc reads the article again.
"""

import argparse
import errno

from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import DiskFull
from articlekit.core.log import log
from articlekit.render.source import write_ast


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit parse", description=__doc__.splitlines()[0])
    parser.add_argument("article")
    parser.add_argument("--bound", required=True, help="build/article.bound.md, from `articlekit bind`")
    parser.add_argument("--out", required=True, help="where to write build/article.ast.json")
    args = parser.parse_args(argv)
    try:
        write_ast(args.article, args.out, bound=args.bound)
    except (ArticlekitError, OSError) as exc:  # RenderError, SourceError among them
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            exc = DiskFull(args.out)  # named by the output, not by the work folder it was written in
        log.error(f"parse: {exc}")
        return 1
    log.info(f"parse: {args.article} -> {args.out}")
    return 0
