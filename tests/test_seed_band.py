"""A rank among seeds is an estimate, and a seeded value outside its sweep's
5-95 % band is said to be where it is printed.

- the article's seed's percentile among the sweep's seeds carries its 95 %
  interval (robustness.<key>.percentile_at_seed_low/_high: Wilson's, as a
  share of seeds has), and a rank or share printed without its interval in
  its section stops a strict bind (articlekit/article/disclosure.py);
- a printed seeded value outside its band stops a strict bind, naming the
  line, the key, the value, the band and the fix, unless its shortcode says
  band="outside"; then every edition prints the note beside the number
  (articlekit/article/seed_band.py). band="outside" on a value inside its
  band, or on a key the sweep gives no band, is refused.
"""

import pytest

from articlekit.article import robustness, seed_band
from articlekit.article.bind import BindError, bind
from articlekit.article.bound import bound_markdown
from articlekit.core.status import OUTLIER_CLASS
from articlekit.data.values import merge

# toy.x is 200 at the article's seed and the seed itself, 1 to 100, at the
# sweep's: far above its band (5.95 to 95.05). toy.y is 50: inside it.
OUT = 'x is {{< value toy.x fmt=".1f" >}}.'
DISCLOSED = 'x is {{< value toy.x fmt=".1f" band="outside" >}}.'
INSIDE = 'y is {{< value toy.y fmt=".1f" >}}.'
RANK = "x is above {{< value robustness.toy.x.percentile_at_seed fmt=\".0%\" >}} of the seeds"
RANK_INTERVAL = (
    ' ({{< value robustness.toy.x.percentile_at_seed_low fmt=".0%" >}} to '
    '{{< value robustness.toy.x.percentile_at_seed_high fmt=".0%" >}}).'
)
TAIL = "\n\n## Sources\n\n{{< provenance >}}\n"


def toy_values(article_text):
    chunk = {
        "experiment": "toy",
        "script": "experiments/toy.py",
        "params": {},
        "versions": {},
        "seeds": [{"seed": s, "values": {"x": float(s), "y": float(s)}} for s in range(1, 101)],
    }
    artifact = {
        "experiment": "toy",
        "script": "experiments/toy.py",
        "params": {"seed": 0},
        "values": {"x": 200.0, "y": 50.0, "label": "a"},
    }
    values = merge([("results/toy.json", artifact)])["values"]
    report = robustness.build(
        robustness.collect([("c.json", chunk)]),
        values,
        robustness.article_shortcodes("a.qmd", article_text),
        {"flag_share": 0.05},
    )
    return merge([("results/toy.json", artifact), ("build/robustness.json", report)])


def bind_text(text, strict=True):
    return bind("article/index.qmd", text, toy_values(text), strict)


# ---- the rank's interval ----------------------------------------------------------------


def test_a_rank_of_79_among_100_seeds_is_the_wilson_interval_of_79_of_100():
    from scipy.stats import binomtest  # here: scipy.stats takes half a second to import, in every xdist worker

    samples = [float(v) for v in range(100)]
    assert robustness.percentile_rank(samples, 78.5) == 0.79
    low, high = robustness.percentile_interval(samples, 78.5)
    wilson = binomtest(79, 100).proportion_ci(method="wilson")
    assert (low, high) == pytest.approx((wilson.low, wilson.high), abs=1e-12)
    assert low < 0.73 < 0.79 < 0.835 < high  # the referee's other population falls inside it
    assert high - low == pytest.approx(0.1581, abs=1e-4)


def test_a_rank_at_the_end_of_the_seeds_keeps_a_width_and_stays_inside_0_and_1():
    samples = [float(v) for v in range(100)]
    assert robustness.percentile_interval(samples, 1000.0) == pytest.approx((0.963, 1.0), abs=1e-3)
    assert robustness.percentile_interval(samples, -1.0) == pytest.approx((0.0, 0.037), abs=1e-3)
    assert robustness.percentile_interval([], 1.0) is None


def test_a_tie_counts_half_in_the_interval_as_in_the_rank():
    low, high = robustness.percentile_interval([1.0, 2.0, 2.0, 3.0], 2.0)
    assert (low, high) == pytest.approx(robustness.wilson_interval(2, 4))


def test_the_sweep_exposes_the_rank_interval_beside_the_rank_as_bindable_keys():
    values = toy_values(f"{INSIDE}{TAIL}")["values"]
    assert values["robustness.toy.y.percentile_at_seed"] == 0.495  # 49 below, one tie
    assert (values["robustness.toy.y.percentile_at_seed_low"], values["robustness.toy.y.percentile_at_seed_high"]) == (
        pytest.approx(robustness.wilson_interval(49.5, 100))
    )
    assert {"percentile_at_seed_low", "percentile_at_seed_high"} <= set(robustness.FIELDS)


def test_a_rank_printed_without_its_interval_stops_a_strict_bind_naming_its_line_and_section():
    with pytest.raises(BindError) as err:
        bind_text(f"## Results\n\n{DISCLOSED} {RANK}.{TAIL}")
    [problem] = err.value.problems
    assert problem.startswith("article/index.qmd:3: robustness.toy.x.percentile_at_seed is the article's seed's")
    assert "the section '## Results' (line 1) prints it without its interval" in problem
    assert '{{< value robustness.toy.x.percentile_at_seed_low fmt=".0%" >}}' in problem
    assert "(missing: .percentile_at_seed_low, .percentile_at_seed_high)" in problem


def test_a_rank_with_its_interval_in_its_section_binds():
    bind_text(f"## Results\n\n{DISCLOSED} {RANK}{RANK_INTERVAL}{TAIL}")


