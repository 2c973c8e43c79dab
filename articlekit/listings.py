"""Code listings for the article, cut from the real source file.

    python -m articlekit listings experiments/attention.py --out results/listings.json

The article shows the implementation it measured, never a retyped copy: its
code blocks bind these values ({{< value listings.attention.functions.softmax >}}
inside a fenced block). The artifact has the experiments' envelope:

    {"experiment": "listings", "script": "articlekit/listings.py",
     "params": {"source": PATH}, "versions": {"python": ...}, "values": {
       "attention": {
         "source":     the whole file,
         "lines":      its line count,
         "functions":  {name: source of each top-level function, decorators included},
         "bare":       {name: the same without its docstring},
         "core_source": the imports plus the core functions (bare), ready to run,
         "core_functions": the names below, in order,
         "core_lines": lines of code of the core functions}}}

Core functions: softmax, scaled_dot_product_attention, causal_mask,
split_heads, merge_heads, multi_head_attention: the from-scratch attention
and nothing else (not the timing baseline). "Lines of code" counts the
lines of those functions that hold code: the def line and body lines, not
blank lines, not comment-only lines, not the docstring.
"""

import argparse
import ast
import platform
import sys
from pathlib import Path

from articlekit.jsonio import write_json

CORE = ["softmax", "scaled_dot_product_attention", "causal_mask", "split_heads", "merge_heads",
        "multi_head_attention"]


def _span(node):
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return first, node.end_lineno


def _docstring_lines(node):
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        return set(range(body[0].lineno, body[0].end_lineno + 1))
    return set()


def functions(source):
    """{name: (node, source text)} for each top-level function, in file order."""
    lines = source.splitlines(keepends=True)
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first, last = _span(node)
            found[node.name] = (node, "".join(lines[first - 1:last]))
    return found


def without_docstring(source, node):
    lines = source.splitlines(keepends=True)
    first, last = _span(node)
    skip = _docstring_lines(node)
    return "".join(line for n, line in enumerate(lines[first - 1:last], start=first) if n not in skip)


def code_lines(source, node):
    """Lines of code of one function (see the module docstring)."""
    lines = source.splitlines()
    first, last = _span(node)
    skip = _docstring_lines(node)
    return sum(1 for n in range(first, last + 1)
               if n not in skip and lines[n - 1].strip() and not lines[n - 1].strip().startswith("#"))


def imports(source):
    lines = source.splitlines(keepends=True)
    return "".join("".join(lines[n.lineno - 1:n.end_lineno]) for n in ast.parse(source).body
                   if isinstance(n, (ast.Import, ast.ImportFrom)))


def listing_values(source, core=CORE):
    found = functions(source)
    missing = [name for name in core if name not in found]
    if missing:
        raise ValueError(f"core function(s) {', '.join(missing)} not defined at the top level; "
                         f"defined: {', '.join(found) or 'none'}")
    bare = {name: without_docstring(source, node) for name, (node, _) in found.items()}
    return {
        "source": source,
        "lines": len(source.splitlines()),
        "functions": {name: text for name, (_, text) in found.items()},
        "bare": bare,
        "core_source": imports(source) + "\n\n" + "\n\n".join(bare[name] for name in core),
        "core_functions": list(core),
        "core_lines": sum(code_lines(source, found[name][0]) for name in core),
    }


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit listings", description=__doc__.splitlines()[0])
    parser.add_argument("source", help="the Python file to list (experiments/attention.py)")
    parser.add_argument("--out", required=True, help="where to write results/listings.json")
    args = parser.parse_args(argv)
    path = Path(args.source)
    try:
        values = listing_values(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError) as exc:
        print(f"listings: {path}: {exc}", file=sys.stderr)
        return 1
    write_json(args.out, {
        "experiment": "listings",
        "script": "articlekit/listings.py",
        "params": {"source": str(path)},
        "versions": {"python": platform.python_version()},
        "values": {path.stem: values},
    })
    print(f"listings: {len(values['functions'])} functions, {values['core_lines']} core lines -> {args.out}",
          file=sys.stderr)
    return 0
