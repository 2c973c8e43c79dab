"""End to end: the whole DAG on the fast config, in a fresh copy of the project.

These are the promises a user relies on: one command builds everything, a
second does nothing, and a change reruns exactly what depends on it.
"""

import contextlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import snakemake_fork
from tests.shared_build import copy_of_test_build
from tests.workspace import PROJECT_ROOT, copy_environment, merged_config

pytestmark = pytest.mark.slow

FAST = ["--configfile", "config/test.yaml"]
EXPERIMENT_RULES = {
    "environment",
    "scaling",
    "example",
    "multihead",
    "parity",
    "mask_convention",
    "timing",
    "errors",
}
TORCH_RULES = {"environment", "parity", "mask_convention", "timing", "errors"}


def snakemake(workdir, *args, check=True, env=None, fork=True):
    """env: variables to set on top of the copy's own environment. A fork of
    Snakemake imported once (tests/snakemake_fork.py), for every run but the
    module's first build, which is the `snakemake` command itself (fork=False)."""
    argv, environment = ["--cores", "2", *args, *FAST], {**copy_environment(workdir), **(env or {})}
    if fork:
        proc = snakemake_fork.run(workdir, argv, environment, timeout=900)
    else:
        proc = subprocess.run(
            ["snakemake", *argv], cwd=workdir, env=environment, capture_output=True, text=True, timeout=900
        )
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return proc


def planned_rules(workdir, *args, env=None):
    """Rules a dry run would execute, read from its 'Job stats' table."""
    out = snakemake(workdir, "--dry-run", *args, env=env).stdout
    if "Nothing to be done" in out:
        return set()
    table = out.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", table, re.M)} - {"total"}


def planned_jobs(workdir, *args, env=None):
    """{rule: how many of its jobs} a dry run would execute, from its 'Job stats' table."""
    out = snakemake(workdir, "--dry-run", *args, env=env).stdout
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {
        m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M) if m.group(1) != "total"
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The strict build (config.yaml's strict: true) on the fast config: a
    copy of its own of the run's one TEST_BUILD, which one command built
    from a fresh copy with strict=false (tests/shared_build.py), built again
    here by `snakemake` alone: strict is a param of bind, so the article is
    bound and rendered again under it, and no experiment runs twice."""
    work = copy_of_test_build(tmp_path_factory).project
    rebuilt = snakemake(work, fork=False)
    assert re.search(r"^\s*(local)?rule bind:", rebuilt.stderr + rebuilt.stdout, re.M), "not bound again under strict"
    return work


@pytest.fixture
def built_of_its_own(built, tmp_path):
    """A copy of `built` for a test that leaves files no rule of the
    project's own makes (a planted format's output and log): in `built`,
    every test after it would find them, and the left-over check report
    them. mtimes and Snakemake's metadata kept: the copy is up to date."""
    return Path(shutil.copytree(built, tmp_path / "project", symlinks=True))


def test_one_command_builds_every_artifact(built):
    for name in EXPERIMENT_RULES | {"listings"}:
        assert (built / f"results/{name}.json").stat().st_size > 0, name
    for path in [
        "build/values.json",
        "build/bindings.json",
        "build/article.html",
        "build/article.md",
        "build/audit.html",
        "build/audit.md",
        "build/audit.json",
        "build/diff.md",
        "build/diff.json",
    ]:
        assert (built / path).stat().st_size > 0, path
    assert list((built / "figures").glob("*.svg"))


def test_a_second_build_has_nothing_to_do(built):
    assert planned_rules(built) == set()


def test_every_file_a_build_leaves_is_a_rules_so_none_is_reported_left_over(built):
    plan = snakemake(built, "--dry-run")
    assert "left over" not in plan.stdout + plan.stderr


PLANTED_FORMAT = '''"""Plain text: build/article.txt, a format planted by a test."""

from articlekit.render.formats import Format


def write(job):
    from articlekit.render.pandoc_route import pandoc_run
    from articlekit.render.tools import run_tool

    common, metadata = pandoc_run(job)
    run_tool(common + ["--to", "plain", "--output", str(job.produced)], job.article, cwd=job.article.parent)
    return metadata["renderer"]


def check(job):
    pass


FORMAT = Format(name="plain", output="build/article.txt", describe="plain text", writer="plain", write=write, check=check)
'''


