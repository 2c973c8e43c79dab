"""The artifact API: what an experiment script imports from articlekit.

An experiment is a pure `run(params) -> dict` plus an optional
`plot(values, params, figures)`, and ends with

    if __name__ == "__main__":
        run_experiment("scaling", run, plot)

`run_experiment` is the thin command-line adapter; the workflow module calls

    python -m experiments.scaling --params JSON --mem-mb 500 --runtime 5 \\
        --json results/scaling.json --figure sweep=figures/scaling-sweep.svg \\
        --log logs/scaling.log --library numpy

and by hand the same module takes `--config config.yaml [--config more.yaml]
[--set key=value]` instead of --params: the script's declared defaults
(its PARAMETERS), overridden by each file in turn as Snakemake merges them
(the limits then come from its experiments: entry).
An experiment whose entry says `runs: N` is run N times so, and once more
with `--combine RUN.json ...` instead of --params: its combine(runs, params)
makes the N runs' values into one artifact (articlekit.experiment.runs).
Before run(), the module's `footprint(params)`, when it has one, is
checked against those limits and the machine's free memory
(articlekit.experiment.footprint): sizes that would not fit are refused at once,
naming the key.

This module is the one owner of the artifact envelope: it writes it
(`write_artifact`, also used by `articlekit listings`) and reads it back
(`read_artifact`, used by `articlekit values`):

    {"experiment": NAME, "script": PATH, "params": {...},
     "versions": {"python": ..., DIST: ...}, "values": {...},
     "derived": {PATH: [PATH, ...]}}   # only when the experiment declares one

`derived` says which values an experiment computes from its other values
(a maximum over comparisons, a ratio of two timings), each a dotted path
into `values`: run_experiment(..., derived={"overall": ["a.diff", "b.diff"]}).
The values stage lists them (build/values.json `derived`), and `python -m
articlekit reproduce` names and recomputes the inputs of such a key.
"""

import argparse
import errno
import importlib.metadata
import inspect
import json
import logging
import os
import platform
import sys
from pathlib import Path, PurePosixPath

import yaml

from articlekit.core.errors import ArticlekitError
from articlekit.experiment import declared, footprint, progress, runs, scratch
from articlekit.core.jsonio import DiskFull, read_json, write_json
from articlekit.core.ledger import Ledger
from articlekit.core.log import CurrentStderr

log = logging.getLogger("experiment")

ENVELOPE_FIELDS = ("experiment", "script", "values")
# The param `--threads N` adds at run time (a job that takes every core):
# recorded in the envelope's params, though no config file holds it.
THREADS_PARAM = "threads"

# Top-level packages that drew the figures save_figure wrote during this
# run_experiment: their versions are recorded like the --library ones.
_drawn_with = []
# The files save_figure wrote during this run_experiment (resolved paths):
# what plot() wrote, told apart from what it was asked to write.
_saved = []
# The keys of the values plot() draws (figure_text.value_keys): no figure
# save_figure writes may show one as its text.
_value_keys = []


# ---- the envelope ----------------------------------------------------------------


def library_versions(libraries=()):
    """Python's version, then each distribution in `libraries` that this
    process imported. A library the run never imported is left out: its
    version says nothing about the result."""
    versions = {"python": platform.python_version()}
    for name in libraries:
        if name not in versions and _imported(name):
            versions[name] = importlib.metadata.version(name)
    return versions


def _imported(distribution):
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return any(module in sys.modules for module in _top_level_modules(dist))


def _top_level_modules(dist):
    """The importable names a distribution installs (top_level.txt, else its
    file list): one distribution may install several packages."""
    listed = (dist.read_text("top_level.txt") or "").split()
    if listed:
        return listed
    found = set()
    for file in dist.files or []:
        top = PurePosixPath(file).parts[0]
        name = top.removesuffix(".py")
        if name.isidentifier():
            found.add(name)
    return sorted(found) or [dist.metadata["Name"].replace("-", "_").lower()]


def envelope(experiment, script, params, values, versions, derived=None):
    """The artifact: the values with the parameters and versions that made
    them, and which of them are derived from which (when any are)."""
    made = {"experiment": experiment, "script": str(script), "params": params, "versions": versions, "values": values}
    if derived:
        made["derived"] = {path: list(inputs) for path, inputs in derived.items()}
    return made


def write_artifact(path, experiment, script, params, values, libraries=(), derived=None):
    """Write the envelope atomically (articlekit.core.jsonio): a killed run leaves
    the old artifact or the new one, never half of one."""
    write_json(path, envelope(experiment, script, params, values, library_versions(libraries), derived))


