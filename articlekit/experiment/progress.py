"""Where a long job is, in its log and in the terminal; nothing from a short one.

A job of the workflow writes its log to a file (logs/...), which nobody
sees until it ends; its stderr is Snakemake's terminal. A job that runs for
minutes (a chunk of the seed sweep, a timing run, an experiment at a large
size) says where it is on both, one line at a time, no more often than
every `every` seconds and never before the first `every` seconds have
passed: a job over in less says nothing.

    progress = Progress("robustness chunk of scaling", total=50, unit="seeds")
    for done, seed in enumerate(seeds, 1):
        ...
        progress.step(done)             # "...: 20 of 50 seeds (40 %), 31 s"

    with still_running("timing", "run 3"):   # "timing: run 3 still running, 30 s"
        values = run(params)

ARTICLEKIT_PROGRESS_SECONDS sets `every` (default 30; 0 says every step, for
a test that wants to see the lines).
"""

import contextlib
import logging
import os
import sys
import threading
import time

from articlekit.core.log import log

experiment_log = logging.getLogger("experiment")  # the job's log (artifacts.configure_logging)

DEFAULT_SECONDS = 30.0


def every_seconds():
    """The seconds between two progress lines (ARTICLEKIT_PROGRESS_SECONDS, else 30)."""
    try:
        return max(0.0, float(os.environ.get("ARTICLEKIT_PROGRESS_SECONDS", DEFAULT_SECONDS)))
    except ValueError:
        return DEFAULT_SECONDS


def say(line):
    """One progress line: into the job's log and onto the terminal (its stderr),
    unless the log already is the terminal."""
    experiment_log.info("%s", line)
    if not any(
        isinstance(h, logging.StreamHandler)
        and not isinstance(h, logging.FileHandler)
        and getattr(h, "stream", None) in (sys.stderr, sys.stdout)
        for h in logging.getLogger().handlers
    ):
        log.info(line)


class Progress:
    """Counted work: step(done) says how far, when `every` seconds have
    passed since the start and since the last line."""

    def __init__(self, what, total, unit, every=None, clock=time.monotonic):
        self.what, self.total, self.unit, self.clock = what, total, unit, clock
        self.every = every_seconds() if every is None else every
        self.started = self.last = clock()

    def step(self, done):
        now = self.clock()
        if now - self.last < self.every or (self.every and now - self.started < self.every):
            return False
        self.last = now
        share = f" ({100 * done / self.total:.0f} %)" if self.total else ""
        say(f"{self.what}: {done} of {self.total} {self.unit}{share}, {now - self.started:.0f} s")
        return True


@contextlib.contextmanager
def still_running(what, detail="", every=None):
    """While the block runs, a line every `every` seconds that it still
    does (for work that cannot count its steps: an experiment's run())."""
    every = every_seconds() if every is None else every
    done = threading.Event()
    started = time.monotonic()

    def beat():
        while not done.wait(max(every, 0.05)):
            say(f"{what}: {detail + ' ' if detail else ''}still running, {time.monotonic() - started:.0f} s")

    beating = threading.Thread(target=beat, name=f"progress of {what}", daemon=True)
    beating.start()
    try:
        yield
    finally:
        done.set()
        beating.join()
