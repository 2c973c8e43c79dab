"""A Snakemake run's process ends with its last job (articlekit/workflow/prompt_exit.py):
Snakemake's scheduler leaves a timer of --max-jobs-per-timespan's span
waiting at the end of every run that ran a job, and the interpreter would
wait for it. The tests make that span far longer than their timeout, so a
process that waits for the timer fails them instead of ending late."""

import subprocess
import sys
import textwrap

import pytest

from tests.workspace import TEST_BUILD, copy_environment, copy_project

# A timer this long outlives every timeout below: only a cancelled one lets
# the process end in time.
LONG = 600


def test_the_schedulers_own_timer_is_cancelled_at_exit_and_anyone_elses_still_fires(tmp_path):
    fired = tmp_path / "fired"
    script = textwrap.dedent(
        f"""
        import threading
        from articlekit.workflow import prompt_exit

        prompt_exit.at_shutdown()
        prompt_exit.at_shutdown()  # the Snakefile read twice: registered once

        def wake():  # a callback of the scheduler's own module (no import of it here)
            raise SystemExit("the scheduler's timer fired")
        wake.__module__ = prompt_exit.SCHEDULER_MODULE_PREFIX + "scheduling.job_scheduler"
        threading.Timer({LONG}, wake).start()
        threading.Timer(0.2, lambda: open({str(fired)!r}, "w").close()).start()
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "fired" not in proc.stderr
    assert fired.exists(), "a timer that is not Snakemake's was cancelled too"


@pytest.mark.workflow
def test_a_build_of_the_project_ends_with_its_last_job(tmp_path):
    """Through the project's own Snakefile and Snakemake's real scheduler: one
    job (the code listings) under a rate limit whose timer would hold the
    process for ten minutes."""
    work = copy_project(tmp_path / "project")
    proc = subprocess.run(
        # the target first: --configfile and --config take every word after them
        ["snakemake", "results/listings.json", *TEST_BUILD[1:], "--max-jobs-per-timespan", f"100/{LONG}s"],
        cwd=work,
        env=copy_environment(work),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (work / "results/listings.json").exists()
