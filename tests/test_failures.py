"""What a failed build leaves in the terminal, piece by piece
(articlekit/workflow/failures.py, articlekit/workflow/previous.py): the
summary of the failed jobs printed last, a log's message cut to the line of
the author's code, Snakemake's banners without the paths of articlekit's
code, and an experiment's previous outputs kept aside while it reruns.
End to end, through a skeleton's build, in tests/test_author_mistakes.py."""

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake_interface_logger_plugins.common import LogEvent

from articlekit.workflow import failures, previous

MODULE = str(failures.ARTICLEKIT_FOLDER / "workflow/common.smk")
CODE = [str(failures.ARTICLEKIT_FOLDER / name) for name in ("core/jsonio.py", "experiment/artifacts.py")]


def record(event, **fields):
    return logging.makeLogRecord({"event": event, "msg": "", **fields})


@pytest.fixture
def in_article(tmp_path, monkeypatch):
    """An article folder as the working directory (as Snakemake runs)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_banners_inputs_list_the_articles_files_and_count_articlekits():
    assert failures.short_inputs(["experiments/harmonic.py", *CODE]) == [
        "experiments/harmonic.py",
        "and 2 files of articlekit",
    ]
    assert failures.short_inputs(["config.yaml"]) == ["config.yaml"]
    reason = (
        f"Updated input files: experiments/harmonic.py, {CODE[0]}, {CODE[1]}; Code has changed since last execution"
    )
    assert failures.short_reason(reason) == (
        "Updated input files: experiments/harmonic.py, and 2 files of articlekit; Code has changed since last execution"
    )


def test_an_error_articlekit_raised_while_planning_is_its_message_without_articlekits_frames():
    printed = (
        f'WorkflowError in file "{MODULE}", line 120:\n'
        "config.yaml:21: harmonic.rounds: 3 is less than the minimum of 6\n"
        f'  File "/work/a/Snakefile", line 16, in <module>\n'
        f'  File "{MODULE}", line 120, in <module>'
    )
    assert failures.articlekit_message(printed) == "config.yaml:21: harmonic.rounds: 3 is less than the minimum of 6"
    # raised by a Snakefile of the author's own: left as Snakemake prints it
    theirs = 'WorkflowError in file "/work/a/Snakefile", line 3:\nno\n  File "/work/a/Snakefile", line 3, in <module>'
    assert failures.articlekit_message(theirs) is None


def test_an_experiments_log_gives_its_last_record_and_a_traceback_its_line_in_the_authors_code(in_article):
    script = in_article / "experiments/harmonic.py"
    script.parent.mkdir()
    script.write_text("")
    log = in_article / "logs/harmonic.log"
    log.parent.mkdir()
    log.write_text(
        "2026-12-02 01:32:45,123 experiment: harmonic: params {'n': 3}\n"
        "2026-12-02 01:32:46,000 experiment: harmonic: failed\n"
        "Traceback (most recent call last):\n"
        f'  File "{CODE[1]}", line 350, in run_experiment\n'
        "    values = produce()\n"
        f'  File "{script}", line 25, in run\n'
        "    raise ValueError(n)\n"
        "ValueError: 3\n"
    )
    assert failures.message_of(["logs/harmonic.log"]) == (
        "harmonic: failed: experiments/harmonic.py:25, in run: ValueError: 3 (the traceback: logs/harmonic.log)"
    )


def test_a_compiled_librarys_frame_is_not_taken_for_the_authors_line(in_article):
    """NumPy's Cython frames name a relative path, which read as a file of the article."""
    script = in_article / "experiments/harmonic.py"
    script.parent.mkdir()
    script.write_text("")
    (in_article / "harmonic.log").write_text(
        "harmonic: failed\n"
        "Traceback (most recent call last):\n"
        f'  File "{script}", line 9, in run\n'
        "    numpy.random.default_rng(params['seed'])\n"
        '  File "numpy/random/_generator.pyx", line 5082, in numpy.random._generator.default_rng\n'
        '  File "numpy/random/bit_generator.pyx", line 308, in numpy.random.bit_generator.SeedSequence.__init__\n'
        "TypeError: SeedSequence expects int or sequence of ints for entropy not 2026x\n"
    )
    assert failures.message_of(["harmonic.log"]) == (
        "harmonic: failed: experiments/harmonic.py:9, in run: TypeError: SeedSequence expects int or sequence of "
        "ints for entropy not 2026x (the traceback: harmonic.log)"
    )


def test_an_empty_log_says_the_command_stopped_before_articlekit_could_say_why(in_article):
    (in_article / "empty.log").write_text("")
    assert failures.message_of(["empty.log"]).startswith("its log is empty")
    assert failures.message_of(["absent.log"]).startswith("its log is empty")


