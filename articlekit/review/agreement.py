"""When two builds agree: how far a value may move between a release and
this build (the diff) or between environments (the version matrix) before
it counts as changed.

A key the baseline lists follows the agreement class of its first entry
that has one (articlekit.data.baseline: noise, timing, exact, text, info;
an erratum or a citation has none); any other key follows the float rule: floats
within FLOAT_ULPS units in the last place (another CPU or BLAS rounds the
last bits differently), integers, shapes, booleans and texts equal. A
number under one of the article's volatile prefixes (publishing.volatile,
e.g. timings) may move within DEFAULT_VOLATILE_BAND of the other build's,
and a key the article calls the spread of a measurement (publishing.spread:
its samples, quartiles, interval, the load it ran under) is reported, not
compared. Which keys are error measures (ULPs of 1.0) and which were
computed in float32 is the article's to say too (publishing.error_measures,
publishing.single_precision): with none, every float is judged in float64
ULPs of itself.

What a build says of the published edition is another question, answered by
articlekit.data.edition.
"""

import math

from articlekit.core.claims import check_holds
from articlekit.core.equality import is_number, same_value
from articlekit.core.fmt import FormatError, format_printed
from articlekit.data.baseline import EXACT, INFO, NOISE, TEXT, TIMING

# ---- between two builds: the diff's and the matrix's question ---------------------------

DEFAULT_VOLATILE_BAND = (0.5, 2.0)
# The baseline classes that say how far a value may move between builds.
RULE_CLASSES = (NOISE, TIMING, EXACT, TEXT, INFO)


def between_builds(key, baseline, publishing):
    """(label, test) where test(old, new) -> (same, why) decides whether the
    key changed beyond what its class allows."""
    entry = rule_entry(key, baseline)
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
    if publishing.is_spread(key):
        return "spread: not compared", lambda old, new: (True, "the spread of a measurement is reported, not compared")
    if publishing.is_volatile(key):
        return f"timing band {list(DEFAULT_VOLATILE_BAND)}", _volatile_default
    width = "float32" if publishing.is_single_precision(key) else "float64"
    error_measure = publishing.is_error_measure(key)
    return (f"floats within {FLOAT_ULPS} ULPs, the rest equal",
            lambda old, new: within_ulps(old, new, width, error_measure))


def rule_entry(key, baseline):
    """The baseline entry whose class says how far `key` may move between
    builds, or None. An erratum, a cited or a not-reproducible entry says
    what the edition printed, not how two builds may differ: the rule is
    the first entry that has one (an erratum listed first must not hide a
    noise bound)."""
    entries = baseline.for_key(key) if baseline else []
    return next((e for e in entries if e.cls in RULE_CLASSES), None)


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
    if not all(is_number(o) and is_number(n) for _, o, n in pairs):
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
    if all(is_number(v) for v in measured) and any(isinstance(v, float) for v in measured):
        return _within_band(DEFAULT_VOLATILE_BAND, old, new)
    return _equal(old, new)  # parameters and sizes under a volatile prefix are exact


def _leaves_of(value):
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves_of(item)]
    return [value]


# ---- the float rule ------------------------------------------------------------------
# A float computed on another CPU (AVX-512 vs AVX2 kernels, another BLAS) may
# round its last bits differently: summation order changes with the vector
# width. Such results agree when they are within FLOAT_ULPS units in the last
# place; what is exact (integers, shapes, texts, booleans, and the seeded
# table at the printed precision) must be equal.

FLOAT_ULPS = 16
# A measured error (a max |diff| between two computations, a deviation from
# 1) is a difference of values of order one: its last bits are those of the
# values it compares, so it is judged in ULPs of 1.0, not of itself. Which
# keys hold one is the article's to say (publishing.error_measures).


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


def within_ulps(old, new, width="float64", error_measure=False, ulps=FLOAT_ULPS):
    """(same, why) for two builds of a floating-point result: equal shapes and
    integers, and floats within `ulps` units in the last place of `width`
    (float64 or float32), of 1.0 for an error measure, else of the values."""
    if same_value(old, new):
        return True, "equal"
    olds, news = _float_leaves(old), _float_leaves(new)
    if olds is None or news is None or _shape(old) != _shape(new) or len(olds) != len(news):
        return False, "not equal"
    if any(isinstance(o, int) != isinstance(n, int) or (isinstance(o, int) and o != n) for o, n in zip(olds, news)):
        return False, "not equal (integers are exact)"
    scale = 1.0 if error_measure else None
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
