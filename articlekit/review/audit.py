"""Published edition vs this build: for every value the edition printed, did
this build regenerate it, and if it moved, was that expected?

    python -m articlekit audit --baseline baseline/published.yaml \\
        --values build/values.json --bindings build/bindings.json \\
        --json build/audit.json --md build/audit.md --html build/audit.html

Statuses, decided by the entry's agreement class (one object each,
articlekit/data/classes.py), judged by articlekit.data.edition, in the
order a reviewer reads them:

    erratum             the edition was wrong; its corrected fact (check) holds
    not reproducible    the edition never gave the inputs; its check holds
    moved unexpectedly  different beyond its class, or it fails its check
    key missing         no value under that key any more; counts as unexpected
    moved as expected   different, within what its class allows: noise still
                        under its bound, a timing inside its band, a version,
                        an error text after that library changed version, a
                        deliberate revision with its reason
    reproduced          the printed digits (or text) came back
    cited               from the paper or the docs: listed, not audited

Each status comes from articlekit.data.edition.verdicts, the one judgement
the article's departures section ({{< departures >}}, made by bind) prints
too. An unexpected move is explained when the baseline accounts for it (a
`reason:` on an entry whose value came back different, a timing outside its
band, which its class leaves to the machine) or this build runs the
experiment with other parameters than the edition printed; otherwise it is
unexplained, and the strict build stops on it at bind, naming the entry's
line in the baseline. The audit itself never fails on a move: it says what
moved, and prints a one-line summary to stderr, with every unexpected move
and missing key on its own line, explained or not (Snakemake shows stderr
in the terminal; --log keeps a copy).

Counted by kind: "reproduced" in the summary counts measured values only.
Each entry's value has a kind (articlekit.data.classes.value_kind: a
measured value, a setting echoed from <experiment>.params, a text, a
discrete value, a version); what came back of another kind than a measured
one is counted apart (summary.as_printed, and every kind's statuses under
summary.by_kind), and the summary line says so. The pages end with the
table of what "reproduced" means for each class (REPRODUCED_MEANS in
articlekit.review.agreement, the table docs/reliability.md holds too).

One threshold per claim: when the article claims something about a key with
the same comparison as the entry's check ("> 0.1" in the prose, "> 0.01" in
the baseline), the two must agree, or the entry moves unexpectedly.
"""

import argparse
import logging

from articlekit.data.classes import (
    AUDIT_STATUS,
    CITED,
    ERRATUM,
    EXPECTED,
    KIND_NOTES,
    KIND_ONE,
    KINDS,
    MEASURED,
    MISSING,
    NOT_REPRODUCIBLE,
    REPRODUCED,
    STATUSES,
    UNEXPECTED,
    VERSION,
    agreement,
    counted,
    value_kind,
)
from articlekit.data.edition import verdicts
from articlekit.data.baseline import load_baseline
from articlekit.core.status import FAILS, HOLDS, INCONCLUSIVE, STATUS, of, status_of
from articlekit.article.bindings import load_bindings
from articlekit.data.environment import installed_versions
from articlekit.core.jsonio import read_json, write_text_atomic
from articlekit.review.agreement import REPRODUCED_MEANS
from articlekit.review.pages import cell, code, counts_table, html_page, table, write_report
from articlekit.core.text import shorten
from articlekit.data.publishing import Publishing
from articlekit.data.publishing import add_argument as add_publishing_argument
from articlekit.core.keys import split_key
from articlekit.core.commands import reproduce_command
from articlekit.core.errors import ArticlekitError
from articlekit.core.log import log
from articlekit.review import edition_environment

# A value of another kind than a measured one whose printed form came back
# (a setting echoed, a text, a count): counted apart from "reproduced".
AS_PRINTED = "as printed, not measured"


def counted_as(status):
    """A status's count's name in build/audit.json's summary (AUDIT_STATUS)."""
    return AUDIT_STATUS[status].counted


def count_of(summary, status):
    """How many entries an audit summary counts under a status."""
    return summary[counted_as(status)]


# ---- bindings: what the article prints and claims about a key ------------------------


