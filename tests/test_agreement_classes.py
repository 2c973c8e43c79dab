"""One object per agreement class, and everyone asks it.

An entry's class (`exact`, `noise`, `timing`, ...) says how far a value may
be from the one printed: against the edition (the audit, the article's
departures), between two builds (the diff, the version matrix) and for a
rerun (`reproduce`). Each class is one object of articlekit/data/classes.py;
these tests hold the package to that:

- no module but that one decides anything by an entry's class name;
- the audit and the diff agree on every key of both articles (this one and
  examples/summation): a value the audit takes for the edition's (the same,
  or moved within its class) is no change to the diff, and one the audit
  says moved is one;
- a class changed in its object is changed for the audit, the diff and the
  matrix at once, and for the baseline's schema;
- a claim's thresholds are read by the claim grammar, not by a pattern of
  their own that skipped what it did not know;
- the table of what "reproduced" means is the classes' own, in the docs as
  on the audit page.
"""

import ast
import math
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from articlekit.article.bind import bind
from articlekit.article.departures import departures, unexplained_message
from articlekit.core.claims import Bound, ClaimError, Interval, simple_bound
from articlekit.core.jsonio import read_json
from articlekit.core.keys import lookup, split_key
from articlekit.data import baseline as baselinelib
from articlekit.data import publishing
from articlekit.data.baseline import BaselineError, load_baseline
from articlekit.data.classes import (
    AGREEMENT,
    EXPECTED,
    MOVED_VALUE,
    REPRODUCED,
    UNEXPECTED,
    Noise,
    agreement,
    equal,
    value_kind,
)
from articlekit.data.edition import against_edition, threshold_conflicts
from articlekit.data.publishing import Publishing
from articlekit.data.values import merge
from articlekit.review import matrix as matrixlib
from articlekit.review.agreement import CAME_BACK, NOT_BACK, NOT_COMPARED, came_back
from articlekit.review.audit import audit, means_table
from articlekit.review.diff import compare
from articlekit.review.reproduce import report_key

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "articlekit"
CLASSES_MODULE = PACKAGE / "data" / "classes.py"
BASELINES = [ROOT / "baseline/published.yaml", ROOT / "examples/summation/baseline/published.yaml"]


# ---- no if-chains on class names ----------------------------------------------------


def _decides_by_class(node):
    """A comparison whose side is an entry's class (`entry.cls == ...`,
    `row["class"] in (...)`), or a class looked up in the registry by name
    (`AGREEMENT[e.cls]`) instead of asked for by its entry."""

    def is_class(side):
        return (isinstance(side, ast.Attribute) and side.attr == "cls") or (
            isinstance(side, ast.Subscript) and isinstance(side.slice, ast.Constant) and side.slice.value == "class"
        )

    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and node.value.id == "AGREEMENT"
    return isinstance(node, ast.Compare) and any(map(is_class, [node.left, *node.comparators]))


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_no_module_but_the_classes_decides_by_a_class_name():
    """The string if-chains (`entry.cls == TEXT`) in the audit's judgement,
    the agreement between builds, the matrix and the departures were how a
    change to one class came to touch 7 files: each now asks the class, by
    its entry (articlekit.data.classes.agreement), never the registry by name."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == CLASSES_MODULE or "skeleton/article" in path.as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _decides_by_class(node):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == [], "ask articlekit.data.classes.agreement(entry) instead:\n" + "\n".join(found)


# ---- the audit and the diff agree on every key ------------------------------------------


def variants(value):
    """The edition's value, and values near and far from it: the last bit,
    the fifth digit, 0.1 %, 3x and 50x, the sign; a text rewrapped and a
    text changed."""
    if isinstance(value, bool):
        return [value, not value]
    if isinstance(value, int):
        return [value, value + 1]
    if isinstance(value, float):
        if math.isnan(value):
            return [value, 0.0]
        return [value, math.nextafter(value, math.inf), value * 1.00001, value * 1.001, value * 3, value * 50, -value]
    if isinstance(value, str):
        words = value.split()
        return [value, "\n    ".join(words), value + " (changed)"]
    if isinstance(value, list) and value:
        return [value, *([v, *value[1:]] for v in variants(value[0])[1:])]
    return [value]


def article(path):
    """(the article's baseline, its publishing section): what its audit and its diff read."""
    root = path.parent.parent
    config = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))
    return load_baseline(path), publishing.parse(config.get("publishing"))


