"""Where this build departs from the published edition, for the article's
own "Departures from the published edition" section ({{< departures >}}).

Made from the baseline and the values, never typed and never read back from
build/audit.* (the audit depends on the article's bindings, so the article
cannot depend on the audit): the same judgement as the audit's
(articlekit.data.edition.verdicts, fed the same claims of the article) decides
each entry's status, so the article and the audit cannot disagree.

Listed, in this order:

- unexpected moves: every entry the audit says moved unexpectedly (or whose
  key is gone), restatements included; first those the baseline does not
  explain, marked visibly on the page, then the explained ones with what
  explains them (the entry's reason, its timing class, or this build's
  configuration; articlekit.data.edition says which explains what);
- corrections: every `erratum` entry: what the edition said, the corrected
  fact this build measures, and why;
- changes: every other entry that carries a `reason` and whose value did not
  come back (not reproducible, revised, a version, a timing ratio).
Restatements of a correction or a change fold into the entry they restate.

Each item prints the published value and the regenerated one as bound
values (the article's bind step registers them as bindings, so they get
their tooltip, their provenance row and, for an erratum, its check as a
claim of the article) and links to its audit row, audit.html#<entry id>.

A strict bind stops on an unexplained unexpected move, naming the entry's
line in the baseline, both values and the fix; with strict=false the
section marks it and bind prints the same message as a warning.
"""

from articlekit.data.classes import ERRATUM, EXPECTED, MISSING, NOT_REPRODUCIBLE, agreement
from articlekit.data.edition import verdicts
from articlekit.core.fmt import FormatError, format_printed
from articlekit.core.text import md_text
from articlekit.article.shortcodes import Shortcode, lookup_id, normalize_space

UNEXPECTED_MOVE, CORRECTION, CHANGE = "unexpected", "correction", "change"
_ORDER = {UNEXPECTED_MOVE: 0, CORRECTION: 1, CHANGE: 2}


def departures(baseline, values_doc, claims_on=lambda key: ()):
    """[{kind, entry, verdict, value, fmt, expect, reason, published}]:
    unexpected moves (unexplained first), corrections, then changes, each
    in the baseline's order. `claims_on(key)`: the thresholds the article's
    own text claims about key (see articlekit.data.edition.verdicts)."""
    values = values_doc["values"]
    listed = []
    for v in verdicts(baseline, values_doc, claims_on):
        entry = v.entry
        if v.unexpected:
            kind = UNEXPECTED_MOVE
        elif entry.restates or not entry.reason:
            continue
        elif v.status == ERRATUM:
            kind = CORRECTION
        elif v.status in (EXPECTED, NOT_REPRODUCIBLE):
            kind = CHANGE
        else:  # reproduced or cited: nothing departs
            continue
        has_value = v.status != MISSING
        listed.append(
            {
                "kind": kind,
                "entry": entry,
                "verdict": v,
                "value": v.raw,
                "has_value": has_value,
                # errata print the measured fact; the rest print like the edition did
                "fmt": _printable_fmt(entry, v.raw) if has_value else "",
                # an erratum's corrected fact is a claim of the article, even when it no longer holds
                "expect": entry.check if agreement(entry).check_is_the_fact and has_value else "",
                "reason": " ".join((entry.reason or "").split()),
                "published": _published_key(entry, values),
                "place": f"{baseline.path}:{entry.line}" if entry.line else baseline.path,
                "key_place": f"{baseline.path}:{entry.key_line or entry.line}" if entry.line else baseline.path,
            }
        )
    # unexplained moves first: they are what stops a strict build
    return sorted(listed, key=lambda d: (_ORDER[d["kind"]], bool(d["verdict"].explained)))


def _printable_fmt(entry, value):
    """The entry's own fmt when the article's formatter knows it ('shape' is
    the audit's), else the default print."""
    fmt = entry.fmt if entry.fmt and entry.fmt != "shape" else ""
    try:
        format_printed(value, fmt)
    except FormatError:
        return ""
    return fmt


def _published_key(entry, values):
    """'published.<id>' when values.json holds the edition's value (articlekit
    values --baseline) and it prints as the edition printed it, so the
    article binds it like any number; None: the section quotes the text."""
    key = f"published.{entry.id}"
    if key not in values:
        return None
    try:
        printed = format_printed(values[key], _printable_fmt(entry, values[key]))
    except FormatError:
        return None
    return key if printed == entry.published else None


def unexplained_message(d):
    """Why a strict build stops on an unexpected move: the entry's place in
    the baseline, the two values and the fix."""
    entry, v = d["entry"], d["verdict"]
    fix = agreement(entry).fix(v.cause, entry, v.closest)
    if not d["has_value"]:  # at its `key:` line, where it is fixed
        return (
            f"{d['key_place']}: entry {entry.id!r}: {v.why}. To fix: {fix}. "
            "`--config strict=false` publishes it marked on the page instead."
        )
    return (
        f"{d['place']}: entry {entry.id!r} ({entry.key}) moved unexpectedly: the edition printed "
        f"{entry.published}, this build {v.shown} ({v.why}). The baseline does not explain it: {fix}. "
        "`--config strict=false` publishes it marked on the page instead."
    )


