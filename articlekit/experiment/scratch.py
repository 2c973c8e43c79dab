"""An experiment's working folder while its code runs: empty, and outside
the project.

run_experiment (articlekit.experiment.artifacts) and the seed sweep
(articlekit.experiment.sweep) run an experiment's run() and plot() inside
`scratch_folder(name)`: a fresh temporary folder is the working folder,
and is removed afterwards. The outputs the experiment was asked for are
named by absolute paths before it enters; everything else of the project
(the baseline, the releases, the other experiments' results, the pages)
is out of reach of a relative path: a write to `results/parity.json` or
an `os.replace` onto `baseline/published.yaml` lands in the scratch folder
and is dropped with it, and a relative read finds nothing. The folder
lies under the system's temporary folder, not the project's, so `../`
does not lead back either.

A run killed with kill -9 cannot remove its folder. Each folder's name
therefore carries its machine and its owner tag (articlekit/core/workfiles.py),
and the experiment's next run on that machine removes the folders of its
own that a process now gone left behind: a build killed and built again
leaves none for long. The machine's name, because a cluster's nodes may
share one temporary folder, and a pid says nothing of another node's
processes.

Chosen over Snakemake's `shadow:` directive, which does the same with a
folder of links under .snakemake/shadow/ but runs each such job through a
Snakemake process of its own (the local executor cannot change the
working folder of one thread): about a second and a half of CPU per job,
two thirds more CPU for a cold build of this article. It does not stop an
absolute path, or code that changes the working folder back: the ledger
(articlekit/core/ledger.py) is what catches those, after the fact.
"""

import contextlib
import os
import shutil
import socket
import tempfile
from pathlib import Path

from articlekit.core.workfiles import owner_tag, remove_stale

# The folder the experiment was started in, while it runs in its scratch folder.
_project = None


def project_folder():
    """The article's folder: where the experiment was started, also while
    it runs in its scratch folder."""
    return Path(_project or os.getcwd())


@contextlib.contextmanager
def scratch_folder(name):
    """The block runs with an empty temporary folder as the working folder,
    named after the experiment, the machine and the owner
    (articlekit-NAME@HOST@TAG-RANDOM: neither an experiment's name, a
    module's, nor a host's holds an @); the experiment's folders that a
    killed run on this machine left are removed first."""
    global _project
    home = os.getcwd()
    prefix = f"articlekit-{name}@{socket.gethostname()}@"
    remove_stale(tempfile.gettempdir(), prefix, "-")
    folder = tempfile.mkdtemp(prefix=f"{prefix}{owner_tag()}-")
    _project = home
    os.chdir(folder)
    try:
        yield Path(folder)
    finally:
        os.chdir(home)
        _project = None
        shutil.rmtree(folder, ignore_errors=True)


def shown(path):
    """A path as a message names it: relative to the working folder, else to
    the article's folder, else as it is."""
    resolved = Path(path).resolve()
    for folder in (Path.cwd(), project_folder()):
        try:
            return resolved.relative_to(folder.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)
