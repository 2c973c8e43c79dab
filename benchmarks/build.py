"""Time the build the way its users meet it, in a fresh copy of the project.

    python benchmarks/build.py [--cores 2] [--configfile config.yaml] [--keep]

Four scenarios, each timed wall-clock around one `snakemake` call:
  cold      everything from nothing (experiments, article, audit, diff)
  no-op     nothing changed: Snakemake should only check and exit
  touch     experiments/scaling.py touched: only scaling and what reads it
  prose     one sentence added to the article: render steps only, no experiment

Prints a table of seconds and the rules each scenario ran. Targets on the
2-core development machine: cold under 60 s, no-op under 3 s.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.workspace import copy_environment, copy_project  # noqa: E402

FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")


def timed_build(workdir, cores, configfile):
    cmd = ["snakemake", "--cores", str(cores), "--configfile", configfile]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=workdir, env=copy_environment(workdir), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"build failed in {workdir}:\n{proc.stderr[-3000:]}")
    rules = sorted(set(FINISHED.findall(proc.stderr)))
    return seconds, rules


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="attention-bench-"))
    work = copy_project(tmp / "project")
    print(f"benchmarking in {work} with --cores {args.cores}", file=sys.stderr)

    def touch_experiment():
        (work / "experiments/scaling.py").touch()

    def edit_prose():
        article = work / "article/index.qmd"
        article.write_text(article.read_text() + "\nOne more sentence, with no number in it.\n")

    scenarios = [("cold", None), ("no-op", None), ("touch", touch_experiment), ("prose", edit_prose)]
    rows = []
    for name, change in scenarios:
        if change:
            time.sleep(1.1)  # so the change is newer than the outputs on coarse clocks
            change()
        seconds, rules = timed_build(work, args.cores, args.configfile)
        rows.append((name, seconds, rules))
        print(f"  {name}: {seconds:.1f} s", file=sys.stderr)

    print(f"\n{'scenario':<8} {'seconds':>8}  rules run")
    for name, seconds, rules in rows:
        print(f"{name:<8} {seconds:>8.1f}  {', '.join(rules) or '(none)'}")
    if not args.keep:
        import shutil

        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
