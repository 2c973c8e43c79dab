"""Seed robustness: the article's seeded numbers and claims across many seeds.

    python -m articlekit.article.robustness --chunks results/robustness/*/chunk-*.json \\
        --results results/scaling.json ... --baseline baseline/published.yaml \\
        --article article/index.qmd --digest HEX --settings JSON --json build/robustness.json

The page, build/robustness.{html,md}, is made from that JSON by
articlekit.review.robustness. This step belongs to the article's stage, not
the review's: the article binds its results (below), so it runs before
bind, beside it: bind judges each claim at the article's seed, this step
across the sweep's seeds.

The chunks are what articlekit.experiment.sweep wrote: each seeded
experiment's run() for the seeds derived from its own. The article's
shortcodes (which values it prints, which claims it makes:
articlekit.article.seed_keys, read from --article; the workflow's param is
their digest, --digest, checked here) say what to report:

- for every value the article shows from a seeded experiment (printed,
  plotted, or cited through robustness.<key>.<field>): its value at the
  article's seed (the build's results/<name>.json), and across the sweep's
  seeds the median and the 5-95 % range (NumPy's percentiles, linear), every
  seed's value (the page's and the article's figures,
  articlekit.article.seed_figure), and where the article's seed falls among
  them: percentile_at_seed, the share of the sweep's seeds whose value is
  below it, a tie counting half (0.8: higher than 80 % of the seeds);
- for every claim about a seeded value: the share of seeds for which it
  holds, judged by articlekit.core.claims exactly as bind judges it at the
  article's seed, with its 95 % Wilson score interval (the share of a finite
  sample of seeds: 76 of 100 is 67 % to 83 %), the seeds where it fails, and
  a flag when it holds at the article's seed but fails for more than
  `flag_share` of the seeds (articlekit.article.disclosure then asks the
  article to say so where it makes the claim);
- a claim on keys that config robustness.fixed declares drawn from no seed
  the sweep varies (a part of an experiment with a seed of its own) is
  listed apart, as unvaried, with the declaration's reason and no share of
  seeds: the sweep does not test it. The declaration is checked: a seed
  that moves such a key stops the summary;
- every seed whose run raised, with its error: counted, never dropped.

The claims are read from the article, not from build/bindings.json: an
article may cite these results (robustness.<key>.median), and then bind
reads this module's output, which therefore cannot read bind's.

build/robustness.json is an artifact envelope (articlekit.experiment.artifacts),
so `articlekit values` merges it when the article cites it: its values are
bindable as robustness.<key>.<field>, a key with list indices spelled with
underscores (`example.causal.visible_per_row[2]` -> `robustness.example.causal.
visible_per_row_2`, see bindable_key), fields

    median, p05, p95, min, max, seeds               a number's spread (its value at the
                                                    article's seed is the key itself)
    percentile_at_seed                              the share of seeds below the article's seed's value
    percentile_at_seed_low, percentile_at_seed_high its 95 % interval (percentile_interval: Wilson's,
                                                    as a share's)
    differs                                         seeds whose value is not the article's (text, lists)
    holds_fraction, holds_fraction_low,             its claims (all of them, on that key): the share
    holds_fraction_high, fails, failing_seeds,      of seeds for which every one holds and its
    flagged, flagged_claims                         interval; flagged_claims: the expect= of each
                                                    flagged one

and robustness.sweep.{seeds, runs, failed_runs, claims, flagged, unvaried},
robustness.experiments.<name>.{first_seed, last_seed, seeds, ran, failed}
(which seeds a value's share speaks of) and robustness.params.{seeds,
flag_share, confidence}.
"""

import argparse
import json
import math
import re
import sys
from statistics import NormalDist

from articlekit.article import seed_keys
from articlekit.article.shortcodes import ShortcodeSyntaxError
from articlekit.core import claims as claimlib
from articlekit.core.equality import is_number, same_value
from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.jsonio import read_json, write_json
from articlekit.core.keys import UnknownKey, lookup, measured, split_key
from articlekit.core.log import log
from articlekit.core.sources import SourceError, read_article
from articlekit.core.status import FAILS, HOLDS, INCONCLUSIVE