def keys_related(a, b):
    """The same key, or a whole list and one of its items."""
    if a == b:
        return True
    base_a, path_a = split_key(a)
    base_b, path_b = split_key(b)
    return base_a == base_b and (not path_a or not path_b)


def bound_values(bindings_doc):
    """Every shortcode of the article once, with its claim (or None)."""
    rows = []
    for binding_id, b in bindings_doc.get("bindings", {}).items():
        claim = b.get("claim") or {}
        rows.append(
            {
                "binding": binding_id,
                "key": b.get("key", binding_id.split("|", 1)[0]),
                "text": b.get("text"),
                "expect": claim.get("expect") or b.get("expect") or None,
                "holds": claim.get("holds"),
                "status": claim.get("status"),
                "message": claim.get("message"),
                "locations": b.get("locations", []),
                "source": b.get("source") or {},
                "anchor": b.get("anchor"),
                "in_prose": b.get("in_prose", False),
                # false only for a value the departures section alone binds (older bindings files lack the field)
                "in_text": b.get("in_text", True),
            }
        )
    return rows


def article_claims(bound):
    """claims_on(key) for articlekit.data.edition.verdicts: the thresholds the
    article's own text claims about a key (not the checks its departures
    section repeats from the baseline)."""

    def claims_on(key):
        return [b["expect"] for b in bound if b["key"] == key and b["expect"] and b["in_text"]]

    return claims_on


def article_link(claims, key):
    """Where the article prints the key: its first prose occurrence
    (#at-v-...), else its row in the provenance table (#v-...)."""
    exact = [c for c in claims if c["key"] == key and c["anchor"]] or [c for c in claims if c["anchor"]]
    if not exact:
        return None
    prose = [c for c in exact if c["in_prose"]]
    return f"article.html#at-{prose[0]['anchor']}" if prose else f"article.html#{exact[0]['anchor']}"


# ---- the report ------------------------------------------------------------------


def audit(baseline, values_doc, bindings_doc):
    """The audit as plain data (what build/audit.json holds)."""
    sources = values_doc.get("sources", {})
    bound = bound_values(bindings_doc)
    rows = []
    for v in verdicts(baseline, values_doc, article_claims(bound)):
        entry = v.entry
        row = {
            "id": entry.id,
            "key": entry.key,
            "class": entry.cls,
            "kind": None,
            "published": entry.published,
            "where": entry.where,
            "line": entry.line,
            "restates": entry.restates,
            "regenerated": v.shown,
            "raw": v.raw,
            "status": v.status,
            "why": v.why,
            "explained": v.explained if v.unexpected else None,
            "claims": [],
            "source": None,
            "article": None,
            "check": entry.check,
        }
        if not agreement(entry).audited:
            row["dropped"] = entry.dropped
        else:
            row["kind"] = value_kind(entry.key, v.raw, entry)
            row["claims"] = [b for b in bound if keys_related(b["key"], entry.key)]
            row["source"] = sources.get(split_key(entry.key)[0])
            row["article"] = article_link(row["claims"], entry.key)
        rows.append(row)

    # an entry's key, or the edition's own value of it (published.<id>, which the departures section binds)
    audited_keys = [e.key for e in baseline.entries if e.key] + [f"published.{e.id}" for e in baseline.entries]
    others = [b for b in bound if not any(keys_related(b["key"], k) for k in audited_keys)]
    # one per place the article makes a claim (bind's log), not one per binding
    claims = bindings_doc.get("claims", [])
    failed = [c for c in claims if not c.get("holds")]  # failed or inconclusive, each with its status
    counts = {status: sum(1 for r in rows if r["status"] == status) for status in STATUSES}
    summary = {
        "entries": len(rows),
        counted_as(ERRATUM): counts[ERRATUM],
        counted_as(NOT_REPRODUCIBLE): counts[NOT_REPRODUCIBLE],
        # a missing key counts as unexpected: something the edition printed is gone
        counted_as(UNEXPECTED): counts[UNEXPECTED] + counts[MISSING],
        counted_as(MISSING): counts[MISSING],
        # of those, the ones the baseline (or this build's configuration) does not explain: a strict build fails on them
        "unexplained": sum(1 for r in rows if r["status"] in (UNEXPECTED, MISSING) and not r["explained"]),
        counted_as(EXPECTED): counts[EXPECTED],
        # measured values only: what came back of any other kind (a setting echoed, a text, a count) is "as_printed"
        counted_as(REPRODUCED): sum(1 for r in rows if r["status"] == REPRODUCED and r["kind"] == MEASURED),
        "as_printed": sum(1 for r in rows if r["status"] == REPRODUCED and r["kind"] != MEASURED),
        counted_as(CITED): counts[CITED],
        "claims_checked": len(claims),
        # failed only: an inconclusive claim is not a failed one (inconclusive_claims counts those)
        "claims_failed": sum(1 for c in failed if status_of(c) == FAILS),
        "by_kind": by_kind(rows),
    }
    return {
        "baseline": baseline.path,
        "edition": baseline.edition,
        "disagreements": disagreements(rows, bindings_doc),
        "installed": installed_versions(values_doc),
        "summary": summary,
        "entries": rows,
        "other_bindings": others,
        "failed_claims": failed,
    }


