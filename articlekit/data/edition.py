"""What this build says of each entry of the published edition: one
verdict per baseline entry, the single judgement behind the audit
(articlekit.review.audit) and the article's departures section
(articlekit.article.departures), so the article and the audit cannot tell
a reader different things.

An entry's agreement class (articlekit.data.classes, one object per class)
decides how far the regenerated value may be from the printed one and what
a move means; its check must hold; and when it moved unexpectedly, its
class, the baseline (a reason) or this build's configuration may explain it.
The statuses and causes a verdict carries are defined there too.
"""

import difflib
from dataclasses import dataclass, replace

from articlekit.core.claims import INCONCLUSIVE, ClaimError, check_holds, evaluate, simple_bound
from articlekit.core.fmt import FormatError
from articlekit.core.keys import UnknownKey, closest_keys, lookup, measured, split_key
from articlekit.data.classes import (
    CITED,
    EXPECTED,
    FAILED_CHECK,
    KEY_GONE,
    MISSING,
    MOVED_VALUE,
    PARAMETER,
    REPRODUCED,
    TWO_THRESHOLDS,
    UNEXPECTED,
    UNPRINTABLE,
    Versions,
    agreement,
)
from articlekit.data.environment import installed_versions
from articlekit.data.values import PUBLISHED

# ---- against the edition: the audit's question --------------------------------------


def against_edition(entry, value, edition_versions, installed, checked=None):
    """(status, regenerated text, why) for one baseline entry whose key exists.
    `checked`: the value as its check sees it, an Interval for a measured value."""
    return _judge(entry, value, edition_versions, installed, checked)[:3]


def _judge(entry, value, edition_versions, installed, checked):
    """against_edition, plus the cause of an unexpected move (None otherwise).
    What is the same for every class is decided here: a value that cannot be
    printed, a failed or undecidable check, the printed value come back; what
    a value that moved means is its class's (articlekit.data.classes)."""
    cls = agreement(entry)
    try:
        shown, same = cls.printed(entry, value)
    except FormatError as exc:
        return UNEXPECTED, repr(value), f"cannot print it the way the edition did: {exc}", UNPRINTABLE

    if entry.check:
        holds, message = check_holds(entry.check, value if checked is None else checked)
        if _inconclusive(entry.check, checked):
            return EXPECTED, shown, f"machines differ; {message}: the measurement cannot decide", None
        if not holds:
            return UNEXPECTED, shown, f"fails its check '{entry.check}' ({message})", FAILED_CHECK

    if same:
        return REPRODUCED, shown, cls.came_back_why, None
    status, why, cause = cls.moved(entry, value, shown, Versions(edition_versions, installed))
    return status, shown, why, cause


def threshold_conflicts(check, expects):
    """The article's claims (`expects`, on the entry's own key) that bound
    the value on the same side as the entry's check with another threshold:
    one number, two thresholds. A threshold is a claim that is a single
    bound (articlekit.core.claims.simple_bound: "> 0.1", "<= 1e-12"); a
    range the prose says the value lies in is another claim."""
    mine = simple_bound(check) if check else None
    if mine is None:
        return []
    out = []
    for expect in expects:
        theirs = simple_bound(expect)
        if theirs and theirs.side == mine.side and theirs.value != mine.value:
            out.append(expect)
    return sorted(set(out))


def _inconclusive(check, checked):
    """A measured value whose interval straddles the check's bound."""
    try:
        return checked is not None and evaluate(check, checked).status == INCONCLUSIVE
    except ClaimError:
        return False


# ---- one verdict per entry: what the audit and the article's departures both print --------


