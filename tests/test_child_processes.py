"""tests/child_processes.py: a child that a test starts through popen()
has the default disposition of SIGINT, SIGTERM and SIGHUP, whatever this
process ignores (as it does when pytest runs in a background job of a
script, or under nohup), so a test that stops it by a signal passes however
the suite was started."""

import signal
import subprocess

from tests.child_processes import STOP_SIGNALS, ignored_signals, popen


def test_a_child_starts_with_the_stop_signals_default_disposition_whatever_we_ignore():
    before = {signum: signal.signal(signum, signal.SIG_IGN) for signum in STOP_SIGNALS}
    children = []
    try:
        plain = subprocess.Popen(["sleep", "60"])
        ours = popen(["sleep", "60"])
        nohup = popen(["sleep", "60"], ignored=(signal.SIGHUP,))
        children = [plain, ours, nohup]
        assert ignored_signals(plain.pid) >= set(STOP_SIGNALS)  # what an ignored signal does to a child
        assert ignored_signals(ours.pid) & set(STOP_SIGNALS) == set()
        assert ignored_signals(nohup.pid) & set(STOP_SIGNALS) == {signal.SIGHUP}
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        for child in children:
            child.kill()
            child.wait()


def test_the_callers_preexec_fn_still_runs(tmp_path):
    mark = tmp_path / "ran"
    child = popen(["true"], preexec_fn=lambda: mark.write_text("yes"))
    assert child.wait() == 0 and mark.read_text() == "yes"
