"""The version matrix as the audit rule's optional input: its path, and a
digest of its contents as a param.

Kept apart from articlekit.review.edition_environment, which judges the
departures: the workflow asks for this argument on every plan, a no-op dry
run too, so it must import nothing but the standard library (the plan's
memory, articlekit/workflow/plancache.py, spares a warm plan the config's
schema checks, and jsonschema with them).
"""

import hashlib
from pathlib import Path


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def matrix_argument(path):
    """The audit's `--matrix` arguments: none when the article has no matrix
    (path None), the path alone when it has not been run, the path and its
    digest when it has (a param: a new matrix run reruns the audit)."""
    if path is None:
        return ""
    if not Path(path).exists():
        return f"--matrix {path}"
    return f"--matrix {path} --matrix-sha256 {digest(path)}"