def _placed(whole, path, item):
    """`whole` (the key's value; None: the item alone, copied to fill the
    list) with `item` at `path` (list indices)."""
    if not path:
        return item
    if whole is None:
        return [_placed(None, path[1:], item)] * (path[0] + 1)
    whole = list(whole)
    whole[path[0]] = _placed(whole[path[0]], path[1:], item)
    return whole


def audited_and_diffed(baseline, publishing_, entry):
    """For each value near and far from the edition's at `entry`'s key (its
    item of the key's value, for an entry on one item): (the value, the
    audit's verdicts of the key's entries with a rule, whether the diff,
    holding the edition as the release, sees a change)."""
    versions = baseline.edition["versions"]  # this build runs the edition's libraries: no version explains a text
    base, path = split_key(entry.key)
    judges = [e for e in baseline.for_key(base) if agreement(e).rule]
    whole = next((e.value for e in judges if e.key == base), None)
    release = _placed(whole, path, entry.value)
    for value in variants(entry.value):
        build = _placed(whole, path, value)
        verdicts = [(e, *against_edition(e, lookup({base: build}, e.key), versions, versions)) for e in judges]
        snapshot = {"label": "edition", "released_at": "then", "values": {base: release}}
        diff = compare(snapshot, {"values": {base: build}}, {"bindings": {}}, baseline, publishing_)
        yield value, verdicts, any(r["key"] == base for r in diff["numbers"] + diff["texts"])


@pytest.mark.parametrize("path", BASELINES, ids=["attention", "summation"])
@pytest.mark.parametrize("order", ["as written", "reversed"])
def test_the_audit_and_the_diff_agree_on_every_key(path, order):
    """Every entry of the article's baseline that says how its key may move
    (every class but the ones that defer to another entry: erratum, revised,
    not reproducible, cited), at the edition's value and near and far from
    it, read with the article's own publishing section: the diff, holding
    the edition as the release, sees a change exactly when the audit says
    one of the key's entries moved beyond its class. A key printed twice
    (.6f in the table, .2% in the prose; an item and the whole list) is
    judged by every entry on it, in any order: the diff judged it by the
    first entry alone, so listing the coarser print first hid a move the
    audit reported."""
    baseline, publishing_ = article(path)
    if order == "reversed":
        baseline = replace(baseline, entries=baseline.entries[::-1])
    ruled = [e for e in baseline.entries if e.key and agreement(e).rule]
    deferring = {e.cls for e in baseline.entries if e not in ruled}
    assert len(ruled) >= 4 and deferring <= {"erratum", "revised", "not_reproducible", "cited"}
    disagree = []
    for entry in ruled:
        for value, verdicts, changed in audited_and_diffed(baseline, publishing_, entry):
            moved = [
                f"{e.id} {status} ({why})" for e, status, shown, why in verdicts if status not in (REPRODUCED, EXPECTED)
            ]
            if bool(moved) != changed:
                disagree.append(
                    f"{entry.id} ({entry.cls}) at {value!r}: audit "
                    f"{'; '.join(moved) or 'as the edition'}; diff {'changed' if changed else 'unchanged'}"
                )
    assert disagree == []


TWO_PRINTS = """\
edition: {title: fixture, source: tests/test_agreement_classes.py, date: "2026-10-12", versions: {python: "3.11"}}
entries:
  - id: prose.weight
    class: exact
    published: "12%"
    value: 0.1234
    key: scaling.weight
    fmt: ".0%"
    where: {section: prose, quote: "about 12%"}
  - id: table.weight
    class: exact
    published: "0.1234"
    value: 0.1234
    key: scaling.weight
    fmt: ".4f"
    where: {section: table, quote: "0.1234"}
"""


def test_a_key_printed_at_two_precisions_changes_when_either_print_changes(tmp_path):
    """The prose prints 12%, the table 0.1234: at 0.1239 the table's digits
    moved, and the audit, the diff, the matrix's rule and a rerun all say so
    (the diff, the matrix and `reproduce` read only the first entry's .0%)."""
    path = tmp_path / "published.yaml"
    path.write_text(TWO_PRINTS, encoding="utf-8")
    baseline = load_baseline(path)
    versions = baseline.edition["versions"]
    assert [against_edition(e, 0.1239, versions, versions)[0] for e in baseline.entries] == [REPRODUCED, UNEXPECTED]
    snapshot = {"label": "r", "released_at": "then", "values": {"scaling.weight": 0.1234}}
    (row,) = compare(snapshot, {"values": {"scaling.weight": 0.1239}}, {"bindings": {}}, baseline, Publishing())[
        "numbers"
    ]
    assert row["why"] == "printed 0.1234 then, 0.1239 now" and ".0%" in row["rule"] and ".4f" in row["rule"]
    assert came_back("scaling.weight", 0.1234, 0.1239, baseline, Publishing())[0] == NOT_BACK
    assert came_back("scaling.weight", 0.1234, 0.12341, baseline, Publishing())[0] == CAME_BACK


