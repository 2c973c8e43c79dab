"""Why an experiment's job ended well but wrote no artifact, in its log.

    python -m articlekit.experiment.unwritten experiments.NAME --json results/NAME.json --log logs/NAME.log

The workflow runs an experiment as `python -m experiments.NAME ...`; when
that exits 0 and its artifact is not there, the rule runs this (a shell
`test -e`, nothing when the artifact is there), which writes the reason
and the fix into the job's log and exits 1, so that the job fails at once
with a sentence instead of Snakemake waiting for the file and then blaming
the file system's latency. The usual reason: the script never called
`run_experiment(...)` (it lacks the skeleton's last two lines, or they are
not under `if __name__ == "__main__":`); rarer: run_experiment started (its
log has begun) and the script exited 0 before it wrote, e.g. a
`sys.exit(0)` in run() or plot().
"""

import argparse
import ast
import importlib.util
import os
import sys
from pathlib import Path

from articlekit.core.errors import run_command
from articlekit.core.log import log

GUIDE = "docs/authoring.md"


def script_of(module):
    """The experiment's file as the article names it (experiments/NAME.py), or None."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    relative = os.path.relpath(spec.origin)
    return relative if not relative.startswith("..") else spec.origin


def the_call(name, source):
    """The line the script should end with: run_experiment("NAME", run, ...)
    with the functions it defines (plot, combine)."""
    defined = set()
    try:
        defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}
    except SyntaxError:
        pass
    arguments = [f'"{name}"', "run", *(["plot"] if "plot" in defined else [])]
    if "combine" in defined:
        arguments.append("combine=combine")
    return f"run_experiment({', '.join(arguments)})"


def calls(source):
    """The lines where the source calls run_experiment, if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "run_experiment" or getattr(node.func, "attr", None) == "run_experiment")
    )


def reason(module, json_path, log_path):
    """The sentence for the log: what happened, and the fix."""
    name = module.rpartition(".")[2]
    script = script_of(module) or f"{module.replace('.', '/')}.py"
    try:
        source = Path(script).read_text(encoding="utf-8")
    except OSError:
        source = ""
    started = log_path is not None and os.path.isfile(log_path) and os.path.getsize(log_path) > 0
    call = the_call(name, source)
    if started:
        return (
            f"{script} started run_experiment but exited (with status 0) before it wrote {json_path}: "
            "something in run() or plot() ended the process early (a sys.exit() or os._exit()); "
            "return the values from run() instead"
        )
    lines = calls(source)
    if lines:
        return (
            f"{script} ran but never called run_experiment(...): its call at line {lines[0]} did not run. "
            f'Put it at the end of the file, under `if __name__ == "__main__":` (spelt so), '
            f"as `{call}` (see {GUIDE})"
        )
    return (
        f"{script} ran but never called run_experiment(...): add `{call}` at its end, under "
        f'`if __name__ == "__main__":` (see {GUIDE})'
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m articlekit.experiment.unwritten", description=__doc__.splitlines()[0]
    )
    parser.add_argument("module", help="the experiment's module, as the rule runs it (experiments.NAME)")
    parser.add_argument("--json", required=True, help="the artifact its job should have written")
    parser.add_argument("--log", help="the job's log: the reason is added to it")
    args = parser.parse_args(argv)
    said = f"{args.module.rpartition('.')[2]}: {reason(args.module, args.json, args.log)}"
    if args.log:
        Path(args.log).parent.mkdir(parents=True, exist_ok=True)
        with open(args.log, "a", encoding="utf-8") as log_file:
            log_file.write(said + "\n")
    else:
        log.error(said)
    return 1


if __name__ == "__main__":
    sys.exit(run_command("unwritten", main, sys.argv[1:]))
