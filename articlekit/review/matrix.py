"""The version matrix: the article's claims, quoted texts and printed values
in each environment of the `matrix:` config, side by side.

    python -m articlekit.review.matrix column --label L --environment results/matrix/L/environment.json \\
        --pin mylib==1.2.0 ... --results results/matrix/L/*.json --shared results/timing.json ... \\
        --article article/index.qmd --out build/matrix/L.json
    python -m articlekit.review.matrix report --baseline baseline/published.yaml build/matrix/*.json \\
        --json build/matrix.json --md build/matrix.md --html build/matrix.html
    python -m articlekit.review.matrix check build/matrix.json

A column is what the main build's `values` and `bind` steps make of one
environment's results (the same modules, run here, in this Python: binding
needs none of the libraries the experiments import), with strict=false so
that a failed claim is reported rather than fatal. Experiments left out of the matrix (timing: it
measures the machine) and the code listings come from the main build, and
their rows are left out of the comparison, with the edition's values that
the departures section prints beside their keys (see _speaker).

Rows are the article's shortcodes (one per KEY|FMT|EXPECT, in reading
order). A row is highlighted, with its reasons, when in some environment its
claim fails, its quoted text is not the first environment's, or its value
moved beyond the key's agreement rule (articlekit.review.agreement.between_builds: the
baseline's class, e.g. a noise bound). Versions and other `info` rows are
reported, never highlighted: they are what the columns differ in.
"""

import argparse
import re
import sys

from articlekit.core.log import log
from articlekit.data.baseline import load_baseline
from articlekit.article.bind import BindError, bind
from articlekit.core.errors import ArticlekitError, run_command
from articlekit.data.classes import TEXT, VERSION, rule_entry, value_kind
from articlekit.review.agreement import between_builds
from articlekit.core.jsonio import read_json, write_json, write_text_atomic
from articlekit.data.environment import in_record
from articlekit.review.pages import cell, code, html_page, table
from articlekit.core.text import shorten
from articlekit.data.publishing import Publishing
from articlekit.data.publishing import add_argument as add_publishing_argument
from articlekit.core.sources import read_text
from articlekit.core.status import FAILS, HOLDS, INCONCLUSIVE, STATUS, of, status_of
from articlekit.data.values import merge, published_envelope

_SHOWN = 80  # characters of a printed value shown in a cell
# an environment's summary counts its claims by status: an inconclusive one is never a failed one
_COUNTS = {HOLDS: "claims_held", FAILS: "claims_failed", INCONCLUSIVE: "claims_inconclusive"}


# ---- one environment's column ----------------------------------------------------


def column(
    label, pins, environment, results, shared, article_path, baseline_path=None, publishing=Publishing(), python=None
):
    """The column document of one environment: its bindings, or why it has none.
    `baseline_path` is bound as in the main build: its published.<id> values
    and the {{< departures >}} section. `python`: the Python the entry asked
    for (None: the build's own); the column records the version the
    environment's interpreter reported when it was made."""
    record = read_json(environment)
    doc = {
        "label": label,
        "pins": list(pins),
        "installed": record["installed"],
        "log": record["log"],
        "python": {"requested": python, "version": record.get("python_version")},
        "versions": {},
        "failed": [],
        "shared": [],
        "bindings": None,
    }
    if not record["installed"]:
        doc["failed"].append({"experiment": "(install)", "reason": record.get("error", ""), "log": record["log"]})
        return doc
    artifacts = [(path, read_json(path)) for path in results]
    doc["failed"] = [
        {"experiment": a["experiment"], "reason": a["reason"], "log": a.get("log")}
        for _, a in artifacts
        if a.get("not_run")
    ]
    ran = [(path, a) for path, a in artifacts if not a.get("not_run")]
    for _, a in ran:
        doc["versions"].update({k: v for k, v in a.get("versions", {}).items() if k in publishing.libraries})
    if doc["failed"]:
        return doc
    borrowed = [(path, read_json(path)) for path in shared]
    doc["shared"] = sorted(a["experiment"] for _, a in borrowed)
    if baseline_path:
        borrowed.append((baseline_path, published_envelope(baseline_path)))
    baseline = load_baseline(baseline_path) if baseline_path else None
    values = merge(ran + borrowed)
    text = read_text(article_path)
    try:
        doc["bindings"] = bind(article_path, text, values, strict=False, baseline=baseline)
    except BindError as exc:
        # e.g. an experiment that wrote other keys under this version: a
        # finding about the environment, shown in its column.
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        doc["failed"].append(
            {"experiment": "(bind)", "reason": "; ".join(exc.problems[:3]) + more, "log": f"build/matrix/{label}.json"}
        )
    return doc