# ---- one class changed in one place -----------------------------------------------------

NOISE_BASELINE = """\
edition: {title: fixture, source: tests/test_agreement_classes.py, date: "2026-10-12", versions: {python: "3.11"}}
entries:
  - id: parity.diff
    class: noise
    published: "2.22e-16"
    value: 2.220446049250313e-16
    key: parity.diff
    fmt: ".2e"
    check: "< 1e-12"
    where: {section: parity, quote: "a difference of 2.22e-16"}
"""
NOISE_ARTICLE = 'The difference is {{< value parity.diff fmt=".2e" expect="< 1e-12" >}}.\n\n{{< provenance >}}\n'


class EveryMoveCounts(Noise):
    """The noise class, edited: a move within the bound is a move too."""

    def moved(self, entry, value, shown, versions):
        return UNEXPECTED, f"noise, strictly: printed {entry.published}, regenerated {shown}", MOVED_VALUE

    def fix(self, cause, entry, closest=None):
        return "noise, strictly: restore the printed digits"

    def between_builds(self, entry, key):
        return "noise, strictly", equal

    def came_back(self, entry, key, old, new):
        return equal(old, new)


def _judged_five_ways(baseline):
    """For a noise value that moved from 2.22e-16 to 4.44e-16: the audit's
    status, whether the diff sees a change, whether the matrix marks the
    row, `reproduce`'s verdict on a rerun, and what the article's departures
    section says of it (None: nothing departs)."""
    before, after = 2.220446049250313e-16, 4.440892098500626e-16
    values = merge(
        [("parity.json", {"experiment": "parity", "script": "experiments/parity.py", "values": {"diff": after}})]
    )
    (row,) = audit(baseline, values, {"bindings": {}})["entries"]
    release = {"label": "r", "released_at": "then", "values": {"parity.diff": before}}
    diff = compare(release, values, {"bindings": {}}, baseline, Publishing())
    columns = []
    for label, value in (("a", before), ("b", after)):
        doc = merge(
            [("parity.json", {"experiment": "parity", "script": "experiments/parity.py", "values": {"diff": value}})]
        )
        columns.append(
            {
                "label": label,
                "pins": [],
                "installed": True,
                "log": "x.log",
                "versions": {},
                "failed": [],
                "shared": [],
                "bindings": bind("index.qmd", NOISE_ARTICLE, doc, strict=False),
            }
        )
    (matrix_row,) = matrixlib.build(columns, baseline)["rows"]
    rerun = report_key(
        "parity.diff", {"parity.diff": before}, values["values"], baseline, Publishing(), [".2e"], lambda line: None
    )
    departed = [
        unexplained_message(d) if not d["verdict"].explained else d["kind"] for d in departures(baseline, values)
    ]
    return row["status"], bool(diff["numbers"]), matrix_row["differs"], rerun, departed


def test_a_class_changed_in_its_object_changes_the_audit_the_diff_the_matrix_reproduce_and_the_departures(
    tmp_path, monkeypatch
):
    """One object edited, in one place (the registry of articlekit.data.classes),
    and every judge follows it: none holds a copy of its own."""
    path = tmp_path / "published.yaml"
    path.write_text(NOISE_BASELINE, encoding="utf-8")
    baseline = load_baseline(path)
    # both meet < 1e-12: noise, a move as expected, and nothing to say in the departures
    assert _judged_five_ways(baseline) == (EXPECTED, False, False, CAME_BACK, [])
    monkeypatch.setitem(AGREEMENT, "noise", EveryMoveCounts())
    status, diffed, marked, rerun, (departure,) = _judged_five_ways(baseline)
    assert (status, diffed, marked, rerun) == (UNEXPECTED, True, True, NOT_BACK)
    assert "noise, strictly: printed 2.22e-16, regenerated 4.44e-16" in departure
    assert "noise, strictly: restore the printed digits" in departure


class TrustsItsEdition(Noise):
    """The noise class, edited: it no longer checks its entries against themselves."""

    def problems(self, entry, edition):
        return []


