"""The seed-robustness page: build/robustness.{md,html} from build/robustness.json.

    python -m articlekit.review.robustness build/robustness.json --md build/robustness.md \\
        --html build/robustness.html

The report is articlekit.article.robustness's (the sweep's claims and values
across seeds); this module lays it out, on the review pages' blocks
(articlekit.review.pages) and templates/robustness.html, with a small
figure of every seed's value (articlekit.article.seed_figure, an SVG as a
data: URL) for each value that varies, and beside each share of seeds its
95 % interval.
"""

import argparse
import sys

from articlekit.article.robustness import CONFIDENCE, SPREAD
from articlekit.article.seed_figure import data_url, headline, percentile_words, plottable, seed_range
from articlekit.core.equality import is_number
from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import read_json, write_text_atomic
from articlekit.core.log import log
from articlekit.core.status import FAILS, HOLDS, INCONCLUSIVE, STATUS
from articlekit.review.pages import cell, code, counts_table, html_page, section

LISTED_SEEDS = 20  # failing seeds listed in a cell; the JSON lists them all


# ---- markdown ------------------------------------------------------------------------


def _num(value):
    return "—" if value is None else format_value(value, ".4g") if is_number(value) else format_value(value)


def _fraction(value):
    return "—" if value is None else f"{value:.0%}" if value in (0, 1) else f"{value:.1%}"


def _interval(row):
    """ "95 % interval 67% to 83%" for a claim row's share, "" without one."""
    if row.get("holds_fraction_low") is None:
        return ""
    return (
        f"{CONFIDENCE:.0%} interval {_fraction(row['holds_fraction_low'])} to {_fraction(row['holds_fraction_high'])}"
    )


def _at_seed_text(row):
    """The article's seed's value, and where it falls among the seeds."""
    shown = _num(row["at_seed"])
    if row.get("percentile_at_seed") is None:
        return shown, ""
    rank = f"at {percentile_words(row['percentile_at_seed'])} of the seeds"
    if row.get("percentile_at_seed_low") is None:  # a report written before the rank had its interval
        return shown, rank
    # a rank of a sample of seeds is an estimate: its interval, as a share's (robustness.percentile_interval)
    interval = f"{_fraction(row['percentile_at_seed_low'])} to {_fraction(row['percentile_at_seed_high'])}"
    return shown, f"{rank}, {CONFIDENCE:.0%} interval {interval}"


def _at_seed_cell(row):
    value, rank = _at_seed_text(row)
    return code(value) + (f" ({rank})" if rank else "")


def _seeds_text(seeds):
    shown = ", ".join(str(s) for s in seeds[:LISTED_SEEDS])
    return shown + (f" and {len(seeds) - LISTED_SEEDS} more" if len(seeds) > LISTED_SEEDS else "")


def _range_text(row):
    if "median" not in row:
        if "differs" in row:
            return f"differs from the article's in {row['differs']} of {row['seeds']} seeds"
        return f"not finite in all {row['seeds']} seeds"
    text = f"{_num(row['median'])} ({_num(row['p05'])} to {_num(row['p95'])})"
    return text + (f"; not finite in {row['non_finite']}" if row.get("non_finite") else "")


def _left_out(report):
    parts = [f"{name}: {why}" for name, why in report["excluded"].items()]
    parts += [f"{name}: no seed parameter" for name in report["unseeded"]]
    return "; ".join(parts)


def to_markdown(report):
    s = report["values"]["sweep"]
    lines = [
        "# Seed robustness",
        "",
        f"Every seeded experiment rerun for {s['seeds']} seeds derived from its own "
        f"(seed + 1 to seed + {s['seeds']}): {s['runs']} runs, {s['failed_runs']} failed. "
        f"A claim is flagged (**⚑**) when it holds at the article's seed but fails for more than "
        f"{report['params']['flag_share']:.0%} of the seeds.",
        "",
    ]
    lines += counts_table(
        [
            ("Seeds", s["seeds"]),
            ("Runs", s["runs"]),
            ("Failed runs", s["failed_runs"]),
            ("Claims", s["claims"]),
            ("Flagged", s["flagged"]),
        ]
    ) + [""]
    if _left_out(report):
        lines += [f"Left out of the sweep: {cell(_left_out(report))}.", ""]
    lines += section(
        "Experiments",
        "Each experiment's seeds, and the runs that raised (counted, not dropped).",
        ["Experiment", "Seeds", "Ran", "Failed", "Errors"],
        [
            [
                code(x["experiment"]),
                f"{x['first_seed']} to {x['last_seed']}",
                str(x["ran"]),
                str(x["failed"]),
                cell(
                    "; ".join(f"seed {e['seed']}: {e['error']}" for e in x["failures"][:5])
                    + (f" and {len(x['failures']) - 5} more" if len(x["failures"]) > 5 else "")
                ),
            ]
            for x in report["experiments"]
        ],
    )
    lines += section(
        "Claims",
        "Each claim the article makes about a seeded value, judged for every seed: the "
        f"share of seeds for which it holds, and the {CONFIDENCE:.0%} interval of that share "
        "(Wilson's score interval: where the share among all seeds plausibly lies, given this many).",
        ["", "Claim", "At the article's seed", "Holds for", "Fails for seeds"],
        [
            [
                "**⚑**" if r["flagged"] else "",
                code(f"{r['key']} {r['expect']}"),
                STATUS[r["at_seed"]].shown,
                f"{_fraction(r['holds_fraction'])} of {r['ran']}" + (f" ({_interval(r)})" if _interval(r) else ""),
                cell(_seeds_text(r["failing_seeds"]) or "none"),
            ]
            for r in report["claims"]
        ],
    )
    lines += section(
        "Claims the seeds do not reach",
        "These claims' keys are drawn from no seed the sweep "
        "varies (config robustness.fixed says why, and the sweep checked that no seed moved them): "
        "the sweep does not test them, and gives no share.",
        ["Claim", "At the article's seed", "Why"],
        [
            [code(f"{r['key']} {r['expect']}"), STATUS[r["at_seed"]].shown, cell(r["why"])]
            for r in report.get("unvaried", [])
        ],
    )
    lines += section(
        "Printed values",
        "Each value the article shows from a seeded experiment: at the article's "
        "seed, with its percentile among the seeds (a tie counting half), then the median and the "
        "5–95 % range over the seeds.",
        ["Value", "At the article's seed", "Median (5–95 %)", "Bind as"],
        [
            [
                code(r["key"]),
                _at_seed_cell(r),
                cell(_range_text(r)),
                "{} (or {})".format(code(bind_as(r)[0]), bind_as(r)[1]),
            ]
            for r in report["printed"]
        ],
    )
    return "\n".join(lines) + "\n"


