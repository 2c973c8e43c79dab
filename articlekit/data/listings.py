"""Code listings for the article, cut from the real source files.

    python -m articlekit listings --publishing JSON --out results/listings.json

The article shows the implementation it measured, never a retyped copy.
Which files and functions come from the config's `publishing.listings`
(name -> {source, functions}); its code blocks bind the values
({{< value listings.NAME.functions.FUNCTION >}} inside a fenced block). The
artifact has the experiments' envelope:

    {"experiment": "listings", "script": "articlekit/data/listings.py",
     "params": {"source": PATH}, "versions": {"python": ...}, "values": {
       NAME: {
         "source":     the whole file,
         "imports":    its top-level import statements, as written,
         "lines":      its line count,
         "functions":  {name: source of each top-level function, decorators included},
         "bare":       {name: the same without its docstring},
         "core_source": the imports plus the core functions (bare), ready to run,
         "core_functions": the listing's `functions`, in order,
         "core_lines": lines of code of the core functions}}}

(with several listings, params.source maps each name to its path).

The core functions are the ones the listing names: what the article's
argument rests on, not its helpers. "Lines of code" counts the lines of those
functions that hold code: the def line and body lines, not blank lines, not
comment-only lines, not the docstring.
"""

import argparse
import ast
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.core.log import log
from articlekit.experiment.artifacts import write_artifact
from articlekit.data.publishing import add_argument as add_publishing_argument
from articlekit.core.sources import read_text


def _span(node):
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return first, node.end_lineno


def _docstring_lines(node):
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return set(range(body[0].lineno, body[0].end_lineno + 1))
    return set()


def _source_of(lines, node, skip=frozenset()):
    """The lines of a function, decorators included, less those in skip."""
    first, last = _span(node)
    return "".join(line for n, line in enumerate(lines[first - 1 : last], start=first) if n not in skip)


def _code_lines(text):
    """Lines of code (see the module docstring) of a function without its docstring."""
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def _imports(tree, lines):
    """The top-level imports as written, a blank line between groups: the
    article's first listing starts with them, so what a reader pastes runs."""
    out, previous_end = [], None
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if previous_end is not None and node.lineno > previous_end + 1:
                out.append("\n")
            out.append("".join(lines[node.lineno - 1 : node.end_lineno]))
            previous_end = node.end_lineno
    return "".join(out)


def listing_values(source, core):
    """The listing of one source file whose core functions are `core`."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    found = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    missing = [name for name in core if name not in found]
    if missing:
        raise ArticlekitError(
            f"core function(s) {', '.join(missing)} not defined at the top level; defined: {', '.join(found) or 'none'}"
        )
    bare = {name: _source_of(lines, node, _docstring_lines(node)) for name, node in found.items()}
    imports = _imports(tree, lines)
    return {
        "source": source,
        "imports": imports,
        "lines": len(lines),
        "functions": {name: _source_of(lines, node) for name, node in found.items()},
        "bare": bare,
        "core_source": imports + "\n\n" + "\n\n".join(bare[name] for name in core),
        "core_functions": list(core),
        "core_lines": sum(_code_lines(bare[name]) for name in core),
    }


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit listings", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where to write results/listings.json")
    add_publishing_argument(parser)
    args = parser.parse_args(argv)
    listed = args.publishing.listings
    if not listed:
        log.error(
            "listings: publishing.listings names no source file; add e.g. "
            "listings: {NAME: {source: experiments/FILE.py, functions: [FUNCTION]}} to the config"
        )
        return 1
    values = {}
    for name, listing in listed.items():
        path = Path(listing.source)
        try:
            values[name] = listing_values(read_text(path), list(listing.functions))
        except (OSError, SyntaxError, ArticlekitError) as exc:
            log.error(f"listings: {path} (publishing.listings.{name}): {exc}")
            return 1
    sources = {name: listing.source for name, listing in listed.items()}
    # one listing: its path, as a single-file listing always had
    write_artifact(
        args.out,
        "listings",
        "articlekit/data/listings.py",
        params={"source": next(iter(sources.values())) if len(sources) == 1 else sources},
        values=values,
    )
    for name, listing in values.items():
        log.info(
            f"listings: {name}: {len(listing['functions'])} functions, {listing['core_lines']} core lines -> {args.out}"
        )
    return 0
