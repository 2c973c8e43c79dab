"""The machine and libraries that produced this build's numbers.

Everything the colophon and the audit need to say *where* a number came from:
library versions, the BLAS NumPy calls into, the CPU, and whether the build
ran on a SLURM node or locally. The only experiment whose values are
expected to differ between two builds (date, host).

The owner of the machine's description (`machine()`): the timing
experiment records it too, in each of its runs, since on a cluster its
runs may land on other nodes than this job.
"""

import json
import logging
import os
import platform
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

from articlekit.experiment.artifacts import run_experiment

# It takes no parameters: config.yaml gives it none (articlekit.experiment.declared).
PARAMETERS = {}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS = {
    "environment.python": "Python version, e.g. `3.11.7`",
    "environment.numpy": "NumPy version",
    "environment.torch": "PyTorch version, with its build tag (`2.13.0+cpu`)",
    "environment.torch_cpu_capability": "CPU instruction set PyTorch dispatches to (`AVX512`, `AVX2`, `DEFAULT`)",
    "environment.torch_num_threads": "PyTorch intra-op threads in this job (Snakemake sets them to the job's threads)",
    "environment.torch_num_interop_threads": "PyTorch inter-op threads",
    "environment.blas": "the BLAS NumPy was built against (name, version, build configuration) and the kernel it runs here (threadpoolctl's architecture, e.g. Haswell or SkylakeX; left out where threadpoolctl is not installed)",
    "environment.cpu_model": "CPU model name from /proc/cpuinfo (else `platform`)",
    "environment.cpu_id": "vendor, family, model and stepping from /proc/cpuinfo (`GenuineIntel family 6 model 167 stepping 1`): the CPU exactly, where a virtual machine's model name is generic; null where /proc/cpuinfo does not say",
    "environment.cpu_mhz": "the CPU's clock, MHz: the rated maximum from cpufreq or lscpu where known, else /proc/cpuinfo's `cpu MHz` (under a hypervisor, the host's nominal clock); null where none says",
    "environment.cpu_mhz_source": "where that was read: `cpufreq maximum`, `lscpu maximum` or `/proc/cpuinfo`; null with it",
    "environment.hypervisor": "the hypervisor's vendor as lscpu names it (`KVM`), `unnamed` where only the CPU's hypervisor flag says so, null on bare metal",
    "environment.os": "operating system, `platform.platform()`",
    "environment.cores": "logical CPUs, `os.cpu_count()`",
    "environment.build_date": "date of this build, UTC, `YYYY-MM-DD`",
    "environment.build_time_utc": "time of this build, ISO 8601 with offset, to the second",
    "environment.executor": "`slurm` when run inside a SLURM job (SLURM_JOB_ID set), else `local`",
    "environment.slurm_job_id": "the SLURM job id, or null when local",
    "environment.hostname": "the machine's host name",
}

log = logging.getLogger("experiment")


def blas_description():
    """A short name for NumPy's BLAS and the kernel it runs, e.g.
    'scipy-openblas 0.3.31 (OpenBLAS ... DYNAMIC_ARCH ... Haswell ...), running
    its SkylakeX kernel'.

    The name and configuration are NumPy's own build record: what it was
    built against. A DYNAMIC_ARCH OpenBLAS picks its kernel for the CPU when
    it loads, whatever the record says (it names the build machine's), and
    another kernel sums in another order: threadpoolctl reports the one that
    runs, so that a kernel change is a machine change in the diff.
    """
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (KeyError, TypeError, ValueError):
        return "unknown"
    text = f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    config = blas.get("openblas configuration")
    text = f"{text} ({' '.join(config.split())})" if config else text
    kernel = blas_kernel()
    return f"{text}, running its {kernel} kernel" if kernel else text


def blas_kernel():
    """The kernel NumPy's BLAS runs on this CPU (OpenBLAS's architecture,
    e.g. Haswell or SkylakeX), or None where its BLAS does not say.

    NumPy's BLAS is the pool loaded from NumPy's own folders (a wheel's
    numpy.libs), else the only BLAS loaded: PyTorch may bring another.
    None too without threadpoolctl: the project's environment has it, a
    version-matrix environment holds only its pins and their dependencies.
    """
    info = threadpool_info()
    if info is None:
        return None
    pools = [pool for pool in info if pool.get("user_api") == "blas"]
    site = Path(np.__file__).resolve().parent.parent
    own = [
        pool
        for pool in pools
        if Path(pool["filepath"]).resolve().parent.name in ("numpy", "numpy.libs")
        and Path(pool["filepath"]).resolve().parent.parent == site
    ]
    chosen = own or (pools if len(pools) == 1 else [])
    return chosen[0].get("architecture") if chosen else None


