"""What a rebuild costs, as a multiple of Snakemake's own start-up, in a fresh copy of the project.

    python benchmarks/build.py [--rounds 5] [--cores 2] [--configfile config.yaml] [--keep] [--project DIR]

--project copies another checkout instead of this one (a worktree of an
earlier commit, say): run both in turn to compare a change's before and after.

A ratio measured in one run holds still where absolute seconds do not (these
machines are shared): each round times `snakemake --version` (the start-up
no build can avoid: Python, Snakemake and its plugins importing), then a
no-op build, then a build after a one-sentence prose edit, back to back,
and divides each build by that round's start-up. Printed: the median and
the range over the rounds, by the wall clock and by CPU time (the build's
processes and all their children), plus the cold build, which rules each
scenario ran and, for the prose edit, each job's seconds (from its rule's
benchmark: file, benchmarks/out/RULE.tsv).

The same rounds time Snakemake alone, a one-rule workflow beside the copy:
its no-op, and a run of its one job. That is the floor no article can go
under: Snakemake's own plan, and for any build that runs a job, the second
or so it waits before it exits (its job-rate limiter's timer, which the
default --max-jobs-per-timespan 100/1s starts after each round of jobs).

Targets (issue 18): no-op under 1.5x the start-up, a prose edit under 4x.
"""

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.timed import timed  # noqa: E402
from tests.workspace import PROJECT_ROOT, copy_project  # noqa: E402

FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")

# Snakemake alone: one rule, one job.
BARE_SNAKEFILE = """rule one:
    output:
        "one.txt",
    shell:
        "touch {output}"
"""


def summary(ratios):
    return f"{statistics.median(ratios):5.2f}x  [{min(ratios):.2f}, {max(ratios):.2f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    parser.add_argument("--project", type=Path, default=PROJECT_ROOT, help="the checkout to copy (default: this one)")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="articlekit-bench-"))
    work = copy_project(tmp / "project", root=args.project.resolve())
    bare = tmp / "snakemake-alone"
    bare.mkdir()
    (bare / "Snakefile").write_text(BARE_SNAKEFILE, encoding="utf-8")
    build = ["snakemake", "--cores", str(args.cores), "--configfile", args.configfile]
    print(f"benchmarking in {work}: {' '.join(build)}", file=sys.stderr)
    try:
        cold_wall, _, _, log = timed(build, work)
        cold_rules = sorted(set(FINISHED.findall(log)))
        timed(["snakemake", "--cores", "1"], bare)
        article = work / "article/index.qmd"
        ratios = {scenario: ([], []) for scenario in ("no-op", "prose", "alone, no-op", "alone, 1 job")}
        rules, job_seconds = {}, {}
        for round_number in range(1, args.rounds + 1):
            start_wall, start_cpu, _, _ = timed(["snakemake", "--version"], work)
            for scenario in ratios:
                if scenario == "prose":
                    time.sleep(1.1)  # the edit newer than the outputs on coarse clocks
                    with article.open("a", encoding="utf-8") as f:
                        f.write(f"\nAnother sentence for round {'i' * round_number}, with no digits.\n")
                if scenario == "alone, 1 job":
                    (bare / "one.txt").unlink()
                if scenario.startswith("alone"):
                    wall, cpu, _, log = timed(["snakemake", "--cores", str(args.cores)], bare)
                else:
                    wall, cpu, _, log = timed(build, work)
                ratios[scenario][0].append(wall / start_wall)
                ratios[scenario][1].append(cpu / start_cpu)
                rules[scenario] = sorted(set(FINISHED.findall(log)) - {"all"})
                if scenario == "prose":
                    job_seconds = {rule: benchmark_seconds(work, rule) for rule in rules[scenario]}
            print(f"  round {round_number}: start-up {start_wall:.2f} s", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(tmp)

    print(f"cold build: {cold_wall:.1f} s wall ({len(cold_rules)} rules)")
    print(f"\n{'scenario':<13} {'wall / start-up':>22} {'CPU / start-up':>22}  rules run  ({args.rounds} rounds)")
    for scenario, (wall, cpu) in ratios.items():
        ran = ", ".join(rules[scenario]) or "(none)"
        if scenario.startswith("alone"):
            ran = "(Snakemake alone: a one-rule workflow)"
        print(f"{scenario:<13} {summary(wall):>22} {summary(cpu):>22}  {ran}")
    print("\nthe prose edit's jobs, last round (seconds, wall, from benchmarks/out/RULE.tsv; up to "
          f"{args.cores} run at once):")
    print("  " + ", ".join(f"{rule} {'?' if seconds is None else f'{seconds:.2f}'}"
                           for rule, seconds in job_seconds.items()))
    print("\ntargets: no-op under 1.5x, prose under 4x (median, wall)")


def benchmark_seconds(work, rule):
    """The wall seconds of a rule's last job, from its benchmark: file (None without one)."""
    path = work / "benchmarks" / "out" / f"{rule}.tsv"
    return float(path.read_text(encoding="utf-8").splitlines()[-1].split("\t")[0]) if path.exists() else None


if __name__ == "__main__":
    main()
