"""What the workflow module reads from the config, interpreted once.

The .smk files name rules, inputs and outputs; every decision that depends
on the config (an experiment entry's defaults, how many threads it takes and
whether it is told, which library versions enter the rules, the release
label) is made here, in plain Python that the tests call directly.
"""

import importlib.metadata
import os
from dataclasses import dataclass, field

from articlekit.core.errors import ArticlekitError
from articlekit.experiment import runs

# A job that asks for every core the run was given.
EVERY_CORE = "all"

DEFAULT_MEM_MB = 1000
DEFAULT_RUNTIME_MIN = 10


@dataclass(frozen=True)
class Experiment:
    """One entry of config `experiments:`: experiments/<name>.py and what its rule declares."""

    name: str
    figures: dict = field(default_factory=dict)  # output name -> path
    libraries: tuple = ()  # distributions whose installed version reruns it
    threads: object = 1  # a count, or EVERY_CORE
    mem_mb: int = DEFAULT_MEM_MB
    runtime: int = DEFAULT_RUNTIME_MIN
    runs: int = 1  # independent processes, combined into one artifact (articlekit.experiment.runs)

    @property
    def json(self):
        return f"results/{self.name}.json"

    @property
    def repeated(self):
        """Run as several processes, each a job, then combined: runs > 1."""
        return self.runs > 1

    @property
    def run_pattern(self):
        """A run's artifact, {run} its number (from 1)."""
        return runs.run_path(self.name, "{run}")

    @property
    def run_jsons(self):
        """Every run's artifact, in run order: what the combining step reads."""
        return runs.run_paths(self.name, self.runs)

    @property
    def takes_every_core(self):
        return self.threads == EVERY_CORE

    def params(self, config):
        """The experiment's params: its config section, as plain data.

        Plain on purpose: Snakemake compares a rule's params with the last
        run's only when they are values (or functions of the wildcards); a
        params function of `threads` counts as derived and is left out of
        that comparison, so an edited parameter would rerun nothing. The
        core count of a job that takes every core travels apart, as
        `--threads` (threads_argument), and enters the params at run time.
        """
        return dict(config.get(self.name) or {})

    def limits_argument(self, resources):
        """`--mem-mb M --runtime MIN`: the resources the job was given, which
        the script checks its footprint against before any work. Read from
        the job's resources (a profile may change them), and so "derived":
        a new limit reruns nothing, as it changes no result."""
        return f"--mem-mb {resources.mem_mb} --runtime {resources.runtime}"

    def threads_argument(self, threads):
        """`--threads N` for a job that takes every core (it sizes its thread
        pools from N); nothing for a fixed count, which has nothing to learn."""
        return f"--threads {threads}" if self.takes_every_core else ""


def experiments(config):
    """config `experiments:` as Experiment entries, in the config's order."""
    return [_experiment(name, entry or {}) for name, entry in (config.get("experiments") or {}).items()]


def _experiment(name, entry):
    return Experiment(
        name=name,
        figures=dict(entry.get("figures") or {}),
        libraries=tuple(entry.get("libraries") or ()),
        threads=entry.get("threads", 1),
        mem_mb=entry.get("mem_mb", DEFAULT_MEM_MB),
        runtime=entry.get("runtime", DEFAULT_RUNTIME_MIN),
        runs=entry.get("runs", 1),
    )


def undeclared_experiment(name, section, script, declare_at, guess):
    """What a top-level section NAME: that experiments: does not declare is,
    and the fix: the parameters of experiments/NAME.py (`script`, when it
    exists), which nothing runs until it is declared; perhaps an
    experiment's parameters, perhaps a misspelt setting (`guess`, the
    closest key) when it is a mapping; None when it is neither (the guess
    stands). declare_at: where experiments: is (config.yaml:9)."""
    declare = f"declare it under experiments: ({declare_at}) as `{name}: {{}}`"
    if script:
        return (
            f"{script} is there, but experiments: does not declare {name!r}, so no rule runs it and nothing "
            f"reads these parameters; {declare} (its figures:, libraries:, threads:, mem_mb: and runtime: "
            f"go there too)"
        )
    if isinstance(section, dict):
        return (
            f"if it holds an experiment's parameters, {declare} and write experiments/{name}.py; if it is "
            f"one of articlekit's settings, {guess}"
        )
    return None