# ---- the matrix ---------------------------------------------------------------------


def _line(location):
    match = re.search(r":(\d+)$", location)
    return int(match.group(1)) if match else 0


def _kind(key, binding, baseline):
    """A row's kind: a version or other info (reported, never compared), a
    text, a printed value, or a claim the article states without its value."""
    kind = value_kind(key, binding["raw"], rule_entry(key, baseline))
    if kind == VERSION:
        return "info"
    if kind == TEXT or isinstance(binding["raw"], str):
        return "text"
    return "value" if binding.get("printed", True) else "claim"


def _cell(binding):
    claim = binding.get("claim") or {}
    return {
        "text": binding["text"] if binding.get("printed", True) else None,
        "raw": binding["raw"],
        "holds": claim.get("holds"),
        "status": status_of(claim),
        "message": claim.get("message"),
    }


def _row_reasons(row, labels, baseline, publishing):
    """Why a row differs across the columns (empty when it does not)."""
    reasons = []
    present = [label for label in labels if row["cells"].get(label)]
    for label in present:
        c = row["cells"][label]
        if c["holds"] is False:  # failed, or inconclusive: each said as it is
            reasons.append(f"{label}: claim '{row['expect']}' {of(c).verdict} ({c['message']})")
    if row["kind"] == "info" or len(present) < 2:
        return reasons
    first = row["cells"][present[0]]
    rule, test = between_builds(row["key"], baseline, publishing)
    row["rule"] = rule
    for label in present[1:]:
        same, why = test(first["raw"], row["cells"][label]["raw"])
        if not same:
            what = "text changed" if row["kind"] == "text" else f"moved beyond '{rule}' ({why})"
            reasons.append(f"{label}: {what} from {present[0]}")
        elif row["cells"][label]["text"] != first["text"]:
            row["within"].append(f"{label}: {why}")
    return reasons


def _speaker(document):
    """binding -> the experiment whose values it stands for: its source's,
    except that the edition's value printed only beside a departure is there
    because that departure's key moved. Beside a shared (timing) key, whether
    it is there at all depends on the main build's machine: it is left out
    with that experiment, or two builds of one matrix differ in their rows."""
    departed = {f"published.{d['id']}": d["key"] for d in document["departures"]}
    by_key = {b["key"]: b["source"]["experiment"] for b in document["bindings"].values()}

    def speaks_for(binding):
        if not binding.get("in_text", True) and by_key.get(departed.get(binding["key"])):
            return by_key[departed[binding["key"]]]
        return binding["source"]["experiment"]

    return speaks_for


def build(columns, baseline=None, publishing=Publishing()):
    """The matrix as plain data (what build/matrix.json holds)."""
    labels = [c["label"] for c in columns]
    complete = [c for c in columns if c["bindings"]]
    shared = set().union(*(c["shared"] for c in complete)) if complete else set()
    rows, left_out = {}, set()
    for col in complete:
        speaks_for = _speaker(col["bindings"])
        for ident, b in col["bindings"]["bindings"].items():
            if speaks_for(b) in shared:
                left_out.add(speaks_for(b))
                continue
            if ident not in rows:
                rows[ident] = {
                    "id": ident,
                    "key": b["key"],
                    "fmt": b.get("fmt"),
                    "expect": b.get("expect"),
                    "kind": _kind(b["key"], b, baseline),
                    "locations": b["locations"],
                    "rule": "reported" if in_record(b["key"]) else None,
                    "cells": {},
                    "within": [],
                }
            rows[ident]["cells"][col["label"]] = _cell(b)
    ordered = sorted(rows.values(), key=lambda r: (min(map(_line, r["locations"]), default=0), r["id"]))
    for row in ordered:
        row["reasons"] = _row_reasons(row, labels, baseline, publishing)
        row["differs"] = bool(row["reasons"])
    summary = []
    for col in columns:
        label = col["label"]
        own = [r for r in ordered if label in r["cells"]]
        summary.append(
            {
                "label": label,
                "pins": col["pins"],
                "python": col.get("python") or {},
                "versions": col["versions"],
                "complete": bool(col["bindings"]),
                "failed": col["failed"],
                **{
                    field: sum(status_of(r["cells"][label]) == status for r in own) for status, field in _COUNTS.items()
                },
                "texts_changed": sum(any(x.startswith(f"{label}: text changed") for x in r["reasons"]) for r in own),
                "moved": sum(any(x.startswith(f"{label}: moved") for x in r["reasons"]) for r in own),
            }
        )
    return {
        "environments": summary,
        "reference": complete[0]["label"] if complete else None,
        "left_out": sorted(left_out),
        "rows": ordered,
        "differing": sum(r["differs"] for r in ordered),
    }


