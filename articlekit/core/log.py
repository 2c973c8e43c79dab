"""articlekit's one logger: every diagnostic a command or a step says.

    from articlekit.core.log import log

    log.info(f"parse: {article} -> {out}")        # what a step did
    log.warning("bind: warning: " + message)      # what the author should look at
    log.error(f"{name}: {exc}")                   # why a command failed (exit 1)

Every module says its progress, warnings and failures through this logger,
never with print(..., file=sys.stderr) of its own (tests/test_log.py reads
the package for one), so that there is one place that decides how they are
shown, and each message is shown once:

- one logger, "articlekit", with one handler, added once however often
  this module is imported or `setup()` is called; it does not propagate,
  so a root logger that someone else configures in the same process
  (Snakemake, in whose process the workflow's modules run; an experiment's
  `configure_logging`; pytest) does not print the message a second time;
- the text is the message and nothing else (`%(message)s`): no level, no
  time, no logger name; the messages read as they always have, and the
  tests compare them;
- the stream is sys.stderr as it is when a message is said, not when the
  handler was made: pytest's capsys and capfd, contextlib.redirect_stderr
  (a step quarto_bind runs in its own process) and a program that swaps
  sys.stderr all get the message;
- level INFO: progress lines are shown, whatever the root logger's level.
"""

import logging
import sys

NAME = "articlekit"
HANDLER_NAME = "articlekit-stderr"  # found by name: a reloaded module's class is another class

log = logging.getLogger(NAME)


class CurrentStderr(logging.StreamHandler):
    """A StreamHandler whose stream is sys.stderr at the moment it writes."""

    def __init__(self, name=HANDLER_NAME):
        super().__init__()
        self.set_name(name)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass  # always the current sys.stderr: StreamHandler's __init__ and setStream set it

    def emit(self, record):
        if sys.stderr is not None:  # none at all (pythonw, a closed interpreter): nowhere to say it
            super().emit(record)


def setup():
    """Configure the logger (done on import; again is a no-op) -> the logger."""
    if not any(handler.get_name() == HANDLER_NAME for handler in log.handlers):
        handler = CurrentStderr()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    log.disabled = False  # as an earlier logging.config.dictConfig may have left it
    return log


setup()
