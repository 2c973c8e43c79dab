"""Agreement classes: how far a regenerated value may be from another one of
the same key before it counts as moved. Defined here once, for every reader:

- the baseline (articlekit.baseline) gives each printed value a class;
- the audit (articlekit.audit) and the article's departures section
  (articlekit.departures) ask `verdicts`: does this build's value agree
  with what the edition printed, and when it moved unexpectedly, does the
  baseline (or this build's configuration) explain it? One judgement for
  both, so the article and the audit cannot tell a reader different things;
- the diff and the version matrix (articlekit.diff, articlekit.matrix) ask
  `between_builds`: did the value change from one build to another?

The classes:

    exact             the printed digits must come back (at the printed
                      precision when the entry has a fmt)
    noise             floating-point noise: moves, within the entry's check
    timing            a measurement of the machine: within the entry's band
                      around the printed time, or its check still holds
    text              a message or other string: equal up to line wrapping;
                      may change when the entry's library changes version
    info              reported (versions, machine): expected to differ
    not_reproducible  the edition never gave the inputs; its check must hold
    erratum           the edition was wrong; its corrected fact (check) holds
    revised           deliberately changed in this build, with its reason
    cited             from the paper or the docs: listed, never compared

Between two builds, a key the baseline does not list follows the float rule:
floats within FLOAT_ULPS units in the last place (another CPU or BLAS rounds
the last bits differently), integers, shapes, booleans and texts equal. A
number under one of the article's volatile prefixes (publishing.volatile, e.g.
timings) may move within DEFAULT_VOLATILE_BAND of the other build's, and the
spread of such a measurement (its samples, quartiles, interval, the load it
ran under) is reported, not compared.
"""

import math
import re
from dataclasses import dataclass

from articlekit.claims import INCONCLUSIVE, ClaimError, evaluate
from articlekit.environment import installed_versions
from articlekit.fmt import FormatError, format_printed
from articlekit.values import lookup, measured

EXACT = "exact"
NOISE = "noise"
TIMING = "timing"
TEXT = "text"
INFO = "info"
NOT_REPRODUCIBLE_CLASS = "not_reproducible"
ERRATUM_CLASS = "erratum"
REVISED = "revised"
CITED_CLASS = "cited"
CLASSES = (EXACT, NOISE, TIMING, TEXT, INFO, NOT_REPRODUCIBLE_CLASS, ERRATUM_CLASS, REVISED, CITED_CLASS)
# Classes whose published value must meet the entry's own check.
CHECKED_CLASSES = (NOISE, TIMING)

# What the audit says of an entry, in the order a reviewer reads them.
ERRATUM = "erratum"
NOT_REPRODUCIBLE = "not reproducible"
UNEXPECTED = "moved unexpectedly"
MISSING = "key missing"
EXPECTED = "moved as expected"
REPRODUCED = "reproduced"
CITED = "cited"
STATUSES = (ERRATUM, NOT_REPRODUCIBLE, UNEXPECTED, MISSING, EXPECTED, REPRODUCED, CITED)

# What made an entry move unexpectedly. It decides what may explain the move:
# a reason (or a changed configuration) explains a value that came back
# different; a timing's class explains a time outside its band (the machine's,
# not the code's); nothing explains a failed check, a value that cannot be
# printed, two thresholds for one number or a missing key: those need a fix.
MOVED_VALUE = "value"
OUT_OF_BAND = "band"
FAILED_CHECK = "check"
UNPRINTABLE = "unprintable"
TWO_THRESHOLDS = "thresholds"
KEY_GONE = "missing"


# ---- equality and checks, shared by both questions ----------------------------------

def check_holds(check, value):
    """(holds, message) for a check in the claim grammar of articlekit.claims
    ("< 1e-12", "> 1", "between 1e-9 and 1e-5"). A check that cannot apply
    to the value (text against a number) does not hold."""
    try:
        result = evaluate(check, value)
    except ClaimError as exc:
        return False, str(exc)
    return result.holds, result.message


def same_text(a, b):
    """Equal up to line wrapping: the printed edition wraps long messages."""
    return " ".join(str(a).split()) == " ".join(str(b).split())


def same_value(a, b):
    """Equality that treats NaN as equal to NaN (a regenerated nan is a match)."""
    if isinstance(a, bool) or isinstance(b, bool):  # True is not 1 here
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


