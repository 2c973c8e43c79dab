"""Claims about measured values: a claim holds only when the whole interval
clears its bound, fails only when none of it does, and is otherwise
inconclusive, which is never reported as failed. Synthetic values only."""

import re
from pathlib import Path

import pytest

from articlekit.render import page as rendermod
from articlekit.data.edition import EXPECTED, UNEXPECTED
from articlekit.data.edition import against_edition as judge
from articlekit.data.baseline import Entry
from articlekit.article.bind import BindError, bind
from articlekit.core.claims import FAILS, HOLDS, INCONCLUSIVE, ClaimError, Interval, evaluate
from articlekit.core.jsonio import write_json
from articlekit.core.keys import measured
from articlekit.data.values import merge
from tests.fixture_bibliography import copy_article_files

ROOT = Path(__file__).resolve().parent.parent


# ---- the three outcomes ---------------------------------------------------------------


@pytest.mark.parametrize(
    "expect, interval, status",
    [
        ("> 1", (5.0, 4.0, 6.0), HOLDS),  # the whole interval clears the bound
        ("> 1", (1.1, 0.9, 1.3), INCONCLUSIVE),  # it straddles the bound
        ("> 1", (0.5, 0.4, 0.6), FAILS),  # none of it clears the bound
        ("> 1", (1.2, 1.0, 1.4), INCONCLUSIVE),  # touching the bound is not clearing it
        (">= 1", (1.2, 1.0, 1.4), HOLDS),
        ("< 1e-12", (1e-15, 1e-16, 1e-14), HOLDS),
        ("between 4 and 7", (5.0, 4.5, 6.0), HOLDS),
        ("between 4 and 7", (5.0, 3.0, 6.0), INCONCLUSIVE),
        ("between 4 and 7", (9.0, 8.0, 10.0), FAILS),
        ("== 5", (5.0, 4.0, 6.0), INCONCLUSIVE),
        ("== 5", (8.0, 7.0, 9.0), FAILS),
        ("!= 5", (8.0, 7.0, 9.0), HOLDS),
        ("> 1 and < 5", (5.0, 4.0, 6.0), INCONCLUSIVE),  # one test undecided: the claim is
        ("> 1 and < 3", (5.0, 4.0, 6.0), FAILS),  # one test fails: the claim fails
    ],
)
def test_a_claim_on_a_measured_value_is_judged_on_its_whole_interval(expect, interval, status):
    result = evaluate(expect, Interval(*interval))
    assert result.status == status
    assert result.holds is (status == HOLDS)


def test_the_inconclusive_message_gives_the_interval_and_never_says_does_not_hold():
    result = evaluate("> 1", Interval(1.1, 0.9, 1.3))
    assert "interval 0.9 to 1.3" in result.message and "inconclusive" in result.message
    assert "does not hold" not in result.message


def test_a_measured_operand_counts_with_its_interval_too():
    values = {"m.estimate": 1.0, "m.low": 0.9, "m.high": 1.1}
    resolve = lambda key: measured(values, key)  # noqa: E731
    assert evaluate("> m.estimate", 2.0, resolve).status == HOLDS
    assert evaluate("> m.estimate", 1.05, resolve).status == INCONCLUSIVE
    assert evaluate("> m.estimate", Interval(1.0, 0.95, 1.2), resolve).status == INCONCLUSIVE


def test_plain_numbers_keep_their_two_outcomes():
    assert evaluate("> 1", 1.0001).status == HOLDS
    assert evaluate("> 1", 0.9).status == FAILS


def test_a_measured_value_compares_only_with_numbers():
    with pytest.raises(ClaimError, match="compares only with numbers"):
        evaluate("== true", Interval(1.0, 0.5, 1.5))
    with pytest.raises(ClaimError, match="low is above high"):
        Interval(1.0, 2.0, 0.5)


def test_an_estimate_with_low_and_high_beside_it_is_a_measured_value():
    values = {"t.speedup.estimate": 5.0, "t.speedup.low": 4.0, "t.speedup.high": 6.0, "t.plain": 5.0}
    assert measured(values, "t.speedup.estimate") == Interval(5.0, 4.0, 6.0)
    assert measured(values, "t.speedup.low") == 4.0
    assert measured(values, "t.plain") == 5.0


