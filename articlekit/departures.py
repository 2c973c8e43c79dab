"""Where this build departs from the published edition, for the article's
own "Departures from the published edition" section ({{< departures >}}).

Made from the baseline and the values, never typed and never read back from
build/audit.* (the audit depends on the article's bindings, so the article
cannot depend on the audit): the same judgement (articlekit.agreement.against_edition)
decides, from the same data, which entries are listed.

Listed, one item per printed value (restatements fold into the entry they
restate):

- corrections: every `erratum` entry: what the edition said, the corrected
  fact this build measures, and why;
- changes: every `not_reproducible` and `revised` entry, and every `info` or
  `timing` entry that carries a `reason`, when its value did not come back.

Each item prints the regenerated value as a bound value (the article's
bind step registers it as a binding, so it gets its tooltip, its provenance
row and, for an erratum, its check as a claim of the article) and links to
its audit row, audit.html#<entry id>.
"""

from articlekit.agreement import (CITED_CLASS, ERRATUM, ERRATUM_CLASS, INFO, NOT_REPRODUCIBLE_CLASS, REPRODUCED,
                                  REVISED, TIMING, against_edition)
from articlekit.environment import installed_versions
from articlekit.fmt import FormatError, format_printed
from articlekit.shortcodes import Shortcode, lookup_id
from articlekit.values import lookup

CORRECTION, CHANGE = "correction", "change"


def departures(baseline, values_doc):
    """[{kind, entry, value, fmt, expect, reason}]: corrections, then
    changes, each in the baseline's order.
    An entry whose key is missing raises KeyError: the article must not
    silently leave a correction out."""
    values = values_doc["values"]
    installed = installed_versions(values_doc)
    listed = []
    for entry in baseline.entries:
        if entry.restates or entry.cls == CITED_CLASS or not entry.reason:
            continue
        if entry.cls not in (ERRATUM_CLASS, NOT_REPRODUCIBLE_CLASS, REVISED, INFO, TIMING):
            continue
        value = lookup(values, entry.key)
        status, _, _ = against_edition(entry, value, baseline.edition["versions"], installed)
        if status == REPRODUCED:
            continue
        listed.append({
            "kind": CORRECTION if status == ERRATUM else CHANGE,
            "entry": entry,
            "value": value,
            # errata print the measured fact; the rest print like the edition did
            "fmt": _printable_fmt(entry, value),
            "expect": entry.check if entry.cls == ERRATUM_CLASS else "",
            "reason": " ".join(entry.reason.split()),
        })
    # corrections first: what the edition got wrong matters most to a reader
    return sorted(listed, key=lambda d: d["kind"] != CORRECTION)


def _printable_fmt(entry, value):
    """The entry's own fmt when the article's formatter knows it ('shape' is
    the audit's), else the default print."""
    fmt = entry.fmt if entry.fmt and entry.fmt != "shape" else ""
    try:
        format_printed(value, fmt)
    except FormatError:
        return ""
    return fmt


# ---- the shortcode, for articlekit.bind -------------------------------------------

def departures_of(article, occurrences, values_doc, baseline, problems):
    """(departures, value shortcodes standing in for them): each departure's
    value goes through the same lookup, formatting and claim check as a
    {{< value >}} written at the line of {{< departures >}}."""
    places = [sc for sc in occurrences if sc.name == "departures" and not sc.escaped]
    if not places:
        return [], []
    if baseline is None:
        problems.append(f"{places[0].where(article)}: {{{{< departures >}}}} needs the baseline: "
                        "run bind with --baseline baseline/published.yaml")
        return [], []
    try:
        listed = departures(baseline, values_doc)
    except (KeyError, ValueError) as exc:
        problems.append(f"{places[0].where(article)}: departures: {baseline.path}: {exc}")
        return [], []
    at = places[0]
    codes = [Shortcode("value", [d["entry"].key], {"fmt": d["fmt"], "expect": d["expect"]},
                       f"{{{{< departures: {d['entry'].id} >}}}}", at.line, "departures", at.start, at.start)
             for d in listed]
    return listed, codes


def departures_section(listed, bindings):
    """Markdown: one item per departure, its value a bound value linking to
    its provenance row, its last word a link to its audit row."""
    from articlekit.bind import md_text  # bind imports this module

    if not listed:
        return "This build departs from the published edition nowhere.\n"
    titles = {"correction": "Correction", "change": "Change"}
    items = []
    for d in listed:
        entry = d["entry"]
        b = bindings[lookup_id(entry.key, d["fmt"], d["expect"])]
        title = b["title"].replace("\\", "\\\\").replace('"', '\\"')
        number = f'[{md_text(b["text"])}](#{b["anchor"]} "{title}"){{.bound-value}}'
        items.append(f"- **{titles[d['kind']]}** ({md_text(entry.where['section'])}): the edition printed "
                     f"“{md_text(entry.published)}”; this build: {number}. {md_text(d['reason'])} "
                     f'[audit row](audit.html#{entry.id} "{entry.id} in the audit")')
    return "\n".join(items) + "\n"
