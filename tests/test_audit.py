"""The audit: every value the published edition printed gets a status its
agreement class allows, nothing is dropped, and the pages say so.

Fixtures (tests/fixtures/audit/): a small baseline with one entry per
outcome, and values/bindings chosen so that each entry's id names its fate.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from articlekit.review.audit import audit, to_html, to_markdown
from articlekit.data.baseline import load_baseline
from articlekit.core.jsonio import read_json, write_json

FIXTURES = Path(__file__).parent / "fixtures" / "audit"

EXPECTED_STATUS = {
    "exact.reproduced": "reproduced",
    "exact.reproduced-as-percent": "reproduced",
    "exact.moved-unexpectedly": "moved unexpectedly",  # regenerated 7.40, printed 7.32
    "exact.indexed-reproduced": "reproduced",  # example.causal.visible_per_row[2]
    "exact.shape-reproduced": "reproduced",  # (5, 16)
    "exact.bool-reproduced": "reproduced",  # "no error is raised" == false
    "exact.nan-reproduced": "reproduced",  # nan is nan
    "noise.moved-as-expected": "moved as expected",  # 4.44e-16 for 2.22e-16: both < 1e-12
    "noise.moved-unexpectedly": "moved unexpectedly",  # 1e-3 breaks < 1e-12
    "timing.in-band": "moved as expected",  # 0.25x, band [0.1, 10]
    "timing.out-of-band": "moved unexpectedly",  # 48x
    "timing.check-fails": "moved unexpectedly",  # speedup 0.8 fails > 1
    "text.reproduced-across-wrapping": "reproduced",  # the edition wrapped the line
    "text.moved-with-its-library": "moved as expected",  # torch 2.13 here, 2.14.1 then
    "text.changed-with-its-library-unchanged": "moved unexpectedly",  # numpy 2.5.4 both
    "info.moved-as-expected": "moved as expected",
    "not-reproducible.check-holds": "not reproducible",
    "not-reproducible.check-fails": "moved unexpectedly",
    # the article claims "> 0.9" where the baseline checks "> 0.5": one number, two thresholds
    "not-reproducible.threshold-in-two-places": "moved unexpectedly",
    "revised.with-its-reason": "moved as expected",
    "erratum.corrected-fact-holds": "erratum",  # the edition was wrong; 0.0 now
    "key.missing": "key missing",
    "cited.dropout": "cited",
    "cited.dropped": "cited",
}


@pytest.fixture(scope="module")
def report():
    return audit(
        load_baseline(FIXTURES / "baseline.yaml"),
        read_json(FIXTURES / "values.json"),
        read_json(FIXTURES / "bindings.json"),
    )


def row(report, entry_id):
    return next(r for r in report["entries"] if r["id"] == entry_id)


def test_the_fixture_covers_every_entry():
    baseline = load_baseline(FIXTURES / "baseline.yaml")
    assert {e.id for e in baseline.entries} == set(EXPECTED_STATUS)


@pytest.mark.parametrize("entry_id, status", EXPECTED_STATUS.items())
def test_each_entry_gets_the_status_its_class_allows(report, entry_id, status):
    got = row(report, entry_id)
    assert got["status"] == status, got["why"]


def test_regenerated_values_are_printed_like_the_published_digits(report):
    assert row(report, "exact.reproduced")["regenerated"] == "0.921946"
    assert row(report, "exact.reproduced-as-percent")["regenerated"] == "92.19%"
    assert row(report, "exact.moved-unexpectedly")["regenerated"] == "7.40"
    assert row(report, "noise.moved-as-expected")["regenerated"] == "4.44e-16"


def test_every_status_says_why(report):
    for r in report["entries"]:
        assert r["why"], r["id"]
    assert "2.13.0" in row(report, "text.moved-with-its-library")["why"]
    assert "< 1e-12" in row(report, "noise.moved-unexpectedly")["why"]


def test_a_missing_key_is_reported_not_dropped_and_counts_as_unexpected(report):
    missing = row(report, "key.missing")
    assert missing["key"] == "multihead.weights_shape"
    assert "multihead.weights_shape" in missing["why"]
    assert report["summary"]["key_missing"] == 1
    # 7 moved unexpectedly + the missing key
    assert report["summary"]["moved_unexpectedly"] == 8
    assert "key missing" in to_markdown(report)


def test_the_summary_counts_every_entry_once_each_status_its_own_count(report):
    """'reproduced' counts measured values only: a shape, a flag, nan, a
    count and a text that came back are counted apart, as printed."""
    s = report["summary"]
    assert s["entries"] == len(EXPECTED_STATUS)
    counted = (
        "reproduced",
        "as_printed",
        "moved_as_expected",
        "erratum",
        "not_reproducible",
        "moved_unexpectedly",
        "cited",
    )
    assert sum(s[k] for k in counted) == s["entries"]
    assert [s[k] for k in counted] == [2, 5, 5, 1, 1, 8, 2]
    assert (s["claims_checked"], s["claims_failed"]) == (3, 1)


def test_each_status_is_spelled_once_in_one_table_that_every_report_reads(report):
    """articlekit.data.classes.AUDIT_STATUS: one row per status, its word,
    its page class and its count's name; the summary, the page's badges and
    a release's notes all take them from there."""
    from articlekit.data.classes import AUDIT_STATUS, STATUSES
    from articlekit.review.audit import card_counts
    from articlekit.review.release import readme_of

    assert STATUSES == tuple(AUDIT_STATUS)
    for field in ("css", "counted"):
        assert len({getattr(status, field) for status in AUDIT_STATUS.values()}) == len(STATUSES)
    s = report["summary"]
    assert {status.counted for status in AUDIT_STATUS.values()} <= set(s)
    cards = {label: css for label, _, css in card_counts(report)}
    assert all(cards[word] == status.css for word, status in AUDIT_STATUS.items())
    snapshot = {"label": "v1", "released_at": "2026-12-06", "environment": {}, "values": {}, "bindings": {}}
    notes = readme_of(snapshot | {"claims": [], "audit": {"summary": s}})
    assert "- Audit against the published edition: 2 reproduced, 5 moved as expected, 1 erratum, " in notes
    assert "1 not reproducible, 8 moved unexpectedly\n" in notes


