"""A seeded value printed outside its sweep's 5-95 % band is said to be, where it is printed.

The seed sweep (articlekit.article.robustness) gives every seeded number the
article shows its spread over the sweep's seeds: robustness.<key>.p05 and
.p95, the 5th and 95th percentiles. The article prints the value at its own
seed. When that value lies outside the band (below p05 or above p95) the
article's seed is one of the draws that the sweep puts among its tails,
and the reader of the number is owed that fact beside it, not in a table
three sections away. So the build says so, wherever the value is printed:
every edition prints, beside the number, a note in the class claim-outlier
(articlekit.core.status.OUTLIER_CLASS: the claim marks' path, its own
colour), "(outside the 5–95 % band of 100 seeds: 479.02 to 1190.66)", the
band in the value's own format, with the seeds and the value's percentile
in its tooltip. The note is the build's, not the author's: which values lie
outside depends on the sweep (its seeds, the experiments' parameters), and
a build with another configuration (config/test.yaml's 20 seeds) finds
others, so no sentence typed for one sweep could stay true for every build,
and none is left to forget.

The author may say it at the shortcode too, band="outside"
(`{{< value scaling.dk16.scaled.effective_terms fmt=".2f" band="outside" >}}`),
which bind holds to the sweep. Bind calls check() on every value shortcode
it printed (prose or code, not a comment, not the departures section's):

- band="outside" on a value this sweep finds inside its band: a warning,
  strict or not (another sweep may find it outside), and no note;
- band="outside" on a key no sweep gives a band (not a number of a swept
  experiment, or a build whose values hold no sweep): refused, saying why;
- band= takes only "outside", and only on a value the article prints.

The band is the key's, so it is written into the key's binding (`band`:
bindings_schema.json) and each place that prints the key shows the note
(articlekit.article.bound, value.lua). A value every seed shares is at
p05 = p95 and never outside. Without the sweep's results in the values (an
article that binds no robustness.* key does not read them) no value has a
band, and nothing is checked.
"""

from dataclasses import dataclass

from articlekit.article.robustness import bindable_key
from articlekit.article.shortcodes import normalize_space
from articlekit.core.equality import is_number
from articlekit.core.fmt import format_value
from articlekit.core.status import OUTLIER_CLASS
from articlekit.core.keys import split_key

OUTSIDE = "outside"
BAND_VALUES = (OUTSIDE,)  # what band= may say


@dataclass(frozen=True)
class Band:
    key: str
    value: float  # at the article's seed
    p05: float
    p95: float
    seeds: int
    percentile: float | None
    first_seed: int | None
    last_seed: int | None

    @property
    def outside(self):
        return self.value < self.p05 or self.value > self.p95

    def shown(self, fmt):
        """The band as the value is printed, "479.02 to 1190.66"; three
        significant digits where the value prints every digit it has (no
        fmt, or fmt="r")."""
        if fmt in ("", "r"):
            return f"{self.p05:.3g} to {self.p95:.3g}"
        try:
            return f"{format_value(self.p05, fmt)} to {format_value(self.p95, fmt)}"
        except ValueError:  # a spec for another type than the band's numbers
            return f"{self.p05:.3g} to {self.p95:.3g}"

    def seed_set(self):
        if self.first_seed is None:
            return f"{self.seeds} seeds"
        return f"{self.seeds} seeds ({self.first_seed} to {self.last_seed})"

    def said(self):
        """For messages and tooltips: the value, the band, where it falls."""
        rank = f", above {self.percentile:.1%} of them" if isinstance(self.percentile, float) else ""
        return (
            f"{self.key} = {self.value:.6g} at the article's seed lies outside the 5-95 % band of the sweep's "
            f"{self.seed_set()}, {self.p05:.6g} to {self.p95:.6g}{rank}"
        )


def band_of(values, key):
    """The Band of a printed key (flat values, build/values.json's), or None
    when the sweep gives it none."""
    group = f"robustness.{bindable_key(key)}"
    p05, p95, value = values.get(f"{group}.p05"), values.get(f"{group}.p95"), values.get(key)
    if not (is_number(p05) and is_number(p95) and is_number(value)) or key.startswith("robustness."):
        return None
    experiment = split_key(key)[0].partition(".")[0]
    seeds = values.get(f"{group}.seeds")
    return Band(
        key,
        value,
        p05,
        p95,
        seeds if isinstance(seeds, int) else 0,
        values.get(f"{group}.percentile_at_seed"),
        values.get(f"robustness.experiments.{experiment}.first_seed"),
        values.get(f"robustness.experiments.{experiment}.last_seed"),
    )


