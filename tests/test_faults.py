"""Faults a careless or hostile user causes, and what the build does about them.

One clean build of config/test.yaml is the template; each case copies it
(mtimes and Snakemake's metadata kept), applies its fault and checks four
promises:

1. the exit code: a fault never ends in exit 0, nor does the run after it;
2. the message names the file and line (or the key) and says what to do;
3. nothing half-written or stale is left: every output is whole, no
   temporary file or render folder lingers, nothing is older than its inputs;
4. a fixed rerun comes back to the clean build's content.

The cases that run Snakemake are marked slow; the ones that check a single
piece directly are not. Runs use strict=false: the timing claim may fail on
a busy machine, which is not what these tests are about (a claim error such
as `== tru` still fails).

Kept under two minutes on two cores by spending CPU only on what a case is
about: the slow cases run two at a time in the background (`in_background`),
each Snakemake run is forked from one process that has imported Snakemake
already (tests/snakemake_fork.py: the import costs more than most runs), and
faults that leave the same state to recover from share one recovery run.
"""

import contextlib
import errno
import inspect
import io
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from articlekit.render.checks import check_markdown_structure, check_page_structure
from articlekit.render.renderers import RenderError
from articlekit.core.jsonio import DiskFull, loads, write_json
from articlekit.article.shortcodes import ShortcodeSyntaxError, scan
from articlekit.core.workfiles import owner_tag
from articlekit.review.crate import METADATA_NAME, files_view
from articlekit.review.journal_bundle import JOURNAL_BUNDLE
from articlekit.review.manifest import MANIFEST
from tests.shared_build import copy_of_test_build
from tests.workspace import TEST_BUILD, TEST_BUILD_ENVIRONMENT, copy_environment
from tests.snakemake_fork import SnakemakeServer

FAST = ["--configfile", "config/test.yaml", "--config", "strict=false"]
OUTPUT_FOLDERS = ("results", "figures", "build")
# Artifacts that differ between two clean builds: the timings (they move with
# the machine's load) and the build's own date and time. Whatever is made from
# them is compared only when neither reran.
VOLATILE = {
    "results/timing.json",
    "figures/timing-sweep.svg",
    "figures/timing-runs.svg",
    "results/environment.json",
    *(f"results/runs/timing/run-{i}.json" for i in range(1, 5)),
}  # config/test.yaml: runs: 4
VOLATILE_KEYS = re.compile(r"^timing\.|^environment\.build_")


# --- running the build ---------------------------------------------------------


def environment(work):
    """The copy's own code first (copy_environment), and the PDF's date fixed
    (SOURCE_DATE_EPOCH), so that two builds' PDFs compare byte for byte."""
    env = copy_environment(work)
    env.update(TEST_BUILD_ENVIRONMENT)
    return env


SERVER = None  # the fork server (tests/snakemake_fork.py), while the slow cases run
LOG_NUMBERS = itertools.count()


def start_snakemake(work, log, *args, env=None, config=FAST):
    """snakemake --cores 2 ARGS in work, in its own process group (so kill -9
    takes its jobs too), its output going to `log`; -> a run with .pid,
    .poll() and .wait()."""
    return SERVER.start(work, ["--cores", "2", *args, *config], env or environment(work), log)


@dataclass
class Finished:
    returncode: int
    output: str


def snakemake(work, *args, env=None, config=FAST):
    """snakemake --cores 2 ARGS in work; targets go in ARGS (before --configfile).
    -> .returncode and .output (stdout and stderr together)."""
    log = Path(work).parent / f"snakemake-{next(LOG_NUMBERS)}.log"
    run = start_snakemake(work, log, *args, env=env, config=config)
    return Finished(run.wait(timeout=600), log.read_text())