def by_kind(rows):
    """{kind: {entries, keys, reproduced, moved_as_expected, ...}}: the
    audited entries counted by the kind of their value (articlekit.data.classes:
    measured values, settings echoed, texts, discrete values, versions), each
    status apart; `reproduced_keys` counts the distinct keys of those that came back."""
    out = {}
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        # a cited entry is the edition's words, not a value of any kind
        by_status = {counted_as(s): sum(1 for r in mine if r["status"] == s) for s in STATUSES if s != CITED}
        by_status[counted_as(UNEXPECTED)] += by_status[counted_as(MISSING)]  # as in the summary: a missing key moved
        back = {r["key"] for r in mine if r["status"] == REPRODUCED}
        out[kind] = {"entries": len(mine), "reproduced_keys": len(back), **by_status}
    return out


def disagreements(rows, bindings_doc):
    """Entries the article's departures section (bindings.json) printed with
    another verdict than this audit's: they share one judgement, so this
    only happens when bind and the audit read different inputs."""
    by_id = {r["id"]: r for r in rows}
    out = []
    for d in bindings_doc.get("departures", []):
        row = by_id.get(d["id"])
        if row is None or (row["status"], row["explained"]) != (d["status"], d["explained"]):
            now = f"{row['status']!r}" if row else "no such entry"
            out.append(f"{d['id']}: the article printed {d['status']!r}, the audit finds {now}")
    return out


def _missing_note(summary):
    """' (2 key missing), 1 of them unexplained' after the unexpected count,
    which includes both."""
    missing = count_of(summary, MISSING)
    note = f" ({missing} {MISSING})" if missing else ""
    if count_of(summary, UNEXPECTED):
        note += f", {summary.get('unexplained', 0)} of them unexplained"
    return note


def _kinds_note(s):
    """'16 keys; counted apart, as printed: 14 settings echoed, 7 texts': what
    "reproduced" counts, and what came back of the other kinds."""
    kinds = s.get("by_kind", {})
    back = counted_as(REPRODUCED)
    apart = [counted(kinds[k][back], k) for k in KINDS if k != MEASURED and kinds.get(k, {}).get(back)]
    keys = kinds.get(MEASURED, {}).get("reproduced_keys")
    note = f"{keys} {'key' if keys == 1 else 'keys'}" if keys else ""
    if apart:
        note += ("; " if note else "") + "counted apart, as printed: " + ", ".join(apart)
    return f" ({note})" if note else ""


def _versions_note(s):
    versions = s.get("by_kind", {}).get(VERSION, {}).get(counted_as(EXPECTED), 0)
    return f" (of them {counted(versions, VERSION)})" if versions else ""


def summary_line(report):
    s = report["summary"]
    return (
        f"audit: {count_of(s, REPRODUCED)} measured values {REPRODUCED}{_kinds_note(s)}, "
        f"{count_of(s, EXPECTED)} {EXPECTED}{_versions_note(s)}, "
        f"{AUDIT_STATUS[ERRATUM].after(count_of(s, ERRATUM))}, "
        f"{count_of(s, NOT_REPRODUCIBLE)} {NOT_REPRODUCIBLE}, "
        f"{count_of(s, UNEXPECTED)} {UNEXPECTED}{_missing_note(s)}, "
        f"{s['claims_failed']} of {s['claims_checked']} claims {STATUS[FAILS].counted}"
        + (f", {n} {STATUS[INCONCLUSIVE].counted}" if (n := inconclusive_claims(report)) else "")
    )


