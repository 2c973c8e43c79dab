"""A claim must say something: one that no value could break is refused, in
the article (bind, at its line) and in the baseline (at its entry's line),
with what a claim must state. Shown as checked, `expect="> -inf"` would tell
the reader the build vouches for a sentence it never tested.

A claim says nothing when its bound is open on the side it tests (`> -inf`,
`< inf`, either side of a `between`), when every finite number meets it
(`!= inf`), or when it compares the value with itself.
"""

import re
import textwrap
from pathlib import Path

import pytest

from articlekit.article.bind import BindError, bind
from articlekit.article.shortcodes import scan
from articlekit.core.claims import ClaimError, refuse_vacuous, vacuous
from articlekit.core.jsonio import read_json
from articlekit.data.baseline import BaselineError, load_baseline
from articlekit.data.values import merge
from tests.workspace import PROJECT_ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "article"
KEY = "demo.parity.max_abs_diff"  # a number of the fixture's values
MUST_STATE = "a claim must state a bound some value could break"


@pytest.mark.parametrize(
    "expect, why",
    [
        ("> -inf", "every finite number meets '> -inf'"),
        (">= -inf", "every finite number meets '>= -inf'"),
        ("< inf", "every finite number meets '< inf'"),
        ("<= inf", "every finite number meets '<= inf'"),
        ("!= inf", "every finite number meets '!= inf'"),
        ("!= -inf", "every finite number meets '!= -inf'"),
        ("between -inf and inf", "every finite number meets 'between -inf and inf'"),
        ("between -inf and 1e-12", "the lower bound of 'between -inf and 1e-12' bounds nothing (write '<= 1e-12')"),
        ("between 0 and inf", "the upper bound of 'between 0 and inf' bounds nothing (write '>= 0')"),
        ("> -1e309", "every finite number meets '> -inf'"),  # read as -inf
        (">= -1.7976931348623157e308", "every finite number meets"),  # the most negative float
        ("> 0 and < inf", "every finite number meets '< inf'"),  # one empty test is enough
        ("all > -inf", "every finite number meets 'all > -inf'"),
        ('contains ""', "every text contains the empty text"),
        (f"> {KEY}", f"'> {KEY}' compares {KEY} with itself"),
        (f"== {KEY}", f"'== {KEY}' compares {KEY} with itself"),
        (f"between {KEY} and 1", f"compares {KEY} with itself"),
    ],
)
def test_a_claim_no_value_could_break_says_nothing(expect, why):
    reason = vacuous(expect, KEY)
    assert reason and reason.startswith(f"claim {expect!r} says nothing: ") and why in reason, reason
    assert reason.endswith(MUST_STATE + ": a finite number (such as '> 0.5') or another key")
    with pytest.raises(ClaimError, match="says nothing"):
        refuse_vacuous(expect, KEY)


@pytest.mark.parametrize(
    "expect",
    [
        "< 1e-12",
        "== 0.0",
        "> 1",
        "between 1e-8 and 2e-6",
        "> 0.5 and < other.key",
        "== inf",
        "== -inf",
        "<= -inf",  # holds only for -inf: says the value is -inf
        "> inf",
        "< -inf",  # no value meets them: they fail, which the build reports
        "!= 0",
        "== true",
        "!= null",
        'contains "mismatch"',
        "> other.key",
        "all >= 0",
    ],
)
def test_a_claim_some_value_could_break_is_kept(expect):
    assert vacuous(expect, KEY) is None


def test_a_claim_that_does_not_parse_is_still_a_claim_error():
    with pytest.raises(ClaimError, match="expected a comparison"):
        vacuous("faster than 1", KEY)


def every_claim(text):
    return [
        (sc.args[0], sc.kwargs["expect"]) for sc in scan(text) if not sc.escaped and sc.kwargs.get("expect") and sc.args
    ]


@pytest.mark.parametrize(
    "article",
    ["article/index.qmd", "examples/summation/article/index.qmd", "articlekit/skeleton/article/article/index.qmd"],
)
def test_every_claim_the_project_ships_says_something(article):
    claims = every_claim((PROJECT_ROOT / article).read_text(encoding="utf-8"))
    assert claims
    assert [(key, expect, vacuous(expect, key)) for key, expect in claims if vacuous(expect, key)] == []


# ---- through bind: the article's line -------------------------------------------------


@pytest.fixture(scope="module")
def values_doc():
    return merge((p, read_json(p)) for p in sorted((FIXTURE / "results").glob("*.json")))


@pytest.mark.parametrize("strict", [True, False])
def test_bind_refuses_a_vacuous_claim_at_its_line_even_when_not_strict(values_doc, strict):
    """As a contributor would write it: a claim that holds whatever the
    number is, beside a number the text says is small."""
    article = (FIXTURE / "index.qmd").read_text(encoding="utf-8")
    assert 'expect="< 1e-12"' in article
    text = article.replace(f'{KEY} fmt="r" expect="< 1e-12"', f'{KEY} fmt="r" expect="> -inf"', 1)
    text = text.replace('expect="> 1"', 'expect="> demo.parity.reversed_diff"', 1)
    with pytest.raises(BindError) as caught:
        bind("article/index.qmd", text, values_doc, strict)
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines, 1) if '"> -inf"' in line)
    second = next(i for i, line in enumerate(lines, 1) if '"> demo.parity.reversed_diff"' in line)
    problems = caught.value.problems
    assert any(
        p.startswith(f"article/index.qmd:{first}: ") and "claim '> -inf' says nothing" in p and MUST_STATE in p
        for p in problems
    ), problems
    assert any(
        p.startswith(f"article/index.qmd:{second}: ") and "compares demo.parity.reversed_diff with itself" in p
        for p in problems
    ), problems


def test_bind_keeps_the_fixture_s_claims(values_doc):
    article = (FIXTURE / "index.qmd").read_text(encoding="utf-8")
    assert bind("article/index.qmd", article, values_doc, True)["claims"]


# ---- through the baseline: the entry's line -------------------------------------------

EDITION = """\
edition:
  title: t
  source: s
  date: "2026-10-12"
  versions: {python: "3.13", numpy: "2.5.4", torch: "2.14.1"}
entries:
  - id: scaling.dk64.unscaled.max-weight
    class: exact
    published: "0.921946"
    value: 0.9219455027665324
    key: scaling.dk64.unscaled.max_weight
    fmt: ".6f"
    where: {section: s, quote: q}
"""


@pytest.mark.parametrize(
    "check, why",
    [
        ("between -inf and inf", "every finite number meets 'between -inf and inf'"),
        ("< parity.float32.sdpa.max_abs_diff", "compares parity.float32.sdpa.max_abs_diff with itself"),
    ],
)
def test_a_baseline_check_that_says_nothing_is_refused_at_its_entry(tmp_path, check, why):
    entry = f"""\
        - id: parity.float32
          class: noise
          published: "1e-7"
          value: 1.0e-7
          key: parity.float32.sdpa.max_abs_diff
          check: "{check}"
          where: {{section: s, quote: q}}
        """
    path = tmp_path / "published.yaml"
    path.write_text(EDITION + textwrap.indent(textwrap.dedent(entry), "  "))
    with pytest.raises(BaselineError) as caught:
        load_baseline(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "id: parity.float32" in text)
    message = str(caught.value)
    assert re.search(rf"{re.escape(str(path))}:{line}: entry 'parity.float32': check: claim .* says nothing: ", message)
    assert why in message and MUST_STATE in message
