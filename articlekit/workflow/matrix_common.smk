# Shared names for matrix.smk: the checked `matrix:` config, what runs
# in each environment, and the rules' param functions.

import re

from articlekit.data.config import where as config_line
from articlekit.review.matrixenv import MatrixConfigError, check_matrix

try:
    check_matrix(config, [*workflow.configfiles, *workflow.overwrite_configfiles])
except MatrixConfigError as error:
    raise WorkflowError(str(error)) from None

MATRIX = {entry["label"]: entry["pins"] for entry in config["matrix"]["environments"]}
# The Python an entry names ("3.13"), or None: the build's own.
MATRIX_PYTHON = {
    entry["label"]: entry.get("python") for entry in config["matrix"]["environments"]
}
MATRIX_EXPERIMENTS = [
    e.name for e in EXPERIMENTS if e.name not in config["matrix"]["exclude"]
]
# Taken from the main build, the same in every environment, not compared.
# Taken from the main build as they are: the excluded experiments, the
# listings, and the seed sweep's summary when the article binds it (the sweep
# is the main environment's; it is not run again in each environment).
MATRIX_SHARED = (
    [f"results/{e}.json" for e in config["matrix"]["exclude"]]
    + ([LISTINGS] if LISTING_SOURCES else [])
    + ROBUSTNESS_VALUES
)
MATRIX_LOCKS = expand("results/matrix/{label}/requirements.lock", label=MATRIX)
EXPERIMENT_BY_NAME = {e.name: e for e in EXPERIMENTS}


wildcard_constraints:
    label="|".join(map(re.escape, MATRIX)) or "(?!)",
    experiment="|".join(map(re.escape, EXPERIMENT_NAMES)) or "(?!)",


def matrix_entry_args(wildcards):
    """`--pin P ... [--python V]`: what the entry asks for, so that a changed
    pin or Python rebuilds that environment (an entry without a Python gives
    the same params as before there was the field)."""
    pins = " ".join(f"--pin {shlex.quote(pin)}" for pin in MATRIX[wildcards.label])
    return f"{pins}{matrix_python_argument(wildcards)}"


def matrix_python_argument(wildcards, output=None):
    """` --python V` when the entry names its Python (derived: the entry's
    params already carry it)."""
    python = MATRIX_PYTHON[wildcards.label]
    return f" --python {shlex.quote(python)}" if python else ""


def matrix_python_where(wildcards, output):
    """`--where FILE:LINE: matrix.environments[i].python`, for the error
    when this machine lacks that Python (derived: a moved line reruns nothing)."""
    if not MATRIX_PYTHON[wildcards.label]:
        return ""
    i = list(MATRIX).index(wildcards.label)
    line = config_line(
        config,
        ("matrix", "environments", i, "python"),
        [*workflow.configfiles, *workflow.overwrite_configfiles],
    )
    where = shlex.quote(f"{line}: matrix.environments[{i}].python")
    return f"--where {where}"


def matrix_params(wildcards):
    """The main rule's params for this experiment, as JSON: a function of
    the wildcards only, so an edited parameter reruns it in every
    environment (see experiment_params)."""
    return experiment_params(EXPERIMENT_BY_NAME[wildcards.experiment])


def matrix_threads_argument(wildcards, threads):
    return EXPERIMENT_BY_NAME[wildcards.experiment].threads_argument(threads)


def matrix_mem_mb(wildcards):
    return EXPERIMENT_BY_NAME[wildcards.experiment].mem_mb


def matrix_runtime(wildcards):
    return EXPERIMENT_BY_NAME[wildcards.experiment].runtime


def matrix_limits_argument(wildcards, resources):
    """`--mem-mb M --runtime MIN`: what the job got, checked by the script
    against its footprint as in the main build (derived: reruns nothing)."""
    return EXPERIMENT_BY_NAME[wildcards.experiment].limits_argument(resources)


def matrix_threads(wildcards):
    threads = experiment_threads(EXPERIMENT_BY_NAME[wildcards.experiment])
    return threads(wildcards) if callable(threads) else threads


def matrix_experiment_code(wildcards):
    return experiment_code(wildcards.experiment)