SCRIPT = "articlekit/article/robustness.py"
PERCENTILES = (5, 50, 95)
CONFIDENCE = 0.95  # of the interval given beside every share of seeds
# A number's spread over the seeds, and the article's seed's rank among them with its interval.
SPREAD = (
    "median",
    "p05",
    "p95",
    "min",
    "max",
    "percentile_at_seed",
    "percentile_at_seed_low",
    "percentile_at_seed_high",
)
# The fields of robustness.<key>: how a cited robustness.<key>.<field> names its value's key.
FIELDS = (
    "median",
    "p05",
    "p95",
    "min",
    "max",
    "seeds",
    "percentile_at_seed",
    "percentile_at_seed_low",
    "percentile_at_seed_high",
    "differs",
    "holds_fraction",
    "holds_fraction_low",
    "holds_fraction_high",
    FAILS,
    "failing_seeds",
    "flagged",
    "flagged_claims",
)


class RobustnessError(ArticlekitError):
    """Chunks or settings that do not make one sweep; the message names the file."""


def bindable_key(ref):
    """The key under robustness. for a value's key: list indices as _N (_mN
    for a negative one), so that the result is a plain dotted key."""
    return re.sub(r"\[(-?)(\d+)\]", lambda m: f"_{'m' if m.group(1) else ''}{m.group(2)}", ref)


# ---- reading the sweep ---------------------------------------------------------------


def collect(chunks):
    """{experiment: {"script", "seeds": [seed], "runs": {seed: flat values}, "failures": [record]}},
    each experiment's seeds in sweep order."""
    from articlekit.data.values import flatten  # see main

    sweep = {}
    for path, chunk in chunks:
        if not isinstance(chunk, dict) or not {"experiment", "seeds"} <= set(chunk):
            raise RobustnessError(
                f"{path}: not a sweep chunk (articlekit.experiment.sweep writes them): "
                "delete it and run snakemake robustness again"
            )
        found = sweep.setdefault(
            chunk["experiment"], {"script": chunk.get("script"), "seeds": [], "runs": {}, "failures": []}
        )
        for record in chunk["seeds"]:
            seed = record["seed"]
            if seed in found["runs"] or any(e["seed"] == seed for e in found["failures"]):
                raise RobustnessError(f"{path}: seed {seed} of {chunk['experiment']} is in two chunks")
            found["seeds"].append(seed)
            if "error" in record:
                found["failures"].append(
                    {"seed": seed, "error": record["error"], "traceback": record.get("traceback", "")}
                )
            else:
                found["runs"][seed] = flatten(record["values"], chunk["experiment"])
    for found in sweep.values():
        found["seeds"].sort()
    return sweep


def article_shortcodes(article, text):
    """articlekit.article.seed_keys.article_shortcodes, a RobustnessError
    naming the article where its shortcodes do not parse."""
    try:
        return seed_keys.article_shortcodes(article, text)
    except ShortcodeSyntaxError as exc:
        raise RobustnessError(f"{article}:{exc}") from None


def read_shortcodes(article, digest=None):
    """article_shortcodes of the article file; where `digest` is given (the
    workflow's param), a RobustnessError unless it is theirs: the article's
    printed keys or claims changed after the build planned this job, and
    its record would name the old ones."""
    try:
        text = read_article(article)  # as the plan read it (articlekit.workflow.plan)
    except (OSError, SourceError) as exc:
        raise RobustnessError(str(exc)) from None
    shortcodes = article_shortcodes(article, text)
    if digest is not None and seed_keys.shortcodes_digest(shortcodes) != digest:
        raise RobustnessError(
            f"{article}: its printed keys or claims changed after the build was planned; run the build again"
        )
    return shortcodes


