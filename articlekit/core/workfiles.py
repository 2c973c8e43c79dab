"""Work files and folders named after the process that made them.

A job killed with kill -9 cannot clean up: its temporary file or work
folder stays beside the output. The next job removes it, but only if its
writer is really gone: two builds may share a folder (a live preview beside
a build), and a live writer's work must be left alone.

A name therefore carries an *owner tag*, the writer's pid and, on Linux,
the moment it started in clock ticks since boot ("23373_8812345"). The pid
alone is not enough: pids are reused (pid_max is 32768 on many machines,
and a test suite goes round it within minutes), and a process killed but
not yet reaped (a zombie) still answers to its pid. The pair is exact: no
later process has the same pid and the same start.
"""

import os
import re
import shutil
from pathlib import Path

_TAG = re.compile(r"\d+(?:_\d+)?")


def owner_tag(pid=None):
    """'PID_START' for process `pid` (default: this one), or 'PID' where the
    start cannot be read (no /proc)."""
    pid = os.getpid() if pid is None else pid
    started = _start_ticks(pid)
    return f"{pid}" if started is None else f"{pid}_{started}"


def owner_alive(tag):
    """Whether the process that `tag` names still runs (a zombie does not)."""
    pid, _, started = tag.partition("_")
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    stat = _stat_fields(int(pid))
    if stat is None:  # no /proc: the pid is all there is to go on
        return True
    state, now_started = stat[0], stat[19]
    if state in ("Z", "X"):  # killed, not yet reaped: it writes nothing more
        return False
    return not started or started == now_started


def remove_stale(folder, prefix, separator):
    """Remove the files and folders in `folder` named PREFIX TAG SEPARATOR ...
    whose owner is gone; -> the paths removed. A name whose TAG is not an
    owner tag is someone else's file, and stays."""
    removed = []
    for path in Path(folder).glob(f"{_glob_escape(prefix)}*"):
        tag = path.name[len(prefix) :].split(separator, 1)[0]
        if not _TAG.fullmatch(tag) or owner_alive(tag):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _start_ticks(pid):
    stat = _stat_fields(pid)
    return None if stat is None else stat[19]


def _stat_fields(pid):
    """/proc/PID/stat's fields from the state on (field 3), as strings; None
    without /proc. The command name (field 2) may hold spaces and ')', so
    the fields are read after its last ')'."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _glob_escape(name):
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