def wait_for(log, text, run, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(log).exists() and text in Path(log).read_text():
            return
        if run.poll() is not None:
            pytest.fail(f"the build ended before {text!r}:\n{Path(log).read_text()[-3000:]}")
        time.sleep(0.05)
    pytest.fail(f"no {text!r} within {timeout} s")


# --- the template, and the slow cases in the background --------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The clean build, by the real `snakemake` command (every case's runs are
    forked): this worker's copy of the run's one TEST_BUILD, the PDF's date
    fixed as environment() fixes it (tests/shared_build.py)."""
    assert list(TEST_BUILD[1:3]) == ["--cores", "2"] and list(TEST_BUILD[3:]) == FAST  # as snakemake() builds
    return copy_of_test_build(tmp_path_factory).project


def in_background(case):
    """A slow case, run by the `background` pool beside the others; the test
    that pytest collects waits for it and passes, fails or skips as it did.
    The case asks for `case` (a fresh copy of the built template), `template`
    and `tmp_path` (a scratch folder), plus its parameters."""
    params = [name for name in inspect.signature(case).parameters if name not in ("case", "template", "tmp_path")]

    def test(background, request, **_params):
        background[request.node.nodeid].result()

    test.__signature__ = inspect.Signature(
        [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for name in ["background", "request", *params]
        ]
    )
    test.__name__ = test.__qualname__ = case.__name__
    test.__doc__, test.case = case.__doc__, case
    return test


@pytest.fixture(scope="module")
def background(request, tmp_path_factory):
    """Starts every selected slow case of this module, two at a time (the
    machine has two cores, and a build uses both only part of the time);
    -> {test id: its future}."""
    global SERVER
    SERVER = SnakemakeServer()  # imports Snakemake while the template builds
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fault-case")
    futures = {}
    try:
        template = request.getfixturevalue("template")
        for item in request.session.items:
            case = getattr(getattr(item, "function", None), "case", None)
            if case is None or item.module is not request.module:
                continue
            params = item.callspec.params if hasattr(item, "callspec") else {}
            scratch = tmp_path_factory.mktemp(case.__name__[5:35])
            futures[item.nodeid] = pool.submit(run_case, case, template, scratch, params)
        yield futures
    finally:
        for future in futures.values():
            future.cancel()
        SERVER.close()  # kills any run still going (pytest -x), so that the pool ends quickly
        pool.shutdown(wait=True)
        SERVER = None


def run_case(case, template, scratch, params):
    given = {"template": template, "tmp_path": scratch, **params}
    if "case" in inspect.signature(case).parameters:
        given["case"] = scratch / "case"
        shutil.copytree(template, given["case"], symlinks=True)
    return case(**{name: given[name] for name in inspect.signature(case).parameters})


# --- the four promises -------------------------------------------------------------


def outputs(work):
    return sorted(
        str(p.relative_to(work))
        for folder in OUTPUT_FOLDERS
        for p in (work / folder).rglob("*")
        if p.is_file() or p.name.startswith(".")
    )


def assert_whole(work, leftovers_allowed=False):
    """Every output parses to its end; no hidden temporaries unless allowed
    (right after a kill, before the next run cleans them)."""
    for rel in outputs(work):
        path = work / rel
        if Path(rel).name.startswith(".") or "/." in rel:
            assert leftovers_allowed, f"{rel} is left behind"
            continue
        if rel.endswith(".pdf"):
            data = path.read_bytes()
            assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF"), f"{rel} is cut short"
            continue
        if rel.endswith((".docx", ".zip")):  # the Word and JATS editions: whole zips
            with zipfile.ZipFile(path) as package:
                assert package.testzip() is None, f"{rel} is cut short"
            continue
        text = path.read_text(encoding="utf-8")
        if rel.endswith(".json"):
            loads(text)
        elif rel.endswith(".svg"):
            assert text.rstrip().endswith("</svg>"), f"{rel} is cut short"
        elif rel.endswith(".html"):
            assert text.rstrip().endswith("</html>"), f"{rel} is cut short"


def assert_recovered(work, template, env=None, then_nothing_to_do=False):
    """A fixed rerun succeeds, leaves nothing stale, and gives the clean
    build's content (files made from timings and build times only when
    those did not rerun); then_nothing_to_do: a dry run agrees."""
    rerun = snakemake(work, env=env)
    assert rerun.returncode == 0, rerun.output[-4000:]
    assert_whole(work)
    assert outputs(work) == outputs(template)
    volatile_reran = any((work / rel).read_bytes() != (template / rel).read_bytes() for rel in VOLATILE)
    for rel in outputs(template):
        if rel in VOLATILE or (volatile_reran and rel.startswith("build/")):
            continue
        assert content(work, rel) == content(template, rel), f"{rel} differs from a clean build"
    assert stable_values(work) == stable_values(template)
    if then_nothing_to_do:
        assert "Nothing to be done" in snakemake(work, "--dry-run").output


def content(work, rel):
    """A file's bytes; of the build's crate, the outputs it lists: its
    inputs are the case's, which a fault may leave changed on purpose (a
    byte-order mark), and the times of its runs differ by design; of the
    journal's bundle, its entries, the crate among them read so."""
    if rel == MANIFEST:
        return files_view(loads((work / rel).read_text()))["outputs"]
    if rel == JOURNAL_BUNDLE:
        with zipfile.ZipFile(work / rel) as bundle:
            entries = {name: bundle.read(name) for name in bundle.namelist()}
        crate = entries.pop(METADATA_NAME)
        return entries, files_view(loads(crate.decode("utf-8")))["outputs"]
    return (work / rel).read_bytes()


def stable_values(work):
    values = loads((work / "build/values.json").read_text())["values"]
    return {key: value for key, value in values.items() if not VOLATILE_KEYS.search(key)}


def assert_fails(proc, *needles):
    """A non-zero exit with every needle (a regex when it starts with re:) in
    the output, and no Python traceback in place of a sentence."""
    assert proc.returncode != 0, proc.output[-3000:]
    for needle in needles:
        found = re.search(needle[3:], proc.output) if needle.startswith("re:") else needle in proc.output
        assert found, f"{needle!r} not in:\n{proc.output[-3000:]}"
    assert "Traceback (most recent call last)" not in proc.output, proc.output[-3000:]


def planned_rules(output):
    """The rules a dry run's "Job stats:" table lists."""
    table = output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", table, re.M)} - {"total"}


def line_of(path, needle):
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if needle in line)


def edit(path, old, new):
    text = Path(path).read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    Path(path).write_text(text.replace(old, new, 1), encoding="utf-8")


