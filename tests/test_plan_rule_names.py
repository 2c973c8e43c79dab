"""An experiment may not take a name that one of the workflow's rules has:
its rule takes the experiment's name, and Snakemake would stop in a
CreateRuleException that names articlekit's rule file, not the config.

Through the article a new author starts from (`python -m articlekit new`):
`snakemake -n` stops at the experiment's line in config.yaml, with the fix,
for the name of one of the module's rules and for the name of the rule
that combines another experiment's runs (NAME_combine).
"""

import re
import shutil
import subprocess
import sys

import pytest
import yaml

from articlekit.skeleton.new import new_article
from articlekit.workflow.plan import reserved_rule_names
from tests.workspace import PROJECT_ROOT, copy_environment

pytestmark = pytest.mark.workflow  # runs Snakemake, an experiment or a command (tests/tiers.py)


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory):
    folder = tmp_path_factory.mktemp("skeleton") / "my-article"
    new_article(folder)
    return folder


def dry_run(folder):
    """`snakemake -n` in folder, with this checkout's articlekit."""
    env = copy_environment(PROJECT_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "-n"], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )


def with_experiment(skeleton, tmp_path, name, runs=1):
    """A copy of the skeleton with experiments/NAME.py declared first under
    experiments: (and the skeleton's own experiment run `runs` times)."""
    folder = tmp_path / "my-article"
    shutil.copytree(skeleton, folder)
    config = folder / "config.yaml"
    text = config.read_text(encoding="utf-8")
    text = text.replace(
        "experiments:\n  harmonic:\n", f"experiments:\n  {name}: {{}}\n  harmonic:\n    runs: {runs}\n", 1
    )
    config.write_text(text, encoding="utf-8")
    # a copy of the skeleton's script, named for the new experiment (its result keys start with its name)
    script = (folder / "experiments/harmonic.py").read_text(encoding="utf-8")
    (folder / f"experiments/{name}.py").write_text(re.sub(r"\bharmonic\b", name, script), encoding="utf-8")
    assert name in yaml.safe_load(text)["experiments"]
    return folder


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


@pytest.mark.parametrize("name, runs", [("audit", 1), ("html", 1), ("harmonic_combine", 3)])
def test_an_experiment_named_like_a_rule_stops_the_plan_at_its_line_with_the_fix(skeleton, tmp_path, name, runs):
    folder = with_experiment(skeleton, tmp_path, name, runs)
    done = dry_run(folder)
    said = done.stdout + done.stderr
    assert done.returncode != 0
    line = line_of(folder / "config.yaml", f"  {name}: {{}}")
    assert f"config.yaml:{line}: experiments.{name}: {name!r} is the name of one of the workflow's rules" in said
    assert f"rename the experiment (experiments/{name}.py, its entry here and its section {name}:)" in said
    assert "CreateRuleException" not in said and "Traceback" not in said
    assert not (folder / "results").exists()


def test_a_combine_rule_is_reserved_only_for_an_experiment_with_runs():
    module = set(reserved_rule_names())
    assert {"all", "audit", "values", "bind", "html", "gfm", "pdf", "diff", "release", "manifest"} <= module
    assert set(reserved_rule_names({"timing": {"runs": 4}, "scaling": {}, "odd": None})) == module | {"timing_combine"}