def test_a_threshold_lives_in_one_place(report):
    """The baseline's check and the article's claim about the same key may
    not disagree: the row says so instead of showing two thresholds."""
    why = row(report, "not-reproducible.threshold-in-two-places")["why"]
    assert "'> 0.9'" in why and "'> 0.5'" in why and "one threshold in two places" in why
    # a check the article does not contradict is not flagged
    assert "two places" not in row(report, "not-reproducible.check-holds")["why"]


# ---- the attention article's own baseline and prose ----------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_the_article_and_its_baseline_hold_one_threshold_per_number():
    """Every check of the baseline agrees with what the article's text claims
    about the same key (the audit's rule, on the real article): the
    largest float64 difference once had '< 1e-12' and '< 5e-15'."""
    from articlekit.data.edition import threshold_conflicts
    from articlekit.article.departures import article_claims
    from articlekit.article.shortcodes import scan

    claims_on = article_claims(scan((ROOT / "article/index.qmd").read_text(encoding="utf-8")))
    baseline = load_baseline(ROOT / "baseline/published.yaml")
    conflicts = {e.id: threshold_conflicts(e.check, claims_on(e.key)) for e in baseline.entries if e.key}
    assert {i: c for i, c in conflicts.items() if c} == {}


def test_the_editions_largest_difference_is_corrected_to_the_articles_headline():
    """The edition's headline ("the largest absolute difference ... was
    2.220446049250313e-16") has the digits of its single-head comparison, and
    its own multi-head comparison printed more: its word "largest" is an
    erratum. The digits stay audited where the edition printed them again
    (parity.sdpa); the erratum's corrected fact is the article's own headline,
    the largest difference over every comparison, under the headline's bound,
    so the departures section prints that headline beside the edition's."""
    from articlekit.article.departures import article_claims
    from articlekit.article.shortcodes import scan

    by_id = {e.id: e for e in load_baseline(ROOT / "baseline/published.yaml").entries}
    headline, single, multi = by_id["intro.largest-diff"], by_id["parity.sdpa"], by_id["parity.mha"]
    assert "largest absolute difference" in headline.where["quote"]
    assert "scaled_dot_product_attention" in single.where["quote"] and "multi-head" in multi.where["quote"]
    assert headline.published == single.published and single.key == "parity.sdpa.max_abs_diff"
    assert multi.value > headline.value  # so the headline was not the largest of the edition's own numbers
    assert headline.cls == "erratum" and "largest" in headline.reason and "single-head" in headline.reason
    assert headline.key == "parity.max_abs_diff_overall"
    claims = article_claims(scan((ROOT / "article/index.qmd").read_text(encoding="utf-8")))(headline.key)
    assert claims and set(claims) == {headline.check}  # the article's headline, held to its own bound
    assert [e.id for e in by_id.values() if e.key == headline.key] == ["intro.largest-diff", "faq.matching-order"]


