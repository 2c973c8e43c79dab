"""The article's files beside a fixture article: its settings (the
project's _quarto.yml, as the fixture folder's own) and its bibliography.

The article's references.bib prints values its article binds (the versions
of the software it cites: {{< value environment.numpy >}}), which a fixture
article, bound from other values, has no binding for; a render would stop
on them (articlekit.render.citations). The fixture's copy holds a fixed
text in their place.
"""

import os
import re
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

VALUE = re.compile(r"\{\{<.*?>\}\}")


def copy_article_file(source, target, version="0.0.0"):
    """Copy one of the article's files beside a fixture article; its
    bibliography with each value it binds written as `version`."""
    if source.suffix != ".bib":
        return shutil.copy(source, target)
    target.write_text(VALUE.sub(version, source.read_text(encoding="utf-8")), encoding="utf-8")
    return target


def copy_article_files(folder, names=("style.css", "references.bib"), version="0.0.0"):
    """The article's settings and the files they name, beside a fixture
    article in folder: the project's _quarto.yml as the folder's own (its
    render list and profile dropped, its paths made the folder's), and
    each of names copied from article/ (copy_article_file)."""
    config = yaml.safe_load((ROOT / "_quarto.yml").read_text(encoding="utf-8"))
    config.pop("profile", None)
    config["project"] = {"type": "default"}

    def moved(path):
        return os.path.relpath(ROOT / path, ROOT / "article")

    if "bibliography" in config:
        config["bibliography"] = moved(config["bibliography"])
    html = config["format"]["html"]
    if "css" in html:
        html["css"] = [moved(sheet) for sheet in ([html["css"]] if isinstance(html["css"], str) else html["css"])]
    (folder / "_quarto.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    for name in names:
        copy_article_file(ROOT / "article" / name, folder / name, version)
