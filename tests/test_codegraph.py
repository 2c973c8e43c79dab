"""A rule's code inputs are what its step runs, read from the imports: a
code edit reruns exactly the steps that run the edited file."""

import textwrap

import pytest

from articlekit import codegraph
from tests.workspace import PROJECT_ROOT


def files_of(*modules):
    return codegraph.package_files(*modules, article_root=PROJECT_ROOT)


def test_a_command_runs_its_module_what_it_imports_and_the_data_files_it_names():
    pdf = files_of("articlekit.pdf")
    assert {"articlekit/pdf.py", "articlekit/render.py", "articlekit/jsonio.py"} <= set(pdf)
    # named in pdf.py as strings: resources.files("articlekit") / "pdf_style.typ"
    assert {"articlekit/pdf_style.typ", "articlekit/pdf_prepare.lua", "articlekit/pdf_finish.lua"} <= set(pdf)
    assert "articlekit/preview.py" not in pdf and "articlekit/lint.py" not in pdf


def test_an_import_inside_a_function_counts():
    # values.published_envelope imports articlekit.baseline where it needs it
    assert "articlekit/baseline.py" in files_of("articlekit.values")


def test_the_package_itself_runs_before_any_of_its_modules():
    assert "articlekit/__init__.py" in files_of("articlekit.lint")


def test_an_experiment_runs_its_file_the_articles_modules_and_the_artifact_api():
    scaling = codegraph.experiment_files("scaling", article_root=PROJECT_ROOT)
    assert scaling == sorted([
        "articlekit/__init__.py", "articlekit/artifacts.py", "articlekit/footprint.py", "articlekit/jsonio.py",
        "articlekit/workfiles.py", "experiments/__init__.py", "experiments/attention.py", "experiments/scaling.py",
    ])


def test_installed_libraries_are_not_followed():
    # numpy and torch enter the rules as versions, never as files
    assert all(path.startswith(("articlekit/", "experiments/"))
               for path in codegraph.experiment_files("timing", article_root=PROJECT_ROOT))


@pytest.fixture
def article(tmp_path):
    """An article folder whose experiment imports a helper that imports another, relatively."""
    (tmp_path / "experiments/tools").mkdir(parents=True)
    files = {
        "experiments/__init__.py": "",
        "experiments/tools/__init__.py": "",
        "experiments/tools/shapes.py": "from .noise import jitter\nimport math\n",
        "experiments/tools/noise.py": "def jitter(): return 0\n",
        "experiments/unused.py": "",
        "experiments/fit.py": textwrap.dedent("""\
            import numpy as np
            from articlekit.artifacts import run_experiment
            from experiments.tools import shapes

            def run(params):
                return {}
        """),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_local_modules_are_followed_through_relative_imports(article):
    found = codegraph.experiment_files("fit", article_root=article)
    local = [path for path in found if path.startswith("experiments/")]
    assert local == ["experiments/__init__.py", "experiments/fit.py", "experiments/tools/__init__.py",
                     "experiments/tools/noise.py", "experiments/tools/shapes.py"]
    # the package is outside this article's folder: named by absolute path
    assert any(path.endswith("/articlekit/artifacts.py") and path.startswith("/") for path in found)


def test_an_experiment_without_its_file_names_the_fix(article):
    with pytest.raises(ValueError, match=r"experiment 'fig': no experiments/fig.py under .*; write it, or "
                                         r"remove 'fig' from experiments: in config.yaml"):
        codegraph.experiment_files("fig", article_root=article)


def test_an_unknown_articlekit_module_is_an_error():
    with pytest.raises(ValueError, match="no module 'articlekit.nowhere'"):
        files_of("articlekit.nowhere")