def change(path):
    """An edit Snakemake sees (it compares content, not only mtimes)."""
    if path.suffix == ".py":
        path.write_text(path.read_text() + "\n# edited\n")
    else:
        path.write_text(path.read_text() + "\nA sentence added at the end.\n")


def restore(work, template, rel):
    shutil.copy2(template / rel, work / rel)
    os.utime(work / rel)  # as an editor would: a fresh mtime


# --- the worst: a stale article with exit 0 -------------------------------------


@pytest.mark.slow
@in_background
def test_deleted_results_and_figures_are_rebuilt(case):
    """The issue's first reproduction. What the rebuild then runs is a cold
    build, which the template has just made; so the plan is checked here (every
    job) and the content of a rebuild by the cases below."""
    shutil.rmtree(case / "results")
    shutil.rmtree(case / "figures")
    plan = snakemake(case, "--dry-run")
    assert plan.returncode == 0 and "Nothing to be done" not in plan.output, plan.output[-2000:]
    assert planned_rules(plan.output) == {
        "environment",
        "scaling",
        "example",
        "multihead",
        "parity",
        "mask_convention",
        "timing",
        "timing_combine",
        "errors",
        "listings",
        "values",
        "lint_article",
        "bind",
        # the bound article, read again: the figures it shows are checked there
        "parse_article",
        # every format of config/test.yaml's publishing.formats
        "html",
        "gfm",
        "pdf",
        "docx",
        "jats",
        "audit",
        "diff",
        "manifest",
        "journal_bundle",
        "all",
        # the seed sweep's chunks live under results/ too (the article binds its summary)
        "robustness_chunk",
        "robustness_summary",
        "robustness_report",
        "robustness_figures",
    }


@pytest.mark.slow
@in_background
def test_a_failed_experiment_or_a_corrupt_result_fails_every_build_until_fixed(case, template):
    """Two faults in turn, each failing two builds in a row (the first run
    removes or refuses the output; the article must not stand in for it),
    then fixed as the message says. Both leave the same state to recover
    from, an artifact to redo and everything from build/values.json on, so
    one recovery run stands for both."""
    edit(
        case / "experiments/example.py",
        "def run(params):",
        "def run(params):\n    raise RuntimeError('injected fault')\n\n\ndef unused(params):",
    )
    for attempt in range(2):
        run = snakemake(case)
        assert run.returncode != 0 and "injected fault" in run.output, run.output[-3000:]
    restore(case, template, "experiments/example.py")

    # A bare NaN (json.loads would take it), written by hand: no longer what
    # rule parity wrote, so the plan refuses it before any job reads it
    # (docs/reliability.md, every artifact is owned by its rule; a file that
    # does not parse gets its file:line from the reader:
    # test_an_unreadable_artifact_says_how_to_rebuild_it).
    parity = case / "results/parity.json"
    parity.write_text(re.sub(r'("max_abs_diff_overall": )[^,\n]+', r"\1NaN", parity.read_text()))
    for attempt in range(2):
        run = snakemake(case)
        assert_fails(
            run,
            "results/parity.json: not what rule parity wrote",
            "snakemake --cores all --configfile config/test.yaml --forcerun parity",
        )
    fixed = snakemake(case, "--forcerun", "parity")  # what the message says to do
    assert fixed.returncode == 0, fixed.output[-3000:]
    assert_recovered(case, template, then_nothing_to_do=True)


# --- configuration ---------------------------------------------------------------


@pytest.mark.slow
@in_background
def test_heads_that_do_not_divide_d_model_are_refused_before_any_job(case, template):
    # multihead's heads and d_model are its script's defaults (4 and 16): an override sets heads
    edit(case / "config/test.yaml", "\nscaling:\n", "\nmultihead:\n  heads: 3\n\nscaling:\n")
    before = {rel: (case / rel).stat().st_mtime for rel in outputs(case)}
    for attempt in range(2):
        run = snakemake(case)
        line = line_of(case / "config/test.yaml", "heads: 3")
        assert_fails(
            run,
            f"config/test.yaml:{line}: multihead.heads: 3 does not divide multihead.d_model = 16",
            "choose one of 1, 2, 4, 8, 16",
        )
    assert {rel: (case / rel).stat().st_mtime for rel in outputs(case)} == before
    restore(case, template, "config/test.yaml")
    assert "Nothing to be done" in snakemake(case, "--dry-run").output


@pytest.mark.slow
@pytest.mark.parametrize(
    "fault, expected",
    [
        ("syntax", r"config.yaml:\d+:\d+: not valid YAML: .*fix it there"),
        ("empty", r"config.yaml: the file is empty; a config file holds the keys"),
    ],
)
@in_background
def test_a_broken_config_yaml_is_named_with_its_line(case, template, fault, expected):
    if fault == "syntax":
        edit(case / "config.yaml", "renderer: auto", "renderer: [auto")
    else:
        (case / "config.yaml").write_text("")
    run = snakemake(case, "--dry-run")
    assert run.returncode != 0 and re.search(expected, run.output), run.output[-2000:]
    restore(case, template, "config.yaml")
    assert "Nothing to be done" in snakemake(case, "--dry-run").output


