"""The project's settings as the renderers read them: the article's front
matter (split_front_matter; the keys Pandoc renders, PANDOC_METADATA; the
ones that would make Quarto read a file, refused: refuse_front_matter_files),
the folder of _quarto.yml and its settings (project_root, project_config,
project_options, quarto_options), and the style sheets a page embeds
(PAGE_CSS, the project's, checked to load nothing: check_style_sheets).
"""

import os
import re
from pathlib import Path

import yaml

from articlekit.core.css import fetched_at, loads_nothing
from articlekit.core.sources import SourceError, load_yaml, parse_yaml, read_text, yaml_error_message
from articlekit.render.citations import quarto_paths
from articlekit.render.renderers import RenderError, pandoc_file


# Front matter Pandoc understands; everything else (format, execute, filters,
# jupyter, ...) is Quarto's and is dropped on the Pandoc path.
PANDOC_METADATA = {"title", "subtitle", "author", "date", "abstract", "lang", "keywords", "description", "toc-title"}


def split_front_matter(text, path="the front matter"):
    """-> (front matter dict, body). The body keeps its line count so
    Pandoc's messages still point at the right lines. The front matter is
    read strictly (articlekit.core.sources); SourceError names `path` and the
    line of a key given twice or of a YAML error."""
    if text.startswith("---\n"):
        end = re.search(r"^(---|\.\.\.)\s*$", text[4:], re.M)
        if end:
            try:
                front = parse_yaml(text[4 : 4 + end.start()], path, first_line=2).data or {}
            except yaml.YAMLError as exc:
                raise SourceError(yaml_error_message(exc, path)) from None
            body_start = 4 + end.end()
            return front, "\n" * text.count("\n", 0, body_start) + text[body_start:]
    return {}, text


def project_root(article_dir):
    """The folder holding _quarto.yml (the article's own folder if none)."""
    return next((f for f in [article_dir, *article_dir.parents] if (f / "_quarto.yml").exists()), article_dir)


def project_config(project_dir):
    """The project's _quarto.yml as a dict ({} without one)."""
    path = project_dir / "_quarto.yml"
    if not path.exists():
        return {}
    config = load_yaml(path) or {}
    return config if isinstance(config, dict) else {}


def project_options(project_dir):
    """The html format options of the project's _quarto.yml: what Pandoc
    needs, and what the page is checked against."""
    html = (project_config(project_dir).get("format") or {}).get("html") or {}
    return html if isinstance(html, dict) else {}


def quarto_options(project_dir, article_dir, document=None, folder=None, unknown=None):
    """What Quarto is handed as --metadata-file: _quarto.yml's settings
    (its project: aside), so that a render applies them even where Quarto
    does not read the project (a path with a folder starting with "."),
    and articlekit's style sheet before the article's. The bibliography is
    its copy in `folder` (under build/), bound by the bindings `document`
    (articlekit.render.citations.quarto_paths, with its `unknown`).

    Where Quarto does read the project, it merges the two (checked with
    1.9.38): a list such as css is joined without repeats, a top-level
    css before the format's. So the format's css keeps its own strings
    (relative to the article's folder, where Quarto resolves a document's
    paths), and page.css goes on top, as before."""
    config = {key: value for key, value in project_config(project_dir).items() if key not in ("project", "profile")}
    config = quarto_paths(config, project_dir, document, folder, unknown)
    formats = {fmt: dict(options) for fmt, options in (config.get("format") or {}).items() if isinstance(options, dict)}
    for options in formats.values():
        if "css" in options:
            sheets = [options["css"]] if isinstance(options["css"], str) else options["css"] or []
            options["css"] = [os.path.relpath(project_dir / sheet, article_dir) for sheet in sheets]
    if formats:
        config["format"] = formats
    top = config.get("css")
    config["css"] = [pandoc_file(PAGE_CSS), *([top] if isinstance(top, str) else top or [])]
    return config


# The look of what articlekit puts on a page (bound values, failed claims,
# the provenance table), for every article, before the article's own css.
PAGE_CSS = Path(__file__).resolve().parent / "page.css"


def check_style_sheets(project_dir, options):
    """The style sheets a renderer embeds (page.css, and the css of
    _quarto.yml's html format) load nothing: each a regular file of the
    project reached through no symbolic link, whose CSS names no URL but data: ones and
    fragments. A renderer's embedding would otherwise read what a url()
    names (url(/etc/passwd) included) into the page, past the page check."""
    css = options.get("css")
    sheets = [PAGE_CSS, *(project_dir / sheet for sheet in ([css] if isinstance(css, str) else css or []))]
    inside = os.path.normpath(os.path.abspath(project_dir))
    for sheet in sheets:
        path = os.path.normpath(os.path.abspath(sheet))
        if sheet != PAGE_CSS and os.path.commonpath([path, inside]) != inside:
            raise RenderError(
                f"{sheet}: the style sheet lies outside the project's folder ({inside}), where "
                "_quarto.yml names it: the page would embed a file of this machine; copy it into "
                "the project and name it there"
            )
        if os.path.realpath(path) != path:
            raise RenderError(
                f"{sheet}: the style sheet is, or lies under, a symbolic link (to "
                f"{os.path.realpath(path)}): the page embeds the file itself; copy it in instead"
            )
        for form, url, line in fetched_at(read_text(sheet)):
            if not loads_nothing(url):
                raise RenderError(
                    f"{sheet}:{line}: {form} makes the page load a file: a style sheet of the page "
                    "names nothing outside itself; write the image or font into it as a data: URL "
                    "(url(\"data:image/svg+xml;base64,...\")), or leave it out"
                )


# Front matter keys, at any depth, that make Quarto read a file or write the
# text they give into the page (Quarto reads the front matter whole; the
# Pandoc route renders PANDOC_METADATA only).
FILE_KEYS = {
    "css",
    "include-in-header",
    "include-before-body",
    "include-after-body",
    "header-includes",
    "include-before",
    "include-after",
    "template",
    "template-partials",
    "filters",
    "shortcodes",
    "resource-path",
    "resources",
    "metadata-files",
    "bibliography",
    "csl",
    "citation-abbreviations",
    "theme",
    "logo",
    "favicon",
    "brand",
    "highlight-style",
    "syntax-definitions",
    "reference-doc",
    "extensions",
    "pre-render",
    "post-render",
    "output-dir",
    "project",
    "value-bindings",
    "figure-data",
}


def refuse_front_matter_files(article, front):
    """The front matter goes to Quarto whole: a key that names a file Quarto
    would read (css, include-in-header, filters, ...) or text it would write
    into the page is refused, with its line. Page options go in _quarto.yml,
    which both renderers read (and whose style sheets the build checks)."""

    def keys(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                yield [*path, str(key)]
                yield from keys(value, [*path, str(key)])
        elif isinstance(node, list):
            for item in node:
                yield from keys(item, path)

    found = next((path for path in keys(front, []) if path[-1] in FILE_KEYS), None)
    if found:
        text = read_text(article)
        at = re.search(rf"^\s*-?\s*{re.escape(found[-1])}\s*:", text, re.M)
        line = f":{text.count(chr(10), 0, at.start()) + 1}" if at else ""
        raise RenderError(
            f"{article}{line}: the front matter sets {'.'.join(found)}, which makes Quarto read a "
            "file or write its text into the page: the build's page loads nothing it did not make; "
            "put page options under format: html: in _quarto.yml, which both renderers read"
        )
