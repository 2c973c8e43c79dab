"""The article's metadata, written once: its front matter.

Title, subtitle, authors, date, licence and version live in the front
matter of the article's .qmd, which every edition's renderer reads (Pandoc
and Quarto both). Everything else that names the article reads them from
here: the build's RO-Crate (articlekit/review/crate.py) and its
CITATION.cff (articlekit/review/citation_file.py), so that a title changed
in one place changes everywhere.

    ---
    title: "Attention from scratch"
    author:
      - name: Ada Lovelace
        orcid: 0000-0002-1825-0097
    license: CC-BY-4.0          # an SPDX identifier
    version: 1.2.0
    ---
"""

from dataclasses import dataclass, field

from articlekit.core.errors import ArticlekitError
from articlekit.core.sources import read_text
from articlekit.render.project import split_front_matter


@dataclass(frozen=True)
class Author:
    name: str
    orcid: str = ""
    affiliation: str = ""


@dataclass(frozen=True)
class ArticleMetadata:
    title: str
    subtitle: str = ""
    abstract: str = ""
    authors: tuple = field(default_factory=tuple)  # of Author
    license: str = ""
    version: str = ""
    date: str = ""
    keywords: tuple = field(default_factory=tuple)

    @property
    def description(self):
        return self.abstract or self.subtitle

    @property
    def author_names(self):
        return [a.name for a in self.authors]


class MetadataError(ArticlekitError):
    pass


def read_metadata(article):
    """The ArticleMetadata of the article at path `article`, from its front matter."""

    front, _ = split_front_matter(read_text(article), article)
    return from_front_matter(front, article)


def from_front_matter(front, where="the front matter"):
    title = front.get("title")
    if not isinstance(title, str) or not title.strip():
        raise MetadataError(f"{where}: the front matter has no title: add `title: \"...\"` between its --- lines")
    return ArticleMetadata(
        title=title.strip(),
        subtitle=str(front.get("subtitle") or "").strip(),
        abstract=str(front.get("abstract") or "").strip(),
        authors=tuple(authors(front.get("author"), where)),
        license=str(front.get("license") or "").strip(),
        version=str(front.get("version") or "").strip(),
        date=str(front.get("date") or "").strip(),
        keywords=tuple(str(k) for k in (front.get("keywords") or [])),
    )


def authors(value, where):
    """Authors as Pandoc and Quarto accept them: a name, or a list of names
    or of {name, orcid, affiliation(s)}."""
    if value is None:
        return []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            yield Author(item.strip())
        elif isinstance(item, dict) and isinstance(item.get("name"), (str, dict)):
            name = item["name"]
            if isinstance(name, dict):  # Quarto's {given, family}
                name = " ".join(str(name.get(part, "")) for part in ("given", "family")).strip()
            affiliation = item.get("affiliation") or item.get("affiliations") or ""
            if isinstance(affiliation, list):
                affiliation = "; ".join(a if isinstance(a, str) else str(a.get("name", "")) for a in affiliation)
            elif isinstance(affiliation, dict):
                affiliation = str(affiliation.get("name", ""))
            yield Author(name.strip(), str(item.get("orcid") or "").strip(), str(affiliation).strip())
        else:
            raise MetadataError(f"{where}: author: {item!r} is neither a name nor {{name: ...}}")
