"""Does a rerun of the timing land inside the interval the article printed?

    python benchmarks/timing_stability.py [--reruns 5] [--cores 2] [--configfile config.yaml]
                                          [--commit REV] [--no-busy] [--keep]

Builds the timing (`snakemake results/timing.json --forcerun timing`: every
run of the experiment and the step that combines them) in a fresh copy of
the project, once as the article would print it, then `--reruns` times
more, one after another, as `articlekit reproduce` would rerun it; then,
unless --no-busy, once more beside a busy process: a child this script
starts, which keeps one core spinning, and stops (by its own PID) as soon
as that build ends. --commit REV builds an earlier commit instead of this
tree (what the figure was before a change).

For each build it prints the headline ratio (loop / matrix, one thread),
its interval, whether its runs agreed, how many ran loaded, and the
one-minute load average before and after; then the figure the project is
held to: how many reruns' ratios land inside the first build's printed
interval (the goal: at least 4 of 5 on one machine), how many of their
intervals overlap it, and whether the claim's outcome was the same in
every build. The busy build is reported apart, beside the reruns' median.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from articlekit.core.claims import Interval, evaluate  # noqa: E402
from tests.workspace import copy_commit, copy_environment, copy_project  # noqa: E402

CLAIM = "> 1"  # the article's claim on timing.main.speedup.estimate
SPIN = "while True:\n    pass\n"
GOAL = 0.8  # of the reruns inside the first build's interval


def timing_build(work, cores, configfile):
    """One build of the timing artifact; its ratio, interval, runs and the load around it."""
    # the target first: --forcerun takes every word that follows it
    cmd = [
        "snakemake",
        "results/timing.json",
        "--cores",
        str(cores),
        "--configfile",
        configfile,
        "--forcerun",
        "timing",
    ]
    load_before = os.getloadavg()[0]
    proc = subprocess.run(cmd, cwd=work, env=copy_environment(work), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the timing failed in {work}:\n{proc.stderr[-3000:]}")
    values = json.loads((work / "results/timing.json").read_text())["values"]
    speedup = values["main"]["speedup"]
    runs = values.get("runs") or {}  # an earlier commit's artifact has one run and no such group
    return {
        "ratio": speedup["estimate"],
        "low": speedup["low"],
        "high": speedup["high"],
        "claim": evaluate(CLAIM, Interval(speedup["estimate"], speedup["low"], speedup["high"])).status,
        "runs": runs.get("count", 1),
        "agree": runs.get("agree"),
        "loaded": (values["load"].get("loaded_count") if "loaded_count" in values["load"] else None),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def inside(build, reference):
    return reference["low"] <= build["ratio"] <= reference["high"]


def overlaps(build, reference):
    return build["low"] <= reference["high"] and reference["low"] <= build["high"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reruns", type=int, default=5, help="builds after the first (default 5)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--commit", help="build this commit of the repository instead of the working tree")
    parser.add_argument("--no-busy", action="store_true", help="leave out the build beside a busy core")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="attention-timing-"))
    builds = []
    try:
        work = copy_commit(tmp / "project", args.commit) if args.commit else copy_project(tmp / "project")
        print(
            f"timing builds in {work} ({args.commit or 'this tree'}) with --cores {args.cores}; load now "
            f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs",
            file=sys.stderr,
        )
        for i in range(1 + args.reruns):
            builds.append(("printed" if i == 0 else f"rerun {i}", timing_build(work, args.cores, args.configfile)))
            print(f"  {builds[-1][0]}: {builds[-1][1]['ratio']:.2f}x", file=sys.stderr)
        if not args.no_busy:
            spinner = subprocess.Popen([sys.executable, "-c", SPIN])
            try:
                builds.append(("+1 busy core", timing_build(work, args.cores, args.configfile)))
            finally:
                spinner.terminate()
                spinner.wait(timeout=10)
            print(f"  beside a busy core: {builds[-1][1]['ratio']:.2f}x", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    first = builds[0][1]
    reruns = [b for name, b in builds[1 : 1 + args.reruns]]
    print(
        f"\n{'build':<13} {'ratio':>6}  {'interval':<16} {'claim ' + CLAIM:<13} {'runs':>4} {'agree':>5} "
        f"{'loaded':>6}  {'load before':>11} {'after':>6}  {'in printed':>10}"
    )
    for name, b in builds:
        agree = "-" if b["agree"] is None else ("yes" if b["agree"] else "NO")
        loaded = "-" if b["loaded"] is None else str(b["loaded"])
        landed = "" if b is first else ("yes" if inside(b, first) else "no")
        print(
            f"{name:<13} {b['ratio']:>6.2f}  [{b['low']:6.2f}, {b['high']:6.2f}] {b['claim']:<13} {b['runs']:>4} "
            f"{agree:>5} {loaded:>6}  {b['load_before']:>11.2f} {b['load_after']:>6.2f}  {landed:>10}"
        )
    landed = sum(inside(b, first) for b in reruns)
    overlapping = sum(overlaps(b, first) for b in reruns)
    loads = [x for _, b in builds for x in (b["load_before"], b["load_after"])]
    print(
        f"\nreruns whose ratio lands inside the printed interval [{first['low']:.2f}, {first['high']:.2f}]: "
        f"{landed} of {len(reruns)}   (goal: at least {GOAL:.0%})"
    )
    print(f"reruns whose interval overlaps it: {overlapping} of {len(reruns)}")
    print(f"one-minute load average over the builds: {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} CPUs")
    if reruns:
        median = statistics.median(b["ratio"] for b in reruns)
        print(
            f"median of the reruns: {median:.2f}; spread (max - min) / median: "
            f"{(max(b['ratio'] for b in reruns) - min(b['ratio'] for b in reruns)) / median:.1%}"
        )
        if not args.no_busy:
            busy = builds[-1][1]
            print(
                f"beside a busy core: {busy['ratio']:.2f} ({busy['ratio'] / median - 1:+.1%} from that median), "
                f"{'inside' if inside(busy, first) else 'outside'} the printed interval"
            )
    flipped = len({b["claim"] for _, b in builds}) > 1
    print(
        f"claim '{CLAIM}' outcome: {'FLIPPED' if flipped else 'the same in every build'} "
        f"({', '.join(b['claim'] for _, b in builds)})"
    )


if __name__ == "__main__":
    main()
