"""An experiment lives in one place: adding one touches three files.

Its script (experiments/NAME.py: run(), its PARAMETERS with their defaults
and meanings, its RESULT_KEYS), its entry under experiments: in
config.yaml (one rule), and the sentence of the article that binds one of
its values. Nothing else: no parameter section in config.yaml, no schema
in config/schema.yaml, no copy in config/test.yaml, no hand-written line in
docs/keys.md. Written into a copy of the project, the three edits give a
plan that validates, an experiment that runs with its declared defaults,
keys that the reference documents (`python -m articlekit keys`), and, on a
copy of the shared build, an article that binds the value, rerunning only
what the new experiment feeds.
"""

import json
import re
import shutil
import subprocess

import pytest

from tests.shared_build import copy_of_test_build
from tests.workspace import PROJECT_ROOT, TEST_BUILD, copy_environment, copy_project, project_files
from tests import snakemake_fork

NAME = "ratio"

SCRIPT = '''\
"""The golden ratio as a continued fraction, 1 + 1/(1 + 1/(1 + ...)): a
new experiment, added in three files."""

from articlekit.experiment.artifacts import run_experiment

PARAMETERS = {
    "terms": {"type": "integer", "minimum": 1, "default": 40, "description": "terms of the continued fraction"},
}
RESULT_KEYS = {
    "ratio.value": "the continued fraction to `terms` terms",
    "ratio.error": "|value - (1 + sqrt 5) / 2|, in absolute terms",
}


def run(params):
    x = 1.0
    for _ in range(params["terms"]):
        x = 1.0 + 1.0 / x
    return {"value": x, "error": abs(x - (1 + 5**0.5) / 2)}


if __name__ == "__main__":
    run_experiment("ratio", run)
'''

ENTRY = f"  {NAME}: {{mem_mb: 200, runtime: 1}}\n"
SENTENCE = (
    'The golden ratio, as a continued fraction, comes to {{< value ratio.value fmt=".6f" >}} '
    'and misses it by {{< value ratio.error fmt=".1e" expect="< 1e-12" >}}.\n\n'
)


def add_the_experiment(project):
    """The three edits, and nothing else: returns the files they touched."""
    (project / f"experiments/{NAME}.py").write_text(SCRIPT, encoding="utf-8")
    config = project / "config.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nexperiments:\n" in text
    config.write_text(text.replace("\nexperiments:\n", f"\nexperiments:\n{ENTRY}", 1), encoding="utf-8")
    article = project / "article/index.qmd"
    text = article.read_text(encoding="utf-8")
    assert "\n## Colophon\n" in text
    article.write_text(text.replace("\n## Colophon\n", f"\n{SENTENCE}## Colophon\n", 1), encoding="utf-8")
    return {f"experiments/{NAME}.py", "config.yaml", "article/index.qmd"}


def changed(before, after):
    return {path for path in {*before, *after} if before.get(path) != after.get(path)}


def run(project, *args, timeout=600):
    """ARGS in project; `snakemake` forked from one that has imported it
    (tests/snakemake_fork.py: both streams in .stdout)."""
    if args[0] == "snakemake":
        return snakemake_fork.run(project, args[1:], copy_environment(project), timeout)
    return subprocess.run(
        [*args], cwd=project, env=copy_environment(project), capture_output=True, text=True, timeout=timeout
    )


def fast_snakemake(project, *args):
    """TEST_BUILD's command (config/test.yaml, Pandoc, strict=false), targets first."""
    command = list(TEST_BUILD)
    return run(project, *command[:3], *args, *command[3:])


@pytest.mark.workflow
def test_a_new_experiment_in_three_files_plans_runs_and_is_documented(tmp_path):
    project = copy_project(tmp_path / "project")
    before = {path: (project / path).read_bytes() for path in project_files(PROJECT_ROOT)}
    touched = add_the_experiment(project)
    after = {path: (project / path).read_bytes() for path in [*project_files(PROJECT_ROOT), *touched]}
    assert changed(before, after) == touched == {f"experiments/{NAME}.py", "config.yaml", "article/index.qmd"}

    plan = fast_snakemake(project, "--dry-run")
    assert plan.returncode == 0, (plan.stdout + plan.stderr)[-3000:]
    assert re.search(rf"^rule {NAME}:", plan.stdout, re.M), plan.stdout[-3000:]

    ran = fast_snakemake(project, f"results/{NAME}.json")
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-3000:]
    jobs = set(re.findall(r"^(?:local)?rule (\w+):", ran.stdout + ran.stderr, re.M))
    assert jobs == {NAME}, jobs  # only the new experiment ran
    artifact = json.loads((project / f"results/{NAME}.json").read_text(encoding="utf-8"))
    assert artifact["params"] == {"terms": 40}  # its declared default: config.yaml sets none
    assert abs(artifact["values"]["value"] - 1.618033988749895) < 1e-12

    reference = run(project, "python", "-m", "articlekit", "keys")
    assert reference.returncode == 0, reference.stderr
    assert f"## {NAME} — `experiments/{NAME}.py`" in reference.stdout
    assert "| `terms` | `40` | integer ≥ 1 | terms of the continued fraction |" in reference.stdout
    assert "| `ratio.value` | the continued fraction to `terms` terms |" in reference.stdout

    override = tmp_path / "more-terms.yaml"
    override.write_text(f"{NAME}:\n  terms: 0\n", encoding="utf-8")
    refused = run(project, "snakemake", "--dry-run", "--configfile", "config/test.yaml", str(override))
    assert refused.returncode != 0
    assert f"{override}:2: {NAME}.terms: 0 is less than the minimum of 1 (terms of the continued fraction)" in (
        refused.stdout + refused.stderr
    )


@pytest.mark.e2e
def test_the_article_binds_the_new_experiment_rerunning_only_what_it_feeds(tmp_path_factory):
    built = copy_of_test_build(tmp_path_factory).project
    project = tmp_path_factory.mktemp("new-experiment") / "project"
    shutil.copytree(built, project, symlinks=True)
    add_the_experiment(project)

    bound = fast_snakemake(project, "build/bindings.json")
    assert bound.returncode == 0, (bound.stdout + bound.stderr)[-3000:]
    jobs = set(re.findall(r"^(?:local)?rule (\w+):", bound.stdout + bound.stderr, re.M))
    assert NAME in jobs and "bind" in jobs
    others = {"environment", "scaling", "example", "multihead", "parity", "mask_convention", "timing", "errors"}
    assert not jobs & others, jobs  # no other experiment reran
    bindings = json.loads((project / "build/bindings.json").read_text(encoding="utf-8"))["bindings"]
    ours = {b["key"]: b for b in bindings.values() if b["key"].startswith(f"{NAME}.")}
    assert ours[f"{NAME}.value"]["text"] == "1.618034"
    assert ours[f"{NAME}.error"]["claim"]["holds"] is True, ours[f"{NAME}.error"]
