"""Published edition vs this build: for every value the edition printed, did
this build regenerate it, and if it moved, was that expected?

    python -m articlekit audit --baseline baseline/published.yaml \\
        --values build/values.json --bindings build/bindings.json \\
        --json build/audit.json --md build/audit.md --html build/audit.html

Statuses, decided by the entry's agreement class (baseline/published.yaml):

    reproduced          the printed digits (or text) came back
    moved as expected   different, within what its class allows: noise still
                        under its bound, a timing inside its band, a version,
                        an error text after that library changed version, a
                        number whose inputs the edition never gave, or an
                        erratum whose corrected fact still holds
    moved unexpectedly  different beyond its class, or it fails its check
    key missing         no value under that key any more; counts as unexpected
    cited               from the paper or the docs: listed, not audited

A move never fails the build: the article's claims do that. The audit says
what moved, and prints a one-line summary to stderr.
"""

import argparse
import html
import sys

from articlekit.baseline import BaselineError, check_holds, load_baseline, render, same_text, same_value
from articlekit.fmt import FormatError
from articlekit.jsonio import read_json, write_json, write_text_atomic
from articlekit.mdtable import cell, code, table, versions_text
from articlekit.claims import INCONCLUSIVE, ClaimError, evaluate
from articlekit.values import lookup, measured, split_key

REPRODUCED = "reproduced"
EXPECTED = "moved as expected"
UNEXPECTED = "moved unexpectedly"
MISSING = "key missing"
CITED = "cited"
STATUSES = (REPRODUCED, EXPECTED, UNEXPECTED, MISSING, CITED)


# ---- versions ------------------------------------------------------------------

def installed_versions(values_doc):
    """python/numpy/torch of this build: the environment experiment's record,
    else any experiment's versions."""
    values = values_doc.get("values", {})
    found = {}
    for experiment_versions in values_doc.get("versions", {}).values():
        found.update(experiment_versions)
    for library in ("python", "numpy", "torch"):
        if isinstance(values.get(f"environment.{library}"), str):
            found[library] = values[f"environment.{library}"]
    return found


def same_release(published, installed):
    """'2.14.1' vs '2.14.1+cpu': same; '3.13' vs '3.13.2': same (the edition
    gave only the minor version); '2.14.1' vs '2.13.0': different."""
    if not installed:
        return False
    base = str(installed).split("+", 1)[0]
    return base == published or base.startswith(published + ".")


# ---- one entry -------------------------------------------------------------------

def judge(entry, value, edition_versions, installed, checked=None):
    """(status, regenerated text, why) for one baseline entry whose key exists.
    `checked`: the value as its check sees it, an Interval for a measured value."""
    if entry.cls == "text":
        shown = str(value)
        same = isinstance(value, str) and same_text(value, entry.value)
    else:
        try:
            shown = render(value, entry.fmt)
        except FormatError as exc:
            return UNEXPECTED, repr(value), f"cannot print it the way the edition did: {exc}"
        same = shown == entry.published if entry.fmt else same_value(value, entry.value)

    if entry.check:
        holds, message = check_holds(entry.check, value if checked is None else checked)
        if _inconclusive(entry.check, checked):
            return EXPECTED, shown, f"machines differ; {message}: the measurement cannot decide"
        if not holds:
            return UNEXPECTED, shown, f"fails its check '{entry.check}' ({message})"

    if same:
        return REPRODUCED, shown, ("same text" if entry.cls == "text" else "the printed value came back")

    if entry.cls == "exact":
        return UNEXPECTED, shown, f"an exact value: printed {entry.published}, regenerated {shown}"
    if entry.cls == "noise":
        return EXPECTED, shown, f"floating-point noise: both meet '{entry.check}'"
    if entry.cls == "timing":
        return _judge_timing(entry, value, shown)
    if entry.cls == "text":
        library = entry.library
        then, now = edition_versions.get(library), installed.get(library)
        if library and not same_release(then, now):
            return EXPECTED, shown, f"{library} {now or 'unknown'} here, {then} in the edition: messages change between versions"
        return UNEXPECTED, shown, f"the text changed with {library} still at the edition's {then}"
    if entry.cls == "info":
        return EXPECTED, shown, "reported, expected to differ between machines and builds"
    if entry.cls == "not_reproducible":
        kept = f" Its claim '{entry.check}' holds." if entry.check else ""
        return EXPECTED, shown, " ".join(entry.reason.split()) + kept
    if entry.cls == "erratum":
        return EXPECTED, shown, "Erratum: " + " ".join(entry.reason.split()) + f" ('{entry.check}' holds.)"
    raise ValueError(f"entry {entry.id!r}: unknown class {entry.cls!r}")