def rule_names(snakefiles):
    """The names of the rules (and checkpoints) the files define, read from
    their `rule NAME:` lines: what an experiment may not be called, since
    its rule takes its name. Read before any rule exists, so that the
    config's check can say so instead of Snakemake's CreateRuleException."""
    import re

    found = []
    for path in snakefiles:
        try:
            with open(path, encoding="utf-8") as f:
                found += re.findall(r"^[ \t]*(?:rule|checkpoint)[ \t]+([A-Za-z_]\w*)[ \t]*:", f.read(), re.M)
        except OSError:
            continue
    return sorted(set(found))


def module_keys(schema):
    """The top-level keys the module's schema (its path) names (strict, experiments, ...)."""
    import yaml

    with open(schema, encoding="utf-8") as f:
        return list(yaml.safe_load(f)["properties"])


def recorded_libraries(publishing, experiment):
    """What an experiment's artifact records the version of (if it imports
    it): the article's publishing.libraries, then the entry's own libraries.
    Python is always recorded, so never listed."""
    names = [*publishing.libraries, *experiment.libraries]
    return [name for name in dict.fromkeys(names) if name != "python"]


def missing_library(config, publishing, library):
    """Why a library that experiments list cannot be found, and what to do:
    what to install (the article's requirements.txt or environment.yml when
    it has them) and which experiments still build without it."""
    entries = experiments(config)
    users = [e.name for e in entries if library in e.libraries]
    others = [e.name for e in entries if library not in e.libraries]
    how = "`pip install -r requirements.txt`" if os.path.exists("requirements.txt") else f"`pip install {library}`"
    if os.path.exists("environment.yml"):
        how += ", or use environment.yml"
    without = (
        f" The experiments that do without it still build, e.g. `snakemake --cores 2 results/{others[0]}.json`."
        if others
        else ""
    )
    return (
        f"{publishing.display(library)} is not installed, and the experiments {', '.join(users)} import it "
        f"(their libraries: in config experiments:). Install it with {how}.{without}"
    )


def version_overrides(config):
    """`--config versions='{torch: "9.9"}'`: {library: version} as strings.
    Raises ValueError naming the fix when it is not such a mapping."""
    given = config.get("versions") or {}
    if not isinstance(given, dict) or not all(isinstance(v, (str, int, float)) for v in given.values()):
        raise ArticlekitError(
            f"--config versions={given!r}: write a mapping of library to version, "
            "e.g. --config versions='{NAME: \"9.9\"}' for a distribution NAME"
        )
    return {str(name): str(version) for name, version in given.items()}


def installed_versions(libraries, overrides=None):
    """{library: its installed version, or None when it is not installed};
    an override stands in for the installed version (a faked upgrade)."""
    overrides = overrides or {}
    versions = {}
    for library in libraries:
        if library in overrides:
            versions[library] = overrides[library]
            continue
        try:
            versions[library] = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            versions[library] = None
    return versions


def release_label(config, publishing, versions):
    """The folder name `snakemake release` freezes this build under: config
    release_label, or with `auto` the libraries of publishing.release_label
    and their versions (numpy-2.4.6_torch-2.13.0; `none` for one not
    installed). With no libraries named, Python's version names it."""
    label = config.get("release_label", "auto")
    if label != "auto":
        return label
    if not publishing.release_label:
        import platform

        return f"python-{platform.python_version()}"
    return publishing.label_for(versions)


def strict(config):
    """config strict as a boolean: `--config strict=false` hands over a string."""
    value = config.get("strict", True)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def listing_sources(publishing):
    """The source files publishing.listings names, in order."""
    return [listing.source for listing in publishing.listings.values()]


# ---- seed robustness (config robustness:) ------------------------------------------------

DEFAULT_CHUNK = 50  # seeds per job: one interpreter and one import of torch per 50 seeds
DEFAULT_FLAG_SHARE = 0.05
# The most jobs the sweep may add to a plan. Snakemake takes milliseconds
# per job to plan (6 ms here under load), every plan, a dry run too: 100
# million seeds in chunks of 50 planned for minutes without a word. A sweep
# over more seeds takes bigger chunks. (robustness.seeds has its own
# maximum in the module's schema.)
MAX_SWEEP_JOBS = 1000