# ---- html ----------------------------------------------------------------------------


def seed_plot(row, report):
    """Every seed's value of a printed value, the article's seed marked
    (articlekit.article.seed_figure, small, as a data: URL); None where the
    value does not vary across the 5-95 % range."""
    if not plottable(row) or row["p05"] == row["p95"]:
        return None
    return data_url(row, seed_range(report, row["experiment"]))


def bind_as(row):
    """(the key to bind, its sibling fields): robustness.<key> itself is a
    group, not a value, so the page offers its median, or how many seeds
    differ for a text or a list."""
    fields = [*SPREAD, "seeds"] if "median" in row else ["differs", "seeds"]
    fields = [f for f in fields if f in row or not f.startswith("percentile_at_seed")]
    return f"{row['bindable']}.{fields[0]}", ", ".join(f".{f}" for f in fields[1:])


def page_data(report):
    s = report["values"]["sweep"]
    claims = [
        {
            "key": r["key"],
            "expect": r["expect"],
            "flagged": r["flagged"],
            "at_seed": {"text": STATUS[r["at_seed"]].shown, "css": STATUS[r["at_seed"]].css},
            "fraction": _fraction(r["holds_fraction"]),
            "ran": r["ran"],
            "interval": _interval(r),
            "css": STATUS[HOLDS if r["failed"] + r[INCONCLUSIVE] == 0 else FAILS].css,
            "failing": _seeds_text(r["failing_seeds"]) or "none",
            "first_failure": r["first_failure"],
        }
        for r in report["claims"]
    ]
    values = [
        {
            "key": r["key"],
            "at_seed": _at_seed_text(r)[0],
            "rank": _at_seed_text(r)[1],
            "range": _range_text(r),
            "bind_as": bind_as(r),
            "plot": seed_plot(r, report),
            "alt": headline(r) if plottable(r) else None,
        }
        for r in report["printed"]
    ]
    experiments = [
        {**x, "failures": [f"seed {e['seed']}: {e['error']}" for e in x["failures"]]} for x in report["experiments"]
    ]
    return {
        "summary": s,
        "flag_share": f"{report['params']['flag_share']:.0%}",
        "confidence": f"{CONFIDENCE:.0%}",
        "left_out": _left_out(report),
        "cards": [
            ("seeds", s["seeds"]),
            ("runs", s["runs"]),
            ("failed runs", s["failed_runs"]),
            ("claims", s["claims"]),
            ("flagged", s["flagged"]),
        ],
        "experiments": experiments,
        "claims": claims,
        "flagged": [c for c in claims if c["flagged"]],
        "unvaried": [
            {
                "key": r["key"],
                "expect": r["expect"],
                "why": r["why"],
                "at_seed": {"text": STATUS[r["at_seed"]].shown, "css": STATUS[r["at_seed"]].css},
            }
            for r in report.get("unvaried", [])
        ],
        "values": values,
    }


def to_html(report):
    return html_page("robustness.html", **page_data(report))


# ---- command ----


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m articlekit.review.robustness", description=__doc__.splitlines()[0])
    parser.add_argument("report", help="build/robustness.json")
    parser.add_argument("--md", required=True)
    parser.add_argument("--html", required=True)
    args = parser.parse_args(argv)
    try:
        report = read_json(args.report)
        write_text_atomic(args.md, to_markdown(report))
        write_text_atomic(args.html, to_html(report))
    except ArticlekitError as exc:
        log.error(f"robustness page: {exc}")
        return 1
    log.info(f"robustness page -> {args.html}")
    return 0


if __name__ == "__main__":
    sys.exit(run_command("robustness page", main, sys.argv[1:]))
