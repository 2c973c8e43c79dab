"""An article's build, read from its config once: the Plan.

`build(config, config_files, machine)` is plain Python. It reads the
config (checked already: articlekit/workflow/plantime.py), the article and
which files exist, and asks `machine` what is installed; it runs no
Snakemake, no subprocess, writes nothing and registers nothing, so a test
builds one from a dict. Every name the rules read comes from the one Plan
the module's Snakefile builds per invocation (articlekit/workflow/rules/):
the experiments with their params and figures, the paths every rule agrees
on, the renderer and its versions, the library versions, the release
label, the seed sweep's chunks and the version matrix's cells.

A config this module cannot plan (a `publishing:` section, a
`robustness:` or `matrix:` entry that names what is not there, an article
that does not read as text) raises PlanError, whose message names the
file, the line and the fix.
"""

import copy
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from articlekit.core.errors import ArticlekitError
from articlekit.core.sources import SourceError, read_article
from articlekit.data.config import where
from articlekit.data.publishing import Publishing, PublishingError
from articlekit.data.publishing import parse as parse_publishing
from articlekit.workflow import FOLDER, settings

RULES_DIR = FOLDER / "rules"
SCHEMAS_DIR = FOLDER / "schemas"
MODULE_SCHEMA = str(SCHEMAS_DIR / "schema.yaml")
ARTICLE_SCHEMA = "config/schema.yaml"  # the article's own, when it has one

# Paths every rule agrees on, named once.
RELEASES = "releases"  # snapshots frozen by `snakemake release`, one folder per label
LISTINGS = "results/listings.json"
VALUES = "build/values.json"
BINDINGS = "build/bindings.json"
LINT_REPORT = "build/lint.txt"
BOUND_ARTICLE = "build/article.bound.md"  # the article with its shortcodes resolved (bind's)
PANDOC_TREE = "build/article.ast.json"  # the bound article as Pandoc reads it
AUDIT_JSON = "build/audit.json"
ROBUSTNESS_JSON = "build/robustness.json"
MATRIX_JSON = "build/matrix.json"
MANIFEST = "build/ro-crate-metadata.json"  # the build's RO-Crate (articlekit/review/crate.py)
JOURNAL_BUNDLE = "build/article.meca.zip"  # the JATS edition and the crate (articlekit/review/journal_bundle.py)
# Which rule wrote each output, and its digest when the job finished (ownership.py).
LEDGER = ".snakemake/articlekit/ledger.json"
# What the plan's checks found passed, and the code graph's parses (plancache.py, codegraph.py).
PLAN_MEMORY = ".snakemake/articlekit/plan.json"
CODEGRAPH_MEMORY = ".snakemake/articlekit/codegraph.json"
# Rule files asked for by name only (`snakemake matrix`, `snakemake robustness`), never by default.
OPT_IN_RULE_FILES = tuple(str(RULES_DIR / name) for name in ("matrix.smk", "robustness.smk"))
NOT_INSTALLED = "not installed"


class PlanError(ArticlekitError):
    """A config the module cannot plan; the message names the key, its line and the fix."""


def module_files():
    """The module's own Snakefile and rule files: part of every check's fingerprint and of the manifest."""
    return tuple(sorted([str(FOLDER / "Snakefile"), *(str(path) for path in RULES_DIR.glob("*.smk"))]))


def reserved_rule_names(experiments=None):
    """What an experiment may not be called, since its rule takes its name:
    the names of the module's own rules, read from their `rule NAME:` lines
    (settings.rule_names) before any rule exists, and NAME_combine for each
    experiment of config `experiments:` (a mapping, unchecked) with runs
    (the rule that combines its runs)."""
    combined = [
        f"{name}_combine"
        for name, entry in (experiments or {}).items()
        if isinstance(entry, dict) and isinstance(entry.get("runs"), int) and entry["runs"] > 1
    ]
    from articlekit.render import formats  # every format's rule is named after it, chosen or not

    return tuple(sorted({*settings.rule_names(module_files()), *formats.names(), *combined}))


