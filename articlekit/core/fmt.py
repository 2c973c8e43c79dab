"""The one place a value becomes text in the article.

`format_value(value, spec)` follows Python's format-spec mini-language
(`format(v, spec)`: ".6f", ".2e", ".1%", ",d", ".2f"), so the article's
fmt="..." means exactly what it means in an f-string. Three additions:

- no spec: strings as they are, ints as digits, floats as the shortest
  round-trip repr (2.220446049250313e-16, never a rounded 2.22e-16);
- "r": the shortest round-trip repr, the same as no spec for floats;
- "np" or "np.N": NumPy's default array printing (at most N fraction digits,
  default 8, trailing zeros dropped, so 1.0 prints "1." and a row of them
  "[1. 1. 1.]"), for quoting what a reader's own print(array) shows.

Other values:
- bool -> "true" / "false", None -> "null": the JSON spelling, the same words
  the claim grammar uses (expect="== true"). A spec on a bool is an error:
  format(True, ".2f") would silently print 1.00.
- NaN and infinities -> "nan", "inf", "-inf" (Python's own spelling, with or
  without a spec).
- lists -> formatted element by element and shown the way NumPy prints a
  row: "[0.027843 0.167136 0.246698]"; nested lists nest: "[[1 2] [3 4]]".

A spec that does not apply raises FormatError naming the spec and value;
the caller adds file:line.
"""

import math

from articlekit.core.errors import ArticlekitError


class FormatError(ArticlekitError):
    """fmt="..." cannot format this value."""


def format_value(value, spec=""):
    spec = spec or ""
    array_spec = spec == "np" or spec.startswith("np.")
    if isinstance(value, (list, tuple)):
        if array_spec:
            return _array_style(value, _array_precision(spec))
        return "[" + " ".join(format_value(v, spec) for v in value) + "]"
    if array_spec:
        return _array_style([value], _array_precision(spec))[1:-1]
    if isinstance(value, bool):
        if spec and spec != "r":
            raise FormatError(f"format spec {spec!r} does not apply to the boolean {_json_word(value)}")
        return _json_word(value)
    if value is None:
        if spec and spec != "r":
            raise FormatError(f"format spec {spec!r} does not apply to null")
        return "null"
    if not spec or spec == "r":
        return repr(value) if isinstance(value, float) else str(value)
    try:
        return format(value, spec)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"bad format spec {spec!r} for {type(value).__name__} {value!r}: {exc}") from None


def _json_word(value):
    return "true" if value else "false"


def format_printed(value, fmt):
    """The value printed with a baseline entry's fmt: format_value's specs,
    plus "shape" for a tuple such as (5, 16). Without fmt: the value as the
    article would print it."""
    if fmt == "shape":
        if not isinstance(value, (list, tuple)) or not all(isinstance(n, int) for n in value):
            raise FormatError(f"fmt 'shape' needs a list of integers, got {value!r}")
        return "(" + ", ".join(map(str, value)) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, str) and fmt:
        raise FormatError(f"fmt {fmt!r} formats a number, got the string {value!r}")
    return format_value(value, fmt or "")


def _array_precision(spec):
    if spec == "np":
        return 8
    digits = spec[3:]
    if not digits.isdigit():
        raise FormatError(f"bad format spec {spec!r}: expected 'np' or 'np.N' with N the fraction digits")
    return int(digits)


def _array_style(values, precision):
    """An array printed in the 'maxprec' float mode (NumPy's default): each
    number with at most `precision` fraction digits, trailing zeros dropped,
    then every entry padded to one width so columns line up."""
    if any(isinstance(v, (list, tuple)) for v in values):
        return "[" + " ".join(_array_style(v, precision) for v in values) + "]"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise FormatError(f"format spec 'np' needs numbers, got {values!r}")
    if all(isinstance(v, int) for v in values):
        texts = [str(v) for v in values]
        width = max(map(len, texts), default=0)
        return "[" + " ".join(t.rjust(width) for t in texts) + "]"
    whole, frac = [], []
    for v in values:
        v = float(v)
        if not math.isfinite(v):
            whole.append("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
            frac.append(None)
            continue
        text = f"{v:.{precision}f}".rstrip("0")  # "1.000" -> "1."
        w, _, f = text.partition(".")
        whole.append(w)
        frac.append(f)
    left = max(len(w) for w in whole)
    right = max((len(f) for f in frac if f is not None), default=0)
    cells = []
    for w, f in zip(whole, frac):
        if f is None:
            cells.append(w)  # nan and inf are not padded (as in NumPy)
        else:
            cells.append(w.rjust(left) + "." + f.ljust(right))
    return "[" + " ".join(cells) + "]"
