"""The scripts a Quarto user's `quarto render` runs around each render
(articlekit.render.quarto_hooks), without Quarto: they read what Quarto
hands project scripts ($QUARTO_PROJECT_INPUT_FILES, ..._OUTPUT_FILES, the
project's folder as the working directory). With the real Quarto:
tests/test_quarto.py."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parent.parent


def hook(name, project, env):
    return subprocess.run([sys.executable, "-m", "articlekit", "quarto", name], cwd=project / "article",
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=120)


def article_project(tmp_path):
    (tmp_path / "article").mkdir()
    (tmp_path / "Snakefile").write_text("# the module\n")
    (tmp_path / "article/index.qmd").write_text("A value: {{< value k.x >}}, and {{{< value k.y >}}} shown as is.\n")
    (tmp_path / "article/example.qmd").write_text("Another document.\n")
    return tmp_path


def test_the_pre_render_refuses_a_document_the_build_does_not_bind(tmp_path):
    project = article_project(tmp_path)
    done = hook("pre-render", project, {"QUARTO_PROJECT_INPUT_FILES": "example.qmd"})
    assert done.returncode == 1
    assert "example.qmd is not the article this project builds (article/index.qmd" in done.stderr
    assert "quarto render index.qmd" in done.stderr
    assert not (project / "article/_extensions").exists()  # refused before it installed or built anything


def test_the_post_render_removes_a_page_of_raw_shortcodes_and_says_what_to_run(tmp_path):
    project = article_project(tmp_path)
    out = project / "build/quarto"
    out.mkdir(parents=True)
    (out / "index.html").write_text("<p>A value: {{&lt; value k.x &gt;}}, and {{&lt; value k.y &gt;}}</p>")
    done = hook("post-render", project, {"QUARTO_PROJECT_OUTPUT_FILES": "../build/quarto/index.html"})
    assert done.returncode == 1
    assert "1 shortcode(s) were not resolved" in done.stderr and "the value extension did not run" in done.stderr
    assert "_quarto-author.yml" in done.stderr
    assert not (out / "index.html").exists()


def test_the_post_render_keeps_a_bound_page(tmp_path):
    project = article_project(tmp_path)
    out = project / "build/quarto"
    out.mkdir(parents=True)
    (out / "index.html").write_text("<p>A value: 42, and {{&lt; value k.y &gt;}} shown as is.</p>")  # escaped one
    done = hook("post-render", project, {"QUARTO_PROJECT_OUTPUT_FILES": "../build/quarto/index.html"})
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").exists()