def test_a_new_format_is_one_module_and_one_config_line_and_reruns_alone(built_of_its_own):
    """Planted in the copy's own articlekit: the module, and its name in
    publishing.formats. The Plan makes its rule; the bound values reach its
    output; an edit to its module reruns that rule and no other format's.
    In a copy of its own: its rule's output and log stay there."""
    from articlekit.render import formats

    work = built_of_its_own
    module = work / "articlekit/render/formats/plain.py"
    config = work / "config.yaml"  # publishing: is config.yaml's alone (config/test.yaml overrides sizes)
    original = config.read_text(encoding="utf-8")
    listed = re.search(r"^  formats: \[(.*?)\]", original, re.M)
    module.write_text(PLANTED_FORMAT, encoding="utf-8")
    config.write_text(original.replace(listed.group(0), f"  formats: [{listed.group(1)}, plain]", 1), encoding="utf-8")
    edited = [a != b for a, b in zip(original.splitlines(), config.read_text(encoding="utf-8").splitlines())]
    assert sum(edited) == 1 and len(edited) == len(original.splitlines())  # one line of config
    assert planned_rules(work) & {*formats.names(), "plain"} == {"plain"}  # the others are up to date
    snakemake(work, "build/article.txt")
    bindings = json.loads((work / "build/bindings.json").read_text(encoding="utf-8"))["bindings"]
    text = (work / "build/article.txt").read_text(encoding="utf-8")
    shown = [b["text"] for b in bindings.values() if b["in_prose"] and "\n" not in b["text"]]
    assert shown and all(value in text for value in shown)
    module.write_text(PLANTED_FORMAT + "# an edit\n", encoding="utf-8")
    assert planned_rules(work) & {*formats.names(), "plain"} == {"plain"}


def test_a_parameter_in_a_config_file_outside_the_project_reruns_its_experiment(built, tmp_path):
    """--configfile naming a file elsewhere (an absolute path): its edited
    parameter reaches the experiment's rule, and the plan says so."""
    seed = merged_config(built)["example"]["seed"]  # experiments/example.py's default
    outside = tmp_path / "over.yaml"
    outside.write_text(f"example:\n  seed: {seed + 1}\n", encoding="utf-8")
    # the helpers add --configfile config/test.yaml last, which would replace this list
    argv = ["--cores", "2", "--dry-run", "--configfile", "config/test.yaml", str(outside)]
    plan = snakemake_fork.run(built, argv, copy_environment(built))
    assert plan.returncode == 0, plan.stdout[-3000:]
    planned = set(re.findall(r"^(?:local)?rule (\w+):", plan.stdout, re.M))
    assert "example" in planned and not planned & (EXPERIMENT_RULES - {"example"})


def test_a_prose_edit_reruns_no_experiment(built):
    article = built / "article/index.qmd"
    original = article.read_text()
    try:
        article.write_text(original + "\nA closing sentence without numbers.\n")
        planned = planned_rules(built)
        assert "html" in planned
        assert not planned & EXPERIMENT_RULES
    finally:
        article.write_text(original)
        snakemake(built, "--touch")


def test_a_torch_upgrade_reruns_exactly_the_experiments_that_import_torch(built):
    # --config versions= stands in for the installed version: an upgrade, faked
    # without touching the environment or any file of the project
    upgraded = planned_rules(built, "--config", 'versions={torch: "99.0.0"}')
    assert upgraded & EXPERIMENT_RULES == TORCH_RULES


@contextlib.contextmanager
def edited(path):
    """A comment added to the file inside the block (Snakemake reruns on a
    newer file only when its content changed too)."""
    original = path.read_text()
    try:
        path.write_text(original + "\n# an edit\n")
        yield
    finally:
        path.write_text(original)


def test_a_code_edit_reruns_exactly_the_steps_that_run_it(built):
    # no hand-kept lists: each rule's code inputs are read from the imports
    with edited(built / "experiments/attention.py"):
        planned = planned_rules(built)
    assert planned & (EXPERIMENT_RULES | {"listings"}) == EXPERIMENT_RULES - {"environment"} | {"listings"}
    with edited(built / "articlekit/article/lint.py"):
        planned = planned_rules(built)
    assert "lint_article" in planned
    assert not planned & (EXPERIMENT_RULES | {"listings", "values", "bind", "audit", "diff"})


