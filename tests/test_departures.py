"""The article's own list of where it departs from the published edition
({{< departures >}}): made from the baseline and the values, each value a
binding like any other, each item linking to its audit row.

Fixtures: the audit's (tests/fixtures/audit/), whose entry ids name their fate.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from articlekit.data.baseline import load_baseline
from articlekit.article.bind import BindError, bind
from articlekit.article.departures import departures
from articlekit.core.jsonio import read_json
from tests import snakemake_fork

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
ROOT = Path(__file__).resolve().parent.parent
ARTICLE = """---
title: t
---

## Departures

{{< departures >}}

## Where every number comes from

{{< provenance >}}
"""


@pytest.fixture(scope="module")
def baseline():
    return load_baseline(FIXTURES / "baseline.yaml")


@pytest.fixture(scope="module")
def values():
    return read_json(FIXTURES / "values.json")


def test_unexpected_moves_come_first_then_corrections_then_changes_each_once(baseline, values):
    listed = [(d["kind"], d["entry"].id) for d in departures(baseline, values)]
    kinds = [kind for kind, _ in listed]
    assert kinds == sorted(kinds, key=["unexpected", "correction", "change"].index)
    assert ("unexpected", "exact.moved-unexpectedly") in listed
    assert ("correction", "erratum.corrected-fact-holds") in listed
    assert ("change", "not-reproducible.check-holds") in listed
    assert ("change", "revised.with-its-reason") in listed
    # restatements fold into the entry they restate; cited facts are not departures
    assert "exact.reproduced-as-percent" not in dict(map(reversed, listed))
    assert not any(entry_id.startswith("cited.") for _, entry_id in listed)
    assert len(listed) == len(set(listed))


def test_an_info_entry_is_listed_only_with_a_reason_and_only_when_it_moved(baseline, values):
    """info.moved-as-expected has no reason: versions that merely differ are
    the audit's business; a reason makes it a departure the reader is told."""
    assert "info.moved-as-expected" not in [d["entry"].id for d in departures(baseline, values)]


def bound(baseline, values, strict=False, article=ARTICLE):
    """strict=False unless a test is about the strict build: the fixture's
    baseline holds unexplained moves on purpose (one entry per outcome)."""
    return bind("article/index.qmd", article, values, strict, baseline)


def test_each_departure_is_a_binding_with_its_tooltip_and_provenance_row(baseline, values):
    doc = bound(baseline, values)
    md = doc["departures_md"]
    erratum = doc["bindings"]["example.fill_minus_1e9.max_masked_weight_float32||== 0.0"]
    assert erratum["locations"] == ["article/index.qmd:7"]  # the line of {{< departures >}}
    assert erratum["claim"]["holds"] is True  # the corrected fact is a claim of the article
    assert "`example.fill_minus_1e9.max_masked_weight_float32`" in doc["provenance_md"]
    first = next(line for line in md.splitlines() if line.startswith("- **Correction**"))
    assert first.startswith("- **Correction** (FAQ): the edition printed “a tiny non\\-zero value in float32”")
    assert f'[0\\.0](#{erratum["anchor"]} "{erratum["title"]}"){{.bound-value}}' in first
    assert first.endswith(
        '[audit row](audit.html#erratum.corrected-fact-holds "erratum.corrected-fact-holds in the audit")'
    )
    assert len(md.splitlines()) == len(departures(baseline, values))


def test_a_correction_that_no_longer_holds_fails_a_strict_bind(baseline, values):
    tampered = {**values, "values": {**values["values"], "example.fill_minus_1e9.max_masked_weight_float32": 1e-9}}
    with pytest.raises(BindError) as caught:
        bound(baseline, tampered, strict=True)
    assert "article/index.qmd:7: claim 'example.fill_minus_1e9.max_masked_weight_float32 == 0.0' failed" in str(
        caught.value
    )


def test_without_the_baseline_the_shortcode_is_an_error_naming_its_line(values):
    with pytest.raises(BindError) as caught:
        bind("article/index.qmd", ARTICLE, values, True, None)
    assert "article/index.qmd:7: {{< departures >}} needs the baseline" in str(caught.value)


