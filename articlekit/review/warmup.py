"""Run by a matrix environment's own Python at install (matrixenv.warm_up),
never imported: the standard library only.

    VENV/bin/python -I articlekit/review/warmup.py OUT.json MODULE ...

Imports each MODULE that is installed, then the top-level modules of the
installed distributions they require (followed transitively, extras aside),
so that Python writes the .pyc of everything they import into the venv's
__pycache__ folders; writes to OUT.json what it imported, what is not
installed and what failed to import (with its error), and goes on after a
failure. The requirements too, because libraries import theirs only when a
call needs them: torch imports sympy (about 480 files) when
experiments/mask_convention.py runs nn.MultiheadAttention, not on `import torch`.
"""

import importlib
import importlib.metadata as metadata
import importlib.util
import json
import re
import sys


def key(name):
    """A distribution's name as packaging normalises it ('typing_extensions' -> 'typing-extensions')."""
    return re.sub(r"[-_.]+", "-", name).lower()


def required(dists):
    """The installed distributions `dists` require, transitively, themselves included."""
    seen, queue = set(), sorted(dists)
    while queue:
        dist = queue.pop()
        if dist in seen:
            continue
        seen.add(dist)
        try:
            requires = metadata.distribution(dist).requires or []
        except metadata.PackageNotFoundError:  # not installed: its marker is false here
            continue
        queue += [key(re.match(r"[A-Za-z0-9._-]+", r)[0]) for r in requires if not re.search(r"\bextra\s*==", r)]
    return seen


def warm(out, asked):
    dists_of, modules_of = metadata.packages_distributions(), {}
    for module, dists in dists_of.items():
        for dist in dists:
            modules_of.setdefault(key(dist), set()).add(module)
    here = [module for module in asked if importlib.util.find_spec(module) is not None]
    own = {key(dist) for module in here for dist in dists_of.get(module, ())}
    # a requirement's public top-level modules (not _distutils_hack), not
    # another of an asked module's own (torchgen beside torch)
    requirements = sorted(
        {module for dist in required(own) - own for module in modules_of.get(dist, ()) if not module.startswith("_")}
    )
    done = {"imported": [], "not_installed": sorted(set(asked) - set(here)), "failed": {}}
    for module in [*here, *requirements]:
        try:
            importlib.import_module(module)
            done["imported"].append(module)
        except (Exception, SystemExit) as exc:  # each cell that imports it reports it, as without the warm-up
            done["failed"][module] = f"{type(exc).__name__}: {exc}"
            print(f"warm-up: import {module} failed: {type(exc).__name__}: {exc}", flush=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(done, f)


if __name__ == "__main__":
    warm(sys.argv[1], sys.argv[2:])