def test_a_bad_config_fails_before_any_job_naming_the_key(built, tmp_path):
    config = (built / "config/test.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.replace("  rounds: 6", "  rounds: 1"))
    proc = snakemake_fork.run(
        built, ["--cores", "2", "--dry-run", "--configfile", str(bad)], copy_environment(built), 120
    )
    assert proc.returncode != 0
    message = proc.stdout + proc.stderr
    assert "timing.rounds" in message and "minimum of 6" in message


def test_a_figure_the_article_names_but_no_rule_builds_stops_the_plan(built):
    article = built / "article/index.qmd"
    original = article.read_text()
    try:
        article.write_text(original + "\n![A figure nobody makes](../figures/nowhere-made.svg)\n")
        proc = snakemake(built, "--dry-run", check=False)
        assert proc.returncode != 0
        assert "figures/nowhere-made.svg, which no rule builds" in proc.stdout + proc.stderr
    finally:
        article.write_text(original)


# --- the renderer and its version are inputs of the render ------------------------


def path_without_quarto():
    return os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "quarto").exists())


def quarto_install(folder, version):
    """{"PATH": ...} with a Quarto laid out as a release is, bin/quarto and
    share/version, first on it. The plan reads the version from the file;
    the quarto itself is never run by a dry run (it would fail)."""
    (folder / "bin").mkdir(parents=True)
    (folder / "share").mkdir()
    (folder / "bin" / "quarto").write_text("#!/bin/sh\nexit 1\n")
    (folder / "bin" / "quarto").chmod(0o755)
    (folder / "share" / "version").write_text(f"{version}\n")
    return {"PATH": f"{folder / 'bin'}{os.pathsep}{path_without_quarto()}"}


def pandoc_standin(folder, version):
    """{"PYPANDOC_PANDOC": ...}: a `pandoc` that says it is another version."""
    folder.mkdir(parents=True)
    (folder / "pandoc").write_text(f"#!/bin/sh\necho 'pandoc {version}'\n")
    (folder / "pandoc").chmod(0o755)
    return {"PYPANDOC_PANDOC": str(folder / "pandoc")}


def test_switching_the_renderer_renders_again_and_auto_counts_as_what_it_picks(built, tmp_path):
    no_quarto = {"PATH": path_without_quarto()}
    # what truly depends on the render, as Snakemake derives it from the rules
    render_and_after = planned_rules(built, "--forcerun", "html", "gfm", env=no_quarto)
    assert {"html", "gfm"} <= render_and_after
    try:
        snakemake(built, "--touch", "--config", "renderer=pandoc", env=no_quarto)  # as if rendered by Pandoc
        assert planned_rules(built, "--config", "renderer=quarto", env=no_quarto) == render_and_after
        # auto is recorded as the renderer it picks: Pandoc without Quarto...
        assert planned_rules(built, "--config", "renderer=auto", env=no_quarto) == set()
        # ...and Quarto once one is on PATH, though the config still says auto
        with_quarto = quarto_install(tmp_path / "quarto", "1.9.38")
        assert planned_rules(built, "--config", "renderer=auto", env=with_quarto) == render_and_after
    finally:
        snakemake(built, "--touch")


def test_a_new_quarto_pandoc_or_typst_renders_again_what_it_renders(built, tmp_path):
    quarto = quarto_install(tmp_path / "quarto-1.9.38", "1.9.38")
    newer_quarto = quarto_install(tmp_path / "quarto-1.9.39", "1.9.39")
    newer_pandoc = pandoc_standin(tmp_path / "pandoc", "99.0")
    try:
        # rendered by Pandoc (config/test.yaml): both pages go through it
        snakemake(built, "--touch", "--config", "renderer=pandoc")
        assert planned_rules(built, "--config", "renderer=pandoc", env=newer_pandoc) & {"html", "pdf"} == {
            "html",
            "pdf",
        }
        snakemake(built, "--touch", "--config", "renderer=quarto", env=quarto)
        assert planned_rules(built, "--config", "renderer=quarto", env=quarto) == set()
        assert planned_rules(built, "--config", "renderer=quarto", env=newer_quarto) & {"html", "pdf"} == {"html"}
        # the PDF goes through Pandoc and Typst whichever renderer made the HTML; and the article's
        # tree, which Pandoc reads and the raw-HTML check refuses or passes before either renders
        # (articlekit/article/prose_guard.py), is an input of both: a new Pandoc checks it again
        assert planned_rules(built, "--config", "renderer=quarto", env={**quarto, **newer_pandoc}) & {
            "html",
            "pdf",
        } == {"html", "pdf"}
        assert planned_rules(built, "--config", "renderer=quarto", 'versions={typst: "99.0"}', env=quarto) & {
            "html",
            "pdf",
        } == {"pdf"}
    finally:
        snakemake(built, "--touch")