def test_errata_and_not_reproducible_rows_come_first_with_their_own_badges(report):
    page = to_html(report)
    order = [
        page.index(f'id="status-{css}"')
        for css in ("erratum", "not-reproducible", "unexpected", "missing", "expected", "reproduced", "cited")
    ]
    assert order == sorted(order)
    for css in ("erratum", "not-reproducible", "expected", "reproduced", "unexpected", "missing", "cited"):
        assert f'class="badge {css}"' in page
    # each status is a card that links to its section, with its count
    assert '<a class="card" href="#status-erratum"><span class="badge erratum">erratum</span><b>1</b></a>' in page
    assert "| erratum | not reproducible | moved unexpectedly |" in to_markdown(report)


def test_every_row_has_an_anchor_and_a_link_to_where_the_article_prints_it(report):
    page = to_html(report)
    for entry_id in EXPECTED_STATUS:
        assert f'id="{entry_id}"' in page, entry_id
    # the fixture binds scaling.dk64.unscaled.max_weight in prose: its first place
    assert row(report, "exact.reproduced")["article"] == "article.html#at-v-scaling-dk64-unscaled-max_weight"
    assert 'href="article.html#at-v-scaling-dk64-unscaled-max_weight"' in page
    # printed only outside the prose (or by an older bind): its provenance row
    assert row(report, "noise.moved-unexpectedly")["article"] == "article.html#v-parity-mha-max_abs_diff"
    # a key the article does not print has no link, and the page says so
    assert row(report, "key.missing")["article"] is None


def test_one_key_printed_several_times_is_one_row(report):
    """92.19% and 0.921946 are the same key with the same status: one row
    holding both entries, each with its own anchor."""
    page = to_html(report)
    start = page.index('id="exact.reproduced"')
    row_html = page[page.rindex("<tr>", 0, start) : page.index("</tr>", start)]
    assert 'id="exact.reproduced-as-percent"' in row_html


def test_the_html_page_has_no_mid_word_breaks_and_a_status_filter(report):
    """overflow-wrap:anywhere split 'ValueError' as 'ValueErro r'; numbers
    with a hyphen are kept whole; each status folds (<details>)."""
    page = to_html(report)
    style = page[page.index("<style>") : page.index("</style>")]
    assert "anywhere" not in style and "break-all" not in style
    assert "exp(<span class=\"nb\">-1e9</span>)" in page  # an erratum's why in the fixture
    assert "<details" in page


def test_a_dropped_cited_fact_says_why(report):
    assert (
        "Not in this article: The rewritten article cites the paper without its dates."
        in row(report, "cited.dropped")["why"]
    )


