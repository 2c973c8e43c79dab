"""The suite's tiers (tests/tiers.py): a test without a tier mark is `unit`,
`-m unit` selects it, and a unit test that runs Snakemake, a renderer or a
build step fails, naming what it ran and the mark that would put it in its
tier; a marked one runs as before; `slow` (a whole build) is `e2e`. Proved on a small suite run by pytest
itself, with this repository's conftest hooks, through a stand-in
`snakemake` (so that nothing is built)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tiers
from tests.tiers import what_it_starts

ROOT = Path(__file__).resolve().parent.parent

SUITE = '''
import subprocess
import sys

import pytest


def test_plain_python():
    assert sum([1, 2]) == 3


def test_runs_snakemake_unmarked():
    subprocess.run(["snakemake", "--version"], check=True)


@pytest.mark.workflow
def test_runs_snakemake_marked():
    subprocess.run(["snakemake", "--version"], check=True)


def test_asks_for_the_built_project_unmarked(built_project):
    pass


@pytest.mark.slow
def test_marked_slow():
    pass
'''

CONFTEST = '''
import pytest

from tests.tiers import (  # noqa: F401
    pytest_collection_modifyitems, pytest_ignore_collect, pytest_runtest_protocol, pytest_runtest_setup,
    pytest_unconfigure,
)
from tests.tiers import pytest_configure as tiers_configure


def pytest_configure(config):
    for mark in ("unit", "workflow", "e2e", "slow", "xdist_group"):
        config.addinivalue_line("markers", mark)
    tiers_configure(config)


@pytest.fixture(scope="session")
def built_project():
    raise AssertionError("the tiers check must refuse this fixture to a unit test before it is set up")
'''


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return small_suite(tmp_path_factory.mktemp("tiers"), {"test_suite.py": SUITE})


def small_suite(tmp_path, files):
    """-> pytest_run(*args): pytest over `files` (name -> text) and CONFTEST in tmp_path."""
    for name, text in {**files, "conftest.py": CONFTEST}.items():
        (tmp_path / name).write_text(text)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "snakemake").write_text("#!/bin/sh\necho 'stand-in snakemake'\n")
    (bin_dir / "snakemake").chmod(0o755)
    # COLUMNS: the summary lines, which carry the refusal, are cut at the terminal's width
    # PYTEST_DISABLE_PLUGIN_AUTOLOAD: the small suite needs none of the installed plugins (seconds each)
    env = {
        **os.environ,
        "COLUMNS": "2000",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }

    def pytest_run(*args):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:xdist",
                "-rA",
                "-q",
                "--rootdir",
                str(tmp_path),
                str(tmp_path),
                *args,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    return pytest_run


@pytest.fixture(scope="module")
def outcome(suite):
    return suite()


def test_an_unmarked_test_that_runs_snakemake_fails_naming_the_command_and_the_mark(outcome):
    done = outcome
    out = done.stdout
    assert done.returncode == 1, out
    assert "PASSED test_suite.py::test_plain_python" in out
    assert "PASSED test_suite.py::test_runs_snakemake_marked" in out
    refused = next(
        line for line in out.splitlines() if line.startswith("FAILED test_suite.py::test_runs_snakemake_unmarked")
    )
    assert "is a unit test (it has no tier mark) but it starts Snakemake: `snakemake --version`" in refused
    assert "@pytest.mark.workflow" in refused


def test_a_unit_test_asking_for_a_building_fixture_fails_before_the_build(outcome):
    out = outcome.stdout
    refused = next(
        line
        for line in out.splitlines()
        if line.startswith(("FAILED", "ERROR")) and "test_asks_for_the_built_project_unmarked" in line
    )
    assert "asks for the fixture `built_project`, which builds the whole article" in refused
    assert "must refuse this fixture" not in out


def test_minus_m_unit_selects_exactly_the_tests_without_a_tier_mark(suite):
    out = suite("-m", "unit", "--collect-only").stdout
    assert "3/5 tests collected (2 deselected)" in out, out


def test_minus_m_unit_does_not_import_a_module_whose_pytestmark_is_another_tier(tmp_path):
    """None of its tests could be selected; its imports are its tier's cost."""
    marked = 'import pytest\n\npytestmark = [pytest.mark.workflow]\n\nraise ImportError("imported")\n'
    suite = small_suite(tmp_path, {"test_suite.py": SUITE, "test_marked_module.py": marked})
    unit = suite("-m", "unit", "--collect-only")
    assert unit.returncode == 0 and "3/5 tests collected (2 deselected)" in unit.stdout, unit.stdout
    workflow = suite("-m", "workflow", "--collect-only")
    assert workflow.returncode != 0 and 'ImportError("imported")' in workflow.stdout, workflow.stdout


