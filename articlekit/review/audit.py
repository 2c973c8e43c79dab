"""Published edition vs this build: for every value the edition printed, did
this build regenerate it, and if it moved, was that expected?

    python -m articlekit audit --baseline baseline/published.yaml \\
        --values build/values.json --bindings build/bindings.json \\
        --json build/audit.json --md build/audit.md --html build/audit.html

Statuses, decided by the entry's agreement class (articlekit/data/baseline.py), judged by articlekit.data.edition,
in the order a reviewer reads them:

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

One threshold per claim: when the article claims something about a key with
the same comparison as the entry's check ("> 0.1" in the prose, "> 0.01" in
the baseline), the two must agree, or the entry moves unexpectedly.
"""

import argparse
import re
import sys

from articlekit.data.edition import (CITED, ERRATUM, EXPECTED, MISSING, NOT_REPRODUCIBLE, REPRODUCED, STATUSES, UNEXPECTED, verdicts)
from articlekit.data.baseline import CITED_CLASS
from articlekit.data.baseline import BaselineError, load_baseline
from articlekit.article.bindings import load_bindings
from articlekit.core.claims import INCONCLUSIVE
from articlekit.data.environment import installed_versions
from articlekit.core.jsonio import read_json, write_text_atomic
from articlekit.review.pages import (badge, cell, code, cols, counts_table, escape, html_page, html_table, key_html, table, words, write_report)
from articlekit.core.text import shorten
from articlekit.data.publishing import Publishing
from articlekit.data.publishing import add_argument as add_publishing_argument
from articlekit.core.keys import split_key