# ---- markdown ----------------------------------------------------------------------


def _short(text, limit=_SHOWN):
    return shorten(str(text), limit)


def _differ(n):
    return f"{n} differs" if n == 1 else f"{n} differ"


def _claim_counts(s):
    """("claims held", n), ("claims failed", n), ("claims inconclusive", n)
    of an environment's summary: an inconclusive claim is never counted as failed."""
    return [(f"claims {STATUS[status].counted}", s[field]) for status, field in _COUNTS.items()]


def _cell_text(c):
    if c is None:
        return "—"
    shown = code(_short(c["text"])) if c["text"] is not None else "(claim)"
    return shown + (f" {of(c).shown}" if of(c) else "")


def _asked(s):
    """What an environment asked for: its Python when its entry names one, and its pins."""
    python = (s.get("python") or {}).get("requested")
    return " ".join(([f"Python {python}"] if python else []) + s["pins"])


def _status(s):
    if s["complete"]:
        return "built"
    return "; ".join(f"{f['experiment']} failed, log `{f['log']}`" for f in s["failed"])


def to_markdown(matrix, publishing=Publishing()):
    envs, rows = matrix["environments"], matrix["rows"]
    lines = [
        "# Version matrix",
        "",
        f"{len(rows)} rows (claims, quoted error texts, printed values) in {len(envs)} environments; "
        f"{_differ(matrix['differing'])} beyond their agreement rule (marked **≠**). "
        f"Values are compared with the first built environment, `{matrix['reference']}`; "
        f"{STATUS[HOLDS].shown}: the row's claim holds there; "
        f"{', '.join(STATUS[k].shown for k in (FAILS, INCONCLUSIVE))}: it does not.",
        "",
    ]
    if matrix["left_out"]:
        lines += [
            f"Not run per environment (taken from the main build, not compared): {', '.join(matrix['left_out'])}.",
            "",
        ]
    lines += ["## Summary", ""]
    lines += table(
        [
            "Environment",
            "Pins",
            "Got",
            *[f"Claims {STATUS[status].counted}" for status in _COUNTS],
            "Texts changed",
            "Moved beyond rule",
            "Status",
        ],
        [
            [
                code(s["label"]),
                cell(_asked(s)),
                cell(publishing.versions_text(s["versions"])),
                *[str(n) for _, n in _claim_counts(s)],
                str(s["texts_changed"]),
                str(s["moved"]),
                cell(_status(s)),
            ]
            for s in envs
        ],
    )
    labels = [s["label"] for s in envs]

    def md_rows(selected):
        return table(
            ["", "Key", "Rule", *[code(label) for label in labels], "Why it differs"],
            [
                [
                    "**≠**" if r["differs"] else "",
                    code(r["key"]) + (f" `{r['fmt']}`" if r["fmt"] else ""),
                    cell(r["rule"] or r["kind"]),
                    *[_cell_text(r["cells"].get(label)) for label in labels],
                    cell("; ".join(r["reasons"] + [f"(within rule) {w}" for w in r["within"]])),
                ]
                for r in selected
            ],
        )

    differing = [r for r in rows if r["differs"]]
    lines += ["", "## Rows that differ", ""]
    lines += md_rows(differing) if differing else ["None: every row agrees within its rule in every environment."]
    lines += ["", "## All rows, in reading order", ""] + md_rows(rows)
    return "\n".join(lines) + "\n"


# ---- html: what the page shows, laid out by templates/matrix.html ---------------------


def _cell_data(c):
    """A value in one environment, with its claim's mark (articlekit.core.status);
    None where it has none."""
    if c is None:
        return None
    claim = {"css": of(c).css, "mark": of(c).shown, "message": c["message"]} if of(c) else None
    return {"text": None if c["text"] is None else _short(c["text"]), "raw": _short(c["raw"], 300), "claim": claim}


