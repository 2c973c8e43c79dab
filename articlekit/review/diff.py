"""This build vs the latest release snapshot: what changed, side by side.

    python -m articlekit diff --values build/values.json --bindings build/bindings.json \\
        [--baseline baseline/published.yaml] --json build/diff.json --md build/diff.md [SNAPSHOT]

Without SNAPSHOT (no release yet) it says so and compares nothing. A
snapshot whose digest does not match its contents (edited by hand, cut
short) or that has none is refused, exit 1, naming the file and the first
entry that differs (articlekit/review/snapshot.py): a hand edit is never reported
as what a release printed.

What counts as a change is each key's agreement rule
(articlekit/review/agreement.py, `between_builds`): a key in the baseline
follows its entry's class, the one object articlekit/data/classes.py
holds for it, which judges the audit's values too; other keys follow the float rule (floats within FLOAT_ULPS
units in the last place, the rest equal), and numbers under the article's
volatile prefixes (publishing.volatile) a band around the release's; the
keys the article calls a measurement's spread (publishing.spread) are
reported but not compared, and those that differ on every build by design
(publishing.per_build) are not listed at all.

The diff says when the machine changed (the keys of publishing.machine):
last-bit moves are then machine noise, listed as moves within the rule, not
as changes. The environment record (articlekit/data/environment.py) is listed on
its own, never compared as a number.

Reported separately: texts (error messages and other strings), the text each
shortcode printed in the article, claims whose result changed, and the
environment (library versions, and which experiments ran with a different
one). Moves inside the agreement rule are listed as such, not as changes.
"""

import argparse

from articlekit.core.log import log
from articlekit.review.agreement import FLOAT_ULPS, between_builds
from articlekit.core.equality import same_value
from articlekit.data.baseline import load_baseline
from articlekit.article.bindings import load_bindings
from articlekit.core.errors import ArticlekitError
from articlekit.data.environment import built_at, field_name, is_environment, machine_change, recorded_versions
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import read_json
from articlekit.core.status import STATUS, of, status_of
from articlekit.review.pages import cell, code, counts_table, section, write_report
from articlekit.core.text import shorten
from articlekit.data.publishing import Publishing
from articlekit.data.publishing import add_argument as add_publishing_argument
from articlekit.review.snapshot import load_snapshot


# ---- comparing a build with a snapshot ------------------------------------------------


def compare(snapshot, values_doc, bindings_doc, baseline=None, publishing=Publishing()):
    """The diff as plain data (what build/diff.json holds)."""
    old_values, new_values = snapshot["values"], values_doc.get("values", {})
    sources = {**snapshot.get("sources", {}), **values_doc.get("sources", {})}
    numbers, texts, within, environment, not_compared = [], [], [], [], []
    for key in sorted(set(old_values) & set(new_values)):
        old, new = old_values[key], new_values[key]
        if publishing.is_per_build(key):
            continue  # differs on every build by design (publishing.per_build)
        if is_environment(key, publishing):
            if not same_value(old, new):
                environment.append({"what": field_name(key), "release": old, "build": new})
            continue
        rule, test = between_builds(key, baseline, publishing)
        same, why = test(old, new)
        row = {
            "key": key,
            "rule": rule,
            "release": old,
            "build": new,
            "why": why,
            "script": (sources.get(key) or {}).get("script"),
        }
        if same:
            if same_value(old, new):
                continue
            if publishing.is_spread(key):
                not_compared.append(key)
            else:
                within.append(row)
        elif isinstance(old, str) or isinstance(new, str):
            texts.append(row)
        else:
            row["why"] += _claims_note(key, bindings_doc)
            numbers.append(row)

    # Which experiments ran with a different library than the release: the
    # ones an upgrade reran.
    old_versions, new_versions = snapshot.get("versions", {}), values_doc.get("versions", {})
    for experiment in sorted(set(old_versions) & set(new_versions)):
        for lib in sorted(set(old_versions[experiment]) | set(new_versions[experiment])):
            before, after = old_versions[experiment].get(lib), new_versions[experiment].get(lib)
            if before != after:
                environment.append({"what": f"{experiment} ran with {lib}", "release": before, "build": after})

    old_bindings, new_bindings = snapshot.get("bindings", {}), bindings_doc.get("bindings", {})
    printed, claims = [], []
    for binding_id in sorted(set(old_bindings) | set(new_bindings)):
        before, after = old_bindings.get(binding_id), new_bindings.get(binding_id)
        if before and after and before.get("text") != after.get("text"):
            printed.append(
                {
                    "binding": binding_id,
                    "key": after.get("key"),
                    "release": before.get("text"),
                    "build": after.get("text"),
                    "locations": after.get("locations", []),
                }
            )
        old_claim = (before or {}).get("claim") or {}
        new_claim = (after or {}).get("claim") or {}
        # by status: a claim gone from failed to inconclusive changed too (it holds in neither)
        old_status, new_status = status_of(old_claim), status_of(new_claim)
        if old_status != new_status:
            claims.append(
                {
                    "binding": binding_id,
                    "key": (after or before).get("key"),
                    "expect": (new_claim or old_claim).get("expect"),
                    "release": _claim_state(old_status, before),
                    "build": _claim_state(new_status, after),
                    "message": new_claim.get("message"),
                    "locations": (after or before).get("locations", []),
                }
            )

    machine = machine_change(old_values, new_values, publishing)
    cause = (
        "machine noise: " + ", ".join(f"{m['what']} {m['release']} → {m['build']}" for m in machine)
        if machine
        else "same machine"
    )
    for row in within:
        if " ULP" in row["why"]:
            row["why"] += f" ({cause})"

    added = sorted(set(new_values) - set(old_values))
    removed = sorted(set(old_values) - set(new_values))
    return {
        "against": {
            "label": snapshot["label"],
            "released_at": snapshot["released_at"],
            "versions": recorded_versions(snapshot, publishing),
        },
        "build": {"versions": recorded_versions(values_doc, publishing), "built_at": built_at(new_values, publishing)},
        "summary": {
            "numbers_changed": len(numbers),
            "texts_changed": len(texts),
            "printed_changed": len(printed),
            "claims_changed": len(claims),
            "environment_changed": len(environment),
            "keys_added": len(added),
            "keys_removed": len(removed),
            "moved_within_rule": len(within),
        },
        "machine": machine,
        "environment": environment,
        "numbers": numbers,
        "texts": texts,
        "claims": claims,
        "printed": printed,
        "within_rule": within,
        "not_compared": not_compared,
        "keys_added": added,
        "keys_removed": removed,
    }


