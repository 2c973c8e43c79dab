"""Claims the prose makes about a value, checked on every build.

A claim sits beside its number: {{< value KEY expect="< 1e-12" >}}, or
{{< claim KEY expect="== 0.0" >}} when the text states it without printing
the value. Grammar (a tiny recursive-descent parser, never eval):

    claim      := test ("and" test)*
    test       := [quantifier] check
    quantifier := "all" | "any"            over the items of a list value
    check      := op operand               op: < <= > >= == !=
                | "between" operand "and" operand     (inclusive)
                | "contains" string        substring of a text value
    operand    := number                   1e-12, 0.0, -3, inf, -inf
                | "true" | "false" | "null"
                | string                   "..." or '...'
                | KEY                      another value: timing.loop.median_ms,
                                           example.weights[0][2]

Examples: "< 1e-12", "== 0.0", "== false", "between 0.9 and 1", "> 1 and < 10",
"> timing.matrix.median_ms", "all >= 0", 'contains "mismatch"'.

Comparisons are exact (== 0.0 means exactly zero). Numbers compare with
numbers, booleans only with true/false (True is not 1 here), text only with
text; any other pairing is a ClaimError: the claim itself is wrong, which
fails the build even when strict=false.

Measured values. A value (or a key operand) may be an Interval: an estimate
with the interval its measurement supports (a timing ratio and its 95 %
interval). A claim about it holds only when it holds for every value in the
interval, fails only when it fails for every value in it, and is otherwise
*inconclusive*: the measurement cannot decide, which is never reported as
"does not hold". Result.status is one of the three statuses of
articlekit.core.status, which spells each on every page and in every
message; Result.holds is True only when it holds. Tests joined by "and"
combine as three-valued logic: any failing test fails the claim, else any
inconclusive one makes it inconclusive.
"""

import difflib
import math
import re
import sys
from dataclasses import dataclass

from articlekit.core.errors import ArticlekitError
from articlekit.core.fmt import format_value
from articlekit.core.status import FAILS, HOLDS, INCONCLUSIVE, STATUS

_TOKENS = re.compile(
    r"""\s*(?:
        (?P<op><=|>=|==|!=|<|>)
      | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
      | (?P<number>[-+]?(?:inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.\[]))
      | (?P<word>[A-Za-z_][\w-]*(?:(?:\.[A-Za-z_][\w-]*)|\[-?\d+\])*)
    )""",
    re.X,
)
_WORDS = {"and", "all", "any", "between", "contains"}
_CONSTANTS = {"true": True, "false": False, "null": None}
_OPS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


class ClaimError(ArticlekitError):
    """The claim cannot be parsed or cannot apply to this value."""


@dataclass(frozen=True)
class Interval:
    """A measured number: its estimate and the interval [low, high] around it."""

    estimate: float
    low: float
    high: float

    def __post_init__(self):
        numbers = (self.estimate, self.low, self.high)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            raise ClaimError(f"an interval needs three numbers, got {numbers!r}")
        if not self.low <= self.high:
            raise ClaimError(f"interval [{self.low!r}, {self.high!r}]: low is above high")


@dataclass
class Result:
    holds: bool
    message: str
    status: str = ""

    def __post_init__(self):
        self.status = self.status or (HOLDS if self.holds else FAILS)


def tokenize(expect):
    tokens, pos = [], 0
    while pos < len(expect):
        if not expect[pos:].strip():
            break
        m = _TOKENS.match(expect, pos)
        if not m:
            raise ClaimError(f"claim {expect!r}: cannot read {expect[pos:]!r}")
        kind = m.lastgroup
        text = m.group(kind)
        if kind == "word" and text in _CONSTANTS:
            tokens.append(("const", _CONSTANTS[text]))
        elif kind == "word" and text in _WORDS:
            tokens.append(("kw", text))
        elif kind == "word":
            tokens.append(("key", text))
        elif kind == "number":
            tokens.append(("const", float(text) if any(c in text for c in ".eEn") else int(text)))
        elif kind == "string":
            tokens.append(("const", text[1:-1].replace("\\" + text[0], text[0])))
        else:
            tokens.append((kind, text))
        pos = m.end()
    return tokens