@dataclass(frozen=True)
class Renderer:
    """What renders the page, and the versions the render and PDF rules take
    as params (an upgrade, or a switch of renderer, renders again)."""

    name: str  # "quarto" or "pandoc": what `renderer: auto` stands for here
    version: str
    pandoc_version: str
    typst_version: str


@dataclass(frozen=True)
class FormatRule:
    """One format the article is written in (config publishing.formats), as
    its rule reads it: the rule takes the format's name."""

    name: str
    output: str
    module: str  # its module in articlekit/render/formats: the rule's code, with the render command's
    quarto: bool  # Quarto writes it when the build renders with Quarto: the renderer is its param
    tools: tuple = ("pandoc",)  # what writes it on the Pandoc route (formats.Format.tools)
    caption: str = None  # its caption in Snakemake's report (rules/report/article-NAME.rst), if any
    priority: int = 0  # its rule's Snakemake priority (formats.Format.priority)


@dataclass(frozen=True)
class Sweep:
    """config `robustness:` as jobs: each swept experiment's seeds in chunks,
    one job per chunk, then the summary the article may bind."""

    settings: settings.Robustness
    chunk_ranges: tuple  # (first seed, count) per chunk
    figures: MappingProxyType  # figures/robustness-<key>.svg -> key, the article's image links
    shortcodes: MappingProxyType  # what the article prints and claims (their digest a param of the summary)
    # key -> its figure's x-axis in the prose's words (config robustness.labels)
    labels: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    @property
    def experiments(self):
        return tuple(e.name for e in self.settings.experiments)

    def experiment(self, name):
        return next(e for e in self.settings.experiments if e.name == name)

    @property
    def chunks(self):
        """Every chunk's artifact, experiment by experiment."""
        return tuple(
            f"results/robustness/{name}/chunk-{chunk}.json"
            for name in self.experiments
            for chunk in range(len(self.chunk_ranges))
        )

    @property
    def wildcard(self):
        """The pattern of {experiment} in a chunk's path: only the swept experiments."""
        return "|".join(map(re.escape, self.experiments)) or "(?!)"

    def seed_arguments(self, chunk):
        """`--first F --count C`: which of the sweep's seeds chunk `chunk` runs."""
        first, count = self.chunk_ranges[int(chunk)]
        return f"--first {first} --count {count}"

    @property
    def settings_json(self):
        return json.dumps(self.settings.report_settings)

    @property
    def shortcodes_json(self):
        return json.dumps(dict(self.shortcodes))

    @property
    def shortcodes_digest(self):
        """The summary's param: a digest of the shortcodes, not their list (seed_keys.shortcodes_digest)."""
        from articlekit.article.seed_keys import shortcodes_digest

        return shortcodes_digest(self.shortcodes)

    @property
    def figure_arguments(self):
        """`--figure KEY=PATH` per figure, `--label KEY=WORDS` per labelled
        one: a param, so that an edited label redraws its figure."""
        figures = [f"--figure {shlex.quote(f'{key}={path}')}" for path, key in self.figures.items()]
        drawn = dict.fromkeys(self.figures.values())
        labels = [f"--label {shlex.quote(f'{key}={words}')}" for key, words in self.labels.items() if key in drawn]
        return " ".join(figures + labels)

    @property
    def outputs(self):
        """Every file of the sweep, for the default target of an article that binds its keys."""
        return [*self.chunks, ROBUSTNESS_JSON, "build/robustness.md", "build/robustness.html", *self.figures]