CSS = {ERRATUM: "erratum", NOT_REPRODUCIBLE: "not-reproducible", UNEXPECTED: "unexpected", MISSING: "missing",
       EXPECTED: "expected", REPRODUCED: "reproduced", CITED: "cited"}


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
        rows.append({
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
        })
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
            "id": entry.id, "key": entry.key, "class": entry.cls, "published": entry.published,
            "where": entry.where, "line": entry.line, "restates": entry.restates,
            "regenerated": v.shown, "raw": v.raw, "status": v.status, "why": v.why,
            "explained": v.explained if v.unexpected else None,
            "claims": [], "source": None, "article": None, "check": entry.check,
        }
        if entry.cls == CITED_CLASS:
            row["dropped"] = entry.dropped
        else:
            row["claims"] = [b for b in bound if keys_related(b["key"], entry.key)]
            row["source"] = sources.get(split_key(entry.key)[0])
            row["article"] = article_link(row["claims"], entry.key)
        rows.append(row)

    # an entry's key, or the edition's own value of it (published.<id>, which the departures section binds)
    audited_keys = [e.key for e in baseline.entries if e.key] + [f"published.{e.id}" for e in baseline.entries]
    others = [b for b in bound if not any(keys_related(b["key"], k) for k in audited_keys)]
    # one per place the article makes a claim (bind's log), not one per binding
    claims = bindings_doc.get("claims", [])
    failed = [c for c in claims if not c.get("holds")]
    counts = {status: sum(1 for r in rows if r["status"] == status) for status in STATUSES}
    summary = {
        "entries": len(rows),
        "erratum": counts[ERRATUM],
        "not_reproducible": counts[NOT_REPRODUCIBLE],
        # a missing key counts as unexpected: something the edition printed is gone
        "moved_unexpectedly": counts[UNEXPECTED] + counts[MISSING],
        "key_missing": counts[MISSING],
        # of those, the ones the baseline (or this build's configuration) does not explain: a strict build fails on them
        "unexplained": sum(1 for r in rows if r["status"] in (UNEXPECTED, MISSING) and not r["explained"]),
        "moved_as_expected": counts[EXPECTED],
        "reproduced": counts[REPRODUCED],
        "cited": counts[CITED],
        "claims_checked": len(claims),
        "claims_failed": len(failed),
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
    note = f" ({summary['key_missing']} key missing)" if summary["key_missing"] else ""
    if summary["moved_unexpectedly"]:
        note += f", {summary.get('unexplained', 0)} of them unexplained"
    return note


def summary_line(report):
    s = report["summary"]
    return (f"audit: {s['reproduced']} reproduced, {s['moved_as_expected']} moved as expected, "
            f"{s['erratum']} {'erratum' if s['erratum'] == 1 else 'errata'}, {s['not_reproducible']} not reproducible, "
            f"{s['moved_unexpectedly']} moved unexpectedly{_missing_note(s)}, "
            f"{s['claims_failed']} of {s['claims_checked']} claims failed")


def card_counts(report):
    """(label, count, css) per status, in reading order; claims last."""
    s = report["summary"]
    n = {ERRATUM: s["erratum"], NOT_REPRODUCIBLE: s["not_reproducible"],
         UNEXPECTED: s["moved_unexpectedly"] - s["key_missing"], MISSING: s["key_missing"],
         EXPECTED: s["moved_as_expected"], REPRODUCED: s["reproduced"], CITED: s["cited"]}
    return [(status, n[status], CSS[status]) for status in STATUSES]


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
    return (f"Explained: {row['explained']}" if row.get("explained")
            else "Unexplained: the baseline gives no reason, so a strict build stops on it.")


def _claims_text(claims):
    """'✓ < 1e-12' per claim the article makes about the key; '' when none."""
    parts = []
    for c in claims:
        if c["holds"] is None:  # printed, no claim made about it
            continue
        mark = "✓" if c["holds"] else ("? INCONCLUSIVE" if c.get("status") == INCONCLUSIVE else "✗ FAILS")
        parts.append(f"{mark} {c['expect']}")
    return "; ".join(parts)


def _source_text(source):
    return (source or {}).get("script") or ""


def _versions_line(report, publishing, text):
    """'the edition of DATE (Python 3.11, NumPy 2.4.6). This build: ...', `text` escaping each part."""
    edition = report["edition"]
    return (f"the edition of {text(edition['date'])} ({text(publishing.versions_text(edition['versions']))}). "
            f"This build: {text(publishing.versions_text(report['installed']))}.")


def to_markdown(report, publishing=Publishing()):
    s = report["summary"]
    counts = [(label, n) for label, n, _ in card_counts(report)]
    lines = [
        "# Audit: the published edition vs this build",
        "",
        f"Baseline `{report['baseline']}`: {_versions_line(report, publishing, cell)}",
        "",
        *counts_table(counts + [("claims failed", f"{s['claims_failed']} of {s['claims_checked']}")]),
        "",
        f"{s['entries']} printed values in the baseline, {s['cited']} of them cited rather than measured.",
        "",
    ]
    unexpected = [r for r in report["entries"] if r["status"] in (UNEXPECTED, MISSING)]
    if unexpected:
        lines += ["## Moved unexpectedly", ""]
        lines += [f"- **{cell(r['id'])}** ({code(r['key'])}): {cell(r['why'])} {cell(_explained_text(r))}"
                  for r in unexpected]
        lines.append("")
    if report["failed_claims"]:
        lines += ["## Claims that fail", ""]
        lines += [f"- {cell(c.get('location', '?'))}: {code(c.get('key'))} expect {code(c.get('expect'))}: "
                  f"{cell(c.get('message'))}" for c in report["failed_claims"]]
        lines.append("")
    lines += ["## Every printed value, by status", ""]
    lines += table(
        ["status", "id", "key", "published", "regenerated", "class", "why", "claims in the article", "script"],
        [[r["status"], cell(r["id"]), code(r["key"]), code(r["published"]), code(r["regenerated"]), r["class"],
          cell(" ".join(filter(None, [r["why"], _explained_text(r)]))), cell(_claims_text(r["claims"])),
          cell(_source_text(r["source"]))]
         for group in groups(report) for r in group])
    lines += ["", "## Other values bound in the article", ""]
    if report["other_bindings"]:
        lines += table(
            ["key", "printed", "claim", "where", "script"],
            [[code(b["key"]), code(shorten(b["text"])), cell(_claims_text([b])) or "(none)",
              cell(", ".join(b["locations"])), cell(_source_text(b["source"]))]
             for b in report["other_bindings"]])
    else:
        lines.append("None: every bound value is in the baseline.")
    cited = [r for r in report["entries"] if r["status"] == CITED]
    if cited:
        lines += ["", "## Cited, not audited", ""]
        lines += [f"- **{cell(r['id'])}** {code(r['published'])}: {cell(r['why'])}" for r in cited]
    return "\n".join(lines) + "\n"


def _claim_badges(claims):
    out = []
    for c in claims:
        if c["holds"] is None:
            continue
        css, mark = ("holds", "✓") if c["holds"] else ("fails", "?" if c.get("status") == INCONCLUSIVE else "✗")
        out.append(f'{badge(mark + " " + c["expect"], css)} <span class="muted">{escape(", ".join(c["locations"]))}</span>')
    return "<br>".join(out)


def _group_cells(group):
    """One row of the table: every entry of a key and status together."""
    first = group[0]
    key = (key_html(first["key"]) + f'<br><span class="muted">{escape(first["class"])}'
           + (f' · {escape(_source_text(first["source"]))}' if first["source"] else "") + "</span>")
    printed = []
    for r in group:
        shown = "" if r["regenerated"] is None else (
            f' <span class="arrow">→</span> <code>{escape(shorten(r["regenerated"], 160))}</code>')
        printed.append(f'<div class="entry" id="{escape(r["id"])}"><a class="id" href="#{escape(r["id"])}">{escape(r["id"])}</a>'
                       f'<br><code>{escape(r["published"])}</code>{shown}'
                       f'<br><span class="muted">{escape(r["where"]["section"])}: “{words(r["where"]["quote"])}”</span></div>')
    whys = list(dict.fromkeys(" ".join(filter(None, [r["why"], _explained_text(r)])) for r in group))
    why = "<br>".join(words(w) for w in whys)
    badges = _claim_badges(first["claims"])
    links = []
    if first["article"]:
        links.append(f'<a href="{escape(first["article"])}">in the article</a>')
    return [key, "".join(printed), why + (f"<br>{badges}" if badges else ""),
            "<br>".join(links) or '<span class="muted">not printed</span>']


def to_html(report, publishing=Publishing()):
    s = report["summary"]
    all_groups = groups(report)
    cards = [(label, n, css) for label, n, css in card_counts(report)]
    claims_css = "fails" if s["claims_failed"] else "holds"
    parts = [
        "<h1>Audit: the published edition vs this build</h1>",
        f"<p>Baseline {key_html(report['baseline'])}: {_versions_line(report, publishing, escape)} "
        '<a href="article.html">The article</a>.</p>',
        '<nav class="cards">' + "".join(
            f'<a class="card{" zero" if not n else ""}" href="#status-{css}">{badge(label, css)}<b>{n}</b></a>'
            for label, n, css in cards)
        + f'<a class="card" href="#claims">{badge("claims failed", claims_css)}'
          f'<b>{s["claims_failed"]} / {s["claims_checked"]}</b></a></nav>',
        f'<p class="muted">{s["entries"]} printed values in the baseline, {s["cited"]} of them cited rather than '
        "measured. A failed claim fails a strict build, and so does an unexpected move the baseline does not "
        "explain (the article lists every unexpected move). Each status below folds; each entry's id is "
        "its anchor (audit.html#ID).</p>",
    ]
    parts.append('<h2 id="claims">Claims that fail</h2>')
    if report["failed_claims"]:
        parts.append(html_table(["where", "key", "claim", "result"], [
            [escape(c.get("location")), key_html(c.get("key")), f"<code>{escape(c.get('expect'))}</code>",
             escape(c.get("message"))] for c in report["failed_claims"]]))
    else:
        parts.append(f"<p>None: all {s['claims_checked']} claims of the article hold.</p>")
    parts.append("<h2>Every printed value, by status</h2>")
    head = ["key", "published → this build", "why", "article"]
    for label, n, css in cards:
        if label == CITED:
            continue
        rows = [_group_cells(g) for g in all_groups if g[0]["status"] == label]
        parts.append(f'<details id="status-{css}" open><summary>{badge(label, css)} {n} '
                     f'{"entry" if n == 1 else "entries"}</summary>')
        parts.append(html_table(head, rows, cols("key", "printed", "why", "links")) if rows
                     else '<p class="muted">None.</p>')
        parts.append("</details>")
    parts.append("<h2>Other values bound in the article</h2>")
    if report["other_bindings"]:
        parts.append(html_table(["key", "printed", "claim", "script"], [
            [key_html(b["key"]), f"<code>{escape(shorten(b['text']))}</code>", _claim_badges([b])
             or badge("no claim", "none") + f' <span class="muted">{escape(", ".join(b["locations"]))}</span>',
             key_html(_source_text(b["source"]))] for b in report["other_bindings"]],
            cols("key", "printed", "why", "links")))
    else:
        parts.append("<p>None: every bound value is in the baseline.</p>")
    cited = [r for r in report["entries"] if r["status"] == CITED]
    parts.append(f'<details id="status-cited" open><summary>{badge(CITED, "cited")} {len(cited)} '
                 "cited, not audited</summary>")
    if cited:
        parts.append(html_table(["id", "printed", "why"], [
            [f'<a class="id" id="{escape(r["id"])}" href="#{escape(r["id"])}">{escape(r["id"])}</a>'
             + (f'<br>{badge("dropped", "none")}' if r.get("dropped") else ""),
             f"<code>{escape(r['published'])}</code>", words(r["why"])] for r in cited],
            cols("key", "printed", "why")))
    parts.append("</details>")
    return html_page("Audit: published edition vs this build", parts)


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit audit", description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="baseline/published.yaml")
    parser.add_argument("--values", required=True, help="build/values.json")
    parser.add_argument("--bindings", required=True, help="build/bindings.json")
    parser.add_argument("--json", required=True, help="where to write the audit as data")
    parser.add_argument("--md", required=True, help="where to write the audit as Markdown")
    parser.add_argument("--html", required=True, help="where to write the audit as a self-contained page")
    parser.add_argument("--log", help="also write the messages to this file (stderr still gets them)")
    add_publishing_argument(parser)
    args = parser.parse_args(argv)
    messages = []

    def say(line):
        messages.append(line)
        print(line, file=sys.stderr)

    try:
        baseline = load_baseline(args.baseline)
        values_doc = read_json(args.values)
        bindings_doc = load_bindings(args.bindings)
    except (BaselineError, OSError, ValueError) as exc:
        say(f"audit: {exc}")
        _write_log(args.log, messages)
        return 1
    report = audit(baseline, values_doc, bindings_doc)
    report["inputs"] = {"values": args.values, "bindings": args.bindings}
    write_report(args.json, report, {args.md: to_markdown(report, args.publishing),
                                     args.html: to_html(report, args.publishing)})
    say(summary_line(report))
    for row in report["entries"]:
        if row["status"] in (UNEXPECTED, MISSING):
            where = f"{baseline.path}:{row['line']}: " if row["line"] else ""
            verdict = (f"explained: {row['explained']}" if row["explained"]
                       else "unexplained: a strict build stops on it")
            say(f"  WARNING {row['status']}: {where}{row['id']} ({row['key']}): {row['why']} [{verdict}]")
    say(f"audit: details in {args.md} and {args.html}")
    for line in report["disagreements"]:
        say(f"audit: {args.bindings} and {args.baseline} disagree: {line}; bind the article again with the same "
            "baseline and values (snakemake --forcerun bind)")
    _write_log(args.log, messages)
    return 1 if report["disagreements"] else 0


def _write_log(path, messages):
    if path:
        write_text_atomic(path, "\n".join(messages) + "\n")
