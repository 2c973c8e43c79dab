"""What the rules need of Snakemake's workflow as well as of the plan: the
default target, the article's figures and the latest release as input
functions, the library versions and thread counts as params, the article's
conda environment on every rule.

Python, not rules/common.smk: Snakemake parses every .smk file's text on
every invocation, a no-op's too, while a module is compiled once. The
module's rules/common.smk binds these to the workflow and the Plan it
built (articlekit/workflow/plan.py).
"""

import os

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from articlekit.workflow import leftovers, ownership
from articlekit.workflow.plan import FOLDER, OPT_IN_RULE_FILES


def library_versions(workflow, plan, experiment):
    """The versions an experiment's rule takes as params: upgrading a
    library reruns exactly the experiments that list it. When one is not
    installed, a function that stops the run before any job starts, saying
    what to install; a dry run still shows the plan, and targets that need
    no missing library still build."""
    versions, missing = plan.library_versions(experiment), plan.missing_library(experiment)
    if missing is None:
        return versions

    def not_installed(wildcards):
        if not workflow.dryrun:
            raise WorkflowError(missing)
        return versions

    return not_installed


def every_core(workflow):
    """All the cores the run was given (--cores), for a job that must run
    alone. Commands that run no job (--report, a dry run) need no --cores:
    they get 1; a real run cannot start without --cores anyway."""
    try:
        return workflow.cores
    except WorkflowError:
        return 1


def article_figures(workflow, plan):
    """The figures the article shows: its image links into figures/
    (articlekit/article/figures.py). A figure it names that no rule builds
    stops the DAG before any job runs, said with its line (an exception
    here would reach the terminal inside an InputFunctionException): when
    an old article.html exists, a missing input would silently keep it."""
    from articlekit.article.figures import figure_links, unbuilt_figures
    from articlekit.core.sources import read_text

    links = figure_links(read_text(plan.article), plan.article_dir)
    built = {str(path) for rule in workflow.rules for path in rule.output}
    unbuilt = unbuilt_figures(plan.article, links, built)
    if unbuilt:
        logger.error(unbuilt)
        raise SystemExit(1)
    return sorted({each.path for each in links})


def every_output(workflow, plan, owned):
    """Every file the rules build, the default target.

    Not only the article: Snakemake 9 does not rebuild a missing
    intermediate (results/*.json after a failed job or an `rm`) while the
    files made from it exist, so asking for the article alone would exit 0
    over a stale one. Read from the rules themselves, so a new rule cannot
    be left out; the opt-in rules (plan.OPT_IN_RULE_FILES: the version
    matrix, the sweep) are left out. An output its rule did not write
    (ownership.py) stops the plan, a dry run's too, naming it.
    """
    report_leftovers(workflow, plan)
    outputs = default_outputs(workflow, plan)
    refused = ownership.unrecordable(workflow) or ownership.unowned(workflow, owned, outputs)
    if refused:
        logger.error(refused)
        raise SystemExit(1)
    return outputs


def default_outputs(workflow, plan):
    """The default target's files (every_output); the sweep's when the article binds its keys."""
    return [
        str(path)
        for rule in workflow.rules
        if os.path.abspath(str(rule.snakefile)) not in OPT_IN_RULE_FILES
        for path in rule.output
        # a pattern (an experiment's run, {run}): the step that combines them asks for each
        if not path.contains_wildcard()
    ] + (plan.sweep.outputs if plan.cites_robustness else [])


def report_leftovers(workflow, plan):
    """Warn of files in results/, figures/, logs/ that no rule makes any
    more (articlekit/workflow/leftovers.py says why they are kept)."""
    products = [product for rule in workflow.rules for product in rule.products()]
    made = {str(product) for product in products if not product.contains_wildcard()}
    patterns = [product for product in products if product.contains_wildcard()]
    found = leftovers.leftovers(lambda path: path in made or any(product.match(path) for product in patterns))
    said = leftovers.report(found, plan.experiment_names)
    if said:
        logger.warning(said)


def latest_release(plan, memory):
    """The newest releases/<label>/snapshot.json, or nothing before the first
    release, by the snapshot's own released_at. A folder there that is no
    release is left out, with a warning. Remembered in `memory` when every
    snapshot is trusted and nothing is astray (an untrusted one is
    returned, for the diff to refuse)."""
    from pathlib import Path

    releases = plan.releases
    snapshots = sorted(Path(releases).glob("*/snapshot.json"))
    fingerprint = memory.fingerprint(
        "latest release",
        files=snapshots,
        values=sorted(os.listdir(releases)) if os.path.isdir(releases) else [],
        code=["articlekit.review.snapshot"],
        libraries=["jsonschema"],
    )
    remembered = memory.recall(fingerprint)
    if remembered is not None:
        return remembered
    from articlekit.review.snapshot import SnapshotError, latest_snapshot, load_snapshot, strays

    astray = strays(releases)
    for stray in astray:
        logger.warning(stray)
    found = latest_snapshot(releases)
    latest = [str(found)] if found else []
    try:
        if found:
            load_snapshot(found)  # trusted: then so is every other
        if not astray:
            memory.keep(fingerprint, latest)
    except SnapshotError:
        pass
    return latest


def use_the_article_environment(workflow, conda_env):
    """Give every rule of the module that runs a command and names no
    environment of its own the article's (environment.yml). Snakemake's
    top-level `conda:` is not a default for rules (snakemake/snakemake#551),
    and `snakemake --lint` wants an environment on each rule."""
    if conda_env is None:
        return
    module_dir = str(FOLDER) + os.sep
    for each in workflow.rules:
        if os.path.abspath(str(each.snakefile)).startswith(module_dir) and each.conda_env is None and not each.norun:
            each.conda_env = conda_env