def test_a_long_message_is_cut_and_names_its_log(in_article):
    (in_article / "long.log").write_text("\n".join(f"line {n}" for n in range(100)))
    said = failures.message_of(["long.log"]).splitlines()
    assert len(said) == failures.LONGEST + 1 and said[-1] == "... and 60 more lines in long.log"


def test_a_failed_command_of_articlekits_rules_is_said_by_the_summary_not_twice():
    failed = (
        f'RuleException:\nCalledProcessError in file "{MODULE}", line 40:\n'
        "Command 'set -euo pipefail;  python -m experiments.harmonic' returned non-zero exit status 1."
    )
    assert failures.is_failed_command(failed)
    assert not failures.is_failed_command(failed.replace(MODULE, "/work/a/Snakefile"))


def test_previous_outputs_move_aside_and_a_success_removes_them(in_article):
    result = in_article / "results/harmonic.json"
    result.parent.mkdir()
    result.write_text("good")
    outputs = ["results/harmonic.json", "figures/absent.svg"]
    assert previous.keep(outputs) == [("results/harmonic.json", "results/.previous/harmonic.json")]
    assert not result.exists() and (in_article / "results/.previous/harmonic.json").read_text() == "good"
    assert previous.kept_copies(outputs) == [("results/harmonic.json", "results/.previous/harmonic.json")]
    # a second failed run finds no output to move and leaves the kept copy
    assert previous.keep(outputs) == [] and previous.kept_copies(outputs)
    previous.discard(outputs)
    assert not (in_article / "results/.previous").exists() and previous.kept_copies(outputs) == []


def test_the_summary_names_each_failed_job_its_log_its_kept_copy_and_its_message(in_article):
    (in_article / "results").mkdir()
    (in_article / "results/harmonic.json").write_text("good")
    (in_article / "results/other.json").write_text("good")
    (in_article / "logs").mkdir()
    (in_article / "logs/harmonic.log").write_text("harmonic: the fix\n")
    workflow = SimpleNamespace(dryrun=False, touch=False)
    handler = failures.Failures(workflow, keep=["harmonic", "other"])
    assert handler.summary() is None
    handler.emit(record(LogEvent.JOB_INFO, jobid=1, rule_name="harmonic", output=["results/harmonic.json"]))
    handler.emit(record(LogEvent.JOB_INFO, jobid=2, rule_name="other", output=["results/other.json"]))
    handler.emit(record(LogEvent.JOB_FINISHED, job_id=2))
    handler.emit(
        record(LogEvent.JOB_ERROR, rule_name="harmonic", log=["logs/harmonic.log"], output=["results/harmonic.json"])
    )
    assert not Path("results/.previous/other.json").exists()  # its run succeeded: nothing kept
    assert handler.summary() == (
        "articlekit: 1 job failed (harmonic); what its log says:\n"
        "\nrule harmonic (log: logs/harmonic.log; its previous output is kept in results/.previous/harmonic.json, "
        "until a run of it succeeds):\n"
        "harmonic: the fix"
    )


def test_a_dry_run_keeps_nothing_aside(in_article):
    (in_article / "results").mkdir()
    (in_article / "results/harmonic.json").write_text("good")
    handler = failures.Failures(SimpleNamespace(dryrun=True, touch=False), keep=["harmonic"])
    handler.emit(record(LogEvent.JOB_INFO, jobid=1, rule_name="harmonic", output=["results/harmonic.json"]))
    assert (in_article / "results/harmonic.json").read_text() == "good"


def test_a_failed_job_with_a_log_is_one_line_pointing_to_the_summary_where_one_follows(monkeypatch):
    """Snakemake's error block (inputs, outputs, shell command) for each
    failed job stood between the run and the summary; "Look above for error
    messages" pointed away from it. Only where a summary follows (watch())."""

    class Snakemakes(logging.Formatter):
        def format(self, record):
            return f"snakemake's own: {record.getMessage()}"

    terminal = failures.Terminal(Snakemakes())
    error = record(LogEvent.JOB_ERROR, rule_name="pdf", jobid=9, log=["logs/pdf.log"], input=["a.qmd"], output=[])
    last = logging.makeLogRecord({"msg": failures.SNAKEMAKES_LAST_WORD, "levelno": logging.ERROR})
    monkeypatch.setattr(failures, "_watching", [])
    assert terminal.format(error) == "snakemake's own: " and terminal.format(last).startswith("snakemake's own")
    monkeypatch.setattr(failures, "_watching", [object()])
    said = terminal.format(error).splitlines()
    assert (
        len(said) == 2 and said[1] == "Error in rule pdf (jobid 9; log: logs/pdf.log): articlekit says why at the end"
    )
    assert terminal.format(last) == "snakemake's own: " + failures.LAST_WORD
    # a failed job with no log: the summary has nothing to say of it, Snakemake's block stays
    no_log = record(LogEvent.JOB_ERROR, rule_name="mine", jobid=3, log=[], input=[], output=[])
    assert terminal.format(no_log) == "snakemake's own: "
