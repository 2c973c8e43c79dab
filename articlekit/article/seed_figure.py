"""One value across the sweep's seeds, drawn: every seed a dot, the article's seed marked.

    python -m articlekit.article.seed_figure build/robustness.json \\
        --figure scaling.dk64.unscaled.max_weight=figures/robustness-scaling.dk64.unscaled.max_weight.svg \\
        --label 'scaling.dk64.unscaled.max_weight=largest weight, unscaled ($d_k$ = 64)'

The seeds' values sorted, each a dot at the share of seeds below it: read
across, where a value falls among the seeds (its percentile); read up, how
the seeds spread. The article's own seed is the red line and diamond, at its
percentile_at_seed; the band is the 5-95 % range and the dashed line the
median, as build/robustness.json has them (articlekit.article.robustness).

An article shows one as an image like an experiment's figure, named for the
key it plots as robustness.<key> spells it:

    ![...](../figures/robustness-scaling.dk64.unscaled.max_weight.svg)

Its x-axis says the value in the prose's words, never its key: the words
config `robustness.labels` gives the key (`--label KEY=WORDS`), else the key
made into words (`axis_words`), with a warning to give it the prose's.

The workflow reads those links (articlekit.article.seed_keys) when it plans: each is an
output of the sweep's figure rule (articlekit/workflow/rules/robustness.smk), so
the render waits for it like for any figure (articlekit.article.figures),
and the summary is told to report that key. The seed sweep's page draws the
same figure small for each value that varies (as a data: URL).
"""

import argparse
import base64
import io
import math
import re
import sys

from articlekit.article.seed_keys import seed_figures  # noqa: F401  (its home is the plan's light module)
from articlekit.core.equality import is_number
from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import read_json
from articlekit.core.log import log
from articlekit.experiment.artifacts import pyplot, save_figure
from articlekit.experiment.figure_text import plain

ARTICLE_SEED, SEEDS, SPREAD = "#cf222e", "#57606a", "#d0d7de"


def percentile_words(share):
    """0.79 -> "the 79th percentile": where a seed's value falls (a tie
    counts half, so a value every seed shares is at the 50th)."""
    n = round(share * 100)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"the {n}{suffix} percentile"


def _part_words(part):
    """One part of a key in words: dk64 -> "dk = 64" (a setting at its
    value, as a sweep names its groups), max_weight -> "max weight"."""
    setting = re.fullmatch(r"([A-Za-z_]*[A-Za-z])_?(\d+)", part)
    words = f"{setting[1]} = {setting[2]}" if setting else part
    return words.replace("_", " ")


def axis_words(key, experiment=None):
    """A key made into words, for a value the config gives none: the value
    first, then the groups it sits in, the experiment's name left out
    (scaling.dk64.unscaled.max_weight -> "max weight (dk = 64, unscaled)")."""
    parts = key.split(".")
    if len(parts) > 1 and parts[0] == experiment:
        parts = parts[1:]
    value, groups = _part_words(parts[-1]), [_part_words(part) for part in parts[:-1]]
    return f"{value} ({', '.join(groups)})" if groups else value


def headline(row, words=None):
    """The figure of a row in one sentence, from its numbers: what it plots
    (`words`, the x-axis's label, else the key), where the seeds' values lie
    and where the article's seed falls (its alt text, on the article's page
    and on the seed sweep's)."""
    finite = [v for v in row["samples"] if math.isfinite(v)]
    said = f"{plain(words) if words else row['key']} for each of {len(finite)} seeds (x), each seed at the share of seeds below it (y)"
    if "p05" in row:
        said += (
            f"; median {format_value(row['median'], '.4g')}, 5th to 95th percentile "
            f"{format_value(row['p05'], '.4g')} to {format_value(row['p95'], '.4g')}"
        )
    at_seed = row["at_seed"]
    if is_number(at_seed) and math.isfinite(at_seed):
        said += f"; the article's seed, {row.get('article_seed')}, gives {format_value(at_seed, '.4g')}"
        if "percentile_at_seed" in row:
            said += f", at {percentile_words(row['percentile_at_seed'])}"
    return said


def plottable(row):
    """Whether a printed value's row has seeds to draw: numbers, finite in some seed."""
    return any(is_number(v) and math.isfinite(v) for v in row.get("samples", []))