def _inconclusive(check, checked):
    """A measured value whose interval straddles the check's bound."""
    try:
        return checked is not None and evaluate(check, checked).status == INCONCLUSIVE
    except ClaimError:
        return False


def _judge_timing(entry, value, shown):
    if entry.band:
        low, high = entry.band
        ratio = value / entry.value if isinstance(value, (int, float)) and entry.value else float("nan")
        if not low <= ratio <= high:
            return UNEXPECTED, shown, f"{ratio:.2f}x the published time, outside the band [{low:g}, {high:g}]"
        return EXPECTED, shown, f"machines differ: {ratio:.2f}x the published time, inside the band [{low:g}, {high:g}]"
    return EXPECTED, shown, f"machines differ; '{entry.check}' still holds (the printed {entry.published} is informational)"


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
        })
    return rows


# ---- the report ------------------------------------------------------------------

def audit(baseline, values_doc, bindings_doc):
    """The audit as plain data (what build/audit.json holds)."""
    values = values_doc.get("values", {})
    sources = values_doc.get("sources", {})
    installed = installed_versions(values_doc)
    bound = bound_values(bindings_doc)
    rows = []
    for entry in baseline.entries:
        row = {
            "id": entry.id, "key": entry.key, "class": entry.cls, "published": entry.published,
            "where": entry.where, "line": entry.line, "restates": entry.restates,
            "regenerated": None, "raw": None, "status": None, "why": None,
            "claims": [], "source": None,
        }
        if entry.cls == CITED:
            row.update(status=CITED, why=" ".join(entry.reason.split()))
        else:
            try:
                value = lookup(values, entry.key)
            except (KeyError, ValueError) as exc:
                # Reported, never dropped: a renamed key must not hide a number.
                row.update(status=MISSING, why=f"{exc}; rename the entry's key "
                                               "in the baseline or restore the value")
            else:
                status, shown, why = judge(entry, value, baseline.edition["versions"], installed,
                                           checked=measured(values, entry.key))
                row.update(status=status, regenerated=shown, raw=value, why=why)
            row["source"] = sources.get(split_key(entry.key)[0])
            row["claims"] = [b for b in bound if keys_related(b["key"], entry.key)]
        rows.append(row)

    audited_keys = [e.key for e in baseline.entries if e.key]
    others = [b for b in bound if not any(keys_related(b["key"], k) for k in audited_keys)]
    # one per place the article makes a claim (bind's log), not one per binding
    claims = bindings_doc.get("claims", [])
    failed = [c for c in claims if not c.get("holds")]
    counts = {status: sum(1 for r in rows if r["status"] == status) for status in STATUSES}
    summary = {
        "entries": len(rows),
        "reproduced": counts[REPRODUCED],
        "moved_as_expected": counts[EXPECTED],
        # a missing key counts as unexpected: something the edition printed is gone
        "moved_unexpectedly": counts[UNEXPECTED] + counts[MISSING],
        "key_missing": counts[MISSING],
        "cited": counts[CITED],
        "claims_checked": len(claims),
        "claims_failed": len(failed),
    }
    return {
        "baseline": baseline.path,
        "edition": baseline.edition,
        "installed": installed,
        "summary": summary,
        "entries": rows,
        "other_bindings": others,
        "failed_claims": failed,
    }


def _missing_note(summary):
    """' (2 key missing)' after the unexpected count, which includes them."""
    return f" ({summary['key_missing']} key missing)" if summary["key_missing"] else ""


def summary_line(report):
    s = report["summary"]
    return (f"audit: {s['reproduced']} reproduced, {s['moved_as_expected']} moved as expected, "
            f"{s['moved_unexpectedly']} moved unexpectedly{_missing_note(s)}, "
            f"{s['claims_failed']} of {s['claims_checked']} claims failed")


# ---- pages: Markdown for diffs and reviews, HTML for reading --------------------------

def _claims_text(claims):
    """'✓ < 1e-12' per claim the article makes about the key; '' when none."""
    parts = []
    for c in claims:
        if c["holds"] is None:  # printed, no claim made about it
            continue
        mark = "✓" if c["holds"] else ("? INCONCLUSIVE" if c.get("status") == INCONCLUSIVE else "✗ FAILS")
        parts.append(f"{mark} {c['expect']}")
    return "; ".join(parts)


