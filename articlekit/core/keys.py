"""Keys into the values: the one grammar of a key and its lookup.

A key is dotted (`scaling.dk64.unscaled.max_weight`), and may go on into a
list value: `example.weights[0][2]`, or `a.rows[1].x` for a dict inside a
list. `lookup` walks it in the flat values dict of build/values.json and
names the closest keys when it is missing; `measured` hands back a measured
value (`X.estimate` with siblings `X.low`, `X.high`) as a claims.Interval.
"""

import difflib
import re

from articlekit.core.claims import Interval
from articlekit.core.errors import ArticlekitError

# `name`, `name[3]`, `name[3][-1].field`: the dotted key, then the path into
# a list value.
_INDEX = re.compile(r"\[(-?\d+)\]|\.([A-Za-z_][\w-]*)")


class UnknownKey(ArticlekitError, KeyError):
    """A key the article asks for that no artifact provides."""

    def __init__(self, key, closest):
        self.key = key
        self.closest = closest
        super().__init__(key)

    def __str__(self):
        hint = "; closest: " + ", ".join(self.closest) if self.closest else "; no similar key exists"
        return f"unknown key {self.key!r}{hint}"


def split_key(ref):
    """'example.weights[0][2]' -> ('example.weights', [0, 2]); fields after an
    index come back as strings: 'a.rows[1].x' -> ('a.rows', [1, 'x'])."""
    cut = ref.find("[")
    if cut < 0:
        return ref, []
    base, rest = ref[:cut], ref[cut:]
    path, pos = [], 0
    for match in _INDEX.finditer(rest):
        if match.start() != pos:
            break
        path.append(int(match.group(1)) if match.group(1) is not None else match.group(2))
        pos = match.end()
    if pos != len(rest):
        raise ArticlekitError(f"malformed key {ref!r}: expected [N] or .name after {base!r}, got {rest[pos:]!r}")
    return base, path


def lookup(values, ref):
    """The value of a key (with optional list indexing) in the flat values
    dict; UnknownKey names the closest existing keys when it is missing."""
    base, path = split_key(ref)
    if base not in values:
        raise UnknownKey(ref, closest_keys(values, base))
    value = values[base]
    walked = base
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list):
                raise ArticlekitError(f"key {ref!r}: {walked} is a {type(value).__name__}, not a list")
            if not -len(value) <= step < len(value):
                raise ArticlekitError(f"key {ref!r}: index {step} out of range, {walked} has {len(value)} items")
        elif not isinstance(value, dict) or step not in value:
            raise ArticlekitError(f"key {ref!r}: {walked} has no field {step!r}")
        value = value[step]
        walked += f"[{step}]" if isinstance(step, int) else f".{step}"
    return value


def measured(values, ref):
    """lookup(), except that a measured value's `X.estimate` comes back as an
    Interval(estimate, low, high) when its siblings X.low and X.high exist."""
    value = lookup(values, ref)
    base, dot, field = ref.rpartition(".")
    if dot and field == "estimate" and "[" not in ref:
        low, high = values.get(f"{base}.low"), values.get(f"{base}.high")
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, low, high)):
            return Interval(value, low, high)
    return value


def closest_keys(values, key, n=3):
    """Keys under `key` when it names a group (scaling.dk64), else the most
    similar keys (a typo)."""
    children = [k for k in values if k.startswith(key + ".")]
    return children[:n] if children else difflib.get_close_matches(key, list(values), n=n, cutoff=0.6)
