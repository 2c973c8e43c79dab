"""Starting a child process that a test will stop with a signal, as a
terminal would start it: with the stop signals' default disposition,
whatever pytest itself inherited.

An ignored signal stays ignored across fork and exec. A background job of a
non-interactive shell (`bash .ci/run &`, a CI runner's step) starts with
SIGINT and SIGQUIT ignored, and `nohup` adds SIGHUP; every process pytest
starts would inherit that, and a Python child then installs no
KeyboardInterrupt for SIGINT at all. subprocess's own restore_signals
resets only SIGPIPE and SIGXFSZ. So a test that stops its child by a
signal starts it through popen() here, and passes however it is started.
"""

import signal
import subprocess

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_stop_signals(ignored=()):
    """-> a preexec_fn: in the child, before exec, SIGINT, SIGTERM and
    SIGHUP back to their default disposition, and the signals in `ignored`
    ignored (to start a child as a background job or nohup would)."""

    def reset():
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)

    return reset


def popen(args, preexec_fn=None, ignored=(), **kwargs):
    """subprocess.Popen(args, **kwargs), the child starting with the stop
    signals' default disposition (then `ignored` ignored, then the caller's
    own preexec_fn run)."""
    reset = default_stop_signals(ignored)

    def before_exec():
        reset()
        if preexec_fn is not None:
            preexec_fn()

    return subprocess.Popen(args, preexec_fn=before_exec, **kwargs)


def ignored_signals(pid):
    """The signals process `pid` ignores, from /proc (Linux): a set of signal.Signals."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        mask = int(next(line for line in status if line.startswith("SigIgn:")).split()[1], 16)
    return {signum for signum in signal.Signals if mask >> (signum - 1) & 1}
