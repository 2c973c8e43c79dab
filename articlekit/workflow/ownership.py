"""Every artifact is owned by its rule: Snakemake's main process keeps the
ledger (articlekit/core/ledger.py), and the plan refuses an output its rule
did not write.

`watch(workflow, path)` adds a logging handler to Snakemake's logger in
the main process. Snakemake reports each job there, the same events a
logger plugin receives: JOB_INFO when a job starts (its rule, inputs and
outputs), JOB_FINISHED once the job ended and Snakemake checked its
outputs (moved back from a shadow folder, for a rule that has one), before
any job that reads them is scheduled; RUN_INFO once the DAG is built, before the first
job. The handler marks a starting job's outputs as being written, takes
their digests when it finishes, and takes the digest of every source of
the DAG when the run starts; each time, it writes the ledger from its own
memory, so whatever a job wrote into the ledger file is gone by the time
a job that reads that job's outputs starts.

`unowned(...)`, asked by the default target, lists every output that is
there but is not what its rule wrote (its digest changed since its job
finished, or no job of its rule is recorded writing it): `snakemake` and
`snakemake -n` then stop naming each file, its rule and the command that
reruns it, instead of building on it or saying "Nothing to be done". An
output whose job started and never reported finishing (the main process
was killed) is Snakemake's to rerun as incomplete; when Snakemake's own
record has that job complete, with the file's mtime still the one it
recorded, the kill came between its record and ours, and the output is
recorded as finished (`adopt_finished`): by the default target's plan,
and, for a run of any target, for each file its jobs read, when the run
starts.
"""

import logging
import os
import shlex

from snakemake.io import IOFile
from snakemake.logging import logger
from snakemake_interface_logger_plugins.common import LogEvent

from articlekit.core.ledger import FINISHED, RUNNING, Ledger, file_digest, rerun_command


class Recorder(logging.Handler):
    """Snakemake's reports of its jobs, written into the ledger."""

    def __init__(self, workflow, ledger):
        super().__init__()
        self.workflow, self.ledger = workflow, ledger
        self.jobs = {}  # jobid -> outputs, from JOB_INFO, for JOB_FINISHED
        self.run_recorded = False
        self.failed = False

    def emit(self, record):
        event = getattr(record, "event", None)
        if event not in (LogEvent.RUN_INFO, LogEvent.JOB_INFO, LogEvent.JOB_FINISHED) or self.workflow.dryrun:
            return
        try:
            if event == LogEvent.RUN_INFO:
                self.run_starts()
            elif event == LogEvent.JOB_INFO:
                self.job_starts(record)
            else:
                self.job_finished(record)
        except OSError as error:
            if not self.failed:  # once: every reader will name what is unrecorded
                self.failed = True
                logger.warning(
                    f"articlekit could not write {self.ledger.path} ({error}): the outputs of this "
                    "run are unrecorded, and the build's readers refuse them"
                )

    def run_starts(self):
        if self.run_recorded:
            return
        self.run_recorded = True
        jobs = list(self.workflow.dag.jobs)
        written = {str(path) for job in jobs for path in job.output}
        read = {str(path) for job in jobs for path in job.input}
        # what this run's jobs read, finished by Snakemake's record though not by
        # ours (a kill between the two): adopted for any target, as the default
        # target's plan adopts it (unowned), before the first job reads it
        adopt_finished(self.workflow, self.ledger, sorted(read))
        self.ledger.run_started({path: file_digest(path) for path in read - written})
        self.ledger.save()

    def job_starts(self, record):
        if not self.run_recorded:  # a job before RUN_INFO: take the sources now, still before it runs
            self.run_starts()
        outputs = [str(path) for path in record.output]
        self.jobs[record.jobid] = outputs
        self.ledger.running(record.rule_name, outputs, [str(path) for path in record.input])
        self.ledger.save()

    def job_finished(self, record):
        outputs = self.jobs.pop(record.job_id, None)
        if outputs:
            self.ledger.finished(outputs)
            self.ledger.save()


