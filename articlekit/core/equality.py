"""When two values are the same: NaN equal to NaN, True not 1, and texts
equal up to line wrapping. One definition for every comparison of a value
with another (the edition's, a release's, a snapshot's own)."""

import math


def is_number(value):
    """An int or a float; a bool is not a number here, as True is not 1."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_text(a, b):
    """Equal up to line wrapping: the printed edition wraps long messages."""
    return " ".join(str(a).split()) == " ".join(str(b).split())


def same_value(a, b):
    """Equality that treats NaN as equal to NaN (a regenerated nan is a match)."""
    if isinstance(a, bool) or isinstance(b, bool):  # True is not 1 here
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b
