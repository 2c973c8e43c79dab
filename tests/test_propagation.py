"""Every change reaches the article (guarantee 6 of design.md).

Each kind of input is changed in a built copy of the project: each
experiment's parameters and script, the article's own modules, every file of
articlekit that some step runs, the prose, the baseline, the latest release
snapshot, the page settings, the installed library versions, the renderer and
the strictness. For each change the rules Snakemake schedules must be exactly
the rules that depend on it.

"Depend on it" is derived from the rules, never typed here: the whole DAG is
read before and after the change (tests/snakemake_plan.py), and a job is
affected when it reads a changed file, when its params (all of them, as the
job sees them) or its inputs differ, or when it reads what an affected job
writes. Snakemake's decision is read from the same run, so a rerun trigger
that ignores an input (a params function it counts as derived, a file left
out of a rule's inputs) fails here first.

The inputs themselves are found from the DAG: every file some job reads and
no job writes. Files that every step reads alike (one module of articlekit
used by the same rules as another) are represented by one of them.

Dry runs only, each forked from one process that imported Snakemake
(tests/snakemake_fork.py), and two real builds to show a change on the page,
each in a copy of its own.
"""

import contextlib
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from articlekit.__main__ import COMMANDS
from articlekit.review.snapshot_digest import sealed
from tests.workspace import copy_environment, merged_config

pytestmark = [pytest.mark.slow, pytest.mark.spread]  # each case changes and restores its copy

PLAN_PATCH = f"{Path(__file__).with_name('snakemake_plan.py')}:record_plan"
# What the project copy was built with (conftest's built_project).
BUILT_WITH = ["--configfile", "config/test.yaml", "--config", "strict=false"]
CONFIG = "config/test.yaml"


# ---- the project, and Snakemake's plan of it ----------------------------------------


@pytest.fixture(scope="module")
def project(built_project, tmp_path_factory):
    """A copy of the built project (mtimes and Snakemake's metadata kept),
    changed and restored by each case."""
    work = tmp_path_factory.mktemp("propagation") / "project"
    shutil.copytree(built_project, work, symlinks=True)
    return work