@pytest.mark.slow
@in_background
def test_a_broken_configfile_is_refused_and_the_config_command_names_its_line(case, tmp_path):
    """Snakemake reads --configfile files itself, before the workflow starts,
    and says only "not valid JSON or YAML"; `articlekit config` names the line."""
    bad = tmp_path / "bad.yaml"
    bad.write_text((case / "config/test.yaml").read_text().replace("  T: 32", "  T: [32"))
    run = snakemake(case, "--dry-run", config=["--configfile", str(bad)])
    assert run.returncode != 0 and "not valid JSON or YAML" in run.output
    check = subprocess.run(
        ["python", "-m", "articlekit", "config", "config.yaml", str(bad)],
        cwd=case,
        env=environment(case),
        capture_output=True,
        text=True,
    )
    assert check.returncode == 1
    assert re.search(rf"{re.escape(str(bad))}:\d+:\d+: not valid YAML", check.stderr), check.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "override, expected",
    [
        (
            "strict=1",  # strict: is config.yaml's (config/test.yaml overrides sizes only)
            r"--config \(overriding config\.yaml:\d+\): strict: 1 is not of type 'boolean'; write true or false",
        ),
        (
            "bogus=1",
            r"--config: bogus: is neither a setting of articlekit's module nor an experiment's parameters "
            r"\(experiments:\); the keys are article, baseline, environment, errors, example",
        ),
    ],
)
@in_background
def test_a_bad_command_line_value_is_blamed_on_the_command_line(case, override, expected):
    run = snakemake(case, "--dry-run", config=["--configfile", "config/test.yaml", "--config", override])
    assert run.returncode != 0 and re.search(expected, run.output), run.output[-2000:]
    assert not re.search(r"config/test.yaml:1\b", run.output)


@pytest.mark.slow
@in_background
def test_a_key_given_twice_in_a_config_stops_the_plan_naming_both_lines(case, template):
    """Snakemake reads config files with a YAML reader that lets the second
    key silently win: a second n_keys: reached the experiment. The module
    reads each file again, strictly, before any job. A byte-order mark, by
    contrast, is nothing: the plan makes no step again but the manifest,
    which records the file's bytes, and the journal's bundle, which carries it."""
    for name in ["config.yaml", "config/test.yaml"]:
        # n_keys is experiments/scaling.py's default: each file sets it twice
        if name == "config.yaml":
            edit(case / name, "\nrobustness:\n", "\nscaling:\n  n_keys: 2000\n  n_keys: 1000\n\nrobustness:\n")
        else:
            edit(case / name, "\nscaling:\n", "\nscaling:\n  n_keys: 2000\n  n_keys: 1000\n")
        line = line_of(case / name, "n_keys: 1000")
        assert_fails(
            snakemake(case, "--dry-run"),
            f"{name}:{line}: scaling.n_keys: the key is given twice, at lines {line - 1} and {line}",
            "delete one of them",
        )
        restore(case, template, name)
    (case / "config/test.yaml").write_bytes(b"\xef\xbb\xbf" + (template / "config/test.yaml").read_bytes())
    plan = snakemake(case, "--dry-run")
    assert planned_rules(plan.output) == {"manifest", "journal_bundle", "all"}, plan.output[-2000:]


# --- the article ------------------------------------------------------------------


ARTICLE = "article/index.qmd"


def break_article(article, fault):
    """Apply one fault to the article; -> what the failing build must say."""
    if fault == "typed where the reader sees":
        edit(
            article,
            "::: {.callout-note title=\"In short\"}",
            "A note.[^w]\n\n[^w]: The unscaled weight was 0.921946, or 92.19%.\n\n"
            "::: {.callout-tip title=\"92.19% on one key\"}\nTip.\n:::\n\n::: {.callout-note title=\"In short\"}",
        )
        return [
            f"{ARTICLE}:{line_of(article, '[^w]: The')}: numeral '0.921946' equals the computed value",
            f"{ARTICLE}:{line_of(article, 'callout-tip')}: numeral '92.19%' equals the computed value",
            "bind it: {{< value scaling.dk64.unscaled.max_weight",
        ]
    if fault == "unclosed shortcode":
        edit(
            article,
            "::: {.callout-note title=\"In short\"}",
            'Unclosed {{< value parity.max_abs_diff_overall fmt="r" here.\n\n::: {.callout-note title="In short"}',
        )
        return [f"{ARTICLE}:{line_of(article, 'Unclosed')}: shortcode '{{{{< value parity", "is never closed"]
    if fault == "block used inline":
        edit(article, "{{< provenance >}}\n", "{{< provenance >}}\nText right after the table.\n")
        return [
            f"{ARTICLE}:{line_of(article, '{{< provenance')}: {{{{< provenance >}}}} makes a block",
            "put a blank line before and after it",
        ]
    if fault == "claim that says nothing":
        edit(article, 'expect="== true"', 'expect="!= inf"')
        line = line_of(article, '"!= inf"')
        return [
            f"{ARTICLE}:{line}:",
            "claim '!= inf' says nothing: every finite number meets '!= inf'",
            "a claim must state a bound some value could break",
        ]
    assert fault == "claim grammar"
    edit(article, 'expect="== true"', 'expect="== tru"')
    line = line_of(article, '"== tru"')
    return [f"{ARTICLE}:{line}:", "'tru' is neither a constant nor a key", "did you mean true?"]


