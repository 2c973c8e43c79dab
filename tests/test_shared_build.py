"""tests/shared_build.py: a build made once in a run, however many workers
ask at once; each asker gets a copy of its own, mtimes kept; a failed build
fails every asker with its output, and is not made again."""

import os
import threading
import time
import types
from pathlib import Path

import pytest

from tests.shared_build import BuildFailed, run_root, shared_build


class Factory:
    """The two methods of pytest's tmp_path_factory that shared_build uses,
    for one xdist worker of a run held in `run`."""

    def __init__(self, run, worker):
        self.base = run / f"popen-{worker}"
        self.base.mkdir(parents=True, exist_ok=True)
        self.made = 0

    def getbasetemp(self):
        return self.base

    def mktemp(self, name):
        self.made += 1
        folder = self.base / f"{name}{self.made}"
        folder.mkdir()
        return folder


def counting_build(calls, returncode=0, takes=0.0):
    """A build that records its folder in `calls` and takes `takes` seconds."""

    def make(folder):
        calls.append(folder)
        time.sleep(takes)
        folder.mkdir(parents=True)
        (folder / "built.txt").write_text("made once")
        os.utime(folder / "built.txt", (1_000_000_000, 1_000_000_000))
        return types.SimpleNamespace(returncode=returncode, stdout="out\n", stderr="err\n")

    return make


def ask_at_once(workers, make):
    results = {}

    def ask(factory):
        try:
            results[factory] = shared_build(factory, "demo", make)
        except BuildFailed as exc:
            results[factory] = exc

    threads = [threading.Thread(target=ask, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results[w] for w in workers]


def test_two_workers_asking_at_once_get_one_build_each_in_a_copy_of_its_own(tmp_path):
    calls = []
    workers = [Factory(tmp_path, "gw0"), Factory(tmp_path, "gw1")]
    first, second = ask_at_once(workers, counting_build(calls, takes=0.3))  # the other arrives while it builds
    assert len(calls) == 1
    assert first.project != second.project
    for built, worker in zip((first, second), workers):
        assert built.project.is_relative_to(worker.base)
        assert (built.project / "built.txt").read_text() == "made once"
        assert (built.project / "built.txt").stat().st_mtime == 1_000_000_000  # Snakemake finds it up to date
        assert built.output == "out\nerr\n" and built.seconds >= 0.3
    # a copy changed changes no other
    (first.project / "built.txt").write_text("changed")
    assert (second.project / "built.txt").read_text() == "made once"
    # a later asker finds it built
    assert (shared_build(workers[0], "demo", counting_build(calls)).project / "built.txt").exists()
    assert len(calls) == 1


def test_a_failed_build_fails_every_asker_with_its_output_and_is_not_made_again(tmp_path):
    calls = []
    workers = [Factory(tmp_path, "gw0"), Factory(tmp_path, "gw1")]
    failures = ask_at_once(workers, counting_build(calls, returncode=1, takes=0.3))
    assert len(calls) == 1
    for failure in failures:
        assert isinstance(failure, BuildFailed)
        assert "'demo' failed (1)" in str(failure) and "out\n" in str(failure) and "err\n" in str(failure)


def test_without_xdist_the_run_is_the_basetemp_and_under_it_the_workers_parent(tmp_path):
    alone = types.SimpleNamespace(getbasetemp=lambda: tmp_path)
    assert run_root(alone) == tmp_path
    assert run_root(Factory(tmp_path, "gw3")) == tmp_path


@pytest.mark.parametrize("build", ["test_build", "quarto"])
def test_each_build_has_its_own_name_in_the_run(tmp_path, build):
    calls = []
    shared_build(Factory(tmp_path, "gw0"), build, counting_build(calls))
    assert (Path(tmp_path) / f"shared-{build}" / "project" / "built.txt").exists()


def test_a_build_whose_folder_has_a_name_is_made_and_copied_under_that_name(tmp_path):
    """examples/summation's build keeps its folder's name, in the run's
    folder and in each asker's copy."""
    calls = []
    built = shared_build(Factory(tmp_path, "gw0"), "example", counting_build(calls), folder="summation")
    assert calls == [Path(tmp_path) / "shared-example" / "summation"]
    assert built.project.name == "summation" and (built.project / "built.txt").read_text() == "made once"
