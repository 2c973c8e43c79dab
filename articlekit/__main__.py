"""python -m articlekit COMMAND ...: one subcommand per build step.

Each command lives in its own module with a `main(argv) -> int`.
`python -m articlekit --help` (or -h) lists every one of them, the steps the
workflow runs as modules of their own (python -m articlekit.review.matrix
...) included: those are commands here too (articlekit matrix ...). Each
takes --help.

A mistake in what the user gave (an ArticlekitError, a file that is not
there) is printed here, once, as one line `COMMAND: file:line: message;
fix` with exit status 1 (articlekit.core.errors.run_command); anything else
is a bug and keeps its traceback.
"""

import difflib
import importlib
import sys

from articlekit import __version__
from articlekit.core.errors import run_command
from articlekit.core.log import log

COMMANDS = {
    "new": ("articlekit.skeleton.new", "write the skeleton of a new article, ready to build"),
    "config": ("articlekit.data.config", "check config files: YAML syntax, schema, cross-key rules"),
    "keys": (
        "articlekit.data.reference",
        "write the reference of every experiment's parameters and result keys, from its script's declarations",
    ),
    "listings": ("articlekit.data.listings", "extract code listings from a source file"),
    "values": ("articlekit.data.values", "merge experiment results into build/values.json"),
    "lint": ("articlekit.article.lint", "fail on numerals typed into the prose"),
    "bind": ("articlekit.article.bind", "resolve every shortcode and check its claim"),
    "parse": ("articlekit.render.parse", "read the article as Pandoc does, once for every page"),
    "render": ("articlekit.render.page", "render the article with Quarto or Pandoc"),
    "pdf": ("articlekit.render.formats.pdf", "render the article to PDF through Typst (= render --to pdf)"),
    "preview": ("articlekit.render.preview", "serve the article, re-rendering on each save"),
    "quarto": ("articlekit.render.quarto_hooks", "pre-render/post-render of a Quarto user's quarto render"),
    "audit": ("articlekit.review.audit", "published edition vs this build"),
    "diff": ("articlekit.review.diff", "this build vs the latest release snapshot"),
    "release": ("articlekit.review.release", "freeze this build as a release snapshot"),
    "cite": ("articlekit.review.citation_file", "write CITATION.cff from the article's front matter (--check: is it?)"),
    "reproduce": ("articlekit.review.reproduce", "rerun what made one value and say if it came back"),
    "verify": (
        "articlekit.review.verify",
        "check a build against its manifest and a release's committed digests: what changed, what it proves",
    ),
    # the steps the workflow runs as modules (MODULES below), by name
    "sweep": ("articlekit.experiment.sweep", "run one experiment over many seeds (snakemake robustness)"),
    "sweep-summary": ("articlekit.article.robustness", "summarise the sweep: each seeded value and claim across seeds"),
    "seed-figure": ("articlekit.article.seed_figure", "draw one value across the sweep's seeds"),
    "sweep-page": ("articlekit.review.robustness", "write the seed-robustness page from its summary"),
    "matrix-env": ("articlekit.review.matrixenv", "lock, install and run one environment of the version matrix"),
    "matrix": ("articlekit.review.matrix", "bind one environment's results, write the matrix pages, check them"),
    "manifest": (
        "articlekit.review.manifest",
        "write build/ro-crate-metadata.json: every file the build read and wrote, each job, every bound value",
    ),
    "journal-bundle": (
        "articlekit.review.journal_bundle",
        "write build/article.meca.zip: the JATS edition with the build's RO-Crate, for a journal",
    ),
    "codegraph": ("articlekit.workflow.codegraph", "list the code a build step runs (its code inputs)"),
    "unwritten": (
        "articlekit.experiment.unwritten",
        "say why an experiment's job wrote no artifact (no run_experiment call)",
    ),
}

# The steps the workflow (articlekit/workflow/rules/*.smk) runs as modules: each
# is a command above too; `python -m MODULE --help` says how to run one.
WORKFLOW_STEPS = (
    "sweep",
    "sweep-summary",
    "seed-figure",
    "sweep-page",
    "matrix-env",
    "matrix",
    "manifest",
    "journal-bundle",
    "codegraph",
    "unwritten",
)
MODULES = {COMMANDS[name][0]: COMMANDS[name][1] for name in WORKFLOW_STEPS}


def usage():
    width = max(map(len, COMMANDS))
    commands = [f"  {name:<{width}}  {help}" for name, (_, help) in COMMANDS.items()]
    width = max(map(len, MODULES))
    modules = [f"  python -m {COMMANDS[name][0]:<{width}}  = articlekit {name}" for name in WORKFLOW_STEPS]
    return (
        "usage: python -m articlekit COMMAND [ARGS]   (or: articlekit COMMAND [ARGS])\n"
        "       python -m articlekit COMMAND --help   what a command takes\n\n"
        "commands:\n" + "\n".join(commands) + "\n\n"
        "the steps the workflow runs as modules, the same as their commands:\n" + "\n".join(modules) + "\n\n"
        "  --version  articlekit's version\n"
    )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--version"]:
        print(f"articlekit {__version__}")
        return 0
    if argv[:1] in (["--help"], ["-h"], ["help"]):
        print(usage(), end="")
        return 0
    if not argv or argv[0] not in COMMANDS:
        near = difflib.get_close_matches(argv[0], COMMANDS, n=1) if argv else []
        said = (
            (f"articlekit: unknown command {argv[0]!r}" + (f"; did you mean {near[0]!r}?" if near else "") + "\n\n")
            if argv
            else ""
        )
        log.error((said + usage()).removesuffix("\n"))  # usage() ends in the newline the logger adds
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return run_command(argv[0], module.main, argv[1:])


def entry_point():
    """The `articlekit` console script: the same as python -m articlekit."""
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