@dataclass(frozen=True)
class Robustness:
    """config `robustness:`, interpreted: which experiments the sweep runs
    (those whose params have an integer `seed`, less `exclude`), how many
    seeds, in chunks of how many, and when a claim is flagged as weak."""

    seeds: int
    chunk: int
    flag_share: float
    experiments: tuple  # Experiment entries the sweep runs, in the config's order
    excluded: dict  # name -> why it is left out (config robustness.exclude)
    unseeded: tuple  # experiments without a seed parameter
    fixed: dict = None  # key prefix -> why no seed moves it (config robustness.fixed)

    @property
    def chunk_ranges(self):
        """[(first, count)]: the sweep's seeds in chunks, one job each (the sweep's --first and --count)."""
        return chunk_ranges(self.seeds, self.chunk)

    @property
    def report_settings(self):
        """What the summary step is told (articlekit.review.robustness)."""
        return {
            "flag_share": self.flag_share,
            "excluded": self.excluded,
            "unseeded": list(self.unseeded),
            "fixed": dict(self.fixed or {}),
        }


def chunk_ranges(seed_count, chunk):
    """[(first, count)] covering seed_count seeds in chunks of at most `chunk`."""
    return [(first, min(chunk, seed_count - first)) for first in range(0, seed_count, chunk)]


def robustness(config, where=lambda key: "config"):
    """The Robustness of config `robustness:`; ValueError naming the key
    (`where(key)` places it) for an exclude that names no experiment or
    an experiment left with nothing to sweep."""
    section = config["robustness"]
    entries = experiments(config)
    names = [e.name for e in entries]
    excluded = dict(section.get("exclude") or {})
    for name in excluded:
        if name not in names:
            raise ArticlekitError(
                f"{where(f'robustness.exclude.{name}')}: robustness.exclude names {name!r}, which is "
                f"not an experiment of this article (experiments: {', '.join(names)})"
            )

    fixed = dict(section.get("fixed") or {})
    for prefix in fixed:
        if prefix.partition(".")[0] not in names:
            raise ArticlekitError(
                f"{where('robustness.fixed')}: robustness.fixed names {prefix!r}, whose first "
                f"part is not an experiment of this article (experiments: {', '.join(names)})"
            )

    def seeded(entry):
        seed = entry.params(config).get("seed")
        return isinstance(seed, int) and not isinstance(seed, bool)

    found = Robustness(
        seeds=section["seeds"],
        chunk=section.get("chunk", DEFAULT_CHUNK),
        flag_share=section.get("flag_share", DEFAULT_FLAG_SHARE),
        experiments=tuple(e for e in entries if seeded(e) and e.name not in excluded),
        excluded=excluded,
        unseeded=tuple(e.name for e in entries if not seeded(e) and e.name not in excluded),
        fixed=fixed,
    )
    swept = len(found.experiments)
    chunks = -(-found.seeds // found.chunk)
    if swept * chunks > MAX_SWEEP_JOBS:
        enough = -(-found.seeds // max(1, MAX_SWEEP_JOBS // swept))
        raise ArticlekitError(
            f"{where('robustness.seeds')}: robustness.seeds = {found.seeds} in chunks of "
            f"{found.chunk} makes {swept * chunks:,} jobs ({swept} experiments x {chunks:,} chunks), "
            f"more than the {MAX_SWEEP_JOBS:,} a sweep may plan (each costs every plan time); "
            f"raise robustness.chunk to at least {enough:,}, or lower robustness.seeds"
        )
    return found


def cited_experiments(text, occurrences=None):
    """The first part of every key the article's shortcodes name, their
    claims' key operands included ({"scaling", "robustness", ...}). An
    article whose shortcodes do not parse (bind will say why) is read
    loosely, each shortcode's first word, so that the plan stays the same.
    `occurrences`: the text's shortcodes, when they were scanned already."""
    import re

    from articlekit.article.shortcodes import ShortcodeSyntaxError, scan
    from articlekit.core.claims import ClaimError, keys_referenced

    try:
        occurrences = scan(text) if occurrences is None else occurrences
    except ShortcodeSyntaxError:
        return set(re.findall(r"\{\{<\s*\w+\s+([A-Za-z_][\w-]*)\.", text))
    keys = []
    for sc in occurrences:
        if sc.escaped or sc.context == "comment":
            continue
        keys += sc.args[:1]
        try:
            keys += keys_referenced(sc.kwargs["expect"]) if sc.kwargs.get("expect") else []
        except ClaimError:
            pass
    return {key.partition(".")[0] for key in keys}