def draw(row, seed_range=None, small=False, words=None):
    """The figure (matplotlib) of one row of the report's printed values.
    seed_range: (first, last) of the sweep's seeds, named in the legend;
    words: the x-axis's label, what the prose calls the value (else axis_words)."""
    finite = sorted(v for v in row["samples"] if math.isfinite(v))
    n = len(finite)
    shares = [(i + 0.5) / n for i in range(n)]  # each seed at the share of seeds below it, itself half
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(2.6, 1.0) if small else (6.4, 3.4), layout="constrained")
    if "p05" in row:
        ax.axvspan(row["p05"], row["p95"], color=SPREAD, alpha=0.5, linewidth=0)
        ax.axvline(row["median"], color=SEEDS, linewidth=0.8, linestyle="--")
    ax.plot(
        finite,
        shares,
        "o",
        color=SEEDS,
        markersize=2 if small else 3.5,
        alpha=0.8,
        label=None if small else f"{n} seeds" + (f" ({seed_range[0]} to {seed_range[1]})" if seed_range else ""),
    )
    at_seed = row["at_seed"]
    if is_number(at_seed) and math.isfinite(at_seed):
        ax.axvline(at_seed, color=ARTICLE_SEED, linewidth=1.2)
        if "percentile_at_seed" in row:
            label = (
                f"seed {row.get('article_seed')} (the article's): {format_value(at_seed, '.4g')}, "
                f"at {percentile_words(row['percentile_at_seed'])}"
            )
            ax.plot(
                [at_seed],
                [row["percentile_at_seed"]],
                "D",
                color=ARTICLE_SEED,
                markersize=4 if small else 7,
                label=None if small else label,
            )
    ax.set_ylim(0, 1)
    if small:
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.grid(False)
        ax.tick_params(axis="x", labelsize=7)
    else:
        ax.set_xlabel(words or axis_words(row["key"], row.get("experiment")))
        ax.set_ylabel("share of seeds below")
        ax.yaxis.set_major_formatter(lambda y, _: f"{y:.0%}")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    return fig


def data_url(row, seed_range=None):
    """The small figure as an SVG data: URL (the page stays one self-contained file)."""
    plt = pyplot()
    plt.rcParams["svg.hashsalt"] = row["key"]  # stable ids, different per plot
    fig = draw(row, seed_range, small=True)
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def seed_range(report, experiment):
    found = next((x for x in report["experiments"] if x["experiment"] == experiment), None)
    return (found["first_seed"], found["last_seed"]) if found else None


def write_figures(report, figures, labels=None):
    """Each {key: path}: key as robustness.<key> spells it, its x-axis
    labelled with labels[key] (the prose's words for it). A key the report
    has no seeds of is refused, naming what would fix it."""
    rows = {r["bindable"].removeprefix("robustness."): r for r in report["printed"]}
    labels = labels or {}
    for key, path in figures.items():
        row = rows.get(key)
        if row is None or not plottable(row):
            why = (
                "is not a value of a seeded experiment the sweep ran"
                if row is None
                else "has no finite number in any seed"
            )
            raise ArticlekitError(
                f"{path}: {key} {why}; name the figure figures/robustness-<key>.svg after a key of "
                "a seeded experiment (as robustness.<key> spells it: the seed sweep page's 'bind as' "
                "column)"
            )
        words = labels.get(key) or _unlabelled(key, row, path)
        fig = draw(row, seed_range(report, row["experiment"]), words=words)
        # the key, as the row and as the article spell it, is no axis's text
        save_figure(fig, path, alt=headline(row, words), keys=(row["key"], row["bindable"]))
        pyplot().close(fig)


def _unlabelled(key, row, path):
    """The key made into words, said as a warning: the prose's own words
    for the value are the config's to give."""
    words = axis_words(row["key"], row.get("experiment"))
    log.warning(
        f"seed figure: warning: {path}: config robustness.labels gives {key} no words; its x-axis reads "
        f"{words!r}: add `{key}: <what the prose calls it>` under robustness.labels"
    )
    return words


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m articlekit.article.seed_figure", description=__doc__.splitlines()[0]
    )
    parser.add_argument("report", help="build/robustness.json")
    parser.add_argument(
        "--figure",
        action="append",
        default=[],
        metavar="KEY=PATH",
        help="draw KEY (as robustness.KEY spells it) into PATH (repeatable)",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY=WORDS",
        help="label KEY's x-axis WORDS, what the prose calls it (config robustness.labels; repeatable)",
    )
    args = parser.parse_args(argv)
    figures = dict(item.split("=", 1) for item in args.figure)
    labels = dict(item.split("=", 1) for item in args.label)
    write_figures(read_json(args.report), figures, labels)
    log.info(f"seed figure: {len(figures)} -> {', '.join(figures.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(run_command("seed figure", main, sys.argv[1:]))
