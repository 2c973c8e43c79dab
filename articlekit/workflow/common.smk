# Shared names for the module's rules: the checked config, the paths every
# rule agrees on, library versions, and the code each step runs.

import atexit
import copy
import json
import os
import shlex
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

import articlekit.workflow
from articlekit.__main__ import COMMANDS
from articlekit.workflow import codegraph, failures, leftovers, ownership, plancache
from articlekit.experiment import footprint
from articlekit.render import renderers
from articlekit.render.extension import is_installed_copy
from articlekit.data.config import (
    ConfigError,
    check_article_config,
    check_config,
    check_known_keys,
    check_syntax_for_snakemake,
    where,
)
from articlekit.data.publishing import PublishingError, parse as parse_publishing
from articlekit.core.sources import SourceError, read_article, read_text
from articlekit.article.figures import figure_links, unbuilt_figures
from articlekit.workflow import settings

MODULE_DIR = str(articlekit.workflow.FOLDER)
CONFIG_FILES = [*workflow.configfiles, *workflow.overwrite_configfiles]

# Every snakemake call plans, a no-op too. What the plan's checks found
# passed is remembered between runs by a digest of all they read
# (articlekit/workflow/plancache.py), the code graph's parses by each
# file's digest (codegraph.py): a plan whose inputs did not change repeats
# neither. Kept at exit, once the DAG's input functions have run too.
codegraph.remember_scans(".snakemake/articlekit/codegraph.json")
PLAN_MEMORY = plancache.PlanMemory(".snakemake/articlekit/plan.json")
atexit.register(codegraph.save_scans)
atexit.register(PLAN_MEMORY.save)
# Which rule wrote each output, and its digest when the job finished, kept
# by this process from Snakemake's reports of its jobs (ownership.py).
LEDGER = ".snakemake/articlekit/ledger.json"
OWNED = ownership.watch(workflow, LEDGER)
# Each failed job's message last in the terminal, once, and the terminal
# without the paths of articlekit's code (articlekit/workflow/failures.py).
FAILURES = failures.watch(workflow)
# The module's own rules and checks, part of every check's fingerprint.
MODULE_FILES = sorted(
    str(path)
    for path in Path(MODULE_DIR).iterdir()
    if path.suffix == ".smk" or path.name == "Snakefile"
)

# `--config strict=false` arrives as the string "false": read it as YAML
# would, so the schemas see a boolean.
if "strict" in config:
    config["strict"] = settings.strict(config)

# `--config versions='{torch: "9.9"}'` stands in for installed versions (a
# faked upgrade); it is the command line's, not the article's, so it is
# taken out before the article's schema sees the config.
try:
    VERSION_OVERRIDES = settings.version_overrides(config)
except ValueError as error:
    raise WorkflowError(str(error)) from None
config.pop("versions", None)

ARTICLE_SCHEMA = "config/schema.yaml"
MODULE_SCHEMA = os.path.join(MODULE_DIR, "schema.yaml")


def check_the_config():
    """Every violation at once, each with its file and line: first the keys
    this module reads, then the article's own schema when it has one (with
    Snakemake's validate, the standard check, after)."""
    try:
        check_config(
            config,
            MODULE_SCHEMA,
            CONFIG_FILES,
            rule_names=settings.rule_names([*MODULE_FILES, workflow.main_snakefile]),
        )
        # its schema, and the types config.yaml gives what no schema describes
        check_article_config(
            config, ARTICLE_SCHEMA, CONFIG_FILES, config.get("experiments") or {}
        )
        # A top-level key is the module's, matrix:, or an experiment's
        # parameters: anything else is a slip (publishin:) never read.
        check_known_keys(
            config,
            [
                *settings.module_keys(MODULE_DIR),
                "matrix",
                *(config.get("experiments") or {}),
            ],
            CONFIG_FILES,
            "neither a setting of articlekit's module nor an experiment's parameters (experiments:)",
            explain=lambda key, guess: settings.undeclared_experiment(
                key,
                config[key],
                codegraph.experiment_path(key),
                (
                    where(config, "experiments", CONFIG_FILES)
                    if "experiments" in config
                    else "a new top-level key"
                ),
                guess,
            ),
        )
    except ConfigError as error:
        raise WorkflowError(str(error)) from None
    if os.path.exists(ARTICLE_SCHEMA):
        validate(config, os.path.abspath(ARTICLE_SCHEMA))


