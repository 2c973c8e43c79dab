"""A new author's mistakes in an article made by `python -m articlekit new`,
each answered in the terminal by one message that names the place and the
fix, the last thing the terminal shows (issues 19 and 27, in the order met).

The skeleton is built once (renderer=pandoc, as tests/test_examples.py
builds it); each case copies the built folder, makes the author's mistake,
runs the real `snakemake --cores 2` there (forked from one process that
has imported Snakemake: tests/snakemake_fork.py) and reads what the
terminal got. Several mistakes share a run where one build meets them all.
"""

import os
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml

from articlekit.skeleton.new import new_article

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PINNED = ["--config", "renderer=pandoc"]

# A second experiment as the author wrote it: it needs a parameter.
VARIANCE = '''"""The variance of a coin that shows heads once in `scale` throws."""

from articlekit.experiment.artifacts import run_experiment


def run(params):
    p = 1 / params["scale"]
    return {"indicator_variance": p * (1 - p)}


if __name__ == "__main__":
    run_experiment("variance", run)
'''

CRASH = '''from articlekit.experiment.artifacts import run_experiment


def run(params):
    raise RuntimeError("the author's own bug")


if __name__ == "__main__":
    run_experiment("crash", run)
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory, server):
    folder = tmp_path_factory.mktemp("skeleton") / "my-article"
    new_article(folder)
    done = snakemake(server, folder)
    assert done.code == 0, done.output[-4000:]
    return folder


class Run:
    def __init__(self, code, output, seconds):
        self.code, self.output, self.seconds = code, output, seconds


def snakemake(server, folder, *args, env=None):
    """`snakemake --cores 2 ARGS` in folder, with this checkout's articlekit;
    -> .code, .output (the terminal), .seconds (from start to exit)."""
    log = folder.parent / f"{folder.name}-snakemake.log"
    env = {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    started = time.monotonic()
    run = server.start(folder, ["--cores", "2", *args, *PINNED], env, log)
    code = run.wait(timeout=600)
    return Run(code, log.read_text(encoding="utf-8"), time.monotonic() - started)


@pytest.fixture
def article(built, tmp_path):
    """A copy of the built skeleton, for one case's mistakes."""
    copy = tmp_path / "my-article"
    shutil.copytree(built, copy, symlinks=True)
    return copy


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def override(config, section):
    """A section harmonic: added to config.yaml, overriding the defaults
    experiments/harmonic.py declares (PARAMETERS) with what it holds."""
    config.write_text(config.read_text(encoding="utf-8") + "\nharmonic:\n" + section, encoding="utf-8")


# The skeleton's parameters as articles kept them before they were declared
# beside the code, a section of config.yaml (still accepted).
OLD_SECTION = """
harmonic:
  n: 1000          # how many terms
  plot_every: 10   # the figure's spacing between points
  rounds: 9        # interleaved timing rounds (articlekit.experiment.measure)
"""


def undeclared(article):
    """The skeleton the old way: harmonic.py without its PARAMETERS, its
    parameters in config.yaml's section harmonic:."""
    script = article / "experiments/harmonic.py"
    text, found = re.subn(r"^PARAMETERS = \{\n.*?^\}\n", "", script.read_text(encoding="utf-8"), flags=re.M | re.S)
    assert found == 1, "experiments/harmonic.py declares no PARAMETERS to take out"
    script.write_text(text, encoding="utf-8")
    config = article / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + OLD_SECTION, encoding="utf-8")


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def assert_said(run, *needles):
    """A failed build whose terminal holds every needle, and no Python traceback in place of a sentence."""
    assert run.code != 0, run.output[-3000:]
    for needle in needles:
        assert needle in run.output, f"{needle!r} not in the terminal:\n{run.output[-4000:]}"
    for noise in ("Traceback (most recent call last)", "InputFunctionException"):
        assert noise not in run.output, run.output[-4000:]


def assert_said_last(run, message):
    """A failed build whose terminal ends with the message, said once, and
    shows none of the paths of articlekit's own code."""
    assert_said(run, message)
    assert run.output.rstrip().endswith(message), f"not last in the terminal:\n{run.output[-3000:]}"
    assert run.output.count(message) == 1, run.output[-5000:]
    assert_no_module_paths(run)


def assert_no_module_paths(run):
    """The terminal names no file of articlekit's code (the banners' inputs, the frames under an error)."""
    code = sorted(
        {
            path
            for path in re.findall(r"[\w./-]*articlekit/[\w/]+\.(?:py|smk|lua|typ|css)", run.output)
            if not path.endswith("Snakefile")
        }
    )
    assert not code, f"articlekit's code in the terminal: {code[:5]}\n{run.output[-3000:]}"


def test_a_parameters_section_whose_experiment_is_not_declared_says_how_to_declare_it(server, article):
    (article / "experiments/variance.py").write_text(VARIANCE)
    config = article / "config.yaml"
    config.write_text(config.read_text() + "\nvariance:\n  scale: 4\n")
    run = snakemake(server, article)
    assert_said(
        run,
        f"config.yaml:{line_of(config, 'variance:')}: variance: ",
        "experiments/variance.py is there, but experiments: does not declare 'variance'",
        f"declare it under experiments: (config.yaml:{line_of(config, 'experiments:')}) as `variance: {{}}`",
    )
    assert "did you mean" not in run.output


def test_an_image_path_typo_is_named_with_its_line_and_no_traceback(server, article):
    index = article / "article/index.qmd"
    edit(index, "(../figures/harmonic-partial-sums.svg)", "(../figures/harmonic-partial-sum.svg)")
    run = snakemake(server, article)
    assert_said(
        run,
        f"article/index.qmd:{line_of(index, 'partial-sum.svg')}: shows figures/harmonic-partial-sum.svg, "
        "which no rule builds; did you mean ../figures/harmonic-partial-sums.svg?",
    )


def test_failing_experiments_say_why_in_their_logs_and_the_terminal_once(server, article):
    """Three experiments fail in one build (--keep-going): one declared with
    no parameters though it needs one, one whose plot() saves its figure
    under another name than the declared one, one with a bug of its own."""
    (article / "experiments/variance.py").write_text(VARIANCE)
    (article / "experiments/crash.py").write_text(CRASH)
    config = article / "config.yaml"
    edit(config, "experiments:\n", "experiments:\n  variance: {}\n  crash: {}\n")
    edit(
        article / "experiments/harmonic.py",
        'save_figure(fig, figures["partial_sums"],',
        'save_figure(fig, "figures/harmonic-partial.svg",',
    )
    run = snakemake(server, article, "--keep-going")

    missing_parameter = (
        "variance: experiments/variance.py:7: the experiment asks for params['scale'], but "
        "config.yaml gives 'variance' no parameters"
    )
    unwritten = (
        "harmonic: plot() did not write 'partial_sums' (figures/harmonic-partial-sums.svg), which "
        "experiments.harmonic.figures in config.yaml declares; it wrote figures/harmonic-partial.svg "
        "(not declared)"
    )
    assert run.code != 0
    for message in (
        missing_parameter,
        "variance:\n  scale: ...",
        unwritten,
        "save_figure(fig, figures['partial_sums'])",
    ):
        assert run.output.count(message) == 1, f"{message!r} not once in the terminal:\n{run.output[-5000:]}"
    # the experiment stops before Snakemake would wait for the file and blame the file system
    assert "latency" not in run.output and "MissingOutputException" not in run.output
    assert "wrote figures/harmonic-partial-sums.svg" not in run.output
    # where Snakemake points: the log holds what the terminal showed, a traceback too
    assert missing_parameter in (article / "logs/variance.log").read_text()
    assert unwritten in (article / "logs/harmonic.log").read_text()
    crash_log = (article / "logs/crash.log").read_text()
    assert "Traceback (most recent call last)" in crash_log and "RuntimeError: the author's own bug" in crash_log
    assert run.output.count("RuntimeError: the author's own bug") == 1, run.output[-5000:]
    # said once, at the end: each failed job's rule, log and message, a traceback cut to the author's line
    summary = run.output[run.output.index("articlekit: 3 jobs failed (") :]
    assert summary.startswith("articlekit: 3 jobs failed (") and missing_parameter in summary and unwritten in summary
    assert (
        f"crash: failed: experiments/crash.py:{line_of(article / 'experiments/crash.py', 'raise')}, in run: "
        "RuntimeError: the author's own bug (the traceback: logs/crash.log)"
    ) in summary
    assert "rule variance (log: logs/variance.log):" in summary
    assert_no_module_paths(run)


def test_a_replaced_experiment_leaves_files_the_build_names_and_a_new_one_must_be_declared(server, article):
    """The author replaces the skeleton's experiment (harmonic, renamed
    harmonix everywhere) and binds a value of a new experiments/variance.py
    that config.yaml does not declare yet."""
    script = article / "experiments/harmonic.py"
    script.rename(article / "experiments/harmonix.py")
    for path in ("experiments/harmonix.py", "config.yaml", "article/index.qmd", "baseline/published.yaml"):
        path = article / path
        path.write_text(path.read_text().replace("harmonic", "harmonix"))
    (article / "experiments/variance.py").write_text(VARIANCE)
    index = article / "article/index.qmd"
    edit(
        index,
        "\nEvery number",
        "\nA coin's variance: {{< value variance.indicator_variance fmt=\".3f\" >}}.\n\nEvery number",
    )
    old = ["results/harmonic.json", "figures/harmonic-partial-sums.svg", "logs/harmonic.log"]

    run = snakemake(server, article)
    assert_said(
        run,
        f"article/index.qmd:{line_of(index, 'variance.indicator')}: unknown key "
        "'variance.indicator_variance': no experiment 'variance' is declared in experiments: of config.yaml",
        "experiments/variance.py is there: declare it, `variance: {}` under experiments:",
    )
    left = re.search(r"left over from an earlier build \(of harmonic, [^)]*\): (.*?)\. ", run.output)
    assert left, run.output[-4000:]
    assert set(old) <= set(left.group(1).split(", "))
    assert all((article / path).exists() for path in old)  # reported, not deleted

    edit(index, "A coin's variance: {{< value variance.indicator_variance fmt=\".3f\" >}}.\n\n", "")
    command = re.search(r"\(rm ([^)]*)\)", run.output).group(1)
    for path in command.split():
        (article / path).unlink()  # what the message says to do
    again = snakemake(server, article, "--dry-run")  # the plan alone reports leftovers
    assert again.code == 0, again.output[-4000:]
    assert "left over" not in again.output
    assert yaml.safe_load((article / "results/harmonix.json").read_text())["experiment"] == "harmonix"


# ---- issue 27: what still cost a newcomer minutes -----------------------------------


def test_a_script_without_its_run_experiment_line_fails_at_once_saying_what_to_add(server, article):
    """The script's last two lines left out: Snakemake waited for the file,
    then blamed the file system's latency, over an empty log."""
    script = article / "experiments/harmonic.py"
    edit(script, 'if __name__ == "__main__":\n    run_experiment("harmonic", run, plot)\n', "")
    run = snakemake(server, article)
    said = (
        'harmonic: experiments/harmonic.py ran but never called run_experiment(...): add '
        '`run_experiment("harmonic", run, plot)` at its end, under `if __name__ == "__main__":` '
        "(see docs/authoring.md)"
    )
    assert_said_last(run, said)
    for noise in ("latency", "MissingOutputException", "Waiting at most", "RuleException"):
        assert noise not in run.output, run.output[-3000:]
    assert said in (article / "logs/harmonic.log").read_text()


def test_a_misspelt_main_guard_is_named_with_the_line_of_its_call(server, article):
    edit(article / "experiments/harmonic.py", 'if __name__ == "__main__":', 'if __name__ == "main":')
    run = snakemake(server, article)
    line = line_of(article / "experiments/harmonic.py", "run_experiment(\"harmonic\"")
    assert_said_last(
        run,
        f"harmonic: experiments/harmonic.py ran but never called run_experiment(...): its call "
        f"at line {line} did not run. Put it at the end of the file, under "
        '`if __name__ == "__main__":` (spelt so), as `run_experiment("harmonic", run, plot)` '
        "(see docs/authoring.md)",
    )


SLIPS = {  # what the author typed instead of what, how many lines below it YAML stops, the message's words
    "a tab": (
        "    mem_mb: 300",
        "\tmem_mb: 300",
        0,
        "a tab indents this line, and YAML indents with spaces only; fix it there: replace the tab with spaces",
    ),
    "an unclosed bracket": (
        "libraries: [matplotlib]",
        "libraries: [matplotlib",
        1,
        "the [ opened at line {line}, column 16 is not closed before this line; fix it there: close it with ]",
    ),
    "a bad indent": (
        "    runtime: 2",
        "     runtime: 2",
        0,
        "this line is indented by 5 spaces and line "
        "{above} above it by 4, but line {above} already has its value; fix it there",
    ),
}


@pytest.mark.parametrize("slip", SLIPS)
def test_a_yaml_slip_in_config_yaml_stops_the_build_at_its_line_and_column(server, article, slip):
    """Snakemake's own reader said "Config file is not valid JSON or YAML",
    with neither file nor line."""
    old, new, below, words = SLIPS[slip]
    config = article / "config.yaml"
    edit(config, old, new)
    line = line_of(config, new)
    run = snakemake(server, article)
    found = re.search(rf"^config\.yaml:{line + below}:\d+: not valid YAML: (.*)$", run.output, re.M)
    assert found, run.output[-3000:]
    assert found.group(1).startswith(words.format(line=line, above=line - 1)), found.group(0)
    assert_said_last(run, found.group(0))
    assert "not valid JSON or YAML" not in run.output and "WorkflowError in file" not in run.output


def test_an_article_moved_to_a_folder_named_with_a_space_builds_every_edition(server, article):
    """config.yaml's `article:` may name any folder: each rule's command
    quotes the paths it passes (bind split `my paper/index.qmd` in two)."""
    (article / "article").rename(article / "my paper")
    config = article / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + '\narticle: "my paper/index.qmd"\n', encoding="utf-8")
    run = snakemake(server, article)
    assert run.code == 0, run.output[-3000:]
    for edition in ("article.html", "article.md", "article.pdf", "article.docx", "article.jats.zip"):
        assert (article / "build" / edition).stat().st_size > 0, edition


def test_a_project_in_a_folder_named_with_a_brace_is_refused_in_one_sentence(server, built, tmp_path):
    """Snakemake read the brace of `drafts {v2}` as a wildcard and stopped
    with a traceback ("The name 'v2' is unknown in this context"); the plan
    says what it is and what to do, before Snakemake gets there."""
    folder = tmp_path / "drafts {v2}" / "my-article"
    shutil.copytree(built, folder, symlinks=True)
    run = snakemake(server, folder)
    assert_said_last(
        run,
        f"{folder}: the project's path holds a brace, which Snakemake reads as a wildcard: it cannot plan or "
        "lock a build there. Rename the folder that holds it, or build in a copy: "
        "cp -r . /some/other/folder && cd /some/other/folder",
    )
    assert "is unknown in this context" not in run.output


@pytest.mark.parametrize("snakefile", ["this repository's", "examples/summation's"])
def test_every_articles_snakefile_names_a_yaml_slip_at_its_line(server, tmp_path, snakefile):
    """The same slip under this repository's Snakefile and the second example's
    (the skeleton's is the case above)."""
    from tests.workspace import copy_project

    if snakefile == "this repository's":
        folder = copy_project(tmp_path / "project")
    else:
        folder = tmp_path / "summation"
        shutil.copytree(ROOT / "examples/summation", folder)
    config = folder / "config.yaml"
    edit(config, "strict: true", "strict:\ttrue")  # Snakemake's reader refuses a tab after a colon too
    run = snakemake(server, folder, "--dry-run")
    assert_said_last(
        run,
        f"config.yaml:{line_of(config, 'strict:')}:8: not valid YAML: a tab after the key, and "
        "YAML separates with spaces only; fix it there: replace the tab with a space",
    )


def test_a_parameter_out_of_its_range_stops_the_build_at_its_line_before_any_job(server, article):
    """rounds: 3 reached measure.compare, which raised MeasureError in the job.
    config.yaml overrides the script's declared default (9) there."""
    config = article / "config.yaml"
    override(config, "  rounds: 3\n")
    before = (article / "results/harmonic.json").stat().st_mtime
    run = snakemake(server, article)
    assert_said_last(
        run,
        f"config.yaml:{line_of(config, 'rounds: 3')}: harmonic.rounds: 3 is less than the "
        "minimum of 6 (interleaved timing rounds; fewer than 6 give no 95 % interval)",
    )
    assert (article / "results/harmonic.json").stat().st_mtime == before  # refused before any job


def test_a_parameter_the_schema_does_not_know_is_refused_naming_where_to_describe_it(server, article):
    config = article / "config.yaml"
    override(config, "  seed: 2026\n")
    run = snakemake(server, article)
    assert_said_last(
        run,
        f"config.yaml:{line_of(config, 'seed: 2026')}: harmonic.seed: Additional properties are "
        "not allowed ('seed' was unexpected); allowed here: n, plot_every, rounds; a new "
        "parameter: declare it in experiments/harmonic.py's PARAMETERS, with its default and description",
    )


def test_without_a_schema_an_override_keeps_the_types_config_yaml_gives(server, article):
    """An article with no config/schema.yaml: a test config the author wrote
    (--configfile) gives a parameter another type than config.yaml; it
    reached run() as text. The article keeps its parameters the old way
    (undeclared): a section of config.yaml, no PARAMETERS in the script."""
    undeclared(article)
    (article / "config/schema.yaml").unlink()
    test_config = article / "config/test.yaml"
    test_config.write_text("harmonic:\n  n: 1000x\n  rounds: 9.0\n")
    config = article / "config.yaml"
    run = snakemake(server, article, "--configfile", "config/test.yaml")
    header = "the configuration does not match the types config.yaml gives (harmonic: neither its script's PARAMETERS nor config/schema.yaml describes it):"
    rounds = (
        "config/test.yaml:3: harmonic.rounds: 9.0 is a float, and an integer is meant here: write 9 (no "
        "decimal point), or the experiment gets a float"
    )
    n = (
        f"config/test.yaml:2: harmonic.n: '1000x' is not of type 'integer'; config.yaml:{line_of(config, 'n: 1000')} "
        "gives it as an integer, so write an integer"
    )
    assert_said(run, header, rounds, n)
    assert run.output.rstrip().endswith(rounds)
    assert_no_module_paths(run)


def test_without_a_schema_a_seed_typed_as_text_stops_the_build_at_its_line_before_any_job(server, article):
    """The author's run() seeds NumPy from params["seed"]: typed "2026x",
    it failed in the job (TypeError: SeedSequence expects int). The article
    keeps its parameters the old way (undeclared)."""
    undeclared(article)
    (article / "config/schema.yaml").unlink()
    script = article / "experiments/harmonic.py"
    edit(
        script,
        '    n = params["n"]\n',
        '    n = params["n"]\n    import numpy\n    numpy.random.default_rng(params["seed"])\n',
    )
    config = article / "config.yaml"
    edit(config, "  n: 1000 ", '  seed: "2026x"\n  n: 1000 ')
    before = (article / "results/harmonic.json").stat().st_mtime
    run = snakemake(server, article)
    assert_said_last(
        run,
        f"config.yaml:{line_of(config, 'seed:')}: harmonic.seed: '2026x' is not of type 'integer' "
        "(a seed is a whole number, 0 or more: NumPy's generators take nothing else, and the seed "
        "sweep varies only an integer seed)",
    )
    assert (article / "results/harmonic.json").stat().st_mtime == before  # refused before any job


def test_a_failed_rerun_keeps_the_previous_result_aside_and_says_where(server, article):
    """An edit that breaks the script deleted results/harmonic.json, which
    may have cost hours."""
    result, figure = article / "results/harmonic.json", article / "figures/harmonic-partial-sums.svg"
    good = result.read_bytes(), figure.read_bytes()
    script = article / "experiments/harmonic.py"
    edit(script, '    n = params["n"]\n', '    n = params["n"]\n    raise ValueError(f"no sum of {n} terms today")\n')
    run = snakemake(server, article)
    kept = article / "results/.previous/harmonic.json", article / "figures/.previous/harmonic-partial-sums.svg"
    assert (kept[0].read_bytes(), kept[1].read_bytes()) == good
    assert not result.exists()
    assert_said(
        run,
        "rule harmonic (log: logs/harmonic.log; its previous outputs are kept in "
        "figures/.previous/harmonic-partial-sums.svg, results/.previous/harmonic.json, until a run of "
        "it succeeds):",
    )
    assert_said_last(
        run,
        f"harmonic: failed: experiments/harmonic.py:{line_of(script, 'raise ValueError')}, in run: "
        "ValueError: no sum of 1000 terms today (the traceback: logs/harmonic.log)",
    )

    # the kept copies are no outputs: the plan neither lists them as left over nor refuses them
    plan = snakemake(server, article, "--dry-run")
    assert plan.code == 0 and "left over" not in plan.output and ".previous" not in plan.output, plan.output[-3000:]
    ledger = yaml.safe_load((article / ".snakemake/articlekit/ledger.json").read_text())
    assert not [path for path in ledger["outputs"] if ".previous" in path]

    # failing again keeps the last good copy; the next good run removes it
    assert snakemake(server, article).code != 0
    assert kept[0].read_bytes() == good[0]
    edit(script, '    raise ValueError(f"no sum of {n} terms today")\n', "")
    assert snakemake(server, article).code == 0
    assert result.is_file() and not kept[0].exists() and not kept[0].parent.exists()  # a new timing: other bytes
    assert not kept[1].parent.exists()


def test_a_successful_build_shows_no_path_of_articlekits_code(server, article):
    """Each job's banner listed 30 to 45 of articlekit's module paths among its inputs."""
    script = article / "experiments/harmonic.py"
    script.write_text(script.read_text() + "# an edit\n")
    run = snakemake(server, article)
    assert run.code == 0, run.output[-3000:]
    assert "experiments/harmonic.py, and " in run.output and " files of articlekit" in run.output
    assert_no_module_paths(run)


def test_a_failed_format_rule_is_one_line_where_it_fails_and_articlekits_message_last(server, article, tmp_path):
    """Issue 42: each failed format rule's log began with a library's warning
    (Biopython's "importing Biopython from inside the source tree", where
    site-packages holds a stray pyproject.toml), and Snakemake's error block
    of each failed job (its inputs, outputs and shell command, "Look above
    for error messages") stood between the run and articlekit's message.
    A Pandoc that fails as a broken install would (the version it reports is
    the real one, so only the forced formats rerun): each failed job is one
    line where it failed, pointing to the end, and the end is the summary,
    each log's message articlekit's line and nothing before it."""
    import pypandoc

    pandoc = tmp_path / "bin/pandoc"
    pandoc.parent.mkdir()
    pandoc.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "pandoc {pypandoc.get_pandoc_version()}"; exit 0; fi\n'
        'echo "pandoc: a deliberate failure" >&2\nexit 3\n'
    )
    pandoc.chmod(0o755)
    run = snakemake(server, article, "--forcerun", "pdf", "jats", env={"PYPANDOC_PANDOC": str(pandoc)})
    said = "render: article/index.qmd: pandoc failed (exit 3): pandoc: a deliberate failure"
    assert_said(run, "Exiting because a job execution failed: articlekit says why at the end")
    for rule in ("pdf", "jats"):
        assert re.search(
            rf"^Error in rule {rule} \(jobid \d+; log: logs/{rule}\.log\): articlekit says why at the end$",
            run.output,
            re.M,
        ), run.output[-3000:]
        assert (article / f"logs/{rule}.log").read_text().splitlines() == [said]  # no library's line before it
    # Snakemake's block of each failed job stays in its complete log (.snakemake/log/), not the terminal
    assert "check log file(s)" not in run.output and "Look above" not in run.output
    assert "Biopython" not in run.output
    summary = run.output[run.output.index("articlekit: 2 jobs failed (") :]
    assert summary.rstrip().endswith(said) and summary.count(said) == 2
    assert len(summary.strip().splitlines()) == 7, summary  # the header, and each rule's line and message
    assert_no_module_paths(run)