@pytest.mark.parametrize(
    "text, tier",
    [
        ("pytestmark = pytest.mark.workflow\n", "workflow"),
        ("pytestmark = [pytest.mark.slow, pytest.mark.spread]  # a build\n", "slow"),
        ("pytestmark = [pytest.mark.spread, pytest.mark.quarto]\n", "quarto"),
        ("pytestmark = pytest.mark.e2e()\n", "e2e"),
        ("pytestmark = pytest.mark.spread\n", None),
        ("pytestmark = pytest.mark.workflow if HAVE_IT else []\n", None),  # not read: imported
        ("pytestmark = [pytest.mark.workflow, MARKS]\n", None),
        ("def f():\n    pytestmark = pytest.mark.workflow\n", None),
        ("x = 1\n", None),
    ],
)
def test_the_tier_of_a_module_is_read_from_its_pytestmark_without_importing_it(tmp_path, text, tier):
    path = tmp_path / "test_module.py"
    path.write_text("import pytest\n" + text)
    assert tiers.module_tier(path) == tier


def test_an_older_mark_of_a_whole_build_puts_a_test_in_e2e(suite):
    out = suite("-m", "e2e", "--collect-only").stdout
    assert "1/5 tests collected (4 deselected)" in out and "test_marked_slow" in out, out


@pytest.mark.parametrize(
    "command, started",
    [
        (["snakemake", "--cores", "2"], "Snakemake"),
        (["/usr/bin/python3", "-m", "snakemake", "-n"], "Snakemake"),
        ([sys.executable, "-c", "from snakemake.cli import main; main()"], "Snakemake"),
        ([sys.executable, str(ROOT / "tests" / "snakemake_fork.py")], "Snakemake (the fork server)"),
        ("snakemake --dry-run", "Snakemake"),
        (["/opt/pandoc/bin/pandoc", "-o", "x.html"], "a renderer (Pandoc)"),
        (["quarto", "render"], "a renderer (Quarto)"),
        ([sys.executable, "-m", "experiments.timing", "--json", "x"], "an experiment's run (a build step)"),
        ([sys.executable, "-m", "articlekit", "render"], "an articlekit command (a build step)"),
        (["uv", "venv"], "an environment install (uv)"),
        (["git", "ls-files"], None),
        ([sys.executable, "-m", "pytest"], None),
        ([sys.executable, "-c", "print(1)"], None),
    ],
)
def test_what_a_unit_test_may_not_start(command, started):
    assert what_it_starts(command) == started


class FakeItem:
    """What the xdist hooks read of a collected test: its id, tier and marks."""

    def __init__(self, nodeid, tier, *marks):
        self.nodeid, self.tier, self.marks = nodeid, tier, [getattr(pytest.mark, m) for m in marks]

    def get_closest_marker(self, name):
        return next((m.mark for m in self.marks if m.name == name), None)

    def add_marker(self, marker):
        self.marks.append(marker)


def grouped(*items):
    for item in items:
        if not item.get_closest_marker("spread"):
            item.add_marker(pytest.mark.xdist_group(tiers.module_of(item)))
    return sorted(items, key=tiers.handed_out_order(items))


def test_a_module_is_one_unit_of_work_and_a_spread_modules_tests_each_their_own():
    a1, a2 = FakeItem("tests/test_a.py::one", "e2e"), FakeItem("tests/test_a.py::two", "unit")
    s1, s2 = FakeItem("tests/test_s.py::one", "e2e", "spread"), FakeItem("tests/test_s.py::two", "e2e", "spread")
    grouped(a1, a2, s1, s2)
    assert tiers._group(a1) == tiers._group(a2) == "tests/test_a.py"
    assert tiers._group(s1) == "tests/test_s.py::one" and tiers._group(s2) == "tests/test_s.py::two"


def test_the_longest_units_are_handed_out_first_then_by_tier():
    unit = FakeItem("tests/test_u.py::u", "unit")
    workflow = FakeItem("tests/test_w.py::w", "workflow")
    spread = FakeItem("tests/test_s.py::s", "e2e", "spread")
    module_e2e = FakeItem("tests/test_m.py::m", "e2e")
    module_unit = FakeItem("tests/test_m.py::n", "unit")  # in its module's unit, handed out with it
    longest = [FakeItem(f"{module}::x", "workflow") for module in tiers.LONGEST_FIRST]
    order = grouped(unit, workflow, spread, module_unit, module_e2e, *reversed(longest))
    assert order == [*longest, module_unit, module_e2e, spread, workflow, unit]
