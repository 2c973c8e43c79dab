"""How still the headline loop-vs-matrix ratio holds, run after run and under load.

    python benchmarks/timing_stability.py [--cores 2] [--configfile config.yaml] [--keep]

Runs the timing rule (`snakemake --forcerun timing results/timing.json`) in a
fresh copy of the project three times, then a fourth time beside a busy
process: a child this script starts, which keeps one core spinning, and
stops (by its own PID) as soon as the run ends. For each run it prints the
ratio with its 95 % interval, the claim's outcome and the load average;
then the spread of the quiet runs, (max - min) / median, and the drift of
the loaded run from the quiet median.

Targets: spread under 10 % on a quiet machine; beside one busy core the
ratio within 25 % of the quiet median, and the claim never flips.
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
from tests.workspace import copy_environment, copy_project  # noqa: E402

CLAIM = "> 1"  # the article's claim on timing.main.speedup.estimate
SPIN = "while True:\n    pass\n"


def timing_run(work, cores, configfile):
    """One run of the timing rule; its ratio, interval and the load around it."""
    # the target first: --forcerun takes every word that follows it
    cmd = ["snakemake", "results/timing.json", "--cores", str(cores), "--configfile", configfile,
           "--forcerun", "timing"]
    proc = subprocess.run(cmd, cwd=work, env=copy_environment(work), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the timing rule failed in {work}:\n{proc.stderr[-3000:]}")
    values = json.loads((work / "results/timing.json").read_text())["values"]
    speedup = values["main"]["speedup"]
    return {
        "ratio": speedup["estimate"],
        "low": speedup["low"],
        "high": speedup["high"],
        "claim": evaluate(CLAIM, Interval(speedup["estimate"], speedup["low"], speedup["high"])).status,
        "load": values["load"]["before"][0],
        "wall_ratio": statistics.median(
            a / b for a, b in zip(values["main"]["loop"]["wall_samples_ms"],
                                  values["main"]["matrix"]["wall_samples_ms"])),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="attention-timing-"))
    try:
        work = copy_project(tmp / "project")
        print(f"timing runs in {work} with --cores {args.cores}; load now "
              f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
        runs = []
        for i in range(3):
            runs.append(("as found", timing_run(work, args.cores, args.configfile)))
            print(f"  run {i + 1}: {runs[-1][1]['ratio']:.2f}x", file=sys.stderr)
        spinner = subprocess.Popen([sys.executable, "-c", SPIN])
        try:
            runs.append(("+1 busy core", timing_run(work, args.cores, args.configfile)))
        finally:
            spinner.terminate()
            spinner.wait(timeout=10)
        print(f"  loaded run: {runs[-1][1]['ratio']:.2f}x", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print(f"\n{'run':<14} {'ratio':>6}  {'95 % interval':<14} {'claim ' + CLAIM:<13} {'load 1 min':>10}  "
          f"{'wall-clock ratio':>16}")
    for name, r in runs:
        print(f"{name:<14} {r['ratio']:>6.2f}  [{r['low']:.2f}, {r['high']:.2f}]{'':<1} {r['claim']:<13} "
              f"{r['load']:>10.2f}  {r['wall_ratio']:>16.2f}")
    first_three = [r["ratio"] for _, r in runs[:3]]
    median = statistics.median(first_three)
    spread = (max(first_three) - min(first_three)) / median
    drift = runs[-1][1]["ratio"] / median - 1
    flipped = len({r["claim"] for _, r in runs}) > 1
    print(f"\nspread of the first three runs (max - min) / median: {spread:.1%}   (target < 10 % on a quiet machine)")
    print(f"drift of the run beside a busy core from their median: {drift:+.1%}   (target within 25 %)")
    print(f"claim '{CLAIM}' outcome: {'FLIPPED' if flipped else 'the same in every run'} "
          f"({', '.join(r['claim'] for _, r in runs)})")


if __name__ == "__main__":
    main()
