"""The agreement classes of a baseline entry (its `class:` in
baseline/published.yaml), one object each, and the one place each is judged.

A class says how far a regenerated value may be from the one the edition
printed. Each object answers every question asked of its entries:

- against the edition (articlekit.data.edition, for the audit and the
  article's departures section): `printed` (the value printed the way the
  edition printed it, and whether that is the printed value) and `moved`
  (what a value that did not come back means: expected, unexpected, an
  erratum...), `explains` (a cause of an unexpected move the class itself
  accounts for) and `fix` (what a new author does about one it does not);
- between two builds (articlekit.review.agreement, for the diff, the
  version matrix and `reproduce`): `between_builds` (the rule's label and
  test) and `came_back` (whether a rerun brought the value back), asked
  of every entry on the key (`rule_entries`), as the audit asks each;
- against itself (articlekit.data.baseline, the baseline's own check):
  `schema` (the fragment of baseline_schema.yaml its entries must meet)
  and `problems` (what a schema cannot see: a check that says something,
  the published value meeting it, the value printing as published);
- in words: `means`, one row of the table of what "reproduced" means for
  each class (docs/reliability.md and the audit page print it).

No other module compares an entry's class name: it asks `agreement(entry)`
(tests/test_agreement_classes.py holds the package to that), so a class
is changed here and the audit, the diff, the matrix and `reproduce` follow.

Also here, since the classes decide part of it: what kind of value an
entry is (`value_kind`: a measured value, a setting its experiment echoes,
a text, a discrete value, a version), which the audit counts apart so that
"reproduced" counts measured numbers only.
"""

import math
import re
from dataclasses import dataclass

from articlekit.core.claims import ClaimError, Interval, check_holds, refuse_vacuous
from articlekit.core.equality import is_number, same_text, same_value
from articlekit.core.errors import ArticlekitError
from articlekit.core.fmt import FormatError, format_printed
from articlekit.data.environment import in_record

# ---- the kinds of value the audit counts apart (value_kind, below) --------------------
MEASURED, SETTING, TEXT, DISCRETE, VERSION = "measured", "setting", "text", "discrete", "version"
# In the order the audit counts them, with the words it counts them in.
KINDS = {
    MEASURED: "measured values",
    SETTING: "settings echoed",
    TEXT: "texts",
    DISCRETE: "discrete values",
    VERSION: "versions and machine",
}
KIND_ONE = {
    MEASURED: "measured value",
    SETTING: "setting echoed",
    TEXT: "text",
    DISCRETE: "discrete value",
    VERSION: "version or machine fact",
}


def counted(n, kind):
    """'1 text', '14 settings echoed'."""
    return f"{n} {KIND_ONE[kind] if n == 1 else KINDS[kind]}"


# What each kind is, for the audit page's table.
KIND_NOTES = {
    MEASURED: "a number the experiment measured or computed: a non-zero finite float, or a list holding one; "
    "every `noise` and `timing` entry",
    SETTING: "a key under `<experiment>.params`: the configuration the experiment ran with, echoed",
    TEXT: "a string: an error message, a type's name",
    DISCRETE: "a count, a shape, a flag, an exact zero or nan: right or wrong, with no digits to lose",
    VERSION: "an `info` entry or a key of the environment record: versions, the OS, the date",
}
# `<experiment>.params.<name>`: the parameters an experiment ran with (its envelope's params).
PARAMETER = re.compile(r"^([A-Za-z_]\w*)\.params\.")

# ---- what the audit says of an entry, in the order a reviewer reads them --------------
ERRATUM = "erratum"
NOT_REPRODUCIBLE = "not reproducible"
UNEXPECTED = "moved unexpectedly"
MISSING = "key missing"
EXPECTED = "moved as expected"
REPRODUCED = "reproduced"
CITED = "cited"


@dataclass(frozen=True)
class AuditStatus:
    """One status as every report spells it: the one table (AUDIT_STATUS).

    word:     the status in words, as the audit page and its lines say it
    css:      the audit page's class for it (review/report.css)
    counted:  its count's name in build/audit.json's summary and by_kind
              (as audit.json has always spelled it), and in a release's notes
    many:     the word after a count other than one, where it is not `word`
    """

    word: str
    css: str
    counted: str
    many: str | None = None

    def after(self, n):
        """The status after a count: '1 erratum', '3 errata'."""
        return f"{n} {self.word if n == 1 or not self.many else self.many}"


