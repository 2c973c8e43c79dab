"""The value extension: the copy shipped in the package, and the copy a
Quarto user's own `quarto render` needs in the article's folder.

Two extensions: value (the shortcodes) and bound, an engine (Quarto 1.9's
engine extensions; an older Quarto skips it) that hands Quarto the bound
document the pre-render wrote instead of the article's shortcodes, while
the text is the one it was bound from (BOUND_POINTER says which).

The build never needs a copy: `articlekit render` names the packaged
extension by its path (-M shortcodes:[...]). A bare `quarto render` or
`quarto preview` finds shortcodes only in the article's _extensions/, so
the pre-render (articlekit.render.quarto_hooks) installs the packaged one
there the way `quarto add` lays an extension out:
_extensions/articlekit/value/. That copy is generated, git-ignored, and
refreshed whenever its files differ from the package's (a digest of both),
so an upgraded articlekit reaches it on the next render.

The build's routes leave the copy out (shortcode files, the render rule's
inputs): it is the packaged extension again, and a stale copy must never
decide a page. Quarto itself loads it when it renders for the build, so
`articlekit render` brings an existing copy up to date first.
"""

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from articlekit.core.workfiles import owner_tag, remove_stale

# The extensions shipped as package data (one today: value).
PACKAGED_EXTENSIONS = Path(__file__).resolve().parent / "quarto" / "_extensions"
# Where the copy goes, relative to the article's folder: _extensions/<org>/,
# as `quarto add` installs an extension of that author.
INSTALLED_COPY = Path("_extensions") / "articlekit"
# Beside the copy's extensions, written by the pre-render after each bind:
# which text the bound document was made from, for the bound engine
# (quarto/_extensions/bound/bound-engine.js). Not part of the copy's digest.
# A hidden file: a one-file `quarto preview` watches every other file of
# the extension folders and renders the page again when one changes, so a
# visible pointer, rewritten on each save, made each save render twice.
BOUND_POINTER = INSTALLED_COPY / ".bound.json"


def installed_copy(article_dir):
    return Path(article_dir) / INSTALLED_COPY


STAGING_PREFIX = ".articlekit-"  # the folder a copy is made in, beside it


def is_installed_copy(path):
    """True for a path inside an article's installed copy (or the folder
    one is being made in): the build reads the package's instead."""
    parts = Path(path).resolve().parts
    return any(
        parts[i] == INSTALLED_COPY.parts[0]
        and (parts[i + 1] == INSTALLED_COPY.parts[1] or parts[i + 1].startswith(STAGING_PREFIX))
        for i in range(len(parts) - 1)
    )


def digest(folder):
    """sha256 over every file under folder: its path inside it and its bytes."""
    folder = Path(folder)
    h = hashlib.sha256()
    if not folder.is_dir():
        return None
    pointer = folder / BOUND_POINTER.name
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p != pointer):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def is_current(article_dir):
    return digest(installed_copy(article_dir)) == digest(PACKAGED_EXTENSIONS)


def install(article_dir):
    """Install (or refresh) the packaged extensions into the article's
    folder; -> True when the copy was written, False when it was current.
    Whole or not at all: the copy is made beside the old one and renamed
    into place, so a render starting meanwhile loads one or the other."""
    target = installed_copy(article_dir)
    if is_current(article_dir):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target.parent, STAGING_PREFIX, "-")  # a killed install's staging folder
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f"{STAGING_PREFIX}{owner_tag()}-"))
    try:
        fresh = staging / "new"
        shutil.copytree(PACKAGED_EXTENSIONS, fresh, ignore=shutil.ignore_patterns("__pycache__"))
        if target.exists():
            os.replace(target, staging / "old")
        os.replace(fresh, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return True


def refresh_if_installed(article_dir):
    """Bring an existing copy up to date (Quarto loads it beside the
    packaged one); install none where there is none."""
    if installed_copy(article_dir).is_dir():
        install(article_dir)