@dataclass(frozen=True)
class Matrix:
    """config `matrix:` as cells: each experiment not excluded, in each environment."""

    pins: MappingProxyType  # label -> its pins, in the config's order
    python: MappingProxyType  # label -> the Python it names ("3.13"), or None: the build's own
    experiments: tuple  # the experiments run in every environment
    shared: tuple  # taken from the main build as they are, the same in every environment
    where_python: MappingProxyType  # label -> "FILE:LINE: matrix.environments[i].python", for its error

    @property
    def labels(self):
        return tuple(self.pins)

    @property
    def locks(self):
        return tuple(f"results/matrix/{label}/requirements.lock" for label in self.pins)

    @property
    def cells(self):
        """(label, experiment) for every job that runs an experiment in an environment."""
        return tuple((label, name) for label in self.pins for name in self.experiments)

    @property
    def label_wildcard(self):
        return "|".join(map(re.escape, self.pins)) or "(?!)"

    def entry_arguments(self, label):
        """`--pin P ... [--python V]`: what the entry asks for, so that a
        changed pin or Python rebuilds that environment."""
        pins = " ".join(f"--pin {shlex.quote(pin)}" for pin in self.pins[label])
        return f"{pins}{self.python_argument(label)}"

    def python_argument(self, label):
        python = self.python[label]
        return f" --python {shlex.quote(python)}" if python else ""

    def python_where_argument(self, label):
        """`--where 'FILE:LINE: matrix.environments[i].python'` when the entry names its Python."""
        return f"--where {shlex.quote(self.where_python[label])}" if self.python[label] else ""


@dataclass(frozen=True)
class Plan:
    """What the rules read, decided once from the config."""

    # the paths every rule agrees on, as the rules read them (PLAN.values)
    releases, listings, values, bindings, lint_report = RELEASES, LISTINGS, VALUES, BINDINGS, LINT_REPORT
    pandoc_tree, audit_json, robustness_json, matrix_json = PANDOC_TREE, AUDIT_JSON, ROBUSTNESS_JSON, MATRIX_JSON
    manifest, ledger, bound_article = MANIFEST, LEDGER, BOUND_ARTICLE
    journal_bundle = JOURNAL_BUNDLE

    config: dict  # a copy of the checked config, for what is looked up by key (where a key is)
    config_files: tuple
    snakefile: str  # the article's own Snakefile
    article: str
    baseline: str
    strict: object
    experiments: tuple  # settings.Experiment, in the config's order
    publishing: Publishing
    renderer: Renderer
    versions: MappingProxyType  # library -> installed version, or None
    release_label: str
    extension: tuple  # the article's own shortcode extension's files
    article_style: tuple
    cited: tuple  # the bibliography and CSL style _quarto.yml names: every format reads them
    report_front_page: str
    conda_env: object  # the article's environment.yml, absolute, or None
    cites_robustness: bool  # the article binds robustness.* keys
    formats: tuple = ()  # FormatRule, one per format the article is written in
    sweep: object = None  # Sweep, for an article with a robustness: section
    matrix: object = None  # Matrix, for an article with a matrix: section
    missing_libraries: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    # ---- the article and its neighbours

    @property
    def article_dir(self):
        return os.path.dirname(self.article) or "."

    @property
    def quarto_settings(self):
        """The _quarto.yml the article's settings are read from (the first
        from its folder up: the project's), where there is one: every
        format reads them (the page's options, the bibliography)."""
        path = _quarto_settings(self.article_dir)
        return [path] if path else []

    # ---- experiments

    @property
    def experiment_names(self):
        return tuple(e.name for e in self.experiments)

    def experiment(self, name):
        return next(e for e in self.experiments if e.name == name)

    @property
    def experiment_rule_names(self):
        """The rules that run an experiment's code: NAME, and NAME_combine for one with runs."""
        return (*self.experiment_names, *(f"{name}_combine" for name in self.experiment_names))

    def params_json(self, experiment):
        """Its params as the JSON its --params takes: a plain value, so that
        Snakemake's params trigger sees it and an edited parameter reruns
        the experiment (settings.Experiment.params says why)."""
        return json.dumps(experiment.params(self.config))

    def figure_arguments(self, experiment):
        return " ".join(f"--figure {shlex.quote(f'{name}={path}')}" for name, path in experiment.figures.items())

    def library_arguments(self, experiment):
        return " ".join(
            f"--library {shlex.quote(library)}" for library in settings.recorded_libraries(self.publishing, experiment)
        )

    def library_versions(self, experiment):
        """{library: version} for the experiment's rule's params ('not installed' for one that is not)."""
        return {library: self.versions[library] or NOT_INSTALLED for library in experiment.libraries}

    def missing_library(self, experiment):
        """Why the experiment cannot run here (a library it lists is not installed), or None."""
        missing = [library for library in experiment.libraries if self.versions[library] is None]
        return self.missing_libraries[missing[0]] if missing else None

    # ---- the formats

    def format_tools(self, fmt):
        """The versions of what writes the format (a param of its rule)."""
        if fmt.quarto and self.renderer.name == "quarto":
            return f"quarto {self.renderer.version}"
        versions = {"pandoc": self.renderer.pandoc_version, "typst": self.renderer.typst_version}
        return ", ".join(f"{tool} {versions[tool]}" for tool in fmt.tools)

    # ---- what the article reads, and publishing

    @property
    def listing_sources(self):
        return tuple(settings.listing_sources(self.publishing))

    @property
    def results(self):
        """Every artifact the values merge (the listings too, when the article shows any)."""
        return (*(e.json for e in self.experiments), *([LISTINGS] if self.listing_sources else []))

    @property
    def robustness_values(self):
        """build/robustness.json, when the article binds robustness.* keys."""
        return [ROBUSTNESS_JSON] if self.cites_robustness else []

    @property
    def publishing_json(self):
        """The publishing: section, handed to each command as written (in the config's order)."""
        return json.dumps(self.config.get("publishing") or {})

    @property
    def listings_publishing_json(self):
        """Only publishing.listings, for the listings rule: an edit to how the
        review judges keys does not cut the listings again, and with them
        render the whole article."""
        return json.dumps({"listings": (self.config.get("publishing") or {}).get("listings") or {}})

    def plan_sources(self):
        """The files the plan reads (configs, Snakefiles, schemas): the manifest's inputs."""
        article_schema = [ARTICLE_SCHEMA] if os.path.exists(ARTICLE_SCHEMA) else []
        return sorted(
            {
                _shown(path)
                for path in [*self.config_files, self.snakefile, *module_files(), MODULE_SCHEMA, *article_schema]
            }
        )