# ---- against the edition: the audit's question --------------------------------------

def same_release(published, installed):
    """'2.14.1' vs '2.14.1+cpu': same; '3.13' vs '3.13.2': same (the edition
    gave only the minor version); '2.14.1' vs '2.13.0': different."""
    if not installed:
        return False
    base = str(installed).split("+", 1)[0]
    return base == published or base.startswith(published + ".")


def against_edition(entry, value, edition_versions, installed, checked=None):
    """(status, regenerated text, why) for one baseline entry whose key exists.
    `checked`: the value as its check sees it, an Interval for a measured value."""
    return _judge(entry, value, edition_versions, installed, checked)[:3]


def _judge(entry, value, edition_versions, installed, checked):
    """against_edition, plus the cause of an unexpected move (None otherwise)."""
    if entry.cls == TEXT:
        shown = str(value)
        same = isinstance(value, str) and same_text(value, entry.value)
    else:
        try:
            shown = format_printed(value, entry.fmt)
        except FormatError as exc:
            return UNEXPECTED, repr(value), f"cannot print it the way the edition did: {exc}", UNPRINTABLE
        same = shown == entry.published if entry.fmt else same_value(value, entry.value)

    if entry.check:
        holds, message = check_holds(entry.check, value if checked is None else checked)
        if _inconclusive(entry.check, checked):
            return EXPECTED, shown, f"machines differ; {message}: the measurement cannot decide", None
        if not holds:
            return UNEXPECTED, shown, f"fails its check '{entry.check}' ({message})", FAILED_CHECK

    if same:
        return REPRODUCED, shown, ("same text" if entry.cls == TEXT else "the printed value came back"), None

    if entry.cls == EXACT:
        return UNEXPECTED, shown, f"an exact value: printed {entry.published}, regenerated {shown}", MOVED_VALUE
    if entry.cls == NOISE:
        return EXPECTED, shown, f"floating-point noise: both meet '{entry.check}'", None
    if entry.cls == TIMING:
        return _timing_against_edition(entry, value, shown)
    if entry.cls == TEXT:
        library = entry.library
        then, now = edition_versions.get(library), installed.get(library)
        if library and not same_release(then, now):
            return (EXPECTED, shown,
                    f"{library} {now or 'unknown'} here, {then} in the edition: messages change between versions", None)
        return UNEXPECTED, shown, f"the text changed with {library} still at the edition's {then}", MOVED_VALUE
    if entry.cls == INFO:
        return EXPECTED, shown, "reported, expected to differ between machines and builds", None
    if entry.cls == NOT_REPRODUCIBLE_CLASS:
        kept = f" Its check '{entry.check}' holds." if entry.check else ""
        return NOT_REPRODUCIBLE, shown, " ".join(entry.reason.split()) + kept, None
    if entry.cls == ERRATUM_CLASS:
        return ERRATUM, shown, " ".join(entry.reason.split()) + f" ('{entry.check}' holds.)", None
    if entry.cls == REVISED:
        kept = f" Its check '{entry.check}' holds." if entry.check else ""
        return EXPECTED, shown, "Revised: " + " ".join(entry.reason.split()) + kept, None
    raise ValueError(f"entry {entry.id!r}: unknown class {entry.cls!r}; the classes are {', '.join(CLASSES)}")


