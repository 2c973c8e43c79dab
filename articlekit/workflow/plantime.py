"""What runs once per invocation before the rules exist: the plan's checks
and the machine's facts, called by the module's Snakefile in turn.

    check_config_files(files)          each config file read strictly (a key given twice, 1e-7 as text)
    normalised(config)                 --config strict=false read as YAML would; --config versions= taken out
    with_defaults(config, files)       the experiments' declared defaults under the files (their PARAMETERS)
    check_config(config, files, ...)   the module's schema, the article's, the keys nothing reads
    check_writable(folder)             a sentence, not Snakemake's traceback about .snakemake/locks
    check_folder_name(folder)          a sentence, not Snakemake's traceback about a brace in the path
    ThisMachine(overrides)             installed libraries and renderers, for plan.build
    check_footprints(plan, memory)     each experiment's footprint against its mem_mb and runtime

Each raises PlanError with the file, the line and the fix; the Snakefile
turns it into Snakemake's WorkflowError (printed without a traceback).
What passed is remembered between runs (articlekit/workflow/plancache.py):
a plan whose inputs did not change repeats no check.
"""

import copy
import os
import tempfile

from articlekit.data.config import (
    ConfigError,
    check_article_config,
    check_config as check_against_schema,
    check_known_keys,
    check_syntax_for_snakemake,
    declared_sources,
    where,
)
from articlekit.data.config import with_defaults as defaults_under
from articlekit.workflow import codegraph, settings
from articlekit.workflow.plan import ARTICLE_SCHEMA, MODULE_SCHEMA, PlanError, module_files, reserved_rule_names


def check_config_files(config_files):
    """Each file read again, strictly, on every plan and before anything
    walks the config: Snakemake's own reader lets a key given twice
    silently win, takes 1e-7 for text and expands a YAML alias bomb until
    memory runs out. (Raises Snakemake's WorkflowError itself.)"""
    for path in config_files:
        check_syntax_for_snakemake(path)


def normalised(config):
    """(the config as the schemas are to see it, the version overrides).
    `--config strict=false` arrives as the string "false": read as YAML
    would. `--config versions='{torch: "9.9"}'` stands in for installed
    versions (a faked upgrade); it is the command line's, not the
    article's, so it is taken out before the article's schema sees it."""
    config = dict(config)
    if "strict" in config:
        config["strict"] = settings.strict(config)
    try:
        overrides = settings.version_overrides(config)
    except ValueError as error:
        raise PlanError(str(error)) from None
    config.pop("versions", None)
    return config, overrides


def with_defaults(config, config_files):
    """(the config over its experiments' declared defaults, its sources:
    each script that declares PARAMETERS, then the config files). The
    defaults live beside each experiment's code (experiments/NAME.py);
    config.yaml and each --configfile override them key by key, and a
    message about a default names the script's line."""
    try:
        merged, scripts = defaults_under(config, declared_sources(config))
    except ConfigError as error:
        raise PlanError(str(error)) from None
    return merged, [*scripts, *config_files]


def check_config(config, config_files, snakefile, memory, validate=None):
    """Every violation at once, each with its file and line: first the keys
    this module reads (an experiment named like one of its rules refused),
    then the article's own schema when it has one, then the top-level keys
    nothing reads. `validate(config, schema)` (Snakemake's, the standard
    check) runs last and may fill in a schema's defaults. Remembered in
    `memory` (a PlanMemory) when it passed and changed nothing."""
    fingerprint = memory.fingerprint(
        "config",
        files=[*config_files, MODULE_SCHEMA, ARTICLE_SCHEMA, *module_files(), snakefile],
        values=config,
        code=["articlekit.data.config", "articlekit.workflow.settings", "articlekit.workflow.plantime"],
        libraries=["jsonschema", "pyyaml", "snakemake"],
    )
    if memory.recall(fingerprint):
        return
    unchecked = copy.deepcopy(config)
    _check(config, config_files, snakefile)
    if validate and os.path.exists(ARTICLE_SCHEMA):
        validate(config, os.path.abspath(ARTICLE_SCHEMA))
    if config == unchecked:
        memory.keep(fingerprint)


