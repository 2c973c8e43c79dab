"""A failed rerun keeps the result it would have replaced.

Snakemake deletes a job's outputs before the job runs, and again when it
fails, so an edit that breaks an experiment's script cost its last good
result: results/<name>.json, which may have taken hours. Snakemake's main
process hears of each job before it deletes anything (a job's start is
reported, then the job is prepared: articlekit/workflow/failures.py listens),
and there each output of an experiment's job that is already there is moved
aside, into a `.previous` folder beside it:

    results/harmonic.json              -> results/.previous/harmonic.json
    figures/harmonic-partial-sums.svg  -> figures/.previous/harmonic-partial-sums.svg

When the job finishes, the copies kept for it are removed: its new outputs
are the good ones. When it fails, they stay, and the failure summary names
them. A copy kept by an earlier failure stays until a run of that job
succeeds: the job's start finds no output to move and leaves it.

A kept copy is no output. No rule makes it and nothing reads it: the ledger
(articlekit/core/ledger.py) records only the paths Snakemake reports for a
job, the plan and `python -m articlekit verify` ask only about those, and
the leftover report (leftovers.py) reads only the top-level files of
results/ and figures/. It is the author's to read or compare; copied back
by hand, it is refused by the build's readers, since the ledger has its
job started and never finished (ownership.py): rerun the experiment once
it works again.
"""

import os
from pathlib import Path

FOLDER = ".previous"


def kept_path(path):
    """Where the previous copy of output `path` is kept."""
    path = Path(path)
    return path.parent / FOLDER / path.name


def keep(outputs):
    """Move each output that is a file aside (over an older kept copy);
    return the (output, kept copy) pairs moved."""
    moved = []
    for output in outputs:
        if os.path.isfile(output):
            kept = kept_path(output)
            kept.parent.mkdir(parents=True, exist_ok=True)
            os.replace(output, kept)
            moved.append((str(output), str(kept)))
    return moved


def kept_copies(outputs):
    """The (output, kept copy) pairs kept for these outputs now."""
    return [(str(output), str(kept_path(output))) for output in outputs if kept_path(output).is_file()]


def discard(outputs):
    """Remove the copies kept for these outputs, and each `.previous`
    folder left empty."""
    for output in outputs:
        kept = kept_path(output)
        kept.unlink(missing_ok=True)
        try:
            kept.parent.rmdir()
        except OSError:  # not empty (another output's copy), or not there
            pass