# "> 0.1", "<= 1e-12": the one-comparison checks whose thresholds can be compared.
_SIMPLE = re.compile(r"^\s*(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def threshold_conflicts(check, expects):
    """The article's claims (`expects`, on the entry's own key) that compare
    the same way as the entry's check with another threshold: one number,
    two thresholds."""
    mine = _SIMPLE.match(check or "")
    if not mine:
        return []
    side = mine.group(1)[0]
    out = []
    for expect in expects:
        theirs = _SIMPLE.match(expect or "")
        if theirs and theirs.group(1)[0] == side and float(theirs.group(2)) != float(mine.group(2)):
            out.append(expect)
    return sorted(set(out))


def _inconclusive(check, checked):
    """A measured value whose interval straddles the check's bound."""
    try:
        return checked is not None and evaluate(check, checked).status == INCONCLUSIVE
    except ClaimError:
        return False


def _timing_against_edition(entry, value, shown):
    if entry.band:
        low, high = entry.band
        ratio = value / entry.value if isinstance(value, (int, float)) and entry.value else float("nan")
        if not low <= ratio <= high:
            return (UNEXPECTED, shown, f"{ratio:.2f}x the published time, outside the band [{low:g}, {high:g}]",
                    OUT_OF_BAND)
        return (EXPECTED, shown,
                f"machines differ: {ratio:.2f}x the published time, inside the band [{low:g}, {high:g}]", None)
    return (EXPECTED, shown,
            f"machines differ; '{entry.check}' still holds (the printed {entry.published} is informational)", None)


# ---- one verdict per entry: what the audit and the article's departures both print --------

@dataclass(frozen=True)
class Verdict:
    """What this build says of one baseline entry. `shown`: the regenerated
    value printed the way the edition printed it (None without a value);
    `raw`: the value itself. For an unexpected move (or a missing key),
    `cause` says what moved and `explained` what accounts for it: the entry's
    reason, its class, or this build's configuration; None when nothing does."""
    entry: object
    status: str
    why: str
    shown: str = None
    raw: object = None
    cause: str = None
    explained: str = None

    @property
    def unexpected(self):
        return self.status in (UNEXPECTED, MISSING)

    @property
    def unexplained(self):
        return self.unexpected and not self.explained


def verdicts(baseline, values_doc, claims_on=lambda key: ()):
    """One Verdict per baseline entry, in the baseline's order: the single
    judgement behind build/audit.* and the article's {{< departures >}}.
    `claims_on(key)`: the expect="..." the article's own text makes about
    the key (its thresholds must be the entry's)."""
    values = values_doc.get("values", {})
    installed = installed_versions(values_doc)
    judged = []
    for entry in baseline.entries:
        if entry.cls == CITED_CLASS:
            why = " ".join(entry.reason.split())
            if entry.dropped:
                why += " Not in this article: " + " ".join(entry.dropped.split())
            judged.append(Verdict(entry, CITED, why))
            continue
        try:
            value = lookup(values, entry.key)
        except (KeyError, ValueError) as exc:
            # Reported, never dropped: a renamed key must not hide a number.
            judged.append(Verdict(entry, MISSING, f"{exc}; rename the entry's key in the baseline or restore "
                                                  "the value", cause=KEY_GONE))
            continue
        status, shown, why, cause = _judge(entry, value, baseline.edition["versions"], installed,
                                           measured(values, entry.key))
        conflicts = threshold_conflicts(entry.check, claims_on(entry.key))
        if conflicts:
            status, cause = UNEXPECTED, TWO_THRESHOLDS
            why = (f"one threshold in two places: the article claims {', '.join(map(repr, conflicts))}, "
                   f"the baseline checks '{entry.check}' (line {entry.line}); make them one. " + why)
        judged.append(Verdict(entry, status, why, shown, value, cause))
    changed = configuration_changes(judged)
    return [_explain(v, changed) for v in judged]


# `<experiment>.params.<name>`: the parameters an experiment ran with (its envelope's params).
_PARAMETER = re.compile(r"^([A-Za-z_]\w*)\.params\.")


def configuration_changes(judged):
    """{experiment: "n_keys 2000 → 1000, ..."} for each experiment this
    build ran with other parameters than the edition printed: an entry on
    one of its `params` keys whose value came back different. Everything that
    experiment computes then moves with its configuration, not its code."""
    changed = {}
    for v in judged:
        match = _PARAMETER.match(v.entry.key or "")
        if match and v.status == UNEXPECTED and v.cause == MOVED_VALUE:
            name = v.entry.key[match.end():]
            changed.setdefault(match.group(1), []).append(f"{name} {v.entry.published} → {v.shown}")
    return {experiment: ", ".join(dict.fromkeys(moves)) for experiment, moves in changed.items()}


def _explain(v, changed):
    """The verdict with what in the baseline (or the configuration) explains
    its unexpected move; see the causes above for what can."""
    if not v.unexpected:
        return v
    entry, explained = v.entry, None
    if v.cause == OUT_OF_BAND:
        explained = ("a timing: its class expects the time to move with the machine and its load; "
                     "the article's claims about timings are checked with their intervals")
    elif v.cause == MOVED_VALUE and entry.reason:
        explained = " ".join(entry.reason.split())
    elif v.cause == MOVED_VALUE and (entry.key or "").split(".")[0] in changed:
        experiment = entry.key.split(".")[0]
        explained = (f"this build runs {experiment} with other parameters than the edition "
                     f"({changed[experiment]}): its values move with the configuration")
    if not explained:
        return v
    return Verdict(entry, v.status, v.why, v.shown, v.raw, v.cause, explained)


# ---- between two builds: the diff's and the matrix's question ---------------------------

DEFAULT_VOLATILE_BAND = (0.5, 2.0)
# The spread of a measurement under a volatile prefix: its samples,
# quartiles and interval, per-round ratios, the calls that filled a sample,
# the load it ran under. It describes the noise itself.
_SPREAD = re.compile(r"\.((samples|wall_samples|min|max|q1|q3|low|high)_ms|low|high|coverage|ratios"
                     r"|calls_per_sample)$|\.load\.")


def is_spread(key, publishing):
    """A key that describes how a volatile measurement scattered."""
    return publishing.is_volatile(key) and bool(_SPREAD.search(key))


def between_builds(key, baseline, publishing):
    """(label, test) where test(old, new) -> (same, why) decides whether the
    key changed beyond what its class allows."""
    entries = baseline.for_key(key) if baseline else []
    entry = entries[0] if entries else None
    if entry and entry.cls == NOISE:
        return f"noise {entry.check}", lambda old, new: _within_noise(entry.check, old, new)
    if entry and entry.cls == TIMING:
        if entry.band:
            return f"timing band {list(entry.band)}", lambda old, new: _within_band(entry.band, old, new)
        return f"timing {entry.check}", lambda old, new: _still_holds(entry.check, old, new)
    if entry and entry.cls == EXACT and entry.fmt and entry.key == key:
        return f"exact at the printed precision ({entry.fmt})", lambda old, new: same_when_printed(entry.fmt, old, new)
    if entry and entry.cls in (TEXT, INFO):
        return f"{entry.cls}: equal", _equal
    if is_spread(key, publishing):
        return "timing spread: not compared", lambda old, new: (True, "the spread of a timing is reported, not compared")
    if publishing.is_volatile(key):
        return f"timing band {list(DEFAULT_VOLATILE_BAND)}", _volatile_default
    return f"floats within {FLOAT_ULPS} ULPs, the rest equal", lambda old, new: within_ulps(key, old, new)


def _equal(old, new):
    same = same_value(old, new)
    return same, "equal" if same else "not equal"


def _within_noise(check, old, new):
    if same_value(old, new):
        return True, "equal"
    held = check_holds(check, old)[0], check_holds(check, new)[0]
    if all(held):
        return True, f"both meet '{check}'"
    side = "this build" if held[0] else "the release"
    return False, f"{side} breaks '{check}'" if held[0] != held[1] else f"neither side meets '{check}'"


def _within_band(band, old, new):
    if same_value(old, new):
        return True, "equal"
    olds, news = _leaves_of(old), _leaves_of(new)
    if len(olds) != len(news) or any((o is None) != (n is None) for o, n in zip(olds, news)):
        return False, "measured at different points"
    # null: not measured on either side (e.g. a size the experiment skips)
    pairs = [(i, o, n) for i, (o, n) in enumerate(zip(olds, news)) if o is not None]
    if not (_is_numbers([o for _, o, _ in pairs]) and _is_numbers([n for _, _, n in pairs])):
        return False, "no longer comparable numbers"
    low, high = band
    ratios = [n / o if o else float("inf") for _, o, n in pairs]
    outside = [(i, o, n, r) for (i, o, n), r in zip(pairs, ratios) if not low <= r <= high]
    if outside:
        item, o, n, ratio = outside[0]
        where = f"item {item + 1} of {len(olds)}, {o:.4g} to {n:.4g}: " if isinstance(new, list) else ""
        more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
        return False, f"{where}{ratio:.2f}x the release's figure, outside the band [{low:g}, {high:g}]{more}"
    spread = f"{ratios[0]:.2f}x" if len(set(ratios)) == 1 else f"{min(ratios):.2f}x to {max(ratios):.2f}x"
    return True, f"{spread} the release's figure, within the band [{low:g}, {high:g}]"


def _still_holds(check, old, new):
    if same_value(old, new):
        return True, "equal"
    held, holds = check_holds(check, old)[0], check_holds(check, new)[0]
    if holds:
        return True, f"'{check}' {'still holds' if held else 'holds again'}"
    return False, f"'{check}' {'no longer holds' if held else 'fails, as it did in the release'}"


def _volatile_default(old, new):
    measured = [v for v in _leaves_of(old) if v is not None]
    if _is_numbers(measured) and any(isinstance(v, float) for v in measured):
        return _within_band(DEFAULT_VOLATILE_BAND, old, new)
    return _equal(old, new)  # parameters and sizes under a volatile prefix are exact


def _leaves_of(value):
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves_of(item)]
    return [value]


