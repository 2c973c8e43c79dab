"""What else the machine did while a run was timed: the record an outlying
run is read against.

A run timed by its own thread's CPU time does not count the time other
programs held its core, but it still shares caches, memory bandwidth and
the clock with them. When one run of several lands far from the others,
the honest report is what the machine recorded around it, not a guessed
cause. On Linux, /proc keeps three such records, read before and after a
run (`snapshot`) and subtracted (`during`):

- the machine's CPU time over the run, by kind: busy, idle, waiting for
  I/O, and stolen (time the hypervisor gave to another virtual machine);
- the CPU time each other process used in that span, the largest named
  by their command (a process that ended during the run is not seen; one
  that started is counted from its start);
- the processor's clock as the kernel reports it, before and after (under
  a hypervisor often the host's nominal clock, which does not move).

Elsewhere each record is None and says so: nothing is invented.

    before = neighbours.snapshot()
    ...  # the timed work
    record = neighbours.during(before, neighbours.snapshot())
"""

import os
import time
from pathlib import Path

PROC = Path("/proc")
# The kinds of /proc/stat's "cpu" line, in its order (proc(5)).
CPU_KINDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
TOP = 3  # the other processes named in the record, by CPU time used


def snapshot():
    """The machine's counters now: {"at", "cpu": ticks by kind or None,
    "processes": {pid: (command, ticks)} or None, "mhz": clock or None}."""
    return {"at": time.monotonic(), "cpu": cpu_ticks(), "processes": process_ticks(), "mhz": clock_mhz()}


def during(before, after, own_pid=None):
    """What the machine did between two snapshots, this process left out:

    {"seconds": the span,
     "cpu_share": {kind: share of the machine's CPU time} (busy, idle, iowait, steal),
     "others_cpu_s": CPU seconds the other processes used, "others": the TOP
        largest [{"command", "cpu_s"}],
     "mhz_before", "mhz_after"}
    A record /proc does not keep here is None."""
    own_pid = os.getpid() if own_pid is None else own_pid
    seconds = after["at"] - before["at"]
    record = {"seconds": seconds, "cpu_share": None, "others_cpu_s": None, "others": None}
    if before["cpu"] and after["cpu"]:
        spent = {kind: after["cpu"][kind] - before["cpu"][kind] for kind in CPU_KINDS}
        total = sum(spent.values()) or 1
        idle = spent["idle"] + spent["iowait"] + spent["steal"]
        record["cpu_share"] = {
            "busy": (total - idle) / total,
            "idle": spent["idle"] / total,
            "iowait": spent["iowait"] / total,
            "steal": spent["steal"] / total,
        }
    if before["processes"] is not None and after["processes"] is not None:
        tick = os.sysconf("SC_CLK_TCK")
        used = []
        for pid, (command, ticks) in after["processes"].items():
            if pid == own_pid:
                continue
            earlier = before["processes"].get(pid)
            # a pid reused by another command is a new process: counted from its start
            spent = ticks - earlier[1] if earlier and earlier[0] == command else ticks
            if spent > 0:
                used.append((spent / tick, command))
        used.sort(reverse=True)
        record["others_cpu_s"] = sum(s for s, _ in used)
        record["others"] = [{"command": command, "cpu_s": s} for s, command in used[:TOP]]
    return record | {"mhz_before": before["mhz"], "mhz_after": after["mhz"]}


def cpu_ticks():
    """/proc/stat's machine-wide CPU time by kind, in ticks; None without it."""
    try:
        fields = (PROC / "stat").read_text(encoding="ascii").splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu":
        return None
    values = [int(x) for x in fields[1 : 1 + len(CPU_KINDS)]]
    return dict(zip(CPU_KINDS, values + [0] * (len(CPU_KINDS) - len(values))))


def process_ticks():
    """{pid: (command, user + system ticks)} of every process /proc shows;
    None without /proc."""
    if not (PROC / "self" / "stat").exists():
        return None
    out = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:  # it ended while we looked
            continue
        # "pid (command) state ..."; the command may hold spaces and parentheses
        command = text[text.index("(") + 1 : text.rindex(")")]
        rest = text[text.rindex(")") + 2 :].split()
        out[int(entry.name)] = (command, int(rest[11]) + int(rest[12]))  # utime, stime: fields 14, 15
    return out


def clock_mhz():
    """The mean clock of this process's CPUs as the kernel reports it now
    (cpufreq where there is one, else /proc/cpuinfo); None where neither says."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    readings = []
    for cpu in cpus:
        try:
            readings.append(int(Path(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq").read_text()) / 1e3)
        except (OSError, ValueError):
            break
    if len(readings) == len(cpus) and readings:
        return sum(readings) / len(readings)
    try:
        lines = (PROC / "cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    by_cpu, current = {}, None
    for line in lines:
        name, _, value = line.partition(":")
        if name.strip() == "processor":
            current = int(value)
        elif name.strip() == "cpu MHz" and current is not None:
            by_cpu[current] = float(value)
    chosen = [by_cpu[c] for c in cpus if c in by_cpu] or list(by_cpu.values())
    return sum(chosen) / len(chosen) if chosen else None