def build(config, config_files, machine, snakefile="Snakefile"):
    """The Plan of `config` (checked: plantime.check_config), read from the
    config files `config_files` (for lines in messages), the working
    folder's files, and `machine` (what is installed: plantime.ThisMachine,
    or a test's stand-in). PlanError names what cannot be planned."""
    config = _own_copy(config)
    config_files = tuple(str(path) for path in config_files)

    def line_of(key):
        return where(config, key, config_files)

    try:
        publishing = parse_publishing(config.get("publishing"))
    except PublishingError as error:
        raise PlanError(str(error)) from None
    article = config.get("article", "article/index.qmd")
    text = _article_text(article)
    experiments = tuple(settings.experiments(config))

    try:
        robustness = settings.robustness(config, line_of) if "robustness" in config else None
    except ValueError as error:
        raise PlanError(str(error)) from None
    occurrences = _shortcodes(text)
    cites_robustness = text is not None and "robustness" in settings.cited_experiments(text, occurrences)
    if cites_robustness and robustness is None:
        raise PlanError(
            f"{article} binds robustness.* keys, but the config has no robustness: section; "
            "add one (robustness: {seeds: 100}) or take the keys out of the article"
        )

    wanted = [lib for e in experiments for lib in e.libraries] + list(publishing.release_label)
    versions = {library: machine.library_version(library) for library in dict.fromkeys(wanted)}
    used = {lib for e in experiments for lib in e.libraries}
    missing = {
        library: settings.missing_library(config, publishing, library)
        for library, version in versions.items()
        if version is None and library in used
    }

    article_dir = os.path.dirname(article) or "."
    labels = (config.get("robustness") or {}).get("labels")  # the words of its figures' axes
    return Plan(
        config=config,
        config_files=config_files,
        snakefile=str(snakefile),
        article=article,
        baseline=config.get("baseline", "baseline/published.yaml"),
        strict=config.get("strict", True),
        experiments=experiments,
        publishing=publishing,
        renderer=_renderer(config.get("renderer", "auto"), machine),
        versions=MappingProxyType(versions),
        release_label=settings.release_label(config, publishing, versions),
        extension=_extension(article_dir),
        article_style=tuple(p for p in [f"{article_dir}/style.css"] if os.path.exists(p)),
        cited=_cited(article_dir),
        report_front_page=(
            os.path.abspath("report/workflow.rst")
            if os.path.exists("report/workflow.rst")
            else str(RULES_DIR / "report/workflow.rst")
        ),
        conda_env=os.path.abspath("environment.yml") if os.path.exists("environment.yml") else None,
        cites_robustness=cites_robustness,
        sweep=_sweep(robustness, article, text, occurrences, labels) if robustness else None,
        matrix=_matrix(config, config_files, experiments, publishing, cites_robustness) if "matrix" in config else None,
        missing_libraries=MappingProxyType(missing),
        formats=_formats(publishing, line_of),
    )


