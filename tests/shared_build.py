"""A build made once for the whole test run, however many pytest-xdist workers ask.

Under `-n auto` each worker is its own process with its own session
fixtures: a session-scoped build would be made once per worker, or (as
before this module) every test reading it had to go to one worker. Here the
first worker to ask builds it in the run's shared temporary folder (the
parent of each worker's basetemp), under a file lock; a worker that asks
while it is being built waits for it, and one that asks later finds it
built. A failed build is recorded too, so that the others fail with its
output at once instead of building it again.

Each worker gets its own copy of the build (13 MB, mtimes kept, so that
Snakemake finds the copy up to date): a test that writes into the project
changes no other worker's copy. Within a worker, the tests share that copy,
as they shared the session fixture before.
"""

import json
import shutil
import subprocess
import time
from collections import namedtuple

import pytest
from filelock import FileLock

from tests.workspace import TEST_BUILD, TEST_BUILD_ENVIRONMENT, copy_environment, copy_project


Built = namedtuple("Built", "project output seconds")
Built.__doc__ = """project: this worker's copy of the build; output: the build's stdout
and stderr; seconds: how long the build took, where it was made."""


class BuildFailed(Exception):
    """The shared build's command failed (here or in another worker)."""


def run_root(tmp_path_factory):
    """The folder every worker of this run shares: the parent of the
    workers' basetemps under xdist (pytest-N/popen-gwK), else the basetemp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


def shared_build(tmp_path_factory, name, make, timeout=1800, folder="project"):
    """This worker's copy of the build `name`, made once in the run; a worker
    waits up to `timeout` s for the lock (longer than a build may take).

    make(path) builds the project into path (created by it; its last part
    is `folder`, the copies' too) and returns a CompletedProcess-like result
    (.returncode, .stdout, .stderr).
    -> Built(project, output, seconds).
    Raises BuildFailed, with the output, where the build failed."""
    root = run_root(tmp_path_factory)
    shared, record = root / f"shared-{name}", root / f"shared-{name}.json"
    with FileLock(str(root / f"shared-{name}.lock"), timeout=timeout):
        if not record.exists():
            start = time.monotonic()
            try:
                done = make(shared / folder)
                outcome = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
            except subprocess.TimeoutExpired as exc:
                outcome = {"returncode": -1, "stdout": str(exc.stdout or ""), "stderr": f"timed out: {exc}"}
            outcome["seconds"] = round(time.monotonic() - start, 1)
            record.write_text(json.dumps(outcome), encoding="utf-8")
    outcome = json.loads(record.read_text(encoding="utf-8"))
    if outcome["returncode"] != 0:
        raise BuildFailed(
            f"the shared build {name!r} failed ({outcome['returncode']}) in {shared / folder}:\n"
            f"{outcome['stdout'][-2000:]}\n{outcome['stderr'][-4000:]}"
        )
    copy = tmp_path_factory.mktemp(name) / folder
    shutil.copytree(shared / folder, copy, symlinks=True)
    return Built(copy, outcome["stdout"] + outcome["stderr"], outcome["seconds"])


def copy_of_test_build(tmp_path_factory):
    """Built(project, output, seconds): a copy of its own of the project built the
    way tests.workspace.TEST_BUILD says (the PDF's date fixed), made once in
    the run; a test fails, with the build's output, where it failed."""

    def make(folder):
        work = copy_project(folder)
        env = {**copy_environment(work), **TEST_BUILD_ENVIRONMENT}
        return subprocess.run(list(TEST_BUILD), cwd=work, env=env, capture_output=True, text=True, timeout=900)

    try:
        return shared_build(tmp_path_factory, "test_build", make)
    except BuildFailed as exc:
        pytest.fail(f"building the article failed: {exc}", pytrace=False)