def threadpool_info():
    """threadpoolctl's report of the loaded thread pools, or None where it is not installed."""
    try:
        from threadpoolctl import threadpool_info as report
    except ImportError:
        return None
    return report()


def cpu_model():
    """The CPU's marketing name from /proc/cpuinfo, else what platform knows."""
    return cpuinfo().get("model name") or platform.processor() or platform.machine()


def cpuinfo():
    """The first processor's fields of /proc/cpuinfo ({} where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block ends here
                name, _, value = line.partition(":")
                fields[name.strip()] = value.strip()
    except OSError:
        pass
    return fields


def lscpu():
    """lscpu's fields ({"Model name": ..., "Hypervisor vendor": ...}), or {}
    where it is not installed. It asks the CPU itself (cpuid), so it knows
    what /proc/cpuinfo leaves out: the hypervisor's vendor, the rated clock."""
    try:
        out = subprocess.run(["lscpu", "-J"], capture_output=True, text=True, timeout=10, check=True).stdout
        return {row["field"].rstrip(":"): row["data"] for row in json.loads(out)["lscpu"]}
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return {}


def cpu_id(fields):
    """Vendor, family, model and stepping, which name the CPU exactly where a
    virtual machine's model name is generic ('Intel(R) Xeon(R) Processor')."""
    parts = [fields.get("vendor_id")] + [
        f"{name} {fields[key]}"
        for name, key in (("family", "cpu family"), ("model", "model"), ("stepping", "stepping"))
        if fields.get(key)
    ]
    return " ".join(filter(None, parts)) or None


def cpu_mhz(fields, listed):
    """(MHz, where it was read): the rated maximum where the kernel or lscpu
    knows it, else the clock /proc/cpuinfo reports (under a hypervisor, the
    host's nominal clock); (None, None) where neither does."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", encoding="utf-8") as f:
            return int(f.read()) / 1000, "cpufreq maximum"
    except (OSError, ValueError):
        pass
    for value, source in ((listed.get("CPU max MHz"), "lscpu maximum"), (fields.get("cpu MHz"), "/proc/cpuinfo")):
        try:
            return float(value), source
        except (TypeError, ValueError):
            continue
    return None, None


def machine():
    """The CPU as exactly as this machine says it: model name, vendor,
    family, model and stepping, clock (and where it was read), the
    hypervisor (None on bare metal), logical CPUs, host."""
    fields, listed = cpuinfo(), lscpu()
    mhz, source = cpu_mhz(fields, listed)
    return {
        "cpu_model": cpu_model(),
        "cpu_id": cpu_id(fields),
        "cpu_mhz": mhz,
        "cpu_mhz_source": source,
        "hypervisor": listed.get("Hypervisor vendor")
        or ("unnamed" if "hypervisor" in fields.get("flags", "").split() else None),
        "cores": os.cpu_count(),
        "hostname": socket.gethostname(),
    }


def run(params):
    """No parameters; returns a flat dict of strings and numbers."""
    now = datetime.now(timezone.utc)
    slurm_job = os.environ.get("SLURM_JOB_ID")
    here = machine()
    values = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_num_threads": torch.get_num_threads(),
        "torch_num_interop_threads": torch.get_num_interop_threads(),
        "blas": blas_description(),
        "cpu_model": here["cpu_model"],
        "cpu_id": here["cpu_id"],
        "cpu_mhz": here["cpu_mhz"],
        "cpu_mhz_source": here["cpu_mhz_source"],
        "hypervisor": here["hypervisor"],
        "os": platform.platform(),
        "cores": here["cores"],
        "build_date": now.strftime("%Y-%m-%d"),
        "build_time_utc": now.isoformat(timespec="seconds"),
        "executor": "slurm" if slurm_job else "local",
        "slurm_job_id": slurm_job,
        "hostname": here["hostname"],
    }
    log.info("environment: %s", values)
    return values


if __name__ == "__main__":
    run_experiment("environment", run)
