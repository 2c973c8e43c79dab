"""What a failed job leaves the author: its message, last in the terminal.

Snakemake prints a failed job's error where it happens, under its banner,
and then a few lines of its own ("Shutting down", "Complete log(s)", "At
least one job did not complete successfully"); each job's banner lists
every input, and for a module's rule those are 30 to 45 paths of
articlekit's own code. The message that says what is wrong and how to fix
it, which articlekit writes into the job's log, ended up about ten lines
from the bottom, among module paths.

`watch(workflow)` adds a logging handler to Snakemake's logger in
the main process, beside the ledger's (ownership.py), which hears the same
reports of each job (JOB_INFO when a job starts, JOB_FINISHED when
Snakemake has checked its outputs, JOB_ERROR when it failed). It

- prints, when the process exits (after everything Snakemake prints), a
  summary of the jobs that failed: each one's rule, its log, and the
  message of its log (`message_of`), a traceback shortened to the line of
  the author's code it came from and the exception;
- keeps aside the previous outputs of the jobs of the rules named by
  `keep_previous` (the experiments) before Snakemake deletes them, and
  says where a failed job's are (articlekit/workflow/previous.py);
- shortens the terminal (`quiet_terminal`): the `input:` line of each
  job's banner to the article's own files and a count of articlekit's, a
  failed job with a log to one line (its rule, job and log: the summary
  says what the log says), Snakemake's "Look above for error messages"
  to "articlekit says why at the end", and an error articlekit raised
  while planning to its message, without the frames of articlekit's code
  Snakemake prints under it (the complete log under .snakemake/log/ keeps
  every word).

The profile every article ships (profiles/default) leaves out Snakemake's
show-failed-logs, which printed each failed job's log in the middle of the
run: the summary says it once, at the end.
"""

import atexit
import logging
import os
import re
import sys
from pathlib import Path

from snakemake.logging import logger
from snakemake_interface_logger_plugins.common import LogEvent

import articlekit
from articlekit.core.log import log
from articlekit.workflow import previous

ARTICLEKIT_FOLDER = Path(articlekit.__file__).resolve().parent
# A record of the experiments' log (articlekit.experiment.artifacts.configure_logging):
# "2026-12-02 01:32:45,123 experiment: the message".
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [\w.]+: ", re.M)
TRACEBACK = "Traceback (most recent call last):"
FRAME = re.compile(r'^  File "([^"]+)", line (\d+), in (.+)$', re.M)
LONGEST = 40  # lines of one message the summary shows; the log has the rest


class Failures(logging.Handler):
    """Snakemake's reports of its jobs: the failed ones remembered for the
    summary, the experiments' previous outputs kept aside."""

    def __init__(self, workflow, keep=()):
        super().__init__()
        self.workflow, self.keep = workflow, set(keep)
        self.jobs = {}  # jobid -> (rule, outputs), from JOB_INFO
        self.failed = []  # (rule, logs, outputs), in the order they failed
        self.warned = False

    def emit(self, record):
        event = getattr(record, "event", None)
        if event not in (LogEvent.JOB_INFO, LogEvent.JOB_FINISHED, LogEvent.JOB_ERROR):
            return
        if self.workflow.dryrun or self.workflow.touch:
            return
        try:
            if event == LogEvent.JOB_INFO:
                outputs = [str(path) for path in record.output]
                self.jobs[record.jobid] = (record.rule_name, outputs)
                if record.rule_name in self.keep:
                    previous.keep(outputs)  # before Snakemake prepares the job, which deletes them
            elif event == LogEvent.JOB_FINISHED:
                rule, outputs = self.jobs.pop(record.job_id, (None, []))
                if rule in self.keep:
                    previous.discard(outputs)
            else:
                self.failed.append(
                    (
                        record.rule_name,
                        [str(path) for path in record.log or []],
                        [str(path) for path in record.output or []],
                    )
                )
        except OSError as error:
            if not self.warned:
                self.warned = True
                logger.warning(f"articlekit could not keep the previous outputs of a job aside ({error})")

    def summary(self):
        """The text printed at exit: every failed job, its log and message; None when none failed."""
        if not self.failed:
            return None
        count = len(self.failed)
        rules = ", ".join(dict.fromkeys(rule for rule, _, _ in self.failed))
        parts = [
            f"articlekit: {count} job{'s' * (count != 1)} failed ({rules}); what "
            f"{'their logs say' if count > 1 else 'its log says'}:"
        ]
        for rule, logs, outputs in self.failed:
            kept = [kept for output, kept in previous.kept_copies(outputs)] if rule in self.keep else []
            where = f"log: {', '.join(logs)}" if logs else "no log"
            if kept:
                where += (
                    f"; its previous {'outputs are' if len(kept) > 1 else 'output is'} kept in "
                    f"{', '.join(kept)}, until a run of it succeeds"
                )
            parts.append(f"\nrule {rule} ({where}):")
            parts.append(message_of(logs))
        return "\n".join(parts)

    def print_summary(self):
        said = self.summary()
        if said:
            sys.stdout.flush()
            log.error(said)


