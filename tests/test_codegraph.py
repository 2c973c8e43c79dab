"""A rule's code inputs are what its step runs, read from the imports: a
code edit reruns exactly the steps that run the edited file."""

import textwrap

import pytest

from articlekit.workflow import codegraph
from tests.workspace import PROJECT_ROOT


def files_of(*modules):
    return codegraph.package_files(*modules, article_root=PROJECT_ROOT)


def test_a_command_runs_its_module_what_it_imports_and_the_data_files_it_names():
    pdf = files_of("articlekit.render.formats.pdf")
    assert {
        "articlekit/render/formats/pdf.py",
        "articlekit/render/page.py",
        "articlekit/core/jsonio.py",
        "articlekit/render/__init__.py",
    } <= set(pdf)
    # named in pdf.py as strings, from its own folder: HERE / "pdf_style.typ", "pdf_finish.lua"
    assert {
        "articlekit/render/formats/pdf_style.typ",
        "articlekit/render/formats/pdf_prepare.lua",
        "articlekit/render/formats/pdf_finish.lua",
    } <= set(pdf)
    assert "articlekit/render/preview.py" not in pdf and "articlekit/article/lint.py" not in pdf


def test_a_module_names_only_the_data_files_of_its_own_folder():
    # the page's filters and the extension, never the PDF's Typst style
    page = set(files_of("articlekit.render.page"))
    assert {
        "articlekit/render/filters/quarto_layout.lua",
        "articlekit/render/page.css",
        "articlekit/render/quarto/_extensions/value/value.lua",
    } <= page
    assert "articlekit/render/formats/pdf_style.typ" not in page
    assert not any(path.startswith("articlekit/review/") for path in page)


def test_an_import_inside_a_function_counts(tmp_path, monkeypatch):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/__init__.py").write_text("")
    (tmp_path / "experiments/late.py").write_text("def run(params):\n    from experiments import helper\n")
    (tmp_path / "experiments/helper.py").write_text("")
    assert "experiments/helper.py" in codegraph.experiment_files("late", article_root=tmp_path)


def test_the_package_itself_runs_before_any_of_its_modules():
    assert "articlekit/__init__.py" in files_of("articlekit.article.lint")


def test_an_experiment_runs_its_file_the_articles_modules_and_the_artifact_api():
    scaling = codegraph.experiment_files("scaling", article_root=PROJECT_ROOT)
    assert scaling == sorted(
        [
            "articlekit/__init__.py",
            "articlekit/core/__init__.py",
            "articlekit/core/errors.py",
            "articlekit/core/fmt.py",  # a figure's alt text prints its headline numbers (experiment/figure_text.py)
            "articlekit/core/jsonio.py",
            "articlekit/core/ledger.py",  # a combine step checks its runs against it (experiment/runs.py)
            "articlekit/core/log.py",  # what a step says goes through it (the errors, the progress lines)
            "articlekit/core/workfiles.py",
            "articlekit/experiment/__init__.py",
            "articlekit/experiment/artifacts.py",
            "articlekit/experiment/declared.py",
            "articlekit/experiment/figure_text.py",
            "articlekit/experiment/footprint.py",
            "articlekit/experiment/progress.py",
            "articlekit/experiment/runs.py",
            "articlekit/experiment/scratch.py",  # run() runs in a folder outside the project
            "experiments/__init__.py",
            "experiments/attention.py",
            "experiments/scaling.py",
        ]
    )


def test_installed_libraries_are_not_followed():
    # numpy and torch enter the rules as versions, never as files
    assert all(
        path.startswith(("articlekit/", "experiments/"))
        for path in codegraph.experiment_files("timing", article_root=PROJECT_ROOT)
    )


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
            from articlekit.experiment.artifacts import run_experiment
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
    assert local == [
        "experiments/__init__.py",
        "experiments/fit.py",
        "experiments/tools/__init__.py",
        "experiments/tools/noise.py",
        "experiments/tools/shapes.py",
    ]
    # the package is outside this article's folder: named by absolute path
    assert any(path.endswith("/articlekit/experiment/artifacts.py") and path.startswith("/") for path in found)


def test_the_libraries_an_experiment_imports_are_named_by_their_top_level_module(article):
    """What the version matrix compiles in each environment (matrixenv.warm_up):
    numpy from the experiment, yaml through articlekit's modules, never the
    standard library (math), the article's own modules or articlekit."""
    found = codegraph.imported_libraries(["experiments.fit"], article_root=article)
    assert "numpy" in found and "yaml" in found
    assert not {"math", "experiments", "articlekit", "__future__"} & set(found)
    # by the top-level name Python imports first, through the article's modules
    (article / "experiments/plain.py").write_text(
        "import numpy.linalg\nimport torch.nn.functional as F\nfrom experiments.tools.shapes import jitter\n"
    )
    assert codegraph.imported_libraries(["experiments.plain"], article_root=article) == ["numpy", "torch"]


def test_an_experiment_without_its_file_names_the_fix(article):
    with pytest.raises(
        ValueError,
        match=r"experiment 'fig': no experiments/fig.py under .*; write it, or "
        r"remove 'fig' from experiments: in config.yaml",
    ):
        codegraph.experiment_files("fig", article_root=article)


def test_an_unknown_articlekit_module_is_an_error():
    with pytest.raises(ValueError, match="no module 'articlekit.nowhere'"):
        files_of("articlekit.nowhere")
