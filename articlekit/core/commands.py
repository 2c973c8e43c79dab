"""The command a page tells its reader to run to recompute a number, spelled
once: the tooltip and the provenance table (articlekit.article.bind) and the
audit (articlekit.review.audit) print it, and `python -m articlekit
reproduce` (articlekit.review.reproduce) is what it runs.
"""

import shlex

REPRODUCE = "python -m articlekit reproduce"


def reproduce_command(key):
    """'python -m articlekit reproduce scaling.dk64.unscaled.max_weight';
    a key with an index is quoted, so that a shell does not read [2] as a
    pattern: 'python -m articlekit reproduce 'example.w[2]''."""
    return f"{REPRODUCE} {shlex.quote(key)}"
