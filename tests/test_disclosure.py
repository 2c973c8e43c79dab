"""A claim the seed sweep flags (it holds at the article's seed, fails for
many other seeds) is disclosed in its section, which prints how often it
holds and that share's interval: a strict build fails otherwise, naming the
claim, its line and the section; with strict=false the page marks it.

The rule is articlekit/article/disclosure.py, called by bind; the flags come
from the sweep's summary (articlekit/article/robustness.py).
"""

import json
import re

import pytest

from articlekit.article import disclosure
from articlekit.article import robustness
from articlekit.article.bind import BindError, bind
from articlekit.article.shortcodes import scan
from articlekit.data.values import merge
from tests.shared_build import copy_of_test_build
from tests.workspace import copy_environment
from tests import snakemake_fork

# toy.x is 5 at the article's seed and the seed itself elsewhere: "> 3" holds
# at the article's seed and fails for seeds 1 to 3 of 10, more than flag_share
CLAIM = 'x is {{< value toy.x fmt=".1f" expect="> 3" >}}.'
DISCLOSURE = (
    'It holds for {{< value robustness.toy.x.holds_fraction fmt=".0%" >}} of the seeds '
    '({{< value robustness.toy.x.holds_fraction_low fmt=".0%" >}} to '
    '{{< value robustness.toy.x.holds_fraction_high fmt=".0%" >}}).'
)
TAIL = "\n\n## Sources\n\n{{< provenance >}}\n"


def toy_values(flag_share=0.2):
    chunk = {
        "experiment": "toy",
        "script": "experiments/toy.py",
        "params": {},
        "versions": {},
        "seeds": [{"seed": s, "values": {"x": float(s)}} for s in range(1, 11)],
    }
    artifact = {"experiment": "toy", "script": "experiments/toy.py", "params": {"seed": 0}, "values": {"x": 5.0}}
    values = merge([("results/toy.json", artifact)])["values"]
    report = robustness.build(
        robustness.collect([("c.json", chunk)]),
        values,
        robustness.article_shortcodes("a.qmd", CLAIM),
        {"flag_share": flag_share},
    )
    return merge([("results/toy.json", artifact), ("build/robustness.json", report)])


def bind_text(text, strict=True, flag_share=0.2):
    return bind("article/index.qmd", text, toy_values(flag_share), strict)


def test_a_flagged_claim_its_section_does_not_disclose_stops_a_strict_build_naming_claim_line_and_section():
    text = f"# Title\n\n## Results\n\nFirst, {CLAIM}\n\n## Elsewhere\n\n{DISCLOSURE}{TAIL}"
    with pytest.raises(BindError) as err:
        bind_text(text)
    [problem] = err.value.problems
    assert problem.startswith(
        "article/index.qmd:5: claim 'toy.x > 3' holds at the article's seed but fails for 30% of the sweep's seeds"
    )
    assert "the section '## Results' (line 3) does not say so" in problem
    assert "{{< value robustness.toy.x.holds_fraction fmt=\".0%\" >}}" in problem
    assert "(missing: .holds_fraction, .holds_fraction_low, .holds_fraction_high)" in problem


def test_a_flagged_claim_is_disclosed_by_its_share_and_interval_in_the_same_section():
    doc = bind_text(f"## Results\n\nFirst, {CLAIM}\n\n### More\n\n{DISCLOSURE}{TAIL}")  # a subsection is its part
    assert doc["bindings"]['toy.x|.1f|> 3']["claim"]["holds"]
    assert "mark" not in doc["bindings"]['toy.x|.1f|> 3']["claim"]
    bind_text(f"{CLAIM} {DISCLOSURE}{TAIL}")  # the opening, before any heading, is a section too


def test_the_share_alone_is_not_a_disclosure_its_interval_is_part_of_it():
    share_only = DISCLOSURE.split(" (")[0] + "."
    with pytest.raises(BindError, match=r"\(missing: \.holds_fraction_low, \.holds_fraction_high\)$"):
        bind_text(f"{CLAIM} {share_only}{TAIL}")


def test_a_claim_the_sweep_does_not_flag_needs_no_disclosure():
    bind_text(f"{CLAIM}{TAIL}", flag_share=0.5)  # fails for 30 %, allowed 50 %


def test_with_strict_false_the_undisclosed_claim_is_marked_beside_its_number_and_bind_warns():
    doc = bind_text(f"{CLAIM}{TAIL}", strict=False)
    claim = doc["bindings"]['toy.x|.1f|> 3']["claim"]
    assert claim["mark"] == disclosure.MARK and claim["holds"]
    assert disclosure.warnings(doc["bindings"]) == [claim["message"]]
    assert "the article's opening (before its first heading) does not say so" in claim["message"]
    assert "{{<" not in claim["message"]  # the tooltip: a shortcode there would print as text


