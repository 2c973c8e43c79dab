"""A command started anywhere inside an article's project serves that
project (articlekit.core.project): `python -m articlekit preview` run in
article/, as a new author runs it after `cd article` for Quarto, serves
the article and says which project, instead of "no article at
article/index.qmd"; a path given on its command line is still read from
where it was started."""

import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from articlekit.core.jsonio import write_json
from articlekit.core.project import NoProject, project_folder
from tests.child_processes import popen
from tests.test_preview import python_env
from tests.test_render import make_article

pytestmark = pytest.mark.workflow  # runs Snakemake, an experiment or a command (tests/tiers.py)


def a_project(folder):
    _, values = make_article(folder / "article")
    write_json(folder / "build/values.json", values)
    (folder / "Snakefile").write_text("# the module\n", encoding="utf-8")
    (folder / "config.yaml").write_text("renderer: pandoc\n", encoding="utf-8")
    return folder


def test_the_project_is_the_first_folder_up_with_a_snakefile_and_a_config(tmp_path):
    project = a_project(tmp_path / "p")
    (project / "article/deeper").mkdir()
    assert project_folder(project / "article/deeper") == project == project_folder(project)
    (tmp_path / "lonely").mkdir()
    (tmp_path / "lonely/Snakefile").write_text("")  # a Snakefile alone is not an articlekit project
    with pytest.raises(NoProject, match=r"no articlekit project in .*lonely.*Snakefile and config\.yaml"):
        project_folder(tmp_path / "lonely")


def preview_in(folder, *args):
    proc = popen(
        [sys.executable, "-m", "articlekit", "preview", "--port", "0", "--interval", "0.05", *args],
        cwd=folder,
        env=python_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    first = proc.stdout.readline()
    return proc, first


def stopped(proc):
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=90)
    return proc.returncode, out


def test_articlekit_preview_started_in_article_serves_its_project(tmp_path):
    project = a_project(tmp_path / "p")
    proc, first = preview_in(project / "article")
    try:
        assert first.startswith("preview: http://127.0.0.1:"), first + proc.stdout.read(2000)
        assert f"(article/index.qmd of the project {project}, Ctrl-C stops)" in first
        page = ""
        for _ in range(600):
            with urllib.request.urlopen(first.split()[1], timeout=90) as response:
                page = response.read().decode("utf-8")
            if "Numbers in prose" in page:
                break
            time.sleep(0.1)
        assert "Numbers in prose" in page and 'class="bound-value"' in page
    finally:
        status, out = stopped(proc)
    assert status == 0, out
    assert (project / "build/preview/article.html").is_file()  # the project's build/, not article/build/
    assert not (project / "article/build").exists()


def test_a_path_given_to_the_preview_is_read_from_where_it_was_started(tmp_path):
    project = a_project(tmp_path / "p")
    proc, first = preview_in(project / "article", "--values", "missing.json")
    status, out = stopped(proc) if proc.poll() is None else (proc.wait(), proc.stdout.read())
    said = first + out
    assert "no values at article/missing.json" in said, said
