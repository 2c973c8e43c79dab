"""The machine and libraries that produced this build's numbers.

Everything the colophon and the audit need to say *where* a number came from:
library versions, the BLAS NumPy calls into, the CPU, and whether the build
ran on a SLURM node or locally. The only experiment whose values are
expected to differ between two builds (date, host).
"""

import logging
import os
import platform
import socket
from datetime import datetime, timezone

import numpy as np
import torch

from articlekit.experiment.artifacts import run_experiment

log = logging.getLogger("experiment")


def blas_description():
    """A short name for NumPy's BLAS, e.g. 'scipy-openblas 0.3.31 (...)'.

    NumPy's own build record rather than threadpoolctl, so that it needs no
    extra dependency; it describes the library NumPy was built against.
    """
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (KeyError, TypeError, ValueError):
        return "unknown"
    text = f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    config = blas.get("openblas configuration")
    return f"{text} ({' '.join(config.split())})" if config else text


def cpu_model():
    """The CPU's marketing name from /proc/cpuinfo, else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run(params):
    """No parameters; returns a flat dict of strings and numbers."""
    now = datetime.now(timezone.utc)
    slurm_job = os.environ.get("SLURM_JOB_ID")
    values = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_num_threads": torch.get_num_threads(),
        "torch_num_interop_threads": torch.get_num_interop_threads(),
        "blas": blas_description(),
        "cpu_model": cpu_model(),
        "os": platform.platform(),
        "cores": os.cpu_count(),
        "build_date": now.strftime("%Y-%m-%d"),
        "build_time_utc": now.isoformat(timespec="seconds"),
        "executor": "slurm" if slurm_job else "local",
        "slurm_job_id": slurm_job,
        "hostname": socket.gethostname(),
    }
    log.info("environment: %s", values)
    return values


if __name__ == "__main__":
    run_experiment("environment", run)
