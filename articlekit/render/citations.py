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

A field of a BibTeX bibliography may print a value the build made, bound
as the prose binds it, so that software is cited with the version the
build ran (FORCE11's software citation principles, JATS4R's):

    @software{numpy-software,
      title   = {NumPy},
      author  = {{The NumPy community}},
      version = {{{< value environment.numpy >}}},
      url     = {https://numpy.org},
    }

(the field's own braces around the shortcode: there is no escaped
shortcode in a bibliography). Wherever a renderer is handed the
bibliography, it reads a bound copy (bound_bibliography): each
`{{< value KEY >}}` (fmt= allowed) replaced by the value's printed text,
the `text` that bind wrote into build/bindings.json for the prose (or, for
a fmt the prose does not print, core.fmt.format_value of the same value),
escaped for BibTeX so that it is the field's text and nothing else. The
bindings hold the values the article prints: a key they lack is refused
with the bibliography's file:line, as is any other shortcode, and a value
in a CSL JSON or YAML bibliography (whose strings citeproc reads as
markup: write the entry in BibTeX). Pandoc's citeproc reads the copy in
its work folder (citation_args), Quarto a copy under build/ (quarto_paths).
"""

import os
import re
import shutil
from pathlib import Path

from articlekit.article.shortcodes import OPEN, lookup_id, lookup_parts, parse_inner
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import write_text_atomic
from articlekit.core.text import md_code
from articlekit.core.sources import read_text
from articlekit.render.luafilters import CITED_FILTER
from articlekit.render.renderers import RenderError, pandoc_file

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


# --- values in the bibliography -------------------------------------------------

BIBTEX = (".bib", ".bibtex")  # the bibliographies a value can be bound in

# A shortcode as the bibliography writes it: on one line, a quoted argument
# may hold ">}}".
_SHORTCODE = re.compile(r"""\{\{<((?:"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[^"'>\n]|>(?!\}\}))*)>\}\}""")

# Each character BibTeX or the LaTeX in its fields would read as markup
# (a group, a comment, math, a space, a quote made curly), written as the
# character itself (Pandoc's BibTeX reader); a hyphen before another too
# (-- and --- are dashes), and no other: a date (2025-01-31) stays a date.
_BIBTEX_TEXT = {
    "\\": "\\textbackslash{}",
    "{": "\\{",
    "}": "\\}",
    "%": "\\%",
    "#": "\\#",
    "&": "\\&",
    "$": "\\$",
    "_": "\\_",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    "'": "\\textquotesingle{}",
    "`": "\\`{}",
    '"': "\\textquotedbl{}",
}


def bibtex_text(text):
    """TEXT as a BibTeX field prints it, character for character: each
    special escaped, white space (a line break too) one space."""
    escaped = "".join(_BIBTEX_TEXT.get(c, c) for c in " ".join(str(text).split()))
    return re.sub(r"-(?=-)", "-{}", escaped)


def printed_text(document, key, fmt):
    """A value's text as the article prints it: bind's `text` for the
    lookup id (articlekit.article.bind), else the same value formatted
    with fmt by core.fmt (the prose prints it with another fmt). None when
    the bindings hold no value KEY."""
    bindings = (document or {}).get("bindings") or {}
    found = bindings.get(lookup_id(key, fmt))
    if found is not None:
        return found["text"]
    for binding in bindings.values():
        if binding["key"] == lookup_parts(key)[0]:
            return format_value(binding["raw"], fmt)
    return None


def holds_shortcodes(path):
    return OPEN.encode() in Path(path).read_bytes()


def bound_bibliography(path, document, unknown=None):
    """The text of the bibliography at path with each {{< value KEY >}}
    replaced by the value's printed text (printed_text), escaped for
    BibTeX. RenderError at the bibliography's line for any other
    shortcode, a key the bindings `document` lack, or a value in a
    bibliography that is not BibTeX. unknown: the text to print instead
    of a key the bindings lack (a preview's mark), not refused then."""
    path = Path(path)
    text = read_text(path)
    out, at = [], 0
    for start in [m.start() for m in re.finditer(re.escape(OPEN), text)]:
        if start < at:
            continue
        where = f"{path}:{text.count(chr(10), 0, start) + 1}"
        found = _SHORTCODE.match(text, start)
        if found is None:
            raise RenderError(f"{where}: a shortcode opens here and is not closed on its line: end it with >}}}}")
        raw = found.group(0)
        if not path.name.lower().endswith(BIBTEX):
            raise RenderError(
                f"{where}: {raw}: a value is bound into a BibTeX bibliography (.bib) only: citeproc reads "
                "the strings of CSL JSON and YAML as markup; write the entry in BibTeX"
            )
        try:
            name, args, kwargs, _, _ = parse_inner(found.group(1))
        except ValueError as exc:
            raise RenderError(f"{where}: {raw}: {exc}") from None
        if name != "value" or len(args) != 1 or set(kwargs) - {"fmt"}:
            raise RenderError(
                f"{where}: {raw}: a bibliography prints a value only, as {{{{< value KEY >}}}} "
                '(fmt="..." allowed) in a field\'s braces: version = {{{{{{< value KEY >}}}}}}'
            )
        try:
            shown = printed_text(document, args[0], kwargs.get("fmt", ""))
        except ValueError as exc:  # FormatError: a fmt the value does not take
            raise RenderError(f"{where}: {raw}: {exc}") from None
        if shown is None and unknown is None:
            raise RenderError(
                f"{where}: {raw}: the bindings (build/bindings.json) hold no value {args[0]!r}. A "
                "bibliography prints the values the article prints: print it in the article too "
                f"(its colophon, say: {{{{< value {args[0]} >}}}}, where its provenance row links "
                "from) and build again, or correct the key"
            )
        out += [text[at:start], bibtex_text(unknown if shown is None else shown)]
        at = found.end()
    return "".join(out) + text[at:]


def bound_files(config, project_dir, document, folder, prefix="cited-", unknown=None):
    """{key: path} of each file the renderers read: a copy in folder of each
    checked file (named_files), the bibliography bound (bound_bibliography,
    and its `unknown`), written only when it changed (a Quarto preview
    watches what it reads)."""
    copies = {}
    for key, path in named_files(config, project_dir).items():
        copy = Path(folder) / f"{prefix}{key}{path.suffix}"
        if key == "bibliography" and holds_shortcodes(path):
            text = bound_bibliography(path, document, unknown)
            if not copy.is_file() or copy.read_bytes() != text.encode("utf-8"):
                write_text_atomic(copy, text)
        elif not copy.is_file() or copy.read_bytes() != path.read_bytes():
            shutil.copyfile(path, copy)
        copies[key] = copy
    return copies


def citation_args(config, project_dir, workdir, document=None):
    """Pandoc's arguments for citations ([] without a bibliography): citeproc
    over copies of the checked files in workdir (the bibliography bound by
    the bindings `document`), each citation a link, then cited.lua, which
    drops the copies' paths from the metadata."""
    files = bound_files(config, project_dir, document, workdir)
    if not files:
        return []
    args = ["-M", "link-citations=true"]
    for key, copy in files.items():
        args += [f"--{key}", pandoc_file(copy)]
    return [*args, "--citeproc", "--lua-filter", str(CITED_FILTER)]


def quarto_paths(config, project_dir, document=None, folder=None, unknown=None):
    """The config with bibliography and csl as absolute paths, as Quarto is
    handed them (it resolves them against the bound document's folder
    otherwise): the csl checked, the bibliography's bound copy in folder
    (under build/, never the author's file, whose shortcodes Quarto's
    citeproc would print). Without a folder: the checked files themselves,
    for a bibliography with no shortcode."""
    files = named_files(config, project_dir)
    if folder is not None:
        files = bound_files(config, project_dir, document, folder, unknown=unknown)
    elif "bibliography" in files and holds_shortcodes(files["bibliography"]):
        raise RenderError(f"{files['bibliography']}: its values are bound for Quarto in a copy: name its folder")
    # as Pandoc's metadata, which is Markdown, reads them back whole (md_code):
    # a folder named `x-_ab_` (a work folder's random name once) is otherwise
    # x- and an emphasised ab, and Pandoc looks for x-ab; `--` a dash, `...` an
    # ellipsis, two spaces one; and Pandoc decodes a %XX in the path it then
    # reads (pandoc_file)
    return {**config, **{key: md_code(pandoc_file(Path(path).resolve())) for key, path in files.items()}}


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
