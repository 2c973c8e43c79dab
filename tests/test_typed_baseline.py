"""The baseline the Quarto benchmarks compare against (benchmarks/build.py's
typed_article, also benchmarks/quarto_preview.py's `typed`): the article's
text with its values typed in, under the article's own page options read
from wherever the project keeps them. A baseline that lost them (Quarto's
defaults: no embedded resources, no table of contents) would be a smaller
page, and every ratio against it flattering."""

import shutil

import yaml

from benchmarks.build import typed_article
from tests.workspace import PROJECT_ROOT


def built_copy(tmp_path):
    """What typed_article reads of a built copy: the settings, the article's
    folder, build/article.md and the figures."""
    work = tmp_path / "work"
    shutil.copytree(PROJECT_ROOT / "article", work / "article")
    shutil.copy(PROJECT_ROOT / "_quarto.yml", work / "_quarto.yml")
    (work / "build").mkdir()
    (work / "build/article.md").write_text("# The article\n\n![a figure](../figures/a.svg)\n", encoding="utf-8")
    (work / "figures").mkdir()
    (work / "figures/a.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n", encoding="utf-8")
    return work


def test_the_typed_text_renders_under_the_articles_page_options(tmp_path):
    folder = typed_article(built_copy(tmp_path), tmp_path / "typed", ("html", "gfm"))
    config = yaml.safe_load((folder / "_quarto.yml").read_text(encoding="utf-8"))
    article = yaml.safe_load((PROJECT_ROOT / "_quarto.yml").read_text(encoding="utf-8"))["format"]["html"]
    html = config["format"]["html"]
    for option in ("embed-resources", "toc", "html-math-method"):
        assert html[option] == article[option], option
    # its style sheet beside it, named as its _quarto.yml names it
    assert html["css"] == ["style.css"] and (folder / "style.css").is_file()
    # no hooks, no render list, and the citations written out already
    assert not {"project", "profile", "bibliography"} & set(config)
    assert (folder / "index.qmd").read_text(encoding="utf-8").startswith("# The article")
    assert (folder / "../figures/a.svg").resolve().is_file()  # where the text's links find it
