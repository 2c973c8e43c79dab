"""articlekit's Snakemake module: the rules that build an article.

An article's Snakefile is a few lines:

    import articlekit.workflow
    configfile: articlekit.workflow.checked_config("config.yaml")
    module articlekit:
        snakefile: articlekit.workflow.snakefile()
        config: config
    use rule * from articlekit

The rules live in this folder (Snakefile, and rules/*.smk; the module's
config schema in schemas/). What they read is one frozen Plan, built once
per invocation from the config by articlekit.workflow.plan (the config's
entries interpreted by articlekit.workflow.settings), after the checks of
articlekit.workflow.plantime; what needs Snakemake's workflow too is
articlekit.workflow.wiring. The code
each step runs is read from the imports by articlekit.workflow.codegraph,
the plan's checks that passed are remembered between runs by
articlekit.workflow.plancache, files no rule makes any more are
reported by articlekit.workflow.leftovers, and Snakemake's main process
records which rule wrote each output (articlekit.workflow.ownership). The
last stage: it may import any other.
"""

from pathlib import Path

FOLDER = Path(__file__).resolve().parent


def snakefile():
    """The module's Snakefile, for `module articlekit: snakefile: ...`."""
    return str(FOLDER / "Snakefile")


def checked_config(path):
    """`path`, for `configfile:`, once it reads as YAML the way Snakemake and
    articlekit both read it; else a WorkflowError (printed without a
    traceback) with its file, line and column, what is wrong and the fix
    (articlekit.data.config.check_syntax). Snakemake's own reader names
    neither the file nor the line. A missing file is left to Snakemake,
    which says so."""
    from articlekit.data.config import check_syntax_for_snakemake
    from articlekit.workflow.failures import quiet_terminal

    quiet_terminal()  # the message alone, not the frames of articlekit's code under it
    check_syntax_for_snakemake(path)
    return path