def _formats(publishing, line_of):
    """The rules of the formats publishing.formats chooses (articlekit's
    default set when it does not say), each a module of articlekit/render/formats."""
    from articlekit.render import formats

    chosen = publishing.formats or formats.DEFAULT
    unknown = [name for name in chosen if name not in formats.names()]
    if unknown:
        raise PlanError(
            f"{line_of(('publishing', 'formats'))}: publishing.formats: no format {unknown[0]!r}; the formats are "
            f"{', '.join(formats.names())} (a module each in articlekit/render/formats/)"
        )
    rules = []
    for name in chosen:
        fmt = formats.get(name)
        caption = RULES_DIR / "report" / f"article-{name}.rst"
        rules.append(
            FormatRule(
                name,
                fmt.output,
                fmt.module,
                fmt.quarto,
                fmt.tools,
                str(caption) if caption.exists() else None,
                fmt.priority,
            )
        )
    return tuple(rules)


def _own_copy(config):
    """A copy of the config: what Snakemake does to its own later (a
    schema's defaults filled in) does not change the plan built from it."""
    return copy.deepcopy(dict(config))


def _article_text(article):
    """The article's text, or None before it is written. A byte that is not
    UTF-8 or a control character is named with its line and column, and an
    empty article refused, here: found later by an input function,
    Snakemake would wrap the sentence in its traceback."""
    if not os.path.exists(article):
        return None
    try:
        return read_article(article)
    except SourceError as error:
        raise PlanError(str(error)) from None


def _renderer(choice, machine):
    name = machine.renderer(choice)
    version = machine.renderer_version(name) or NOT_INSTALLED
    pandoc = version if name == "pandoc" else machine.renderer_version("pandoc") or NOT_INSTALLED
    return Renderer(
        name=name,
        version=version,
        pandoc_version=pandoc,
        typst_version=machine.library_version("typst") or NOT_INSTALLED,
    )


def _quarto_settings(article_dir):
    """The _quarto.yml that holds the article's settings (relative, as the
    rules name it), or None: articlekit.render.project.project_root's."""
    from articlekit.render.project import project_root

    folder = project_root(Path(article_dir).resolve())
    path = folder / "_quarto.yml"
    return os.path.relpath(path) if path.exists() else None