def parse(expect):
    """-> list of tests, each (quantifier or None, check, operands)."""
    tokens = tokenize(expect)
    if not tokens:
        raise ClaimError("empty claim")
    tests, i = [], 0
    while True:
        quantifier = None
        if i < len(tokens) and tokens[i] in (("kw", "all"), ("kw", "any")):
            quantifier = tokens[i][1]
            i += 1
        if i >= len(tokens):
            raise ClaimError(f"claim {expect!r}: ends before its check")
        kind, text = tokens[i]
        if kind == "op":
            check, operands, i = text, [_operand(tokens, i + 1, expect)], i + 2
        elif (kind, text) == ("kw", "between"):
            if i + 2 >= len(tokens) or tokens[i + 2] != ("kw", "and"):
                raise ClaimError(f"claim {expect!r}: expected 'between LOW and HIGH'")
            low, high = _operand(tokens, i + 1, expect), _operand(tokens, i + 3, expect)
            check, operands, i = "between", [low, high], i + 4
        elif (kind, text) == ("kw", "contains"):
            check, operands, i = "contains", [_operand(tokens, i + 1, expect)], i + 2
        else:
            raise ClaimError(
                f"claim {expect!r}: expected a comparison (< <= > >= == !=), 'between' or 'contains', got {text!r}"
            )
        tests.append((quantifier, check, operands))
        if i == len(tokens):
            return tests
        if tokens[i] != ("kw", "and"):
            raise ClaimError(f"claim {expect!r}: expected 'and' or the end, got {tokens[i][1]!r}")
        i += 1


def _operand(tokens, i, expect):
    if i >= len(tokens) or tokens[i][0] not in ("const", "key"):
        got = repr(tokens[i][1]) if i < len(tokens) else "the end"
        raise ClaimError(f"claim {expect!r}: expected a number, true, false, null, text or a key, got {got}")
    return tokens[i]


def keys_referenced(expect):
    """Value keys a claim compares against, in order."""
    return [op[1] for _, _, operands in parse(expect) for op in operands if op[0] == "key"]


@dataclass(frozen=True)
class Bound:
    """One threshold a claim puts on its value: side "<" (an upper bound: <
    or <=) or ">" (a lower bound: > or >=), and the number."""

    side: str
    value: float


def simple_bound(expect):
    """The one threshold of a claim that is a single bound on the value
    itself: "> 0.1" -> Bound(">", 0.1), "<= 1e-12" -> Bound("<", 1e-12).
    None for any other claim: a range ("between 1e-8 and 2e-6", "> 1 and
    < 10") says where the value lies, not a threshold it must stay beyond;
    equality, 'contains', a comparison with another key and a quantified test
    ("all < 1", a bound on each item) are not thresholds either. ClaimError
    for a claim that does not parse."""
    tests = parse(expect)
    if len(tests) != 1:
        return None
    quantifier, check, operands = tests[0]
    if quantifier or check not in ("<", "<=", ">", ">="):
        return None
    kind, number = operands[0]  # a comparison has one operand
    if kind != "const" or _kind(number) != "number":
        return None
    return Bound(check[0], number)


def evaluate(expect, value, resolve=None):
    """Check `value` (a plain value or an Interval) against the claim.
    `resolve(key)` returns another value, or Interval, for claims like
    "> timing.matrix.median_ms"."""
    results = []
    for quantifier, check, operands in parse(expect):
        bound = [_resolve(op, resolve, expect) for op in operands]
        if quantifier:
            if not isinstance(value, list):
                raise ClaimError(f"claim {expect!r}: '{quantifier}' needs a list, the value is {_show(value)}")
            items = _leaves(value)
            outcomes = [_check(check, item, bound, expect) for item in items]
            holds = all(outcomes) if quantifier == "all" else any(outcomes)
        elif isinstance(value, Interval) or any(isinstance(b, Interval) for b in bound):
            holds = _check_interval(check, value, bound, expect)
        else:
            holds = _check(check, value, bound, expect)
        results.append(holds)
    if False in results:
        status = FAILS
    elif None in results:
        status = INCONCLUSIVE
    else:
        status = HOLDS
    return Result(status == HOLDS, f"value {_show(value)}: claim '{expect}' {STATUS[status].result}", status)


