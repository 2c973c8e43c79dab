"""Recompute one number of the article, and say whether it came back.

    python -m articlekit reproduce KEY [--configfile FILE ...] [--cores N] [--keep]

Run in the article's folder after a build. KEY is any key of
build/values.json, or an item of a list value (`example.weights[0][2]`).
It finds what produced KEY (the source build/values.json records), copies
the project's sources into a scratch folder (nothing built comes along:
results/, figures/, build/, logs/, .snakemake/), and asks Snakemake there
for that artifact alone, so that exactly its rule reruns (and whatever that
rule needs), with the parameters the build used: the ones its artifact
recorded (results/<experiment>.json `params`), handed to Snakemake as a
config file, so the experiment's rule gets them the way every build's does.
The rerun's own artifact must record the same parameters, or the command
says which differ. Snakemake's output streams to stderr while it runs.

Then, on stdout:

- the old value (this build's), the new one, and whether it came back:
  judged by what "reproduced" means for it (articlekit.review.agreement
  `came_back`; the table REPRODUCED_MEANS says it class by class): a
  measured value (`X.estimate` beside `X.low`, `X.high`) when the rerun's
  estimate lies inside the build's interval or the two intervals overlap
  (the verdict says which), an exact value when it prints the edition's
  digits, an error when it meets its noise bound, any other key when it
  prints the article's digits (the float rule when the article prints
  none); the keys publishing.per_build names differ on every build by
  design and are not compared;
- the published edition's value of it, when the baseline has an entry on the
  key, with that entry's verdict for the new value (articlekit.data.edition);
- every claim the article makes on the key (build/bindings.json), judged
  again on the new values: its status in the build and now.

A key may also be:

- cited: `published.<id>`, the edition's own number (the baseline's), which
  nothing here computes; the command shows the entry and the key this build
  regenerates it as, if any, and reruns nothing;
- derived: computed by its experiment from other keys (the artifact's
  `derived`, listed in build/values.json); the command names them and
  recomputes them with it, each with its verdict;
- unknown: the command names the closest keys, exit status 2.

Exit status, and the last line's verdict:

- 0 "reproduced": every value recomputed came back under its own rule, and
  every claim on KEY holds as it did in the build;
- 1 "the claim holds, the value did not come back": a value moved beyond
  what "reproduced" means for it, while every claim on KEY still holds (or
  the article makes none);
- 2: the key or the inputs cannot be read (a usage error);
- 3 "the claim fails": a claim on KEY fails on the rerun's values, or its
  status changed from the build's;
- 4 "not reproduced: the rerun did not run as the build did": the rerun
  failed (its scratch folder is kept, with the log) or ran with other
  parameters.

A cited key reruns nothing: exit 0.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from articlekit.article.bindings import load_bindings
from articlekit.core import claims as claimlib
from articlekit.core.commands import REPRODUCE, reproduce_command
from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import read_json
from articlekit.core.keys import UnknownKey, lookup, measured, split_key
from articlekit.core.log import log
from articlekit.core.status import STATUS, status_of
from articlekit.core.text import short_text
from articlekit.data.baseline import DEFAULT_BASELINE, load_baseline
from articlekit.data.config import read_configs
from articlekit.data.edition import against_edition
from articlekit.data.environment import installed_versions
from articlekit.data.publishing import parse as parse_publishing
from articlekit.data.values import PUBLISHED, merge
from articlekit.experiment.artifacts import THREADS_PARAM, read_artifact
from articlekit.review.agreement import CAME_BACK, NOT_BACK, NOT_COMPARED, came_back
from articlekit.review.audit import keys_related

VALUES = "build/values.json"
BINDINGS = "build/bindings.json"
CONFIG = "config.yaml"
# What a build writes in the article's folder: never copied into the scratch
# folder, so the rerun starts from the sources alone.
BUILT = {"results", "figures", "build", "logs"}
OVERRIDE = "reproduce-params.yaml"  # in the scratch folder: the build's params, as a config file

MEASURED, CITED, DERIVED = "measured", "cited", "derived"


class ReproduceError(ArticlekitError):
    """What stops the command before any verdict; the message says why and what to do."""


class RerunFailed(ReproduceError):
    """The rerun itself failed: the number was not reproduced (exit 4, not 2)."""


# The exit statuses, one per verdict (the module's docstring says each).
REPRODUCED, VALUE_MOVED, USAGE, CLAIM_FAILS, RERUN_BROKEN = 0, 1, 2, 3, 4


@dataclass
class Origin:
    """What a key is: `kind` measured, cited or derived; the source
    build/values.json records; for a derived key, the keys it comes from."""

    key: str
    kind: str
    source: dict
    inputs: list = field(default_factory=list)


def origin_of(values_doc, key):
    """The Origin of a key of the values document; UnknownKey (with the
    closest keys) or ValueError (a malformed key, an index out of range)."""
    lookup(values_doc["values"], key)
    base = split_key(key)[0]
    source = values_doc["sources"][base]
    if source["experiment"] == PUBLISHED:
        return Origin(key, CITED, source)
    inputs = (values_doc.get("derived") or {}).get(base)
    if inputs:
        return Origin(key, DERIVED, source, list(inputs))
    return Origin(key, MEASURED, source)


def article_claims(bindings_doc, key):
    """The bindings that make a claim on the key (or on its list, or an item of it)."""
    return [b for b in bindings_doc["bindings"].values() if b["claim"] and keys_related(b["key"], key)]


def keys_to_recompute(origin, claims):
    """The key, the keys it is derived from, and those its claims compare it
    against (a claim "> other.key" is judged again only when both are new)."""
    keys = [origin.key, *origin.inputs]
    for b in claims:
        keys += claimlib.keys_referenced(b["expect"])
    return list(dict.fromkeys(keys))


# ---- the rerun -------------------------------------------------------------------


def scratch_copy(root, dest):
    """Copy the project's sources (not what a build wrote, nor hidden folders
    such as .git and .snakemake) into dest."""
    root = Path(root).resolve()

    def ignored(folder, names):
        at_top = Path(folder).resolve() == root
        return [n for n in names if n.startswith(".") or n == "__pycache__" or (at_top and n in BUILT)]

    shutil.copytree(root, dest, symlinks=True, ignore=ignored, dirs_exist_ok=True)
    return Path(dest)


def build_params(artifact, config):
    """(params for the config, cores) of an experiment, from its artifact:
    what the build ran it with. A job that takes every core got `threads`
    at run time (--threads), not from a config file: it becomes --cores."""
    params = dict(artifact.get("params") or {})
    section = config.get(artifact["experiment"]) or {}
    cores = None
    if THREADS_PARAM in params and THREADS_PARAM not in section:
        cores = params.pop(THREADS_PARAM)
    return params, cores


def rerun(scratch, targets, overrides, configfiles, cores, say):
    """Snakemake in the scratch folder for `targets` alone, the build's params
    given as one more config file; its output streamed through `say`.
    Returns Snakemake's exit status."""
    files = list(configfiles)
    if overrides:
        Path(scratch, OVERRIDE).write_text(yaml.safe_dump(overrides, sort_keys=False), encoding="utf-8")
        files.append(OVERRIDE)
    command = [sys.executable, "-m", "snakemake", *targets, "--cores", str(cores)]
    if files:
        command += ["--configfile", *files]
    env = dict(os.environ)
    # the copy's own experiments (and articlekit, when the project holds it) first
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(scratch).resolve()), env.get("PYTHONPATH")]))
    say(f"reproduce: $ snakemake {' '.join(command[3:])}")
    with subprocess.Popen(
        command, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        for line in process.stdout:
            say("  │ " + line.rstrip("\n"))
    return process.returncode


# ---- the verdicts ----------------------------------------------------------------


def printed_formats(bindings_doc, key):
    """The fmt of each place the article prints the key itself, in order."""
    return [b["fmt"] for b in bindings_doc["bindings"].values() if b["key"] == key and b.get("printed", True)]


def edition_lines(baseline, key, new_values, values_doc):
    """The edition's value of the key, and what it says of the rerun's."""
    if baseline is None:
        return []
    lines = []
    installed = installed_versions(values_doc)
    for entry in baseline.entries:
        if not entry.key or not keys_related(entry.key, key):
            continue
        status, shown, why = against_edition(
            entry,
            lookup(new_values, entry.key),
            baseline.edition["versions"],
            installed,
            measured(new_values, entry.key),
        )
        lines.append(
            f"{entry.id} ({entry.cls}, {baseline.path}:{entry.line}): printed {entry.published}; "
            f"the rerun: {shown}, {status} ({' '.join(why.split())})"
        )
    return lines


def judge_claim(binding, values):
    """The binding's claim judged on `values`: (status, message)."""
    key = binding["key"]
    try:
        result = claimlib.evaluate(binding["expect"], measured(values, key), resolve=lambda k: measured(values, k))
    except (KeyError, ValueError) as exc:  # a key the rerun no longer has, a claim it cannot judge
        return claimlib.FAILS, str(exc)
    return result.status, result.message


def shown(status):
    return STATUS[status].shown if status else "no claim"


# ---- the command -------------------------------------------------------------------


def explain_cited(origin, baseline, out):
    entry_id = origin.key.split("[")[0][len(PUBLISHED) + 1 :]
    entry = next((e for e in (baseline.entries if baseline else []) if e.id == entry_id), None)
    out(
        f"{origin.key} is cited: the published edition's own value, from {origin.source['artifact']}; "
        "this build computes nothing for it, so there is nothing to rerun."
    )
    if entry:
        out(f"  entry:    {entry.id} ({entry.cls}, {baseline.path}:{entry.line}), printed {entry.published!r}")
        out(f"  where:    {entry.where.get('section', '?')}: \"{' '.join(str(entry.where.get('quote', '')).split())}\"")
        if entry.key:
            out(f"  this build regenerates it as {entry.key}: {reproduce_command(entry.key)}")


def report_key(key, old_values, new_values, baseline, publishing, printed, out):
    """Print one key's old and new value and whether it came back; returns
    the verdict (CAME_BACK, NOT_BACK or NOT_COMPARED)."""
    old, new = measured(old_values, key), measured(new_values, key)
    verdict, rule, why = came_back(key, old, new, baseline, publishing, printed)
    out(f"{key}")
    out(f"  build:    {_shown_value(old)}")
    out(f"  rerun:    {_shown_value(new)}")
    out(f"  rule:     {rule}")
    word = {CAME_BACK: "agrees", NOT_BACK: "MOVED beyond its rule", NOT_COMPARED: "not compared"}[verdict]
    out(f"  verdict:  {word}: {why}")
    return verdict


def _shown_value(value):
    """A value for the terminal; a measured one with its interval."""
    if isinstance(value, claimlib.Interval):
        return f"{short_text(value.estimate)}, interval [{short_text(value.low)}, {short_text(value.high)}]"
    return short_text(value)


def final_verdict(key, moved, failing, no_claims, broken):
    """(exit status, last line): the worst of a rerun that did not run as
    the build did, a claim that fails, a value that did not come back."""
    if broken:
        return RERUN_BROKEN, (
            f"reproduce: {key}: NOT reproduced: the rerun did not run as the build did (exit {RERUN_BROKEN})"
        )
    if failing:
        return CLAIM_FAILS, (
            f"reproduce: {key}: the claim fails: {'; '.join(failing)}; NOT reproduced (exit {CLAIM_FAILS})"
        )
    if moved:
        holds = "the article makes no claim on it" if no_claims else "the claim holds"
        return VALUE_MOVED, (
            f"reproduce: {key}: {holds}, the value did not come back: {', '.join(moved)} "
            f"moved beyond what “reproduced” means for it; NOT reproduced (exit {VALUE_MOVED})"
        )
    claims = "the article makes no claim on it" if no_claims else "every claim on it holds as in the build"
    return REPRODUCED, f"reproduce: {key}: reproduced: every value came back under its own rule; {claims}"


def reproduce(key, args, say, out):
    """The whole command; returns its exit status."""
    try:
        values_doc = read_json(args.values)
        bindings_doc = load_bindings(args.bindings)
        config = read_configs([CONFIG, *args.configfile] if Path(CONFIG).exists() else args.configfile)
        publishing = parse_publishing(config.get("publishing"))
        baseline = load_baseline(args.baseline) if Path(args.baseline).exists() else None
    except FileNotFoundError as exc:
        raise ReproduceError(
            f"{exc.filename}: not there; build the article first (snakemake --cores 2), "
            "then recompute one of its numbers"
        ) from None
    except (OSError, ArticlekitError) as exc:  # SourceError, ConfigError, BaselineError ... among them
        raise ReproduceError(str(exc)) from None

    origin = origin_of(values_doc, key)  # UnknownKey, ValueError: the caller names them
    claims = article_claims(bindings_doc, key)
    if origin.kind == CITED:
        explain_cited(origin, baseline, out)
        for b in claims:
            out(f"  claim:    {', '.join(b['locations'])}: {b['key']} {b['expect']}: {shown(status_of(b['claim']))}")
        return 0

    sources = values_doc["sources"]
    recompute = [k for k in keys_to_recompute(origin, claims) if sources[split_key(k)[0]]["experiment"] != PUBLISHED]
    experiments = {}
    for k in recompute:
        source = sources[split_key(k)[0]]
        experiments.setdefault(source["experiment"], source)
    if origin.kind == DERIVED:
        say(
            f"reproduce: {key} is derived: {origin.source['experiment']} computes it from "
            f"{', '.join(origin.inputs)}; recomputing those too"
        )
    for name, source in experiments.items():
        made_here = [k for k in recompute if sources[split_key(k)[0]]["experiment"] == name]
        say(
            f"reproduce: {made_here[0] if len(made_here) == 1 else f'{len(made_here)} keys'} "
            f"{'comes' if len(made_here) == 1 else 'come'} from {name} ({source['script']} -> {source['artifact']})"
        )

    artifacts, overrides, cores = {}, {}, args.cores
    for name, source in experiments.items():
        try:
            artifacts[name] = read_artifact(source["artifact"])
        except (OSError, ArticlekitError) as exc:
            raise ReproduceError(
                f"{source['artifact']}: cannot read the build's artifact ({exc}); build the "
                "article again (snakemake --cores 2)"
            ) from None
        if name not in (config.get("experiments") or {}):  # a step of the module (listings), not an experiment
            say(f"reproduce: {name} is a step of the build, not an experiment: it reruns as the config says")
            continue
        params, every_core = build_params(artifacts[name], config)
        if params or name in config:
            overrides[name] = params
        if every_core and not args.cores:
            cores = every_core
        say(
            f"reproduce: {name} reruns with the build's params {json.dumps(params)}"
            + (f" on {every_core} cores, as the build gave it" if every_core else "")
        )

    scratch = Path(tempfile.mkdtemp(prefix="articlekit-reproduce-"))
    keep = args.keep
    try:
        scratch_copy(".", scratch)
        say(f"reproduce: rerunning in a scratch copy, {scratch}")
        started = time.monotonic()
        status = rerun(
            scratch, [s["artifact"] for s in experiments.values()], overrides, args.configfile, cores or 1, say
        )
        if status != 0:
            keep = True
            raise RerunFailed(
                f"the rerun failed (Snakemake exit status {status}); its output is above, "
                f"its logs under {scratch}/logs (kept)"
            )
        say(f"reproduce: rerun done in {time.monotonic() - started:.1f} s")
        reran = [(s["artifact"], read_artifact(scratch / s["artifact"])) for s in experiments.values()]
    finally:
        if keep:
            say(f"reproduce: the scratch copy is kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    broken = False
    for path, artifact in reran:
        before = artifacts[artifact["experiment"]].get("params")
        if artifact.get("params") != before:
            broken = True
            out(
                f"the rerun of {artifact['experiment']} ran with other params than the build: "
                f"{json.dumps(artifact.get('params'))}, not {json.dumps(before)}"
            )
    new_values = {**values_doc["values"], **merge(reran)["values"]}
    moved, failing = [], []
    for k in recompute:
        verdict = report_key(
            k, values_doc["values"], new_values, baseline, publishing, printed_formats(bindings_doc, k), out
        )
        if verdict == NOT_BACK:
            moved.append(k)
        for line in edition_lines(baseline, k, new_values, values_doc):
            out(f"  edition:  {line}")
        if k == key and not claims:
            out("  claims:   none; the article makes no claim on it")
        for b in claims if k == key else []:
            before = status_of(b["claim"])
            now, message = judge_claim(b, new_values)
            changed = now != before
            if changed or now == claimlib.FAILS:
                failing.append(f"{b['key']} {b['expect']} ({shown(now)} now)")
            out(
                f"  claim:    {', '.join(b['locations'])}: {b['key']} {b['expect']}: {shown(before)} in the build, "
                f"{shown(now)} now{' (CHANGED)' if changed else ''}: {message}"
            )
    status, last = final_verdict(key, moved, failing, not claims, broken)
    out(last)
    return status


def main(argv):
    parser = argparse.ArgumentParser(prog=REPRODUCE, description=__doc__.splitlines()[0])
    parser.add_argument(
        "key", help="a key of build/values.json, or an item of a list value: EXPERIMENT.NAME, EXPERIMENT.LIST[2]"
    )
    parser.add_argument(
        "--configfile",
        nargs="+",
        default=[],
        metavar="FILE",
        help="the config files the build was given beside config.yaml (as snakemake --configfile)",
    )
    parser.add_argument("--cores", type=int, help="cores for the rerun (default: what the build gave the job, else 1)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy and say where it is")
    parser.add_argument("--values", default=VALUES, help=f"the build's values (default {VALUES})")
    parser.add_argument("--bindings", default=BINDINGS, help=f"the build's bindings (default {BINDINGS})")
    parser.add_argument(
        "--baseline", default=DEFAULT_BASELINE, help=f"the published edition (default {DEFAULT_BASELINE})"
    )
    args = parser.parse_args(argv)

    def out(line):
        print(line, flush=True)

    try:
        return reproduce(" ".join(args.key.split()), args, log.info, out)
    except UnknownKey as exc:
        log.error(f"reproduce: {exc}")
        return USAGE
    except RerunFailed as exc:
        log.error(f"reproduce: {exc}")
        return RERUN_BROKEN
    except ReproduceError as exc:
        log.error(f"reproduce: {exc}")
        return USAGE
    except ArticlekitError as exc:  # a malformed key, an index out of range
        log.error(f"reproduce: {exc}")
        return USAGE
