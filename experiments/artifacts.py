"""What every experiment script shares: its entry point, its artifact
envelope, and figure output.

An experiment is a pure `run(params) -> dict` plus an optional
`plot(values, params, figures)`. `run_experiment` is the thin adapter that
feeds it either from Snakemake's `script:` directive (params, outputs and log
taken from the rule, never rebuilt by hand) or from the command line.
"""

import argparse
import errno
import importlib.metadata
import logging
import platform
import sys
from pathlib import Path

import yaml

from articlekit.jsonio import DiskFull, write_json

log = logging.getLogger("experiment")

# Distributions whose version is recorded when the experiment imported them.
_TRACKED = {"numpy": "numpy", "torch": "torch", "matplotlib": "matplotlib"}


def library_versions():
    """Python plus each tracked library this process has imported."""
    versions = {"python": platform.python_version()}
    for module, dist in _TRACKED.items():
        if module in sys.modules:
            versions[dist] = importlib.metadata.version(dist)
    return versions


def envelope(name, params, values):
    """The artifact: the values with the parameters and versions that made them."""
    return {
        "experiment": name,
        "script": f"experiments/{name}.py",
        "params": params,
        "versions": library_versions(),
        "values": values,
    }


def save_figure(fig, path):
    """Write an SVG with no timestamp and stable element ids, atomically."""
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "attention-from-scratch"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fig.savefig(tmp, format="svg", metadata={"Date": None}, bbox_inches="tight")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def pyplot():
    """matplotlib.pyplot on a headless backend with the article's style."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.figsize": (6.4, 3.8),
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.fonttype": "none",  # text stays text: smaller, searchable
        }
    )
    return plt


def _configure_logging(log_file=None):
    handlers = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", handlers=handlers, force=True
    )


def _from_snakemake(smk):
    params = dict(smk.params.config)
    if "threads" in smk.params.keys():
        params["threads"] = smk.params.threads
    figures = {k: v for k, v in smk.output.items() if k != "json"}
    return params, smk.output.json, figures, (smk.log[0] if smk.log else None)


def _from_command_line(name, argv):
    parser = argparse.ArgumentParser(
        prog=f"python -m experiments.{name}",
        description=f"Run the {name} experiment by hand.",
    )
    parser.add_argument("--config", default="config.yaml", help="YAML file with a '%s' section" % name)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one parameter (VALUE is read as YAML)")
    parser.add_argument("--json", default=f"results/{name}.json", help="where to write the artifact")
    parser.add_argument("--figure", action="append", default=[], metavar="NAME=PATH",
                        help="write figure NAME to PATH")
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as f:
        # An experiment without parameters (environment) has no section.
        params = dict(yaml.safe_load(f).get(name) or {})
    for item in args.set:
        key, _, value = item.partition("=")
        params[key] = yaml.safe_load(value)
    figures = dict(item.split("=", 1) for item in args.figure)
    return params, args.json, figures, None


def run_experiment(name, run, plot=None, argv=None):
    """Run one experiment and write exactly its declared outputs."""
    smk = getattr(sys.modules["__main__"], "snakemake", None)
    if smk is not None:
        params, json_path, figures, log_file = _from_snakemake(smk)
    else:
        params, json_path, figures, log_file = _from_command_line(name, argv)
    _configure_logging(log_file)
    log.info("%s: running with %s", name, params)
    values = run(params)
    try:
        if plot is not None and figures:
            plot(values, params, figures)
            log.info("%s: wrote %s", name, ", ".join(map(str, figures.values())))
        write_json(json_path, envelope(name, params, values))
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        # a full disk is the machine's state, not a bug: the file and the space, no traceback
        full = exc if isinstance(exc, DiskFull) else DiskFull(exc.filename or json_path)
        sys.exit(f"{name}: {full.strerror}")
    log.info("%s: wrote %s", name, json_path)