def _seeded(key, swept):
    """The swept experiment a key's value comes from (not its params), or None."""
    base, _ = split_key(key)
    experiment, _, rest = base.partition(".")
    return experiment if experiment in swept and not rest.startswith("params.") else None


def _shown(shortcodes, values, swept):
    """Every seeded key the article shows, once, in reading order: printed
    itself, plotted, or cited through the sweep (robustness.<key>.median for a
    key it does not print), each spelt as the values spell it."""
    by_bindable = {bindable_key(k): k for k in values if _seeded(k, swept)}
    shown = {}
    cited = [ref for pair in shortcodes["claims"] for ref in _claim_refs(*pair) if ref.startswith("robustness.")]
    for key in [*shortcodes["printed"], *cited, *(f"robustness.{k}.median" for k in shortcodes.get("plotted", []))]:
        if not key.startswith("robustness."):
            shown[key] = None
            continue
        group, _, field = key.removeprefix("robustness.").rpartition(".")
        if field in FIELDS:
            found = by_bindable.get(group) or _list_item(group, by_bindable, values)
            if found:
                shown[found] = None
    return list(shown)


def _claim_refs(key, expect):
    try:
        return [key, *claimlib.keys_referenced(expect)]
    except claimlib.ClaimError:  # bind names a malformed claim, with its line
        return [key]


def _list_item(group, by_bindable, values):
    """example.causal.visible_per_row_2 -> example.causal.visible_per_row[2]
    when that key's value is a list long enough; else None."""
    match = re.fullmatch(r"(.+)_(m?)(\d+)", group)
    if not match or match.group(1) not in by_bindable:
        return None
    index = -int(match.group(3)) if match.group(2) else int(match.group(3))
    base = by_bindable[match.group(1)]
    items = values[base]
    return f"{base}[{index}]" if isinstance(items, list) and -len(items) <= index < len(items) else None


def wilson_interval(successes, n, confidence=CONFIDENCE):
    """(low, high): the Wilson score interval of the share successes / n.
    Unlike the normal approximation's p +- z sqrt(p (1 - p) / n), it stays
    inside [0, 1] and does not shrink to a point at 0 or n: 100 of 100 seeds
    is 96 % to 100 %, not "certainly 100 %". None for n = 0."""
    if n == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    share, z2 = successes / n, z * z
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    # exactly 0 (n) at 0 (n) successes, where rounding would leave a speck
    return (0.0 if successes == 0 else max(0.0, centre - half)), (1.0 if successes == n else min(1.0, centre + half))


def percentile_rank(samples, value):
    """The share of samples below value, a tie counting half: where one
    seed's value falls among the sweep's (0.8: higher than 80 % of them)."""
    below = sum(v < value for v in samples)
    tied = sum(v == value for v in samples)
    return (below + tied / 2) / len(samples)


def percentile_interval(samples, value, confidence=CONFIDENCE):
    """(low, high): the interval of percentile_rank(samples, value) as an
    estimate of the article's seed's percentile among all seeds, not only
    these: the 95 % Wilson score interval of wilson_interval, the owner of
    every share of seeds' interval, on the share of samples below value
    (a tie counting half, as in the rank).

    Why Wilson: the value is fixed (the article's seed's) and each sweep
    seed's value is an independent draw, so whether it falls below is a
    Bernoulli trial whose probability is the value's true percentile among
    all seeds; the count below is binomial, and the rank its sample
    proportion, exactly the case a share of seeds is. A bootstrap of the
    samples would estimate the same binomial spread, less well at the ends
    (a rank of 0 or 1 resamples to a point). 79 of 100 is 70 % to 86 %: a
    rank of 100 seeds is an estimate, and another 100 may put it at 73 %
    or 83 %. None for no samples."""
    if not samples:
        return None
    below = sum(v < value for v in samples) + sum(v == value for v in samples) / 2
    return wilson_interval(below, len(samples), confidence)


# ---- the report ----------------------------------------------------------------------