def _check_interval(check, value, operands, expect):
    """True when the check holds for every value of the intervals, False when
    it fails for every value, None (inconclusive) otherwise. A plain number
    is the interval [v, v], so this agrees with _check on plain numbers."""
    for operand in (value, *operands):
        if _kind(operand) != "number":
            raise ClaimError(
                f"claim {expect!r}: a measured value compares only with numbers, "
                f"got the {_kind(operand)} {_show(operand)}"
            )
    if check == "contains":
        raise ClaimError(f"claim {expect!r}: 'contains' needs text, the value is {_show(value)}")
    a = _span(value)
    if check == "between":
        return _and3(_compare(">=", a, _span(operands[0])), _compare("<=", a, _span(operands[1])))
    return _compare(check, a, _span(operands[0]))


def _compare(check, a, b):
    (a_low, a_high), (b_low, b_high) = a, b
    if check in ("<", "<="):
        every, some = _OPS[check](a_high, b_low), _OPS[check](a_low, b_high)
    elif check in (">", ">="):
        every, some = _OPS[check](a_low, b_high), _OPS[check](a_high, b_low)
    else:
        equal_everywhere = a_low == a_high == b_low == b_high
        overlap = a_low <= b_high and b_low <= a_high
        every, some = (equal_everywhere, overlap) if check == "==" else (not overlap, not equal_everywhere)
    return True if every else (False if not some else None)


def _and3(*outcomes):
    if False in outcomes:
        return False
    return None if None in outcomes else True


def _span(v):
    return (v.low, v.high) if isinstance(v, Interval) else (v, v)


def _resolve(operand, resolve, expect):
    kind, text = operand
    if kind == "const":
        return text
    if resolve is None:
        raise ClaimError(f"claim {expect!r}: compares with key {text!r} but no values were given")
    try:
        return resolve(text)
    except KeyError as exc:  # not a key: say what an operand can be
        near = difflib.get_close_matches(text, [*_CONSTANTS, "inf"], n=1) + list(getattr(exc, "closest", []))
        raise ClaimError(
            f"claim {expect!r}: {text!r} is neither a constant nor a key of the values; an operand "
            "is a number (1e-12, -3, inf), true, false, null, a quoted \"text\" or a value key"
            + (f"; did you mean {' or '.join(near)}?" if near else "")
        ) from None


def _leaves(items):
    for item in items:
        if isinstance(item, list):
            yield from _leaves(item)
        else:
            yield item


def _kind(v):
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    if isinstance(v, (int, float, Interval)):
        return "number"
    if isinstance(v, str):
        return "text"
    return type(v).__name__


def _check(check, value, operands, expect):
    if check == "contains":
        needle = operands[0]
        if not isinstance(value, str) or not isinstance(needle, str):
            raise ClaimError(
                f"claim {expect!r}: 'contains' needs text on both sides, got {_kind(value)} and {_kind(needle)}"
            )
        return needle in value
    for operand in operands:
        if _kind(value) != _kind(operand) and _kind(operand) != "null":
            raise ClaimError(
                f"claim {expect!r}: cannot compare the {_kind(value)} {_show(value)} "
                f"with the {_kind(operand)} {_show(operand)}"
            )
    if check == "between":
        return operands[0] <= value <= operands[1]
    if _kind(operands[0]) in ("boolean", "null") or _kind(value) == "null":
        if check not in ("==", "!="):
            raise ClaimError(f"claim {expect!r}: only == and != apply to {_show(operands[0])}")
        same = value is operands[0]
        return same if check == "==" else not same
    if _kind(value) == "text" and check not in ("==", "!="):
        raise ClaimError(f"claim {expect!r}: only ==, != and contains apply to text")
    if isinstance(value, float) and math.isnan(value) and check == "==":
        return False
    return _OPS[check](value, operands[0])


