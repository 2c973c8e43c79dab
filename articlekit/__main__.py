"""python -m articlekit COMMAND ...: one subcommand per build step.

Each command lives in its own module with a `main(argv) -> int`.
"""

import errno
import importlib
import sys

from articlekit import __version__
from articlekit.core.jsonio import DiskFull

COMMANDS = {
    "new": ("articlekit.skeleton.new", "write the skeleton of a new article, ready to build"),
    "config": ("articlekit.data.config", "check config files: YAML syntax, schema, cross-key rules"),
    "listings": ("articlekit.data.listings", "extract code listings from a source file"),
    "values": ("articlekit.data.values", "merge experiment results into build/values.json"),
    "lint": ("articlekit.article.lint", "fail on numerals typed into the prose"),
    "bind": ("articlekit.article.bind", "resolve every shortcode and check its claim"),
    "parse": ("articlekit.render.parse", "read the article as Pandoc does, once for every page"),
    "render": ("articlekit.render.page", "render the article with Quarto or Pandoc"),
    "pdf": ("articlekit.render.pdf", "render the article to PDF through Typst"),
    "preview": ("articlekit.render.preview", "serve the article, re-rendering on each save"),
    "quarto": ("articlekit.render.quarto_hooks", "pre-render/post-render of a Quarto user's quarto render"),
    "audit": ("articlekit.review.audit", "published edition vs this build"),
    "diff": ("articlekit.review.diff", "this build vs the latest release snapshot"),
    "release": ("articlekit.review.release", "freeze this build as a release snapshot"),
    "reproduce": ("articlekit.review.reproduce", "rerun what made one value and say if it came back"),
    "verify": ("articlekit.review.verify", "check a build against build/manifest.json: what changed since"),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--version"]:
        print(f"articlekit {__version__}")
        return 0
    if not argv or argv[0] not in COMMANDS:
        lines = [f"  {name:<9} {help}" for name, (_, help) in COMMANDS.items()]
        print("usage: python -m articlekit COMMAND [ARGS]\n\ncommands:\n" + "\n".join(lines), file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    try:
        return module.main(argv[1:])
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        # a full disk is the machine's state, not a bug: the file and the space, no traceback
        print(f"{argv[0]}: {exc if isinstance(exc, DiskFull) else DiskFull(exc.filename or '.')}", file=sys.stderr)
        return 1


def entry_point():
    """The `articlekit` console script: the same as python -m articlekit."""
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