def _claims_note(key, bindings_doc):
    """What the article claims about a changed number, so the reader can
    judge the change: '; the article claims < 1e-12: holds' (its status's word)."""
    notes = sorted(
        {
            f"{b['claim']['expect']}: {of(b['claim']).word}"
            for b in bindings_doc.get("bindings", {}).values()
            if b.get("key") == key and b.get("claim")
        }
    )
    return f"; the article claims {', '.join(notes)}" if notes else ""


def _claim_state(status, binding):
    if binding is None:
        return "not in the article"
    if status is None:
        return "no claim"
    return STATUS[status].word


# ---- Markdown --------------------------------------------------------------------


def _show(value, limit=120):
    """A value for a table cell: text as it is, anything else printed the
    way the article would, cut at `limit` characters."""
    if value is None or isinstance(value, str):
        return value
    return shorten(format_value(value), limit, mark="...")


def _code(value):
    return code(_show(value))


def environment_text(versions, publishing):
    """What one side of the diff ran with, for the header: 'Python 3.11.7,
    NumPy 2.4.6'; a library it did not record is said to be unrecorded, and
    an article that declares no library but Python says so, so that a side
    never reads as nothing at all."""

    def name(lib):
        return "Python" if lib == "python" and lib not in publishing.libraries else publishing.display(lib)

    text = ", ".join(f"{name(lib)} {version}" for lib, version in versions.items() if version) or "no version recorded"
    unrecorded = [name(lib) for lib, version in versions.items() if not version]
    if unrecorded and len(unrecorded) < len(versions):
        text += f" ({', '.join(unrecorded)}: not recorded)"
    if not set(versions) - {"python"}:
        text += "; no other library declared (publishing.libraries)"
    return text


def no_release_markdown():
    return (
        "# What changed since the last release\n\n"
        "No release yet: there is nothing to compare this build with. `snakemake release` freezes\n"
        "this build as `releases/<label>/snapshot.json`; from then on every build's diff compares\n"
        "against the newest snapshot.\n"
    )