AUDIT_STATUS = {
    s.word: s
    for s in (
        AuditStatus(ERRATUM, css="erratum", counted="erratum", many="errata"),
        AuditStatus(NOT_REPRODUCIBLE, css="not-reproducible", counted="not_reproducible"),
        AuditStatus(UNEXPECTED, css="unexpected", counted="moved_unexpectedly"),
        AuditStatus(MISSING, css="missing", counted="key_missing"),
        AuditStatus(EXPECTED, css="expected", counted="moved_as_expected"),
        AuditStatus(REPRODUCED, css="reproduced", counted="reproduced"),
        AuditStatus(CITED, css="cited", counted="cited"),
    )
}
STATUSES = tuple(AUDIT_STATUS)

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

# What a new author does about an unexplained move, by what moved.
_FIX = {
    FAILED_CHECK: (
        "the value fails the entry's check '{check}': fix what produced it, or correct the check "
        "if the edition's bound was wrong (class `erratum`, with a `reason:`, when the edition itself "
        "was wrong); a reason does not excuse a failed check"
    ),
    UNPRINTABLE: (
        "give the entry a `fmt:` that prints this value the way the edition printed it (articlekit/core/fmt.py)"
    ),
    TWO_THRESHOLDS: "make the thresholds one: change the article's expect= or the entry's `check:` so they agree",
    KEY_GONE: "{closest}make the entry's `key:` name the value that regenerates it, or restore the value",
}
_FIX_MOVED = (
    "if the move is right, say so in the baseline: add a `reason:` to the entry saying why, or change "
    "its class (`noise` with a `check:`, `not_reproducible` or `revised`); if it is not, fix what "
    "changed the value"
)


def _said(text):
    """A baseline text (reason, dropped) on one line."""
    return " ".join((text or "").split())


def _quoted_number(value):
    """A value YAML read as text that spells a number ("1e-7" in quotes)."""
    if not isinstance(value, str):
        return False
    try:
        float(value)
    except ValueError:
        return False
    return value.strip().lower() not in ("nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")


def _kept(entry):
    return f" Its check '{entry.check}' holds." if entry.check else ""


# The classes that say what the edition printed, not how two builds may differ.
_BY_ANOTHER = "by the key's entry of another class, else as a key the baseline does not list"


@dataclass(frozen=True)
class Means:
    """One row of the table of what "reproduced" means: for the audit
    (against the edition), between two builds (the diff and the matrix: what
    counts as a change) and for `reproduce` (a rerun against the build)."""

    audit: str
    diff: str
    rerun: str