@pytest.mark.slow
@in_background
def test_a_broken_article_fails_with_its_line_and_the_fix(case, template):
    """Five faults in turn, each failing the build with its line and fix, then
    fixed by the author (the article restored, with a fresh mtime). Every one
    leaves the same state to recover from: an article newer than all it
    feeds, so any rerun redoes lint, bind, render, pdf, audit and diff; one
    recovery run, after the last, stands for the five."""
    for fault in [
        "typed where the reader sees",
        "unclosed shortcode",
        "block used inline",
        "claim grammar",
        "claim that says nothing",
    ]:
        expected = break_article(case / ARTICLE, fault)
        assert_fails(snakemake(case), *expected)
        restore(case, template, ARTICLE)
    assert_recovered(case, template)


def laughs(indent="  "):
    """A YAML alias bomb: nine levels of nine aliases each, 9^9 values."""
    text = f'{indent}a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for previous, name in zip("abcdefgh", "bcdefghi"):
        text += f"{indent}{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]\n"
    return text


@pytest.mark.slow
@in_background
def test_bad_input_is_refused_by_the_plan_with_its_line_never_a_traceback(case, template):
    """The inputs of issue 26, each as a contributor would write it, each
    refused by a dry run with its file and line (they were: a sweep that
    flagged nothing, a TypeError in the job, a MemoryError in the plan's
    digest, minutes of planning, Snakemake's CreateRuleException, an empty
    page, a NUL byte on the page, an 11 GiB allocation). Restored, the plan
    is the clean build's; a folder in releases/ that is no release is named
    as a stray and the diff compares with the real release all the same."""
    test_yaml = case / "config/test.yaml"
    # The module's schema lists every error at once: four faults, one run.
    edit(test_yaml, "  chunk: 20\n", "  chunk: 20\n  flag_share: .nan\n")
    edit(test_yaml, "  seeds: 20\n", "  seeds: 100000000\n")
    edit(test_yaml, "  timing: {runs: 4}\n", "  timing: {runs: 4}\n  bad-name: {}\n  audit: {}\n")
    assert_fails(
        snakemake(case, "--dry-run"),
        f"config/test.yaml:{line_of(test_yaml, 'flag_share: .nan')}: robustness.flag_share: .nan is not "
        "a finite number",
        f"config/test.yaml:{line_of(test_yaml, 'seeds: 100000000')}: robustness.seeds: 100000000 is "
        "greater than the maximum of 100000",
        f"config/test.yaml:{line_of(test_yaml, 'bad-name')}: experiments.bad-name: 'bad-name' does not match",
        f"config/test.yaml:{line_of(test_yaml, 'audit: {}')}: experiments.audit: 'audit' is the name of "
        "one of the workflow's rules",
        "rename the experiment (experiments/audit.py",
    )
    restore(case, template, "config/test.yaml")
    edit(test_yaml, "\nscaling:\n", "\nscaling:\n  n_keys: 2000.0\n")
    assert_fails(
        snakemake(case, "--dry-run"),
        f"config/test.yaml:{line_of(test_yaml, 'n_keys: 2000.0')}: scaling.n_keys: 2000.0 is a float, "
        "and an integer is meant here: write 2000",
    )
    restore(case, template, "config/test.yaml")
    (case / "config.yaml").write_text((template / "config.yaml").read_text() + "bomb:\n" + laughs())
    assert_fails(
        snakemake(case, "--dry-run"),
        f"config.yaml:{line_of(case / 'config.yaml', '  f: &f')}:6: the aliases here expand to 597,871 values",
        "write the values out, or use fewer aliases",
    )
    restore(case, template, "config.yaml")

    article = case / ARTICLE
    article.write_bytes(b"\xef\xbb\xbf\n")
    assert_fails(
        snakemake(case, "--dry-run"),
        f"{ARTICLE}: the article holds only white space, so the build "
        "would publish an empty page; write its front matter",
    )
    article.write_bytes((template / ARTICLE).read_bytes().replace(b"Reading it is easy", b"Reading it\x00 is easy", 1))
    assert_fails(
        snakemake(case, "--dry-run"), f"{ARTICLE}:{line_of(article, 'Reading it')}:11: control character U+0000 (NUL)"
    )
    shutil.copy2(template / ARTICLE, article)  # as it was, mtime too: the plan below must find nothing to do

    edit(case / "experiments/scaling.py", "def footprint(p):", "def footprint(p):\n    return {}\n\n\ndef unused(p):")
    assert_fails(snakemake(case, "--dry-run"), "experiments/scaling.py: footprint() returns nothing for scaling.d_k")
    shutil.copy2(template / "experiments/scaling.py", case / "experiments/scaling.py")

    (case / "releases/scratch").mkdir()
    shutil.copy2(case / "build/values.json", case / "releases/scratch/snapshot.json")
    diff = snakemake(case, "build/diff.json", "--forcerun", "diff")
    assert diff.returncode == 0, diff.output[-3000:]
    assert "releases/scratch/snapshot.json: not a release snapshot" in diff.output
    assert (case / "build/diff.md").read_bytes() == (template / "build/diff.md").read_bytes()
    shutil.rmtree(case / "releases/scratch")
    assert "Nothing to be done" in snakemake(case, "--dry-run").output


