"""Which files a build step runs: its code inputs, read from the imports.

A rule reruns when the code it runs changes, so its inputs list that code.
Kept by hand, such lists drift from the import graph; here they are read
from it:

- `package_files("articlekit.article.bind")`: the module, every articlekit module it
  imports (directly or through others, at the top or inside a function),
  and every package data file one of them names in a string: by its path
  from the module's own folder ("filters/quarto_layout.lua", "page.css"),
  by its bare name when it lies under that folder ("pdf_finish.lua"), or
  through a folder ("quarto" stands for every file under
  articlekit/render/quarto/ for a module of articlekit/render/);
- `experiment_files("scaling")`: experiments/scaling.py, the article's own
  modules it imports transitively (experiments/attention.py, and the
  packages' __init__.py that Python runs first), and the package files of
  the articlekit modules they use.

Imports are read with `ast`, never executed. An import that resolves to
neither the article's folder nor articlekit (numpy, the standard library)
is not followed: installed libraries enter the rules as versions, not files.

    python -m articlekit.workflow.codegraph articlekit.render.page
    python -m articlekit.workflow.codegraph --experiment scaling
"""

import ast
import os
import sys
from functools import lru_cache
from pathlib import Path

PACKAGE = "articlekit"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _module_path(module, root):
    """The file of a dotted module name under root, or None."""
    base = Path(root, *module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _locate(module, article_root):
    """(file, root) for an articlekit module or one of the article's own, else None."""
    if module == PACKAGE or module.startswith(PACKAGE + "."):
        root = PACKAGE_DIR.parent
    else:
        root = Path(article_root)
    path = _module_path(module, root)
    return (path, root) if path else None


def _parents(module):
    """'a.b.c' -> ['a', 'a.b']: the packages Python imports before it."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@lru_cache(maxsize=None)
def _scan(path):
    """One pass over a file's syntax tree: its imports as (level, module,
    names), and its string constants (where it names its data files)."""
    imports, strings = [], set()
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            imports += [(0, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.level, node.module, tuple(a.name for a in node.names if a.name != "*")))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
    return tuple(imports), frozenset(strings)


def imported_names(path, module):
    """Every module name the file imports (anywhere in it), with `from X
    import Y` giving both X and X.Y (Y may be a submodule)."""
    package = module if Path(path).name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for level, source, names in _scan(path)[0]:
        if level:  # relative: from . import x, from ..y import z
            parts = package.split(".")
            source = ".".join(parts[: len(parts) - level + 1] + ([source] if source else []))
        found.append(source)
        found += [f"{source}.{name}" for name in names]
    return found


def named_strings(path):
    """The string constants of a file: where it names its data files."""
    return _scan(path)[1]


@lru_cache(maxsize=None)
def _package_data(folder):
    """{name: files} for the data files a module in `folder` may name: each
    file under the folder by its path from there and by its bare name, and
    each sub-folder by its path (all of its files)."""
    named = {}
    folder = Path(folder)
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".py", ".pyc"):
            continue
        relative = path.relative_to(folder)
        for name in {relative.as_posix(), path.name}:
            named.setdefault(name, []).append(path)
        for sub in relative.parents:
            if sub != Path("."):
                named.setdefault(sub.as_posix(), []).append(path)
    return named


def module_graph(modules, article_root="."):
    """The files of `modules` and of everything they import that lives in
    articlekit or under article_root, plus the package data they name."""
    seen, files, queue = set(), set(), list(modules)
    while queue:
        module = queue.pop()
        if module in seen:
            continue
        seen.add(module)
        located = _locate(module, article_root)
        if located is None:
            continue
        path, _ = located
        files.add(path)
        queue += _parents(module)
        queue += imported_names(path, module)
        if module.startswith(PACKAGE):
            data = _package_data(path.parent)
            for name in named_strings(path):
                files.update(data.get(name, []))
    return files


def _shown(paths, article_root):
    """Sorted paths, relative to the article's folder when inside it (so a
    rule's inputs read articlekit/article/bind.py in a checkout, and stay absolute
    for an installed articlekit)."""
    root = Path(article_root).resolve()
    shown = []
    for path in paths:
        path = Path(path).resolve()
        try:
            shown.append(path.relative_to(root).as_posix())
        except ValueError:
            shown.append(path.as_posix())
    return sorted(set(shown))


def package_files(*modules, article_root="."):
    """What `python -m articlekit.X` runs for each articlekit module given."""
    for module in modules:
        if _locate(module, article_root) is None:
            raise ValueError(f"no module {module!r} in {PACKAGE_DIR}")
    return _shown(module_graph(modules, article_root), article_root)


def experiment_path(name, package="experiments", article_root="."):
    """experiments/NAME.py (or its package's __init__.py), or None."""
    return _module_path(f"{package}.{name}", article_root)


def experiment_files(name, package="experiments", article_root="."):
    """What `python -m experiments.NAME` runs: its file, the article's modules
    it imports, and the articlekit files they use."""
    module = f"{package}.{name}"
    if experiment_path(name, package, article_root) is None:
        raise ValueError(f"experiment {name!r}: no {package}/{name}.py under {Path(article_root).resolve()}; "
                         f"write it, or remove {name!r} from experiments: in config.yaml")
    return _shown(module_graph([module], article_root), article_root)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m articlekit.workflow.codegraph", description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="articlekit modules, e.g. articlekit.render.page")
    parser.add_argument("--experiment", action="append", default=[], help="an experiment's name")
    args = parser.parse_args(argv)
    try:
        files = package_files(*args.modules) if args.modules else []
        for name in args.experiment:
            files += experiment_files(name)
    except (ValueError, SyntaxError) as exc:
        print(f"codegraph: {exc}", file=sys.stderr)
        return 1
    print("\n".join(sorted(set(files))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