class AgreementClass:
    """The class of a baseline entry; subclasses say what differs."""

    name = None
    means = None
    # the schema: what an entry of the class must carry, and what it may not
    requires = ("key", "value")
    requires_one_of = ()
    forbids = ()
    # fields no other class may carry (`band` is a timing's): the schema refuses them elsewhere
    owns = ()
    # says how far a value may move between two builds (an erratum says what the edition printed)
    rule = False
    # its published value must meet its own check (a bound on a measurement)
    checked = False
    # audited against the edition (a citation is listed, not audited)
    audited = True
    # its check is the corrected fact, a claim of the article wherever it is printed
    check_is_the_fact = False
    # the kind of its values, when the class decides it (value_kind decides the rest)
    kind = None

    # -- against the edition --

    def printed(self, entry, value):
        """(the value printed as the edition printed it, whether that is
        what it printed); FormatError when it cannot be printed so."""
        shown = format_printed(value, entry.fmt)
        return shown, (shown == entry.published if entry.fmt else same_value(value, entry.value))

    came_back_why = "the printed value came back"

    def moved(self, entry, value, shown, versions):
        """(status, why, cause) for a value that did not print as the
        edition printed it (and met its check); cause for an unexpected move."""
        raise NotImplementedError

    def explains(self, cause):
        """What in the class itself accounts for an unexpected move of this cause, or None."""
        return None

    def fix(self, cause, entry, closest=None):
        """What a new author does about an unexplained move of this cause;
        `closest`: for a missing key, the experiment's key it most likely means."""
        # an experiment renamed leaves its entries' keys behind: they follow it
        follow = (
            f"an entry's `key:` follows its experiment when that is renamed: write `key: {closest}` there; else "
            if closest
            else ""
        )
        return _FIX.get(cause, _FIX_MOVED).format(check=entry.check, closest=follow)

    # -- between two builds --

    def between_builds(self, entry, key):
        """(label, test) for `key`, test(old, new) -> (same, why); None when
        the class leaves the key to the rule of keys no entry governs."""
        return None

    def came_back(self, entry, key, old, new):
        """(came back: True, False or None when not compared, why) for a
        rerun's value against the build's; None: the rule of keys no entry
        governs decides."""
        return None

    # -- against itself --

    def schema(self):
        """This class's fragment of the baseline's schema (an `allOf` item)."""
        then = {"required": list(self.requires)}
        if self.requires_one_of:
            then["anyOf"] = [{"required": [name]} for name in self.requires_one_of]
        if self.forbids:
            then["not"] = {"required": list(self.forbids)}
        return {"if": {"properties": {"class": {"const": self.name}}}, "then": then}

    def problems(self, entry, edition):
        """What the schema cannot see in an entry of this class, the entry
        against itself (each message to follow 'file:line: entry ID: '): a
        check that says something (articlekit.core.claims.vacuous), met by
        the published value when the class bounds a measurement, and the
        value printing as the published text when the class is audited.
        Checked here, an entry whose value does not print as printed, or
        whose published number fails its own check, would make every later
        audit wrong without anyone noticing."""
        # A quoted number would otherwise "fail its own check": say why.
        if ((entry.check and self.checked) or (entry.fmt and self.audited)) and _quoted_number(entry.value):
            return [f"value {entry.value!r} is quoted, so it is text, not a number: write it without the quotes"]
        problems = []
        if entry.check:
            try:
                refuse_vacuous(entry.check, entry.key)  # parses it, and refuses a check no value could break
            except ClaimError as exc:
                problems.append(f"check: {exc}")
            else:
                if self.checked and not check_holds(entry.check, entry.value)[0]:
                    problems.append(
                        f"the published value {entry.value!r} fails its own check "
                        f"{entry.check!r}; fix the value or the bound"
                    )
        if entry.fmt and self.audited:
            try:
                printed = format_printed(entry.value, entry.fmt)
            except FormatError as exc:
                problems.append(f"value {entry.value!r} cannot be printed with fmt {entry.fmt!r}: {exc}")
            else:
                if printed != entry.published:
                    problems.append(
                        f"value {entry.value!r} prints as {printed!r} with fmt "
                        f"{entry.fmt!r}, not as the published {entry.published!r}"
                    )
        return problems


class Exact(AgreementClass):
    name = "exact"
    means = Means(
        audit="the edition's digits come back at its precision (`fmt`; without one, the value itself); "
        "anything else moved unexpectedly",
        diff="printing differently at the edition's precision (`fmt`); without one, any difference",
        rerun="the rerun prints the build's digits at the edition's precision (`fmt`)",
    )
    rule = True

    def moved(self, entry, value, shown, versions):
        return UNEXPECTED, f"an exact value: printed {entry.published}, regenerated {shown}", MOVED_VALUE

    def between_builds(self, entry, key):
        if entry.key != key:  # an entry on one item of a list judges that item, not the list
            return None
        if entry.fmt:
            return (
                f"exact at the printed precision ({entry.fmt})",
                lambda old, new: same_when_printed(entry.fmt, old, new),
            )
        return "exact: equal", equal

    def came_back(self, entry, key, old, new):
        rule = self.between_builds(entry, key)
        return None if rule is None else rule[1](old, new)