def _at_index(sweep, values, index):
    """The values as the sweep's seed number `index` (of each experiment) has
    them: each swept experiment's keys from that seed's run, the rest from
    the build. Missing experiments: those whose run raised at that index."""
    overlay, missing = dict(values), []
    for experiment, found in sweep.items():
        seed = found["seeds"][index]
        if seed in found["runs"]:
            overlay.update(found["runs"][seed])
        else:
            missing.append(experiment)
    return overlay, missing


def _judge(expect, key, values):
    """A claim's status on these values, and its message (a claim that no
    longer applies, a key gone or a type changed, fails, saying why)."""
    try:
        result = claimlib.evaluate(expect, measured(values, key), lambda ref: measured(values, ref))
        return result.status, result.message
    except (claimlib.ClaimError, UnknownKey, ValueError) as exc:
        return FAILS, str(exc)


def _fixed(refs, fixed):
    """(prefix, why) when every seeded key of a claim lies under a prefix of
    config robustness.fixed, else None."""
    found = []
    for ref in refs:
        base, _ = split_key(ref)
        prefix = next((p for p in fixed if base == p or base.startswith(p + ".")), None)
        found.append((prefix, fixed[prefix]) if prefix else None)
    return found[0] if found and all(found) else None


def _moved(refs, values, indices, needs, sweep):
    """A sentence naming the first seed that gives one of the keys another
    value than the build's, or None."""
    for i, (overlay, missing) in enumerate(indices):
        if needs & set(missing):
            continue
        for ref in refs:
            try:
                same = same_value(lookup(overlay, ref), lookup(values, ref))
            except UnknownKey:
                same = False
            if not same:
                return f"seed {sweep[sorted(needs)[0]]['seeds'][i]} gives {ref} another value"
    return None


def _spread(numbers):
    import numpy as np

    finite = [v for v in numbers if math.isfinite(v)]
    if not finite:
        return {"non_finite": len(numbers)}
    p05, median, p95 = (float(v) for v in np.percentile(finite, PERCENTILES))
    return {
        "median": median,
        "p05": p05,
        "p95": p95,
        "min": float(min(finite)),
        "max": float(max(finite)),
        "non_finite": len(numbers) - len(finite),
    }


def _seed_counts(sweep):
    return [(experiment, found["seeds"]) for experiment, found in sweep.items()]