def check_envelope(path, artifact):
    """Raise ValueError naming the file when `artifact` is not an envelope."""
    if not isinstance(artifact, dict):
        raise ArticlekitError(f"{path}: not an experiment artifact (a {type(artifact).__name__}, not an object)")
    for field in ENVELOPE_FIELDS:
        if field not in artifact:
            raise ArticlekitError(f"{path}: not an experiment artifact (no {field!r} field)")
    derived = artifact.get("derived", {})
    if not (
        isinstance(derived, dict)
        and all(
            isinstance(inputs, list) and inputs and all(isinstance(i, str) for i in inputs)
            for inputs in derived.values()
        )
    ):
        raise ArticlekitError(
            f"{path}: 'derived' must map a value's path to the paths it is computed from, "
            f"e.g. {{\"overall\": [\"a.diff\", \"b.diff\"]}}, got {derived!r}"
        )
    return artifact


def read_artifact(path):
    """An experiment's envelope, or a ValueError that says how to get a good
    one back: the file is built, so rebuilding it is the fix."""
    try:
        return check_envelope(path, read_json(path))
    except ValueError as exc:
        raise ArticlekitError(
            f"{exc}\n  {path} is an experiment's output, not a source: delete it and run snakemake again to rebuild it"
        ) from None


# ---- figures ---------------------------------------------------------------------


def pyplot():
    """matplotlib.pyplot on a headless backend with a plain article style."""
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


def save_figure(fig, path, alt=None, keys=()):
    """Write an SVG with no timestamp and stable element ids, atomically.

    The ids are salted with the file's name, so they differ between figures
    (two inlined SVGs cannot clash) and stay the same between builds.
    alt: what the figure shows and its headline number, made from the
    values it plots ("Unscaled, one key takes 0.97 of the weight at d_k =
    512"); the SVG's title is that sentence followed by what each panel
    plots, read from the figure (figure_text.alt_text), and the page shows
    it as the image's alt text.

    A figure whose drawn text shows a value's key instead of words is
    refused (figure_text.check_words, KeyInFigure), nothing written: a
    dotted lowercase path of 3 parts or more, the run's own values' keys,
    or one of `keys` (a figure drawn outside run_experiment names its own)."""
    import matplotlib

    from articlekit.experiment.figure_text import alt_text, check_words

    path = Path(path)
    matplotlib.rcParams["svg.hashsalt"] = path.name
    library = type(fig).__module__.partition(".")[0]
    if library not in _drawn_with:
        _drawn_with.append(library)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fig.savefig(tmp, format="svg", metadata={"Date": None, "Title": alt_text(fig, alt)}, bbox_inches="tight")
        # checked once drawn: only then are the tick labels' texts set
        check_words(fig, scratch.shown(path), [*_value_keys, *keys])
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    _saved.append(str(path.resolve()))


# ---- the entry point -------------------------------------------------------------


def configure_logging(log_file=None):
    """To the log file when there is one, else to stderr. The workflow names
    the log, and articlekit prints what a failed job's log says at the end
    of the terminal (articlekit/workflow/failures.py), on a cluster too,
    where the job's stderr is nowhere in sight: every message and traceback
    must be in the log, and once. Without a log file the messages go to
    sys.stderr as it is when each is said (core.log.CurrentStderr): a
    process that runs an experiment in-process and then swaps or
    closes its stderr (pytest's capsys) loses no message and raises none."""
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers = [logging.FileHandler(log_file, mode="w", encoding="utf-8")]
    else:
        handlers = [CurrentStderr(name="experiment-stderr")]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", handlers=handlers, force=True)


def _parser(name):
    parser = argparse.ArgumentParser(
        prog=f"python -m experiments.{name}",
        description=f"Run the {name} experiment: write its artifact and figures.",
    )
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--params", metavar="JSON", help="the parameters as a JSON object (what the workflow passes)")
    given.add_argument(
        "--config",
        metavar="FILE",
        action="append",
        help=f"by hand: a YAML config that may set the {name!r} section over the script's defaults "
        "(default config.yaml; repeatable, later files override earlier ones: --config config.yaml "
        "--config config/test.yaml)",
    )
    given.add_argument(
        "--combine",
        nargs="+",
        metavar="RUN_JSON",
        help="combine the artifacts of this experiment's runs (its entry's runs: N) into one, "
        "with its combine(); the parameters are the runs'",
    )
    parser.add_argument(
        "--ledger",
        metavar="FILE",
        help="with --combine: Snakemake's record of what each rule wrote "
        "(.snakemake/articlekit/ledger.json); a run's artifact it does not vouch for is refused",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --config: override one parameter (VALUE is read as YAML)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="the cores the job was given (for an experiment that takes every core): added to the params as `threads`",
    )
    parser.add_argument(
        "--mem-mb",
        type=float,
        metavar="MB",
        help="the memory the job was given (its rule's mem_mb): sizes whose footprint exceeds it "
        "are refused before any work",
    )
    parser.add_argument(
        "--runtime",
        type=float,
        metavar="MINUTES",
        help="the time the job was given (its rule's runtime), checked likewise",
    )
    parser.add_argument("--json", default=f"results/{name}.json", help="where to write the artifact")
    parser.add_argument("--figure", action="append", default=[], metavar="NAME=PATH", help="write figure NAME to PATH")
    parser.add_argument("--log", metavar="FILE", help="also write the log to FILE")
    parser.add_argument(
        "--library",
        action="append",
        default=None,
        metavar="DIST",
        help="record DIST's version if the run imports it (repeatable); with --config the "
        "default is the file's publishing.libraries and experiments.NAME.libraries",
    )
    return parser