class Noise(AgreementClass):
    name = "noise"
    means = Means(
        audit="the printed digits come back; else, meeting its bound (`check`), it moved as expected",
        diff="either side breaking its bound",
        rerun="the rerun meets its bound (`check`)",
    )
    requires = ("key", "value", "check")
    rule = True
    checked = True
    kind = MEASURED

    def moved(self, entry, value, shown, versions):
        return EXPECTED, f"floating-point noise: both meet '{entry.check}'", None

    def between_builds(self, entry, key):
        return f"noise {entry.check}", lambda old, new: _within_noise(entry.check, old, new)

    def came_back(self, entry, key, old, new):
        if same_value(old, new):
            return True, "equal"
        if check_holds(entry.check, new)[0]:
            return True, f"meets its bound '{entry.check}'"
        return False, f"breaks its bound '{entry.check}'"


class Timing(AgreementClass):
    name = "timing"
    means = Means(
        audit="the printed digits come back (rare: machines differ); else, inside its `band` around the "
        "printed figure or meeting its `check`, it moved as expected",
        diff="leaving its `band` around the release's figure, or failing its `check`",
        rerun="as a measured value (below); without an interval, within its `band` of the build's figure",
    )
    requires_one_of = ("band", "check")
    owns = ("band",)
    rule = True
    checked = True
    kind = MEASURED

    def moved(self, entry, value, shown, versions):
        if entry.band:
            low, high = entry.band
            ratio = value / entry.value if isinstance(value, (int, float)) and entry.value else float("nan")
            if not low <= ratio <= high:
                return (
                    UNEXPECTED,
                    f"{ratio:.2f}x the published time, outside the band [{low:g}, {high:g}]",
                    OUT_OF_BAND,
                )
            return (
                EXPECTED,
                f"machines differ: {ratio:.2f}x the published time, inside the band [{low:g}, {high:g}]",
                None,
            )
        return (
            EXPECTED,
            f"machines differ; '{entry.check}' still holds (the printed {entry.published} is informational)",
            None,
        )

    def explains(self, cause):
        if cause == OUT_OF_BAND:
            return (
                "a timing: its class expects the time to move with the machine and its load; "
                "the article's claims about timings are checked with their intervals"
            )
        return None

    def between_builds(self, entry, key):
        if entry.band:
            return f"timing band {list(entry.band)}", lambda old, new: within_band(entry.band, old, new)
        return f"timing {entry.check}", lambda old, new: _still_holds(entry.check, old, new)

    def came_back(self, entry, key, old, new):
        # a measured value (an interval) is judged by its interval before any class is asked
        if same_value(old, new):
            return True, "equal"
        if entry.band:
            return within_band(entry.band, old, new)
        return False, (
            "a time with neither an interval (X.low, X.high) nor a band: nothing says how far "
            "a rerun may land, so only the same value comes back"
        )

    def problems(self, entry, edition):
        inverted = []
        if entry.band and not entry.band[0] < entry.band[1]:
            inverted = [f"band {list(entry.band)} must be [low, high] with low < high"]
        return inverted + super().problems(entry, edition)


class Text(AgreementClass):
    name = "text"
    means = Means(
        audit="the same text, line breaks and spacing aside; another version of its `library` explains a change",
        diff="any difference but line breaks and spacing",
        rerun="the same text, line breaks and spacing aside",
    )
    owns = ("library",)
    rule = True
    kind = TEXT

    def printed(self, entry, value):
        return str(value), isinstance(value, str) and same_text(value, entry.value)

    came_back_why = "same text"

    def moved(self, entry, value, shown, versions):
        library = entry.library
        then, now = versions.edition.get(library), versions.installed.get(library)
        if library and not same_release(then, now):
            return (
                EXPECTED,
                f"{library} {now or 'unknown'} here, {then} in the edition: messages change between versions",
                None,
            )
        return UNEXPECTED, f"the text changed with {library} still at the edition's {then}", MOVED_VALUE

    def between_builds(self, entry, key):
        return "text: equal", _same_text

    def came_back(self, entry, key, old, new):
        return _same_text(old, new)

    def problems(self, entry, edition):
        unknown = []
        if entry.library and entry.library not in edition["versions"]:
            unknown = [
                f"library {entry.library!r} has no version in edition.versions "
                f"({', '.join(edition['versions'])}); add the version the edition ran or name one of those"
            ]
        return unknown + super().problems(entry, edition)


