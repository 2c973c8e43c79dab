"""Many seeds of one experiment in one process: the seed-robustness sweep's runner.

    python -m articlekit.experiment.sweep --experiment scaling --params JSON \\
        --seed-count 100 --first 0 --count 50 \\
        --out results/robustness/scaling/chunk-0.json --log logs/... --library numpy

An experiment is a pure `run(params)`, and its seed is one of its params, so
a sweep imports the experiment (and the libraries it imports) once and calls run()
for each seed of its chunk: the interpreter's start-up and the imports,
most of what one run costs, are paid once per chunk, not once per seed.
The workflow splits the seeds into chunks, each a Snakemake job of its own
(so `--cores` and a cluster profile spread them) and each chunk an output
of its own (so a killed sweep resumes from the chunks it had not written).

The seeds are derived from the article's own (`sweep_seeds`): seed + 1,
seed + 2, ..., the same on every machine, a prefix of the next larger sweep.
NumPy's default_rng hashes its seed (SeedSequence), so consecutive seeds give
independent streams; the article's seed itself is not among them (its values
are the build's).

A seed whose run raises is recorded with its error, not dropped: the chunk
holds one record per seed, {"seed", "values"} or {"seed", "error",
"traceback"}, and the sweep's summary counts them. The chunk document:

    {"experiment", "script", "params" (without the seed), "versions",
     "seeds": [record, ...]}
"""

import argparse
import importlib
import json
import logging
import os
import sys
import traceback

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.experiment.artifacts import configure_logging, library_versions
from articlekit.experiment.progress import Progress
from articlekit.experiment.scratch import scratch_folder
from articlekit.core.jsonio import write_json

log = logging.getLogger("experiment")


def sweep_seeds(article_seed, first, count):
    """Seeds first .. first + count - 1 of the sweep derived from the article's seed."""
    if not isinstance(article_seed, int) or isinstance(article_seed, bool):
        raise ArticlekitError(f"the article's seed must be an integer to derive a sweep from, not {article_seed!r}")
    return [article_seed + 1 + index for index in range(first, first + count)]


def run_one(run, params, seed):
    """One seed's record: its values, or the error its run raised."""
    try:
        return {"seed": seed, "values": run({**params, "seed": seed})}
    except Exception as exc:  # any failure of the science is a finding about that seed
        return {"seed": seed, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=-3)}


def run_seeds(run, params, seeds, progress=None):
    """Every seed's record, in order, each from the same run() in this
    process; progress (articlekit.experiment.progress.Progress), when given,
    hears of each seed done."""
    records = []
    for seed in seeds:
        record = run_one(run, params, seed)
        if "error" in record:
            log.warning("seed %d: %s", seed, record["error"])
        records.append(record)
        if progress is not None:
            progress.step(len(records))
    return records


def _parser():
    parser = argparse.ArgumentParser(prog="python -m articlekit.experiment.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", required=True, help="NAME: runs experiments.NAME's run(params)")
    parser.add_argument("--params", required=True, metavar="JSON", help="the article's params (with its seed)")
    parser.add_argument("--first", type=int, required=True, help="index of the chunk's first seed in the sweep")
    parser.add_argument("--count", type=int, required=True, help="how many seeds the chunk runs")
    parser.add_argument("--out", required=True, help="the chunk's JSON")
    parser.add_argument("--log", help="also write the log to FILE")
    parser.add_argument(
        "--library",
        action="append",
        default=[],
        metavar="DIST",
        help="record DIST's version if the run imports it (repeatable)",
    )
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    configure_logging(args.log)
    params = json.loads(args.params)
    seeds = sweep_seeds(params.get("seed"), args.first, args.count)
    # One thread per job: --cores runs chunks side by side, and an
    # experiment's tiny matrices gain nothing from a pool. Set before the
    # experiment imports its libraries (OpenMP's pools read it once, at
    # start-up), and held by threadpoolctl for the pools already loaded.
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    module = importlib.import_module(f"experiments.{args.experiment}")
    from threadpoolctl import threadpool_limits

    out = os.path.abspath(args.out)
    # the experiment's own code runs with nothing of the project in reach of
    # a relative path (articlekit.experiment.scratch)
    # a chunk of many seeds says where it is, in its log and the terminal (not a short one)
    progress = Progress(f"{args.experiment}: seeds {seeds[0]} to {seeds[-1]}", len(seeds), "seeds") if seeds else None
    with threadpool_limits(limits=1), scratch_folder(args.experiment):
        records = run_seeds(module.run, params, seeds, progress)
    failed = sum("error" in record for record in records)
    script = f"experiments/{args.experiment}.py"
    base = {key: value for key, value in params.items() if key != "seed"}
    write_json(
        out,
        {
            "experiment": args.experiment,
            "script": script,
            "params": base,
            "versions": library_versions(args.library),
            "seeds": records,
        },
    )
    log.info(
        "%s: seeds %d to %d, %d ran, %d failed -> %s",
        args.experiment,
        seeds[0],
        seeds[-1],
        len(records) - failed,
        failed,
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_command("sweep", main, sys.argv[1:]))