def test_markdown_escapes_html_in_plain_text(report):
    """Error messages and reasons may hold markup: in audit.md they read as
    text; inside code spans Markdown shows them literally already."""
    import copy

    md = to_markdown(report)
    assert "`mat1 and mat2 shapes cannot be multiplied (5x4 and 5x4) <in 2.13>`" in md
    hostile = copy.deepcopy(report)
    hostile["entries"][0]["why"] = "<script>alert(1)</script> & more"
    hostile["failed_claims"][0]["message"] = "<img src=x onerror=alert(1)>"
    md = to_markdown(hostile)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in md and "<script>" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;" in md and "<img" not in md


def test_claims_bound_to_a_key_are_shown_with_their_result(report):
    claims = row(report, "noise.moved-unexpectedly")["claims"]
    assert [(c["expect"], c["holds"]) for c in claims] == [("< 1e-12", False)]
    assert claims[0]["locations"] == ["article/index.qmd:40"]
    # a whole-list binding belongs to the entry about one of its items
    assert [c["key"] for c in row(report, "exact.indexed-reproduced")["claims"]] == ["example.causal.visible_per_row"]


def test_the_source_script_is_named(report):
    assert row(report, "timing.in-band")["source"]["script"] == "experiments/timing.py"


def test_bound_values_outside_the_baseline_are_listed(report):
    assert [b["key"] for b in report["other_bindings"]] == ["example.weights[0][0]"]


def test_a_value_printed_without_a_claim_is_not_shown_as_failing(report):
    (printed,) = row(report, "exact.indexed-reproduced")["claims"]
    assert printed["holds"] is None
    line = next(row for row in to_markdown(report).splitlines() if "| exact.indexed-reproduced |" in row)
    assert "FAILS" not in line and "✓" not in line


def test_cited_values_are_listed_but_not_audited(report):
    cited = row(report, "cited.dropout")
    assert cited["regenerated"] is None and cited["key"] is None


def test_the_html_page_is_self_contained_and_escapes_text(report):
    page = to_html(report)
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page and 'src="http' not in page and "<link" not in page
    assert "0.200000 &lt;b&gt;" in page  # a bound text holding markup
    assert "&lt;in 2.13&gt;" in page  # a regenerated error message holding markup
    for badge in ("reproduced", "expected", "unexpected", "missing"):
        assert f'class="badge {badge}"' in page


@pytest.mark.workflow
def test_the_command_writes_three_files_and_prints_a_summary(tmp_path):
    out = {ext: tmp_path / f"audit.{ext}" for ext in ("json", "md", "html")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "audit",
            "--baseline",
            FIXTURES / "baseline.yaml",
            "--values",
            FIXTURES / "values.json",
            "--bindings",
            FIXTURES / "bindings.json",
            "--json",
            out["json"],
            "--md",
            out["md"],
            "--html",
            out["html"],
        ],
        capture_output=True,
        text=True,
    )
    # moves do not fail the build: the article's claims do
    assert proc.returncode == 0, proc.stderr
    assert (
        "audit: 2 measured values reproduced (1 key; counted apart, as printed: 1 text, 4 discrete values), "
        "5 moved as expected (of them 1 version or machine fact), 1 erratum, 1 not reproducible, "
        "8 moved unexpectedly (1 key missing)"
    ) in proc.stderr
    # a missing key is loud in the terminal (stderr), with the baseline's file and line
    assert "WARNING key missing" in proc.stderr and "baseline.yaml:" in proc.stderr and "key.missing" in proc.stderr
    assert json.loads(out["json"].read_text())["summary"]["key_missing"] == 1
    assert out["md"].read_text().startswith("# Audit")
    assert out["html"].stat().st_size > 0


