"""What the workflow module reads from the config, interpreted once.

The .smk files name rules, inputs and outputs; every decision that depends
on the config (an experiment entry's defaults, how many threads it takes and
whether it is told, which library versions enter the rules, the release
label) is made here, in plain Python that the tests call directly.
"""

import importlib.metadata
from dataclasses import dataclass, field

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

    @property
    def json(self):
        return f"results/{self.name}.json"

    @property
    def takes_every_core(self):
        return self.threads == EVERY_CORE

    def params(self, config, threads):
        """The experiment's params: its config section, and for a job that
        takes every core the count it was given (it sizes its thread pools
        from it; a job with a fixed count has nothing to learn)."""
        params = dict(config.get(self.name) or {})
        if self.takes_every_core:
            params["threads"] = threads
        return params


def experiments(config):
    """config `experiments:` as Experiment entries, in the config's order."""
    entries = config.get("experiments") or {}
    return [
        Experiment(name=name, figures=dict(entry.get("figures") or {}),
                   libraries=tuple(entry.get("libraries") or ()), threads=entry.get("threads", 1),
                   mem_mb=entry.get("mem_mb", DEFAULT_MEM_MB), runtime=entry.get("runtime", DEFAULT_RUNTIME_MIN))
        for name, entry in entries.items()
        for entry in [entry or {}]
    ]


def publishing(config):
    return config.get("publishing") or {}


def recorded_libraries(config, experiment):
    """What an experiment's artifact records the version of (if it imports
    it): the article's publishing.libraries, then the entry's own libraries.
    Python is always recorded, so never listed."""
    names = [*(publishing(config).get("libraries") or {}), *experiment.libraries]
    return [name for name in dict.fromkeys(names) if name != "python"]


def library_label(config, library):
    """How the article names a library in messages (publishing.libraries: torch -> PyTorch)."""
    return (publishing(config).get("libraries") or {}).get(library) or library


def version_overrides(config):
    """`--config versions='{torch: "9.9"}'`: {library: version} as strings.
    Raises ValueError naming the fix when it is not such a mapping."""
    given = config.get("versions") or {}
    if not isinstance(given, dict) or not all(isinstance(v, (str, int, float)) for v in given.values()):
        raise ValueError(f"--config versions={given!r}: write a mapping of library to version, "
                         "e.g. --config versions='{NAME: \"9.9\"}' for a distribution NAME")
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


def release_label(config, versions):
    """The folder name `snakemake release` freezes this build under: config
    release_label, or with `auto` the libraries of publishing.release_label
    and their versions (numpy-2.4.6_torch-2.13.0; `none` for one not
    installed). With no libraries named, Python's version names it."""
    label = config.get("release_label", "auto")
    if label != "auto":
        return label
    libraries = publishing(config).get("release_label") or []
    if not libraries:
        import platform

        return f"python-{platform.python_version()}"
    return "_".join(f"{library}-{versions.get(library) or 'none'}" for library in libraries)


def strict(config):
    """config strict as a boolean: `--config strict=false` hands over a string."""
    value = config.get("strict", True)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def listing_sources(config):
    """The source files publishing.listings names, in order."""
    listings = publishing(config).get("listings") or {}
    return [entry["source"] for entry in listings.values() if isinstance(entry, dict) and "source" in entry]