@dataclass(frozen=True)
class Verdict:
    """What this build says of one baseline entry. `shown`: the regenerated
    value printed the way the edition printed it (None without a value);
    `raw`: the value itself. For an unexpected move (or a missing key),
    `cause` says what moved and `explained` what accounts for it: the entry's
    reason, its class, or this build's configuration; None when nothing does.
    For a missing key, `closest`: the key of an experiment its `key:` most
    likely means (None when nothing is close)."""

    entry: object
    status: str
    why: str
    shown: str = None
    raw: object = None
    cause: str = None
    explained: str = None
    closest: str = None

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
        if not agreement(entry).audited:
            why = " ".join(entry.reason.split())
            if entry.dropped:
                why += " Not in this article: " + " ".join(entry.dropped.split())
            judged.append(Verdict(entry, CITED, why))
            continue
        try:
            value = lookup(values, entry.key)
        except UnknownKey:
            # Reported, never dropped: a renamed key must not hide a number.
            why, closest = missing_key(entry.key, values_doc)
            judged.append(Verdict(entry, MISSING, why, cause=KEY_GONE, closest=closest))
            continue
        except ValueError as exc:  # a malformed key, an index out of range
            judged.append(Verdict(entry, MISSING, str(exc), cause=KEY_GONE))
            continue
        status, shown, why, cause = _judge(
            entry, value, baseline.edition["versions"], installed, measured(values, entry.key)
        )
        conflicts = threshold_conflicts(entry.check, claims_on(entry.key))
        if conflicts:
            status, cause = UNEXPECTED, TWO_THRESHOLDS
            why = (
                f"one threshold in two places: the article claims {', '.join(map(repr, conflicts))}, "
                f"the baseline checks '{entry.check}' (line {entry.line}); make them one. " + why
            )
        judged.append(Verdict(entry, status, why, shown, value, cause))
    changed = configuration_changes(judged)
    return [_explain(v, changed) for v in judged]


def missing_key(key, values_doc):
    """(why, closest) for a baseline key that names no value of this build.
    Only the experiments' keys are candidates: the baseline's own copy of
    its numbers (published.<id>, from `values --baseline`) would bind the
    edition to itself. An experiment renamed (harmonic -> harmonics) leaves
    its entries' keys behind: the same key under the experiment that now
    makes it is the one meant."""
    values, sources = values_doc.get("values", {}), values_doc.get("sources", {})
    computed = {
        k: v
        for k, v in values.items()
        if (sources.get(k) or {}).get("experiment") != PUBLISHED and not k.startswith(PUBLISHED + ".")
    }
    made = sorted({(sources.get(k) or {}).get("experiment") or k.split(".")[0] for k in computed})
    base = split_key(key)[0]
    index = key[len(base) :]
    experiment, _, rest = base.partition(".")
    if experiment in made:
        near = closest_keys(computed, base)
        where = f"experiment {experiment!r} made no value {base!r}"
    else:
        renamed = [
            name
            for name in difflib.get_close_matches(experiment, made, n=len(made) or 1, cutoff=0)
            if f"{name}.{rest}" in computed
        ]
        near = [f"{name}.{rest}" for name in renamed] or closest_keys(computed, base)
        where = (
            f"no experiment {experiment!r} gave this build values (they come from {', '.join(made) or 'no experiment'})"
        )
    closest = near[0] + index if near else None
    said = f"; the closest key of an experiment is {closest}" if closest else "; no experiment's key is close"
    return f"unknown key {key!r}: {where}{said}", closest


def configuration_changes(judged):
    """{experiment: "n_keys 2000 → 1000, ..."} for each experiment this
    build ran with other parameters than the edition printed: an entry on
    one of its `params` keys whose value came back different. Everything that
    experiment computes then moves with its configuration, not its code."""
    changed = {}
    for v in judged:
        match = PARAMETER.match(v.entry.key or "")
        if match and v.status == UNEXPECTED and v.cause == MOVED_VALUE:
            name = v.entry.key[match.end() :]
            changed.setdefault(match.group(1), []).append(f"{name} {v.entry.published} → {v.shown}")
    return {experiment: ", ".join(dict.fromkeys(moves)) for experiment, moves in changed.items()}


def _explain(v, changed):
    """The verdict with what in the baseline (or the configuration) explains
    its unexpected move; see the causes above for what can."""
    if not v.unexpected:
        return v
    entry = v.entry
    # first the class itself (a timing's: a time outside its band), then the entry's reason, then the configuration
    explained = agreement(entry).explains(v.cause)
    if not explained and v.cause == MOVED_VALUE and entry.reason:
        explained = " ".join(entry.reason.split())
    elif not explained and v.cause == MOVED_VALUE and (entry.key or "").split(".")[0] in changed:
        experiment = entry.key.split(".")[0]
        explained = (
            f"this build runs {experiment} with other parameters than the edition "
            f"({changed[experiment]}): its values move with the configuration"
        )
    if not explained:
        return v
    return replace(v, explained=explained)
