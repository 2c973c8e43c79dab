"""The test cluster's status polls at a steady 1 s, in the Snakemake that submits the jobs.

tests/test_slurm.py puts this folder on PYTHONPATH. The SLURM plugin waits
10 s longer before each status query that finds no job finished (up to
180 s): right for a real cluster's scheduler, which should not be asked
every second, but on the one-node test cluster, whose jobs take a second or
two and whose squeue answers at once, that back-off alone made the build
through SLURM take four minutes where the same build takes one locally.
The profile cannot say it: the plugin's +10 s is not a setting. So the
interval the plugin sets is capped here at the profile's first interval
(slurm-init-seconds-before-status-checks), and nothing else changes:
which jobs are submitted, how, and how their status is read are the
plugin's own.

Only in a `snakemake` process (the jobs' own processes, which inherit the
PYTHONPATH, are left alone), and only while the plugin's base class keeps
the interval as the property this patches; if it ever does not, nothing is
patched and the test is only slower.

In every process started with this folder on its PYTHONPATH (the one that
submits, and each job's, which inherit it), pandas loads on first use
instead of on import: the plugin imports it at once for its efficiency
report, which no test asks for, and that import was half a second of each
of the two Snakemake starts in every SLURM job. Code that uses pandas gets
the same pandas; neither articlekit nor the experiments import it.
"""

import importlib.abc
import importlib.util
import os
import sys

CAP_SECONDS = 1  # tests/slurm/profile: slurm-init-seconds-before-status-checks


def cap_status_check_interval():
    try:
        from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor
    except ImportError:
        return
    interval = RemoteExecutor.__dict__.get("next_seconds_between_status_checks")
    if not isinstance(interval, property) or interval.fset is None:
        return
    RemoteExecutor.next_seconds_between_status_checks = property(
        interval.fget, lambda self, seconds: interval.fset(self, min(seconds, CAP_SECONDS))
    )


class PandasOnFirstUse(importlib.abc.MetaPathFinder):
    """Finds pandas as the next finder would, with a loader that runs its
    module's code when an attribute is first read (importlib's LazyLoader)."""

    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        sys.meta_path.remove(self)  # once: the real spec, from the finders after this one
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


if __name__ == "sitecustomize" and "pandas" not in sys.modules:  # not when a test loads this file
    sys.meta_path.insert(0, PandasOnFirstUse())

if os.path.basename(sys.argv[0] if sys.argv else "") == "snakemake":
    cap_status_check_interval()
