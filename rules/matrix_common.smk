# Shared names for rules/matrix.smk: the checked `matrix:` config, what runs
# in each environment, and the rules' param functions.

import json
import re
import shlex

from articlekit.matrixenv import MatrixConfigError, check_matrix

try:
    check_matrix(config, [*workflow.configfiles, *workflow.overwrite_configfiles])
except MatrixConfigError as error:
    raise WorkflowError(str(error)) from None

MATRIX = {entry["label"]: entry["pins"] for entry in config["matrix"]["environments"]}
MATRIX_EXPERIMENTS = [e for e in EXPERIMENTS if e not in config["matrix"]["exclude"]]
# Taken from the main build, the same in every environment, not compared.
MATRIX_SHARED = [f"results/{e}.json" for e in config["matrix"]["exclude"]] + [
    "results/listings.json"
]
MATRIX_LOCKS = expand("results/matrix/{label}/requirements.lock", label=MATRIX)
MATRIX_CODE = ["articlekit/matrix.py", *BIND_CODE, *JUDGING_CODE]


wildcard_constraints:
    label="|".join(map(re.escape, MATRIX)) or "(?!)",
    experiment="|".join(EXPERIMENTS),


def matrix_pin_args(wildcards):
    return " ".join(f"--pin {shlex.quote(pin)}" for pin in MATRIX[wildcards.label])


def matrix_params(wildcards, threads):
    """The main rule's params for this experiment, as JSON (timing adds threads)."""
    params = dict(config.get(wildcards.experiment) or {})
    if wildcards.experiment == "timing":
        params["threads"] = threads
    return json.dumps(params, sort_keys=True)


def matrix_threads(wildcards):
    return every_core(wildcards) if wildcards.experiment == "timing" else 1