@pytest.mark.slow
@in_background
def test_encodings_and_strict_yaml_in_the_article_and_the_baseline(case, template):
    """A byte that is not UTF-8 stops the plan with its line and column (it
    used to be a UnicodeDecodeError at "position 316" inside an
    InputFunctionException); re-saved as UTF-8 with a byte-order mark, the
    article is the same article. A key given twice in a baseline entry fails
    the first job that reads the baseline, naming both lines; `value: 1e-7`
    is the number (PyYAML alone reads it as text, which then "failed its own
    check"). The recovery run, with the mark and the 1e-7 both still there,
    must give the clean build's content, down to build/audit.json."""
    article, baseline = case / ARTICLE, case / "baseline/published.yaml"
    line = line_of(article, "Reading it is easy")
    article.write_bytes(article.read_bytes().replace(b"Reading it is easy", b"Reading it is \xe9asy", 1))
    assert_fails(
        snakemake(case, "--dry-run"),
        f"{ARTICLE}:{line}:15: not UTF-8 (byte 0xe9, after 'Reading it is '): re-save the file as UTF-8",
    )
    article.write_bytes(b"\xef\xbb\xbf" + (template / ARTICLE).read_bytes())  # as an editor saves "UTF-8 with BOM"

    entry = '    value: 1.0e-7\n    key: parity.float32.sdpa.max_abs_diff\n    check: "< 1e-5"\n'
    edit(baseline, entry, entry + '    check: "< 1e-3"\n')
    line = line_of(baseline, 'check: "< 1e-3"')
    assert_fails(
        snakemake(case),
        f"baseline/published.yaml:{line}: entries[",
        f"(id 'faq.float32-sdpa-diff').check: the key is given twice, at lines {line - 1} and {line}",
    )
    restore(case, template, "baseline/published.yaml")
    edit(baseline, entry, entry.replace("1.0e-7", "1e-7"))

    assert_recovered(case, template)
    assert (case / "build/article.md").read_text().startswith("# Attention from scratch: NumPy vs PyTorch\n")
    judged = next(
        e for e in loads((case / "build/audit.json").read_text())["entries"] if e["id"] == "faq.float32-sdpa-diff"
    )
    assert judged["status"] == "moved as expected" and judged["why"] == "floating-point noise: both meet '< 1e-5'"


def test_the_render_check_knows_a_flattened_provenance_table(tmp_path):
    provenance_md = "| Key |\n|:--|\n| [`a`]{#v-a} |\n"
    flattened, table = tmp_path / "flat.html", tmp_path / "table.html"
    flattened.write_text('<p>| Key | |:–| | <span id="v-a">a</span> |</p>')
    table.write_text('<table><tr><th>Key</th></tr><tr><td><span id="v-a">a</span></td></tr></table>')
    md = tmp_path / "a.md"
    md.write_text("| Key |\n|:--|\n| `a` |\n")
    text = "# Where\n\n{{< provenance >}}\n"
    check_page_structure(text, provenance_md, table)
    check_markdown_structure(text, md)
    with pytest.raises(RenderError, match="the provenance table is not a table"):
        check_page_structure(text, provenance_md, flattened)
    md.write_text("| Key | |:--| | `a` |\n")  # flattened into a line
    with pytest.raises(RenderError, match="the provenance table is not a table"):
        check_markdown_structure(text, md)


# --- the release snapshot -----------------------------------------------------------

RELEASE = "releases/numpy-2.4.6_torch-2.13.0+cpu/snapshot.json"


@pytest.mark.slow
@in_background
def test_a_tampered_release_snapshot_fails_the_diff_naming_the_file_and_the_entry(case, template):
    """The issue's two edits of the committed snapshot, each failing the
    build twice (never a build/diff.md reporting the edit as what the
    release printed), then restored; both leave only the diff to redo, so
    one recovery run stands for both."""
    snapshot = case / RELEASE
    text = snapshot.read_text(encoding="utf-8")
    snapshot.write_text(text.replace("0.9219455027665324", "0.9319455027665324"), encoding="utf-8")
    for attempt in range(2):
        assert_fails(
            snakemake(case),
            "Error in rule diff",
            f"{RELEASE}: does not match its digest",
            "first difference: values['scaling.dk64.unscaled.max_weight'] changed (now 0.9319455027665324)",
            "the release printed '0.921946' for scaling.dk64.unscaled.max_weight",
            f"git checkout -- {RELEASE}",
        )
        assert not (case / "build/diff.md").exists()
    restore(case, template, RELEASE)

    document = loads(text)
    keys = list(document["values"])
    for key in keys[::2]:
        del document["values"][key]
    write_json(snapshot, document)  # still valid JSON
    assert_fails(
        snakemake(case),
        f"{RELEASE}: does not match its digest",
        f"first difference: values['{keys[0]}'] removed",
        f"values: {len(keys[::2])} removed",
    )
    restore(case, template, RELEASE)
    assert_recovered(case, template, then_nothing_to_do=True)


# --- the machine: kills, concurrency, disk, tools, permissions ---------------------


# When the build is killed: which job's start it waits for, and how long after.
KILLS = [("rule scaling:", 0.5), ("rule bind:", 0.2), ("rule html:", 1.0)]


