"""Citations: the article's bibliography, named once, cited in every edition.

The article names its references once, at the top of its _quarto.yml,
which both renderers read:

    bibliography: references.bib     # BibTeX, BibLaTeX or CSL JSON
    csl: ieee.csl                    # optional: Pandoc's default style otherwise

and cites with Pandoc's syntax ([@vaswani2017], @vaswani2017). Quarto
cites through its own citeproc where it renders (the page and its
markdown on the Quarto route); everywhere else Pandoc's citeproc does
(citation_args), with links from each citation to its entry (which JATS
writes as <xref ref-type="bibr"> to a <ref> with an <element-citation>).
The references go where the article puts `::: {#refs}` `:::`, else at
the end.

Each file is a file of the build's inputs like the figures: inside the
project, a regular file reached through no symbolic link, no larger than
MAX_BYTES; the renderers read the copy that was checked. A citation of a
key the bibliography lacks stops the render with its line (unknown_citation,
from citeproc's warning).
"""

import os
import re
import shutil
from pathlib import Path

from articlekit.core.sources import read_text
from articlekit.render.luafilters import CITED_FILTER
from articlekit.render.renderers import RenderError

MAX_BYTES = 1_000_000  # a bibliography of a few thousand entries
KEYS = ("bibliography", "csl")
SUFFIXES = {"bibliography": (".bib", ".bibtex", ".json", ".yaml", ".yml"), "csl": (".csl",)}


def named_files(config, project_dir):
    """{key: the path} for each of KEYS _quarto.yml's top level names,
    each checked to be a file of the project (CitationError otherwise)."""
    for fmt, options in (config.get("format") or {}).items():
        for key in KEYS:
            if isinstance(options, dict) and key in options:
                raise RenderError(
                    f"{project_dir / '_quarto.yml'}: format: {fmt}: sets {key}, which only that format would "
                    f"read: name it once at the top of _quarto.yml ({key}: ...), where every edition reads it"
                )
    found = {}
    for key in KEYS:
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise RenderError(
                f"{project_dir / '_quarto.yml'}: {key} must name one file (a path relative to this folder), "
                f"not {value!r}"
            )
        found[key] = checked_file(project_dir, key, value)
    if "csl" in found and "bibliography" not in found:
        raise RenderError(f"{project_dir / '_quarto.yml'}: csl names a style but no bibliography names references")
    return found


def checked_file(project_dir, key, name):
    where = f"{project_dir / '_quarto.yml'}: {key}: {name}"
    path = (project_dir / name).resolve()
    if os.path.isabs(name) or ".." in Path(name).parts or not path.is_relative_to(project_dir.resolve()):
        raise RenderError(f"{where} is not a file of the article's folder: name one beside _quarto.yml")
    if (project_dir / name).is_symlink() or not path.is_file():
        raise RenderError(f"{where} is not a regular file here (a missing file, or a symbolic link)")
    if not name.lower().endswith(SUFFIXES[key]):
        raise RenderError(f"{where}: a {key} is one of {', '.join(SUFFIXES[key])}")
    if path.stat().st_size > MAX_BYTES:
        raise RenderError(f"{where} is {path.stat().st_size:,} bytes, over the limit of {MAX_BYTES:,}")
    return path


def citation_args(config, project_dir, workdir):
    """Pandoc's arguments for citations ([] without a bibliography): citeproc
    over copies of the checked files in workdir, each citation a link, then
    cited.lua, which drops the copies' paths from the metadata."""
    files = named_files(config, project_dir)
    if not files:
        return []
    args = ["-M", "link-citations=true"]
    for key, path in files.items():
        copy = Path(workdir) / f"cited-{key}{path.suffix}"
        shutil.copyfile(path, copy)
        args += [f"--{key}", str(copy)]
    return [*args, "--citeproc", "--lua-filter", str(CITED_FILTER)]


def quarto_paths(config, project_dir):
    """The config with bibliography and csl as absolute paths of the checked
    files, as Quarto is handed them (it resolves them against the bound
    document's folder otherwise)."""
    files = named_files(config, project_dir)
    return {**config, **{key: str(path) for key, path in files.items()}}


_NOT_FOUND = re.compile(r"Citeproc: citation (\S+) not found")


def unknown_citation(stderr, article):
    """RenderError naming the first citation citeproc did not find, by its
    line in the article, or None."""
    found = _NOT_FOUND.search(stderr)
    if found is None:
        return None
    key = found.group(1)
    text = read_text(article)
    at = text.find(f"@{key}")
    where = f"{article}:{text.count(chr(10), 0, at) + 1}" if at >= 0 else str(article)
    return RenderError(
        f"{where}: the citation @{key} names no entry of the bibliography (_quarto.yml bibliography:): "
        "add the entry, or correct the key"
    )
