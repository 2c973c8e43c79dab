"""The baseline the Quarto benchmarks compare against (benchmarks/build.py's
typed_article, also benchmarks/quarto_preview.py's `typed`): the article's
text with its values typed in, under the article's own page options read
from wherever the project keeps them. A baseline that lost them (Quarto's
defaults: no embedded resources, no table of contents) would be a smaller
page, and every ratio against it flattering."""

import json
import shutil

import pytest
import yaml

from benchmarks.build import typed_article
from tests.workspace import PROJECT_ROOT


# What bind writes of one value (articlekit/article/bound.py) and its record
BOUND = (
    "# The article\n\n"
    "PyTorch [2\\.13\\.0](#v-environment-torch \"environment.torch = 2.13.0 (experiments/environment.py)\")"
    "{#at-v-environment-torch .bound-value}[]{.claim-checked data-claim=\"environment.torch\"}, "
    "as [@numpy-software] and @fig-a say.\n\n![a figure](../figures/a.svg){#fig-a}\n"
)
BINDING = {"key": "environment.torch", "fmt": "", "text": "2.13.0", "raw": "2.13.0"}


def built_copy(tmp_path):
    """What typed_article reads of a built copy: the settings, the article's
    folder (its bibliography), bind's bound document and bindings, the
    markdown edition and the figures."""
    work = tmp_path / "work"
    shutil.copytree(PROJECT_ROOT / "article", work / "article")
    shutil.copy(PROJECT_ROOT / "_quarto.yml", work / "_quarto.yml")
    (work / "build").mkdir()
    (work / "build/article.md").write_text("# The article\n\n![a figure](../figures/a.svg)\n", encoding="utf-8")
    (work / "build/article.bound.md").write_text(BOUND, encoding="utf-8")
    bindings = {key: dict(BINDING, key=key, raw=version) for key, version in VERSIONS.items()}
    (work / "build/bindings.json").write_text(json.dumps({"bindings": bindings}), encoding="utf-8")
    (work / "figures").mkdir()
    (work / "figures/a.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n", encoding="utf-8")
    return work


# the values article/references.bib binds
VERSIONS = {"environment.torch": "2.13.0", "environment.numpy": "2.3.1"}


def page_options(folder):
    config = yaml.safe_load((folder / "_quarto.yml").read_text(encoding="utf-8"))
    return config, config["format"]["html"]


@pytest.mark.parametrize("text", ["source", "markdown"])
def test_the_typed_text_renders_under_the_articles_page_options(tmp_path, text):
    folder = typed_article(built_copy(tmp_path), tmp_path / "typed", ("html", "gfm"), text)
    config, html = page_options(folder)
    article = yaml.safe_load((PROJECT_ROOT / "_quarto.yml").read_text(encoding="utf-8"))["format"]["html"]
    for option in ("embed-resources", "toc", "html-math-method"):
        assert html[option] == article[option], option
    # its style sheet beside it, named as its _quarto.yml names it
    assert html["css"] == ["style.css"] and (folder / "style.css").is_file()
    assert not {"project", "profile"} & set(config)  # no hooks, no render list
    assert (folder / "../figures/a.svg").resolve().is_file()  # where the text's links find it


def test_the_typed_source_is_the_authors_text_with_the_values_typed_in(tmp_path):
    """Quarto resolves its citations and cross-references, as for any
    Quarto author: the bibliography, its values bound, beside it."""
    folder = typed_article(built_copy(tmp_path), tmp_path / "typed", ("html",))
    text = (folder / "index.qmd").read_text(encoding="utf-8")
    assert text == "# The article\n\nPyTorch 2\\.13\\.0, as [@numpy-software] and @fig-a say.\n\n" + (
        "![a figure](../figures/a.svg){#fig-a}\n"
    )
    config, _ = page_options(folder)
    bibliography = (folder / config["bibliography"]).read_text(encoding="utf-8")
    assert "{{<" not in bibliography and "version = {2.3.1}" in bibliography


def test_the_typed_markdown_is_the_markdown_edition_its_citations_written_out(tmp_path):
    folder = typed_article(built_copy(tmp_path), tmp_path / "typed", ("html",), "markdown")
    assert "bibliography" not in page_options(folder)[0]
    assert (folder / "index.qmd").read_text(encoding="utf-8").startswith("# The article\n\n![a figure]")
