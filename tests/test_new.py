"""`python -m articlekit new PATH`: the skeleton of a new article, from
the package's templates, written only into a new or empty folder. That it
builds as written is tests/test_examples.py's (slow)."""

import re
from pathlib import Path

import pytest
import yaml

from articlekit.skeleton import new
from articlekit.__main__ import main as articlekit_main
from articlekit.article.shortcodes import scan

ROOT = Path(__file__).resolve().parent.parent
SHAPE = {
    "Snakefile",
    "config.yaml",
    "environment.yml",
    "requirements.txt",
    # how to build it, and how to pin another articlekit than requirements.txt names
    "README.md",
    ".gitignore",
    "experiments/__init__.py",
    # the one Quarto project: the article's settings, what Quarto's own
    # `quarto render` and `quarto preview` run (here or in article/), and
    # the index page Quarto previews the folder from
    "_quarto.yml",
    "_quarto-author.yml",
    "index.md",
    "article/index.qmd",
    "article/.gitignore",
    "baseline/published.yaml",
    # the types and ranges of the experiment's parameters, checked before any job
    "config/schema.yaml",
    # Snakemake's workflow profile: a failed job's message, and its fix, once, at the end of the terminal
    "profiles/default/config.yaml",
    # GitHub Actions builds it on every push (tests/test_ci_workflow.py lints it)
    ".github/workflows/article.yml",
}


def test_it_writes_an_article_folder_of_the_agreed_shape(tmp_path):
    written = {str(p) for p in new.new_article(tmp_path / "a")}
    assert SHAPE <= written
    experiments = yaml.safe_load((tmp_path / "a/config.yaml").read_text())["experiments"]
    assert written - SHAPE == {f"experiments/{name}.py" for name in experiments}
    assert all((tmp_path / "a" / p).is_file() for p in written)


def test_the_snakefile_is_the_module_and_nothing_else():
    code = [
        line
        for line in (new.TEMPLATE / "Snakefile").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert code == [
        "import articlekit.workflow",
        'configfile: articlekit.workflow.checked_config("config.yaml")',
        "module articlekit:",
        "    snakefile:",
        "        articlekit.workflow.snakefile()",
        "    config:",
        "        config",
        "use rule * from articlekit",
    ]


def test_the_article_binds_a_value_checks_a_claim_and_shows_a_listing_and_a_figure(tmp_path):
    new.new_article(tmp_path / "a")
    text = (tmp_path / "a/article/index.qmd").read_text()
    shortcodes = [sc for sc in scan(text) if not sc.escaped]
    assert any(sc.name == "value" and "expect" not in sc.kwargs for sc in shortcodes)
    assert any("expect" in sc.kwargs for sc in shortcodes)
    assert any(sc.args[0].startswith("listings.") for sc in shortcodes if sc.name == "value")
    figures = yaml.safe_load((tmp_path / "a/config.yaml").read_text())["experiments"]["harmonic"]["figures"]
    assert all(f"](../{path})" in text for path in figures.values())


def test_the_title_date_and_python_are_filled_in(tmp_path):
    new.new_article(tmp_path / "my-first_article")
    folder = tmp_path / "my-first_article"
    assert 'title: "My first article"' in (folder / "article/index.qmd").read_text()
    baseline = yaml.safe_load((folder / "baseline/published.yaml").read_text())
    assert baseline["edition"]["title"] == "My first article"
    placeholders = [p for p in folder.rglob("*") if p.is_file() and re.search(r"__[A-Z]+__", p.read_text())]
    assert placeholders == []
    new.new_article(tmp_path / "b", title="Ten tenths")
    assert 'title: "Ten tenths"' in (tmp_path / "b/article/index.qmd").read_text()


def test_an_empty_folder_is_fine(tmp_path):
    (tmp_path / "a").mkdir()
    assert new.new_article(tmp_path / "a")


@pytest.mark.parametrize("existing", ["notes.txt", ".git"])
def test_a_folder_with_anything_in_it_is_refused_and_left_as_it_was(tmp_path, existing, capsys):
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / existing).write_text("mine")
    assert articlekit_main(["new", str(folder)]) == 1
    assert f"{folder} is not empty (it holds {existing}); name a new or empty folder" in capsys.readouterr().err
    assert [p.name for p in folder.iterdir()] == [existing]


def test_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "a").write_text("mine")
    assert articlekit_main(["new", str(tmp_path / "a")]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err


def test_it_says_what_it_made_and_the_next_command(tmp_path, capsys):
    folder = tmp_path / "my article"
    assert articlekit_main(["new", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "  article/index.qmd\n" in out and "  baseline/published.yaml\n" in out
    assert f"next: cd '{folder}' && snakemake --cores 2" in out


def test_every_template_file_ships_as_package_data():
    from tests.test_layout import shipped_data_files

    assert {source for source, _ in new.template_files()} <= shipped_data_files()


def test_the_skeleton_claims_a_timing_measured_with_articlekits_measure(tmp_path):
    """A measured value (estimate, low, high) from articlekit.experiment.measure,
    a claim on its estimate (judged on the interval), and its keys volatile."""
    new.new_article(tmp_path / "a")
    text = (tmp_path / "a/article/index.qmd").read_text()
    measured = [sc for sc in scan(text) if sc.name == "value" and sc.args[0].endswith(".estimate")]
    assert measured and all("expect" in sc.kwargs for sc in measured)
    prefix = measured[0].args[0].rsplit(".", 1)[0] + "."
    config = yaml.safe_load((tmp_path / "a/config.yaml").read_text())
    assert prefix in config["publishing"]["volatile"]
    experiment = prefix.split(".")[0]
    assert (
        "from articlekit.experiment.measure import compare" in (tmp_path / f"a/experiments/{experiment}.py").read_text()
    )
