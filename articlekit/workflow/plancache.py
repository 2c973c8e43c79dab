"""Plan-time checks remembered between runs, by a digest of all they read.

Every `snakemake` call plans, a no-op too, and before any job the plan
checks what it reads: each config file read strictly and the config held
against the schemas, the release snapshots' digests. A check is a function
of some files' bytes, some values, the code that runs it and the libraries
it calls; `PlanMemory.fingerprint` digests all of them, and a result kept
under that fingerprint is the same computation's answer, never a stale
one: change any byte, value, module or version and the check runs again.

Only what passed is kept. A check that fails runs again on the next plan
and says why, as it did the first time.

Kept in .snakemake/articlekit/plan.json beside Snakemake's own records
(the same trust: a hand edit there can defeat a rerun trigger just as one
in .snakemake/metadata can); deleting it costs one slower plan.
"""

import hashlib
import importlib.metadata
import json
import sys
from functools import lru_cache
from pathlib import Path

from articlekit.core.jsonio import write_text_atomic
from articlekit.workflow import codegraph

# Fingerprints kept, newest last: enough for a few configs in turn (the
# fast one of the tests, the full one, a --config or two).
KEPT = 64


class PlanMemory:
    def __init__(self, path):
        self.path, self.changed = Path(path), False
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
            self.results = dict(kept["results"]) if kept.get("format") == 1 else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.results = {}

    def fingerprint(self, check, files=(), values=None, code=(), libraries=()):
        """A digest of a check's name, each file's path and bytes (a missing
        file counts as missing), the values (by repr: 1, 1.0 and True
        differ), the files of the articlekit modules it runs (read from the
        import graph) and the installed versions of the libraries it calls,
        with Python's."""
        digest = hashlib.sha256()

        def add(*parts):
            for part in parts:
                digest.update(part.encode("utf-8", "surrogateescape") + b"\0")

        add("check", check, "python", sys.version)
        for path in files:
            add("file", str(path), codegraph.file_digest(path) or "missing")
        add("values", repr(values))
        for module in code:
            for path in codegraph.package_files(module):
                add("code", path, codegraph.file_digest(path) or "missing")
        for library in libraries:
            add("library", library, _version(library))
        return digest.hexdigest()

    def recall(self, fingerprint, default=None):
        return self.results.get(fingerprint, default)

    def keep(self, fingerprint, result=True):
        self.results.pop(fingerprint, None)
        self.results[fingerprint] = result
        while len(self.results) > KEPT:
            del self.results[next(iter(self.results))]
        self.changed = True

    def save(self):
        """Write what was kept, atomically (runs at once each leave a whole
        file). A folder that cannot be written keeps nothing: the next plan
        checks again."""
        if not self.changed:
            return
        try:
            write_text_atomic(self.path, json.dumps({"format": 1, "results": self.results}))
            self.changed = False
        except OSError:
            pass


@lru_cache(maxsize=None)
def _version(library):
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