def _shorten(text, limit=100):
    """Code listings are bound too: a table cell shows their start."""
    text = " ".join(str("" if text is None else text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _source_text(source):
    return (source or {}).get("script") or ""


def to_markdown(report):
    s = report["summary"]
    edition = report["edition"]
    lines = [
        "# Audit: the published edition vs this build",
        "",
        f"Baseline `{report['baseline']}`: the edition of {edition['date']} "
        f"({versions_text(edition['versions'])}). This build: {versions_text(report['installed'])}.",
        "",
        "| reproduced | moved as expected | moved unexpectedly | claims failed |",
        "|---:|---:|---:|---:|",
        f"| {s['reproduced']} | {s['moved_as_expected']} | {s['moved_unexpectedly']}{_missing_note(s)} "
        f"| {s['claims_failed']} of {s['claims_checked']} |",
        "",
        f"{s['entries']} printed values in the baseline, {s['cited']} of them cited rather than measured.",
        "",
    ]
    unexpected = [r for r in report["entries"] if r["status"] in (UNEXPECTED, MISSING)]
    if unexpected:
        lines += ["## Moved unexpectedly", ""]
        lines += [f"- **{r['id']}** (`{r['key']}`): {r['why']}" for r in unexpected]
        lines.append("")
    if report["failed_claims"]:
        lines += ["## Claims that fail", ""]
        lines += [f"- {c.get('location', '?')}: `{c.get('key')}` expect `{c.get('expect')}`: {c.get('message')}"
                  for c in report["failed_claims"]]
        lines.append("")
    lines += ["## Every printed value", ""]
    lines += table(
        ["status", "id", "key", "published", "regenerated", "class", "why", "claims in the article", "script"],
        [[r["status"], cell(r["id"]), code(r["key"]), code(r["published"]), code(r["regenerated"]), r["class"],
          cell(r["why"]), cell(_claims_text(r["claims"])), cell(_source_text(r["source"]))]
         for r in report["entries"] if r["status"] != CITED])
    lines += ["", "## Other values bound in the article", ""]
    if report["other_bindings"]:
        lines += table(
            ["key", "printed", "claim", "where", "script"],
            [[code(b["key"]), code(_shorten(b["text"])), cell(_claims_text([b])) or "(none)",
              cell(", ".join(b["locations"])), cell(_source_text(b["source"]))]
             for b in report["other_bindings"]])
    else:
        lines.append("None: every bound value is in the baseline.")
    cited = [r for r in report["entries"] if r["status"] == CITED]
    if cited:
        lines += ["", "## Cited, not audited", ""]
        lines += [f"- **{r['id']}** `{cell(r['published'])}`: {r['why']}" for r in cited]
    return "\n".join(lines) + "\n"


_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
table{border-collapse:collapse;width:100%;font-size:.85rem}th,td{border-bottom:1px solid #e6e8eb;padding:.3rem .45rem;text-align:left;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0}code{font:.8rem ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}td:nth-child(3) code{white-space:nowrap}
.badge{display:inline-block;border-radius:1rem;padding:.05rem .55rem;font-size:.75rem;font-weight:600;white-space:nowrap}
.reproduced{background:#dafbe1;color:#116329}.expected{background:#ddf4ff;color:#0a3069}
.unexpected,.missing,.fails{background:#ffebe9;color:#a40e26}.cited,.none{background:#eaeef2;color:#57606a}.holds{background:#dafbe1;color:#116329}
.cards{display:flex;gap:.8rem;flex-wrap:wrap}.card{border:1px solid #d0d7de;border-radius:.5rem;padding:.6rem 1rem;min-width:9rem}
.card b{display:block;font-size:1.6rem}.muted{color:#57606a}
"""

_BADGE_CLASS = {REPRODUCED: "reproduced", EXPECTED: "expected", UNEXPECTED: "unexpected",
                MISSING: "missing", CITED: "cited"}


def _e(text):
    return html.escape("" if text is None else str(text))


def _badge(label, css):
    return f'<span class="badge {css}">{_e(label)}</span>'


def _claim_badges(claims):
    out = []
    for c in claims:
        if c["holds"] is None:
            continue
        css, mark = ("holds", "✓") if c["holds"] else ("fails", "?" if c.get("status") == INCONCLUSIVE else "✗")
        out.append(f'{_badge(mark + " " + c["expect"], css)} <span class="muted">{_e(", ".join(c["locations"]))}</span>')
    return "<br>".join(out) or '<span class="muted">none</span>'


def _html_table(head, rows):
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "\n".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>\n{body}\n</tbody></table>"


def to_html(report):
    s = report["summary"]
    edition = report["edition"]
    cards = [
        (s["reproduced"], "reproduced", "reproduced"),
        (s["moved_as_expected"], "moved as expected", "expected"),
        (s["moved_unexpectedly"], "moved unexpectedly" + _missing_note(s), "unexpected"),
        (f"{s['claims_failed']} / {s['claims_checked']}", "claims failed", "fails" if s["claims_failed"] else "holds"),
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Audit: published edition vs this build</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Audit: the published edition vs this build</h1>",
        f"<p>Baseline <code>{_e(report['baseline'])}</code>: the edition of {_e(edition['date'])} "
        f"({_e(versions_text(edition['versions']))}). This build: {_e(versions_text(report['installed']))}.</p>",
        '<div class="cards">' + "".join(
            f'<div class="card">{_badge(label, css)}<b>{_e(n)}</b></div>' for n, label, css in cards) + "</div>",
        f'<p class="muted">{s["entries"]} printed values in the baseline, {s["cited"]} of them cited rather than measured. '
        "A move never fails the build; a failed claim does.</p>",
    ]
    if report["failed_claims"]:
        parts.append("<h2>Claims that fail</h2>")
        parts.append(_html_table(["where", "key", "claim", "result"], [
            [_e(c.get("location")), f"<code>{_e(c.get('key'))}</code>", f"<code>{_e(c.get('expect'))}</code>",
             _e(c.get("message"))] for c in report["failed_claims"]]))
    parts.append("<h2>Every printed value</h2>")
    parts.append(_html_table(
        ["status", "id", "key", "published", "regenerated", "class", "why", "claims in the article", "script"],
        [[_badge(r["status"], _BADGE_CLASS[r["status"]]), _e(r["id"]), f"<code>{_e(r['key'])}</code>",
          f"<code>{_e(r['published'])}</code>", f"<code>{_e(r['regenerated'])}</code>" if r["regenerated"] is not None else "",
          _e(r["class"]), _e(r["why"]) + f'<br><span class="muted">{_e(r["where"]["section"])}: “{_e(r["where"]["quote"])}”</span>',
          _claim_badges(r["claims"]), f"<code>{_e(_source_text(r['source']))}</code>"]
         for r in report["entries"] if r["status"] != CITED]))
    parts.append("<h2>Other values bound in the article</h2>")
    if report["other_bindings"]:
        parts.append(_html_table(["key", "printed", "claim", "script"], [
            [f"<code>{_e(b['key'])}</code>", f"<code>{_e(_shorten(b['text']))}</code>", _claim_badges([b])
             if b["holds"] is not None else _badge("no claim", "none") + f' <span class="muted">{_e(", ".join(b["locations"]))}</span>',
             f"<code>{_e(_source_text(b['source']))}</code>"] for b in report["other_bindings"]]))
    else:
        parts.append("<p>None: every bound value is in the baseline.</p>")
    cited = [r for r in report["entries"] if r["status"] == CITED]
    if cited:
        parts.append("<h2>Cited, not audited</h2>")
        parts.append(_html_table(["id", "printed", "why"], [
            [_e(r["id"]), f"<code>{_e(r['published'])}</code>", _e(r["why"])] for r in cited]))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit audit", description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="baseline/published.yaml")
    parser.add_argument("--values", required=True, help="build/values.json")
    parser.add_argument("--bindings", required=True, help="build/bindings.json")
    parser.add_argument("--json", required=True, help="where to write the audit as data")
    parser.add_argument("--md", required=True, help="where to write the audit as Markdown")
    parser.add_argument("--html", required=True, help="where to write the audit as a self-contained page")
    args = parser.parse_args(argv)
    try:
        baseline = load_baseline(args.baseline)
        values_doc = read_json(args.values)
        bindings_doc = read_json(args.bindings)
    except (BaselineError, OSError, ValueError) as exc:
        print(f"audit: {exc}", file=sys.stderr)
        return 1
    report = audit(baseline, values_doc, bindings_doc)
    report["inputs"] = {"values": args.values, "bindings": args.bindings}
    write_json(args.json, report)
    write_text_atomic(args.md, to_markdown(report))
    write_text_atomic(args.html, to_html(report))
    print(summary_line(report), file=sys.stderr)
    for row in report["entries"]:
        if row["status"] in (UNEXPECTED, MISSING):
            print(f"  {row['status']}: {row['id']} ({row['key']}): {row['why']}", file=sys.stderr)
    print(f"audit: details in {args.md} and {args.html}", file=sys.stderr)
    return 0