def card_counts(report):
    """(label, count, css) per status, in reading order, what came back as
    printed of other kinds than measured values beside "reproduced"."""
    s = report["summary"]
    n = {status: count_of(s, status) for status in STATUSES}
    n[UNEXPECTED] -= n[MISSING]  # the summary counts a missing key as moved too
    cards = []
    for status in STATUSES:
        cards.append((status, n[status], AUDIT_STATUS[status].css))
        if status == REPRODUCED:
            cards.append((AS_PRINTED, s["as_printed"], AUDIT_STATUS[REPRODUCED].css))
    return cards


def kind_rows(report):
    """The audited entries by kind of value: (kind's label, what it is,
    {column: count}) per kind, columns as KIND_COLUMNS."""
    kinds = report["summary"]["by_kind"]
    return [(KINDS[k], KIND_NOTES[k], kinds[k]) for k in KINDS if kinds[k]["entries"]]


# The by-kind table's columns: (heading, count in summary.by_kind)
KIND_COLUMNS = [
    ("entries", "entries"),
    ("came back as printed", counted_as(REPRODUCED)),
    *((status, counted_as(status)) for status in (EXPECTED, ERRATUM, NOT_REPRODUCIBLE, UNEXPECTED)),
]


def inconclusive_claims(report):
    """How many of the article's claims its measurements cannot decide."""
    return sum(1 for c in report["failed_claims"] if status_of(c) == INCONCLUSIVE)


def claim_counts(report):
    """(label, count, css) of the claims that fail, and of those that are
    inconclusive when there are any: never counted as failed."""
    s, undecided = report["summary"], inconclusive_claims(report)
    failed = ("claims " + STATUS[FAILS].counted, s["claims_failed"], STATUS[FAILS if s["claims_failed"] else HOLDS].css)
    return [failed] + (
        [("claims " + STATUS[INCONCLUSIVE].counted, undecided, STATUS[INCONCLUSIVE].css)] if undecided else []
    )


def _failed_heading(report):
    """The section listing the claims that do not hold."""
    return "Claims that fail" + (" or are " + STATUS[INCONCLUSIVE].word if inconclusive_claims(report) else "")


def groups(report):
    """The audited rows a reviewer reads: one per key and status, in reading
    order; every entry of the group keeps its own id (and anchor), so a value
    the edition printed three times is one row, not three."""
    out = {}
    for r in report["entries"]:
        if r["status"] == CITED:
            continue
        out.setdefault((r["status"], r["key"]), []).append(r)
    return sorted(out.values(), key=lambda rows: STATUSES.index(rows[0]["status"]))


# ---- pages: Markdown for diffs and reviews, HTML for reading --------------------------


def _explained_text(row):
    """For an unexpected move: what explains it, or that nothing does."""
    if row["status"] not in (UNEXPECTED, MISSING):
        return ""
    return (
        f"Explained: {row['explained']}"
        if row.get("explained")
        else "Unexplained: the baseline gives no reason, so a strict build stops on it."
    )


def _claims_text(claims):
    """Each claim the article makes about the key, its status shown as
    articlekit.core.status shows it in a cell, then the claim; '' when none."""
    return "; ".join(f"{of(c).shown} {c['expect']}" for c in claims if of(c))  # of(): None when no claim made


def _source_text(source):
    return (source or {}).get("script") or ""


def _versions_line(report, publishing, text):
    """'the edition of DATE (Python 3.11, NumPy 2.4.6). This build: ...', `text` escaping each part."""
    edition = report["edition"]
    return (
        f"the edition of {text(edition['date'])} ({text(publishing.versions_text(edition['versions']))}). "
        f"This build: {text(publishing.versions_text(report['installed']))}."
    )


