"""The suite's three tiers, and the rule that keeps each test in its own.

- `unit`: plain Python. No Snakemake, no renderer (Pandoc, Quarto, Typst's
  command), no browser, no cluster, no scan of the whole package: the
  whole tier runs in seconds (`python -m pytest -m unit`).
- `workflow`: runs Snakemake (its plan, a dry run, a small DAG) or a renderer
  on a small document, or reads every module of the package (a check of
  the package's imports, its layout, what its code may say).
- `e2e`: whole builds, the real renderers over the article, the browser,
  SLURM. The older marks `slow`, `browser`, `quarto` and `slurm` put a test
  here by themselves.

A test file says its tier with `pytestmark = pytest.mark.workflow` (or
`e2e`), a test with the decorator; a test that says nothing is `unit`, and
the mark is added here so that `-m unit` selects it. The rule is checked as
the suite runs: a `unit` test that starts `snakemake` (as a command,
`python -m snakemake`, `python -c` importing it, or through the fork server
of tests/snakemake_fork.py), a renderer, a browser, a SLURM command, uv, or
a build step's command (`python -m experiments.NAME`, `python -m articlekit
...`), or that asks for a fixture that builds the project, fails at once,
naming what it ran and the mark to add.
What it cannot see: a command started by a command the test started (say
`python -m articlekit reproduce`, which runs Snakemake itself); mark those
by hand.
Under `-m unit`, a module whose `pytestmark` names another tier is not
imported at all (read without importing it: `module_tier`).

Under pytest-xdist (`-n auto`, with `--dist loadgroup` from pyproject.toml)
each module is one unit of work, so that a module-scoped fixture is made
once; a module marked `spread` gives each of its tests to any worker, for
its module fixtures are cheap to make again (a copy of a build made once
in the run, tests/shared_build.py). The longest units go first: the
modules named in LONGEST_FIRST, then the other units holding an e2e test,
then workflow, then unit, so that no worker is left with a long one at
the end.
"""

import ast
import os
import shlex
import subprocess

import pytest

# Marks older than the tiers that each mean a whole build, a renderer over
# the article, a browser or a cluster.
E2E_MARKS = ("slow", "browser", "quarto", "slurm")

# The marks that put a test in a tier other than `unit`.
TIER_MARKS = ("workflow", "e2e", *E2E_MARKS)

# Fixtures that run Snakemake when they are set up (conftest.py).
BUILDING_FIXTURES = {
    "built_project": "builds the whole article",
    "server": "starts the Snakemake fork server",
}

# Programs a unit test may not start, by the name it starts them with.
OUTSIDE_UNIT = {
    "snakemake": "Snakemake",
    "quarto": "a renderer (Quarto)",
    "pandoc": "a renderer (Pandoc)",
    "typst": "a renderer (Typst)",
    "chromium": "a browser",
    "chromedriver": "a browser",
    "sbatch": "SLURM",
    "srun": "SLURM",
    "slurmctld": "SLURM",
    "slurmd": "SLURM",
    "uv": "an environment install (uv)",
}

# Modules whose command is a step of a build: an experiment's run, one of
# articlekit's commands (bind, render, audit, preview, ...).
BUILD_STEPS = {
    "experiments": "an experiment's run (a build step)",
    "articlekit": "an articlekit command (a build step)",
}

# Modules that are one long unit of work (minutes: a cluster of their own
# and two builds, a background pool of builds), as .ci/run's slowest
# durations show them: handed out before any other.
LONGEST_FIRST = ("tests/test_slurm.py", "tests/test_faults.py")

_running = None  # the test being set up, run or torn down in this process


def tier_of(item):
    """The tier a collected test belongs to."""
    if item.get_closest_marker("e2e") or any(item.get_closest_marker(m) for m in E2E_MARKS):
        return "e2e"
    if item.get_closest_marker("workflow"):
        return "workflow"
    return "unit"


def what_it_starts(args):
    """What a command line starts, if a unit test may not start it; else None."""
    if isinstance(args, (str, bytes)):
        args = args.decode() if isinstance(args, bytes) else args
        try:
            args = shlex.split(args)
        except ValueError:
            args = args.split()
    args = [os.fspath(a) if not isinstance(a, bytes) else a.decode() for a in args]
    if not args:
        return None
    program = os.path.basename(args[0])
    if program in OUTSIDE_UNIT:
        return OUTSIDE_UNIT[program]
    if program.startswith("python"):
        module = args[args.index("-m") + 1] if "-m" in args[:-1] else ""
        code = args[args.index("-c") + 1] if "-c" in args[:-1] else ""
        if module == "snakemake" or "snakemake" in code:
            return "Snakemake"
        if any(os.path.basename(a) == "snakemake_fork.py" for a in args[1:3]):
            return "Snakemake (the fork server)"
        for package, what in BUILD_STEPS.items():
            if module == package or module.startswith(package + "."):
                return what
    return None


