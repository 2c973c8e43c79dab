"""The package's layout is its pipeline, and its imports point one way.

articlekit's sub-packages are the stages of the build, in the order data
flows through them. A module may import its own stage and the stages before
it, never a later one, and no import goes round in a circle: the rules' code
inputs are read from these imports (articlekit/workflow/codegraph.py), so an
import that points back up makes an early step rerun for an edit to a late
one. No module reaches into another module's `_private` names.

Read from the source with `ast` (imports inside functions included), never
by importing it.
"""

import ast
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "articlekit"
# The stages in the order the data flows; what may use all of them comes last.
STAGES = ["core", "experiment", "data", "article", "render", "review"]
ON_TOP = ["skeleton", "workflow", "__main__"]


def modules(package=PACKAGE):
    """{dotted name: path} of every module of the package (the skeleton's
    template files are an article's, not the package's)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent)
        if relative.parts[1:3] == ("skeleton", "article"):
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(path, module, known):
    """(imported module, names taken from it, line) for each import of the
    package in the file, resolved to one of its modules (`known`)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    top = module.split(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, (), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([source] if source else []))
            names = tuple(alias.name for alias in node.names)
            # `from articlekit.core import fmt` imports the module articlekit.core.fmt
            submodules = [f"{source}.{name}" for name in names if f"{source}.{name}" in known]
            if submodules:
                out += [(sub, (), node.lineno) for sub in submodules]
            else:
                out.append((source, names, node.lineno))
    return [(name, names, line) for name, names, line in out if name == top or name in known]