@pytest.mark.workflow
def test_the_section_renders_with_links_to_the_audit(baseline, tmp_path):
    """Through the real Lua extension and Pandoc: a list whose values link to
    their provenance rows and whose items link to audit.html#<id>."""
    article = tmp_path / "article"
    article.mkdir()
    (article / "index.qmd").write_text(ARTICLE)
    bindings = tmp_path / "bindings.json"
    run = [sys.executable, "-m", "articlekit"]
    proc = subprocess.run(
        [
            *run,
            "bind",
            article / "index.qmd",
            "--values",
            FIXTURES / "values.json",
            "--strict",
            "false",
            "--baseline",
            FIXTURES / "baseline.yaml",
            "--out",
            bindings,
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    html, md = tmp_path / "out/article.html", tmp_path / "out/article.md"
    proc = subprocess.run(
        [
            *run,
            "render",
            article / "index.qmd",
            "--bindings",
            bindings,
            "--renderer",
            "pandoc",
            "--html",
            html,
            "--md",
            md,
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert (
        '<a href="audit.html#erratum.corrected-fact-holds" title="erratum.corrected-fact-holds in the audit">audit row</a>'
        in page
    )
    assert 'class="bound-value" title="example.fill_minus_1e9.max_masked_weight_float32 = 0.0' in page
    # the Markdown copy prints the values plainly, as value() does there
    assert "bound-value" not in md.read_text()


@pytest.mark.workflow
def test_the_live_preview_renders_the_departures_with_the_baseline(tmp_path):
    """The preview binds as the bind rule does, baseline included: without it
    an article with {{< departures >}} would never render."""
    from articlekit.render.preview import Preview

    article = tmp_path / "article" / "index.qmd"
    article.parent.mkdir()
    article.write_text(ARTICLE, encoding="utf-8")
    preview = Preview(
        article, FIXTURES / "values.json", tmp_path / "preview", strict=False, baseline=FIXTURES / "baseline.yaml"
    )
    assert preview.rebuild(), preview.state()["problems"]
    assert "audit.html#erratum.corrected-fact-holds" in preview.served_page().decode("utf-8")


# ---- every unexpected move is in the article, and only an explained one passes a strict build ----
# A baseline of a few entries, against the audit fixture's values: there
# scaling.dk64.dot_std is 7.4 (the edition printed 7.32), parity.mha.max_abs_diff
# 0.001 and timing.main.matrix.median_ms 50.0 (the edition: 1.050).

EDITION = """\
edition:
  title: "fixture edition"
  source: tests/test_departures.py
  date: "2026-10-12"
  versions: {python: "3.13", numpy: "2.5.4", torch: "2.14.1"}

entries:
"""
WRONG_EXACT = """\
  - id: scaling.dot-std
    class: exact
    published: "7.32"
    value: 7.324561041533949
    key: scaling.dk64.dot_std
    fmt: ".2f"
    where: {section: scaling, quote: "dot std=  7.32"}
"""


def small_baseline(tmp_path, *entries):
    """(baseline, the line of each entry's `- id:` in its file)."""
    path = tmp_path / "baseline" / "published.yaml"
    path.parent.mkdir(exist_ok=True)
    text = EDITION + "\n".join(entries)
    path.write_text(text, encoding="utf-8")
    lines = {line.split("id:", 1)[1].strip(): n for n, line in enumerate(text.splitlines(), 1) if "- id:" in line}
    return load_baseline(path), lines


def test_an_exact_value_that_moved_is_listed_and_marked_on_the_page(tmp_path, values):
    baseline, _ = small_baseline(tmp_path, WRONG_EXACT)
    doc = bound(baseline, values)
    (item,) = doc["departures_md"].splitlines()
    assert item.startswith(
        "- **Moved unexpectedly** [⚠ not explained by the baseline]{.claim-failed} (scaling): "
        "the edition printed “7\\.32”; this build: [7\\.40](#v-scaling-dk64-dot-std "
    )
    assert item.endswith('[audit row](audit.html#scaling.dot-std "scaling.dot-std in the audit")')
    assert "departs from the published edition nowhere" not in doc["departures_md"]
    assert doc["departures"] == [
        {
            "id": "scaling.dot-std",
            "key": "scaling.dk64.dot_std",
            "line": 8,
            "kind": "unexpected",
            "status": "moved unexpectedly",
            "explained": None,
        }
    ]


def test_a_strict_bind_stops_on_it_naming_the_baseline_line_both_values_and_the_fix(tmp_path, values):
    baseline, lines = small_baseline(tmp_path, WRONG_EXACT)
    with pytest.raises(BindError) as caught:
        bound(baseline, values, strict=True)
    (problem,) = caught.value.problems
    assert problem.startswith(
        f"{baseline.path}:{lines['scaling.dot-std']}: entry 'scaling.dot-std' "
        "(scaling.dk64.dot_std) moved unexpectedly: the edition printed 7.32, this build 7.40"
    )
    assert "add a `reason:`" in problem and "change its class" in problem


@pytest.mark.workflow
def test_without_strict_the_terminal_says_so_too(tmp_path):
    baseline, lines = small_baseline(tmp_path, WRONG_EXACT)
    article = tmp_path / "index.qmd"
    article.write_text(ARTICLE, encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "bind",
            article,
            "--values",
            FIXTURES / "values.json",
            "--strict",
            "false",
            "--baseline",
            baseline.path,
            "--out",
            tmp_path / "bindings.json",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"bind: warning: {baseline.path}:{lines['scaling.dot-std']}: entry 'scaling.dot-std'" in proc.stderr
    assert "1 unexplained departures (shown on the page: strict=false)" in proc.stderr


def test_a_reason_explains_the_move_it_is_listed_and_the_strict_build_goes_on(tmp_path, values):
    baseline, _ = small_baseline(
        tmp_path, WRONG_EXACT + "    reason: The edition rounded a value it printed by hand.\n"
    )
    (item,) = bound(baseline, values, strict=True)["departures_md"].splitlines()
    assert item.startswith("- **Moved unexpectedly, explained** (scaling): the edition printed “7\\.32”")
    assert "Explained: The edition rounded a value it printed by hand\\." in item
    assert "claim-failed" not in item


def test_a_reason_does_not_excuse_a_failed_check(tmp_path, values):
    """A reason says why digits moved; a check is a claim, and 0.001 is not
    floating-point noise whatever the baseline says."""
    baseline, lines = small_baseline(
        tmp_path,
        """\
  - id: parity.multi-head
    class: noise
    published: "4.44e-16"
    value: 4.440892098500626e-16
    key: parity.mha.max_abs_diff
    fmt: ".2e"
    check: "< 1e-12"
    reason: Another machine rounds differently.
    where: {section: parity, quote: "multi-head difference 4.44e-16"}
""",
    )
    with pytest.raises(BindError) as caught:
        bound(baseline, values, strict=True)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{baseline.path}:{lines['parity.multi-head']}: entry 'parity.multi-head'")
    assert "the value fails the entry's check '< 1e-12'" in problem


def test_a_timing_outside_its_band_is_listed_but_a_busy_machine_cannot_stop_a_strict_build(tmp_path, values):
    """A band is around another machine's time: load alone can leave it. What
    the prose claims about timings is checked with intervals (inconclusive
    when they cannot tell), so the band only informs."""
    baseline, _ = small_baseline(
        tmp_path,
        """\
  - id: timing.matrix
    class: timing
    published: "1.050"
    value: 1.05
    key: timing.main.matrix.median_ms
    fmt: ".3f"
    band: [0.1, 10.0]
    where: {section: parity, quote: "the matrix version 1.050 ms"}
""",
    )
    doc = bound(baseline, values, strict=True)
    (item,) = doc["departures_md"].splitlines()
    assert item.startswith(
        "- **Moved unexpectedly, explained** (parity): the edition printed “1\\.050”; this build: [50\\.000]"
    )
    assert "outside the band" in item and "Explained: A timing" in item


def test_another_configuration_explains_what_its_experiment_computes(tmp_path, values):
    """The edition printed a parameter; this build ran with another one (a
    test config, an author's edit): that experiment's values move with it."""
    baseline, _ = small_baseline(
        tmp_path,
        WRONG_EXACT,
        """\
  - id: scaling.n-keys
    class: exact
    published: "2,000"
    value: 2000
    key: scaling.params.n_keys
    fmt: ","
    where: {section: scaling, quote: "2,000 keys"}
""",
    )
    configured = {
        "values": {**values["values"], "scaling.params.n_keys": 1000},
        "sources": {**values["sources"], "scaling.params.n_keys": values["sources"]["scaling.dk64.dot_std"]},
        "versions": values["versions"],
    }
    doc = bound(baseline, configured, strict=True)
    assert [
        d["explained"].startswith(
            "this build runs scaling with other parameters than the edition (n_keys 2,000 → 1,000)"
        )
        for d in doc["departures"]
    ] == [True, True]
    # the same move with the edition's parameters is not explained
    with pytest.raises(BindError):
        bound(baseline, {**configured, "values": {**configured["values"], "scaling.params.n_keys": 2000}}, strict=True)


def test_the_article_lists_exactly_what_the_audit_finds_with_the_same_verdicts(baseline, values):
    """One judgement (articlekit.review.agreement.verdicts) for both, fed the same
    claims of the article: here one that puts a second threshold on a key."""
    from articlekit.review.audit import audit

    article = ARTICLE.replace(
        "## Departures",
        'The max weight is {{< value scaling.dk64.unscaled.max_weight fmt=".6f" expect="> 0.9" >}}.\n\n## Departures',
    )
    doc = bound(baseline, values, article=article)
    report = audit(baseline, values, doc)
    rows = {r["id"]: r for r in report["entries"]}
    unexpected = {r["id"] for r in report["entries"] if r["status"] in ("moved unexpectedly", "key missing")}
    assert "not-reproducible.threshold-in-two-places" in unexpected
    assert {d["id"] for d in doc["departures"] if d["kind"] == "unexpected"} == unexpected
    for d in doc["departures"]:
        assert (d["status"], d["explained"]) == (rows[d["id"]]["status"], rows[d["id"]]["explained"]), d["id"]
    assert report["summary"]["unexplained"] == sum(
        1 for d in doc["departures"] if d["kind"] == "unexpected" and not d["explained"]
    )


@pytest.mark.slow
def test_a_new_authors_wrong_exact_entry_fails_the_strict_build_and_is_on_the_page(tmp_path):
    """The skeleton `articlekit new` writes, with its one exact entry made
    wrong: the strict build stops at bind naming the entry's line; with
    strict=false the article's departures section shows the move."""
    from articlekit.skeleton.new import new_article
    from tests.workspace import copy_environment

    folder = tmp_path / "my-article"
    new_article(folder)
    published = folder / "baseline" / "published.yaml"
    text = published.read_text(encoding="utf-8")
    assert 'published: "7.485471"' in text
    published.write_text(
        text.replace('published: "7.485471"', 'published: "7.485472"').replace(
            "value: 7.485470860550345", "value: 7.485472"
        ),
        encoding="utf-8",
    )
    line = next(n for n, row in enumerate(published.read_text().splitlines(), 1) if "- id: harmonic.value" in row)
    env = {**copy_environment(ROOT), "PYTHONPATH": str(ROOT)}
    run = ["--cores", "2", "--config", "renderer=pandoc"]  # snakemake's, forked (tests/snakemake_fork.py)

    strict = snakemake_fork.run(folder, run, env, timeout=600)
    assert strict.returncode != 0
    log = (folder / "logs" / "bind.log").read_text(encoding="utf-8")
    assert (
        f"baseline/published.yaml:{line}: entry 'harmonic.value' (harmonic.value) moved unexpectedly: "
        "the edition printed 7.485472, this build 7.485471"
    ) in log
    assert not (folder / "build" / "article.html").exists()

    loose = snakemake_fork.run(folder, [*run, "strict=false"], env, timeout=600)
    assert loose.returncode == 0, loose.stdout[-3000:]
    md = (folder / "build" / "article.md").read_text(encoding="utf-8")
    section = md.split("## Where this build departs from the published edition", 1)[1].split("\n## ", 1)[0]
    assert "**Moved unexpectedly** ⚠ not explained by the baseline (Introduction)" in section
    assert "audit.html#harmonic.value" in (folder / "build" / "article.html").read_text(encoding="utf-8")


def test_the_audit_refuses_bindings_whose_departures_say_otherwise(tmp_path, values):
    """bind and the audit read different baselines: the audit says so and fails."""
    from articlekit.review.audit import main as audit_main
    from articlekit.core.jsonio import write_json

    baseline, _ = small_baseline(tmp_path, WRONG_EXACT)
    doc = bound(baseline, values)
    doc["departures"][0]["status"] = "reproduced"
    write_json(tmp_path / "bindings.json", doc)
    out = tmp_path / "audit"
    code = audit_main(
        [
            "--baseline",
            baseline.path,
            "--values",
            str(FIXTURES / "values.json"),
            "--bindings",
            str(tmp_path / "bindings.json"),
            "--json",
            str(out / "a.json"),
            "--md",
            str(out / "a.md"),
            "--html",
            str(out / "a.html"),
        ]
    )
    assert code == 1
    assert read_json(out / "a.json")["disagreements"] == [
        "scaling.dot-std: the article printed 'reproduced', the audit finds 'moved unexpectedly'"
    ]
