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