@pytest.mark.slow
@in_background
def test_a_build_killed_mid_job_leaves_nothing_half_written(case, template, tmp_path):
    """kill -9 of the build's whole process group at three moments: during an
    experiment, during bind, during render (the pdf beside it). After each:
    nothing half-written, then --unlock and build again, which must redo the
    killed job to reach the next one; the last rerun gives a clean build and
    leaves no render or pdf work folder behind (issue item 14), nor an
    experiment's scratch folder in the system's temporary folder."""
    # Work folders of a render and a pdf killed earlier (their process is
    # gone), there whether or not these kills leave their own: a render or
    # pdf job removes both kinds as it starts. The build killed during render
    # may not have started the pdf (and Snakemake, seeing the same bindings,
    # need not redo it), but the rerun redoes the render.
    stale = [case / "build/.render-999999999-x", case / "build/.pdf-999999999-x"]
    # The builds' temporary folder, to see what the kills leave in it: the
    # scaling run killed first, and one killed before it, planted here; the
    # rerun of scaling removes both (articlekit/experiment/scratch.py).
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    (temporary / f"articlekit-scaling@{socket.gethostname()}@999999999-x").mkdir()
    env = {**environment(case), "TMPDIR": str(temporary)}
    change(case / "experiments/scaling.py")
    for number, (job, delay) in enumerate(KILLS):
        if job == "rule html:":
            for folder in stale:
                folder.mkdir()
                (folder / "article.html").write_text("<html>half")
        log = tmp_path / f"build{number}.log"
        run = start_snakemake(case, log, env=env)
        wait_for(log, job, run)
        time.sleep(delay)
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        assert_whole(case, leftovers_allowed=True)
        if number == 0:
            restore(case, template, "experiments/scaling.py")
        unlocked = snakemake(case, "--unlock", env=env)
        assert unlocked.returncode == 0, unlocked.output[-2000:]
    assert_recovered(case, template, env=env)
    assert not any(folder.exists() for folder in stale)
    assert not list(temporary.glob("articlekit-*")), sorted(p.name for p in temporary.iterdir())


@pytest.mark.slow
@in_background
def test_two_builds_at_once_one_waits_its_turn(case, template, tmp_path):
    """A second build started while the first runs a job gets Snakemake's
    lock message and touches nothing; the first finishes."""
    (case / "build/article.pdf").unlink()  # a job for the first build: pdf
    logs = [tmp_path / "build0.log", tmp_path / "build1.log"]
    first = start_snakemake(case, logs[0])
    wait_for(logs[0], "rule pdf:", first)
    second = start_snakemake(case, logs[1])
    codes = [first.wait(), second.wait()]
    assert codes[0] == 0, logs[0].read_text()[-2000:]
    assert codes[1] != 0 and "cannot be locked" in logs[1].read_text(), logs[1].read_text()[-2000:]
    assert_recovered(case, template, then_nothing_to_do=True)


@contextlib.contextmanager
def mounted(*args):
    target = args[-1]
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip() or 'mount failed'}); this case needs mount rights")
    try:
        yield Path(target)
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


