"""claims: what the prose says about a number, checked on every build."""

import math

import pytest

from articlekit.core.claims import ClaimError, evaluate, keys_referenced


@pytest.mark.parametrize(
    "expect, value, holds",
    [
        ("< 1e-12", 2.220446049250313e-16, True),
        ("< 1e-12", 3.67, False),
        ("<= 1", 1.0, True),
        ("> 1", 3.67, True),
        (">= 2", 1.5, False),
        ("== 0.0", 0.0, True),
        ("== 0.0", 1e-300, False),
        ("!= 0", 0.5, True),
        ("== true", True, True),
        ("== false", True, False),
        ("== null", None, True),
        ("!= null", 3, True),
        ("between 0.9 and 1", 0.92, True),
        ("between 0.9 and 1", 1.01, False),
        ("> 1 and < 10", 5.4, True),
        ("> 1 and < 10", 12.0, False),
        ('contains "mismatch"', "ValueError: matmul: Input operand 1 has a mismatch", True),
        ("contains 'transpose'", "size 5 is different from 4", False),
        ('== "RuntimeError"', "RuntimeError", True),
        ("all >= 0", [0.1, 0.0, 0.9], True),
        ("all == 1", [[1, 1], [1, 0]], False),
        ("any > 0.5", [0.1, 0.7], True),
        ("< inf", 1e308, True),
    ],
)
def test_claim_grammar(expect, value, holds):
    assert evaluate(expect, value).holds is holds


def test_a_claim_can_compare_with_another_value_key():
    values = {"timing.matrix.median_ms": 1.05}
    result = evaluate("> timing.matrix.median_ms", 5.669, resolve=values.__getitem__)
    assert result.holds
    assert keys_referenced("> timing.matrix.median_ms and < 100") == ["timing.matrix.median_ms"]


def test_the_message_shows_value_and_claim():
    result = evaluate("< 1e-12", 3.668259537831219)
    assert not result.holds
    assert "3.668259537831219" in result.message and "'< 1e-12' does not hold" in result.message


def test_nan_is_never_equal_and_never_small():
    assert not evaluate("== 0.0", math.nan).holds
    assert not evaluate("< 1", math.nan).holds


def test_true_is_not_one():
    with pytest.raises(ClaimError, match="cannot compare"):
        evaluate("== 1", True)


@pytest.mark.parametrize(
    "expect, value, message",
    [
        ("", 1.0, "empty claim"),
        ("< ", 1.0, "expected a number"),
        ("about 3", 3.0, "expected a comparison"),
        ("< 1 or > 2", 0.5, "expected 'and'"),
        ("between 1 2", 1.5, "between LOW and HIGH"),
        ('< "text"', 1.0, "cannot compare the number"),
        ("contains 'x'", 5.0, "needs text"),
        ("< 3", "text", "cannot compare the text"),
        ("all > 0", 1.0, "needs a list"),
        ("> 1; import os", 2.0, "cannot read"),
    ],
)
def test_a_malformed_or_mistyped_claim_is_an_error_not_a_failure(expect, value, message):
    with pytest.raises(ClaimError, match=message):
        evaluate(expect, value)