class Info(AgreementClass):
    name = "info"
    means = Means(
        audit="never: reported, a difference moves as expected",
        diff="any difference (the diff lists the environment apart)",
        rerun="never: reported, not compared",
    )
    rule = True
    kind = VERSION

    def moved(self, entry, value, shown, versions):
        return EXPECTED, "reported, expected to differ between machines and builds", None

    def between_builds(self, entry, key):
        return "info: equal", equal

    def came_back(self, entry, key, old, new):
        return None, "reported, not compared: it differs between machines and builds"


class NotReproducible(AgreementClass):
    name = "not_reproducible"
    means = Means(
        audit="only if the printed digits happen to come back; else listed with its reason, "
        "its qualitative `check` must hold",
        diff=_BY_ANOTHER,
        rerun=_BY_ANOTHER,
    )
    requires = ("key", "value", "reason")

    def moved(self, entry, value, shown, versions):
        return NOT_REPRODUCIBLE, _said(entry.reason) + _kept(entry), None


class Erratum(AgreementClass):
    name = "erratum"
    means = Means(
        audit="only if the edition's (wrong) digits come back; else listed with its reason, "
        "its corrected fact (`check`) must hold",
        diff=_BY_ANOTHER,
        rerun=_BY_ANOTHER,
    )
    requires = ("key", "value", "reason", "check")
    check_is_the_fact = True

    def moved(self, entry, value, shown, versions):
        return ERRATUM, _said(entry.reason) + f" ('{entry.check}' holds.)", None


class Revised(AgreementClass):
    name = "revised"
    means = Means(
        audit="only if the printed digits come back; else it moved as expected, with its reason "
        "(and its `check`, if any, holds)",
        diff=_BY_ANOTHER,
        rerun=_BY_ANOTHER,
    )
    requires = ("key", "value", "reason")

    def moved(self, entry, value, shown, versions):
        return EXPECTED, "Revised: " + _said(entry.reason) + _kept(entry), None


class Cited(AgreementClass):
    name = "cited"
    means = Means(
        audit="never: listed, not audited (`dropped:` when the article no longer cites it)",
        diff="not a value of the build",
        rerun="nothing to rerun: `published.<id>` is the edition's own value",
    )
    requires = ("reason",)
    forbids = ("key",)
    audited = False


# One object per class, in the order the docs list them.
AGREEMENT = {
    c.name: c for c in (Exact(), Noise(), Timing(), Text(), Info(), NotReproducible(), Erratum(), Revised(), Cited())
}
CLASSES = tuple(AGREEMENT)


def agreement(entry):
    """The class object of a baseline entry."""
    try:
        return AGREEMENT[entry.cls]
    except KeyError:
        raise ArticlekitError(
            f"entry {entry.id!r}: unknown class {entry.cls!r}; the classes are {', '.join(CLASSES)}"
        ) from None


def schema_fragments():
    """The baseline schema's per-class rules (`allOf`): what each class's
    entries must carry, and that a field a class owns appears on no other."""
    fragments = [c.schema() for c in AGREEMENT.values()]
    for c in AGREEMENT.values():
        fragments += [
            {"if": {"required": [name]}, "then": {"properties": {"class": {"const": c.name}}}} for name in c.owns
        ]
    return fragments


def rule_entries(key, baseline):
    """The baseline entries whose classes say how far `key` may move
    between builds: those with a rule on the key itself, else those on an
    item of it, in the baseline's order. Every one of them: a key printed
    twice (.6f in a table, .2% in the prose) moved when either print did,
    as the audit judges each entry. An erratum, a cited or a not-reproducible
    entry says what the edition printed, not how two builds may differ
    (listed first, it must not hide a noise bound)."""
    entries = [e for e in (baseline.for_key(key) if baseline else []) if agreement(e).rule]
    return [e for e in entries if e.key == key] or entries


def rule_entry(key, baseline):
    """The first of rule_entries, or None (what kind of value the key is)."""
    return next(iter(rule_entries(key, baseline)), None)


# ---- versions, for a text's library --------------------------------------------------------


@dataclass(frozen=True)
class Versions:
    """The library versions the edition printed and this build's."""

    edition: dict
    installed: dict