def test_an_entry_against_itself_is_its_class_s_check(tmp_path, monkeypatch):
    """The baseline's own check of an entry (its published value meets its
    bound, prints as published) is asked of the class: edited there, the
    baseline follows."""
    path = tmp_path / "published.yaml"
    path.write_text(NOISE_BASELINE.replace('check: "< 1e-12"', 'check: "< 1e-17"'), encoding="utf-8")
    with pytest.raises(
        BaselineError,
        match=r"published.yaml:3: entry 'parity.diff': the published value "
        r"2.220446049250313e-16 fails its own check '< 1e-17'",
    ):
        load_baseline(path)
    monkeypatch.setitem(AGREEMENT, "noise", TrustsItsEdition())
    assert load_baseline(path).entries[0].check == "< 1e-17"


def test_the_schema_takes_what_each_class_requires_from_its_object(tmp_path, monkeypatch):
    """The baseline schema's per-class rules are the classes' fragments: a
    class that comes to require a field is refused without it, by the same
    schema check, naming the entry."""
    schema = baselinelib._load_schema()
    assert schema["properties"]["entries"]["items"]["allOf"][0] == AGREEMENT["exact"].schema()
    path = tmp_path / "published.yaml"
    path.write_text(NOISE_BASELINE.replace('    fmt: ".2e"\n', ""), encoding="utf-8")
    load_baseline(path)
    monkeypatch.setattr(Noise, "requires", ("key", "value", "check", "fmt"))
    with pytest.raises(BaselineError, match=r"entry 'parity.diff': \(top level\)|'fmt' is a required property"):
        load_baseline(path)


# ---- thresholds: the claim grammar's own ------------------------------------------------


@pytest.mark.parametrize(
    "claim, bound",
    [
        ("> 0.1", Bound(">", 0.1)),
        ("<= 1e-12", Bound("<", 1e-12)),
        ("< 5", Bound("<", 5)),
        ("between 1e-8 and 2e-6", None),
        ("> 1 and < 10", None),
        ("all < 1", None),
        ("== 0.0", None),
        ("> timing.loop.median_ms", None),
        ('contains "x"', None),
    ],
)
def test_a_claims_threshold_is_read_by_the_claim_grammar(claim, bound):
    assert simple_bound(claim) == bound


def test_two_thresholds_are_found_in_any_spelling_and_a_claim_that_does_not_parse_is_an_error():
    """Thresholds compare as numbers ("> +1e-1" is "> 0.1"); a claim the
    grammar cannot read is an error, where the audit's own pattern skipped
    it without a word."""
    assert threshold_conflicts("> 0.1", ["> .2", "> +1e-1", ">= 0.1", "< 5", "between 0 and 1"]) == ["> .2"]
    with pytest.raises(ClaimError):
        threshold_conflicts("> 0.1", ["> 0.1 and"])


# ---- what "reproduced" means ----------------------------------------------------------


def test_the_table_of_what_reproduced_means_is_the_classes_own_in_the_docs_and_on_the_audit_page():
    lines = means_table()
    assert len(lines) == 2 + len(AGREEMENT) + 2  # head, rule, one row per class, the measured and unlisted keys
    docs = (ROOT / "docs/reliability.md").read_text(encoding="utf-8")
    missing = [line for line in lines if line not in docs.splitlines()]
    assert missing == [], (
        "docs/reliability.md lacks rows of the table (print means_table() and paste it):\n" + "\n".join(missing)
    )
    report = audit(load_baseline(BASELINES[1]), {"values": {}, "sources": {}}, {"bindings": {}})
    from articlekit.review.audit import to_html, to_markdown

    assert all(line in to_markdown(report).splitlines() for line in lines)
    page = to_html(report)
    assert 'id="reproduced-means"' in page and "<code>X.estimate</code>" in page


def test_a_measured_value_came_back_inside_the_builds_interval_or_overlapping_it():
    """Judged by the interval, whatever the key is called: the rule '> 1' of
    a timing says nothing about whether the rerun found the same figure."""
    build = Interval(8.92, 8.80, 9.05)
    inside = came_back("x.ratio.estimate", build, Interval(9.0, 8.5, 9.4), None, Publishing())
    overlapping = came_back("x.ratio.estimate", build, Interval(9.2, 9.0, 9.5), None, Publishing())
    apart = came_back("x.ratio.estimate", build, Interval(10.19, 9.92, 10.61), None, Publishing())
    assert inside[0] == overlapping[0] == CAME_BACK and apart[0] == NOT_BACK
    assert "inside the build's interval" in inside[2]
    assert "overlaps it" in overlapping[2] and "inside" not in overlapping[2].split(",")[0].split("outside")[0]
    assert "do not overlap" in apart[2]