def _show(value):
    if isinstance(value, Interval):
        return f"{_show(value.estimate)} (interval {_show(value.low)} to {_show(value.high)})"
    text = format_value(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_holds(check, value):
    """(holds, message) for a check in the claim grammar of articlekit.core.claims
    ("< 1e-12", "> 1", "between 1e-9 and 1e-5"). A check that cannot apply
    to the value (text against a number) does not hold."""
    try:
        result = evaluate(check, value)
    except ClaimError as exc:
        return False, str(exc)
    return result.holds, result.message


# ---- a claim must say something ------------------------------------------------------
#
# A claim is checked so that a reader can trust the sentence beside it. One
# that no value could break (`> -inf`, `between -inf and inf`, `!= inf`, a
# value compared with itself) would be shown as checked while checking
# nothing, so bind and the baseline refuse it, naming its line.

MUST_STATE = "a claim must state a bound some value could break: a finite number (such as '> 0.5') or another key"


def vacuous(expect, key=None):
    """Why the claim `expect` about the value `key` says nothing, as a
    sentence ending in what a claim must state; None when each of its tests
    could fail for some finite value. Raises ClaimError when it does not parse.

    A test says nothing when its bound is open on the side it tests (`> -inf`,
    `<= inf`, either side of a `between`: the most negative and the largest
    float count as open, and 1e309 is read as inf), when any finite number
    meets it (`!= inf`, `contains ""`), or when it compares the value with
    itself (`> KEY` on KEY's own claim)."""
    for quantifier, check, operands in parse(expect):
        reason = _says_nothing(check, operands, key)
        if reason:
            return (
                f"claim {expect!r} says nothing: {reason.format(test=_spelled_test(quantifier, check, operands))}; "
                + MUST_STATE
            )
    return None


def refuse_vacuous(expect, key=None):
    """Raise ClaimError with vacuous()'s sentence when the claim says nothing."""
    reason = vacuous(expect, key)
    if reason:
        raise ClaimError(reason)


def _says_nothing(check, operands, key):
    if key is not None and ("key", key) in operands:
        return f"'{{test}}' compares {key} with itself, which holds or fails whatever its value is"
    if check == "contains":
        return "every text contains the empty text ''" if operands[0] == ("const", "") else None
    sides = [(">=", operands[0]), ("<=", operands[1])] if check == "between" else [(check, operands[0])]
    open_sides = [op for op, (kind, bound) in sides if kind == "const" and _open_bound(op, bound)]
    if check == "between" and len(open_sides) == 1:
        low, high = (_spelled(operand) for operand in operands)
        side, instead = ("lower", f"<= {high}") if open_sides == [">="] else ("upper", f">= {low}")
        return f"the {side} bound of '{{test}}' bounds nothing (write '{instead}')"
    if open_sides or (
        check == "!="
        and operands[0][0] == "const"
        and _is_number(operands[0][1])
        and abs(operands[0][1]) >= sys.float_info.max
    ):
        return "every finite number meets '{test}'"
    return None


def _open_bound(op, bound):
    """A bound no finite number is beyond on the side the test looks at."""
    if not _is_number(bound):
        return False
    if op in (">", ">="):
        return bound <= -sys.float_info.max
    return op in ("<", "<=") and bound >= sys.float_info.max


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # not NaN


def _spelled_test(quantifier, check, operands):
    shown = [_spelled(operand) for operand in operands]
    body = f"between {shown[0]} and {shown[1]}" if check == "between" else f"{check} {shown[0]}"
    return f"{quantifier} {body}" if quantifier else body


def _spelled(operand):
    kind, value = operand
    if kind == "key":
        return value
    return repr(value) if isinstance(value, str) else format_value(value)
