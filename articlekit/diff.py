"""This build vs the latest release snapshot: what changed, side by side.

    python -m articlekit diff --values build/values.json --bindings build/bindings.json \\
        [--baseline baseline/published.yaml] --json build/diff.json --md build/diff.md [SNAPSHOT]

Without SNAPSHOT (no release yet) it says so and compares nothing.

What counts as a change (the agreement rule of each key; the classes are
defined once, in articlekit/baseline.py):

- a key in the baseline uses its entry's class: `noise` changes only when
  either side breaks the entry's bound; `timing` only when this build's
  figure leaves the entry's band around the release's (or fails its check,
  e.g. speedup > 1); `exact` with a fmt must print the same at the
  edition's precision (the seeded table); `text` and `info` must be equal;
  other numbers (not_reproducible, erratum, revised) follow the float rule;
- a key not in the baseline: numbers under `timing.` may move within
  DEFAULT_TIMING_BAND of the release's (machines and load differ), item by
  item for a list (null only where the release had null); the spread of a
  timing (its samples, min, max, quartiles, interval, per-round ratios,
  calls per sample and load: SPREAD) describes the noise
  itself and is reported, not compared;
- the float rule: floating-point results may differ by FLOAT_ULPS units in
  the last place (a measured error, such as a max |diff|, in ULPs of 1.0,
  the scale of the values it compares): another CPU or BLAS rounds the last
  bits differently. Integers, shapes, booleans and texts must be equal.

The diff says when the machine changed (CPU, PyTorch's CPU capability,
BLAS): last-bit moves are then machine noise, listed as moves within the
rule, not as changes.

Reported separately: texts (error messages and other strings), the text each
shortcode printed in the article, claims whose result changed, and the
environment (library versions, and which experiments ran with a different
one). Moves inside the agreement rule are listed as such, not as changes.
"""

import argparse
import re
import sys

from articlekit.baseline import (FLOAT_ULPS, BaselineError, check_holds, load_baseline, same_value, same_when_printed,
                                 within_ulps)
from articlekit.fmt import format_value
from articlekit.jsonio import read_json, write_json, write_text_atomic
from articlekit.mdtable import cell, code, table, versions_text
from articlekit.release import SnapshotError, load_snapshot

DEFAULT_TIMING_BAND = (0.5, 2.0)
# ... and of a measured value: its interval, per-round ratios, the calls that
# filled a sample, the load it ran under.
SPREAD = re.compile(r"^timing\..*\.((samples|wall_samples|min|max|q1|q3|low|high)_ms|low|high|coverage|ratios"
                    r"|calls_per_sample)$|^timing\.load\.")
# Where and on what a build ran: the Environment section, not the numbers.
ENVIRONMENT = re.compile(r"^environment\.|\.(hostname|executor)$")
# Differ on every build by design; shown in the header, not as changes.
PER_BUILD_ENVIRONMENT = {"environment.build_date", "environment.build_time_utc", "environment.slurm_job_id"}


# ---- the agreement rule of one key -----------------------------------------------

def agreement_rule(key, baseline):
    """(label, test) where test(old, new) -> (same, why) decides whether the
    key changed beyond what its class allows."""
    entries = baseline.for_key(key) if baseline else []
    entry = entries[0] if entries else None
    if entry and entry.cls == "noise":
        return f"noise {entry.check}", lambda old, new: _within_noise(entry.check, old, new)
    if entry and entry.cls == "timing":
        if entry.band:
            return f"timing band {list(entry.band)}", lambda old, new: _within_band(entry.band, old, new)
        return f"timing {entry.check}", lambda old, new: _still_holds(entry.check, old, new)
    if entry and entry.cls == "exact" and entry.fmt and entry.key == key:
        return f"exact at the printed precision ({entry.fmt})", lambda old, new: same_when_printed(entry.fmt, old, new)
    if entry and entry.cls in ("text", "info"):
        return f"{entry.cls}: equal", _equal
    if SPREAD.match(key):
        return "timing spread: not compared", lambda old, new: (True, "the spread of a timing is reported, not compared")
    if key.startswith("timing."):
        return f"timing band {list(DEFAULT_TIMING_BAND)}", _timing_default
    return f"floats within {FLOAT_ULPS} ULPs, the rest equal", lambda old, new: within_ulps(key, old, new)


def _equal(old, new):
    same = same_value(old, new)
    return same, "equal" if same else "not equal"


def _within_noise(check, old, new):
    if same_value(old, new):
        return True, "equal"
    held = check_holds(check, old)[0], check_holds(check, new)[0]
    if all(held):
        return True, f"both meet '{check}'"
    side = "this build" if held[0] else "the release"
    return False, f"{side} breaks '{check}'" if held[0] != held[1] else f"neither side meets '{check}'"


def _within_band(band, old, new):
    if same_value(old, new):
        return True, "equal"
    olds, news = _leaves_of(old), _leaves_of(new)
    if len(olds) != len(news) or any((o is None) != (n is None) for o, n in zip(olds, news)):
        return False, "measured at different points"
    # null: not measured on either side (e.g. the loop above loop_max_T)
    pairs = [(i, o, n) for i, (o, n) in enumerate(zip(olds, news)) if o is not None]
    if not (_is_numbers([o for _, o, _ in pairs]) and _is_numbers([n for _, _, n in pairs])):
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


