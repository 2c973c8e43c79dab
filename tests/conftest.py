"""Shared fixtures: where the project is, its fast test configuration, and
the article built from it."""

import logging
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.shared_build import copy_of_test_build
from tests.workspace import merged_config

# The tiers (unit, workflow, e2e), their marks, the check that a unit test
# runs no Snakemake, and the xdist groups: tests/tiers.py.
from tests.tiers import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_ignore_collect,
    pytest_runtest_protocol,
    pytest_runtest_setup,
    pytest_unconfigure,
)

ROOT = Path(__file__).resolve().parent.parent


def interpreter_first_on_path():
    """Put the folder of the Python running the tests first on PATH, where
    `python` there is another file: the commands the tests start by name
    (`python`, `snakemake`, and every build job, which Snakemake's shell
    starts as `python -m ...`) then run with this interpreter and its
    packages, as in an activated virtual environment, also where the suite
    was started as `venv/bin/python -m pytest` without activating it."""
    here = os.path.dirname(sys.executable)
    found = shutil.which("python")
    if here and (found is None or os.path.realpath(found) != os.path.realpath(sys.executable)):
        os.environ["PATH"] = os.pathsep.join([here, os.environ.get("PATH", "")])


interpreter_first_on_path()


@pytest.fixture(autouse=True)
def _root_logger_as_it_was():
    """A test that runs an experiment in this process (run_experiment calls
    configure_logging, which replaces the root logger's handlers) leaves the
    root logger as it found it: the next test's progress lines and captured
    stderr do not depend on which tests ran before it (pytest-randomly)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture(scope="session")
def repo_root():
    """The project's root folder (where Snakefile and config.yaml live)."""
    return ROOT


@pytest.fixture(scope="session")
def test_config():
    """The config of the tests' builds: config/test.yaml merged over
    config.yaml and the experiments' declared defaults (tiny sizes)."""
    return merged_config(ROOT)


@pytest.fixture
def params(test_config):
    """params("scaling") -> a fresh copy of that experiment's test parameters,
    as its rule would pass them (timing also gets `threads`)."""

    def section(name):
        p = dict(test_config.get(name) or {})
        if name == "timing":
            p["threads"] = 1
        return p

    return section


@pytest.fixture(scope="session")
def built_project(tmp_path_factory):
    """A fresh copy of the project built end to end on config/test.yaml, for
    the tests that read the rendered pages (build/article.{md,html},
    build/audit.html): this worker's copy of the run's one TEST_BUILD
    (tests/shared_build.py).
    BUILT_PROJECT=folder reuses a project built there, to iterate on these
    tests without rebuilding."""
    if os.environ.get("BUILT_PROJECT"):
        return Path(os.environ["BUILT_PROJECT"]).resolve()
    return copy_of_test_build(tmp_path_factory).project


@pytest.fixture(scope="module")
def server():
    """A forked Snakemake for the module's plans and builds (tests/snakemake_fork.py):
    Snakemake imported once, each run a fork of it."""
    from tests.snakemake_fork import SnakemakeServer

    server = SnakemakeServer()
    yield server
    server.close()
