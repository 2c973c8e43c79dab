"""Which renderer builds the page, where it is, and which version it is.

One owner for the choice `renderer: auto` makes (Quarto when `quarto` is
on PATH, otherwise Pandoc) and for the version that goes with it, read by
the plan and by the render alike: the render rule takes both as params, so
switching Pandoc to Quarto, or upgrading either, renders again, and the
colophon names the very version the rule recorded.

Cheap on purpose, since every `snakemake` call asks (the no-op build
included): Quarto's version is read from its installed files when they
hold it (share/version, the file Quarto's own launcher prints), and only
otherwise from `quarto --version`; Pandoc's costs one `pandoc --version`,
of the one binary pandoc_path names.
"""

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

from articlekit.core.errors import ArticlekitError

CHOICES = ("auto", "quarto", "pandoc")


class RenderError(ArticlekitError, RuntimeError):
    """The render stage's error (render, pdf, the preview): a renderer that
    is missing, fails, or hands back a page that does not pass."""


def choose(renderer):
    """'auto' -> the renderer it stands for here; 'quarto' and 'pandoc' as they are."""
    if renderer not in CHOICES:
        raise ArticlekitError(f"renderer {renderer!r}: expected one of {', '.join(CHOICES)}")
    if renderer == "auto":
        return "quarto" if shutil.which("quarto") else "pandoc"
    return renderer


def quarto_path():
    found = shutil.which("quarto")
    if not found:
        raise RenderError(
            "renderer quarto asked for, but `quarto` is not on PATH (renderer: auto falls back to Pandoc)"
        )
    return found


def pandoc_path():
    """The Pandoc every route runs: $PYPANDOC_PANDOC when set (pypandoc's own
    override), else the one the pypandoc-binary wheel ships, else `pandoc` on
    PATH. Found without importing pypandoc or probing each candidate with
    --version (pypandoc's way, tens of milliseconds): the plan asks too."""
    if os.environ.get("PYPANDOC_PANDOC"):
        return os.environ["PYPANDOC_PANDOC"]
    spec = importlib.util.find_spec("pypandoc")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        bundled = Path(folder) / "files" / ("pandoc.exe" if os.name == "nt" else "pandoc")
        if bundled.is_file():
            return str(bundled)
    found = shutil.which("pandoc")
    if not found:
        raise RenderError("no pandoc: install the pypandoc-binary wheel, Pandoc 3, or Quarto")
    return found


def pandoc_file(path):
    """`path` as Pandoc is to read it where it fetches a file (--bibliography,
    --csl, --css, --include-in-header, --reference-doc, --template, and the
    bibliography and csl of its metadata): it takes the argument for a URL
    and decodes each %XX, so a folder named `drafts%20v2` is read as
    `drafts v2` and `100%AB` as something else again. Each % written %25
    decodes to itself. (Lua filters and metadata files are read as given.)"""
    return str(path).replace("%", "%25")


def tool_version(command):
    """`command --version`'s version: '3.8.2.1' from 'pandoc 3.8.2.1 ...',
    Quarto's first line ('1.9.38') as it is."""
    out = subprocess.run([command, "--version"], capture_output=True, text=True, check=True).stdout
    return out.split()[1] if out.split()[:1] == ["pandoc"] else out.strip().splitlines()[0]


def installed_quarto_version(quarto):
    """The version a Quarto install records beside its launcher, or None.
    A release (tarball, .deb, conda-forge) keeps it in share/version next
    to bin/, and its launcher prints that file for `quarto --version`."""
    bin_dir = Path(quarto).resolve().parent
    recorded = [
        bin_dir.parent / "share" / "version",
        # Quarto run from its source (../shared/quarto here): the
        # version its launcher prints, beside the sources
        bin_dir.parent / "quarto-cli" / "version.txt",
    ]
    for candidate in recorded:
        try:
            return candidate.read_text(encoding="utf-8").strip() or None
        except OSError:
            continue
    return None


def quarto_version(quarto):
    return installed_quarto_version(quarto) or tool_version(quarto)


def version(renderer):
    """The installed version of 'quarto' or 'pandoc'; None when it is not installed."""
    try:
        if renderer == "quarto":
            return quarto_version(quarto_path())
        return tool_version(pandoc_path())
    except (RenderError, OSError, subprocess.CalledProcessError, IndexError):
        return None


def display_name(renderer, version_text):
    """What the colophon says: 'Quarto 1.9.38', 'Pandoc 3.8.2.1'."""
    return f"{renderer.capitalize()} {version_text}"
