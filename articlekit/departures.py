"""Where this build departs from the published edition, for the article's
own "Departures from the published edition" section ({{< departures >}}).

Made from the baseline and the values, never typed and never read back from
build/audit.* (the audit depends on the article's bindings, so the article
cannot depend on the audit): the same judgement (articlekit.audit.judge)
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

from articlekit.audit import ERRATUM, REPRODUCED, installed_versions, judge
from articlekit.baseline import render
from articlekit.fmt import FormatError
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
        if entry.restates or entry.cls == "cited" or not entry.reason:
            continue
        if entry.cls not in ("erratum", "not_reproducible", "revised", "info", "timing"):
            continue
        value = lookup(values, entry.key)
        status, _, _ = judge(entry, value, baseline.edition["versions"], installed)
        if status == REPRODUCED:
            continue
        listed.append({
            "kind": CORRECTION if status == ERRATUM else CHANGE,
            "entry": entry,
            "value": value,
            # errata print the measured fact; the rest print like the edition did
            "fmt": _printable_fmt(entry, value),
            "expect": entry.check if entry.cls == "erratum" else "",
            "reason": " ".join(entry.reason.split()),
        })
    # corrections first: what the edition got wrong matters most to a reader
    return sorted(listed, key=lambda d: d["kind"] != CORRECTION)


def _printable_fmt(entry, value):
    """The entry's own fmt when the article's formatter knows it ('shape' is
    the audit's), else the default print."""
    fmt = entry.fmt if entry.fmt and entry.fmt != "shape" else ""
    try:
        render(value, fmt)
    except FormatError:
        return ""
    return fmt