# ---- in the build: bind, render, audit -----------------------------------------------------


def values_with(low, estimate, high):
    envelope = {
        "experiment": "timing",
        "script": "experiments/timing.py",
        "params": {},
        "values": {"speedup": {"estimate": estimate, "low": low, "high": high}},
    }
    return merge([("results/timing.json", envelope)])


ARTICLE = (
    'The matrix form is {{< value timing.speedup.estimate fmt=".1f" expect="> 1" >}} '
    'times faster.\n\n{{< provenance >}}\n'
)


def test_a_strict_build_stops_on_an_inconclusive_claim_saying_so_with_the_interval_the_load_and_what_to_do():
    with pytest.raises(BindError) as caught:
        bind("article/index.qmd", ARTICLE, values_with(0.9, 1.1, 1.3), strict=True)
    (problem,) = caught.value.problems
    assert problem.startswith(
        "article/index.qmd:1: claim 'timing.speedup.estimate > 1' is inconclusive (it neither holds nor fails)"
    )
    assert "interval 0.9 to 1.3" in problem
    assert re.search(r"Load average now [\d.]+, [\d.]+, [\d.]+ \(1, 5, 15 min\) on \d+ CPUs", problem)
    assert "--forcerun timing" in problem and "strict=false" in problem
    assert "failed:" not in problem


def test_a_strict_build_passes_when_the_whole_interval_clears_the_bound_and_fails_when_none_does():
    doc = bind("article/index.qmd", ARTICLE, values_with(4.0, 5.0, 6.0), strict=True)
    (claim,) = doc["claims"]
    assert (claim["holds"], claim["status"]) == (True, HOLDS)
    with pytest.raises(BindError, match=r"claim 'timing.speedup.estimate > 1' failed: value 0.5"):
        bind("article/index.qmd", ARTICLE, values_with(0.4, 0.5, 0.6), strict=True)


@pytest.mark.workflow
def test_a_non_strict_build_renders_inconclusive_not_failed(tmp_path):
    folder = tmp_path / "article"
    folder.mkdir()
    copy_article_files(folder)
    article = folder / "index.qmd"
    article.write_text(ARTICLE, encoding="utf-8")
    doc = bind(str(article), ARTICLE, values_with(0.9, 1.1, 1.3), strict=False)
    (claim,) = doc["claims"]
    assert (claim["holds"], claim["status"]) == (False, INCONCLUSIVE)
    assert "? inconclusive" in doc["provenance_md"] and "FAILED" not in doc["provenance_md"]
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, doc)
    html, md = folder / "build" / "article.html", folder / "build" / "article.md"
    rendermod.render(article, bindings, "pandoc", html, md)
    assert "1.1 **⚠ claim inconclusive: \\> 1**" in md.read_text(encoding="utf-8")
    assert "claim failed" not in html.read_text(encoding="utf-8")


def test_the_audit_reports_an_inconclusive_timing_check_as_expected_not_as_failing():
    entry = Entry(
        id="timing.speedup",
        cls="timing",
        published="5.4",
        where={},
        value=5.4,
        key="timing.speedup.estimate",
        fmt=".1f",
        check="> 1",
    )
    values = values_with(0.9, 1.1, 1.3)["values"]
    status, shown, why = judge(entry, 1.1, {}, {}, checked=measured(values, entry.key))
    assert (status, shown) == (EXPECTED, "1.1") and "inconclusive" in why
    status, _, why = judge(entry, 0.5, {}, {}, checked=Interval(0.5, 0.4, 0.6))
    assert status == UNEXPECTED and "fails its check" in why


def test_a_cited_integer_never_collides_with_a_noisy_measurement():
    """d_k = 64 cited, while a timing happened to come out at 64.2 ms."""
    from articlekit.article.lint import lint

    values = {
        "timing.all.median_ms.estimate": 40.0,
        "timing.all.median_ms.low": 64.2,
        "timing.all.median_ms.high": 80.0,
        "scaling.max_ms": 64.2,
    }
    findings, _ = lint("article/index.qmd", "The paper's [d_k = 64]{.cited}.\n", values)
    assert [f for f in findings if "median_ms" in f] == []
    # a cited integer of up to three digits is a quoted parameter, compared with
    # nothing; longer cited numerals still are (tests/test_lint.py)
    assert findings == []
