"""A new author's mistakes in an article made by `python -m articlekit new`,
each answered in the terminal by one message that names the place and the
fix (issue 19's first hour, in the order met).

The skeleton is built once (renderer=pandoc, as tests/test_examples.py
builds it); each case copies the built folder, makes the author's mistake,
runs the real `snakemake --cores 2` there (forked from one process that
has imported Snakemake: tests/snakemake_fork.py) and reads what the
terminal got. Several mistakes share a run where one build meets them all.
"""

import os
import re
import shutil
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
    def __init__(self, code, output):
        self.code, self.output = code, output


def snakemake(server, folder, *args):
    """`snakemake --cores 2 ARGS` in folder, with this checkout's articlekit; -> .code, .output (the terminal)."""
    log = folder.parent / f"{folder.name}-snakemake.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = server.start(folder, ["--cores", "2", *args, *PINNED], env, log)
    return Run(run.wait(timeout=600), log.read_text(encoding="utf-8"))


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


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def assert_said(run, *needles):
    """A failed build whose terminal holds every needle, and no Python traceback in place of a sentence."""
    assert run.code != 0, run.output[-3000:]
    for needle in needles:
        assert needle in run.output, f"{needle!r} not in the terminal:\n{run.output[-4000:]}"
    for noise in ("Traceback (most recent call last)", "InputFunctionException"):
        assert noise not in run.output, run.output[-4000:]


def test_a_parameters_section_whose_experiment_is_not_declared_says_how_to_declare_it(server, article):
    (article / "experiments/variance.py").write_text(VARIANCE)
    config = article / "config.yaml"
    config.write_text(config.read_text() + "\nvariance:\n  scale: 4\n")
    run = snakemake(server, article)
    assert_said(run, f"config.yaml:{line_of(config, 'variance:')}: variance: ",
                "experiments/variance.py is there, but experiments: does not declare 'variance'",
                f"declare it under experiments: (config.yaml:{line_of(config, 'experiments:')}) as `variance: {{}}`")
    assert "did you mean" not in run.output


def test_an_image_path_typo_is_named_with_its_line_and_no_traceback(server, article):
    index = article / "article/index.qmd"
    edit(index, "(../figures/harmonic-partial-sums.svg)", "(../figures/harmonic-partial-sum.svg)")
    run = snakemake(server, article)
    assert_said(run, f"article/index.qmd:{line_of(index, 'partial-sum.svg')}: shows figures/harmonic-partial-sum.svg, "
                "which no rule builds; did you mean ../figures/harmonic-partial-sums.svg?")


def test_failing_experiments_say_why_in_their_logs_and_the_terminal_once(server, article):
    """Three experiments fail in one build (--keep-going): one declared with
    no parameters though it needs one, one whose plot() saves its figure
    under another name than the declared one, one with a bug of its own."""
    (article / "experiments/variance.py").write_text(VARIANCE)
    (article / "experiments/crash.py").write_text(CRASH)
    config = article / "config.yaml"
    edit(config, "experiments:\n", "experiments:\n  variance: {}\n  crash: {}\n")
    edit(article / "experiments/harmonic.py", 'save_figure(fig, figures["partial_sums"])',
         'save_figure(fig, "figures/harmonic-partial.svg")')
    run = snakemake(server, article, "--keep-going")

    missing_parameter = ("variance: experiments/variance.py:7: the experiment asks for params['scale'], but "
                         "config.yaml gives 'variance' no parameters")
    unwritten = ("harmonic: plot() did not write 'partial_sums' (figures/harmonic-partial-sums.svg), which "
                 "experiments.harmonic.figures in config.yaml declares; it wrote figures/harmonic-partial.svg "
                 "(not declared)")
    assert run.code != 0
    for message in (missing_parameter, "variance:\n  scale: ...", unwritten,
                    "save_figure(fig, figures['partial_sums'])"):
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
    edit(index, "\nEvery number", "\nA coin's variance: {{< value variance.indicator_variance fmt=\".3f\" >}}.\n\n"
         "Every number")
    old = ["results/harmonic.json", "figures/harmonic-partial-sums.svg", "logs/harmonic.log"]

    run = snakemake(server, article)
    assert_said(run, f"article/index.qmd:{line_of(index, 'variance.indicator')}: unknown key "
                "'variance.indicator_variance': no experiment 'variance' is declared in experiments: of config.yaml",
                "experiments/variance.py is there: declare it, `variance: {}` under experiments:")
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