class Snakemake:
    def __init__(self, server, work, logs):
        self.server, self.work, self.logs, self.count = server, work, logs, 0

    def run(self, *args, patch=None, env=None):
        self.count += 1
        log = self.logs / f"run-{self.count}.log"
        env = {**copy_environment(self.work), **(env or {})}
        code = self.server.start(self.work, ["--cores", "2", *args], env, log, patch=patch).wait(timeout=900)
        output = log.read_text(encoding="utf-8", errors="replace")
        assert code == 0, f"snakemake {' '.join(args)} exited {code}:\n{output[-4000:]}"
        return output

    def plan(self, *config, env=None):
        """Every job of the DAG and the rules Snakemake would run (a dry run)."""
        out = self.logs / f"plan-{self.count + 1}.json"
        self.run("--dag", *(config or BUILT_WITH), patch=PLAN_PATCH, env={**(env or {}), "SNAKEMAKE_PLAN": str(out)})
        return Plan(json.loads(out.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def snakemake(server, project, tmp_path_factory):
    return Snakemake(server, project, tmp_path_factory.mktemp("propagation-logs"))


class Plan:
    def __init__(self, plan):
        self.jobs = {(job["rule"], tuple(job["output"])): job for job in plan["jobs"]}
        self.scheduled = set(plan["scheduled"])

    def sources(self):
        """Files some job reads and no job writes: the project's inputs."""
        written = {path for job in self.jobs.values() for path in job["output"]}
        return sorted({path for job in self.jobs.values() for path in job["input"]} - written)

    def readers(self, path):
        return frozenset(job["rule"] for job in self.jobs.values() if path in job["input"])


def depending_rules(before, after, changed_files=()):
    """The rules that must rerun, from the rules alone: jobs that read a
    changed file or whose params or inputs differ (or that are new), and
    every job downstream of them."""
    changed = set(changed_files)
    affected = {
        key
        for key, job in after.jobs.items()
        if key not in before.jobs
        or job["params"] != before.jobs[key]["params"]
        or job["input"] != before.jobs[key]["input"]
        or changed & set(job["input"])
    }
    while True:
        written = {path for key in affected for path in after.jobs[key]["output"]}
        grown = affected | {key for key, job in after.jobs.items() if written & set(job["input"])}
        if grown == affected:
            return {rule for rule, _ in affected}
        affected = grown


# ---- changes ------------------------------------------------------------------------

# An edit each kind of file takes without changing what it means.
COMMENT = {
    ".py": "\n# an edit\n",
    ".smk": "\n# an edit\n",
    ".yaml": "\n# an edit\n",
    ".yml": "\n# an edit\n",
    ".lua": "\n-- an edit\n",
    ".css": "\n/* an edit */\n",
    ".typ": "\n// an edit\n",
    ".qmd": "\nA closing sentence without numbers.\n",
    ".rst": "\n.. an edit\n",
    "": "\n# an edit\n",
}


@contextlib.contextmanager
def edited(work, rel, new_text=None):
    """The file changed inside the block (a comment added, or new_text), then
    restored byte for byte. Snakemake compares content, not only mtimes, so
    the restored file reruns nothing."""
    path = work / rel
    original = path.read_bytes()
    try:
        if new_text is None:
            if path.suffix == ".json":  # no comments in JSON: the same data, laid out anew
                new_text = json.dumps(json.loads(original), indent=3) + "\n"
            else:
                new_text = original.decode("utf-8") + COMMENT.get(path.suffix, COMMENT[""])
        path.write_text(new_text, encoding="utf-8")
        yield
    finally:
        path.write_bytes(original)


def first_integer_parameter(section):
    return next((key for key, value in section.items() if isinstance(value, int) and not isinstance(value, bool)), None)


def parameter_to_change(section):
    """Its seed, which any value is free to take, else its first integer
    (a size could break a rule between keys, such as T <= loop_max_T)."""
    return "seed" if isinstance(section.get("seed"), int) else first_integer_parameter(section)


@pytest.fixture(scope="module")
def base(snakemake):
    plan = snakemake.plan()
    assert plan.scheduled == set(), "the built copy is not up to date"
    return plan


def check(snakemake, base, changed_files=(), config=(), what=None, env=None):
    what = what or ", ".join([*changed_files, *(f"--config {c}" for c in config)])
    after = snakemake.plan(*BUILT_WITH, *config, env=env)
    expected = depending_rules(base, after, changed_files)
    assert expected, f"nothing depends on {what}: the change is not an input"
    assert after.scheduled == expected, (
        f"changing {what}: Snakemake schedules "
        f"{sorted(after.scheduled)}, the rules depend on it in {sorted(expected)}; "
        f"missed {sorted(expected - after.scheduled)}, extra {sorted(after.scheduled - expected)}"
    )
    return after


def with_parameter(project, name, key, value):
    """config/test.yaml's text with one more override: `name.key: value`."""
    override = yaml.safe_load((project / CONFIG).read_text(encoding="utf-8"))
    override[name] = {**(override.get(name) or {}), key: value}
    return yaml.safe_dump(override, sort_keys=False)


def test_every_experiment_parameter_reruns_its_experiment_and_what_reads_it(snakemake, project, base):
    config = merged_config(project)  # the experiments' defaults, config.yaml, config/test.yaml
    checked = []
    for name in config["experiments"]:
        key = parameter_to_change(config.get(name) or {})
        if key is None:
            continue  # an experiment without parameters (environment)
        with edited(project, CONFIG, with_parameter(project, name, key, config[name][key] + 1)):
            after = check(snakemake, base, what=f"{CONFIG} {name}.{key}")
        assert name in after.scheduled
        checked.append(name)
    assert len(checked) >= len(config["experiments"]) - 1


def test_every_experiment_script_reruns_its_experiment(snakemake, project, base):
    config = merged_config(project)
    for name in config["experiments"]:
        with edited(project, f"experiments/{name}.py"):
            after = check(snakemake, base, [f"experiments/{name}.py"])
        assert name in after.scheduled


def test_every_source_file_reaches_what_reads_it(snakemake, project, base):
    """The article's modules, articlekit's files, the prose, the baseline,
    the release snapshot, the page settings and style: one file for each
    distinct set of rules that read files (the rest read alike)."""
    scripts = {f"experiments/{rule}.py" for rule, _ in base.jobs}  # each has a test of its own
    by_readers = defaultdict(list)
    for path in base.sources():
        if path not in scripts and not Path(path).is_absolute():
            by_readers[base.readers(path)].append(path)
    kinds = {"article/index.qmd", "baseline/published.yaml", "_quarto.yml"}
    assert kinds <= {p for paths in by_readers.values() for p in paths}, sorted(base.sources())
    assert any(p.startswith("releases/") for paths in by_readers.values() for p in paths), "no release snapshot read"
    for readers, paths in sorted(by_readers.items(), key=lambda item: sorted(item[1])):
        chosen = [p for p in paths if p in kinds or p.startswith("releases/")] or paths[:1]
        for path in chosen:
            with edited(project, path):
                check(snakemake, base, [path])


def command_stage(shell):
    """The package of the articlekit module a rule's command runs
    ("articlekit.review" for `python -m articlekit audit ...` and for
    `python -m articlekit.review.matrix ...`), None for an experiment's."""
    found = re.match(r"python -m (articlekit[\w.]*)(?: (\w+))?", shell or "")
    if not found:
        return None
    module, command = found.groups()
    if module == "articlekit":
        module = COMMANDS[command][0]
    return module.rpartition(".")[0]


def test_an_edit_to_a_review_module_reruns_only_review_rules(snakemake, project, base):
    """Issue 18: the audit's and the diff's code (the agreement between builds
    among it) is not the article's; an edit to any module of the review
    stage reruns rules of that stage (audit, diff, the matrix's) and never
    binds or renders the article again. A rule's stage is the package of
    the module its command runs; the modules are those the rules read."""
    stage = {job["rule"]: command_stage(job["shell"]) for job in base.jobs.values()}
    review = {rule for rule, package in stage.items() if package == "articlekit.review"}
    assert {"audit", "diff"} <= review and not review & {"bind", "html", "pdf"}
    modules = [p for p in base.sources() if p.startswith("articlekit/review/") and p.endswith(".py")]
    assert "articlekit/review/agreement.py" in modules, modules
    targets = {job["rule"] for job in base.jobs.values() if not job["runs"]}  # rule all
    for path in modules:
        with edited(project, path):
            after = check(snakemake, base, [path])
        rerun = after.scheduled - targets
        assert rerun <= review, f"editing {path} reruns {sorted(rerun - review)} too"


def test_a_new_release_reaches_the_diff(snakemake, project, base):
    (latest,) = [p for p in base.sources() if p.startswith("releases/")]
    snapshot = json.loads((project / latest).read_text(encoding="utf-8"))
    newer = project / "releases" / "a-newer-release" / "snapshot.json"
    newer.parent.mkdir()
    try:
        release = sealed({**snapshot, "released_at": "2999-01-01T00:00:00+00:00", "label": "a-newer-release"})
        newer.write_text(json.dumps(release), encoding="utf-8")  # sealed as a release is, or the diff refuses it
        after = check(snakemake, base, what=f"a newer release {newer.relative_to(project)}")
        assert "diff" in after.scheduled and "html" not in after.scheduled
    finally:
        shutil.rmtree(newer.parent)


def test_a_publishing_rule_reaches_the_diff(snakemake, project, base):
    """How the diff judges a key is the article's publishing section: a new
    error measure reruns the review (the diff, and the audit that reads the
    section too), never the article's pages."""
    text = (project / "config.yaml").read_text(encoding="utf-8")  # publishing: is config.yaml's alone
    declared = yaml.safe_load(text)["publishing"]["error_measures"]
    edit = text.replace(
        f"error_measures: {json.dumps(declared)}", f"error_measures: {json.dumps([*declared, '*.gap'])}"
    )
    assert edit != text, "config.yaml's publishing.error_measures is not written on one line"
    with edited(project, "config.yaml", edit):
        after = check(snakemake, base, ["config.yaml"], what="publishing.error_measures")
    assert "diff" in after.scheduled and not {"listings", "bind", "html"} & after.scheduled


def test_a_library_upgrade_reruns_exactly_what_imports_it(snakemake, project, base):
    config = merged_config(project)
    libraries = sorted({lib for entry in config["experiments"].values() for lib in (entry or {}).get("libraries", [])})
    assert libraries
    for library in libraries:
        after = check(snakemake, base, config=["versions={%s: \"99.0.0\"}" % library])
        users = {name for name, entry in config["experiments"].items() if library in (entry or {}).get("libraries", [])}
        assert users <= after.scheduled


def test_the_build_settings_reach_the_steps_that_read_them(snakemake, base):
    check(snakemake, base, config=["strict=true"])


def test_the_renderer_and_its_version_reach_the_pages(snakemake, base, tmp_path):
    after = check(snakemake, base, config=["renderer=quarto"])
    assert "html" in after.scheduled
    # a Pandoc that says it is another version (the render and the PDF run it)
    pandoc = tmp_path / "pandoc"
    pandoc.write_text("#!/bin/sh\necho 'pandoc 99.0'\n")
    pandoc.chmod(0o755)
    after = check(snakemake, base, env={"PYPANDOC_PANDOC": str(pandoc)}, what="a new Pandoc")
    assert {"html", "pdf"} <= after.scheduled


# ---- the page shows it ----------------------------------------------------------------


def bindings(work):
    return json.loads((work / "build/bindings.json").read_text(encoding="utf-8"))["bindings"]


@pytest.fixture
def own_build(server, project, tmp_path):
    """(Snakemake, its copy): a copy of the module's built project of this
    test's own (mtimes and Snakemake's metadata kept: up to date), for a case
    that builds an edit: the module's project is never built edited, so no
    second build has to put it back for the cases after it (nor fails to,
    leaving them a project that is not up to date, when this one fails)."""
    work = Path(shutil.copytree(project, tmp_path / "project", symlinks=True))
    logs = tmp_path / "logs"
    logs.mkdir()
    return Snakemake(server, work, logs), work


def test_an_edited_parameter_changes_the_article(own_build):
    """The issue's own case: one parameter of the scaling experiment, and the
    article then prints what it computed from it."""
    snakemake, project = own_build
    config = merged_config(project)
    before = bindings(project)
    key = first_integer_parameter(config["scaling"])
    with edited(project, CONFIG, with_parameter(project, "scaling", key, config["scaling"][key] // 2)):
        output = snakemake.run(*BUILT_WITH)
        assert "Params have changed since last execution" in output
        after = bindings(project)
        moved = {
            name: b["text"]
            for name, b in after.items()
            if b["key"].startswith("scaling.") and b["text"] != before.get(name, {}).get("text")
        }
        assert moved, "no printed scaling value changed"
        page = (project / "build/article.html").read_text(encoding="utf-8")
        for text in moved.values():
            assert text in page


def test_a_prose_edit_reaches_the_page(own_build):
    snakemake, project = own_build
    sentence = "This sentence was added after the first build."
    article = project / "article/index.qmd"
    with edited(project, "article/index.qmd", article.read_text(encoding="utf-8") + f"\n{sentence}\n"):
        snakemake.run(*BUILT_WITH)
        assert sentence in (project / "build/article.html").read_text(encoding="utf-8")
        assert sentence in (project / "build/article.md").read_text(encoding="utf-8")
