# Shared names for robustness.smk: the checked `robustness:` config, which
# experiments the sweep runs, its chunks, and the rules' param functions.

import re

from articlekit.article.robustness import RobustnessError, article_shortcodes
from articlekit.article.seed_figure import seed_figures
from articlekit.experiment.sweep import chunk_ranges

ROBUSTNESS_EXPERIMENTS = [e.name for e in ROBUSTNESS.experiments]
ROBUSTNESS_BY_NAME = {e.name: e for e in ROBUSTNESS.experiments}
ROBUSTNESS_CHUNK_RANGES = chunk_ranges(ROBUSTNESS.seeds, ROBUSTNESS.chunk)
ROBUSTNESS_CHUNKS = expand(
    "results/robustness/{experiment}/chunk-{chunk}.json",
    experiment=ROBUSTNESS_EXPERIMENTS,
    chunk=range(len(ROBUSTNESS_CHUNK_RANGES)),
)
# Only the swept experiments name a chunk's folder.
ROBUSTNESS_WILDCARD = "|".join(map(re.escape, ROBUSTNESS_EXPERIMENTS)) or "(?!)"
ROBUSTNESS_SETTINGS_JSON = json.dumps(ROBUSTNESS.report_settings)
# What the article prints and claims, a param of the summary, not its input:
# a prose edit that adds no claim and no printed key reruns no part of the
# sweep. An article whose shortcodes do not parse reports nothing here; bind
# names the problem.
try:
    ROBUSTNESS_SHORTCODES_JSON = json.dumps(
        article_shortcodes(ARTICLE, read_text(ARTICLE))
        if os.path.exists(ARTICLE)
        else {"printed": [], "claims": []}
    )
except (RobustnessError, SourceError):
    ROBUSTNESS_SHORTCODES_JSON = json.dumps({"printed": [], "claims": []})
# The article's figures of one value across the seeds, {path: key}: its image
# links to figures/robustness-<key>.svg, each an output of robustness_figures.
ROBUSTNESS_FIGURES = (
    seed_figures(ARTICLE, read_text(ARTICLE)) if os.path.exists(ARTICLE) else {}
)
ROBUSTNESS_FIGURE_ARGUMENTS = " ".join(
    f"--figure {shlex.quote(f'{key}={path}')}"
    for path, key in ROBUSTNESS_FIGURES.items()
)


def robustness_code(wildcards):
    """The experiment's code and the sweep's (articlekit.experiment.sweep),
    which runs it: an edit to either reruns the chunks."""
    return sorted(
        {
            *experiment_code(wildcards.experiment),
            *module_code("articlekit.experiment.sweep"),
        }
    )


def robustness_params(wildcards):
    """The experiment's params with the article's seed, as JSON: a plain
    value of the wildcards, so an edited parameter reruns every chunk."""
    return experiment_params(ROBUSTNESS_BY_NAME[wildcards.experiment])


def robustness_seed_arguments(wildcards):
    """`--first F --count C`: which of the sweep's seeds the chunk runs (a
    new chunk size or seed count reruns the chunks it changes)."""
    first, count = ROBUSTNESS_CHUNK_RANGES[int(wildcards.chunk)]
    return f"--first {first} --count {count}"


def robustness_versions(wildcards):
    versions = library_versions(ROBUSTNESS_BY_NAME[wildcards.experiment])
    return versions(wildcards) if callable(versions) else versions


def robustness_library_arguments(wildcards):
    return library_arguments(ROBUSTNESS_BY_NAME[wildcards.experiment])


def robustness_mem_mb(wildcards):
    return ROBUSTNESS_BY_NAME[wildcards.experiment].mem_mb


def robustness_runtime(wildcards):
    return ROBUSTNESS_BY_NAME[wildcards.experiment].runtime


def robustness_outputs():
    """Every file of the sweep, for the default target of an article that
    binds its keys (see every_output)."""
    return [
        *ROBUSTNESS_CHUNKS,
        ROBUSTNESS_JSON,
        "build/robustness.md",
        "build/robustness.html",
        *ROBUSTNESS_FIGURES,
    ]