def to_markdown(report, publishing=Publishing()):
    s = report["summary"]
    counts = [(label, n) for label, n, _ in card_counts(report)]
    lines = [
        "# Audit: the published edition vs this build",
        "",
        f"Baseline `{report['baseline']}`: {_versions_line(report, publishing, cell)}",
        "",
        *counts_table(counts + [(label, f"{n} of {s['claims_checked']}") for label, n, _ in claim_counts(report)]),
        "",
        f"{s['entries']} printed values in the baseline, {s['cited']} of them cited rather than measured.",
        "",
        "## What came back, by kind of value",
        "",
        cell(_kinds_intro(s)),
        "",
        *table(
            ["kind", "what it is", *(head for head, _ in KIND_COLUMNS)],
            [
                [cell(label), _md_runs(note), *(str(n[name]) for _, name in KIND_COLUMNS)]
                for label, note, n in kind_rows(report)
            ],
        ),
        "",
    ]
    unexpected = [r for r in report["entries"] if r["status"] in (UNEXPECTED, MISSING)]
    if unexpected:
        lines += ["## Moved unexpectedly", ""]
        lines += [
            f"- **{cell(r['id'])}** ({code(r['key'])}): {cell(r['why'])} {cell(_explained_text(r))}" for r in unexpected
        ]
        lines.append("")
    if report["failed_claims"]:
        lines += [f"## {_failed_heading(report)}", ""]
        lines += [
            f"- {cell(c.get('location', '?'))}: {code(c.get('key'))} expect {code(c.get('expect'))} "
            f"{of(c).shown}: {cell(c.get('message'))}"
            for c in report["failed_claims"]
        ]
        lines.append("")
    lines += ["## Every printed value, by status", ""]
    lines += table(
        [
            "status",
            "id",
            "key",
            "published",
            "regenerated",
            "class",
            "kind",
            "why",
            "claims in the article",
            "script",
            "recompute",
        ],
        [
            [
                r["status"],
                cell(r["id"]),
                code(r["key"]),
                code(r["published"]),
                code(r["regenerated"]),
                r["class"],
                cell(KIND_ONE.get(r["kind"], r["kind"])),
                cell(" ".join(filter(None, [r["why"], _explained_text(r)]))),
                cell(_claims_text(r["claims"])),
                cell(_source_text(r["source"])),
                code(reproduce_command(r["key"])),
            ]
            for group in groups(report)
            for r in group
        ],
    )
    if report.get("edition_environment"):
        lines += [""] + edition_environment.to_markdown(report["edition_environment"])[:-1]
    lines += ["", "## Other values bound in the article", ""]
    if report["other_bindings"]:
        lines += table(
            ["key", "printed", "claim", "where", "script", "recompute"],
            [
                [
                    code(b["key"]),
                    code(shorten(b["text"])),
                    cell(_claims_text([b])) or "(none)",
                    cell(", ".join(b["locations"])),
                    cell(_source_text(b["source"])),
                    code(reproduce_command(b["key"])),
                ]
                for b in report["other_bindings"]
            ],
        )
    else:
        lines.append("None: every bound value is in the baseline.")
    cited = [r for r in report["entries"] if r["status"] == CITED]
    if cited:
        lines += ["", "## Cited, not audited", ""]
        lines += [f"- **{cell(r['id'])}** {code(r['published'])}: {cell(r['why'])}" for r in cited]
    lines += ["", f"## {MEANS_HEADING}", "", MEANS_INTRO, "", *means_table()]
    return "\n".join(lines) + "\n"


# ---- what "reproduced" means: one table, the docs' and this page's -----------------------

MEANS_HEADING = "What “reproduced” means, class by class"
MEANS_INTRO = (
    "Each agreement class (`articlekit/data/classes.py`) says when a value counts as the same: against "
    "the edition (this audit), between two builds (the diff and the version matrix count it changed "
    "otherwise) and for a rerun of its experiment (`python -m articlekit reproduce KEY`)."
)
MEANS_HEAD = [
    "class",
    "the audit says “reproduced” when",
    "the diff and the matrix count it changed when",
    "`reproduce` says “reproduced” when",
]


