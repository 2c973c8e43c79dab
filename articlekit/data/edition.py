"""What this build says of each entry of the published edition: one
verdict per baseline entry, the single judgement behind the audit
(articlekit.review.audit) and the article's departures section
(articlekit.article.departures), so the article and the audit cannot tell
a reader different things.

An entry's agreement class (articlekit.data.baseline) decides how far the
regenerated value may be from the printed one; its check must hold; and
when it moved unexpectedly, the baseline (a reason) or this build's
configuration may explain it.
"""

import re
from dataclasses import dataclass

from articlekit.core.claims import INCONCLUSIVE, ClaimError, check_holds, evaluate
from articlekit.core.equality import same_text, same_value
from articlekit.core.fmt import FormatError, format_printed
from articlekit.core.keys import lookup, measured
from articlekit.data.baseline import (CITED_CLASS, CLASSES, ERRATUM_CLASS, EXACT, INFO, NOISE, NOT_REPRODUCIBLE_CLASS,
                                      REVISED, TEXT, TIMING)
from articlekit.data.environment import installed_versions

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
