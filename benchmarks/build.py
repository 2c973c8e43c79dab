"""What a rebuild costs, as a multiple of Snakemake's own start-up, in a fresh copy of the project.

    python benchmarks/build.py [--rounds 5] [--cores 2] [--configfile config.yaml] [--keep]

A ratio measured in one run holds still where absolute seconds do not (these
machines are shared): each round times `snakemake --version` (the start-up
no build can avoid: Python, Snakemake and its plugins importing), then a
no-op build, then a build after a one-sentence prose edit, back to back,
and divides each build by that round's start-up. Printed: the median and
the range over the rounds, by the wall clock and by CPU time (the build's
processes and all their children), plus the cold build and which rules each
scenario ran.

Targets (issue 18): no-op under 1.5x the start-up, a prose edit under 4x.
"""

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.workspace import copy_environment, copy_project  # noqa: E402

FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")


def timed(command, workdir):
    """(wall seconds, CPU seconds of the process and its children, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=workdir, env=copy_environment(workdir), capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed in {workdir}:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stderr


def summary(ratios):
    return f"{statistics.median(ratios):5.2f}x  [{min(ratios):.2f}, {max(ratios):.2f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="articlekit-bench-"))
    work = copy_project(tmp / "project")
    build = ["snakemake", "--cores", str(args.cores), "--configfile", args.configfile]
    print(f"benchmarking in {work}: {' '.join(build)}", file=sys.stderr)
    try:
        cold_wall, _, log = timed(build, work)
        cold_rules = sorted(set(FINISHED.findall(log)))
        article = work / "article/index.qmd"
        ratios = {"no-op": ([], []), "prose": ([], [])}
        rules = {}
        for round_number in range(1, args.rounds + 1):
            start_wall, start_cpu, _ = timed(["snakemake", "--version"], work)
            for scenario in ratios:
                if scenario == "prose":
                    time.sleep(1.1)  # the edit newer than the outputs on coarse clocks
                    with article.open("a", encoding="utf-8") as f:
                        f.write(f"\nAnother sentence for round {'i' * round_number}, with no digits.\n")
                wall, cpu, log = timed(build, work)
                ratios[scenario][0].append(wall / start_wall)
                ratios[scenario][1].append(cpu / start_cpu)
                rules[scenario] = sorted(set(FINISHED.findall(log)) - {"all"})
            print(f"  round {round_number}: start-up {start_wall:.2f} s", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(tmp)

    print(f"cold build: {cold_wall:.1f} s wall ({len(cold_rules)} rules)")
    print(f"\n{'scenario':<8} {'wall / start-up':>22} {'CPU / start-up':>22}  rules run  ({args.rounds} rounds)")
    for scenario, (wall, cpu) in ratios.items():
        print(f"{scenario:<8} {summary(wall):>22} {summary(cpu):>22}  {', '.join(rules[scenario]) or '(none)'}")
    print("\ntargets: no-op under 1.5x, prose under 4x (median, wall)")


if __name__ == "__main__":
    main()
