"""One timed command in a copy of the project: the measurement every benchmark here makes."""

import resource
import subprocess
import sys
import time
from typing import NamedTuple

from tests.workspace import copy_environment


class Timed(NamedTuple):
    wall: float  # seconds by the wall clock
    cpu: float  # CPU seconds of the process and all its children
    peak_mb: float  # the largest child's peak RSS so far (ru_maxrss), in MB
    stderr: str


def timed(command, workdir):
    """Run `command` in `workdir` with the copy's environment; exit, with its
    stderr, when it fails: a benchmark of a broken build measures nothing."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=workdir, env=copy_environment(workdir), capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed in {workdir}:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu, after.ru_maxrss / 1024, proc.stderr)