def _is_numbers(items):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items)


# ---- the float rule ------------------------------------------------------------------
# A float computed on another CPU (AVX-512 vs AVX2 kernels, another BLAS) may
# round its last bits differently: summation order changes with the vector
# width. Such results agree when they are within FLOAT_ULPS units in the last
# place; what is exact (integers, shapes, texts, booleans, and the seeded
# table at the printed precision) must be equal.

FLOAT_ULPS = 16
# A measured error (a max |diff| between two computations, a deviation from
# 1) is a difference of values of order one: its last bits are those of the
# values it compares, so it is judged in ULPs of 1.0, not of itself.
ERROR_MEASURE = re.compile(r"(max_abs_diff|_deviation|output_diff)(\b|_|$)")


def float_width(key):
    """'float32' for keys computed in single precision, else 'float64'."""
    return "float32" if "float32" in key else "float64"


def _ulp(x, width):
    if width == "float32":
        return 2.0 ** (math.frexp(x)[1] - 24) if x else 2.0 ** -149
    return math.ulp(x)


def ulps_apart(a, b, width="float64", scale=None):
    """|a - b| in units in the last place of max(|a|, |b|) (or of `scale`)."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / _ulp(scale if scale is not None else max(abs(a), abs(b)), width)


def _float_leaves(value):
    """The numbers of a value (nested lists flattened), or None when it holds
    anything else (text, booleans, nulls): those are compared exactly."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return None
    if isinstance(value, (int, float)):
        return [value]
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            leaves = _float_leaves(item)
            if leaves is None:
                return None
            out.extend(leaves)
        return out
    return None


