"""What the build's folders hold that no rule makes any more: the result,
figures, log and benchmark of an experiment taken out of experiments:.

Reported on every build (the default target), never deleted: an entry may
be out for a while only (commented out to build faster), its result may
have cost hours, and Snakemake itself deletes nothing it does not build.
Nothing reads a leftover (build/values.json merges the declared
experiments' results only), so the report is a tidiness warning, with the
command that removes them.
"""

import shlex
from pathlib import Path

# The folders whose top-level files are the rules' alone (git-ignored);
# subfolders (results/matrix/...) belong to the rules that make them.
FOLDERS = ("results", "figures", "logs", "benchmarks/out")


def leftovers(made, root="."):
    """The top-level files of FOLDERS that `made(path)` says no rule makes,
    as relative paths, sorted. Hidden files (a writer's temporary) are the
    writers' to clean."""
    found = []
    for folder in FOLDERS:
        for path in sorted(Path(root, folder).glob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and not path.name.startswith(".") and not made(relative):
                found.append(relative)
    return found


def report(files, experiments, root="."):
    """The warning for leftover files, or None. experiments: the names
    experiments: declares. A leftover whose name is an experiment's script
    (experiments/NAME.py) is that experiment's, taken out of the config;
    another is a rule's this build no longer has (a format no longer chosen,
    a rule of an older articlekit)."""
    if not files:
        return None
    stems = sorted({Path(f).stem for f in files if f.startswith(("results/", "logs/"))} - set(experiments))
    taken_out = [stem for stem in stems if Path(root, "experiments", f"{stem}.py").exists()]
    gone = [stem for stem in stems if stem not in taken_out]
    whose = [
        *([f"of {', '.join(taken_out)}, which experiments: in config.yaml no longer declares"] if taken_out else []),
        *([f"of {', '.join(gone)}, a rule this build no longer has"] if gone else []),
    ]
    again = ", or declare it again in experiments: to use them" if taken_out else ""
    return (
        f"left over from an earlier build{' (' + '; '.join(whose) + ')' if whose else ''}: {', '.join(files)}. "
        f"No rule makes them and nothing reads them: delete them (rm {' '.join(map(shlex.quote, files))}){again}"
    )