def pages(path, page=4096):
    return -(-path.stat().st_size // page)


@pytest.mark.slow
@in_background
def test_a_full_disk_names_the_file_and_the_space_it_needs(case, template):
    shutil.rmtree(case / "build")
    (case / "build").mkdir()
    # room for values.json and lint.txt (tmpfs counts whole pages), not for bindings.json; the
    # article's tree is put back (up to date: the article did not change), so that no job
    # running beside bind competes for the room
    tree = "build/article.ast.json"
    room = pages(template / "build/values.json") + pages(template / "build/lint.txt") + pages(template / tree) + 2
    assert pages(template / "build/bindings.json") > 2
    # and so are the seed sweep's summary and page (their chunks under results/ did not change)
    kept = [tree, *(str(p.relative_to(template)) for p in sorted((template / "build").glob("robustness.*")))]
    room += sum(pages(template / path) for path in kept[1:])
    with mounted("-t", "tmpfs", "-o", f"size={room * 4}k", "tmpfs", str(case / "build")):
        for path in kept:
            shutil.copy2(template / path, case / path)
        run = snakemake(case)
        assert_fails(
            run,
            "no space left on the device to write build/bindings.json: it needs",
            "is free there; free some space and run the build again",
        )
        assert not [p for p in (case / "build").iterdir() if p.name.startswith(".")]
    assert_recovered(case, template)


@pytest.mark.slow
@in_background
def test_a_full_disk_under_pandoc_is_reported_once_and_cleaned_up(case, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with mounted("-t", "tmpfs", "-o", "size=128k", "tmpfs", str(out)):
        run = subprocess.run(
            [
                "python",
                "-m",
                "articlekit",
                "render",
                ARTICLE,
                "--bindings",
                "build/bindings.json",
                "--renderer",
                "pandoc",
                "--html",
                str(out / "article.html"),
                "--md",
                str(out / "article.md"),
            ],
            cwd=case,
            env=environment(case),
            capture_output=True,
            text=True,
        )
        assert run.returncode == 1
        assert f"render: no space left on the device to write {out / 'article.html'}" in run.stderr, run.stderr
        assert "CallStack" not in run.stderr and "Traceback" not in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert list(out.iterdir()) == []


HIDE_TORCH = '''
import importlib.abc, importlib.metadata, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoTorch())
installed = importlib.metadata.version

def version(name):
    if name == "torch":
        raise importlib.metadata.PackageNotFoundError(name)
    return installed(name)

importlib.metadata.version = version
'''


@pytest.mark.slow
@in_background
def test_without_torch_the_build_says_what_to_install(case, template, tmp_path):
    hide = tmp_path / "no-torch"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_TORCH)
    env = environment(case)
    env["PYTHONPATH"] = f"{hide}{os.pathsep}{env['PYTHONPATH']}"
    assert subprocess.run(["python", "-c", "import torch"], env=env, capture_output=True).returncode != 0
    plan = snakemake(case, "--dry-run", env=env)
    assert plan.returncode == 0 and "PyTorch is not installed" in plan.output, plan.output[-2000:]
    build = snakemake(case, env=env)
    assert_fails(build, "PyTorch is not installed", "pip install -r requirements.txt")
    (case / "results/scaling.json").unlink()
    numpy_only = snakemake(case, "results/scaling.json", env=env)
    assert numpy_only.returncode == 0, numpy_only.output[-2000:]
    assert_recovered(case, template)


@pytest.mark.slow
@in_background
def test_a_read_only_checkout_says_the_folder_must_be_writable(case, tmp_path):
    view = tmp_path / "read-only"
    view.mkdir()
    with mounted("--bind", str(case), str(view)):
        remount = subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot make a read-only view here ({remount.stderr.strip()})")
        run = snakemake(view)
        assert_fails(run, f"{view} is not writable (Read-only file system)", "cp -r . /some/writable/folder")
    assert "Nothing to be done" in snakemake(case, "--dry-run").output


# --- the pieces, checked directly (fast) -------------------------------------------


@pytest.mark.parametrize(
    "text, line, column, tag",
    [
        ('{"a": 1,\n "b": NaN}', 2, 7, "nan"),
        ('{"s": "NaN is text", "b": [1, -Infinity]}', 1, 31, "-inf"),
        ("[Infinity]", 1, 2, "inf"),
    ],
)
def test_bare_non_finite_numbers_are_not_json(text, line, column, tag):
    with pytest.raises(ValueError) as caught:
        loads(text)
    assert (caught.value.lineno, caught.value.colno) == (line, column)
    assert f'an artifact writes it as {{"$float": "{tag}"}}' in str(caught.value)


def test_a_shortcode_never_spans_paragraphs_nor_swallows_the_next_one():
    for text in (
        'Intro.\n\nUnclosed {{< value a fmt="r" here.\n\nLater {{< value b d_k=1 >}}.\n',
        'x {{< value a fmt="r" and {{< value b >}}\n',
    ):
        with pytest.raises(ShortcodeSyntaxError, match="is never closed") as caught:
            scan(text)
        assert caught.value.line == text[: text.index("{{<")].count("\n") + 1
    assert [sc.name for sc in scan('a {{< value x\n  fmt="r" >}} b\n')] == ["value"]  # one paragraph, two lines


@pytest.mark.parametrize(
    "text, alone",
    [
        ("## Where\n\n{{< provenance >}}\n\nAfter.\n", True),
        ("## Where\n{{< provenance >}}\n", True),
        ("::: {.wide}\n{{< provenance >}}\n:::\n", True),
        ("{{< provenance >}}\nText right after.\n", False),
        ("Text right before\n{{< provenance >}}\n", False),
        ("See {{< provenance >}} here.\n", False),
    ],
)
def test_a_block_shortcode_must_stand_alone_in_its_paragraph(text, alone):
    if alone:
        assert [sc.name for sc in scan(text)] == ["provenance"]
    else:
        with pytest.raises(ShortcodeSyntaxError, match="makes a block"):
            scan(text)


def test_a_write_that_does_not_fit_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    import articlekit.core.jsonio as jsonio

    class FullDisk(io.FileIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonio.os, "fdopen", lambda fd, mode: FullDisk(fd, "wb"))
    target = tmp_path / "values.json"
    with pytest.raises(DiskFull, match=rf"to write {re.escape(str(target))}: it needs 1\d bytes, .* is free there"):
        write_json(target, {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_temporaries_of_killed_writers_are_removed_and_live_ones_kept(tmp_path):
    dead = tmp_path / ".values.json.999999999.abc.tmp"
    live = tmp_path / f".values.json.{owner_tag()}.def.tmp"
    dead.write_text("half")
    live.write_text("in progress")
    write_json(tmp_path / "values.json", {"a": 1})
    assert not dead.exists() and live.exists()


def test_an_unreadable_artifact_says_how_to_rebuild_it(tmp_path):
    from articlekit.experiment.artifacts import read_artifact

    artifact = tmp_path / "parity.json"
    artifact.write_text('{\n  "values": {\n    "a": 1,\n')
    with pytest.raises(
        ValueError,
        match=rf"{re.escape(str(artifact))}:4:1: not valid JSON .*\n.*"
        "delete it and run snakemake again to rebuild it",
    ):
        read_artifact(artifact)