def _check(config, config_files, snakefile):
    experiments = config.get("experiments") or {}
    try:
        check_against_schema(
            config,
            MODULE_SCHEMA,
            config_files,
            rule_names=[*reserved_rule_names(experiments), *settings.rule_names([snakefile])],
        )
        # its schema, and the types config.yaml gives what no schema describes
        check_article_config(config, ARTICLE_SCHEMA, config_files, experiments, declared_sources(config))
        # A top-level key is the module's, matrix:, or an experiment's
        # parameters: anything else is a slip (publishin:) never read.
        check_known_keys(
            config,
            [*settings.module_keys(MODULE_SCHEMA), "matrix", *experiments],
            config_files,
            "neither a setting of articlekit's module nor an experiment's parameters (experiments:)",
            explain=lambda key, guess: settings.undeclared_experiment(
                key,
                config[key],
                codegraph.experiment_path(key),
                where(config, "experiments", config_files) if "experiments" in config else "a new top-level key",
                guess,
            ),
        )
    except ConfigError as error:
        raise PlanError(str(error)) from None


def check_writable(folder="."):
    """Stop with a sentence, not Snakemake's traceback about
    .snakemake/locks, when the checkout cannot be written."""
    for place in [folder, f"{folder}/.snakemake"]:
        if not os.path.isdir(place):
            continue
        try:
            with tempfile.TemporaryFile(dir=place):
                pass
        except OSError as error:
            raise PlanError(
                f"{os.path.abspath(place)} is not writable ({error.strerror}): the build writes "
                "results/, figures/, build/ and logs/ there, and Snakemake its lock in .snakemake/. "
                "Make the folder writable, or build in a writable copy: "
                "cp -r . /some/writable/folder && cd /some/writable/folder"
            ) from None


def check_folder_name(folder="."):
    """Stop with a sentence when the project's path holds a brace: Snakemake
    reads one in a path as a wildcard (it formats the rules' environment
    file and its own lock files' pattern with the path in them), and fails
    with a traceback about an unknown name or a bad group name. Snakemake's
    own limit: no build can run there, only a rename helps."""
    path = os.path.abspath(folder)
    if "{" in path or "}" in path:
        raise PlanError(
            f"{path}: the project's path holds a brace, which Snakemake reads as a wildcard: it cannot "
            "plan or lock a build there. Rename the folder that holds it, or build in a copy: "
            "cp -r . /some/other/folder && cd /some/other/folder"
        )


def check_footprints(plan, memory=None):
    """Sizes checked before any job, a dry run too: each experiment's
    footprint (articlekit/experiment/footprint.py, read from its source
    without importing it) against the mem_mb and runtime its entry
    declares; a refusal names the key. Remembered in `memory` (a
    PlanMemory) when every one passed: a function of the experiments'
    sources, their params and limits, and the code that judges them."""
    experiments = [
        (e.name, codegraph.experiment_path(e.name), e.params(plan.config), e.mem_mb, e.runtime)
        for e in plan.experiments
    ]
    fingerprint = None
    if memory is not None:
        fingerprint = memory.fingerprint(
            "footprints",
            files=[path for _, path, _, _, _ in experiments if path is not None],
            values=[(name, str(path), params, mem_mb, runtime) for name, path, params, mem_mb, runtime in experiments],
            code=["articlekit.experiment.footprint", "articlekit.workflow.plantime"],
        )
        if memory.recall(fingerprint):
            return
    from articlekit.experiment import footprint

    try:
        for name, path, params, mem_mb, runtime in experiments:
            footprint.check_plan(
                name, path, params, mem_mb, runtime, where=lambda key: where(plan.config, key, plan.config_files)
            )
    except (footprint.SizeError, SyntaxError) as error:
        raise PlanError(str(error)) from None
    if memory is not None:
        memory.keep(fingerprint)


class ThisMachine:
    """What is installed here, as plan.build asks: a library's version
    (an override from --config versions= stands in for it) and the
    renderer `auto` stands for, with its version (read cheaply:
    articlekit/render/renderers.py)."""

    def __init__(self, overrides=None):
        self.overrides = dict(overrides or {})

    def library_version(self, library):
        return settings.installed_versions([library], self.overrides)[library]

    def renderer(self, choice):
        from articlekit.render import renderers

        try:
            return renderers.choose(choice)
        except ValueError as error:
            raise PlanError(str(error)) from None

    def renderer_version(self, name):
        from articlekit.render import renderers

        return renderers.version(name)