def _timing_default(old, new):
    measured = [v for v in _leaves_of(old) if v is not None]
    if _is_numbers(measured) and any(isinstance(v, float) for v in measured):
        return _within_band(DEFAULT_TIMING_BAND, old, new)
    return _equal(old, new)  # parameters and sizes under timing. are exact


# What a machine is, for floating-point purposes: a change here explains
# last-bit differences (vector width, BLAS kernels, summation order).
MACHINE_KEYS = ("cpu_model", "torch_cpu_capability", "blas")


def machine_change(old_values, new_values):
    """[(what, release, build)] for each machine property that differs
    (one that a side did not record is unknown, not a change)."""
    out = []
    for what in MACHINE_KEYS:
        before, after = old_values.get(f"environment.{what}"), new_values.get(f"environment.{what}")
        if before is not None and after is not None and before != after:
            out.append({"what": what, "release": before, "build": after})
    return out


def _leaves_of(value):
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves_of(item)]
    return [value]


def _is_numbers(items):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items)


# ---- comparing a build with a snapshot ------------------------------------------------

def _versions(values):
    return {lib: values.get(f"environment.{lib}") for lib in ("python", "numpy", "torch")}


def compare(snapshot, values_doc, bindings_doc, baseline=None):
    """The diff as plain data (what build/diff.json holds)."""
    old_values, new_values = snapshot["values"], values_doc.get("values", {})
    sources = {**snapshot.get("sources", {}), **values_doc.get("sources", {})}
    numbers, texts, within, environment, not_compared = [], [], [], [], []
    for key in sorted(set(old_values) & set(new_values)):
        old, new = old_values[key], new_values[key]
        if ENVIRONMENT.search(key):
            if key not in PER_BUILD_ENVIRONMENT and not same_value(old, new):
                what = key.split(".", 1)[1] if key.startswith("environment.") else key
                environment.append({"what": what, "release": old, "build": new})
            continue
        rule, test = agreement_rule(key, baseline)
        same, why = test(old, new)
        row = {"key": key, "rule": rule, "release": old, "build": new, "why": why,
               "script": (sources.get(key) or {}).get("script")}
        if same:
            if same_value(old, new):
                continue
            if SPREAD.match(key):
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
            printed.append({"binding": binding_id, "key": after.get("key"), "release": before.get("text"),
                            "build": after.get("text"), "locations": after.get("locations", [])})
        old_claim = (before or {}).get("claim") or {}
        new_claim = (after or {}).get("claim") or {}
        old_holds, new_holds = old_claim.get("holds"), new_claim.get("holds")
        if old_holds != new_holds:
            claims.append({"binding": binding_id, "key": (after or before).get("key"),
                           "expect": (new_claim or old_claim).get("expect"),
                           "release": _claim_state(old_holds, before), "build": _claim_state(new_holds, after),
                           "message": new_claim.get("message"),
                           "locations": (after or before).get("locations", [])})

    machine = machine_change(old_values, new_values)
    cause = ("machine noise: " + ", ".join(f"{m['what']} {m['release']} → {m['build']}" for m in machine)
             if machine else "same machine")
    for row in within:
        if " ULP" in row["why"]:
            row["why"] += f" ({cause})"

    added = sorted(set(new_values) - set(old_values))
    removed = sorted(set(old_values) - set(new_values))
    return {
        "against": {"label": snapshot["label"], "released_at": snapshot["released_at"],
                    "versions": _versions(old_values)},
        "build": {"versions": _versions(new_values), "built_at": new_values.get("environment.build_time_utc")},
        "summary": {
            "numbers_changed": len(numbers), "texts_changed": len(texts), "printed_changed": len(printed),
            "claims_changed": len(claims), "environment_changed": len(environment),
            "keys_added": len(added), "keys_removed": len(removed), "moved_within_rule": len(within),
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
    judge the change: '; the article claims < 1e-12: holds'."""
    notes = sorted({f"{b['claim']['expect']}: {'holds' if b['claim']['holds'] else 'FAILS'}"
                    for b in bindings_doc.get("bindings", {}).values()
                    if b.get("key") == key and b.get("claim")})
    return f"; the article claims {', '.join(notes)}" if notes else ""


def _claim_state(holds, binding):
    if binding is None:
        return "not in the article"
    if holds is None:
        return "no claim"
    return "holds" if holds else "fails"


# ---- Markdown --------------------------------------------------------------------

def _show(value, limit=120):
    """A value for a table cell: text as it is, anything else printed the
    way the article would, cut at `limit` characters."""
    if value is None or isinstance(value, str):
        return value
    text = format_value(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _code(value):
    return code(_show(value))


def no_release_markdown():
    return ("# What changed since the last release\n\n"
            "No release yet: there is nothing to compare this build with. `snakemake release` freezes\n"
            "this build as `releases/<label>/snapshot.json`; from then on every build's diff compares\n"
            "against the newest snapshot.\n")


def to_markdown(diff):
    a, s = diff["against"], diff["summary"]
    label = a["label"]
    lines = [
        f"# What changed since release `{label}`",
        "",
        f"Release `{label}`, frozen {a['released_at']}: {cell(versions_text(a['versions']))}.  ",
        f"This build{(' of ' + cell(diff['build']['built_at'])) if diff['build']['built_at'] else ''}: "
        f"{cell(versions_text(diff['build']['versions']))}.",
        "",
        "| numbers | texts | claims | printed in the article | environment | within their rule |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {s['numbers_changed']} | {s['texts_changed']} | {s['claims_changed']} | {s['printed_changed']} "
        f"| {s['environment_changed']} | {s['moved_within_rule']} |",
        "",
    ]
    machine = diff.get("machine") or []
    if machine:
        changed = "; ".join(f"{cell(m['what'])} {_code(m['release'])} → {_code(m['build'])}" for m in machine)
        lines += [f"**The machine changed** ({changed}). Floating-point results are judged within "
                  f"{FLOAT_ULPS} units in the last place: last-bit differences are machine noise (another "
                  "vector width or BLAS kernel sums in another order), listed under \"Moved within their "
                  "agreement rule\", not as changes.", ""]
    else:
        lines += ["Same machine as the release (CPU, PyTorch's CPU capability, BLAS): a number that moved "
                  "was moved by the code or a library, not by rounding on another CPU.", ""]
    if not any(s[k] for k in ("numbers_changed", "texts_changed", "claims_changed", "printed_changed",
                              "environment_changed", "keys_added", "keys_removed")):
        lines += ["Nothing changed beyond its agreement rule.", ""]

    def section(title, intro, head, rows):
        if rows:
            lines.extend([f"## {title}", "", intro, "", *table(head, rows), ""])

    section("Environment", "Libraries and machine; an experiment listed here ran with a different library.",
            ["what", f"release {label}", "this build"],
            [[cell(e["what"]), _code(e["release"]), _code(e["build"])] for e in diff["environment"]])
    section("Claims whose result changed", "What the prose says about a number, checked on both builds.",
            ["key", "claim", f"release {label}", "this build", "where"],
            [[_code(c["key"]), _code(c["expect"]), c["release"], c["build"], cell(", ".join(c["locations"]))]
             for c in diff["claims"]])
    section("Numbers that changed beyond their agreement rule",
            "The rule is the key's baseline class, else floats within the ULP tolerance and the rest exact "
            "(a band for timings); see `articlekit/diff.py`.",
            ["key", "rule", f"release {label}", "this build", "why", "script"],
            [[_code(r["key"]), cell(r["rule"]), _code(r["release"]), _code(r["build"]), cell(r["why"]),
              cell(r["script"])] for r in diff["numbers"]])
    section("Texts that changed", "Error messages and other strings, compared exactly.",
            ["key", f"release {label}", "this build", "script"],
            [[_code(r["key"]), _code(r["release"]), _code(r["build"]), cell(r["script"])] for r in diff["texts"]])
    section("Printed differently in the article", "The text a shortcode put into the prose.",
            ["key", f"release {label}", "this build", "where"],
            [[_code(p["key"]), _code(p["release"]), _code(p["build"]), cell(", ".join(p["locations"]))]
             for p in diff["printed"]])
    section("Moved within their agreement rule (not a change)", "Listed so that nothing moves unseen.",
            ["key", "rule", f"release {label}", "this build", "why"],
            [[_code(r["key"]), cell(r["rule"]), _code(r["release"]), _code(r["build"]), cell(r["why"])]
             for r in diff["within_rule"]])
    if diff["not_compared"]:
        lines += ["## Reported, not compared", "",
                  "The spread of each timing (samples, min, max, quartiles) describes the noise itself; "
                  "these moved: " + ", ".join(code(k) for k in diff["not_compared"]) + ".", ""]
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
    args = parser.parse_args(argv)
    try:
        values_doc, bindings_doc = read_json(args.values), read_json(args.bindings)
        baseline = load_baseline(args.baseline) if args.baseline else None
        snapshot = load_snapshot(args.snapshot) if args.snapshot else None
    except (SnapshotError, BaselineError, OSError, ValueError) as exc:
        print(f"diff: {exc}", file=sys.stderr)
        return 1
    if snapshot is None:
        write_json(args.json, {"against": None, "status": "no release yet"})
        write_text_atomic(args.md, no_release_markdown())
        print("diff: no release yet, nothing to compare", file=sys.stderr)
        return 0
    diff = compare(snapshot, values_doc, bindings_doc, baseline)
    diff["against"]["snapshot"] = args.snapshot
    write_json(args.json, diff)
    write_text_atomic(args.md, to_markdown(diff))
    s = diff["summary"]
    print(f"diff against {snapshot['label']}: {s['numbers_changed']} numbers, {s['texts_changed']} texts, "
          f"{s['claims_changed']} claims, {s['environment_changed']} environment entries changed "
          f"({s['moved_within_rule']} moved within their rule)", file=sys.stderr)
    return 0