def stage(module):
    """The stage a module belongs to, as an index into STAGES + ON_TOP (the
    package's own __init__ is below everything: it holds only its version)."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    return (STAGES + ON_TOP).index(parts[1]) if parts[1] in STAGES + ON_TOP else len(STAGES)


def shown(path, package):
    return path.relative_to(package.parent).as_posix()


def backward_imports(package=PACKAGE):
    known = modules(package)
    found = []
    for module, path in known.items():
        for imported, _, line in imports(path, module, known):
            if stage(module) < len(STAGES) and stage(imported) > stage(module):
                found.append(
                    f"{shown(path, package)}:{line} ({STAGES[stage(module)]}) imports "
                    f"{shown(known[imported], package)} ({(STAGES + ON_TOP)[stage(imported)]}), "
                    "a later stage"
                )
    return found


def import_cycles(package=PACKAGE):
    known = modules(package)
    graph = {m: {i for i, _, _ in imports(p, m, known) if i != m and i in known} for m, p in known.items()}
    cycles, state = [], {}

    def visit(module, trail):
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                cycles.append(trail[trail.index(imported) :] + [imported])
            elif imported not in state:
                visit(imported, trail + [imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return [" -> ".join(shown(known[m], package) for m in cycle) for cycle in cycles]


def private_reaches(package=PACKAGE):
    known = modules(package)
    found = []
    for module, path in known.items():
        for imported, names, line in imports(path, module, known):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and imported != module:
                found.append(
                    f"{shown(path, package)}:{line} takes {', '.join(private)} from {shown(known[imported], package)}"
                )
    return found


def test_every_module_belongs_to_a_stage():
    loose = [m for m in modules() if m.count(".") == 1 and m.split(".")[1] not in STAGES + ON_TOP]
    assert not loose, f"modules outside the stage packages: {loose}; move each into the stage it serves"


@pytest.mark.parametrize("package", STAGES + ON_TOP[:2])
def test_each_stage_says_what_it_owns_and_what_it_may_import(package):
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    if package in STAGES:
        assert "Owns:" in doc, f"articlekit/{package}/__init__.py: say what the stage owns"
        assert "May import" in doc, f"articlekit/{package}/__init__.py: say what it may import"
    assert doc, f"articlekit/{package}/__init__.py: say what the package is for"


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_no_module_imports_from_a_later_stage():
    assert not backward_imports(), "\n".join(backward_imports())


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_there_is_no_import_cycle():
    assert not import_cycles(), "import cycles:\n" + "\n".join(import_cycles())


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_no_module_takes_another_modules_private_names():
    assert not private_reaches(), "\n".join(private_reaches())


def test_the_checks_find_what_they_are_for(tmp_path):
    """A backward import (hidden in a function), a cycle and a private name,
    planted in a small package of the same shape, are each named."""
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "data/__init__.py": "",
        "review/__init__.py": "",
        "core/fmt.py": "def _style():\n    pass\n\n\ndef f():\n    from pkg.review import audit\n",
        "data/values.py": "from pkg.data import baseline\n",
        "data/baseline.py": "from pkg.data.values import merge\nfrom pkg.core.fmt import _style\n",
        "review/audit.py": "",
    }
    for name, text in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text)
    package = tmp_path / "pkg"
    assert backward_imports(package) == ["pkg/core/fmt.py:6 (core) imports pkg/review/audit.py (review), a later stage"]
    assert import_cycles(package) == ["pkg/data/baseline.py -> pkg/data/values.py -> pkg/data/baseline.py"]
    assert private_reaches(package) == ["pkg/data/baseline.py:2 takes _style from pkg/core/fmt.py"]


def shipped_data_files(root=PACKAGE.parent):
    """The files under articlekit/ the wheel carries, by MANIFEST.in and the
    packages pyproject.toml finds (tests/distribution.py), as paths."""
    from tests.distribution import shipped

    return {root / name for name in shipped(root)}


def test_every_data_file_ships_with_its_package():
    """A Lua filter, the extension, a template: what is not Python must be
    selected by MANIFEST.in and lie in a package setuptools finds, or an
    installed articlekit lacks it."""

    def is_data(path):
        if not path.is_file() or "__pycache__" in path.parts:
            return False
        template = path.relative_to(PACKAGE).parts[:2] == ("skeleton", "article")  # an article's files, .py too
        return template or path.suffix not in (".py", ".pyc")

    data = {path for path in PACKAGE.rglob("*") if is_data(path)}
    missing = sorted(str(path.relative_to(PACKAGE.parent)) for path in data - shipped_data_files())
    assert not missing, (
        "not shipped (MANIFEST.in grafts articlekit/; a folder setuptools does not find as a package, "
        f"such as a dotted name, loses its files): {missing}"
    )


def test_no_compiled_python_ships(tmp_path):
    """Read from a copy with a __pycache__ in it: MANIFEST.in drops it."""
    import shutil

    shutil.copytree(PACKAGE, tmp_path / "articlekit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "MANIFEST.in"):
        shutil.copy(PACKAGE.parent / name, tmp_path / name)
    (tmp_path / "articlekit/core/__pycache__").mkdir()
    (tmp_path / "articlekit/core/__pycache__/log.cpython-311.pyc").write_bytes(b"")
    shipped = shipped_data_files(tmp_path)
    assert tmp_path / "articlekit/core/log.py" in shipped
    assert not [path for path in shipped if "__pycache__" in path.parts or path.suffix == ".pyc"]


def third_party_imports(package=PACKAGE):
    """{top-level module: first file:line importing it} for every import in
    the package of a module that is neither the standard library nor the
    package itself (imports inside functions included)."""
    import sys

    found = {}
    for module, path in modules(package).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != package.name and top not in sys.stdlib_module_names:
                    found.setdefault(top, f"{path.relative_to(package.parent)}:{node.lineno}")
    return found


def declared_distributions(root=PACKAGE.parent):
    """The distribution names pyproject.toml's dependencies list, normalised."""
    import re

    dependencies = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return {re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in dependencies}


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_every_library_articlekit_imports_is_a_declared_dependency():
    """`pip install articlekit` alone must give every module it imports: an
    import of threadpoolctl, numpy or jinja2 that pyproject.toml does not
    list works on this machine (the dev requirements bring it) and breaks
    `measure` or the review pages on a user's."""
    from importlib.metadata import packages_distributions

    distributions = packages_distributions()
    declared = declared_distributions()
    undeclared = sorted(
        f"{where} imports {module} (distribution {', '.join(distributions.get(module, ['?']))})"
        for module, where in third_party_imports().items()
        if not {name.lower().replace("_", "-") for name in distributions.get(module, [module])} & declared
    )
    assert not undeclared, "add to [project] dependencies in pyproject.toml:\n" + "\n".join(undeclared)
