"""What the seed-robustness sweep costs, beside one process per seed, in a fresh copy of the project.

    python benchmarks/robustness.py [--seeds 100] [--cores 2] [--per-process 2] [--configfile config.yaml] [--keep]

First (not timed) the seeded experiments' own results, which the page
compares with. Then, timed: `snakemake robustness` for --seeds seeds of every
seeded experiment (many seeds per process, chunks of config robustness.chunk
as parallel jobs), by the wall clock and by CPU time, and its peak memory:
the largest single process (the children's ru_maxrss) and the sum of the
--cores largest chunk jobs (each job's max_rss from its benchmark: file), an
upper bound on what runs side by side.

Beside it, in the same run, the old way: one process per seed, each
`python -m experiments.NAME --params ...` as the build runs an experiment
(figures left out, as the sweep leaves them out). Running all of them would
take many minutes, so --per-process seeds of each experiment are run and
timed, and the time for --seeds seeds is EXTRAPOLATED from their mean,
divided by --cores as if those processes shared the cores perfectly (the
most favourable reading for the old way). The ratio of the two is printed.

Targets (issue 20): 100 seeds of every seeded experiment under 60 s of wall
time on 2 cores; peak memory under 2 GB.
"""

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from articlekit.experiment.sweep import sweep_seeds  # noqa: E402
from benchmarks.timed import timed  # noqa: E402
from tests.workspace import copy_project  # noqa: E402


def chunk_peaks(work):
    """Each chunk job's max_rss (MB), from its rule's benchmark file."""
    peaks = []
    for tsv in (work / "benchmarks/out/robustness").glob("*/chunk-*.tsv"):
        header, row = tsv.read_text().splitlines()[:2]
        fields = dict(zip(header.split("\t"), row.split("\t")))
        peaks.append(float(fields["max_rss"]))
    return sorted(peaks, reverse=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--per-process", type=int, default=2, help="seeds per experiment run one process each")
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="articlekit-robustness-"))
    work = copy_project(tmp / "project")
    config = yaml.safe_load((work / args.configfile).read_text())
    section = {**config["robustness"], "seeds": args.seeds}
    (work / "config/bench.yaml").write_text(yaml.safe_dump({"robustness": section}))
    configfiles = ["--configfile", args.configfile, "config/bench.yaml"]  # last: it takes every word after it
    snake = ["snakemake", "--cores", str(args.cores)]
    excluded = set(section.get("exclude") or {})
    seeded = [
        name
        for name in config["experiments"]
        if isinstance((config.get(name) or {}).get("seed"), int) and name not in excluded
    ]
    try:
        print(f"seeded experiments: {', '.join(seeded)}; left out: {', '.join(sorted(excluded)) or 'none'}")
        timed([*snake, *(f"results/{name}.json" for name in seeded), *configfiles], work)  # not timed

        wall, cpu, peak, _ = timed([*snake, "robustness", *configfiles], work)
        report = json.loads((work / "build/robustness.json").read_text())
        runs = report["values"]["sweep"]["runs"]
        jobs = chunk_peaks(work)
        together = sum(jobs[: args.cores])
        print(
            f"\nsweep, {args.seeds} seeds x {len(seeded)} experiments = {runs} runs "
            f"({report['values']['sweep']['failed_runs']} failed), {len(jobs)} chunk jobs on {args.cores} cores:"
        )
        print(f"  wall {wall:7.1f} s   CPU {cpu:7.1f} s   (target: under 60 s wall for 100 seeds on 2 cores)")
        print(
            f"  peak memory: largest process {peak:.0f} MB; the {args.cores} largest chunk jobs together "
            f"{together:.0f} MB (target: under 2048 MB)"
        )

        print(f"\none process per seed, {args.per_process} seeds of each experiment measured:")
        serial_wall = serial_cpu = 0.0
        for name in seeded:
            params = dict(config.get(name) or {})
            walls, cpus = [], []
            for seed in sweep_seeds(params["seed"], 0, args.per_process):
                one = json.dumps({**params, "seed": seed})
                out = tmp / f"{name}-{seed}.json"
                one_wall, one_cpu, _, _ = timed(
                    [sys.executable, "-m", f"experiments.{name}", "--params", one, "--json", str(out)], work
                )
                walls.append(one_wall)
                cpus.append(one_cpu)
            serial_wall += statistics.mean(walls) * args.seeds
            serial_cpu += statistics.mean(cpus) * args.seeds
            print(
                f"  {name:16s} {statistics.mean(walls):6.2f} s wall, {statistics.mean(cpus):6.2f} s CPU "
                f"per seed-process (mean of {len(walls)})"
            )
        extrapolated = serial_wall / args.cores
        print(
            f"  {args.seeds} seeds of each, EXTRAPOLATED from those means: {serial_cpu:7.1f} s CPU, "
            f"{extrapolated:7.1f} s wall if {args.cores} cores shared them perfectly"
        )
        print(
            f"\nratio, one process per seed / the sweep: {extrapolated / wall:.1f}x wall, {serial_cpu / cpu:.1f}x CPU"
        )
    finally:
        if args.keep:
            print(f"\nkept: {work}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