def _verdict_record(d):
    v = d["verdict"]
    return {
        "id": d["entry"].id,
        "key": d["entry"].key,
        "line": d["entry"].line,
        "kind": d["kind"],
        "status": v.status,
        "explained": v.explained,
    }


# ---- the shortcode, for articlekit.article.bind -------------------------------------------


def article_claims(occurrences):
    """claims_on(key) for articlekit.data.edition.verdicts: each expect="..."
    the article's own text writes about a key."""
    # grouped once, in the text's order: a lookup per baseline entry, not a
    # pass over every shortcode (thousands, for each of a hundred entries)
    by_key = {}
    for sc in occurrences:
        if not sc.escaped and sc.name in ("value", "claim") and len(sc.args) == 1:
            expect = normalize_space(sc.kwargs.get("expect", ""))
            if expect:
                by_key.setdefault(normalize_space(sc.args[0]), []).append(expect)

    def claims_on(key):
        return list(by_key.get(key, ()))

    return claims_on


def departures_of(article, occurrences, values_doc, baseline, problems, strict=True):
    """(departures, value shortcodes standing in for them, warnings): each
    departure's values go through the same lookup, formatting and claim check
    as a {{< value >}} written at the line of {{< departures >}}. An
    unexplained unexpected move is a problem when strict, else a warning."""
    places = [sc for sc in occurrences if sc.name == "departures" and not sc.escaped]
    if not places:
        return [], [], []
    if baseline is None:
        problems.append(
            f"{places[0].where(article)}: {{{{< departures >}}}} needs the baseline: "
            "run bind with --baseline baseline/published.yaml"
        )
        return [], [], []
    try:
        listed = departures(baseline, values_doc, article_claims(occurrences))
    except (KeyError, ValueError) as exc:
        problems.append(f"{places[0].where(article)}: departures: {baseline.path}: {exc}")
        return [], [], []
    at = places[0]
    codes = []
    for d in listed:
        raw = f"{{{{< departures: {d['entry'].id} >}}}}"
        if d["has_value"]:
            codes.append(
                Shortcode(
                    "value",
                    [d["entry"].key],
                    {"fmt": d["fmt"], "expect": d["expect"]},
                    raw,
                    at.line,
                    "departures",
                    at.start,
                    at.start,
                )
            )
        if d["published"]:
            codes.append(
                Shortcode("value", [d["published"]], {"fmt": d["fmt"]}, raw, at.line, "departures", at.start, at.start)
            )
    messages = [unexplained_message(d) for d in listed if d["kind"] == UNEXPECTED_MOVE and not d["verdict"].explained]
    if strict:
        problems.extend(messages)
        messages = []
    return listed, codes, messages


def departures_record(listed):
    """What bindings.json keeps of the section: one record per listed entry,
    so the audit can check that the article printed its own verdicts."""
    return [_verdict_record(d) for d in listed]


def departures_section(listed, bindings):
    """Markdown: one item per departure, its values bound values linking to
    their provenance rows, its last word a link to its audit row."""

    if not listed:
        return "This build departs from the published edition nowhere.\n"
    items = []
    for d in listed:
        entry, v = d["entry"], d["verdict"]
        published = (
            "“" + (_bound(bindings, d["published"], d["fmt"], "") if d["published"] else md_text(entry.published)) + "”"
        )
        now = _bound(bindings, entry.key, d["fmt"], d["expect"]) if d["has_value"] else f"no value under `{entry.key}`"
        if d["kind"] == UNEXPECTED_MOVE:
            if v.explained:
                head = "**Moved unexpectedly, explained**"
                tail = f"{md_text(_sentence(v.why))} Explained: {md_text(_sentence(v.explained))}"
            else:
                head = "**Moved unexpectedly** [⚠ not explained by the baseline]{.claim-failed}"
                tail = f"{md_text(_sentence(v.why))} Nothing in the baseline explains it (`{d['place']}`)."
        else:
            head = "**Correction**" if d["kind"] == CORRECTION else "**Change**"
            tail = md_text(d["reason"])
        items.append(
            f"- {head} ({md_text(entry.where['section'])}): the edition printed {published}; "
            f"this build: {now}. {tail} "
            f'[audit row](audit.html#{entry.id} "{entry.id} in the audit")'
        )
    return "\n".join(items) + "\n"


def _sentence(text):
    """The audit's 'why' as a sentence of the article: capitalised, with its full stop."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _bound(bindings, key, fmt, expect):

    b = bindings[lookup_id(key, fmt, expect)]
    title = b["title"].replace("\\", "\\\\").replace('"', '\\"')
    return f'[{md_text(b["text"])}](#{b["anchor"]} "{title}"){{.bound-value}}'
