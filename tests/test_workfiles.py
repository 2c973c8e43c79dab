"""Work files named after their writer: a killed writer's are removed by the
next run, a live writer's are kept, whatever happened to its pid since."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from articlekit.core.workfiles import owner_alive, owner_tag, remove_stale


def state(pid):
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_this_process_is_alive_under_its_own_tag():
    assert owner_alive(owner_tag())


def test_a_pid_that_came_back_for_another_process_is_not_the_owner():
    """Same pid, different start: the writer is gone (pids wrap round)."""
    pid, _, started = owner_tag().partition("_")
    if not started:
        pytest.skip("no /proc here: the start of a process cannot be read")
    assert not owner_alive(f"{pid}_{int(started) + 1}")


def test_a_process_that_no_longer_exists_is_not_alive():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    tag = owner_tag(child.pid)
    child.wait()
    assert not owner_alive(tag)


def test_a_killed_writer_not_yet_reaped_is_not_alive():
    """A zombie answers kill(pid, 0) but writes nothing more."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    tag = owner_tag(child.pid)
    if "_" not in tag:
        pytest.skip("no /proc here: a zombie cannot be told from a live process")
    assert owner_alive(tag)
    child.kill()
    deadline = time.monotonic() + 10
    while state(child.pid) != "Z" and time.monotonic() < deadline:  # not reaped: poll() would
        time.sleep(0.01)
    try:
        assert state(child.pid) == "Z" and not owner_alive(tag)
    finally:
        child.wait()


def test_stale_files_and_folders_go_and_live_or_foreign_ones_stay(tmp_path):
    live_file = tmp_path / f".values.json.{owner_tag()}.abc.tmp"
    dead_file = tmp_path / ".values.json.999999999_5.def.tmp"
    live_folder = tmp_path / f".render-{owner_tag()}-x"
    dead_folder = tmp_path / ".render-999999999-y"
    foreign = tmp_path / ".render-notes"  # not an owner tag: not ours to remove
    for path in (live_file, dead_file):
        path.write_text("half")
    for path in (live_folder, dead_folder, foreign):
        path.mkdir()
    (dead_folder / "article.html").write_text("<html>half")
    assert sorted(remove_stale(tmp_path, ".values.json.", ".")) == [dead_file]
    assert remove_stale(tmp_path, ".render-", "-") == [dead_folder]
    assert all(p.exists() for p in (live_file, live_folder, foreign))
    assert not dead_file.exists() and not dead_folder.exists()