def test_with_strict_false_a_bare_rank_carries_a_notice_beside_its_number():
    doc = bind_text(f"{DISCLOSED} {RANK}.{TAIL}", strict=False)
    notice = doc["bindings"]["robustness.toy.x.percentile_at_seed|.0%|"]["notice"]
    assert notice["class"] == "claim-inconclusive" and "interval" in notice["text"]
    assert "{{<" not in notice["message"]


# ---- a value outside its band ------------------------------------------------------------


NOTE = "(outside the 5–95 % band of 100 seeds: 6.0 to 95.0)"


@pytest.mark.parametrize("strict", [True, False])
def test_an_out_of_band_value_carries_the_note_wherever_it_is_printed_said_or_not(strict):
    # the build says it: which values lie outside depends on the sweep, not on a sentence
    text = f"# T\n\n{OUT}\n\nAgain, {DISCLOSED} {INSIDE}{TAIL}"
    doc = bind_text(text, strict)
    band = doc["bindings"]["toy.x|.1f|"]["band"]
    assert band["disclosed"] == {"text": NOTE, "class": OUTLIER_CLASS}
    assert (band["p05"], band["p95"], band["seeds"]) == (pytest.approx(5.95), pytest.approx(95.05), 100)
    assert "100 seeds (1 to 100), 5.95 to 95.05, above 100.0% of them" in band["message"]
    assert "band" not in doc["bindings"]["toy.y|.1f|"]
    bound = bound_markdown(text, doc).replace("\\", "")  # md_text's escapes
    first, second = bound.split("Again,")
    for place in (first, second):
        assert f'[{NOTE}]{{claim-mark="{OUTLIER_CLASS}" title="toy.x = 200' in place
    assert bound.count(NOTE) == 2 and "⚠" not in bound


def test_band_outside_on_a_value_inside_its_band_is_a_warning_and_prints_no_note(capsys):
    # another sweep (config/test.yaml's 20 seeds) draws another band: the author's word is not an error
    text = '{{< value toy.y fmt=".1f" band="outside" >}}' + TAIL
    for strict in (True, False):
        document = bind_text(text, strict)
        [binding] = [b for b in document["bindings"].values() if b["key"] == "toy.y"]
        assert "band" not in binding
    said = capsys.readouterr().err
    assert 'article/index.qmd:1: band="outside" on toy.y, but its value 50 lies inside' in said
    assert "5.95 to 95.05: the note would be false" in said


@pytest.mark.parametrize(
    ("shortcode", "reason"),
    [
        ('{{< value toy.params.seed band="outside" >}}', "toy.params.seed is a parameter, not a seeded value"),
        ('{{< value toy.label band="outside" >}}', "toy.label is not a number the sweep spreads"),
        (
            '{{< value robustness.toy.x.median band="outside" >}}',
            "robustness.toy.x.median is the sweep's own statistic",
        ),
        ('{{< value toy.x band="maybe" >}}', "band= takes only outside, got 'maybe'"),
        ('{{< claim toy.x expect="> 1" band="outside" >}}', "claim does not take band"),
    ],
)
def test_band_is_refused_where_the_sweep_gives_no_band_with_the_reason(shortcode, reason):
    text = f"{shortcode} {{{{< value toy.label >}}}} {{{{< value toy.y >}}}}{TAIL}"
    with pytest.raises(BindError) as err:
        bind_text(text)
    assert any(reason in p for p in err.value.problems), err.value.problems


def test_without_a_sweep_in_the_values_band_is_refused_and_nothing_is_checked():
    artifact = {"experiment": "toy", "script": "experiments/toy.py", "params": {"seed": 0}, "values": {"x": 200.0}}
    values = merge([("results/toy.json", artifact)])
    bind("a.qmd", f"{OUT}{TAIL}", values, True)
    with pytest.raises(BindError, match="this build's values hold no seed sweep"):
        bind("a.qmd", f"{DISCLOSED}{TAIL}", values, True)
    assert "band" not in bind("a.qmd", f"{OUT}{TAIL}", values, True)["bindings"]["toy.x|.1f|"]


def test_a_value_every_seed_shares_is_never_outside():
    band = seed_band.Band("k", 1.0, 1.0, 1.0, 100, 0.5, 1, 100)
    assert not band.outside


# ---- every edition ---------------------------------------------------------------------


@pytest.mark.workflow
def test_every_edition_prints_the_note_beside_an_out_of_band_value(tmp_path):
    from articlekit.core.jsonio import write_json
    from tests.test_hostile_editions import READERS, every_edition
    from tests.test_render import make_article

    text = (
        '---\ntitle: "Bands"\n---\n\n## Prose\n\n'
        'x is {{< value toy.x fmt=".1f" >}} and '
        '{{< value robustness.toy.x.percentile_at_seed fmt=".0%" >}} '
        '({{< value robustness.toy.x.percentile_at_seed_low fmt=".0%" >}} to '
        '{{< value robustness.toy.x.percentile_at_seed_high fmt=".0%" >}}).\n\n'
        "## Where every number comes from\n\n{{< provenance >}}\n"
    )
    article, _ = make_article(tmp_path / "article", text)
    values = toy_values(text)
    bindings = article.parent / "build" / "bindings.json"
    write_json(bindings, bind(str(article), text, values, strict=True))
    editions = every_edition(article, bindings)
    for fmt, path in editions.items():
        said = " ".join(READERS[fmt](path).split())
        assert "(outside the 5–95 % band of 100 seeds: 6.0 to 95.0)" in said, fmt
    page = READERS["html"](editions["html"])
    assert f'<span class="{OUTLIER_CLASS}" title="toy.x = 200' in page