# Each file read again, strictly, on every plan and before anything walks
# the config (the fingerprint below digests it): Snakemake's own reader
# lets a key given twice silently win, takes 1e-7 for text and expands a
# YAML alias bomb until memory runs out.
for _config_file in CONFIG_FILES:
    check_syntax_for_snakemake(_config_file)

# The same config, files, schemas, code and libraries as a check that passed:
# it passes again. Kept only when the check changed nothing (Snakemake's
# validate fills in the defaults a schema gives).
CONFIG_CHECK = PLAN_MEMORY.fingerprint(
    "config",
    files=[
        *CONFIG_FILES,
        MODULE_SCHEMA,
        ARTICLE_SCHEMA,
        *MODULE_FILES,
        workflow.main_snakefile,
    ],
    values=config,
    code=["articlekit.data.config", "articlekit.workflow.settings"],
    libraries=["jsonschema", "pyyaml", "snakemake"],
)
if not PLAN_MEMORY.recall(CONFIG_CHECK):
    _unchecked = copy.deepcopy(config)
    check_the_config()
    if config == _unchecked:
        PLAN_MEMORY.keep(CONFIG_CHECK)

# What the machinery records and compares (articlekit/data/publishing.py): read
# here for the rules, and handed to each command as it is written, in the
# config's order (the order the pages list the libraries in).
try:
    PUBLISHING = parse_publishing(config.get("publishing"))
except PublishingError as error:
    raise WorkflowError(str(error)) from None
PUBLISHING_SECTION = config.get("publishing") or {}
PUBLISHING_JSON = json.dumps(PUBLISHING_SECTION)
# Cutting the listings reads publishing.listings alone: handed only that, so
# that an edit to how the review judges keys (error_measures, spread, ...)
# does not cut them again and with them render the whole article.
LISTINGS_PUBLISHING_JSON = json.dumps(
    {"listings": PUBLISHING_SECTION.get("listings") or {}}
)


def check_writable(folder):
    """Stop with a sentence, not Snakemake's traceback about
    .snakemake/locks, when the checkout cannot be written."""
    import tempfile

    for where in [folder, f"{folder}/.snakemake"]:
        if not os.path.isdir(where):
            continue
        try:
            with tempfile.TemporaryFile(dir=where):
                pass
        except OSError as error:
            raise WorkflowError(
                f"{os.path.abspath(where)} is not writable ({error.strerror}): the build writes "
                "results/, figures/, build/ and logs/ there, and Snakemake its lock in .snakemake/. "
                "Make the folder writable, or build in a writable copy: "
                "cp -r . /some/writable/folder && cd /some/writable/folder"
            ) from None


check_writable(".")

# ---- paths every rule agrees on, named once -----------------------------------

ARTICLE = config.get("article", "article/index.qmd")
ARTICLE_DIR = os.path.dirname(ARTICLE) or "."
# A byte that is not UTF-8 or a control character is named here, with its
# line and column, and an empty article refused: found by article_figures
# (an input function), Snakemake would wrap the sentence in an
# InputFunctionException and its traceback.
try:
    if os.path.exists(ARTICLE):
        read_article(ARTICLE)
except SourceError as error:
    raise WorkflowError(str(error)) from None
