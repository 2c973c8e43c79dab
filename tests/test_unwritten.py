"""Why an experiment's job wrote no artifact though its script exited 0
(articlekit/experiment/unwritten.py): what the rule writes into the job's
log, with the line to add. The usual case, a script without its
run_experiment line, is met end to end in tests/test_author_mistakes.py."""

import subprocess
import sys
import textwrap

from tests.workspace import PROJECT_ROOT

EARLY_EXIT = textwrap.dedent('''
    import sys

    from articlekit.experiment.artifacts import run_experiment


    def run(params):
        sys.exit(0)


    def plot(values, params, figures):
        pass


    def combine(runs, params):
        return runs[0]


    if __name__ == "__main__":
        run_experiment("early", run, plot, combine=combine)
    ''')


def job(folder):
    """The experiment's job as the rule runs it: the script, then the check."""
    command = (
        "python -m experiments.early --params '{}' --json results/early.json --log logs/early.log "
        "&& { test -e results/early.json || python -m articlekit.experiment.unwritten experiments.early "
        "--json results/early.json --log logs/early.log; }"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{folder}:{PROJECT_ROOT}"}
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; {command.replace('python', sys.executable)}"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_script_that_exits_inside_run_is_told_to_return_its_values(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/__init__.py").write_text("")
    (tmp_path / "experiments/early.py").write_text(EARLY_EXIT)
    done = job(tmp_path)
    assert done.returncode == 1, done.stderr
    log = (tmp_path / "logs/early.log").read_text()
    assert log.rstrip().endswith(
        "early: experiments/early.py started run_experiment but exited (with status 0) before it wrote "
        "results/early.json: something in run() or plot() ended the process early (a sys.exit() or os._exit()); "
        "return the values from run() instead"
    )


def test_the_line_to_add_names_the_functions_the_script_defines():
    from articlekit.experiment.unwritten import the_call

    assert the_call("early", EARLY_EXIT) == 'run_experiment("early", run, plot, combine=combine)'
    assert the_call("bare", "def run(params):\n    return {}\n") == 'run_experiment("bare", run)'