class Terminal(logging.Formatter):
    """Snakemake's own formatter for the terminal, with each job's `input:`
    cut to the article's files and a count of articlekit's modules, and an
    error articlekit raised to stop the plan printed as its message alone:
    without Snakemake's header naming the line of articlekit's module that
    raised it and the frames under it, which come after the message and
    say nothing to the author (the message names the author's file and
    line)."""

    def __init__(self, formatter):
        super().__init__()
        self.formatter = formatter

    def format(self, record):
        event = getattr(record, "event", None)
        inputs = getattr(record, "input", None)
        if event == LogEvent.JOB_ERROR and getattr(record, "log", None) and summarised():
            return short_job_error(record)
        if record.levelno == logging.ERROR and record.getMessage() == SNAKEMAKES_LAST_WORD and summarised():
            record = logging.makeLogRecord({**record.__dict__, "msg": LAST_WORD, "args": ()})
        if event in (LogEvent.JOB_INFO, LogEvent.JOB_ERROR) and inputs:
            record = logging.makeLogRecord(record.__dict__)  # a copy: the ledger reads the record's own inputs
            record.input = short_inputs(inputs)
            if isinstance(getattr(record, "reason", None), str):
                record.reason = short_reason(record.reason)
        elif event == LogEvent.ERROR and getattr(record, "exception", None) == "WorkflowError":
            message = articlekit_message(record.getMessage())
            if message is not None:
                record = logging.makeLogRecord({**record.__dict__, "msg": message, "args": ()})
        elif event == LogEvent.ERROR and getattr(record, "exception", None) == "RuleException":
            if is_failed_command(record.getMessage()):
                return ""  # said by the job's error just after it (its shell command), and why by the summary
        return self.formatter.format(record)


# What Snakemake says as it stops after a failed job (snakemake/scheduling/job_scheduler.py),
# and what the terminal says instead where articlekit's summary follows: it is below, not above.
SNAKEMAKES_LAST_WORD = "Exiting because a job execution failed. Look above for error messages"
LAST_WORD = "Exiting because a job execution failed: articlekit says why at the end"


def summarised():
    """Whether this process prints the summary of its failed jobs at exit (watch())."""
    return bool(_watching)


def short_job_error(record):
    """A failed job with a log, as the terminal shows it where the summary
    says what its log says: its rule, job and log on one line, under
    Snakemake's time stamp. Snakemake's block (its inputs, outputs and shell
    command, about ten lines a job, ending "check log file(s) for error
    details") stays in the complete log under .snakemake/log/, which
    another handler writes."""
    from snakemake.logging import timestamp

    logs = ", ".join(str(path) for path in record.log)
    return (
        f"{timestamp()}\nError in rule {record.rule_name} (jobid {record.jobid}; log: {logs}): "
        "articlekit says why at the end"
    )


ERROR_HEADER = re.compile(r'^WorkflowError(?: in rule \S+)? in file "[^"]+", line \d+:$')


FAILED_COMMAND = re.compile(
    r'^RuleException:\nCalledProcessError in file "([^"]+)", line \d+:\n'
    r"Command '.*' returned non-zero exit status -?\d+\.$",
    re.S,
)


def is_failed_command(text):
    """Whether the error is only that the shell command of one of articlekit's rules exited non-zero."""
    found = FAILED_COMMAND.match(text.strip())
    return bool(found) and is_articlekit(found.group(1))


def articlekit_message(text):
    """The message of a WorkflowError that articlekit raised, as Snakemake
    printed it (its header, the message, the frames down to the raise), or
    None when the error is not articlekit's."""
    lines = text.splitlines()
    if len(lines) < 3 or not ERROR_HEADER.match(lines[0]):
        return None
    body = lines[1:]
    frames = []
    while body and FRAME.match(body[-1]):
        frames.insert(0, FRAME.match(body[-1]).group(1))
        body.pop()
    if not frames or not body or not is_articlekit(frames[-1]):
        return None
    return "\n".join(body)