def build(sweep, values, shortcodes, settings):
    """The report as plain data: the envelope build/robustness.json holds."""
    from articlekit.experiment.artifacts import envelope  # see main

    swept = set(sweep)
    counts = {len(found["seeds"]) for found in sweep.values()}
    if len(counts) > 1:
        raise RobustnessError(
            "the chunks hold different numbers of seeds per experiment "
            f"({', '.join(f'{e}: {len(found)}' for e, found in _seed_counts(sweep))}): "
            "run snakemake robustness again to complete the sweep"
        )
    n_seeds = counts.pop() if counts else 0
    indices = [_at_index(sweep, values, i) for i in range(n_seeds)]
    by_key, rows, claim_rows, unvaried = {}, [], [], []
    fixed = settings.get("fixed") or {}

    for key in _shown(shortcodes, values, swept):
        experiment = _seeded(key, swept)
        if experiment is None:
            continue
        try:
            seen = [lookup(v, key) for v, missing in indices if experiment not in missing]
            at_seed = lookup(values, key)
        except UnknownKey:  # a key the article misspelt: bind names it, with its line and the closest keys
            continue
        row = {
            "key": key,
            "bindable": f"robustness.{bindable_key(key)}",
            "experiment": experiment,
            "article_seed": values.get(f"{experiment}.params.seed"),
            "at_seed": at_seed,
            "seeds": len(seen),
        }
        if is_number(at_seed) and all(is_number(v) for v in seen):
            row.update(_spread(seen))
            row["samples"] = seen
            if seen and math.isfinite(at_seed):
                row["percentile_at_seed"] = percentile_rank(seen, at_seed)
                row["percentile_at_seed_low"], row["percentile_at_seed_high"] = percentile_interval(seen, at_seed)
        else:
            row["differs"] = sum(not same_value(v, at_seed) for v in seen)
        rows.append(row)
        # not the value at the article's seed: that is the key itself, and a second key holding the
        # same number would be the lint's suggestion for a typed copy of it
        by_key[bindable_key(key)] = {k: row[k] for k in ("seeds", *SPREAD, "differs") if k in row}

    for key, expect in shortcodes["claims"]:
        refs = [key, *claimlib.keys_referenced(expect)]
        touched = [_seeded(ref, swept) for ref in refs]
        # a claim about the sweep itself is bind's to judge, on the sweep's results
        if not any(touched) or any(ref.startswith("robustness.") for ref in refs):
            continue
        needs = {e for e in touched if e}
        at_seed, message = _judge(expect, key, values)
        why = _fixed(refs, fixed)
        if why:
            # drawn from a seed the sweep does not vary: a share of seeds would be the build's one
            # draw counted N times; the declaration is checked, never taken on trust
            moved = _moved(refs, values, indices, needs, sweep)
            if moved:
                raise RobustnessError(
                    f"robustness.fixed says {why[0]!r} is drawn from no seed the sweep varies "
                    f"({why[1]}), but {moved}: take it out of robustness.fixed"
                )
            unvaried.append(
                {"key": key, "expect": expect, "at_seed": at_seed, "at_seed_message": message, "why": why[1]}
            )
            continue
        outcomes = {HOLDS: 0, FAILS: 0, INCONCLUSIVE: 0}
        failing, first_failure, per_index = [], None, []
        for i, (overlay, missing) in enumerate(indices):
            if needs & set(missing):
                per_index.append(None)
                continue
            status, said = _judge(expect, key, overlay)
            outcomes[status] += 1
            per_index.append(status == HOLDS)
            if status != HOLDS:
                failing.append(sweep[sorted(needs)[0]]["seeds"][i])
                first_failure = first_failure or said
        ran = sum(outcomes.values())
        fraction = outcomes[HOLDS] / ran if ran else None
        low, high = wilson_interval(outcomes[HOLDS], ran) or (None, None)
        flagged = at_seed == HOLDS and fraction is not None and 1 - fraction > settings["flag_share"]
        claim_rows.append(
            {
                "key": key,
                "expect": expect,
                "experiments": sorted(needs),
                "at_seed": at_seed,
                "at_seed_message": message,
                "ran": ran,
                "held": outcomes[HOLDS],
                "failed": outcomes[FAILS],
                INCONCLUSIVE: outcomes[INCONCLUSIVE],
                "holds_fraction": fraction,
                "holds_fraction_low": low,
                "holds_fraction_high": high,
                "failing_seeds": failing,
                "first_failure": first_failure,
                "flagged": flagged,
                "per_index": per_index,
            }
        )

    for key in dict.fromkeys(row["key"] for row in claim_rows):
        own = [row for row in claim_rows if row["key"] == key]
        every = [None if None in outcome else all(outcome) for outcome in zip(*(r["per_index"] for r in own))]
        judged = [o for o in every if o is not None]
        entry = by_key.setdefault(bindable_key(key), {})
        entry["holds_fraction"] = sum(judged) / len(judged) if judged else None
        entry["holds_fraction_low"], entry["holds_fraction_high"] = wilson_interval(sum(judged), len(judged)) or (
            None,
            None,
        )
        entry[FAILS] = len(judged) - sum(judged)  # robustness.<key>.fails
        entry["failing_seeds"] = sorted({s for r in own for s in r["failing_seeds"]})
        entry["flagged"] = any(r["flagged"] for r in own)
        # which of them: articlekit.article.disclosure finds each where the article makes it
        entry["flagged_claims"] = [r["expect"] for r in own if r["flagged"]]
    for row in claim_rows:
        del row["per_index"]

    experiments = [
        {
            "experiment": e,
            "script": f["script"],
            "seeds": len(f["seeds"]),
            "first_seed": f["seeds"][0] if f["seeds"] else None,
            "last_seed": f["seeds"][-1] if f["seeds"] else None,
            "ran": len(f["runs"]),
            "failed": len(f["failures"]),
            "failures": f["failures"],
        }
        for e, f in sorted(sweep.items())
    ]
    runs = sum(x["seeds"] for x in experiments)
    failed_runs = sum(x["failed"] for x in experiments)
    summary = {
        "seeds": n_seeds,
        "runs": runs,
        "failed_runs": failed_runs,
        "claims": len(claim_rows),
        "flagged": sum(r["flagged"] for r in claim_rows),
        "unvaried": len(unvaried),
    }
    seed_sets = {
        x["experiment"]: {k: x[k] for k in ("first_seed", "last_seed", "seeds", "ran", "failed")} for x in experiments
    }
    document = envelope(
        "robustness",
        SCRIPT,
        {"seeds": n_seeds, "flag_share": settings["flag_share"], "confidence": CONFIDENCE},
        {"sweep": summary, "experiments": seed_sets, **by_key},
        {},
    )
    document.update(
        {
            "experiments": experiments,
            "excluded": settings.get("excluded", {}),
            "unseeded": settings.get("unseeded", []),
            "printed": rows,
            "claims": claim_rows,
            "unvaried": unvaried,
        }
    )
    return document


