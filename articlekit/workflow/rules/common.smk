# The plan, built once per invocation (articlekit/workflow/plan.py), its
# checks run in turn (plantime.py), and what the rules need of Snakemake
# itself: its record of each job, the code each step runs, every output.

import atexit
import os

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

from articlekit.__main__ import COMMANDS
from articlekit.workflow import codegraph, failures, leftovers, ownership, plancache
from articlekit.workflow import plan as plans
from articlekit.workflow import plantime
from articlekit.workflow.plan import PlanError

CONFIG_FILES = [*workflow.configfiles, *workflow.overwrite_configfiles]

# Every snakemake call plans, a no-op too. What the plan's checks found
# passed is remembered between runs by a digest of all they read
# (plancache.py), the code graph's parses by each file's digest
# (codegraph.py): a plan whose inputs did not change repeats neither. Kept
# at exit, once the DAG's input functions have run too.
codegraph.remember_scans(plans.CODEGRAPH_MEMORY)
PLAN_MEMORY = plancache.PlanMemory(plans.PLAN_MEMORY)
atexit.register(codegraph.save_scans)
atexit.register(PLAN_MEMORY.save)
# Which rule wrote each output, kept by this process from Snakemake's
# reports of its jobs (ownership.py); each failed job's message last in the
# terminal, once (failures.py).
OWNED = ownership.watch(workflow, plans.LEDGER)
FAILURES = failures.watch(workflow)

plantime.check_config_files(CONFIG_FILES)
try:
    _checked, _overrides = plantime.normalised(config)
    config.clear()
    config.update(_checked)
    plantime.check_config(
        config, CONFIG_FILES, workflow.main_snakefile, PLAN_MEMORY, validate
    )
    plantime.check_writable(".")
    PLAN = plans.build(
        config,
        CONFIG_FILES,
        plantime.ThisMachine(_overrides),
        snakefile=workflow.main_snakefile,
    )
    plantime.check_footprints(PLAN)
except PlanError as error:
    raise WorkflowError(str(error)) from None
for _message in PLAN.missing_libraries.values():
    logger.warning(_message)
# An experiment's previous outputs kept aside while it reruns (failures.py).
failures.keep_previous(FAILURES, PLAN.experiment_rule_names)


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


def library_versions(experiment):
    """The versions an experiment's rule takes as params: upgrading a
    library reruns exactly the experiments that list it. When one is not
    installed, a function that stops the run before any job starts, saying
    what to install; a dry run still shows the plan, and targets that need
    no missing library still build."""
    versions, missing = PLAN.library_versions(experiment), PLAN.missing_library(
        experiment
    )
    if missing is None:
        return versions

    def not_installed(wildcards):
        if not workflow.dryrun:
            raise WorkflowError(missing)
        return versions

    return not_installed


def experiment_threads_argument(experiment):
    """`--threads N` for a job that takes every core. A function of threads,
    so Snakemake counts it as derived: another --cores reruns nothing."""

    def threads_argument(wildcards, threads):
        return experiment.threads_argument(threads)

    return threads_argument


def experiment_limits_argument(experiment):
    """`--mem-mb M --runtime MIN` from the job's resources (a function of
    them, so derived: changing a limit reruns nothing)."""

    def limits_argument(wildcards, resources):
        return experiment.limits_argument(resources)

    return limits_argument


def experiment_versions(wildcards):
    """library_versions of the job's {experiment}."""
    versions = library_versions(PLAN.experiment(wildcards.experiment))
    return versions(wildcards) if callable(versions) else versions


def experiment_threads_of(wildcards):
    """experiment_threads of the job's {experiment}."""
    threads = experiment_threads(PLAN.experiment(wildcards.experiment))
    return threads(wildcards) if callable(threads) else threads


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


def article_figures(wildcards):
    """The figures the article shows: its image links into figures/
    (articlekit/article/figures.py). A figure it names that no rule builds
    stops the DAG before any job runs, said with its line (an exception
    here would reach the terminal inside an InputFunctionException): when
    an old article.html exists, a missing input would silently keep it."""
    from articlekit.article.figures import figure_links, unbuilt_figures
    from articlekit.core.sources import read_text

    links = figure_links(read_text(PLAN.article), PLAN.article_dir)
    built = {str(path) for rule in workflow.rules for path in rule.output}
    unbuilt = unbuilt_figures(PLAN.article, links, built)
    if unbuilt:
        logger.error(unbuilt)
        raise SystemExit(1)
    return sorted({each.path for each in links})


def every_output(wildcards):
    """Every file the rules build, the default target.

    Not only the article: Snakemake 9 does not rebuild a missing
    intermediate (results/*.json after a failed job or an `rm`) while the
    files made from it exist, so asking for the article alone would exit 0
    over a stale one. Read from the rules themselves, so a new rule cannot
    be left out; the opt-in rules (plan.OPT_IN_RULE_FILES: the version
    matrix, the sweep) are left out. An output its rule did not write
    (ownership.py) stops the plan, a dry run's too, naming it.
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
    """The default target's files (every_output); the sweep's when the article binds its keys."""
    return [
        str(path)
        for rule in workflow.rules
        if os.path.abspath(str(rule.snakefile)) not in plans.OPT_IN_RULE_FILES
        for path in rule.output
        # a pattern (an experiment's run, {run}): the step that combines them asks for each
        if not path.contains_wildcard()
    ] + (PLAN.sweep.outputs if PLAN.cites_robustness else [])


def report_leftovers():
    """Warn of files in results/, figures/, logs/ that no rule makes any
    more (articlekit/workflow/leftovers.py says why they are kept)."""
    products = [product for rule in workflow.rules for product in rule.products()]
    found = leftovers.leftovers(
        lambda path: any(product.match(path) for product in products)
    )
    said = leftovers.report(found, PLAN.experiment_names)
    if said:
        logger.warning(said)


def latest_release(wildcards):
    """The newest releases/<label>/snapshot.json, or nothing before the first
    release, by the snapshot's own released_at. A folder there that is no
    release is left out, with a warning. Remembered when every snapshot is
    trusted and nothing is astray (an untrusted one is returned, for the
    diff to refuse)."""
    from pathlib import Path

    releases = plans.RELEASES
    snapshots = sorted(Path(releases).glob("*/snapshot.json"))
    fingerprint = PLAN_MEMORY.fingerprint(
        "latest release",
        files=snapshots,
        values=sorted(os.listdir(releases)) if os.path.isdir(releases) else [],
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

    astray = strays(releases)
    for stray in astray:
        logger.warning(stray)
    found = latest_snapshot(releases)
    latest = [str(found)] if found else []
    try:
        if found:
            load_snapshot(found)  # trusted: then so is every other
        if not astray:
            PLAN_MEMORY.keep(fingerprint, latest)
    except SnapshotError:
        pass
    return latest


def use_the_article_environment(conda_env):
    """Give every rule of the module that runs a command and names no
    environment of its own the article's (environment.yml). Snakemake's
    top-level `conda:` is not a default for rules (snakemake/snakemake#551),
    and `snakemake --lint` wants an environment on each rule."""
    if conda_env is None:
        return
    module_dir = str(plans.FOLDER) + os.sep
    for each in workflow.rules:
        if (
            os.path.abspath(str(each.snakefile)).startswith(module_dir)
            and each.conda_env is None
            and not each.norun
        ):
            each.conda_env = conda_env