BASELINE = config.get("baseline", "baseline/published.yaml")
RELEASES = "releases"  # snapshots frozen by `snakemake release`, one folder per label
LISTINGS = "results/listings.json"
VALUES = "build/values.json"
BINDINGS = "build/bindings.json"
LINT_REPORT = "build/lint.txt"
PANDOC_TREE = "build/article.ast.json"  # the article as Pandoc reads it
AUDIT_JSON = "build/audit.json"
# The article's own shortcode extension and style, when it has them: their
# edits redo the render. Not the copy of articlekit's that a Quarto user's
# `quarto render` installs (articlekit/render/extension.py): the build
# reads the package's.
EXTENSION = sorted(
    str(path)
    for path in Path(ARTICLE_DIR, "_extensions").rglob("*")
    if path.is_file() and not is_installed_copy(path)
)
ARTICLE_STYLE = [path for path in [f"{ARTICLE_DIR}/style.css"] if os.path.exists(path)]
STRICT = config.get("strict", True)
# The renderer `auto` stands for here, and the versions of what renders:
# plain values for the render and pdf rules' params, so switching Pandoc
# to Quarto, or upgrading either (or Typst), renders again. Read cheaply
# (articlekit/render/renderers.py): every snakemake call, a no-op too, asks.
RENDERER = renderers.choose(config.get("renderer", "auto"))
RENDERER_VERSION = renderers.version(RENDERER) or "not installed"
PANDOC_VERSION = (
    RENDERER_VERSION
    if RENDERER == "pandoc"
    else renderers.version("pandoc") or "not installed"
)
TYPST_VERSION = (
    settings.installed_versions(["typst"], VERSION_OVERRIDES)["typst"]
    or "not installed"
)
# The front page of `snakemake --report`: the article's own, else a plain one.
REPORT_FRONT_PAGE = (
    os.path.abspath("report/workflow.rst")
    if os.path.exists("report/workflow.rst")
    else os.path.join(MODULE_DIR, "report/workflow.rst")
)
# The article's own conda environment, when it ships one: every rule of the
# module runs in it under --use-conda (use_the_article_environment).
CONDA_ENV = (
    os.path.abspath("environment.yml") if os.path.exists("environment.yml") else None
)

# ---- experiments ----------------------------------------------------------------

EXPERIMENTS = settings.experiments(config)
EXPERIMENT_NAMES = [experiment.name for experiment in EXPERIMENTS]
# An experiment's previous outputs kept aside while it reruns (failures.py).
failures.keep_previous(
    FAILURES, [*EXPERIMENT_NAMES, *(f"{name}_combine" for name in EXPERIMENT_NAMES)]
)
# Seed robustness (config robustness:, robustness.smk). Its page's keys,
# robustness.<key>.median and the like, are values the article may bind:
# only then does the default build run the sweep (values reads its JSON).
ROBUSTNESS_JSON = "build/robustness.json"
try:
    ROBUSTNESS = (
        settings.robustness(config, lambda key: where(config, key, CONFIG_FILES))
        if "robustness" in config
        else None
    )
except ValueError as error:
    raise WorkflowError(str(error)) from None
ARTICLE_CITES_ROBUSTNESS = os.path.exists(ARTICLE) and (
    "robustness" in settings.cited_experiments(read_text(ARTICLE))
)
if ARTICLE_CITES_ROBUSTNESS and ROBUSTNESS is None:
    raise WorkflowError(
        f"{ARTICLE} binds robustness.* keys, but the config has no robustness: section; "
        "add one (robustness: {seeds: 100}) or take the keys out of the article"
    )
ROBUSTNESS_VALUES = [ROBUSTNESS_JSON] if ARTICLE_CITES_ROBUSTNESS else []

# Code listings cut from the sources publishing.listings names, if any.
LISTING_SOURCES = settings.listing_sources(PUBLISHING)
RESULTS = [experiment.json for experiment in EXPERIMENTS] + (
    [LISTINGS] if LISTING_SOURCES else []
)

# Sizes checked before any job, a dry run too: each experiment's footprint
# (articlekit/experiment/footprint.py, read from its source without importing it)
# against the mem_mb and runtime its entry declares; a refusal names the key.
try:
    for _experiment in EXPERIMENTS:
        footprint.check_plan(
            _experiment.name,
            codegraph.experiment_path(_experiment.name),
            _experiment.params(config),
            _experiment.mem_mb,
            _experiment.runtime,
            where=lambda key: where(config, key, CONFIG_FILES),
        )
except (footprint.SizeError, SyntaxError) as error:
    raise WorkflowError(str(error)) from None


def experiment_code(name):
    """What `python -m experiments.NAME` runs: editing any of it reruns it."""
    try:
        return codegraph.experiment_files(name)
    except (ValueError, SyntaxError) as error:
        raise WorkflowError(str(error)) from None


def command_code(command):
    """What `python -m articlekit COMMAND` runs: editing any of it reruns the step."""
    return codegraph.package_files("articlekit.__main__", COMMANDS[command][0])


def module_code(module):
    """What `python -m MODULE` runs (a dotted articlekit module)."""
    return codegraph.package_files(module)