def to_markdown(diff, publishing=Publishing()):
    a, s = diff["against"], diff["summary"]
    label = a["label"]
    lines = [
        f"# What changed since release `{label}`",
        "",
        f"Release `{label}`, frozen {a['released_at']}: {cell(environment_text(a['versions'], publishing))}.  ",
        f"This build{(' of ' + cell(diff['build']['built_at'])) if diff['build']['built_at'] else ''}: "
        f"{cell(environment_text(diff['build']['versions'], publishing))}.",
        "",
        *counts_table(
            [
                ("numbers", s["numbers_changed"]),
                ("texts", s["texts_changed"]),
                ("claims", s["claims_changed"]),
                ("printed in the article", s["printed_changed"]),
                ("environment", s["environment_changed"]),
                ("within their rule", s["moved_within_rule"]),
            ]
        ),
        "",
    ]
    machine = diff.get("machine") or []
    if machine:
        changed = "; ".join(f"{cell(m['what'])} {_code(m['release'])} → {_code(m['build'])}" for m in machine)
        lines += [
            f"**The machine changed** ({changed}). Floating-point results are judged within "
            f"{FLOAT_ULPS} units in the last place: last-bit differences are machine noise (another "
            "vector width or BLAS kernel sums in another order), listed under \"Moved within their "
            "agreement rule\", not as changes.",
            "",
        ]
    elif publishing.machine:
        keys = ", ".join(field_name(key) for key in publishing.machine)
        lines += [
            f"Same machine as the release ({cell(keys)}): a number that moved "
            "was moved by the code or a library, not by rounding on another CPU.",
            "",
        ]
    if not any(
        s[k]
        for k in (
            "numbers_changed",
            "texts_changed",
            "claims_changed",
            "printed_changed",
            "environment_changed",
            "keys_added",
            "keys_removed",
        )
    ):
        lines += ["Nothing changed beyond its agreement rule.", ""]

    lines += section(
        "Environment",
        "Libraries and machine; an experiment listed here ran with a different library.",
        ["what", f"release {label}", "this build"],
        [[cell(e["what"]), _code(e["release"]), _code(e["build"])] for e in diff["environment"]],
    )
    lines += section(
        "Claims whose result changed",
        "What the prose says about a number, checked on both builds.",
        ["key", "claim", f"release {label}", "this build", "where"],
        [
            [_code(c["key"]), _code(c["expect"]), c["release"], c["build"], cell(", ".join(c["locations"]))]
            for c in diff["claims"]
        ],
    )
    lines += section(
        "Numbers that changed beyond their agreement rule",
        "The rule is the key's baseline class, else floats within the ULP tolerance and the rest exact "
        "(a band for timings); see `articlekit/review/agreement.py`.",
        ["key", "rule", f"release {label}", "this build", "why", "script"],
        [
            [
                _code(r["key"]),
                cell(r["rule"]),
                _code(r["release"]),
                _code(r["build"]),
                cell(r["why"]),
                cell(r["script"]),
            ]
            for r in diff["numbers"]
        ],
    )
    lines += section(
        "Texts that changed",
        "Error messages and other strings, compared exactly.",
        ["key", f"release {label}", "this build", "script"],
        [[_code(r["key"]), _code(r["release"]), _code(r["build"]), cell(r["script"])] for r in diff["texts"]],
    )
    lines += section(
        "Printed differently in the article",
        "The text a shortcode put into the prose.",
        ["key", f"release {label}", "this build", "where"],
        [
            [_code(p["key"]), _code(p["release"]), _code(p["build"]), cell(", ".join(p["locations"]))]
            for p in diff["printed"]
        ],
    )
    lines += section(
        "Moved within their agreement rule (not a change)",
        "Listed so that nothing moves unseen.",
        ["key", "rule", f"release {label}", "this build", "why"],
        [
            [_code(r["key"]), cell(r["rule"]), _code(r["release"]), _code(r["build"]), cell(r["why"])]
            for r in diff["within_rule"]
        ],
    )
    if diff["not_compared"]:
        lines += [
            "## Reported, not compared",
            "",
            "The spread of each timing (samples, min, max, quartiles) describes the noise itself; "
            "these moved: " + ", ".join(code(k) for k in diff["not_compared"]) + ".",
            "",
        ]
    if diff["keys_added"] or diff["keys_removed"]:
        lines += ["## Keys added or removed", ""]
        lines += [f"- added {code(k)}" for k in diff["keys_added"]]
        lines += [f"- removed {code(k)}" for k in diff["keys_removed"]]
        lines.append("")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit diff", description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", nargs="?", help="releases/<label>/snapshot.json; none before the first release")
    parser.add_argument("--values", required=True, help="build/values.json")
    parser.add_argument("--bindings", required=True, help="build/bindings.json")
    parser.add_argument("--baseline", help="baseline/published.yaml: agreement classes of the keys it lists")
    parser.add_argument("--json", required=True, help="where to write the diff as data")
    parser.add_argument("--md", required=True, help="where to write the diff as Markdown")
    add_publishing_argument(parser)
    args = parser.parse_args(argv)
    try:
        values_doc, bindings_doc = read_json(args.values), load_bindings(args.bindings)
        baseline = load_baseline(args.baseline) if args.baseline else None
        snapshot = load_snapshot(args.snapshot) if args.snapshot else None
    except ArticlekitError as exc:  # SnapshotError, BaselineError among them
        log.error(f"diff: {exc}")
        return 1
    if snapshot is None:
        write_report(args.json, {"against": None, "status": "no release yet"}, {args.md: no_release_markdown()})
        log.info("diff: no release yet, nothing to compare")
        return 0
    diff = compare(snapshot, values_doc, bindings_doc, baseline, args.publishing)
    diff["against"]["snapshot"] = args.snapshot
    write_report(args.json, diff, {args.md: to_markdown(diff, args.publishing)})
    s = diff["summary"]
    log.info(
        f"diff against {snapshot['label']}: {s['numbers_changed']} numbers, {s['texts_changed']} texts, "
        f"{s['claims_changed']} claims, {s['environment_changed']} environment entries changed "
        f"({s['moved_within_rule']} moved within their rule)"
    )
    return 0