@pytest.mark.workflow
def test_the_command_fails_on_a_bad_baseline_naming_it(tmp_path):
    bad = tmp_path / "published.yaml"
    bad.write_text("edition: {}\nentries: []\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "audit",
            "--baseline",
            bad,
            "--values",
            FIXTURES / "values.json",
            "--bindings",
            FIXTURES / "bindings.json",
            "--json",
            tmp_path / "a.json",
            "--md",
            tmp_path / "a.md",
            "--html",
            tmp_path / "a.html",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert str(bad) in proc.stderr
    assert not (tmp_path / "a.json").exists()


# ---- claims fail the build, the audit does not ------------------------------------
# A tampered artifact: the parity difference set to 1e-3, far from the
# "floating-point noise" the prose claims (tests/fixtures/audit/tampered/).


def tampered_project(tmp_path):
    """article/ (the fixture prose; the shortcode extension comes from the
    package) and a values.json whose parity.sdpa.max_abs_diff is 1e-3."""
    article = tmp_path / "article"
    shutil.copytree(FIXTURES / "tampered", article)
    values = read_json(FIXTURES / "values.json")
    values["values"]["parity.sdpa.max_abs_diff"] = 1e-3
    write_json(tmp_path / "values.json", values)
    return article / "index.qmd", tmp_path / "values.json"


def bind(article, values, strict, out):
    return subprocess.run(
        [sys.executable, "-m", "articlekit", "bind", article, "--values", values, "--strict", strict, "--out", out],
        capture_output=True,
        text=True,
    )


@pytest.mark.workflow
def test_a_tampered_artifact_fails_a_strict_build_naming_the_claim(tmp_path):
    article, values = tampered_project(tmp_path)
    proc = bind(article, values, "true", tmp_path / "bindings.json")
    assert proc.returncode != 0
    assert "parity.sdpa.max_abs_diff" in proc.stderr and "< 1e-12" in proc.stderr
    assert f"{article}:6" in proc.stderr or "index.qmd:6" in proc.stderr
    assert not (tmp_path / "bindings.json").exists()


@pytest.mark.workflow
def test_a_tampered_artifact_renders_a_visible_warning_when_not_strict(tmp_path):
    article, values = tampered_project(tmp_path)
    proc = bind(article, values, "false", tmp_path / "bindings.json")
    assert proc.returncode == 0, proc.stderr
    (claim,) = read_json(tmp_path / "bindings.json")["claims"]
    assert (claim["key"], claim["holds"]) == ("parity.sdpa.max_abs_diff", False)

    html, md = tmp_path / "out/article.html", tmp_path / "out/article.md"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "render",
            article,
            "--bindings",
            tmp_path / "bindings.json",
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
    assert "claim failed" in md.read_text() and "claim-failed" in html.read_text()


# ---- the Snakemake report ----------------------------------------------------------
# Needs the whole workflow built, so it runs on the fast config in a copy.

PIPELINE_PIECES = [
    "article/index.qmd",
    "_quarto.yml",
    "article/style.css",
    "articlekit/data/listings.py",
    "articlekit/article/lint.py",
    "articlekit/article/bind.py",
    "articlekit/render/page.py",
    *(
        f"experiments/{name}.py"
        for name in ("environment", "scaling", "example", "multihead", "parity", "mask_convention", "timing", "errors")
    ),
]


def missing_pipeline_pieces():
    root = Path(__file__).resolve().parent.parent
    return [p for p in PIPELINE_PIECES if not (root / p).exists()]


@pytest.fixture(scope="module")
def built_copy(built_project, tmp_path_factory):
    missing = missing_pipeline_pieces()
    if missing:
        pytest.skip(f"the workflow is not complete yet (missing {', '.join(missing)})")
    # a copy of the session's build (conftest.py), not a build of its own:
    # these tests read what a build leaves, which the strictness does not change
    work = tmp_path_factory.mktemp("report") / "project"
    shutil.copytree(built_project, work, symlinks=True)
    return work


@pytest.mark.slow
def test_snakemake_report_includes_the_audit(built_copy):
    from tests.workspace import TEST_BUILD, copy_environment

    proc = subprocess.run(
        ["snakemake", "--report", "build/report.html", *TEST_BUILD[3:]],  # the config it was built with
        cwd=built_copy,
        env=copy_environment(built_copy),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report_page = (built_copy / "build/report.html").read_text(encoding="utf-8", errors="replace")
    assert "audit.html" in report_page and "Audit" in report_page


@pytest.mark.slow
def test_every_baseline_key_exists_in_a_real_build(built_copy):
    report = json.loads((built_copy / "build/audit.json").read_text())
    missing = [f"{r['id']} ({r['key']})" for r in report["entries"] if r["status"] == "key missing"]
    assert missing == []
    assert (built_copy / "build/diff.md").read_text().startswith("# What changed since")


@pytest.mark.slow
def test_the_article_lists_every_unexpected_move_of_a_real_build_with_the_audits_verdict(built_copy):
    """A strict build on the test config: its timings run at other sizes
    than the edition's (explained by the configuration), and the article's
    departures section carries exactly the audit's unexpected moves, with
    its verdicts, the headline's included."""
    report = json.loads((built_copy / "build/audit.json").read_text())
    listed = {d["id"]: d for d in json.loads((built_copy / "build/bindings.json").read_text())["departures"]}
    rows = {r["id"]: r for r in report["entries"]}
    unexpected = {i for i, r in rows.items() if r["status"] in ("moved unexpectedly", "key missing")}
    assert {i for i, d in listed.items() if d["kind"] == "unexpected"} == unexpected
    assert "timing.length" in unexpected and rows["timing.length"]["explained"].startswith("this build runs timing")
    for entry_id, d in listed.items():
        assert (d["status"], d["explained"]) == (rows[entry_id]["status"], rows[entry_id]["explained"]), entry_id
    assert report["summary"]["unexplained"] == 0  # else the strict build would have stopped
    assert rows["intro.largest-diff"]["status"] == listed["intro.largest-diff"]["status"] == "erratum"
    md = (built_copy / "build/article.md").read_text(encoding="utf-8")
    section = md.split("## Where this build departs from the published edition", 1)[1].split("\n## ", 1)[0]
    for entry_id in listed:
        assert f"audit.html#{entry_id} " in section, entry_id
    assert "nowhere" not in section


# ---- the page in a real browser ------------------------------------------------------


def _browser():
    """Headless Chromium through Debian's chromedriver, or a skip saying what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not shutil.which("chromedriver") or not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


@pytest.mark.e2e
@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_fits_the_window_without_sideways_scrolling(report, tmp_path, width):
    """Long error messages, listings and keys wrap between words (1770 px
    wide in a 1280 px window before); at 390 px each row is a card."""
    page = tmp_path / "audit.html"
    page.write_text(to_html(report), encoding="utf-8")
    browser = _browser()
    try:
        browser.set_window_size(width, 1000)
        browser.get(page.as_uri())
        viewport = browser.execute_script("return document.documentElement.clientWidth")
        too_wide = browser.execute_script(
            "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > "
            "arguments[0] + 1).map(e => e.tagName + ' ' + e.textContent.slice(0, 60))",
            viewport,
        )
        assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport, too_wide
        for entry_id in ("erratum.corrected-fact-holds", "key.missing"):
            assert browser.execute_script("return !!document.getElementById(arguments[0])", entry_id)
    finally:
        browser.quit()


def test_the_pages_name_the_libraries_the_article_records():
    """The edition's and this build's versions, named as publishing.libraries
    names them and in its order; a library it does not record is not shown."""
    from articlekit.data.publishing import parse

    report = audit(
        load_baseline(FIXTURES / "baseline.yaml"),
        read_json(FIXTURES / "values.json"),
        read_json(FIXTURES / "bindings.json"),
    )
    article = parse({"libraries": {"torch": "PyTorch", "python": "Python"}})
    md = to_markdown(report, article)
    assert "This build: PyTorch 2.13.0+cpu, Python 3.11.7." in md and "NumPy" not in md
    assert "This build: PyTorch 2.13.0+cpu, Python 3.11.7." in to_html(report, article)
    assert "This build: Python 3.11.7." in to_markdown(report)  # the neutral default