def _cited(article_dir):
    """The files the article's _quarto.yml names for its citations
    (articlekit.render.citations, which checks them when it renders),
    relative to that file's folder."""
    from articlekit.core.sources import load_yaml
    from articlekit.render.citations import KEYS

    path = _quarto_settings(article_dir)
    config = load_yaml(path) if path else None
    if not isinstance(config, dict):
        return ()
    folder = os.path.dirname(path)
    return tuple(
        os.path.normpath(os.path.join(folder, config[key])) for key in KEYS if isinstance(config.get(key), str)
    )


def _extension(article_dir):
    """The article's own shortcode extension: its edits redo the render. Not
    the copy of articlekit's that a Quarto user's `quarto render` installs
    (articlekit/render/extension.py): the build reads the package's."""
    from articlekit.render.extension import is_installed_copy

    return tuple(
        sorted(
            str(path)
            for path in Path(article_dir, "_extensions").rglob("*")
            if path.is_file() and not is_installed_copy(path)
        )
    )


def _shortcodes(text):
    """The article's shortcodes, scanned once for all the plan reads of
    them; None for no article, or one whose shortcodes do not parse (bind
    names the problem)."""
    from articlekit.article.shortcodes import ShortcodeSyntaxError, scan

    if text is None:
        return None
    try:
        return scan(text)
    except ShortcodeSyntaxError:
        return None


def _unparsed(article, text):
    """What is wrong with an article whose shortcodes do not parse, at its
    line, as bind says it: the sweep's summary may be the first job to stop."""
    from articlekit.article.shortcodes import ShortcodeSyntaxError, scan

    if text is None:
        return f"{article}: there is no article to summarise the sweep for"
    try:
        scan(text)
    except ShortcodeSyntaxError as error:
        return f"{article}:{error}"
    return f"{article}: its shortcodes do not parse (lint and bind say where)"


def _sweep(robustness, article, text, occurrences, labels=None):
    """The sweep's jobs. Light on purpose (articlekit.article.seed_keys, not
    the summary's module): every plan, a no-op's too, builds it. labels:
    config robustness.labels, the words of each figure's x-axis."""
    from articlekit.article.seed_keys import article_shortcodes, seed_figures

    # An article whose shortcodes do not parse says so here: its summary job
    # fails (lint and bind name the line) instead of summarising no values,
    # which would stand, up to date, once the article parses again.
    shortcodes = (
        article_shortcodes(article, text, occurrences)
        if occurrences is not None
        else {
            "printed": [],
            "claims": [],
            "unparsed": _unparsed(article, text),
        }
    )
    return Sweep(
        settings=robustness,
        chunk_ranges=tuple(robustness.chunk_ranges),
        figures=MappingProxyType(seed_figures(article, text) if text is not None else {}),
        shortcodes=MappingProxyType(shortcodes),
        labels=MappingProxyType(dict(labels or {})),
    )


def _matrix(config, config_files, experiments, publishing, cites_robustness):
    from articlekit.review.matrixenv import MatrixConfigError, check_matrix

    try:
        check_matrix(config, config_files)
    except MatrixConfigError as error:
        raise PlanError(str(error)) from None
    entries = config["matrix"]["environments"]
    excluded = config["matrix"].get("exclude") or []
    where_python = {}
    for i, entry in enumerate(entries):
        if entry.get("python"):
            line = where(config, ("matrix", "environments", i, "python"), config_files)
            where_python[entry["label"]] = f"{line}: matrix.environments[{i}].python"
    return Matrix(
        pins=MappingProxyType({entry["label"]: tuple(entry["pins"]) for entry in entries}),
        python=MappingProxyType({entry["label"]: entry.get("python") for entry in entries}),
        experiments=tuple(e.name for e in experiments if e.name not in excluded),
        shared=(
            *(f"results/{name}.json" for name in excluded),
            *([LISTINGS] if settings.listing_sources(publishing) else []),
            *([ROBUSTNESS_JSON] if cites_robustness else []),
        ),
        where_python=MappingProxyType(where_python),
    )


def _shown(path):
    """A path as the user would type it here: relative when inside the folder."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative
