"""Write the skeleton of a new article, ready to build.

    python -m articlekit new PATH [--title TITLE]

PATH gets an article folder (the shape every articlekit article has):
Snakefile (the articlekit module, a few lines), config.yaml (one experiment
and the publishing settings), config/schema.yaml (the types and ranges of
that experiment's parameters), experiments/ (a package with that
experiment), article/index.qmd (a bound value, a checked claim, a listing,
a figure), _quarto.yml (the one Quarto project: the page's settings) with
_quarto-author.yml (what Quarto's own render and preview run) and index.md
(the page `quarto preview` opens first), baseline/published.yaml, profiles/default
(Snakemake's workflow profile: a failed job's message, which articlekit
prints at the end, is not printed again in the middle), requirements.txt and environment.yml
(pip's and conda's routes to what it needs: the articlekit its author
has, from where it was installed, articlekit/skeleton/origin.py), README.md
(how to build it, and how to pin another articlekit), .github/workflows/article.yml
(GitHub Actions builds it on every push and keeps the article, the audit
and the diff), and .gitignore files for what the build writes. It builds as
written: `cd PATH && snakemake --cores 2`.

The files are package data (articlekit/skeleton/article/); the title, the
date, the Python version and articlekit's version and source are filled in. PATH must
be missing or empty: nothing is ever overwritten.
"""

import argparse
import datetime
import platform
import shlex
from pathlib import Path

from articlekit import __version__
from articlekit.core.errors import ArticlekitError
from articlekit.core.log import log
from articlekit.skeleton import origin

TEMPLATE = Path(__file__).resolve().parent / "article"

# Dot files and folders do not survive every packaging route as package data
# (setuptools' globs skip them); the template stores them without the dot.
RENAMED = {"gitignore": ".gitignore", "github": ".github"}


class NewArticleError(ArticlekitError):
    pass


def template_files():
    """(path inside the template, path inside the new article), sorted."""
    files = sorted(p for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [(p, Path(*(RENAMED.get(part, part) for part in p.relative_to(TEMPLATE).parts))) for p in files]


def title_from(folder):
    """my-first_article -> My first article."""
    words = folder.resolve().name.replace("-", " ").replace("_", " ").split()
    return " ".join(words).capitalize() or "A new article"


def fill(text, title, folder, requirement=""):
    # nothing of this machine goes in (no path of this checkout, no home),
    # save the articlekit requirement when its source is a file or folder
    # of this machine alone (its comments say so): the article is built on
    # others' machines and in CI as written
    return (
        text.replace("__ARTICLEKIT_REQUIREMENT__\n", requirement)
        .replace("__TITLE__", title)
        .replace("__ENVNAME__", folder.resolve().name)
        .replace("__ARTICLEKIT_VERSION__", __version__)
        .replace("__DATE__", datetime.date.today().isoformat())
        .replace("__PYTHON__", ".".join(platform.python_version_tuple()[:2]))
    )


def new_article(folder, title=None):
    """Write the skeleton into folder (missing or empty); return the paths written."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NewArticleError(f"{folder} is a file, not a folder; name a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        present = sorted(p.name for p in folder.iterdir())
        raise NewArticleError(
            f"{folder} is not empty (it holds {', '.join(present[:3])}"
            f"{', ...' if len(present) > 3 else ''}); name a new or empty folder, "
            "nothing is overwritten"
        )
    title = title or title_from(folder)
    requirement = origin.of_this_articlekit().text()
    written = []
    for source, relative in template_files():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(fill(source.read_text(encoding="utf-8"), title, folder, requirement), encoding="utf-8")
        written.append(relative)
    return written


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit new", description=__doc__.splitlines()[0])
    parser.add_argument("path", help="the new article's folder (missing or empty)")
    parser.add_argument("--title", help="the article's title (default: from the folder's name)")
    args = parser.parse_args(argv)
    try:
        written = new_article(args.path, args.title)
    except (NewArticleError, OSError) as exc:
        log.error(f"new: {exc}")
        return 1
    print(f"new: wrote {len(written)} files in {args.path}:")
    for path in written:
        print(f"  {path}")
    print(f"next: cd {shlex.quote(args.path)} && snakemake --cores 2   (then open build/article.html)")
    return 0
