# Shared names for the rules: validated config, library versions, and the
# lists of what the experiments produce.

import importlib.metadata
import json
import os

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

from articlekit.config import ConfigError, check_config
from articlekit.publishing import PublishingError
from articlekit.publishing import parse as parse_publishing

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

# What articlekit needs to know about this article, checked once here and
# handed to its commands as one JSON argument: --publishing {params.publishing:q}.
try:
    PUBLISHING = parse_publishing(config.get("publishing"))
except PublishingError as error:
    raise WorkflowError(f"config: {error}") from None
# Key order kept: publishing.libraries is also the order pages list them in.
PUBLISHING_JSON = json.dumps(config.get("publishing") or {})


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

# The installed versions enter the rules as params: upgrading NumPy or
# PyTorch reruns exactly the experiments that import it.
NUMPY_VERSION = importlib.metadata.version("numpy")
TORCH_MISSING = (
    "PyTorch is not installed, and the experiments environment, parity, "
    "mask_convention, timing and errors import it. Install it with "
    "`pip install -r requirements.txt` (CPU build: `pip install torch "
    "--index-url https://download.pytorch.org/whl/cpu`), or use environment.yml. "
    "The NumPy-only experiments run without it, e.g. "
    "`snakemake --cores 2 results/scaling.json`."
)


def torch_missing(wildcards):
    """Stands in for the version when PyTorch is not installed: a rule that
    imports it stops before any job starts, saying what to install; a dry
    run still shows the plan, and NumPy-only targets still build."""
    if not workflow.dryrun:
        raise WorkflowError(TORCH_MISSING)
    return "not installed"


try:
    TORCH_VERSION = importlib.metadata.version("torch")
except importlib.metadata.PackageNotFoundError:
    logger.warning(TORCH_MISSING)
    TORCH_VERSION = torch_missing

# Code every experiment runs; editing it reruns them.
SHARED_CODE = ["experiments/artifacts.py", "articlekit/jsonio.py"]
ATTENTION_CODE = "experiments/attention.py"
# The sources the article lists (publishing.listings), cut by the listings rule.
LISTING_SOURCES = [listing.source for listing in PUBLISHING.listings.values()]

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


def every_output(wildcards):
    """Every file the rules build, the default target.

    Not only the article: Snakemake 9 does not rebuild a missing
    intermediate (results/*.json after a failed job or an `rm`) while the
    files made from it exist, so asking for the article alone would exit 0
    over a stale one. With every output a target, the next build after a
    failure or a deletion rebuilds what is missing, or fails again. Read
    from the rules themselves, so a new rule cannot be left out. Rules of
    an opt-in target (OPT_IN_RULE_FILES: the version matrix) are not part
    of the default build.
    """
    return [
        str(path)
        for rule in workflow.rules
        if not str(rule.snakefile).endswith(OPT_IN_RULE_FILES)
        for path in rule.output
    ]


# Rules asked for by name only (`snakemake matrix`), never by default.
OPT_IN_RULE_FILES = ("rules/matrix.smk",)


# Snapshots frozen by `snakemake release`, one folder per label.
RELEASES = "releases"


def installed_version(library):
    """The installed version of a library, or None when it is not installed."""
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return None


RELEASE_LABEL = (
    PUBLISHING.label_for(
        {lib: installed_version(lib) for lib in PUBLISHING.release_label}
    )
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
