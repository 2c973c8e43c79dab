"""The SLURM test's cluster is polled at a steady interval, and its
processes load pandas on first use (tests/slurm/fast_polling/sitecustomize.py):
both hold against the installed plugin and executor interface, so a change
there shows here, not as a SLURM test that is silently slower."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from snakemake_executor_plugin_slurm import Executor as SlurmExecutor
from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor

SITECUSTOMIZE = Path(__file__).resolve().parent / "slurm" / "fast_polling" / "sitecustomize.py"


@pytest.fixture
def fast_polling(monkeypatch):
    """The module, loaded outside a `snakemake` process (so it patched
    nothing on import), with RemoteExecutor's property restored after."""
    monkeypatch.setattr(
        RemoteExecutor,
        "next_seconds_between_status_checks",
        RemoteExecutor.__dict__["next_seconds_between_status_checks"],
    )
    spec = importlib.util.spec_from_file_location("fast_polling_sitecustomize", SITECUSTOMIZE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plugins_back_off_is_capped_at_the_profiles_first_interval(fast_polling):
    executor = object.__new__(SlurmExecutor)  # no workflow: only the interval is read and set
    executor.next_seconds_between_status_checks = 30
    assert executor.next_seconds_between_status_checks == 30  # not patched on import here
    fast_polling.cap_status_check_interval()
    executor.next_seconds_between_status_checks = 30  # what the plugin sets after a poll that found nothing
    assert executor.next_seconds_between_status_checks == fast_polling.CAP_SECONDS
    executor.next_seconds_between_status_checks = 1
    assert executor.next_seconds_between_status_checks == 1


def test_the_cap_is_the_test_profiles_first_interval(repo_root, fast_polling):
    import yaml

    profile = yaml.safe_load((repo_root / "tests/slurm/profile/config.yaml").read_text())
    assert profile["slurm-init-seconds-before-status-checks"] == fast_polling.CAP_SECONDS


@pytest.mark.workflow  # a Python process that imports the plugin, as each job's Snakemake does
def test_in_the_test_clusters_processes_the_plugin_loads_without_pandas_and_pandas_still_works():
    probe = (
        "import sys, snakemake_executor_plugin_slurm\n"
        "pandas = sys.modules.get('pandas')\n"
        "print(type(pandas).__name__ if pandas else 'absent')\n"
        "import pandas\n"
        "print(int(pandas.DataFrame({'a': [1, 2]})['a'].sum()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SITECUSTOMIZE.parent)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    imported, total = done.stdout.split()
    assert imported in ("_LazyModule", "absent"), done.stdout  # not run by the plugin's import
    assert total == "3"  # the real pandas, once used
