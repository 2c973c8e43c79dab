"""A user's mistake is one line naming where it is; articlekit's bug keeps its traceback.

Every error articlekit raises about its input is an ArticlekitError
(articlekit/core/errors.py). The command line catches that, and an OSError
naming the file it could not open, once, in run_command: one line,
`COMMAND: where: message`, exit status 1. Nothing else is caught there, and
no command's main() catches ValueError or Exception on its own, so a bug
(a ValueError no check of articlekit raised) is shown with its traceback
instead of being dressed as a user error. Every command, the steps the
workflow runs as modules included, answers --help under python -m articlekit.
"""

import ast
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from articlekit.__main__ import COMMANDS, MODULES, main
from articlekit.core.errors import ArticlekitError, run_command

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "articlekit"

# Exceptions of articlekit that are not about the user's input: each says why.
NOT_A_USER_ERROR = {
    "articlekit.core.jsonio.NonStandardJSON": "turned into a JSONDecodeError with its position at once",
    "articlekit.core.jsonio.DiskFull": "the machine's state, an OSError that run_command prints as one line",
    "articlekit.render.preview.ValuesPending": "the preview waits for the build; never leaves the preview",
    "articlekit.render.preview.StopRequested": "a stop signal ending the preview, not a mistake",
    "articlekit.core.errors.Terminated": "SIGTERM unwinding a command as Ctrl-C does, not a mistake",
}


def package_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[1:3] == ("skeleton", "article"):
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def exception_classes():
    """{dotted name: class} of every exception class articlekit defines."""
    found = {}
    for name, path in package_modules():
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                cls = getattr(module, node.name)
                if issubclass(cls, BaseException):
                    found[f"{name}.{node.name}"] = cls
    return found


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_every_error_articlekit_raises_about_its_input_is_an_articlekit_error():
    classes = exception_classes()
    assert len(classes) > 20, sorted(classes)  # the scan finds them: ConfigError, BindError, ...
    outside = sorted(
        name for name, cls in classes.items() if not issubclass(cls, ArticlekitError) and name not in NOT_A_USER_ERROR
    )
    assert not outside, f"subclass articlekit.core.errors.ArticlekitError (or say why not): {outside}"


def test_an_error_says_where_what_and_the_fix_in_one_line():
    error = ArticlekitError("seed must be an integer", where="config.yaml:12", fix="write seed: 7")
    assert str(error) == "config.yaml:12: seed must be an integer; write seed: 7"
    assert isinstance(error, ValueError)  # an `except ValueError` written before it still catches it


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_no_commands_main_catches_what_is_not_articlekits():
    """A main() that catches ValueError or Exception turns a bug into a
    one-line message; it may catch ArticlekitError and its own classes."""
    broad = {"ValueError", "Exception", "BaseException", "TypeError", "KeyError", "RuntimeError"}
    found = []
    for name, path in package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in (node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main"):
            for handler in (n for n in ast.walk(function) if isinstance(n, ast.ExceptHandler)):
                caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                names = {getattr(c, "id", getattr(c, "attr", None)) for c in caught if c is not None}
                if handler.type is None or names & broad:
                    found.append(f"{path.relative_to(ROOT)}:{handler.lineno} catches {sorted(names) or 'everything'}")
    assert not found, "\n".join(found)


def corrupt_artifact(tmp_path):
    path = tmp_path / "results" / "parity.json"
    path.parent.mkdir()
    path.write_text('{"experiment": "parity",\n  "values": {"x": 1,}\n}\n', encoding="utf-8")
    return path


@pytest.mark.workflow  # runs python -m articlekit values
def test_a_corrupt_artifact_is_one_line_naming_its_line(tmp_path):
    path = corrupt_artifact(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "articlekit", "values", str(path), "--out", str(tmp_path / "v.json")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"values: {path}:2:"), done.stderr
    assert "not valid JSON" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "v.json").exists()


def test_a_missing_input_is_one_line_naming_the_file(tmp_path, capsys):
    assert main(["values", str(tmp_path / "results/nope.json"), "--out", str(tmp_path / "v.json")]) == 1
    err = capsys.readouterr().err
    assert err == f"values: {tmp_path / 'results/nope.json'}: No such file or directory\n", err


def test_a_bug_keeps_its_traceback(tmp_path, monkeypatch):
    """A ValueError that no check of articlekit raised (here, planted in the
    merge of values) is not a user error: it leaves run_command as it is."""
    import articlekit.data.values as values

    def merge_with_a_bug(artifacts):
        return int("not a number")  # ValueError, as a slip in articlekit's own code would raise

    monkeypatch.setattr(values, "merge", merge_with_a_bug)
    artifact = tmp_path / "environment.json"
    artifact.write_text(
        json.dumps(
            {
                "experiment": "environment",
                "script": "experiments/environment.py",
                "values": {},
                "params": {},
                "versions": {},
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="invalid literal"):
        main(["values", str(artifact), "--out", str(tmp_path / "v.json")])


def test_a_bug_in_a_module_the_workflow_runs_prints_its_traceback(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from articlekit.core.errors import run_command\n"
            "def main(argv): raise ValueError('a slip in the code')\n"
            "sys.exit(run_command('step', main, []))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1 and "Traceback" in done.stderr and "a slip in the code" in done.stderr, done.stderr


def test_each_step_the_workflow_runs_as_a_module_is_a_command():
    assert set(MODULES) <= {module for module, _ in COMMANDS.values()}
    for module in MODULES:
        source = inspect.getsource(importlib.import_module(module))
        assert "run_command(" in source, f"{module}: its __main__ guard runs main() through run_command"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_answers_help_with_exit_0(command, capsys):
    try:
        code = main([command, "--help"])
    except SystemExit as exc:
        code = exc.code
    assert (code or 0) == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("joined", [True, False], ids=["one stream", "log and terminal"])
def test_a_warning_is_said_once_where_log_and_terminal_are_one(joined):
    done = subprocess.run(
        [sys.executable, "-c", "from articlekit.render.page import say_in_log_and_terminal as say; say('a warning')"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if joined else subprocess.PIPE,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.count("a warning") == 1  # twice, before, where stderr was stdout
    if not joined:
        assert done.stderr.count("a warning") == 1


def test_run_command_returns_what_main_returns():
    assert run_command("x", lambda argv: 3, []) == 3


def test_sigterm_unwinds_a_command_and_leaves_no_work_folder(tmp_path):
    """Snakemake ends a job with SIGTERM: a format's work folder (a
    TemporaryDirectory) must go with it, as it does on Ctrl-C."""
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import sys, tempfile, time\n"
        "from articlekit.core.errors import run_command\n"
        "def main(argv):\n"
        f"    with tempfile.TemporaryDirectory(dir={str(tmp_path)!r}, prefix='.pdf-x-'):\n"
        "        print('working', flush=True)\n"
        "        time.sleep(60)\n"
        "sys.exit(run_command('pdf', main, []))\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "working\n"
    assert list(tmp_path.glob(".pdf-*"))
    child.send_signal(signal.SIGTERM)
    start = time.monotonic()
    _, err = child.communicate(timeout=30)
    assert time.monotonic() - start < 10
    assert child.returncode == 143 and "pdf: stopped (SIGTERM)" in err
    assert not list(tmp_path.glob(".pdf-*"))
