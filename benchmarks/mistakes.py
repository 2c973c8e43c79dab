"""How long each of a new author's mistakes takes to get its message, in a fresh skeleton.

    python benchmarks/mistakes.py [--rounds 3] [--articlekit DIR] [--keep]

Writes the skeleton of `python -m articlekit new` into a temporary folder,
builds it once (Pandoc, so Quarto's start-up is not measured), and then,
for each mistake of issue 27, copies the built folder, makes the mistake
as an author would and times `snakemake --cores 2` there, from its start
to its exit, `--rounds` times. Printed for each: the median seconds (with
the range), whether articlekit's message was the last line of the
terminal, and that last line. `snakemake --version` is timed in the same
rounds: the start-up no build can avoid, to read the rest against.

--articlekit runs another checkout's articlekit (its folder goes first on
PYTHONPATH; the skeleton is that checkout's too): run it with an earlier
checkout and with this one to compare before and after. Mistakes whose
message that checkout does not give are shown with the last line it did
print.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    if old not in text:
        sys.exit(f"{old!r} is not in {path}: the skeleton changed, fix the benchmark's mistake")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def no_run_experiment(folder):
    edit(
        folder / "experiments/harmonic.py",
        'if __name__ == "__main__":\n    run_experiment("harmonic", run, plot)\n',
        "",
    )


def yaml_tab(folder):
    edit(folder / "config.yaml", "  n: 1000", "\tn: 1000")


def too_few_rounds(folder):
    edit(folder / "config.yaml", "  rounds: 9 ", "  rounds: 3 ")


def seed_as_text(folder):
    schema = folder / "config/schema.yaml"
    if schema.exists():
        schema.unlink()
    edit(
        folder / "experiments/harmonic.py",
        '    n = params["n"]\n',
        '    n = params["n"]\n    import numpy\n    numpy.random.default_rng(params["seed"])\n',
    )
    edit(folder / "config.yaml", "  n: 1000 ", '  seed: "2026x"\n  n: 1000 ')


def crashing_rerun(folder):
    edit(folder / "experiments/harmonic.py", '    n = params["n"]\n', '    n = params["n"]\n    raise ValueError(n)\n')


def override_of_another_type(folder):
    schema = folder / "config/schema.yaml"
    if schema.exists():
        schema.unlink()
    (folder / "config").mkdir(exist_ok=True)
    (folder / "config/test.yaml").write_text("harmonic:\n  n: 1000x\n")
    return ["--configfile", "config/test.yaml"]


# (the friction of issue 27, the mistake, what the message starts with)
MISTAKES = [
    ("1 no run_experiment(...) line", no_run_experiment, "harmonic: experiments/harmonic.py ran but never called"),
    ("3 a tab in config.yaml", yaml_tab, "config.yaml:"),
    ("4 rounds: 3 (range)", too_few_rounds, "  config.yaml:"),
    ("4 n: 1000x in a --configfile (type)", override_of_another_type, "  config/test.yaml:"),
    ('4 seed: "2026x", no schema (type)', seed_as_text, "  config.yaml:"),
    ("5+7 a rerun that raises", crashing_rerun, "harmonic: failed: experiments/harmonic.py:"),
]


def snakemake(folder, env, *args):
    started = time.perf_counter()
    done = subprocess.run(
        ["snakemake", "--cores", "2", "--config", "renderer=pandoc", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return time.perf_counter() - started, done


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--articlekit", type=Path, default=ROOT, help="the checkout whose articlekit runs")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    checkout = args.articlekit.resolve()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))}
    work = Path(tempfile.mkdtemp(prefix="articlekit-mistakes-"))
    try:
        built = work / "built"
        # run outside this checkout: `python -m` puts the working folder first on the path
        subprocess.run(
            [sys.executable, "-m", "articlekit", "new", str(built)], env=env, check=True, capture_output=True, cwd=work
        )
        seconds, done = snakemake(built, env)
        if done.returncode != 0:
            sys.exit(f"the skeleton did not build:\n{done.stderr[-3000:]}")
        print(f"articlekit from {checkout}; load {os.getloadavg()[0]:.2f}; the skeleton built in {seconds:.1f} s")
        startup = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            subprocess.run(["snakemake", "--version"], env=env, capture_output=True, check=True)
            startup.append(time.perf_counter() - started)
        print(f"snakemake --version: {statistics.median(startup):.2f} s\n")
        print(f"{'mistake':<38} {'seconds to its message':>24}  last  the terminal's last line")
        for label, make, message in MISTAKES:
            times, last = [], ""
            for round_ in range(args.rounds):
                folder = work / f"{make.__name__}-{round_}"
                shutil.copytree(built, folder, symlinks=True)
                extra = make(folder) or []
                seconds, done = snakemake(folder, env, *extra)
                times.append(seconds)
                lines = done.stderr.rstrip().splitlines()
                last = lines[-1] if lines else ""
            spread = f"{statistics.median(times):.1f} ({min(times):.1f}-{max(times):.1f})"
            mark = "yes" if last.startswith(message) else "no"
            print(f"{label:<38} {spread:>24}  {mark:<4}  {last[:110]}")
    finally:
        if args.keep:
            print(f"\nkept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