MINIMAL_ARTICLE = {
    "Snakefile": (PROJECT_ROOT / "Snakefile").read_text(),
    "config.yaml": "experiments:\n  hello: {figures: {curve: figures/hello-curve.svg}, threads: all}\nhello: {n: 3}\n",
    "experiments/__init__.py": "",
    "experiments/hello.py": "from articlekit.experiment.artifacts import run_experiment\n\n\ndef run(params):\n"
    "    return {'total': params['n']}\n\n\nrun_experiment('hello', run)\n",
    "article/index.qmd": "The total is {{< value hello.total >}}.\n",
    "article/_quarto.yml": "format:\n  html: {}\n",
    "baseline/published.yaml": "edition: {title: Hello}\nentries: []\n",  # read when jobs run, not planned
}


def test_an_article_of_its_own_needs_only_the_module_and_its_experiments(tmp_path):
    # no schema, matrix, listings, report captions or conda file: the module's
    # defaults cover them, and the experiment rule comes from config experiments:
    for name, text in MINIMAL_ARTICLE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = copy_environment(PROJECT_ROOT)
    proc = snakemake_fork.run(tmp_path, ["--cores", "3", "--dry-run", "--printshellcmds"], env, 300)
    assert proc.returncode == 0, proc.stdout[-4000:]
    # the limits the script checks its sizes against: the module's defaults for the rule's resources
    assert (
        "python -m experiments.hello --params '{\"n\": 3}' --threads 3 --mem-mb 1000 --runtime 10 "
        "--json results/hello.json --figure curve=figures/hello-curve.svg  --log logs/hello.log" in proc.stdout
    )
    # no rule of the version matrix (the report pages' code, matrix.css included, is the audit's input)
    assert "rule listings:" not in proc.stdout and not re.search(r"^rule matrix", proc.stdout, re.M)


# --- the timing, measured between runs (experiments.timing.runs) -------------------------


def test_the_timing_is_a_job_per_run_and_one_that_combines_them(built):
    runs = 4  # config/test.yaml, experiments.timing.runs
    jobs = planned_jobs(built, "--forcerun", "timing")
    assert (jobs["timing"], jobs["timing_combine"]) == (runs, 1)
    assert sorted(p.name for p in (built / "results/runs/timing").iterdir()) == [
        f"run-{i}.json" for i in range(1, runs + 1)
    ]


def test_editing_a_timing_parameter_reruns_every_run_and_nothing_else_measured(built):
    config = built / "config/test.yaml"
    original = config.read_text()
    try:
        config.write_text(original.replace("  sample_ms: 10\n", "  sample_ms: 9\n"))
        jobs = planned_jobs(built)
    finally:
        config.write_text(original)
    assert (jobs.get("timing"), jobs.get("timing_combine")) == (4, 1)
    assert not set(jobs) & (EXPERIMENT_RULES - {"timing"})


def test_the_page_prints_the_timing_between_runs_and_says_whether_they_agree(built):
    values = json.loads((built / "build/values.json").read_text())["values"]
    page = " ".join((built / "build/article.md").read_text().split())
    runs = values["timing.main.speedup.runs"]
    assert values["timing.runs.count"] == len(runs) == 4
    assert values["timing.main.speedup.estimate"] == pytest.approx(sum(sorted(runs)[1:3]) / 2)  # their median
    low, high = values["timing.main.speedup.low"], values["timing.main.speedup.high"]
    assert f"one more run would give between {low:.1f} and {high:.1f}." in page
    assert " ".join(values["timing.runs.note"].split()) in page
    bindings = json.loads((built / "build/bindings.json").read_text())["bindings"]
    claim = next(b for b in bindings.values() if b["key"] == "timing.main.speedup.estimate")
    assert f"(interval {low!r} to {high!r})" in claim["claim"]["message"]  # judged on the runs' interval