def means_table():
    """The table of what "reproduced" means, as Markdown lines
    (articlekit.review.agreement.REPRODUCED_MEANS; docs/reliability.md holds a copy, tests/test_agreement_classes.py
    keeps it one)."""
    return table(
        [_md_runs(h) for h in MEANS_HEAD],
        [[_md_runs(name), _md_runs(m.audit), _md_runs(m.diff), _md_runs(m.rerun)] for name, m in REPRODUCED_MEANS],
    )


def _md_runs(text):
    """A cell for Markdown whose `code spans` stay code: plain text escaped, code as code."""

    def plain(piece):  # cell() folds the spaces at its ends away; the words beside a code span need them
        return (" " if piece[:1].isspace() else "") + cell(piece) + (" " if piece[-1:].isspace() else "")

    return "".join(code(piece) if i % 2 else plain(piece) for i, piece in enumerate(text.split("`"))).strip()


def _kinds_intro(s):
    measured = s["by_kind"][MEASURED]
    return (
        f"Only a measured value that came back counts as reproduced: {s['reproduced']} entries, "
        f"{measured['reproduced_keys']} keys. A setting echoed, a text, a discrete value or a version "
        f"that came back as printed is counted apart ({s['as_printed']})."
    )


def _claim_marks(claims):
    """Each claim the article makes about the key, as the page marks it
    (articlekit.core.status): {text: MARK + " " + expect, css, where}; none for a
    value printed without one."""
    return [
        {"text": f"{of(c).shown} {c['expect']}", "css": of(c).css, "where": ", ".join(c["locations"])}
        for c in claims
        if of(c)
    ]


def _group_data(group):
    """One row of the page: every entry of a key and status together."""
    first = group[0]
    return {
        "key": first["key"],
        "class": first["class"],
        "kind": KIND_ONE.get(first["kind"], first["kind"]),
        "script": _source_text(first["source"]) if first["source"] else None,
        "reproduce": reproduce_command(first["key"]),
        "entries": [
            {
                "id": r["id"],
                "published": r["published"],
                "regenerated": None if r["regenerated"] is None else shorten(r["regenerated"], 160),
                "section": r["where"]["section"],
                "quote": r["where"]["quote"],
            }
            for r in group
        ],
        "whys": list(dict.fromkeys(" ".join(filter(None, [r["why"], _explained_text(r)])) for r in group)),
        "marks": _claim_marks(first["claims"]),
        "article": first["article"],
    }


def page_data(report, publishing=Publishing()):
    """What build/audit.html shows, as plain values (templates/audit.html lays it out)."""
    s = report["summary"]
    cards = [{"label": label, "count": n, "css": css} for label, n, css in card_counts(report)]
    all_groups = groups(report)
    return {
        "baseline": report["baseline"],
        "versions": _versions_line(report, publishing, str),
        "summary": s,
        "cards": cards,
        "claim_cards": [{"label": label, "count": n, "css": css} for label, n, css in claim_counts(report)],
        "failed_heading": _failed_heading(report),
        "failed_claims": [
            {
                "location": c.get("location"),
                "key": c.get("key"),
                "expect": c.get("expect"),
                "mark": of(c).shown,
                "css": of(c).css,
                "message": c.get("message"),
            }
            for c in report["failed_claims"]
        ],
        "statuses": [_status_data(status, report, all_groups) for status in STATUSES if status != CITED],
        "kinds_intro": _kinds_intro(s),
        "kind_columns": [head for head, _ in KIND_COLUMNS],
        "kinds": [
            {"label": label, "means": _runs(note), "counts": [n[name] for _, name in KIND_COLUMNS]}
            for label, note, n in kind_rows(report)
        ],
        "means_heading": MEANS_HEADING,
        "means_intro": _runs(MEANS_INTRO),
        "means_head": [_runs(head) for head in MEANS_HEAD],
        "means": [[_runs(name), _runs(m.audit), _runs(m.diff), _runs(m.rerun)] for name, m in REPRODUCED_MEANS],
        "other_bindings": [
            {
                "key": b["key"],
                "printed": shorten(b["text"]),
                "marks": _claim_marks([b]),
                "where": ", ".join(b["locations"]),
                "script": _source_text(b["source"]),
                "reproduce": reproduce_command(b["key"]),
            }
            for b in report["other_bindings"]
        ],
        "edition_environment": report.get("edition_environment"),
        "cited": {
            "label": CITED,
            "css": AUDIT_STATUS[CITED].css,
            "entries": [
                {"id": r["id"], "dropped": bool(r.get("dropped")), "published": r["published"], "why": r["why"]}
                for r in report["entries"]
                if r["status"] == CITED
            ],
        },
    }


