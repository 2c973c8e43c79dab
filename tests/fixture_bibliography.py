"""The article's bibliography beside a fixture article.

The article's references.bib prints values its article binds (the versions
of the software it cites: {{< value environment.numpy >}}), which a fixture
article, bound from other values, has no binding for; a render would stop
on them (articlekit.render.citations). The fixture's copy holds a fixed
text in their place.
"""

import re
import shutil

VALUE = re.compile(r"\{\{<.*?>\}\}")


def copy_article_file(source, target, version="0.0.0"):
    """Copy one of the article's files beside a fixture article; its
    bibliography with each value it binds written as `version`."""
    if source.suffix != ".bib":
        return shutil.copy(source, target)
    target.write_text(VALUE.sub(version, source.read_text(encoding="utf-8")), encoding="utf-8")
    return target