# ---- command -------------------------------------------------------------------------


def main(argv=None):
    # the values' modules here, in the summary's own functions: the bind and
    # the quarto pre-render import this module (seed_band, plan_facts) for
    # its reading of the article alone, and they cost a thirtieth of a second
    from articlekit.data.values import merge, published_envelope
    from articlekit.experiment.artifacts import read_artifact

    parser = argparse.ArgumentParser(
        prog="python -m articlekit.article.robustness", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--chunks", nargs="*", default=[], help="the sweep's chunks")
    parser.add_argument("--results", nargs="*", default=[], help="results/<name>.json: the article's seed")
    parser.add_argument("--baseline", help="baseline/published.yaml, for claims that compare with published.<id>")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--article", help="the article, whose shortcodes say what to report (article_shortcodes)")
    given.add_argument(
        "--shortcodes",
        metavar="JSON",
        help='in place of --article: its {"printed": [key], "claims": [[key, expect]]} (article_shortcodes)',
    )
    parser.add_argument(
        "--digest",
        metavar="HEX",
        help="with --article: the digest of its shortcodes the build planned with (seed_keys.shortcodes_digest)",
    )
    parser.add_argument(
        "--settings",
        required=True,
        metavar="JSON",
        help='{"flag_share": 0.05, "excluded": {name: why}, "unseeded": [name], "fixed": {prefix: why}}',
    )
    parser.add_argument("--json", required=True, help="build/robustness.json")
    args = parser.parse_args(argv)
    settings = json.loads(args.settings)
    sweep = collect([(path, read_json(path)) for path in args.chunks])
    artifacts = [(path, read_artifact(path)) for path in args.results]
    if args.baseline:
        artifacts.append((args.baseline, published_envelope(args.baseline)))
    values = merge(artifacts)["values"]
    shortcodes = json.loads(args.shortcodes) if args.shortcodes else read_shortcodes(args.article, args.digest)
    if shortcodes.get("unparsed"):
        raise RobustnessError(f"{shortcodes['unparsed']} (nothing summarised until the article parses)")
    report = build(sweep, values, shortcodes, settings)
    write_json(args.json, report)
    s = report["values"]["sweep"]
    log.info(
        f"robustness: {s['seeds']} seeds, {s['runs']} runs ({s['failed_runs']} failed), {s['claims']} claims "
        f"({s['flagged']} flagged) -> {args.json}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_command("robustness", main, sys.argv[1:]))
