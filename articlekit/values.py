"""Merge experiment artifacts into one table of values under stable keys.

    python -m articlekit values results/*.json --out build/values.json

Each results/<name>.json envelope ({"experiment", "script", "params",
"versions", "values"}, read through articlekit.artifacts) contributes:

- `<experiment>.<path>` for every leaf of its nested `values` dict;
- `<experiment>.params.<path>` for every leaf of its `params`.

With --baseline, the published edition's numbers join them as
`published.<entry id>` (source: the baseline file), so the article can set
a regenerated value beside the published one without typing it.

Lists stay whole (one key, one list); the article indexes them with
`lookup`: `example.weights[0]`, `example.weights[0][2]`, and a dict inside a
list with `[1].name`. Every key keeps its source (artifact file, script,
experiment) so any number in the article can be traced back.

A measured value carries its interval as three sibling leaves: `X.estimate`,
`X.low` and `X.high` (an experiment writes {"estimate", "low", "high"}).
`measured(values, "X.estimate")` returns it as a claims.Interval, so a claim
about it is judged on the whole interval (articlekit.claims).

build/values.json: {"values": {key: value}, "sources": {key: {"artifact",
"script", "experiment"}}, "versions": {experiment: versions}}.
"""

import argparse
import difflib
import re
import sys

from articlekit.artifacts import check_envelope, envelope, read_artifact
from articlekit.claims import Interval
from articlekit.jsonio import write_json

# `name`, `name[3]`, `name[3][-1].field`: the dotted key, then the path into
# a list value.
_INDEX = re.compile(r"\[(-?\d+)\]|\.([A-Za-z_][\w-]*)")


class UnknownKey(KeyError):
    """A key the article asks for that no artifact provides."""

    def __init__(self, key, closest):
        self.key = key
        self.closest = closest
        super().__init__(key)

    def __str__(self):
        hint = "; closest: " + ", ".join(self.closest) if self.closest else "; no similar key exists"
        return f"unknown key {self.key!r}{hint}"


def flatten(tree, prefix):
    """{"a": {"b": 1}, "c": [1, 2]} -> {"<prefix>.a.b": 1, "<prefix>.c": [1, 2]}."""
    flat = {}
    for name, value in tree.items():
        key = f"{prefix}.{name}"
        if isinstance(value, dict):
            flat.update(flatten(value, key))
        else:
            flat[key] = value
    return flat


def merge(artifacts):
    """artifacts: iterable of (path, envelope). Returns the values document."""
    values, sources, versions = {}, {}, {}
    for path, env in artifacts:
        check_envelope(path, env)
        name = env["experiment"]
        if name in versions:
            raise ValueError(f"{path}: experiment {name!r} also comes from {_artifact_of(sources, name)}")
        versions[name] = env.get("versions", {})
        source = {"artifact": str(path), "script": env["script"], "experiment": name}
        flat = flatten(env["values"], name)
        flat.update(flatten(env.get("params") or {}, f"{name}.params"))
        for key, value in flat.items():
            if key in values:
                raise ValueError(f"{path}: key {key!r} is defined twice (a value and a param?)")
            values[key] = value
            sources[key] = source
    return {"values": dict(sorted(values.items())), "sources": dict(sorted(sources.items())), "versions": versions}


def published_envelope(path):
    """The baseline's entries as an artifact: published.<id> = its value."""
    from articlekit.baseline import load_baseline  # baseline imports this module

    baseline = load_baseline(path)
    values = {entry.id: entry.value for entry in baseline.entries if entry.value is not None}
    return envelope("published", path, params={}, values=values, versions={})


def _artifact_of(sources, experiment):
    return next((s["artifact"] for s in sources.values() if s["experiment"] == experiment), "?")


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
        raise ValueError(f"malformed key {ref!r}: expected [N] or .name after {base!r}, got {rest[pos:]!r}")
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
                raise ValueError(f"key {ref!r}: {walked} is a {type(value).__name__}, not a list")
            if not -len(value) <= step < len(value):
                raise ValueError(f"key {ref!r}: index {step} out of range, {walked} has {len(value)} items")
        elif not isinstance(value, dict) or step not in value:
            raise ValueError(f"key {ref!r}: {walked} has no field {step!r}")
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


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit values", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results/<name>.json artifacts")
    parser.add_argument("--baseline", help="baseline/published.yaml: add its values as published.<id>")
    parser.add_argument("--out", required=True, help="where to write build/values.json")
    args = parser.parse_args(argv)
    try:
        artifacts = [(path, read_artifact(path)) for path in args.results]
        if args.baseline:
            artifacts.append((args.baseline, published_envelope(args.baseline)))
        document = merge(artifacts)
        write_json(args.out, document)
    except (OSError, ValueError) as exc:
        print(f"values: {exc}", file=sys.stderr)
        return 1
    print(f"values: {len(document['values'])} keys from {len(document['versions'])} artifacts -> {args.out}",
          file=sys.stderr)
    return 0
