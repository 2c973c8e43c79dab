"""An experiment run as several independent processes, and combined into one artifact.

An experiment whose entry says `runs: N` (config `experiments:`, N >= 2)
is run N times by the workflow, each run a job of its own (a cluster may
spread them; locally, an entry with `threads: all` runs them one after
another, each with the machine to itself):

    python -m experiments.NAME --params JSON --json results/runs/NAME/run-<i>.json ...

and then once more, to combine them into the experiment's one artifact,
results/NAME.json, which everything downstream reads:

    python -m experiments.NAME --combine results/runs/NAME/run-1.json ... \\
        --json results/NAME.json --figure ...

The experiment supplies the combining, beside run() and plot():

    def combine(runs, params):   # runs: each run's values, in run order
        return {...}             # the values of results/NAME.json
    if __name__ == "__main__":
        run_experiment("NAME", run, plot, combine=combine)

plot() draws from the combined values. The runs must have run with the same
parameters and library versions (they are replicates of one measurement);
the combined artifact records those parameters, so that a rerun of it
(`articlekit reproduce`) reruns every run. What combining means (a median
and its spread between runs) is the experiment's: for timings,
articlekit.experiment.measure.between_runs.
"""

from articlekit.core.errors import ArticlekitError


class RunsError(ArticlekitError):
    """The runs cannot be combined; the message names the file and the fix."""


def run_paths(name, runs):
    """The artifacts of an experiment's runs, in run order, numbered from 1."""
    return [run_path(name, i) for i in range(1, runs + 1)]


def run_path(name, run):
    """Where run `run` of experiment `name` writes its artifact (a wildcard
    pattern when `run` is "{run}")."""
    return f"results/runs/{name}/run-{run}.json"


def check_runs(name, artifacts):
    """(params, [values of each run]) from the runs' artifacts, [(path,
    envelope)] in run order; RunsError when one is not a run of `name`, or
    the runs differ in parameters or library versions (then they measured
    different things)."""
    if not artifacts:
        raise RunsError(f"{name}: --combine needs the artifacts of its runs, e.g. {run_path(name, 1)}")
    for path, artifact in artifacts:
        if artifact["experiment"] != name:
            raise RunsError(
                f"{path}: a run of {artifact['experiment']!r}, not of {name!r}; combine the runs of "
                f"one experiment ({run_path(name, '<i>')})"
            )
    first_path, first = artifacts[0]
    for path, artifact in artifacts[1:]:
        for part in ("params", "versions"):
            mine, theirs = first.get(part) or {}, artifact.get(part) or {}
            if mine != theirs:
                keys = sorted(k for k in {*mine, *theirs} if mine.get(k) != theirs.get(k))
                raise RunsError(
                    f"{path} ran with other {part} than {first_path} ({', '.join(keys)}: "
                    f"{[theirs.get(k) for k in keys]} against {[mine.get(k) for k in keys]}); the runs of "
                    f"one build are replicates of one measurement: run them again together "
                    f"(snakemake --cores N --forcerun {name} results/{name}.json)"
                )
    return dict(first.get("params") or {}), [artifact["values"] for _, artifact in artifacts]


def no_combine(name):
    """Why an experiment with runs: N but no combine() cannot be combined, and the fix."""
    return (
        f"experiments/{name}.py has no combine(runs, params), so its runs cannot be made into one artifact: "
        f"define one and pass it as run_experiment({name!r}, run, plot, combine=combine), or set "
        f"experiments.{name}.runs to 1"
    )
