"""articlekit as an outsider installs it: a wheel and an sdist built from a
clean clone of this repository's HEAD (committed files only), the wheel
installed, not editable, in a fresh virtual environment without this
machine's site-packages, then `articlekit new` and the new article built
on the Pandoc route with that environment's Snakemake.

Every install the other tests use is editable, so none of them saw that
the wheel lacked articlekit/render/formats/ (pyproject.toml listed its
packages by hand): the first `snakemake` of a new article stopped with
"cannot import name 'formats' from 'articlekit.render'". Here it would fail
the build, with the output's tail in the message. The archives' files are
checked against `git ls-files articlekit` (tests/distribution.py), and
twine checks their metadata.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.distribution import problems, tracked

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent


def run(command, cwd, env=None, timeout=600):
    """Run command; on failure, fail the test with its output's tail (an ImportError shows there)."""
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, command))} in {cwd} failed (exit {done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-6000:]}"
        )
    return done


def outside(venv):
    """The environment of a shell that activated venv alone: none of this
    checkout on the path, nothing of the test run's own virtual environment."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "/usr/bin:/bin")])
    env["VIRTUAL_ENV"] = str(venv)
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """(wheel, sdist), built by `python -m build` (the sdist, then the wheel
    from it, in isolated build environments) from a clone of HEAD."""
    work = tmp_path_factory.mktemp("wheel")
    run(["git", "clone", "--quiet", "--no-hardlinks", ROOT, work / "source"], cwd=work)
    run([sys.executable, "-m", "build", "--outdir", work / "dist", work / "source"], cwd=work)
    (wheel,) = (work / "dist").glob("articlekit-*.whl")
    (sdist,) = (work / "dist").glob("articlekit-*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory):
    """A fresh virtual environment (no system site-packages) with the wheel installed, not editable."""
    wheel, _ = dist
    # in a folder whose name Pandoc and Snakemake would misread where they
    # meet the package's own files (its style sheet, its Snakefiles, the
    # PDF's header): a space splits a shell word, Pandoc decodes %XX in a
    # path it fetches and reads metadata as Markdown
    venv = tmp_path_factory.mktemp("venv") / "tools %20 -_x_ --y" / "env"
    venv.parent.mkdir()
    if shutil.which("uv"):
        run(["uv", "venv", "--quiet", "--python", sys.executable, venv], cwd=venv.parent)
        run(["uv", "pip", "install", "--quiet", "--python", venv / "bin/python", wheel], cwd=venv.parent, timeout=900)
    else:
        run([sys.executable, "-m", "venv", venv], cwd=venv.parent)
        run([venv / "bin/python", "-m", "pip", "install", "--quiet", wheel], cwd=venv.parent, timeout=900)
    return venv


def test_the_wheel_and_the_sdist_carry_every_tracked_file_and_nothing_else(dist):
    wheel, sdist = dist
    assert problems(wheel, ROOT) == [] and problems(sdist, ROOT) == []
    assert "articlekit/render/formats/__init__.py" in tracked(ROOT)
    done = run([sys.executable, "-m", "twine", "check", wheel, sdist], cwd=wheel.parent)
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_installed_wheel_builds_a_new_article_with_pandoc(dist, venv, tmp_path):
    env = outside(venv)
    python = venv / "bin/python"
    where = run([python, "-c", "import articlekit; print(articlekit.__file__)"], cwd=tmp_path, env=env).stdout.strip()
    assert Path(where).is_relative_to(venv), f"articlekit imported from {where}, not from the fresh environment"
    direct = run(
        [
            python,
            "-c",
            "import importlib.metadata as m; print(m.distribution('articlekit').read_text('direct_url.json'))",
        ],
        cwd=tmp_path,
        env=env,
    ).stdout
    assert "archive_info" in json.loads(direct), direct  # the wheel, not an editable install

    article = tmp_path / "my-article"
    run([venv / "bin/articlekit", "new", article], cwd=tmp_path, env=env)
    # the requirement names the articlekit that wrote it: this wheel, a file of this machine
    requirements = (article / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in requirements if not line.startswith("#")] == [f"articlekit @ {dist[0].as_uri()}"]

    run([venv / "bin/snakemake", "--cores", "2", "--config", "renderer=pandoc"], cwd=article, env=env, timeout=900)
    for output in ("article.html", "article.md", "article.pdf", "article.docx", "article.jats.zip", "audit.json"):
        assert (article / "build" / output).stat().st_size > 0, output
    assert 'src="data:image/' in (article / "build/article.html").read_text(encoding="utf-8")
    assert (article / "build/article.md").read_text(encoding="utf-8").startswith("# My article\n")
