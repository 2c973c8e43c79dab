"""Which rule wrote each file of a build, and what it wrote: the ledger.

Snakemake's main process keeps it, in .snakemake/articlekit/ledger.json
(articlekit/workflow/ownership.py records it from Snakemake's own reports
of each job): when a job starts, its outputs are marked as being written
by its rule; when Snakemake reports the job finished (after it checked the
outputs), the SHA-256 of
each output is taken there, in the main process, not by the job. When a
run starts, the digest of every source its jobs read (a file some job
reads and none writes: code, config, prose, the baseline, the release
snapshot) is taken too.

A reader holds what it reads against the ledger: an output is good when
its rule's job finished and the file still has the digest taken then
(`output_problem`); a source is good when it has the digest it had when
the run started (`source_problem`). Anything else is named with the file,
the rule that should have written it, and the command that makes it again.

This is integrity, not a signature: the ledger is a file the same user
can rewrite. What it adds to a digest an artifact carries itself is who
took it: a job cannot recompute it, because the main process writes the
ledger again from its own memory each time a job starts or finishes, over
whatever a job wrote there. docs/reliability.md says what that protects
against and what it does not.

    {"ledger_format": 1,
     "outputs": {PATH: {"rule": NAME, "state": "running" | "finished",
                        "started": TIME, "finished": TIME, "sha256": HEX,
                        "inputs": [PATH, ...]}},
     "run": {"started": TIME, "sources": {PATH: HEX or null}}}
"""

import hashlib
import json
import os
import shlex
import time
from pathlib import Path

from articlekit.core.jsonio import write_text_atomic

LEDGER = ".snakemake/articlekit/ledger.json"
FORMAT = 1
RUNNING, FINISHED = "running", "finished"


def file_digest(path):
    """The SHA-256 of a file's bytes as hex, or None when it is no file."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return digest.hexdigest()


def now():
    """The time as the ledger writes it: UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def rerun_command(rules, options=""):
    """The command that runs these rules again, whatever their outputs' state:
    'snakemake --cores all --forcerun parity render'."""
    named = " ".join(shlex.quote(rule) for rule in sorted(set(rules)))
    return f"snakemake --cores all{options} --forcerun {named}"


def short(digest):
    return f"{digest[:12]}…" if digest else "no file"


def key(path):
    """The ledger's name for a path: as Snakemake writes it, normalised
    (results/./a.json and results/a.json are one file)."""
    return os.path.normpath(os.fspath(path))


class Ledger:
    def __init__(self, path=LEDGER, document=None, note=None):
        self.path = Path(path)
        document = document or {}
        self.outputs = dict(document.get("outputs") or {})
        self.run = dict(document.get("run") or {})
        # why the ledger is empty, when it is: named by every problem
        self.note = note

    @classmethod
    def load(cls, path=LEDGER):
        """The ledger at path; an empty one, saying why, when there is none
        or it cannot be read (every output is then unrecorded)."""
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(
                path,
                note=f"{path} does not exist: the build was made before articlekit kept it, or .snakemake/ was removed",
            )
        except (OSError, ValueError) as exc:
            return cls(path, note=f"{path} cannot be read ({exc})")
        if not isinstance(document, dict) or document.get("ledger_format") != FORMAT:
            return cls(path, note=f"{path} is not a ledger of format {FORMAT}")
        return cls(path, document)

    def save(self):
        """Written atomically, as every output is; plain JSON (paths, digests
        and times: nothing jsonio.dumps has to tag), since the main process
        writes it twice per job."""
        self.note = None  # kept from now on, whatever it was at the start
        document = {"ledger_format": FORMAT, "outputs": dict(sorted(self.outputs.items())), "run": self.run}
        write_text_atomic(self.path, json.dumps(document, indent=1) + "\n")

    # ---- what the main process records -------------------------------------------

    def run_started(self, sources):
        """sources: {path: digest or None} as the run starts, before any job."""
        self.run = {"started": now(), "sources": {key(p): d for p, d in sorted(sources.items())}}

    def running(self, rule, outputs, inputs):
        """A job of `rule` is about to write `outputs`, reading `inputs`."""
        started = now()
        for path in outputs:
            self.outputs[key(path)] = {
                "rule": rule,
                "state": RUNNING,
                "started": started,
                "inputs": sorted({key(p) for p in inputs}),
            }

    def finished(self, outputs):
        """The job that writes `outputs` finished: take their digests now."""
        finished = now()
        for path in outputs:
            entry = self.outputs.setdefault(key(path), {"rule": None, "inputs": []})
            entry.update(state=FINISHED, finished=finished, sha256=file_digest(path))

    # ---- what a reader asks ------------------------------------------------------

    def entry(self, path):
        return self.outputs.get(key(path))

    def rule_of(self, path):
        entry = self.entry(path)
        return entry.get("rule") if entry else None

    def unowned(self, path, rule=None):
        """None when `path` is what its rule wrote, as the ledger recorded it
        when that rule's job finished; else a sentence naming the file and
        the rule (`rule`: the one expected to write a file the ledger does
        not know) and what is wrong."""
        entry = self.entry(path)
        whose = f"rule {(entry or {}).get('rule') or rule}" if (entry or {}).get("rule") or rule else "a rule"
        if entry is None:
            why = self.note or f"{self.path} has no entry for it"
            return (
                f"{path}: no record that {whose} wrote it ({why}); the build takes a rule's output only from its rule"
            )
        if entry.get("state") != FINISHED:
            return (
                f"{path}: the job of {whose} that writes it started at {entry.get('started', '?')} and never "
                "reported finishing (it was killed, or Snakemake ran with --quiet progress, which hides "
                "its reports of finished jobs)"
            )
        found = file_digest(path)
        if found != entry.get("sha256"):
            return (
                f"{path}: not what {whose} wrote: its SHA-256 is {short(found)} now, "
                f"{short(entry.get('sha256'))} when that job finished ({entry.get('finished', '?')}); "
                f"something other than {whose} rewrote it since"
            )
        return None

    def output_problem(self, path, rule=None, options=""):
        """unowned(), and the command that writes the file again."""
        problem = self.unowned(path, rule)
        if problem is None:
            return None
        rule = self.rule_of(path) or rule
        again = (
            f"rerun that rule: {rerun_command([rule], options)}"
            if rule
            else ("rebuild it: snakemake --cores all --forceall")
        )
        return f"{problem}. It is that rule's output, not a source: {again}"

    def source_problem(self, path):
        """None unless `path`, a source of this run, changed while the run
        went on (its digest now is not the one taken when the run started)."""
        sources = self.run.get("sources") or {}
        if key(path) not in sources:
            return None
        then, found = sources[key(path)], file_digest(path)
        if found == then:
            return None
        return (
            f"{path}: changed while this build ran (SHA-256 {short(then)} when the run started "
            f"({self.run.get('started', '?')}), {short(found)} now). No rule writes it, so one of the build's "
            f"jobs rewrote it, or it was edited meanwhile: restore it (git diff -- {shlex.quote(str(path))} "
            "shows the change) and run snakemake again"
        )