def test_a_value_came_back_by_its_class_else_by_the_digits_the_article_prints(tmp_path):
    path = tmp_path / "published.yaml"
    path.write_text(NOISE_BASELINE, encoding="utf-8")
    baseline = load_baseline(path)
    # noise: the bound, not the digits
    assert came_back("parity.diff", 2.2e-16, 9e-16, baseline, Publishing())[0] == CAME_BACK
    assert came_back("parity.diff", 2.2e-16, 1e-9, baseline, Publishing())[0] == NOT_BACK
    # a key no entry governs: each format the article prints it with
    assert came_back("a.b", 0.92194, 0.92191, None, Publishing(), [".2f"])[0] == CAME_BACK
    verdict, rule, why = came_back("a.b", 0.92194, 0.92191, None, Publishing(), [".2f", ".6f"])
    assert verdict == NOT_BACK and why == "printed 0.921940 in the build, 0.921910 now" and ".6f" in rule
    # printed nowhere: the float rule
    assert came_back("a.b", 1.0, math.nextafter(1.0, 2), None, Publishing())[0] == CAME_BACK
    assert came_back("a.b", 1.0, 1.001, None, Publishing())[0] == NOT_BACK


def test_a_version_is_reported_not_compared():
    from articlekit.data.baseline import Entry

    entry = Entry(id="env.numpy", cls="info", published="2.4.6", where={}, value="2.4.6", key="environment.numpy")
    assert AGREEMENT["info"].came_back(entry, entry.key, "2.4.6", "2.5.4")[0] is None
    baseline = type("B", (), {"for_key": lambda self, key: [entry]})()
    assert came_back("environment.numpy", "2.4.6", "2.5.4", baseline, Publishing())[0] == NOT_COMPARED


# ---- what kind of value ---------------------------------------------------------------


@pytest.mark.parametrize(
    "key, value, kind",
    [
        ("scaling.dk64.dot_std", 7.32, "measured"),
        ("errors.wrong_axis.axis_last_row_sums", [1.0, 0.9999], "measured"),
        ("scaling.params.n_keys", 2000, "setting"),
        ("scaling.params.d_k", [16, 64], "setting"),
        ("errors.x.message", "boom", "text"),
        ("multihead.output_shape", [5, 16], "discrete"),
        ("mask.error_raised", False, "discrete"),
        ("example.causal.max_masked_weight", 0.0, "discrete"),
        ("errors.underflow.ratio", float("nan"), "discrete"),
        ("environment.numpy", "2.4.6", "version"),
    ],
)
def test_the_kind_of_a_value_comes_from_its_key_and_its_value(key, value, kind):
    assert value_kind(key, value) == kind


def test_the_kind_of_an_entry_follows_the_edition_and_its_class():
    from articlekit.data.baseline import Entry

    noise = Entry(id="n", cls="noise", published="0", where={}, value=0.0, key="parity.diff", check="< 1")
    assert value_kind(noise.key, 0.0, noise) == "measured"  # a noise is a measurement, whatever it came out as
    erratum = Entry(id="e", cls="erratum", published="1e-9", where={}, value=1e-9, key="x.weight", check="== 0")
    assert value_kind(erratum.key, 0.0, erratum) == "measured"  # the edition printed a measurement
    info = Entry(id="i", cls="info", published="Windows", where={}, value="Windows", key="x.os")
    assert value_kind(info.key, "Linux", info) == "version"


@pytest.mark.slow
def test_the_audit_of_a_real_build_counts_measured_values_apart(built_project):
    """build/audit.json's 'reproduced' counts measured values; a setting
    echoed (a key under <experiment>.params) and what else came back as
    printed are counted apart, and the summary line says so."""
    report = read_json(built_project / "build/audit.json")
    rows, s = report["entries"], report["summary"]
    settings = [r for r in rows if r["key"] and ".params." in r["key"] and r["status"] == REPRODUCED]
    assert settings and s["by_kind"]["setting"]["reproduced"] == len(settings)
    back = [r for r in rows if r["status"] == REPRODUCED]
    assert s["reproduced"] + s["as_printed"] == len(back)
    assert s["reproduced"] == sum(1 for r in back if r["kind"] == "measured") < len(back) - len(settings)
    assert all(isinstance(r["raw"], float) or isinstance(r["raw"], list) for r in back if r["kind"] == "measured")
    md = (built_project / "build/audit.md").read_text(encoding="utf-8")
    assert f"Only a measured value that came back counts as reproduced: {s['reproduced']} entries" in md
    assert "| settings echoed | " in md
