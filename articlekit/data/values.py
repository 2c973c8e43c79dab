"""Merge experiment artifacts into one table of values under stable keys.

    python -m articlekit values results/*.json --out build/values.json

Each results/<name>.json envelope ({"experiment", "script", "params",
"versions", "values"}, read through articlekit.experiment.artifacts) contributes:

- `<experiment>.<path>` for every leaf of its nested `values` dict;
- `<experiment>.params.<path>` for every leaf of its `params`.

With --baseline, the published edition's numbers join them as
`published.<entry id>` (source: the baseline file), so the article can set
a regenerated value beside the published one without typing it.

Lists stay whole (one key, one list); the article indexes them with
`lookup`: `example.weights[0]`, `example.weights[0][2]`, and a dict inside a
list with `[1].name` (articlekit.core.keys). Every key keeps its source (artifact file, script,
experiment) so any number in the article can be traced back.

A measured value carries its interval as three sibling leaves: `X.estimate`,
`X.low` and `X.high` (an experiment writes {"estimate", "low", "high"}).
`measured(values, "X.estimate")` returns it as a claims.Interval, so a claim
about it is judged on the whole interval (articlekit.core.claims).

A value an experiment declares derived from its other values (the
envelope's `derived`) is listed under `derived`: its key and the keys it is
computed from, so a reviewer recomputing it (`python -m articlekit
reproduce`) is told which and gets them recomputed too.

build/values.json: {"values": {key: value}, "sources": {key: {"artifact",
"script", "experiment"}}, "versions": {experiment: versions},
"derived": {key: [keys it is computed from]}}.

With --ledger (the workflow passes Snakemake's, articlekit/core/ledger.py),
each artifact must be what its rule wrote, as the main process recorded it
when the job finished, and the baseline what it was when the run started:
an artifact another rule's job rewrote, or a baseline rewritten while the
experiments ran, is refused naming the file, the rule and the command that
makes it again, before any of it reaches build/values.json.
"""

import argparse

from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.core.log import log
from articlekit.data.baseline import load_baseline
from articlekit.experiment.artifacts import check_envelope, envelope, read_artifact
from articlekit.core.jsonio import write_json
from articlekit.core.ledger import Ledger

# The experiment name the baseline's values come under: published.<entry id>,
# the edition's own numbers, cited rather than computed by this build.
PUBLISHED = "published"


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
    values, sources, versions, derived = {}, {}, {}, {}
    for path, env in artifacts:
        check_envelope(path, env)
        name = env["experiment"]
        if name in versions:
            raise ArticlekitError(f"{path}: experiment {name!r} also comes from {_artifact_of(sources, name)}")
        versions[name] = env.get("versions", {})
        source = {"artifact": str(path), "script": env["script"], "experiment": name}
        flat = flatten(env["values"], name)
        flat.update(flatten(env.get("params") or {}, f"{name}.params"))
        for key, value in flat.items():
            if key in values:
                raise ArticlekitError(f"{path}: key {key!r} is defined twice (a value and a param?)")
            values[key] = value
            sources[key] = source
        derived.update(_derived(path, name, env.get("derived") or {}, flat))
    return {
        "values": dict(sorted(values.items())),
        "sources": dict(sorted(sources.items())),
        "versions": versions,
        "derived": dict(sorted(derived.items())),
    }


def _derived(path, name, declared, flat):
    """{key: [input keys]} of one envelope's `derived`, each path a value of
    that same artifact (else ValueError naming the file and the path)."""
    out = {}
    for target, inputs in declared.items():
        keys = [f"{name}.{p}" for p in [target, *inputs]]
        missing = [p for p, k in zip([target, *inputs], keys) if k not in flat]
        if missing:
            raise ArticlekitError(
                f"{path}: derived names {', '.join(map(repr, missing))}, which the artifact's values "
                "do not hold; name values by their dotted path under `values`"
            )
        out[keys[0]] = keys[1:]
    return out


def published_envelope(path):
    """The baseline's entries as an artifact: published.<id> = its value."""
    baseline = load_baseline(path)
    values = {entry.id: entry.value for entry in baseline.entries if entry.value is not None}
    return envelope(PUBLISHED, path, params={}, values=values, versions={})


def refuse_unowned(ledger, results, baseline):
    """ValueError naming every artifact its rule did not write (an
    experiment's artifact is named after its rule: results/NAME.json) and
    a baseline that changed while the build ran."""
    problems = [
        ledger.output_problem(path, Path(path).stem if Path(path).parent.name == "results" else None)
        for path in results
    ]
    if baseline:
        problems.append(ledger.source_problem(baseline))
    problems = [problem for problem in problems if problem]
    if problems:
        raise ArticlekitError("\n  ".join(problems))


def _artifact_of(sources, experiment):
    return next((s["artifact"] for s in sources.values() if s["experiment"] == experiment), "?")


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit values", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results/<name>.json artifacts")
    parser.add_argument("--baseline", help="baseline/published.yaml: add its values as published.<id>")
    parser.add_argument("--out", required=True, help="where to write build/values.json")
    parser.add_argument(
        "--ledger",
        help="Snakemake's record of what each rule wrote (.snakemake/articlekit/"
        "ledger.json): refuse an artifact, or a baseline, that it does not vouch for",
    )
    args = parser.parse_args(argv)
    if args.ledger:
        refuse_unowned(Ledger.load(args.ledger), args.results, args.baseline)
    artifacts = [(path, read_artifact(path)) for path in args.results]
    if args.baseline:
        artifacts.append((args.baseline, published_envelope(args.baseline)))
    document = merge(artifacts)
    write_json(args.out, document)
    log.info(f"values: {len(document['values'])} keys from {len(document['versions'])} artifacts -> {args.out}")
    return 0
