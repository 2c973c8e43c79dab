"""Every diagnostic articlekit prints goes through one logger
(articlekit/core/log.py): its text is the message and nothing else, on
sys.stderr as it is when the message is said (so capsys, capfd and
contextlib.redirect_stderr see it), and once, whoever else configures
logging in the process (Snakemake, an experiment's configure_logging,
pytest). No module of the package prints to sys.stderr by itself."""

import ast
import contextlib
import importlib
import io
import logging
import sys
from pathlib import Path

import pytest

from articlekit.core.errors import ArticlekitError, run_command

PACKAGE = Path(__file__).resolve().parent.parent / "articlekit"

# "articlekit/PATH.py": why it may still write to sys.stderr itself.
ALLOWED = {}


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
    # articlekit's own handler, counted by its name: whatever else a test
    # run before this one attached to the logger is not articlekit's
    def own():
        return [h for h in logging.getLogger("articlekit").handlers if h.get_name() == logmod.HANDLER_NAME]

    before = own()
    importlib.reload(logmod)
    logmod.setup()
    logmod.setup()
    assert own() == before and len(before) == 1
    logmod.log.info("said once")
    assert capsys.readouterr().err.count("said once\n") == 1


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


# ---- no module prints to stderr by itself ---------------------------------------


def is_stderr(node):
    """sys.stderr or sys.__stderr__ (or a bare `stderr` taken from sys)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == "sys" and node.attr in ("stderr", "__stderr__")
    return isinstance(node, ast.Name) and node.id == "stderr"


def stderr_writes(source):
    """(line, what) of every print(..., file=sys.stderr) and sys.stderr.write(...) in the source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            if any(k.arg == "file" and is_stderr(k.value) for k in node.keywords):
                found.append((node.lineno, "print(..., file=sys.stderr)"))
        elif isinstance(func, ast.Attribute) and func.attr in ("write", "writelines") and is_stderr(func.value):
            found.append((node.lineno, f"sys.stderr.{func.attr}(...)"))
    return found


def test_the_scan_sees_each_way_of_writing_to_stderr():
    source = (
        "import sys\n"
        "from sys import stderr\n"
        "print('a', file=sys.stderr)\n"
        "print('b', end='', file=sys.stderr, flush=True)\n"
        "sys.stderr.write('c')\n"
        "print('d', file=stderr)\n"
        "print('e')\n"
        "print('f', file=sys.stdout)\n"
        "sys.stdout.write('g')\n"
        "sys.stderr.flush()\n"
    )
    assert [line for line, _ in stderr_writes(source)] == [3, 4, 5, 6]


def package_files():
    return sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_no_module_writes_to_stderr_but_through_the_logger():
    assert package_files(), PACKAGE
    found = []
    for path in package_files():
        name = path.relative_to(PACKAGE.parent).as_posix()
        if name in ALLOWED:
            continue
        found += [f"{name}:{line}: {what}" for line, what in sorted(stderr_writes(path.read_text(encoding="utf-8")))]
    assert not found, "say it with articlekit.core.log's log.info/warning/error instead:\n" + "\n".join(found)


def test_every_allowed_file_still_writes_to_stderr():
    for name in ALLOWED:
        assert stderr_writes((PACKAGE.parent / name).read_text(encoding="utf-8")), f"{name}: take it off ALLOWED"


def test_an_experiment_run_in_this_process_logs_to_the_stderr_of_the_moment():
    """configure_logging without a log file writes to sys.stderr as it is
    when a message is said: the stream it found may be closed by then
    (pytest's capsys of an earlier test), which once printed
    "--- Logging error ---" into every later test's stderr."""
    from articlekit.experiment.artifacts import configure_logging

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    first, second = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(first):
            configure_logging(None)
        first.close()
        with contextlib.redirect_stderr(second):
            logging.getLogger("experiment").info("still here")
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])
    assert second.getvalue().rstrip().endswith("experiment: still here")
