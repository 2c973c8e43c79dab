# The plan, built once per invocation (articlekit/workflow/plan.py), its
# checks run in turn (plantime.py), and what the rules need of Snakemake
# itself, bound here (wiring.py): its record of each job, the code each
# step runs, every output.

import atexit
import os

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

from articlekit.__main__ import COMMANDS
from articlekit.workflow import codegraph, failures, ownership, plancache
from articlekit.workflow import plan as plans
from articlekit.workflow import plantime, prompt_exit, wiring
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
# The process ends with its last job, not up to a second later, when
# Snakemake's scheduler would have woken again (prompt_exit.py).
prompt_exit.at_shutdown()

plantime.check_config_files(CONFIG_FILES)
try:
    _checked, _overrides = plantime.normalised(config)
    # each experiment's declared defaults (experiments/NAME.py), under the files
    _checked, CONFIG_SOURCES = plantime.with_defaults(_checked, CONFIG_FILES)
    config.clear()
    config.update(_checked)
    plantime.check_config(
        config, CONFIG_SOURCES, workflow.main_snakefile, PLAN_MEMORY, validate
    )
    plantime.check_writable(".")
    plantime.check_folder_name(".")
    PLAN = plans.build(
        config,
        CONFIG_SOURCES,
        plantime.ThisMachine(_overrides),
        snakefile=workflow.main_snakefile,
    )
    plantime.check_footprints(PLAN, PLAN_MEMORY)
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


def matrix_warm_arguments():
    """`--warm numpy --warm torch ...`: the libraries the matrix's
    experiments import (codegraph), whose bytecode each install compiles."""
    modules = [f"experiments.{name}" for name in PLAN.matrix.experiments]
    try:
        libraries = codegraph.imported_libraries(modules)
    except (ValueError, SyntaxError) as error:
        raise WorkflowError(str(error)) from None
    return " ".join(f"--warm {name}" for name in libraries)


def command_code(command):
    """What `python -m articlekit COMMAND` runs: editing any of it reruns the step."""
    return codegraph.package_files("articlekit.__main__", COMMANDS[command][0])


def format_code(fmt):
    """What `python -m articlekit render --to FORMAT` runs: the render
    command and the format's own module, not the other formats'."""
    return codegraph.package_files(
        "articlekit.__main__", COMMANDS["render"][0], fmt.module
    )


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
    return wiring.library_versions(workflow, PLAN, experiment)


def experiment_threads(experiment):
    """A count, or every core the run was given (a job that must run alone)."""
    if experiment.takes_every_core:
        return lambda wildcards: wiring.every_core(workflow)
    return experiment.threads


def experiment_threads_argument(experiment):
    """`--threads N` for a job that takes every core. A function of threads,
    so Snakemake counts it as derived: another --cores reruns nothing."""
    return lambda wildcards, threads: experiment.threads_argument(threads)


def experiment_limits_argument(experiment):
    """`--mem-mb M --runtime MIN` from the job's resources (a function of
    them, so derived: changing a limit reruns nothing)."""
    return lambda wildcards, resources: experiment.limits_argument(resources)


def experiment_versions(wildcards):
    """library_versions of the job's {experiment}."""
    versions = library_versions(PLAN.experiment(wildcards.experiment))
    return versions(wildcards) if callable(versions) else versions


def experiment_threads_of(wildcards):
    """experiment_threads of the job's {experiment}."""
    threads = experiment_threads(PLAN.experiment(wildcards.experiment))
    return threads(wildcards) if callable(threads) else threads


def article_figures(wildcards):
    return wiring.article_figures(workflow, PLAN)


def every_output(wildcards):
    return wiring.every_output(workflow, PLAN, OWNED)


def default_outputs():
    return wiring.default_outputs(workflow, PLAN)


def latest_release(wildcards):
    return wiring.latest_release(PLAN, PLAN_MEMORY)