def _read_config(name, paths, overrides, script=None):
    """The experiment's params, libraries and limits (mem_mb, runtime: its
    entry's, else None) from config files, by hand: the script's declared
    defaults, then each file's section over them, key by key."""
    config = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            _merge(config, yaml.safe_load(f) or {})
    found = declared.declarations(script, name) if script else None
    params = found.defaults if found is not None else {}
    # An experiment without parameters (environment) has no section.
    _merge(params, dict(config.get(name) or {}))
    for item in overrides:
        key, _, value = item.partition("=")
        params[key] = yaml.safe_load(value)
    entry = (config.get("experiments") or {}).get(name) or {}
    recorded = (config.get("publishing") or {}).get("libraries") or {}
    libraries = [lib for lib in [*recorded, *(entry.get("libraries") or [])] if lib != "python"]
    return params, list(dict.fromkeys(libraries)), (entry.get("mem_mb"), entry.get("runtime"))


def _merge(base, new):
    """Snakemake's merge of config files: nested keys override one by one."""
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def parse_command_line(name, argv=None, script=None):
    """(params, json path, figures {name: path}, log file, libraries,
    limits (mem_mb, runtime in minutes; None where not given), the runs'
    artifacts to combine (None unless --combine), the ledger to hold them
    against (None unless --ledger))."""
    parser = _parser(name)
    args = parser.parse_args(argv)
    if args.combine is not None:
        if args.set or args.threads is not None:
            parser.error("--combine takes the parameters its runs recorded; --set and --threads belong to a run")
        params, libraries, limits = {}, [], (None, None)
    elif args.params is not None:
        if args.set:
            parser.error("--set changes a --config file's parameters; with --params, edit the JSON")
        try:
            params = json.loads(args.params)
        except json.JSONDecodeError as exc:
            parser.error(f"--params is not JSON ({exc})")
        if not isinstance(params, dict):
            parser.error(f"--params must be a JSON object, not {args.params!r}")
        libraries, limits = [], (None, None)
    else:
        paths = args.config or (["config.yaml"] if os.path.exists("config.yaml") or not script else [])
        try:
            params, libraries, limits = _read_config(name, paths, args.set, script)
        except declared.DeclarationError as exc:
            parser.error(str(exc))
    for flag, given in (("--mem-mb", args.mem_mb), ("--runtime", args.runtime)):
        if given is not None and not given > 0:
            parser.error(f"{flag} {given:g}: give the job's limit, a number above 0")
    limits = tuple(given if given is not None else known for given, known in zip((args.mem_mb, args.runtime), limits))
    if args.threads is not None:
        if args.threads < 1:
            parser.error(f"--threads {args.threads}: give the number of cores, at least 1")
        params[THREADS_PARAM] = args.threads
    if args.library is not None:
        libraries = args.library
    figures = {}
    for item in args.figure:
        figure, sep, path = item.partition("=")
        if not sep or not figure or not path:
            parser.error(f"--figure {item!r}: write NAME=PATH, e.g. --figure sweep=figures/{name}-sweep.svg")
        figures[figure] = path
    if args.ledger and args.combine is None:
        parser.error("--ledger holds the runs that --combine reads against Snakemake's record; give --combine")
    return params, args.json, figures, args.log, libraries, limits, args.combine, args.ledger


