"""From saving a prose edit to the new page on disk: Snakemake against the preview.

    python benchmarks/preview.py [--cores 2] [--configfile config/test.yaml] [--edits 10] [--before 3]

In a fresh copy of the project, after one untimed full build:
  before   each edit saved, then `snakemake --cores N` (what an author does
           without the preview): seconds until it exits, build/article.html written
  after    `python -m articlekit preview` running; each edit saved, then the
           seconds until build/preview/article.html holds the edit (polled
           every 5 ms), and the CPU seconds the preview spent on it

Prints the median and the maximum of each. Target: the preview under 1 s
on the 2-core development machine. The CPU figure is there because wall
time on a shared machine measures the neighbours too.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.workspace import copy_environment, copy_project  # noqa: E402

ANCHOR = "fits on one line"
TICKS = os.sysconf("SC_CLK_TCK")


def edit(article, i):
    """A prose edit: one sentence changed, its marker the edit's number."""
    text = article.read_text(encoding="utf-8")
    start = text.index(ANCHOR)
    end = text.index(":", start)
    article.write_text(text[:start] + f"{ANCHOR} (edit {i})" + text[end:], encoding="utf-8")
    return f"(edit {i})"


def cpu_seconds(pid):
    """User + system time of a process and of the children it has waited for (Pandoc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS


def snakemake(work, cores, configfile):
    cmd = ["snakemake", "--cores", str(cores), "--configfile", configfile]
    done = subprocess.run(cmd, cwd=work, env=copy_environment(work), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"snakemake failed in {work}:\n{done.stderr[-3000:]}")


def before(work, args):
    article, page, seconds = work / "article/index.qmd", work / "build/article.html", []
    for i in range(args.before):
        time.sleep(1.1)  # newer than the outputs on coarse clocks
        start = time.perf_counter()
        marker = edit(article, f"s{i}")
        snakemake(work, args.cores, args.configfile)
        seconds.append(time.perf_counter() - start)
        assert marker in page.read_text(encoding="utf-8")
    return seconds


def after(work, args):
    article, page = work / "article/index.qmd", work / "build/preview/article.html"
    proc = subprocess.Popen([sys.executable, "-m", "articlekit", "preview", "--port", "0", "--interval", "0.02"],
                            cwd=work, env=copy_environment(work), stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()  # the URL
        proc.stdout.readline()  # the first render
        seconds, cpu = [], []
        for i in range(args.edits):
            time.sleep(0.3)
            cpu_start = cpu_seconds(proc.pid)
            start = time.perf_counter()
            marker = edit(article, i)
            while not (page.exists() and marker in page.read_text(encoding="utf-8")):
                time.sleep(0.005)
                if time.perf_counter() - start > 120:
                    sys.exit("the preview did not render the edit within 120 s")
            seconds.append(time.perf_counter() - start)
            proc.stdout.readline()  # "preview: rendered (...)": the render is over
            cpu.append(cpu_seconds(proc.pid) - cpu_start)
    finally:
        proc.send_signal(2)  # Ctrl-C
        proc.wait(timeout=30)
    return seconds, cpu


def row(name, values, unit="s"):
    return f"{name:<30} {statistics.median(values):>7.2f} {max(values):>7.2f}  {unit}, n={len(values)}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config/test.yaml")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--before", type=int, default=3, help="edits timed through snakemake")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="attention-preview-bench-") as tmp:
        work = copy_project(Path(tmp) / "project")
        print(f"building once in {work} (untimed) ...", file=sys.stderr)
        snakemake(work, args.cores, args.configfile)
        load = os.getloadavg()[0]
        print("timing snakemake ...", file=sys.stderr)
        slow = before(work, args)
        print("timing the preview ...", file=sys.stderr)
        fast, cpu = after(work, args)
        load = max(load, os.getloadavg()[0])
    print(f"{'save -> page on disk':<30} {'median':>7} {'max':>7}")
    print(row("snakemake (before)", slow))
    print(row("preview (after)", fast))
    print(row("preview CPU per edit", cpu, "CPU s"))
    print(f"(--cores {args.cores}, {args.configfile}; 1-minute load average up to {load:.1f} on "
          f"{os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
