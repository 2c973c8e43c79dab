"""What else the machine did during a run: the record an outlying run is read against.

The record must be what /proc says, this process left out, and nothing
where /proc says nothing (articlekit/experiment/neighbours.py).
"""

import os
import sys

import pytest

from articlekit.experiment import neighbours

OWN = 100


def counters(at, cpu, processes, mhz=2600.0):
    return {"at": at, "cpu": dict(zip(neighbours.CPU_KINDS, cpu)), "processes": processes, "mhz": mhz}


def test_the_record_is_the_difference_of_the_counters_with_this_process_left_out():
    tick = os.sysconf("SC_CLK_TCK")
    before = counters(10.0, [100, 0, 20, 300, 0, 0, 0, 0], {OWN: ("python3", 50), 7: ("quarto", 10), 8: ("bash", 5)})
    after = counters(
        12.0,
        [250, 0, 50, 360, 10, 0, 0, 30],
        # this process ran (ignored), quarto ran, bash did not, a compiler started
        {OWN: ("python3", 250), 7: ("quarto", 10 + 2 * tick), 8: ("bash", 5), 9: ("cc1", tick // 2)},
        mhz=2400.0,
    )
    record = neighbours.during(before, after, own_pid=OWN)
    assert record["seconds"] == 2.0
    assert record["cpu_share"] == pytest.approx(
        {"busy": 180 / 280, "idle": 60 / 280, "iowait": 10 / 280, "steal": 30 / 280}
    )
    assert record["others_cpu_s"] == pytest.approx(2.0 + (tick // 2) / tick)
    assert record["others"] == [{"command": "quarto", "cpu_s": 2.0}, {"command": "cc1", "cpu_s": (tick // 2) / tick}]
    assert (record["mhz_before"], record["mhz_after"]) == (2600.0, 2400.0)


def test_a_pid_reused_by_another_command_is_a_new_process():
    before = counters(0.0, [0] * 8, {7: ("old", 900)})
    after = counters(1.0, [0] * 8, {7: ("new", 100)})
    tick = os.sysconf("SC_CLK_TCK")
    assert neighbours.during(before, after, own_pid=OWN)["others"] == [{"command": "new", "cpu_s": 100 / tick}]


def test_only_the_largest_few_are_named():
    before = counters(0.0, [0] * 8, {})
    after = counters(1.0, [0] * 8, {pid: (f"p{pid}", pid) for pid in range(1, 10)})
    record = neighbours.during(before, after, own_pid=OWN)
    assert [p["command"] for p in record["others"]] == ["p9", "p8", "p7"]
    assert len(record["others"]) == neighbours.TOP


def test_what_proc_does_not_keep_is_none_not_zero():
    before = {"at": 0.0, "cpu": None, "processes": None, "mhz": None}
    record = neighbours.during(before, dict(before, at=1.0), own_pid=OWN)
    assert record == {
        "seconds": 1.0,
        "cpu_share": None,
        "others_cpu_s": None,
        "others": None,
        "mhz_before": None,
        "mhz_after": None,
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_on_linux_a_real_snapshot_sees_this_machine():
    snap = neighbours.snapshot()
    assert set(snap["cpu"]) == set(neighbours.CPU_KINDS) and snap["cpu"]["idle"] > 0
    assert os.getpid() in snap["processes"] and snap["processes"][os.getpid()][1] >= 0
    record = neighbours.during(snap, neighbours.snapshot())
    assert all(0 <= share <= 1 for share in record["cpu_share"].values())
    assert all(p["cpu_s"] > 0 for p in record["others"])