def _shape(value):
    return [len(value), *(_shape(value[0]) if value and isinstance(value[0], list) else [])] \
        if isinstance(value, list) else []


def within_ulps(key, old, new, ulps=FLOAT_ULPS):
    """(same, why) for two builds of a floating-point result: equal shapes and
    integers, and floats within `ulps` units in the last place."""
    if same_value(old, new):
        return True, "equal"
    olds, news = _float_leaves(old), _float_leaves(new)
    if olds is None or news is None or _shape(old) != _shape(new) or len(olds) != len(news):
        return False, "not equal"
    if any(isinstance(o, int) != isinstance(n, int) or (isinstance(o, int) and o != n) for o, n in zip(olds, news)):
        return False, "not equal (integers are exact)"
    width = float_width(key)
    scale = 1.0 if ERROR_MEASURE.search(key) else None
    worst = max(ulps_apart(float(o), float(n), width, scale) for o, n in zip(olds, news))
    plural = "ULP" if worst <= 1 else "ULPs"
    unit = f"{plural} of 1.0 ({width}; an error measure)" if scale else f"{plural} ({width})"
    if worst <= ulps:
        return True, f"within {worst:.2g} {unit}, tolerance {ulps}"
    shown = "inf" if math.isinf(worst) else f"{worst:.3g}"
    return False, f"{shown} {unit} apart, beyond the tolerance of {ulps}"


def same_when_printed(fmt, old, new):
    """(same, why) for an exact value: equal as the edition printed it."""
    if same_value(old, new):
        return True, "equal"
    try:
        a, b = format_printed(old, fmt), format_printed(new, fmt)
    except FormatError:
        return False, "not equal"
    if a == b:
        return True, f"equal at the printed precision ({fmt}: {a})"
    return False, f"printed {a} then, {b} now"