def figure_outputs(experiment):
    """{output name: path} for its figures, each in Snakemake's report with
    the article's caption report/<figure name>.rst when it has one."""
    outputs = {}
    for name, path in experiment.figures.items():
        caption = os.path.abspath(
            f"report/{os.path.splitext(os.path.basename(path))[0]}.rst"
        )
        outputs[name] = report(
            path,
            caption=caption if os.path.exists(caption) else None,
            category="Figures",
        )
    return outputs


def figure_arguments(experiment):
    return " ".join(
        f"--figure {shlex.quote(f'{name}={path}')}"
        for name, path in experiment.figures.items()
    )


def library_arguments(experiment):
    return " ".join(
        f"--library {shlex.quote(library)}"
        for library in settings.recorded_libraries(PUBLISHING, experiment)
    )


# ---- library versions -------------------------------------------------------------

# The installed versions enter the rules as params: upgrading a library
# reruns exactly the experiments that list it in `libraries:`.
VERSIONS = settings.installed_versions(
    dict.fromkeys(
        [lib for e in EXPERIMENTS for lib in e.libraries]
        + list(PUBLISHING.release_label)
    ),
    VERSION_OVERRIDES,
)


for _library, _version in VERSIONS.items():
    if _version is None and any(_library in e.libraries for e in EXPERIMENTS):
        logger.warning(settings.missing_library(config, PUBLISHING, _library))


def library_versions(experiment):
    """The versions an experiment's rule takes as params. When one of its
    libraries is not installed, a function that stops the run before any
    job starts, saying what to install; a dry run still shows the plan, and
    targets that need no missing library still build."""
    versions = {library: VERSIONS[library] for library in experiment.libraries}
    missing = [library for library, version in versions.items() if version is None]
    if not missing:
        return versions

    def not_installed(wildcards):
        if not workflow.dryrun:
            raise WorkflowError(
                settings.missing_library(config, PUBLISHING, missing[0])
            )
        return {
            library: version or "not installed" for library, version in versions.items()
        }

    return not_installed


RELEASE_LABEL = settings.release_label(config, PUBLISHING, VERSIONS)

# ---- cores ---------------------------------------------------------------------------


def every_core(wildcards):
    """All the cores the run was given (--cores), for a job that must run
    alone. Commands that run no job (--report, a dry run) need no --cores:
    they get 1; a real run cannot start without --cores anyway."""
    try:
        return workflow.cores
    except WorkflowError:
        return 1


def experiment_threads(experiment):
    return every_core if experiment.takes_every_core else experiment.threads


def experiment_params(experiment):
    """Its params as the JSON its --params takes: a plain value, so that
    Snakemake's params trigger sees it and an edited parameter reruns the
    experiment (settings.Experiment.params says why it must not be a
    function of threads)."""
    return json.dumps(experiment.params(config))


def experiment_limits_argument(experiment):
    """`--mem-mb M --runtime MIN` from the job's resources (a function of
    them, so derived: changing a limit reruns nothing)."""

    def limits_argument(wildcards, resources):
        return experiment.limits_argument(resources)

    return limits_argument


def experiment_threads_argument(experiment):
    """`--threads N` for a job that takes every core. A function of threads,
    so Snakemake counts it as derived: another --cores reruns nothing."""

    def threads_argument(wildcards, threads):
        return experiment.threads_argument(threads)

    return threads_argument


# ---- what the article shows, and the default target ------------------------------


def article_figures(wildcards):
    """The figures the article shows: its image links into figures/, read
    relative to the article's folder (articlekit/article/figures.py).

    The manuscript declares what the render depends on: a figure it names
    that no rule builds stops the DAG before any job runs. Raised here, not
    left to Snakemake: when an old article.html exists, a missing input
    would silently keep it instead of failing. Said, with its line, and
    then an exit: an exception from an input function would reach the
    terminal inside an InputFunctionException and its traceback.
    """
    links = figure_links(read_text(ARTICLE), ARTICLE_DIR)
    built = {str(path) for rule in workflow.rules for path in rule.output}
    unbuilt = unbuilt_figures(ARTICLE, links, built)
    if unbuilt:
        logger.error(unbuilt)
        raise SystemExit(1)
    return sorted({each.path for each in links})


# ---- what every rule shares, said once ----------------------------------------------
#
# A rule lists only what is its own. Threads default to 1 (Snakemake's own
# default); mem_mb and runtime, for a rule that names none, come from the
# profile's default-resources (profiles/slurm), or from Snakemake's own
# defaults for a cluster (mem_mb 1000 and up); a local build reads them for
# no rule but the experiments, whose entries set them. The conda
# environment is set below, once for every rule.