def test_sections_run_to_the_next_heading_of_their_level_and_headings_in_code_are_not_headings():
    text = "intro\n\n## A\n\na\n\n```python\n# not a heading\n```\n\n### A.1\n\nb\n\n## B\n\nc\n"
    found = disclosure.sections(text)
    assert [(s.title, s.line) for s in found] == [("", 1), ("## A", 3), ("### A.1", 11), ("## B", 15)]
    a = text[found[1].start : found[1].end]
    assert a.startswith("## A") and "### A.1" in a and "## B" not in a
    assert disclosure.section_of(found, text.index("# not a heading")).title == "## A"
    assert disclosure.section_of(found, text.index("b\n")).title == "### A.1"


# ---- end to end: the article, built ----------------------------------------------------------


BUILD = ("--cores", "2", "--configfile", "config/test.yaml")  # after the targets: --configfile takes many


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of its own of the run's one TEST_BUILD (tests/shared_build.py):
    its experiments and sweep ran on config/test.yaml, as this test's build
    would run them; built with strict=false, so that the strict build below
    binds again (strict is a param of bind) and judges the article as it is."""
    return copy_of_test_build(tmp_path_factory).project


def build(work, *args):
    """snakemake ARGS, forked from one that has imported it (tests/snakemake_fork.py):
    both streams in .stdout."""
    return snakemake_fork.run(work, [*args, *BUILD], copy_environment(work), timeout=900)


@pytest.mark.slow
def test_the_article_discloses_every_claim_its_sweep_flags_and_a_strict_build_fails_when_one_is_not(project):
    """The article as it is: its strict build passes, with the sweep's flagged
    claims disclosed. Its opening's disclosure taken out, the strict build
    stops, naming the claim, its line and the section; strict=false renders
    the page with the mark beside the number."""
    proc = build(project, "build/bindings.json", "build/robustness.json")
    assert proc.returncode == 0, proc.stdout[-4000:]
    # the article bound here under strict (the copy was built with strict=false)
    assert re.search(r"^\s*(local)?rule bind:", proc.stdout, re.M), proc.stdout[-4000:]
    flagged = [c for c in json.loads((project / "build/robustness.json").read_text())["claims"] if c["flagged"]]
    assert flagged, "the test configuration's sweep flags no claim: nothing to disclose"

    article = project / "article/index.qmd"
    original = article.read_text()
    shares = re.findall(
        r" *it does for \{\{< value robustness\.scaling\.dk64\.unscaled\.max_weight\.holds_fraction "
        r".*?holds_fraction_high [^>]*>\}\}\),\n",
        original,
        re.S,
    )
    assert len(shares) == 1, "the In short box no longer says how often the collapse holds"
    article.write_text(original.replace(shares[0], "  and\n"))
    try:
        proc = build(project, "build/bindings.json")
        assert proc.returncode != 0
        line = next(
            i
            for i, text in enumerate(article.read_text().splitlines(), 1)
            if 'scaling.dk64.unscaled.max_weight fmt=".2%" expect="> 0.5"' in text
        )
        said = proc.stdout
        assert re.search(
            rf"article/index.qmd:{line}: claim 'scaling.dk64.unscaled.max_weight > 0.5' holds at the "
            r"article's seed but fails for \d+% of the sweep's seeds",
            said,
        ), said[-3000:]
        assert "the article's opening (before its first heading) does not say so" in said

        proc = build(project, "build/article.html", "--config", "strict=false")
        assert proc.returncode == 0, proc.stdout[-4000:]
        page = (project / "build/article.html").read_text()
        assert 'class="claim-failed"' in page and disclosure.MARK["text"] in page
        assert (
            "bind: warning: claim 'scaling.dk64.unscaled.max_weight > 0.5' holds at the article's seed"
            in (project / "logs/bind.log").read_text()
        )
    finally:
        article.write_text(original)
    assert build(project, "build/bindings.json").returncode == 0


def test_the_disclosure_is_checked_on_the_shortcodes_the_article_holds():
    """Each place counts on its own: the claim is scanned where it stands."""
    text = f"## A\n\n{CLAIM} {DISCLOSURE}\n\n## B\n\nAgain, {CLAIM}{TAIL}"
    found = disclosure.undisclosed("article/index.qmd", text, scan(text), toy_values()["values"])
    assert [weak.shortcode.line for weak in found] == [7]