def no_band_reason(values, key):
    """Why band= cannot be said of a key: the sweep gives it no band."""
    if key.startswith("robustness."):
        return f"{key} is the sweep's own statistic, not a value of one seed"
    if not any(k.startswith("robustness.sweep.") for k in values):
        return (
            "this build's values hold no seed sweep (an article that binds no robustness.* key does not "
            "read build/robustness.json), so no value has a band"
        )
    experiment = split_key(key)[0].partition(".")[0]
    if f"robustness.experiments.{experiment}.seeds" not in values:
        return f"experiment {experiment!r} is not in the seed sweep (no seed, or robustness.exclude)"
    if ".params." in f".{split_key(key)[0]}.":
        return f"{key} is a parameter, not a seeded value"
    return f"{key} is not a number the sweep spreads (robustness.{bindable_key(key)} has no p05/p95)"


@dataclass(frozen=True)
class Problem:
    shortcode: object
    message: str
    # warned of, strict or not: a value the article says is outside the band that this sweep
    # finds inside it (another sweep, config/test.yaml's, draws another band); no note is
    # printed there. The rest (band= where no band can be) stop bind
    lenient: bool = False


def printing(occurrences):
    """The value shortcodes whose text a reader sees (prose or code)."""
    return [
        sc
        for sc in occurrences
        if sc.name == "value" and not sc.escaped and sc.context in ("prose", "code") and len(sc.args) == 1
    ]


def check(article, occurrences, values, bindings):
    """[Problem] for every printed value whose band= does not say what the
    sweep finds; each out-of-band value's binding gets its `band` (the note's
    text, class and tooltip, disclosed or not), which bound.py and value.lua
    print at each place."""
    problems = []
    for sc in occurrences:
        said = sc.kwargs.get("band")
        if sc.escaped or sc.context == "departures" or (said is None and sc.name != "value"):
            continue
        where = sc.where(article)
        if said is not None and said not in BAND_VALUES:
            problems.append(
                Problem(sc, f"{where}: band= takes only {' or '.join(BAND_VALUES)}, got {said!r} in {sc.raw}")
            )
            continue
        if said is not None and (sc.name != "value" or sc.context not in ("prose", "code")):
            problems.append(
                Problem(sc, f"{where}: band=\"outside\" belongs on a value the article prints, not on {sc.raw}")
            )
            continue
        if len(sc.args) != 1:
            continue
        key = normalize_space(sc.args[0])
        band = band_of(values, key)
        binding = bindings.get(sc.lookup_id)
        if band is None:
            if said is not None:
                problems.append(
                    Problem(sc, f"{where}: band=\"outside\" on {key}: {no_band_reason(values, key)}; remove it")
                )
            continue
        if not band.outside:
            if said is not None:
                problems.append(
                    Problem(
                        sc,
                        f"{where}: band=\"outside\" on {key}, but its value {band.value:.6g} lies inside the 5-95 % "
                        f"band of the sweep's {band.seed_set()}, {band.p05:.6g} to {band.p95:.6g}: the note would be "
                        "false; remove band=\"outside\"",
                        lenient=True,
                    )
                )
            continue
        if binding is not None:
            fmt = binding.get("fmt", "")
            binding["band"] = {
                "p05": band.p05,
                "p95": band.p95,
                "seeds": band.seeds,
                "message": band.said(),
                # beside the number where the shortcode says band="outside", and where it does not
                "disclosed": {
                    "text": f"(outside the 5–95 % band of {band.seeds} seeds: {band.shown(fmt)})",
                    "class": OUTLIER_CLASS,
                },
            }
    return problems


def shown(binding):
    """(text, class, tooltip) printed beside a value wherever it is printed:
    the note, for a value the sweep finds outside its band; else None."""
    band = binding.get("band")
    if not isinstance(band, dict):
        return None
    return band["disclosed"]["text"], band["disclosed"]["class"], band["message"]
