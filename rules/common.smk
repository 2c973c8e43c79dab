# Shared names for the rules: validated config, library versions, and the
# lists of what the experiments produce.

import importlib.metadata

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from articlekit.config import ConfigError, check_config

# `--config strict=false` arrives as the string "false": read it as YAML
# would, so the schema sees a boolean.
if config.get("strict") in ("true", "True", "false", "False"):
    config["strict"] = config["strict"].lower() == "true"

# Every violation at once, each with its file and line; then Snakemake's own
# validate, the standard check.
try:
    check_config(
        config,
        "config/schema.yaml",
        [*workflow.configfiles, *workflow.overwrite_configfiles],
    )
except ConfigError as error:
    raise WorkflowError(str(error)) from None
validate(config, "../config/schema.yaml")

# The installed versions enter the rules as params: upgrading NumPy or
# PyTorch reruns exactly the experiments that import it.
NUMPY_VERSION = importlib.metadata.version("numpy")
TORCH_VERSION = importlib.metadata.version("torch")

# Code every experiment runs; editing it reruns them.
SHARED_CODE = ["experiments/artifacts.py", "articlekit/jsonio.py"]
ATTENTION_CODE = "experiments/attention.py"

EXPERIMENTS = [
    "environment",
    "scaling",
    "example",
    "multihead",
    "parity",
    "mask_convention",
    "timing",
    "errors",
]
ARTICLE = "article/index.qmd"


def article_figures(wildcards):
    """The figures article/index.qmd shows, read from its image links.

    The manuscript declares what the render depends on: a figure it names
    that no rule builds stops the DAG before any job runs.
    """
    import re
    from pathlib import Path

    text = Path(ARTICLE).read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"!\[[^\]]*\]\(\.\./(figures/[^)\s]+)\)", text)))
    # Raised here, not left to Snakemake: when an old article.html exists,
    # a missing input would silently keep it instead of failing.
    built = {str(path) for rule in workflow.rules for path in rule.output}
    unbuilt = [path for path in named if path not in built]
    if unbuilt:
        raise WorkflowError(
            f"{ARTICLE} shows {', '.join(unbuilt)}, which no rule builds; "
            f"figures that rules build: {', '.join(sorted(p for p in built if p.startswith('figures/')))}"
        )
    return named


RESULTS = expand("results/{name}.json", name=EXPERIMENTS) + ["results/listings.json"]


def every_core(wildcards):
    """All the cores the run was given (--cores), for a job that must run
    alone. Commands that run no job (--report, a dry run) need no --cores:
    they get 1; a real run cannot start without --cores anyway."""
    try:
        return workflow.cores
    except WorkflowError:
        return 1


def job_threads(wildcards, threads):
    """The cores this job was given, for experiments that size thread pools."""
    return threads


# What `rule all` builds besides the experiments.
ARTICLE_OUTPUTS = ["build/article.html", "build/article.md", "build/article.pdf"]
AUDIT_OUTPUTS = [
    "build/audit.html",
    "build/audit.md",
    "build/audit.json",
    "build/diff.md",
    "build/diff.json",
]


# Snapshots frozen by `snakemake release`, one folder per label.
RELEASES = "releases"
RELEASE_LABEL = (
    f"numpy-{NUMPY_VERSION}_torch-{TORCH_VERSION}"
    if config["release_label"] == "auto"
    else config["release_label"]
)


def latest_release(wildcards):
    """The newest releases/<label>/snapshot.json, or nothing before the first
    release. Newest by the snapshot's own released_at, not by file time, so a
    fresh clone orders them the same."""
    from articlekit.release import latest_snapshot

    found = latest_snapshot(RELEASES)
    return [str(found)] if found else []