def _card_data(s, publishing):
    return {
        "label": s["label"],
        "pins": _asked(s),
        "got": publishing.versions_text(s["versions"]) or "nothing",
        "bad": bool(
            s["claims_failed"] or s["claims_inconclusive"] or s["texts_changed"] or s["moved"] or not s["complete"]
        ),
        # each failure with its log, laid out by the template (the markdown's
        # _status() writes the log in backticks)
        "failures": [] if s["complete"] else [{"what": f["experiment"], "log": f["log"]} for f in s["failed"]],
        "facts": [*_claim_counts(s), ("texts changed", s["texts_changed"]), ("moved beyond rule", s["moved"])],
    }


def _row_data(r, labels):
    first, *more = r["locations"] or [""]
    return {
        "key": r["key"],
        "fmt": r["fmt"],
        "differs": r["differs"],
        "where": first.rsplit("/", 1)[-1] + (f" +{len(more)}" if more else ""),
        "locations": ", ".join(r["locations"]),
        "rule": r["rule"] or r["kind"],
        "cells": [_cell_data(r["cells"].get(label)) for label in labels],
        "reasons": r["reasons"],
        "within": r["within"],
    }


def page_data(matrix, publishing=Publishing()):
    """What build/matrix.html shows, as plain values."""
    labels = [s["label"] for s in matrix["environments"]]
    rows = [_row_data(r, labels) for r in matrix["rows"]]
    differ = [r for r in rows if r["differs"]]
    return {
        "labels": labels,
        "cards": [_card_data(s, publishing) for s in matrix["environments"]],
        "rows": rows,
        "rows_that_differ": differ,
        "differing": _differ(len(differ)),
        "reference": matrix["reference"],
        "left_out": ", ".join(matrix["left_out"]) if matrix["left_out"] else None,
    }


def to_html(matrix, publishing=Publishing()):
    """build/matrix.html: the page_data laid out by templates/matrix.html."""
    return html_page("matrix.html", **page_data(matrix, publishing))


# ---- check: fail the target when an environment did not build -----------------------


def problems(matrix):
    return [
        f"matrix environment {s['label']!r}: {f['experiment']}: {f['reason']} (log: {f['log']})"
        for s in matrix["environments"]
        for f in s["failed"]
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m articlekit.review.matrix", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("column", help="bind one environment's results")
    p.add_argument("--label", required=True)
    p.add_argument("--pin", action="append", required=True)
    p.add_argument("--python", help="the Python the entry names, when it names one")
    p.add_argument("--environment", required=True)
    p.add_argument("--results", nargs="+", required=True)
    p.add_argument("--shared", nargs="*", default=[])
    p.add_argument("--article", required=True)
    p.add_argument("--baseline", help="baseline/published.yaml, bound as the main build binds it")
    p.add_argument("--out", required=True)
    add_publishing_argument(p)
    p = sub.add_parser("report", help="build/matrix.{json,md,html} from the columns")
    p.add_argument("columns", nargs="+")
    p.add_argument("--baseline")
    p.add_argument("--json", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--html", required=True)
    add_publishing_argument(p)
    p = sub.add_parser("check", help="fail, naming the logs, when an environment did not build")
    p.add_argument("matrix")
    args = parser.parse_args(argv)
    try:
        if args.command == "column":
            write_json(
                args.out,
                column(
                    args.label,
                    args.pin,
                    args.environment,
                    args.results,
                    args.shared,
                    args.article,
                    args.baseline,
                    args.publishing,
                    args.python,
                ),
            )
            return 0
        if args.command == "report":
            baseline = load_baseline(args.baseline) if args.baseline else None
            matrix = build([read_json(path) for path in args.columns], baseline, args.publishing)
            write_json(args.json, matrix)
            write_text_atomic(args.md, to_markdown(matrix, args.publishing))
            write_text_atomic(args.html, to_html(matrix, args.publishing))
            log.info(
                f"matrix: {len(matrix['rows'])} rows x {len(matrix['environments'])} environments, "
                f"{matrix['differing']} differ -> {args.html}"
            )
            return 0
        found = problems(read_json(args.matrix))
        for line in found:
            log.error(line)
        if found:
            log.error(f"the matrix page shows the other environments: {args.matrix.replace('.json', '.html')}")
        return 1 if found else 0
    except ArticlekitError as exc:  # BindError, BaselineError among them
        log.error(f"matrix: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(run_command("matrix", main, sys.argv[1:]))
