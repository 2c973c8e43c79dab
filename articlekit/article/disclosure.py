"""A claim the seed sweep flags is said to be weak where the article makes it.

The sweep (articlekit.article.robustness) flags a claim that holds at the
article's seed but fails for more than flag_share of the sweep's seeds, and
lists it under robustness.<key>.flagged_claims (by its expect=). Such a claim
is true of one draw and not of most others; the article may still make it,
as long as the same section says how often it holds, and how sure that
share is. So a flagged claim is disclosed when its section prints its
share of seeds and that share's interval:

    {{< value robustness.<key>.holds_fraction fmt=".0%" >}} of the seeds
    ({{< value robustness.<key>.holds_fraction_low fmt=".0%" >}} to
    {{< value robustness.<key>.holds_fraction_high fmt=".0%" >}})

<key> as robustness.<key> spells it (bindable_key: a list index as _N).
A claim's section is the part of the article under the nearest heading
above it (an ATX heading, `## ...`, outside code), down to the next heading
of the same or a higher level, its subsections included; before the first
heading, the article's opening. Each place the article makes the claim is
judged on its own: a disclosure three sections away does not count.

Bind calls undisclosed() on every build whose values hold the sweep's
results: a strict bind fails on each, naming the claim, its line and its
section, and the shortcodes to print; otherwise mark() gives the claim's
binding a mark that the page shows beside the number, as for a failed
claim, and bind warns.

The same holds of every rank and share of seeds the article prints: each
is an estimate from a finite sample of seeds, so its section prints its
interval beside it (without_interval, INTERVALS):

    {{< value robustness.<key>.percentile_at_seed fmt=".0%" >}} of the seeds
    ({{< value robustness.<key>.percentile_at_seed_low fmt=".0%" >}} to
    {{< value robustness.<key>.percentile_at_seed_high fmt=".0%" >}})

and the same with holds_fraction. A strict bind fails on one printed
without its interval; otherwise the number carries a notice (mark_bare).
"""

import re
from dataclasses import dataclass

from articlekit.article.robustness import bindable_key
from articlekit.article.shortcodes import kind_at, normalize_space, regions
from articlekit.core.status import FAILS, INCONCLUSIVE, STATUS

DISCLOSED_BY = ("holds_fraction", "holds_fraction_low", "holds_fraction_high")
# A printed estimate from the seeds -> the fields of its interval (robustness.py computes both).
INTERVALS = {
    "percentile_at_seed": ("percentile_at_seed_low", "percentile_at_seed_high"),
    "holds_fraction": ("holds_fraction_low", "holds_fraction_high"),
}
# What the page shows beside a rank or share printed without its interval (strict=false).
BARE = {"text": "⚠ an estimate from the seeds, its interval not printed", "class": STATUS[INCONCLUSIVE].page_class}
# What the page shows beside an undisclosed flagged claim (strict=false):
# in the failed claims' colour, since the prose says more than the seeds support.
MARK = {"text": "⚠ weak across seeds, not disclosed", "class": STATUS[FAILS].page_class}

_HEADING = re.compile(r"^(?P<level>#{1,6})[ \t]+(?P<title>.*?)[ \t#]*$", re.M)


@dataclass(frozen=True)
class Section:
    title: str  # the heading as written ("## Why divide"); "" for the opening
    line: int  # the heading's line; 1 for the opening
    start: int  # offsets into the article's text
    end: int

    def named(self):
        if not self.title:
            return "the article's opening (before its first heading)"
        return f"the section '{self.title}' (line {self.line})"


def sections(text):
    """The opening, then one Section per heading, in the order written; each
    heading's span runs to the next heading of the same or a higher level."""
    spans = regions(text)
    heads = [
        (m.start(), len(m.group("level")), m.group(0).strip(), text.count("\n", 0, m.start()) + 1)
        for m in _HEADING.finditer(text)
        if kind_at(spans, m.start()) == "prose"
    ]
    found = [Section("", 1, 0, heads[0][0] if heads else len(text))]
    for i, (start, level, title, line) in enumerate(heads):
        end = next((later for later, deeper, _, _ in heads[i + 1 :] if deeper <= level), len(text))
        found.append(Section(title, line, start, end))
    return found


def section_of(found, offset):
    """The section under the nearest heading above offset (the opening when none is)."""
    return [s for s in found if s.start <= offset][-1]


def _flagged(values, key, expect):
    listed = values.get(f"robustness.{bindable_key(key)}.flagged_claims")
    return isinstance(listed, list) and expect in {normalize_space(str(e)) for e in listed}


@dataclass(frozen=True)
class Undisclosed:
    shortcode: object  # the claim's articlekit.article.shortcodes.Shortcode
    message: str  # for the terminal: the claim, its line, its section, the shortcodes to add
    note: str  # for the page's tooltip: the same without shortcodes (which the page would show as text)