def same_release(published, installed):
    """'2.14.1' vs '2.14.1+cpu': same; '3.13' vs '3.13.2': same (the edition
    gave only the minor version); '2.14.1' vs '2.13.0': different."""
    if not installed:
        return False
    base = str(installed).split("+", 1)[0]
    return base == published or base.startswith(published + ".")


# ---- the tests between two builds the classes share ---------------------------------------


def equal(old, new):
    same = same_value(old, new)
    return same, "equal" if same else "not equal"


def _same_text(old, new):
    if isinstance(old, str) and isinstance(new, str):
        same = same_text(old, new)
        return same, ("equal" if old == new else "the same text, spacing aside") if same else "not equal"
    return equal(old, new)


def same_when_printed(fmt, old, new):
    """(same, why) for an exact value: equal as the edition printed it (so
    -0.0 is not 0.0 when it prints "-0.0")."""
    try:
        a, b = format_printed(old, fmt), format_printed(new, fmt)
    except FormatError:
        return equal(old, new)
    if a == b:
        return True, "equal" if same_value(old, new) else f"equal at the printed precision ({fmt}: {a})"
    return False, f"printed {a} then, {b} now"


def _within_noise(check, old, new):
    if same_value(old, new):
        return True, "equal"
    held = check_holds(check, old)[0], check_holds(check, new)[0]
    if all(held):
        return True, f"both meet '{check}'"
    side = "this build" if held[0] else "the release"
    return False, f"{side} breaks '{check}'" if held[0] != held[1] else f"neither side meets '{check}'"


def within_band(band, old, new):
    """(same, why): every number of `new` within band[0] to band[1] times
    the same number of `old` (nested lists item by item)."""
    if same_value(old, new):
        return True, "equal"
    olds, news = leaves(old), leaves(new)
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


def leaves(value):
    """The items of a value, nested lists flattened; a scalar is one item."""
    if isinstance(value, list):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


# ---- a measured value: an estimate with its interval ----------------------------------------

MEASURED_MEANS = Means(
    audit="as its class says",
    diff="as its class says, else as a key the baseline does not list",
    rerun="the rerun's estimate lies inside the build's interval, or the two intervals overlap "
    "(a measured value: a key `X.estimate` with `X.low` and `X.high` beside it)",
)


def interval_came_back(old, new):
    """(came back, why) for a measured value rerun: its estimate inside the
    build's interval, or else the two intervals overlapping."""

    def span(v):
        return f"[{v.low:.4g}, {v.high:.4g}]"

    if old.low <= new.estimate <= old.high:
        return True, f"the rerun's {new.estimate:.4g} lies inside the build's interval {span(old)}"
    if new.low <= old.high and old.low <= new.high:
        return True, (
            f"the rerun's {new.estimate:.4g} lies outside the build's interval {span(old)}, "
            f"but its own interval {span(new)} overlaps it"
        )
    return False, (
        f"the rerun's {new.estimate:.4g} {span(new)} lies outside the build's interval {span(old)}, "
        "and the two intervals do not overlap"
    )


def is_interval(value):
    return isinstance(value, Interval)


# ---- what kind of value an entry is --------------------------------------------------------


def value_kind(key, value, entry=None):
    """The kind of a value: a version (its class is `info`, or the
    environment record holds it), a setting (a key under <experiment>.params:
    the configuration echoed), a text, a measured value (a number with digits
    to lose: a non-zero finite float, or a list holding one; a noise or a
    timing always) or a discrete one (a count, a shape, a flag, an exact zero,
    nan: nothing between right and wrong). For an entry, the value the
    edition printed decides (stable across builds), this build's when the
    edition's is only words."""
    cls = agreement(entry) if entry is not None else None
    if (cls and cls.kind == VERSION) or in_record(key or ""):
        return VERSION
    if PARAMETER.match(key or ""):
        return SETTING
    if cls and cls.kind:
        return cls.kind
    if entry is not None and entry.value is not None and not isinstance(entry.value, str):
        value = entry.value
    if isinstance(value, str):
        return TEXT
    if any(isinstance(v, float) and math.isfinite(v) and v != 0 for v in leaves(value)):
        return MEASURED
    return DISCRETE
