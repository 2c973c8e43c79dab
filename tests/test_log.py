"""Every diagnostic articlekit prints goes through one logger
(articlekit/core/log.py): its text is the message and nothing else, on
sys.stderr as it is when the message is said (so capsys, capfd and
contextlib.redirect_stderr see it), and once, whoever else configures
logging in the process (Snakemake, an experiment's configure_logging,
pytest). No module of the package prints to sys.stderr by itself."""

import contextlib
import importlib
import io
import logging
import sys

import pytest

from articlekit.core.errors import ArticlekitError, run_command


@pytest.fixture
def logmod():
    return importlib.import_module("articlekit.core.log")


def test_the_text_is_the_message_exactly(logmod, capsys):
    logmod.log.warning("bind: warning: 50 % of {x} and %s, as typed")
    logmod.log.error("two\nlines")
    captured = capsys.readouterr()
    assert captured.err == "bind: warning: 50 % of {x} and %s, as typed\ntwo\nlines\n"
    assert captured.out == ""


def test_info_is_shown_whatever_the_root_logger_level(logmod, capsys):
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.CRITICAL)
    try:
        logmod.log.info("parse: article.md -> build/article.ast.json")
    finally:
        root.setLevel(level)
    assert capsys.readouterr().err == "parse: article.md -> build/article.ast.json\n"


def test_it_goes_to_sys_stderr_as_it_is_when_said(logmod):
    later = io.StringIO()
    with contextlib.redirect_stderr(later):  # what quarto_bind does around a step it runs in process
        logmod.log.info("lint: 0 typed numbers")
    assert later.getvalue() == "lint: 0 typed numbers\n"


def test_it_goes_to_the_file_descriptor_capfd_sees(logmod, capfd):
    logmod.log.error("render: a failure")
    assert capfd.readouterr().err == "render: a failure\n"


def test_setting_it_up_again_adds_no_second_handler(logmod, capsys):
    before = list(logging.getLogger("articlekit").handlers)
    importlib.reload(logmod)
    logmod.setup()
    logmod.setup()
    assert logging.getLogger("articlekit").handlers == before
    assert len(before) == 1
    logmod.log.info("said once")
    assert capsys.readouterr().err == "said once\n"


def test_it_does_not_propagate_to_a_root_logger_someone_else_configured(logmod, capsys):
    assert logmod.log.propagate is False
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)  # as Snakemake's or an experiment's setup would
    root.addHandler(handler)
    try:
        logmod.log.warning("a warning")
    finally:
        root.removeHandler(handler)
    assert capsys.readouterr().err.count("a warning") == 1


def test_the_logger_is_the_one_articlekit_logs_through(logmod):
    assert logmod.log is logging.getLogger("articlekit")


class Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def records(logmod):
    handler = Records()
    logmod.log.addHandler(handler)
    yield handler.records
    logmod.log.removeHandler(handler)


def test_a_users_mistake_is_one_error_through_the_logger(records, capsys):
    def main(argv):
        raise ArticlekitError("no such key", where="config.yaml:3", fix="remove it")

    assert run_command("config", main, []) == 1
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.ERROR, "config: config.yaml:3: no such key; remove it")
    ]
    assert capsys.readouterr().err == "config: config.yaml:3: no such key; remove it\n"


def test_an_unknown_command_says_so_through_the_logger(records, capsys):
    from articlekit.__main__ import main, usage

    assert main(["biind"]) == 2
    said = "articlekit: unknown command 'biind'; did you mean 'bind'?\n\n" + usage()
    assert capsys.readouterr().err == said
    assert [r.levelno for r in records] == [logging.ERROR]
