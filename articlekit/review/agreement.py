"""When two builds agree: how far a value may move between a release and
this build (the diff), between environments (the version matrix) or
between the build and a rerun of one experiment (`reproduce`) before it
counts as changed.

A key the baseline lists follows the agreement class of each of its
entries that has a rule (articlekit.data.classes, one object per class:
noise, timing, exact, text, info; an erratum or a citation has none), which
judges it the way the audit judges the entry against the edition: a key
printed twice (.6f in a table, .2% in the prose) changed when either
print did, whatever order the baseline lists them in. An entry on one
item of a list value (`entropy.entropies[0]`) judges that item only, on
both builds; the list's other items follow the rule of a key no entry
governs. Any other key follows the float rule: floats within FLOAT_ULPS units in the
last place (another CPU or BLAS rounds the last bits differently),
integers, shapes, booleans and texts equal. A number under one of the
article's volatile prefixes (publishing.volatile, e.g. timings) may move
within DEFAULT_VOLATILE_BAND of the other build's, and a key the article
calls the spread of a measurement (publishing.spread: its samples,
quartiles, interval, the load it ran under) is reported, not compared.
Which keys are error measures (ULPs of 1.0) and which were computed in
float32 is the article's to say too (publishing.error_measures,
publishing.single_precision): with none, every float is judged in float64
ULPs of itself.

A rerun (`came_back`) is judged more closely, by what "reproduced" means
for the value: a measured value (`X.estimate` beside `X.low`, `X.high`)
by its interval, a key the baseline lists by its class, any other by the
digits the article prints of it (the float rule when it prints none).
REPRODUCED_MEANS is that table in words, one row per class and two for
the keys no class governs; docs/reliability.md and the audit page print it.

What a build says of the published edition is another question, answered by
articlekit.data.edition.
"""

import copy
import math

from articlekit.core.equality import is_number, same_value
from articlekit.core.fmt import FormatError, format_value
from articlekit.core.keys import split_key
from articlekit.data.classes import (
    AGREEMENT,
    MEASURED_MEANS,
    Means,
    agreement,
    equal,
    interval_came_back,
    is_interval,
    leaves,
    rule_entries,
    within_band,
)

# ---- between two builds: the diff's and the matrix's question ---------------------------

DEFAULT_VOLATILE_BAND = (0.5, 2.0)


def between_builds(key, baseline, publishing):
    """(label, test) where test(old, new) -> (same, why) decides whether the
    key changed beyond what its classes allow: each entry with a rule on
    the key (every one, as the audit judges every one), else each on one of
    its items, item by item, else the rule of a key no entry governs."""
    entries = rule_entries(key, baseline)
    whole = [agreement(e).between_builds(e, key) for e in entries if e.key == key]
    whole = [rule for rule in whole if rule]
    if whole:
        return all_of(whole)
    items = {}
    for e in entries:
        rule = agreement(e).between_builds(e, e.key) if e.key != key else None
        if rule:
            items.setdefault(e.key, []).append(rule)
    if items:
        each = {item: all_of(rules) for item, rules in items.items()}
        return _item_by_item(key, each, _unlisted(key, publishing))
    return _unlisted(key, publishing)


def all_of(rules):
    """(label, test) holding where each of `rules` holds: a key printed at
    two precisions changed when either print changed. Two rules with one
    label are one rule (a restatement of the same entry), said once."""
    rules = list({label: (label, test) for label, test in rules}.values())
    if len(rules) == 1:
        return rules[0]

    def test(old, new):
        judged = [rule_test(old, new) for _, rule_test in rules]
        broken = [why for same, why in judged if not same]
        if broken:
            return False, "; ".join(dict.fromkeys(broken))
        return True, "; ".join(dict.fromkeys(why for _, why in judged))

    return "; ".join(label for label, _ in rules), test


def _item_by_item(key, items, rest):
    """(label, test) for a list value whose items the baseline governs one by
    one: each governed item by its entry's rule, on that item alone (a noise
    bound '< 1' on X[0] is met by X[0], never asked of the list), and the
    other items by `rest`, the rule of a key no entry governs."""
    paths = {item: split_key(item)[1] for item in items}
    rest_label, rest_test = rest
    label = "; ".join(
        [f"{item[len(key) :]} {rule[0]}" for item, rule in items.items()] + [f"other items: {rest_label}"]
    )

    def test(old, new):
        whys, same = [], True
        old_rest, new_rest = copy.deepcopy(old), copy.deepcopy(new)
        for item, (_, item_test) in items.items():
            try:
                before, after = _at(old, paths[item]), _at(new, paths[item])
            except (IndexError, KeyError, TypeError):
                return False, f"{item[len(key) :]} is not in both builds"
            held, why = item_test(before, after)
            same &= bool(held)
            whys.append(f"{item[len(key) :]}: {why}")
            new_rest = _with(new_rest, paths[item], before)  # judged already: the rest's rule skips it
        held, why = rest_test(old_rest, new_rest)
        return same and held, "; ".join(whys + [f"other items: {why}"])

    return label, test


def _at(value, path):
    for step in path:
        value = value[step]
    return value


def _with(value, path, item):
    """value (a copy of it) with the item at `path` replaced."""
    if not path:
        return item
    value = copy.copy(value)
    value[path[0]] = _with(value[path[0]], path[1:], item)
    return value