def undisclosed(article, text, occurrences, values):
    """[Undisclosed] for every place the article makes a claim the sweep
    flags without its section saying how often it holds. values: the flat
    values (build/values.json's); without the sweep's, nothing is flagged."""
    claims = [
        sc
        for sc in occurrences
        if sc.name in ("value", "claim")
        and not sc.escaped
        and sc.context in ("prose", "code")
        and len(sc.args) == 1
        and sc.kwargs.get("expect")
    ]
    flagged = [
        sc for sc in claims if _flagged(values, normalize_space(sc.args[0]), normalize_space(sc.kwargs["expect"]))
    ]
    if not flagged:
        return []
    found = sections(text)
    printed = [
        (sc.start, normalize_space(sc.args[0]))
        for sc in occurrences
        if sc.name == "value" and not sc.escaped and sc.context == "prose" and len(sc.args) == 1
    ]
    problems = []
    for sc in flagged:
        key, expect = normalize_space(sc.args[0]), normalize_space(sc.kwargs["expect"])
        section = section_of(found, sc.start)
        group = f"robustness.{bindable_key(key)}"
        here = {ref for at, ref in printed if section.start <= at < section.end}
        missing = [field for field in DISCLOSED_BY if f"{group}.{field}" not in here]
        if not missing:
            continue
        share = values.get(f"{group}.holds_fraction")
        fails = f"fails for {1 - share:.0%} of the sweep's seeds" if isinstance(share, float) else "often fails"
        said = (
            f"claim '{key} {expect}' holds at the article's seed but {fails} (flagged weak on "
            f"build/robustness.html), and {section.named()} does not say so"
        )
        shortcodes = ", ".join(f"{{{{< value {group}.{field} fmt=\".0%\" >}}}}" for field in DISCLOSED_BY)
        problems.append(
            Undisclosed(
                sc,
                f"{sc.where(article)}: {said}: print there how often it holds and that share's interval, "
                f"{shortcodes} (missing: {', '.join(f'.{field}' for field in missing)})",
                f"{said}: it should print {group}.holds_fraction and its interval",
            )
        )
    return problems


def mark(binding, undisclosed_claim):
    """Give an undisclosed flagged claim's binding the page's mark, and its note as the tooltip."""
    binding["claim"]["mark"] = dict(MARK)
    binding["claim"]["message"] = undisclosed_claim.note


def warnings(bindings):
    """What bind warns of: the note of every binding mark() marked."""
    return [b["claim"]["message"] for b in bindings.values() if b["claim"] and b["claim"].get("mark") == MARK]


@dataclass(frozen=True)
class Bare:
    shortcode: object  # the printed rank or share
    message: str  # for the terminal: its line, its section, the shortcodes to add
    note: str  # for the page's tooltip


def without_interval(article, text, occurrences, values):
    """[Bare] for every place the prose prints a rank or a share of seeds
    (a field of INTERVALS under robustness.<key>) whose section does not
    print that estimate's interval too. Only where the values hold the
    interval: a key of another shape is bind's to name."""
    printed = [
        (sc, normalize_space(sc.args[0]))
        for sc in occurrences
        if sc.name == "value" and not sc.escaped and sc.context == "prose" and len(sc.args) == 1
    ]
    estimates = []
    for sc, key in printed:
        group, _, field = key.rpartition(".")
        if key.startswith("robustness.") and field in INTERVALS and f"{group}.{INTERVALS[field][0]}" in values:
            estimates.append((sc, group, field))
    if not estimates:
        return []
    found = sections(text)
    problems = []
    for sc, group, field in estimates:
        section = section_of(found, sc.start)
        here = {key for other, key in printed if section.start <= other.start < section.end}
        missing = [f for f in INTERVALS[field] if f"{group}.{f}" not in here]
        if not missing:
            continue
        what = "the article's seed's percentile among" if field == "percentile_at_seed" else "a share of"
        said = (
            f"{group}.{field} is {what} the sweep's seeds, an estimate from a sample of them, and "
            f"{section.named()} prints it without its interval"
        )
        fmt = sc.kwargs.get("fmt", ".0%")
        shortcodes = ", ".join(f'{{{{< value {group}.{f} fmt="{fmt}" >}}}}' for f in INTERVALS[field])
        problems.append(
            Bare(
                sc,
                f"{sc.where(article)}: {said}: print there its "
                f"{values.get('robustness.params.confidence', 0.95):.0%} interval, {shortcodes} "
                f"(missing: {', '.join(f'.{f}' for f in missing)})",
                f"{said}: it should print {group}.{INTERVALS[field][0]} and {group}.{INTERVALS[field][1]}",
            )
        )
    return problems


def mark_bare(binding, bare):
    """Give a rank or share printed without its interval the page's notice beside its number."""
    binding["notice"] = {**BARE, "message": bare.note}
