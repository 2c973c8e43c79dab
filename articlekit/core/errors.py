"""What the user got wrong, told apart from what articlekit got wrong.

Every mistake in what an author or a reviewer gives articlekit (a config
key, a shortcode, an artifact edited by hand, a missing file) is raised as
an `ArticlekitError`: where it is (`file:line` when there is a line), what
is wrong, and the fix. The command line (`run_command`, used by
`python -m articlekit` and by the modules the workflow runs as scripts)
catches it once and prints one line, `COMMAND: file:line: message; fix`,
exit status 1. Anything else is a bug, of articlekit or of the author's
code, and keeps its traceback: a `ZeroDivisionError` or a `ValueError`
that no check of articlekit raised is never dressed as a user error.

ArticlekitError subclasses ValueError so that code written before it (an
`except ValueError` around a parse) still catches what it caught; each
stage's own class (ConfigError, BindError, ...) subclasses it.
"""

import errno
import signal
import threading

from articlekit.core.log import log


class ArticlekitError(ValueError):
    """A mistake in articlekit's input. message: what is wrong; where: the
    file, or file:line, when the message does not already start with it;
    fix: what to do about it, when the message does not already say."""

    def __init__(self, message, *, where=None, fix=None):
        super().__init__(message)
        self.message, self.where, self.fix = str(message), where, fix

    def __str__(self):
        text = f"{self.where}: {self.message}" if self.where else self.message
        return f"{text}; {self.fix}" if self.fix else text


def _os_problem(exc):
    """A one-line message for an OSError that is the machine's state or the
    user's path (a file missing, unreadable, the disk full), or None for
    one that is not (no file named, and not ENOSPC): that one is a bug."""
    if exc.errno == errno.ENOSPC:  # jsonio.DiskFull's strerror says the file and the space
        return (
            exc.strerror
            if (exc.strerror or "").startswith("no space left on the device")
            else f"no space left on the device to write {exc.filename or 'an output'}; free some space and run again"
        )
    if exc.filename is not None and exc.errno in (
        errno.ENOENT,
        errno.EACCES,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.EROFS,
        errno.EPERM,
    ):
        return f"{exc.filename}: {exc.strerror}"
    return None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command stands (Snakemake ends its jobs so)."""


def _raise_terminated(signum, frame):
    raise Terminated(f"stopped by signal {signum}")


def stop_cleanly_on_sigterm():
    """Make SIGTERM unwind the command as Ctrl-C does: its `with` blocks
    close, so a format's work folder and a temporary file are removed
    (Python's default for SIGTERM ends the process where it stands and
    leaves them). Only from the main thread, where signals are delivered."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


def run_command(name, main, argv=None):
    """Run a command's main(argv) and return its exit status: an
    ArticlekitError (or an OSError naming the file it could not read or
    write) printed as one line `name: ...` with status 1; SIGTERM unwinds
    it, leaving nothing half-made (status 143); anything else raised on,
    with its traceback."""
    stop_cleanly_on_sigterm()
    try:
        return main(argv)
    except Terminated:
        log.error(f"{name}: stopped (SIGTERM); its work folders are removed")
        return 143
    except ArticlekitError as exc:
        log.error(f"{name}: {exc}")
        return 1
    except OSError as exc:
        said = _os_problem(exc)
        if said is None:
            raise
        log.error(f"{name}: {said}")
        return 1