def short_inputs(inputs):
    """The inputs that are not articlekit's own code, then how many are."""
    own = [path for path in inputs if not is_articlekit(path)]
    modules = len(inputs) - len(own)
    return own + ([f"and {modules} file{'s' * (modules != 1)} of articlekit"] if modules else [])


def short_reason(reason):
    """Snakemake's reason for a job ("Updated input files: a, b; Code has
    changed ...") with the files of articlekit counted, not listed."""
    parts = []
    for part in reason.split("; "):
        label, colon, files = part.partition(": ")
        if colon and files:
            part = f"{label}: {', '.join(short_inputs(files.split(', ')))}"
        parts.append(part)
    return "; ".join(parts)


def is_articlekit(path):
    try:
        Path(path).resolve().relative_to(ARTICLEKIT_FOLDER)
    except ValueError:
        return False
    return True


def message_of(logs):
    """What a failed job's log says, for the summary: the last record of an
    experiment's log, or the whole of a command's (its stderr), with a
    traceback cut to the frame of the article's code it came from and its
    exception."""
    texts = []
    for path in logs:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        if text:
            texts.append((path, text))
    if not texts:
        return (
            "its log is empty: the command stopped before articlekit could say why; Snakemake's error "
            "above names the command"
        )
    return "\n".join(shortened(path, last_record(text)) for path, text in texts)


def last_record(text):
    """The last logged record of an experiment's log (the one that stopped
    it), without its time and logger name; a command's log is one message."""
    starts = [match for match in RECORD.finditer(text)]
    if not starts:
        return text
    return text[starts[-1].end() :].strip()


def shortened(path, message):
    """A message cut to LONGEST lines, a traceback in it to its origin."""
    if TRACEBACK in message:
        head, _, trace = message.partition(TRACEBACK)
        frames = FRAME.findall(trace)
        # the innermost frame in the article's own code (not Python's, not a library's, not articlekit's)
        own = [frame for frame in frames if is_the_articles(frame[0])]
        exception = trace.strip().splitlines()[-1] if trace.strip() else ""
        origin = f"{shown(own[-1][0])}:{own[-1][1]}, in {own[-1][2]}: " if own else ""
        cause = f"{origin}{exception} (the traceback: {path})"
        head = head.strip()
        # "harmonic: failed" and its cause on one line; a longer message above it
        message = f"{head}: {cause}" if head and "\n" not in head else "\n".join(filter(None, [head, cause]))
    lines = message.splitlines()
    if len(lines) > LONGEST:
        lines = lines[:LONGEST] + [f"... and {len(lines) - LONGEST} more lines in {path}"]
    return "\n".join(lines)


def is_the_articles(path):
    """A file of the article's folder (its experiments), not articlekit's or an installed library's.
    A compiled library's frame names its source relative to nothing
    ("numpy/random/bit_generator.pyx"): no file here, so not the article's."""
    resolved = Path(path).resolve()
    if not resolved.is_file():
        return False
    try:
        resolved.relative_to(Path.cwd().resolve())
    except ValueError:
        return False
    return not is_articlekit(resolved) and "site-packages" not in resolved.parts


def shown(path):
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


_watching = []


def quiet_terminal():
    """Shorten what Snakemake prints in the terminal (Terminal); its
    complete log under .snakemake/log/ keeps every word. Asked as early as
    articlekit's code runs in a Snakefile (checked_config, watch)."""
    for stream in logger.handlers:
        if stream.name == "DefaultStreamHandler" and stream.formatter and not isinstance(stream.formatter, Terminal):
            stream.setFormatter(Terminal(stream.formatter))


def watch(workflow):
    """Report the failed jobs of this run at exit and shorten the terminal's
    banners, when this process is the one that schedules jobs (not a job's
    own Snakemake on a cluster node). Returns the handler, or None."""
    from snakemake.settings.types import ExecMode

    quiet_terminal()
    if workflow.exec_mode != ExecMode.DEFAULT:
        return None
    for handler in [h for h in logger.handlers if isinstance(h, Failures)]:
        logger.removeHandler(handler)  # the Snakefile read twice in one process
    handler = Failures(workflow)
    logger.addHandler(handler)
    if not _watching:
        atexit.register(lambda: _watching[-1].print_summary())
    _watching[:] = [handler]
    return handler


def keep_previous(handler, rules):
    """From now on, the jobs of these rules keep their previous outputs
    aside while they run (previous.py); handler: watch()'s, or None."""
    if handler is not None:
        handler.keep.update(rules)