def module_rules():
    """The rules this module defined (not the article's own)."""
    return [
        each
        for each in workflow.rules
        if os.path.abspath(str(each.snakefile)).startswith(MODULE_DIR + os.sep)
    ]


def use_the_article_environment(conda_env):
    """Give every rule of the module that runs a command and names no
    environment of its own the article's (environment.yml). Snakemake's
    top-level `conda:` is not a default for rules (it deploys the
    workflow's own dependencies; snakemake/snakemake#551 asks for one), and
    `snakemake --lint` wants an environment on each rule."""
    if conda_env is None:
        return
    for each in module_rules():
        if each.conda_env is None and not each.norun:
            each.conda_env = conda_env


# Rules asked for by name only (`snakemake matrix`, `snakemake robustness`),
# never by default; the sweep's outputs are the default's too when the
# article binds its keys (every_output).
OPT_IN_RULE_FILES = [
    os.path.join(MODULE_DIR, name) for name in ("matrix.smk", "robustness.smk")
]


def every_output(wildcards):
    """Every file the rules build, the default target.

    Not only the article: Snakemake 9 does not rebuild a missing
    intermediate (results/*.json after a failed job or an `rm`) while the
    files made from it exist, so asking for the article alone would exit 0
    over a stale one. With every output a target, the next build after a
    failure or a deletion rebuilds what is missing, or fails again. Read
    from the rules themselves, so a new rule cannot be left out. Rules of
    an opt-in target (OPT_IN_RULE_FILES: the version matrix) are not part
    of the default build. An output its rule did not write (ownership.py)
    stops the plan, a dry run's too, naming it.
    """
    report_leftovers()
    outputs = default_outputs()
    refused = ownership.unrecordable(workflow) or ownership.unowned(
        workflow, OWNED, outputs
    )
    if refused:
        logger.error(refused)
        raise SystemExit(1)
    return outputs


def default_outputs():
    """The default target's files (every_output)."""
    return [
        str(path)
        for rule in workflow.rules
        if os.path.abspath(str(rule.snakefile)) not in OPT_IN_RULE_FILES
        for path in rule.output
        # a pattern (an experiment's run, {run}): the step that combines them asks for each
        if not path.contains_wildcard()
    ] + (robustness_outputs() if ARTICLE_CITES_ROBUSTNESS else [])


def report_leftovers():
    """Warn of files in results/, figures/, logs/ that no rule makes any
    more (articlekit/workflow/leftovers.py says why they are kept). Asked
    by the default target, once every rule, the article's own too, exists."""
    products = [product for rule in workflow.rules for product in rule.products()]
    found = leftovers.leftovers(
        lambda path: any(product.match(path) for product in products)
    )
    said = leftovers.report(found, EXPERIMENT_NAMES)
    if said:
        logger.warning(said)


def latest_release(wildcards):
    """The newest releases/<label>/snapshot.json, or nothing before the first
    release. Newest by the snapshot's own released_at, not by file time, so a
    fresh clone orders them the same. A folder there that is no release is
    left out, with a warning that says what it is. Remembered when every
    snapshot is trusted and nothing is astray (an untrusted one is returned,
    for the diff to refuse)."""
    snapshots = sorted(Path(RELEASES).glob("*/snapshot.json"))
    fingerprint = PLAN_MEMORY.fingerprint(
        "latest release",
        files=snapshots,
        values=sorted(os.listdir(RELEASES)) if os.path.isdir(RELEASES) else [],
        code=["articlekit.review.snapshot"],
        libraries=["jsonschema"],
    )
    remembered = PLAN_MEMORY.recall(fingerprint)
    if remembered is not None:
        return remembered
    from articlekit.review.snapshot import (
        SnapshotError,
        latest_snapshot,
        load_snapshot,
        strays,
    )

    astray = strays(RELEASES)
    for stray in astray:
        logger.warning(stray)
    found = latest_snapshot(RELEASES)
    latest = [str(found)] if found else []
    try:
        if found:
            load_snapshot(found)  # trusted: then so is every other
        if not astray:
            PLAN_MEMORY.keep(fingerprint, latest)
    except SnapshotError:
        pass
    return latest