def _status_data(status, report, all_groups):
    """One status's section: its entries grouped by key, and for "reproduced"
    how many of them are measured values and how many came back as printed."""
    rows = [r for r in report["entries"] if r["status"] == status]
    counts = [(k, sum(1 for r in rows if r["kind"] == k)) for k in KINDS]
    return {
        "label": status,
        "css": AUDIT_STATUS[status].css,
        "count": len(rows),
        "by_kind": [counted(n, k) for k, n in counts if n] if status == REPRODUCED else [],
        "groups": [_group_data(g) for g in all_groups if g[0]["status"] == status],
    }


def _runs(text):
    """Text with `code spans` as [{text, code}] pieces, for the page to mark up."""
    return [{"text": piece, "code": bool(i % 2)} for i, piece in enumerate(text.split("`")) if piece]


def to_html(report, publishing=Publishing()):
    """build/audit.html: the page_data laid out by templates/audit.html."""
    return html_page("audit.html", **page_data(report, publishing))


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit audit", description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="baseline/published.yaml")
    parser.add_argument("--values", required=True, help="build/values.json")
    parser.add_argument("--bindings", required=True, help="build/bindings.json")
    parser.add_argument("--json", required=True, help="where to write the audit as data")
    parser.add_argument("--md", required=True, help="where to write the audit as Markdown")
    parser.add_argument("--html", required=True, help="where to write the audit as a self-contained page")
    parser.add_argument("--log", help="also write the messages to this file (stderr still gets them)")
    parser.add_argument(
        "--matrix",
        help="build/matrix.json, when the article configures a version matrix "
        "(it need not exist): which departures are the versions'",
    )
    parser.add_argument("--matrix-sha256", help="the digest the matrix had when Snakemake planned the audit")
    add_publishing_argument(parser)
    args = parser.parse_args(argv)
    messages = []

    def say(line, level=logging.INFO):
        messages.append(line)
        log.log(level, line)

    try:
        baseline = load_baseline(args.baseline)
        values_doc = read_json(args.values)
        bindings_doc = load_bindings(args.bindings)
        matrix = edition_environment.load_matrix(args.matrix, args.matrix_sha256)
    except (ArticlekitError, OSError) as exc:  # the log says it too
        say(f"audit: {exc}", logging.ERROR)
        _write_log(args.log, messages)
        return 1
    report = audit(baseline, values_doc, bindings_doc)
    report["inputs"] = {"values": args.values, "bindings": args.bindings}
    report["edition_environment"] = edition_environment.attribution(
        baseline, report["entries"], matrix, args.matrix, args.publishing
    )
    write_report(
        args.json, report, {args.md: to_markdown(report, args.publishing), args.html: to_html(report, args.publishing)}
    )
    say(summary_line(report))
    for row in report["entries"]:
        if row["status"] in (UNEXPECTED, MISSING):
            where = f"{baseline.path}:{row['line']}: " if row["line"] else ""
            verdict = (
                f"explained: {row['explained']}" if row["explained"] else "unexplained: a strict build stops on it"
            )
            say(
                f"  WARNING {row['status']}: {where}{row['id']} ({row['key']}): {row['why']} [{verdict}]",
                logging.WARNING,
            )
    say(f"audit: details in {args.md} and {args.html}")
    for line in report["disagreements"]:
        say(
            f"audit: {args.bindings} and {args.baseline} disagree: {line}; bind the article again with the same "
            "baseline and values (snakemake --forcerun bind)",
            logging.ERROR,
        )
    _write_log(args.log, messages)
    return 1 if report["disagreements"] else 0


def _write_log(path, messages):
    if path:
        write_text_atomic(path, "\n".join(messages) + "\n")