def _unlisted(key, publishing):
    """The rule of a key no baseline entry governs."""
    if publishing.is_spread(key):
        return "spread: not compared", lambda old, new: (True, "the spread of a measurement is reported, not compared")
    if publishing.is_volatile(key):
        return f"timing band {list(DEFAULT_VOLATILE_BAND)}", _volatile_default
    width = "float32" if publishing.is_single_precision(key) else "float64"
    error_measure = publishing.is_error_measure(key)
    return (
        f"floats within {FLOAT_ULPS} ULPs, the rest equal",
        lambda old, new: within_ulps(old, new, width, error_measure),
    )


def _volatile_default(old, new):
    measured = [v for v in leaves(old) if v is not None]
    if all(is_number(v) for v in measured) and any(isinstance(v, float) for v in measured):
        return within_band(DEFAULT_VOLATILE_BAND, old, new)
    return equal(old, new)  # parameters and sizes under a volatile prefix are exact


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
        return 2.0 ** (math.frexp(x)[1] - 24) if x else 2.0**-149
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
    return (
        [len(value), *(_shape(value[0]) if value and isinstance(value[0], list) else [])]
        if isinstance(value, list)
        else []
    )


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


# ---- a rerun against the build: `reproduce`'s question -------------------------------------

CAME_BACK, NOT_BACK, NOT_COMPARED = "came back", "did not come back", "not compared"

UNLISTED_MEANS = Means(
    audit="not audited: the edition did not print it",
    diff=f"a float more than FLOAT_ULPS ({FLOAT_ULPS}) units in the last place away (under `publishing.volatile`: "
    f"beyond {DEFAULT_VOLATILE_BAND[0]:g}x to {DEFAULT_VOLATILE_BAND[1]:g}x; `publishing.spread`: never); "
    "any other difference",
    rerun="the rerun prints the article's digits of it (each `fmt` it is printed with); "
    f"a value the article does not print: floats within FLOAT_ULPS ({FLOAT_ULPS}) ULPs, the rest equal",
)

# What "reproduced" means, by class: (class or kind of key, Means). One table for the docs and the audit page.
REPRODUCED_MEANS = [(f"`{name}`", c.means) for name, c in AGREEMENT.items()] + [
    ("a measured value (`X.estimate`, `X.low`, `X.high`)", MEASURED_MEANS),
    ("a key the baseline does not list", UNLISTED_MEANS),
]


def came_back(key, old, new, baseline, publishing, printed=()):
    """(verdict, rule, why) for a rerun's value of `key` against the build's:
    verdict CAME_BACK, NOT_BACK or NOT_COMPARED. `old`, `new`: the values as
    articlekit.core.keys.measured gives them (an Interval for a measured
    value); `printed`: the fmt of each place the article prints the key."""
    if publishing.is_per_build(key) or publishing.is_where_run(key):
        return NOT_COMPARED, "differs on every build by design", "not compared (publishing.per_build / where_run)"
    if is_interval(old) and is_interval(new):
        judged = interval_came_back(old, new)
        return _verdict(judged), "a measured value: inside the build's interval, or overlapping it", judged[1]
    # each entry on the key itself judges it (one on an item of it judges that item, not the key)
    entries = [e for e in rule_entries(key, baseline) if e.key == key]
    judged = [j for j in (agreement(e).came_back(e, key, old, new) for e in entries) if j]
    if judged:
        rules = [r for r in (agreement(e).between_builds(e, key) for e in entries) if r]
        came, why = _all_came_back(judged)
        return _verdict((came, why)), (all_of(rules)[0] if rules else entries[0].cls), why
    formats = list(dict.fromkeys(printed))
    if formats:
        return _printed_digits(formats, old, new)
    rule, test = _unlisted(key, publishing)
    judged = test(old, new)
    return _verdict(judged), rule, judged[1]


def _all_came_back(judged):
    """(came back, why) of every entry's verdict: back when each that
    compares says so, not back when one says not; None when none compares."""
    compared = [j for j in judged if j[0] is not None] or judged[:1]
    broken = [why for came, why in compared if came is False]
    if broken:
        return False, "; ".join(dict.fromkeys(broken))
    return compared[0][0], "; ".join(dict.fromkeys(why for _, why in compared))


def _verdict(judged):
    came, _ = judged
    return NOT_COMPARED if came is None else (CAME_BACK if came else NOT_BACK)


def _printed_digits(formats, old, new):
    """(verdict, rule, why): the rerun prints what the build printed, at
    each of the article's formats."""
    rule = "the article's printed digits (" + ", ".join(f or "as is" for f in formats) + ")"
    if same_value(old, new):
        return CAME_BACK, rule, "equal"
    for fmt in formats:
        try:
            before, after = format_value(old, fmt), format_value(new, fmt)
        except FormatError:
            return NOT_BACK, rule, f"not equal, and the rerun's value cannot be printed with fmt {fmt!r}"
        if before != after:
            return NOT_BACK, rule, f"printed {before} in the build, {after} now"
    shown = format_value(old, formats[0])
    return CAME_BACK, rule, f"equal at the printed precision ({formats[0] or 'as is'}: {shown})"
