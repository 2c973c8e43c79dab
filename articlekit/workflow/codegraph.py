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
  the articlekit modules they use;
- `imported_libraries(["experiments.scaling"])`: the installed libraries
  those files import (numpy), by top-level name: what the version matrix
  imports once in each environment it installs, so that their bytecode is
  cached there (articlekit/review/matrixenv.py).

Imports are read with `ast`, never executed. An import that resolves to
neither the article's folder nor articlekit (numpy, the standard library)
is not followed: installed libraries enter the rules as versions, not files.

Every `snakemake` call reads the graph, a no-op too, and parsing the
modules is most of that. With `remember_scans(FILE)` (the workflow module
keeps .snakemake/articlekit/codegraph.json), what each file's parse found
is kept between runs under the digest of the file's bytes (and of this
module's own), so a file is parsed again exactly when its content changed.

    python -m articlekit.workflow.codegraph articlekit.render.page
    python -m articlekit.workflow.codegraph --experiment scaling
"""

import ast
import hashlib
import json
import sys
from functools import lru_cache
from pathlib import Path

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.jsonio import write_text_atomic
from articlekit.core.log import log

PACKAGE = "articlekit"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def _module_path(module, root):
    """The file of a dotted module name under root, or None."""
    base = Path(root, *module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
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
def file_digest(path):
    """The SHA-256 of a file's bytes (None when there is no such file), once
    per process: a plan reads each file as it is when the plan starts."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


@lru_cache(maxsize=None)
def _scan(path):
    """A file's imports as (level, module, names), and its string constants
    (where it names its data files): remembered, else parsed."""
    digest = file_digest(path)
    kept = _remembered["scans"].get(str(path))
    if kept and kept[0] == digest:
        imports, strings = kept[1:]
        return tuple((level, module, tuple(names)) for level, module, names in imports), frozenset(strings)
    imports, strings = _parse(Path(path).read_text(encoding="utf-8"), path)
    _remembered["scans"][str(path)] = [digest, imports, sorted(strings)]
    _remembered["changed"] = True
    return imports, strings


def _parse(text, path):
    """One pass over a file's syntax tree. Strings with a line break are
    left out (docstrings): no data file's name holds one."""
    imports, strings = [], set()
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.Import):
            imports += [(0, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.level, node.module, tuple(a.name for a in node.names if a.name != "*")))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value:
            strings.add(node.value)
    return tuple(imports), frozenset(strings)


# What earlier runs' parses found: {"scans": {path: [digest, imports, strings]}}.
_remembered = {"file": None, "scans": {}, "changed": False}


def _own_digest():
    """This module's own code: scans it did not make are not trusted."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def remember_scans(path):
    """Read the scans kept in `path` (JSON) and keep new ones there on
    save_scans(). A missing, unreadable or foreign file is a cache miss."""
    _remembered.update(file=Path(path), scans={}, changed=False)
    try:
        kept = json.loads(Path(path).read_text(encoding="utf-8"))
        if kept.get("codegraph") == _own_digest() and isinstance(kept.get("scans"), dict):
            _remembered["scans"] = kept["scans"]
    except (OSError, ValueError, AttributeError):
        pass


def save_scans():
    """Write the scans to remember_scans' file when any is new: atomically,
    so that runs at once keep one whole file. A folder that cannot be
    written leaves it as it was (each run then parses)."""
    path = _remembered["file"]
    if path is None or not _remembered["changed"]:
        return
    try:
        write_text_atomic(path, json.dumps({"codegraph": _own_digest(), "scans": _remembered["scans"]}))
        _remembered["changed"] = False
    except OSError:
        pass


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


def _reached(modules, article_root):
    """(module, its _node) for `modules` and every module they import, followed
    through those of articlekit and of the article (the others' node: None)."""
    seen, queue = set(), list(modules)
    while queue:
        module = queue.pop()
        if module in seen:
            continue
        seen.add(module)
        node = _node(module, article_root)
        yield module, node
        if node is not None:
            queue += node[1]


def module_graph(modules, article_root="."):
    """The files of `modules` and of everything they import that lives in
    articlekit or under article_root, plus the package data they name."""
    return {path for _, node in _reached(modules, article_root) if node is not None for path in node[0]}


def imported_libraries(modules, article_root="."):
    """The top-level names of the installed libraries `modules` import
    (directly or through articlekit's and the article's modules, anywhere in
    a file): every imported name that is neither theirs nor the standard
    library's, e.g. ['numpy', 'torch']. Some may not be installed at all."""
    found = set()
    for module, node in _reached(modules, article_root):
        top = module.partition(".")[0]
        if node is None and top != PACKAGE and top not in sys.stdlib_module_names:
            if _locate(top, article_root) is None:  # experiments.attention.softmax: a name, not a module
                found.add(top)
    return sorted(found)


@lru_cache(maxsize=None)
def _node(module, article_root):
    """(its file and the data files it names, the modules Python imports
    for it) for a module of articlekit or of the article, else None. Once
    per module: every step's graph goes through the same modules."""
    located = _locate(module, article_root)
    if located is None:
        return None
    path, _ = located
    files = [path]
    if module.startswith(PACKAGE):
        data = _package_data(path.parent)
        for name in named_strings(path):
            files += data.get(name, [])
    return tuple(files), (*_parents(module), *imported_names(path, module))


def _shown(paths, article_root):
    """Sorted paths, relative to the article's folder when inside it (so a
    rule's inputs read articlekit/article/bind.py in a checkout, and stay absolute
    for an installed articlekit)."""
    root = _resolved(Path(article_root))
    return sorted({_relative(_resolved(Path(path)), root) for path in paths})


@lru_cache(maxsize=None)
def _resolved(path):
    return path.resolve()


def _relative(path, root):
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def package_files(*modules, article_root="."):
    """What `python -m articlekit.X` runs for each articlekit module given."""
    for module in modules:
        if _locate(module, article_root) is None:
            raise ArticlekitError(f"no module {module!r} in {PACKAGE_DIR}")
    return _shown(module_graph(modules, article_root), article_root)


def experiment_path(name, package="experiments", article_root="."):
    """experiments/NAME.py (or its package's __init__.py), or None."""
    return _module_path(f"{package}.{name}", article_root)


def experiment_files(name, package="experiments", article_root="."):
    """What `python -m experiments.NAME` runs: its file, the article's modules
    it imports, and the articlekit files they use."""
    module = f"{package}.{name}"
    if experiment_path(name, package, article_root) is None:
        raise ArticlekitError(
            f"experiment {name!r}: no {package}/{name}.py under {Path(article_root).resolve()}; "
            f"write it, or remove {name!r} from experiments: in config.yaml"
        )
    return _shown(module_graph([module], article_root), article_root)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m articlekit.workflow.codegraph", description=__doc__.splitlines()[0]
    )
    parser.add_argument("modules", nargs="*", help="articlekit modules, e.g. articlekit.render.page")
    parser.add_argument("--experiment", action="append", default=[], help="an experiment's name")
    args = parser.parse_args(argv)
    try:
        files = package_files(*args.modules) if args.modules else []
        for name in args.experiment:
            files += experiment_files(name)
    except (ArticlekitError, SyntaxError) as exc:
        log.error(f"codegraph: {exc}")
        return 1
    print("\n".join(sorted(set(files))))
    return 0


if __name__ == "__main__":
    sys.exit(run_command("codegraph", main, sys.argv[1:]))