def _script_of(run):
    """The file that defines run(), as the artifact names it: relative to the
    working folder when it is inside it (experiments/scaling.py)."""
    path = Path(inspect.getsourcefile(run)).resolve()
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def run_experiment(name, run, plot=None, argv=None, derived=None, combine=None):
    """Run one experiment from the command line and write exactly its
    declared outputs: the artifact and the figures asked for. `derived`:
    {path: [paths]}, the values run() computes from its other values.
    `combine`: combine(runs, params), which --combine calls on the values
    of the experiment's runs instead of running it (articlekit.experiment.runs).
    A failure is logged with its traceback (or, for a parameter or figure the
    config does not declare, the line that asked and what to declare) and
    exits 1, writing nothing."""
    params, json_path, figures, log_file, libraries, (mem_mb, runtime), run_files, ledger = parse_command_line(
        name, argv, script=inspect.getsourcefile(run)
    )
    _drawn_with.clear()
    _saved.clear()
    _value_keys.clear()
    configure_logging(log_file)
    if run_files:
        params, produce = _combining(name, combine, run_files, ledger)
    else:
        params = declared.params_of(name, params)
        _check_footprint(name, run, params, mem_mb, runtime)
        log.info("%s: running with %s", name, dict(params))
        produce = lambda: run(params)  # noqa: E731
    script, artifact = _script_of(run), os.path.abspath(json_path)
    figures = {figure: os.path.abspath(path) for figure, path in figures.items()}
    try:
        # the experiment's own code runs with nothing of the project in reach
        # of a relative path (articlekit.experiment.scratch)
        # a long run says, now and then, that it still runs (a short one says nothing)
        with scratch.scratch_folder(name), progress.still_running(name, f"for {scratch.shown(artifact)}"):
            values = produce()
            if figures:
                _plot(name, plot, values, params, figures)
        write_artifact(artifact, name, script, params, values, [*libraries, *_drawn_with], derived)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            _fail(name, exc)
        # a full disk is the machine's state, not a bug: the file and the space, no traceback
        full = exc if isinstance(exc, DiskFull) else DiskFull(exc.filename or json_path)
        log.error("%s: %s", name, full.strerror)
        sys.exit(1)
    except Exception as exc:
        _fail(name, exc)
    log.info("%s: wrote %s", name, os.fspath(json_path))


def _check_footprint(name, run, params, mem_mb, runtime):
    """Stop before any work when the sizes would not fit (footprint.check_run)."""
    try:
        found = footprint.check_run(name, run, params, mem_mb, runtime)
    except footprint.SizeError as exc:
        log.error("%s", exc)  # in the job's log too, where Snakemake points
        sys.exit(1)
    if found:  # what to set mem_mb and runtime from, beside the benchmark's measure
        log.info("%s: these sizes need %s (footprint())", name, footprint.summary(found))


def _combining(name, combine, run_files, ledger=None):
    """(params, a call that combines): the runs read and checked first, so
    that a run that does not belong is one sentence, not a traceback; with
    a ledger (articlekit.core.ledger), each must be what its rule wrote."""
    if combine is None:
        log.error("%s: %s", name, runs.no_combine(name))
        sys.exit(1)
    if ledger:
        record = Ledger.load(ledger)
        unowned = [problem for problem in (record.output_problem(path, name) for path in run_files) if problem]
        if unowned:
            log.error("%s: cannot combine its runs:\n  %s", name, "\n  ".join(unowned))
            sys.exit(1)
    try:
        params, values = runs.check_runs(name, [(path, read_artifact(path)) for path in run_files])
    except (OSError, ValueError) as exc:  # runs.RunsError among them
        log.error("%s: cannot combine its runs: %s", name, exc)
        sys.exit(1)
    params = declared.params_of(name, params)
    log.info("%s: combining %d runs (%s) with %s", name, len(values), ", ".join(run_files), dict(params))
    return params, lambda: combine(values, params)


def _plot(name, plot, values, params, figures):
    """plot() with the figures asked for; stops naming each declared figure
    it did not write (and what it did write), and logs only what it wrote."""
    from articlekit.experiment.figure_text import value_keys  # here: it imports NumPy (see library_versions)

    before = {path: declared.stamp(path) for path in figures.values()}
    _value_keys[:] = value_keys(name, values)
    if plot is not None:
        plot(values, params, declared.figures_of(name, figures))
    written, others = declared.written_figures(figures, before, _saved)
    if written or others:
        log.info("%s: wrote %s", name, ", ".join([*map(scratch.shown, written), *others]))
    missing = declared.unwritten_figures(name, figures, written, others, has_plot=plot is not None)
    if missing:
        log.error("%s: %s", name, missing)
        sys.exit(1)
    if others:
        log.warning(
            "%s: plot() also wrote %s, which experiments.%s.figures does not declare: the build keeps "
            "only declared figures (one saved by a relative path is dropped with the experiment's "
            "scratch folder); declare it there",
            name,
            ", ".join(others),
            name,
        )


def _fail(name, exc):
    """Log why the experiment stopped and exit 1. A parameter or figure the
    config lacks is one sentence with the line that asked, a figure that
    shows a key one naming the figure and its text; anything else
    keeps its traceback, in the log, where Snakemake points."""
    from articlekit.experiment.figure_text import KeyInFigure  # nothing is written after a failure

    if isinstance(exc, (declared.Undeclared, KeyInFigure)):
        log.error("%s: %s", name, exc)
    else:
        log.error("%s: failed", name, exc_info=exc)
    sys.exit(1)
