"""The article's own list of where it departs from the published edition
({{< departures >}}): made from the baseline and the values, each value a
binding like any other, each item linking to its audit row.

Fixtures: the audit's (tests/fixtures/audit/), whose entry ids name their fate.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from articlekit.baseline import load_baseline
from articlekit.bind import BindError, bind
from articlekit.departures import departures
from articlekit.jsonio import read_json

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


def test_corrections_come_first_then_changes_each_once(baseline, values):
    listed = [(d["kind"], d["entry"].id) for d in departures(baseline, values)]
    assert listed[0] == ("correction", "erratum.corrected-fact-holds")
    assert ("change", "not-reproducible.check-holds") in listed
    assert ("change", "revised.with-its-reason") in listed
    # restatements fold into the entry they restate; cited facts are not departures
    assert "exact.reproduced-as-percent" not in dict(map(reversed, listed))
    assert not any(entry_id.startswith("cited.") for _, entry_id in listed)


def test_an_info_entry_is_listed_only_with_a_reason_and_only_when_it_moved(baseline, values):
    """info.moved-as-expected has no reason: versions that merely differ are
    the audit's business; a reason makes it a departure the reader is told."""
    assert "info.moved-as-expected" not in [d["entry"].id for d in departures(baseline, values)]


def bound(baseline, values, strict=True):
    return bind("article/index.qmd", ARTICLE, values, strict, baseline)


def test_each_departure_is_a_binding_with_its_tooltip_and_provenance_row(baseline, values):
    doc = bound(baseline, values)
    md = doc["departures_md"]
    erratum = doc["bindings"]["example.fill_minus_1e9.max_masked_weight_float32||== 0.0"]
    assert erratum["locations"] == ["article/index.qmd:7"]  # the line of {{< departures >}}
    assert erratum["claim"]["holds"] is True  # the corrected fact is a claim of the article
    assert "`example.fill_minus_1e9.max_masked_weight_float32`" in doc["provenance_md"]
    first = md.splitlines()[0]
    assert first.startswith("- **Correction** (FAQ): the edition printed “a tiny non\\-zero value in float32”")
    assert f'[0\\.0](#{erratum["anchor"]} "{erratum["title"]}"){{.bound-value}}' in first
    assert first.endswith('[audit row](audit.html#erratum.corrected-fact-holds "erratum.corrected-fact-holds in the audit")')
    assert len(md.splitlines()) == len(departures(baseline, values))


def test_a_correction_that_no_longer_holds_fails_a_strict_bind(baseline, values):
    tampered = {**values, "values": {**values["values"],
                                     "example.fill_minus_1e9.max_masked_weight_float32": 1e-9}}
    with pytest.raises(BindError) as caught:
        bound(baseline, tampered)
    assert "article/index.qmd:7: claim 'example.fill_minus_1e9.max_masked_weight_float32 == 0.0' failed" in str(
        caught.value)


def test_without_the_baseline_the_shortcode_is_an_error_naming_its_line(values):
    with pytest.raises(BindError) as caught:
        bind("article/index.qmd", ARTICLE, values, True, None)
    assert "article/index.qmd:7: {{< departures >}} needs the baseline" in str(caught.value)


def test_the_section_renders_with_links_to_the_audit(baseline, tmp_path):
    """Through the real Lua extension and Pandoc: a list whose values link to
    their provenance rows and whose items link to audit.html#<id>."""
    article = tmp_path / "article"
    article.mkdir()
    (article / "index.qmd").write_text(ARTICLE)
    bindings = tmp_path / "bindings.json"
    run = [sys.executable, "-m", "articlekit"]
    proc = subprocess.run([*run, "bind", article / "index.qmd", "--values", FIXTURES / "values.json",
                           "--strict", "false", "--baseline", FIXTURES / "baseline.yaml", "--out", bindings],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    html, md = tmp_path / "out/article.html", tmp_path / "out/article.md"
    proc = subprocess.run([*run, "render", article / "index.qmd", "--bindings", bindings, "--renderer", "pandoc",
                           "--html", html, "--md", md], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert '<a href="audit.html#erratum.corrected-fact-holds" title="erratum.corrected-fact-holds in the audit">audit row</a>' in page
    assert 'class="bound-value" title="example.fill_minus_1e9.max_masked_weight_float32 = 0.0' in page
    # the Markdown copy prints the values plainly, as value() does there
    assert "bound-value" not in md.read_text()


def test_the_live_preview_renders_the_departures_with_the_baseline(tmp_path):
    """The preview binds as the bind rule does, baseline included: without it
    an article with {{< departures >}} would never render."""
    from articlekit.preview import Preview

    article = tmp_path / "article" / "index.qmd"
    article.parent.mkdir()
    article.write_text(ARTICLE, encoding="utf-8")
    preview = Preview(article, FIXTURES / "values.json", tmp_path / "preview", strict=False,
                      baseline=FIXTURES / "baseline.yaml")
    assert preview.rebuild(), preview.state()["problems"]
    assert "audit.html#erratum.corrected-fact-holds" in preview.served_page().decode("utf-8")
