"""A Snakemake run's process exits when its last job is done, not a second later.

Snakemake's scheduler limits how fast it starts jobs (--max-jobs-per-timespan,
100 per second by default). Each time it goes round its loop with a job still
running, it starts a `threading.Timer` of that timespan (one second) to wake
itself again, and the last of those timers is still waiting when the run is
over. The timer is not a daemon thread, so the interpreter waits for it before
it exits: every build that ran a job ended up to a second after its work was
done (a one-rule Snakefile: 4.4 s, 3.5 s with the timers cancelled).

The timespan cannot just be set shorter: Snakemake 9 reads `10/100ms` as 100
minutes (its pattern matches the `m` of `ms` first). So, once the interpreter
is shutting down, the scheduler's own timers are cancelled: by then no job is
left to schedule, and the timer's only work, waking the scheduler's loop, has
no loop to wake. Timers of anyone else (an experiment's, the author's
Snakefile's) are left to run.
"""

import threading

SCHEDULER_MODULE_PREFIX = "snakemake."

_registered = False


def cancel_scheduler_timers():
    """Cancel every pending timer whose callback is Snakemake's own -> how many."""
    cancelled = 0
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer) and is_snakemakes(thread):
            thread.cancel()
            cancelled += 1
    return cancelled


def is_snakemakes(timer):
    module = getattr(timer.function, "__module__", None) or ""
    return module.startswith(SCHEDULER_MODULE_PREFIX)


def at_shutdown():
    """Cancel Snakemake's timers when the interpreter shuts down. Registered
    with threading's own exit hooks, which run before the interpreter joins
    the threads that are not daemons (an `atexit` hook runs after: too
    late). Once per process, however often the Snakefile is read."""
    global _registered
    if not _registered:
        threading._register_atexit(cancel_scheduler_timers)
        _registered = True