def _refuse(what, command):
    item = _running
    if item is None or item.tier != "unit":
        return
    shown = command if isinstance(command, str) else shlex.join(map(str, command))
    pytest.fail(
        f"{item.nodeid} is a unit test (it has no tier mark) but it {what}: "
        f"`{shown[:200]}`. Mark it `@pytest.mark.workflow` (a plan, a dry run, a small DAG, "
        f"a renderer on a small document) or `@pytest.mark.e2e` (a whole build), or "
        f"`pytestmark = pytest.mark.workflow` for the whole file (tests/tiers.py says which is which)",
        pytrace=False,
    )


_original_popen_init = subprocess.Popen.__init__


def _guarded_popen_init(self, args, *rest, **kwargs):
    what = what_it_starts(args) or (kwargs.get("executable") and what_it_starts([kwargs["executable"]]))
    if what:
        _refuse(f"starts {what}", args)
    return _original_popen_init(self, args, *rest, **kwargs)


# ---- hooks (imported by conftest.py) ------------------------------------------------


def pytest_configure(config):
    subprocess.Popen.__init__ = _guarded_popen_init


def pytest_unconfigure(config):
    subprocess.Popen.__init__ = _original_popen_init


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """Give each test its tier's mark, its xdist group, and (under xdist) an
    order that hands the longer units of work out first."""
    for item in items:
        item.tier = tier_of(item)
        if not item.get_closest_marker(item.tier):  # unit, and e2e by an older mark: -m selects them too
            item.add_marker(item.tier)
        if not item.get_closest_marker("xdist_group") and not item.get_closest_marker("spread"):
            item.add_marker(pytest.mark.xdist_group(module_of(item)))  # (a spread test is a unit alone)
    if hasattr(config, "workerinput"):  # an xdist worker: every worker sorts alike
        items.sort(key=handed_out_order(items))


def pytest_ignore_collect(collection_path, config):
    """Under `-m unit`, a test module whose `pytestmark` puts the whole of it
    in another tier is not imported: none of its tests could be selected,
    and its imports (a renderer's modules, a browser's driver) are the
    tier's own cost."""
    if config.option.markexpr != "unit" or not collection_path.name.startswith("test_"):
        return None
    return True if module_tier(collection_path) else None


def module_tier(path):
    """The tier mark of a module's `pytestmark` (`pytest.mark.workflow`, or a
    list of marks holding one), read without importing it; None where it
    has none, or says it in a form this does not read (it is imported)."""
    if path.suffix != ".py" or not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if "\npytestmark" not in text:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None  # imported, to say where
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and [ast.unparse(t) for t in statement.targets] == ["pytestmark"]:
            value = statement.value
            marks = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            names = [_mark_name(mark) for mark in marks]
            if None in names:
                return None
            return next((name for name in names if name in TIER_MARKS), None)
    return None


def _mark_name(node):
    """`pytest.mark.NAME` or `pytest.mark.NAME(...)` -> NAME; anything else -> None."""
    node = node.func if isinstance(node, ast.Call) else node
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "pytest.mark":
        return node.attr
    return None


def module_of(item):
    return item.nodeid.split("::")[0]


def handed_out_order(items):
    """Sort key: LONGEST_FIRST's modules, then the units holding an e2e
    test (a module's before a spread test's: a module is the longer), then
    workflow, then unit; collection order within."""
    heaviest = {}
    for item in items:
        group, rank = _group(item), _rank(item)
        heaviest[group] = min(heaviest.get(group, rank), rank)
    return lambda item: heaviest[_group(item)]


def _rank(item):
    """How early a test's unit goes out, by this test alone (lower: earlier)."""
    module = module_of(item)
    if module in LONGEST_FIRST:
        return (0, LONGEST_FIRST.index(module))
    if item.tier == "e2e":
        return (2, 0) if item.get_closest_marker("spread") else (1, 0)
    return ({"workflow": 3, "unit": 4}[item.tier], 0)


def _group(item):
    """The unit of work a test is in: its xdist group, or itself."""
    group = item.get_closest_marker("xdist_group")
    return group.args[0] if group else item.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if getattr(item, "tier", None) != "unit":
        return
    for name in sorted(set(getattr(item, "fixturenames", ())) & BUILDING_FIXTURES.keys()):
        _refuse(f"asks for the fixture `{name}`, which {BUILDING_FIXTURES[name]}", name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _running
    _running = item
    try:
        yield
    finally:
        _running = None