def watch(workflow, path):
    """The ledger at path, kept by this process from now on when it is the
    one that schedules jobs (not a job's own Snakemake on a cluster node);
    None there."""
    from snakemake.settings.types import ExecMode

    if workflow.exec_mode != ExecMode.DEFAULT:
        return None
    ledger = Ledger.load(path)
    for handler in [h for h in logger.handlers if isinstance(h, Recorder)]:
        logger.removeHandler(handler)  # the Snakefile read twice in one process
    logger.addHandler(Recorder(workflow, ledger))
    return ledger


def unrecordable(workflow):
    """The sentence that stops a run whose jobs' ends Snakemake would not
    report (--quiet progress, or a bare --quiet), or None: the ledger is
    written from those reports, and every reader would refuse what the run
    made."""
    from snakemake.settings.enums import Quietness

    if workflow.dryrun or Quietness.PROGRESS not in (workflow.output_settings.quiet or ()):
        return None
    return (
        "--quiet progress (a bare --quiet means it too) stops Snakemake reporting each finished job, which is "
        "when articlekit records what the job wrote (.snakemake/articlekit/ledger.json); without that record "
        "the build refuses its own outputs. Leave progress out: --quiet rules host reason"
    )


def forced(workflow):
    """(rules, files) this run reruns whatever their state (--forcerun,
    --forceall: every rule)."""
    settings = workflow.dag_settings
    if settings.forceall:
        return {rule.name for rule in workflow.rules}, set()
    named = {str(each) for each in settings.forcerun}
    rules = {rule.name for rule in workflow.rules}
    return named & rules, named - rules


def adopt_finished(workflow, ledger, outputs):
    """Record as finished, in memory, each of `outputs` the ledger has as
    still being written while Snakemake's own record (.snakemake/metadata)
    has its job complete, with the file's mtime still the one Snakemake
    recorded when the job ended: the main process was killed between
    Snakemake's record and ours. Saved with the next run's first record."""
    for path in outputs:
        entry = ledger.entry(path)
        if entry is None or entry.get("state") == FINISHED or not os.path.isfile(path):
            continue
        record = workflow.persistence.metadata(IOFile(path))
        if record is None or record.incomplete or record.rule != entry.get("rule") or record.endtime is None:
            continue
        if record.endtime == os.stat(path).st_mtime:
            ledger.finished([path])


def unowned(workflow, ledger, outputs):
    """The sentence that stops the plan, or None: each of `outputs` (the
    default target's files) that exists but is not what its rule wrote,
    unless this run reruns it anyway. Not asked of a dry run's Snakemake on
    a cluster node (no ledger there)."""
    if ledger is None:
        return None
    adopt_finished(workflow, ledger, outputs)
    rules, files = forced(workflow)
    options = "".join(f" --configfile {shlex.quote(str(shown(path)))}" for path in workflow.overwrite_configfiles)
    problems, reruns = [], []
    for path in outputs:
        rule = ledger.rule_of(path) or producer(workflow, path)
        if rule in rules or path in files or not os.path.isfile(path):
            continue
        if (ledger.entry(path) or {}).get("state") == RUNNING:
            continue  # a job killed with its main process: Snakemake reruns it, or its readers refuse it
        problem = ledger.unowned(path, rule)
        if problem:
            problems.append(problem)
            reruns.append(rule)
    if not problems:
        return None
    if ledger.note and not ledger.outputs:
        # no record at all (an old checkout, .snakemake/ removed): one sentence, not one per output
        listed = ", ".join(shown(path) for path in outputs if os.path.isfile(path))
        return (
            f"{ledger.note}, so the build cannot tell whether the {len(problems)} outputs already here "
            f"are what their rules wrote ({shorten(listed)}), and takes none of them. Rebuild them once: "
            f"snakemake --cores all --forceall{options}"
        )
    again = rerun_command(filter(None, reruns), options) if all(reruns) else "snakemake --cores all --forceall"
    return (
        "These outputs are not what their rules wrote, so the build takes none of them (they are rules' "
        "outputs, not sources):\n  " + "\n  ".join(problems) + f"\nRerun those rules: {again}"
    )


def shorten(text, width=160):
    return text if len(text) <= width else text[: width - 5].rsplit(", ", 1)[0] + ", ..."


def shown(path):
    """A path as the user would type it here: relative when inside the folder."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def producer(workflow, path):
    """The rule whose output path is, or None."""
    return next((rule.name for rule in workflow.rules if rule.is_producer(path)), None)
