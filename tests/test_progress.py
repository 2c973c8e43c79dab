"""A long job says where it is, in its log and on the terminal; a short one
says nothing (articlekit/experiment/progress.py).

The seed sweep's chunks count their seeds; an experiment's run(), which
cannot be counted from outside, says that it still runs. Both run here as
the workflow runs them, a process with its log given by --log, whose
stderr is what Snakemake shows in the terminal.
"""

import json
import subprocess
import sys
import textwrap
import time

import pytest

from articlekit.experiment.progress import Progress, still_running

pytestmark = pytest.mark.workflow  # runs Snakemake, an experiment or a command (tests/tiers.py)

# An experiment whose run() takes a while: a tenth of a second a seed.
SLOW = textwrap.dedent('''
    import time

    from articlekit.experiment.artifacts import run_experiment


    def run(params):
        time.sleep(params["pause"])
        return {"seed": params["seed"]}


    if __name__ == "__main__":
        run_experiment("slow", run)
    ''')


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_counted_work_says_nothing_before_its_first_interval_then_one_line_an_interval(capsys):
    clock = Clock()
    progress = Progress("toy: seeds 1 to 100", 100, "seeds", every=30, clock=clock)
    said = []
    for done in range(1, 101):
        clock.now = done * 1.0  # a second a seed
        said.append(progress.step(done))
    assert [done for done, line in enumerate(said, 1) if line] == [30, 60, 90]
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "toy: seeds 1 to 100: 30 of 100 seeds (30 %), 30 s",
        "toy: seeds 1 to 100: 60 of 100 seeds (60 %), 60 s",
        "toy: seeds 1 to 100: 90 of 100 seeds (90 %), 90 s",
    ]


def test_a_short_job_says_nothing(capsys):
    clock = Clock()
    progress = Progress("toy", 10, "seeds", every=30, clock=clock)
    for done in range(1, 11):
        clock.now = done * 0.5
        assert not progress.step(done)
    with still_running("toy", every=30):
        time.sleep(0.05)
    assert capsys.readouterr().err == ""


def test_uncounted_work_says_it_still_runs(capsys):
    with still_running("toy", "for results/toy.json", every=0.1):
        time.sleep(0.35)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and all(line.startswith("toy: for results/toy.json still running, ") for line in lines)


def article(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/__init__.py").write_text("")
    (tmp_path / "experiments/slow.py").write_text(SLOW)
    return tmp_path


def run(tmp_path, every, *command):
    import os

    from tests.workspace import PROJECT_ROOT

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(PROJECT_ROOT)]),
        "ARTICLEKIT_PROGRESS_SECONDS": str(every),
    }
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_sweep_chunk_says_how_many_seeds_it_has_run_in_its_log_and_on_the_terminal(tmp_path):
    folder = article(tmp_path)
    params = json.dumps({"seed": 7, "pause": 0.1})
    done = run(
        folder,
        0.25,
        "articlekit.experiment.sweep",
        "--experiment",
        "slow",
        "--params",
        params,
        "--first",
        "0",
        "--count",
        "8",
        "--out",
        "chunk.json",
        "--log",
        "chunk.log",
    )
    assert done.returncode == 0, done.stderr
    terminal = [line for line in done.stderr.splitlines() if line.startswith("slow: seeds 8 to 15: ")]
    assert terminal and all(" of 8 seeds (" in line for line in terminal), done.stderr
    log = (folder / "chunk.log").read_text()
    assert all(line in log for line in terminal)

    quiet = run(
        folder,
        30,
        "articlekit.experiment.sweep",
        "--experiment",
        "slow",
        "--params",
        params,
        "--first",
        "0",
        "--count",
        "8",
        "--out",
        "chunk.json",
        "--log",
        "chunk.log",
    )
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr  # under the interval: nothing


def test_a_long_experiment_says_it_still_runs_in_its_log_and_on_the_terminal(tmp_path):
    folder = article(tmp_path)
    done = run(
        folder,
        0.2,
        "experiments.slow",
        "--params",
        json.dumps({"seed": 1, "pause": 0.7}),
        "--json",
        "results/slow.json",
        "--log",
        "logs/slow.log",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("slow: for results/slow.json still running, ") for line in lines), lines
    assert all(line in (folder / "logs/slow.log").read_text() for line in lines)
