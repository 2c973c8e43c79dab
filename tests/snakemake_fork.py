"""Snakemake runs for the tests, each forked from one interpreter that has
already imported Snakemake: a module's own server (conftest's `server`,
SnakemakeServer.start, like Popen) or the pytest worker's (run(), like
subprocess.run).

A `snakemake` process spends about two seconds of CPU importing itself (and
its plugins: pandas, SQLAlchemy, boto3...) before it reads the Snakefile;
the fault tests make some forty runs, most of them over in a second after
that. So a server process imports Snakemake once, and nothing of the
project, and forks a child per run. The child then sets up what a fresh
`snakemake` process would have (working folder, environment, sys.path from
PYTHONPATH, a sitecustomize found there, argv, its own process group as
`start_new_session` gives), calls snakemake.cli.main as the console script
does, and exits with its code. The project's code (articlekit, experiments)
is imported in the child, from the copy under test, and every job is a new
process as before: only the import of Snakemake is shared.

Protocol (one JSON object per line): the client writes
{"id", "cwd", "argv", "env", "log"} and optionally "patch", a
"FILE.py:function" the child calls before Snakemake's main (e.g.
tests/snakemake_plan.py:record_plan); the server answers {"id", "pid"} when
the child is forked and {"id", "code"} when it has ended (negative: killed
by that signal, as subprocess reports it). When its input closes, the
server kills the process groups of any run still going and exits.
"""

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as RunTimeout

# Imported before any fork: Snakemake and the libraries a run loads later
# (the project's config check needs yaml and jsonschema).
PRELOAD = ["snakemake.cli", "snakemake.api", "smart_open", "snakemake.report.html_reporter", "yaml", "jsonschema"]


# --- the server (run as a script) ---------------------------------------------------


def serve():
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    base_path = sys.path[1:]  # without this script's own folder
    console_scripts = os.path.dirname(sys.executable)
    children, pending = {}, b""
    while True:
        ready, _, _ = select.select([0], [], [], 0.02 if children else None)
        if ready:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in filter(None, lines):
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    run_child(request, base_path, console_scripts)  # never returns
                children[pid] = request["id"]
                answer({"id": request["id"], "pid": pid})
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            answer({"id": children.pop(pid), "code": os.waitstatus_to_exitcode(status)})
    for pid in children:  # the client is gone: leave nothing running
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def answer(message):
    os.write(1, (json.dumps(message) + "\n").encode())


def run_child(request, base_path, console_scripts):
    code = 1
    try:
        os.setsid()
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # found again from this run's TMPDIR, not the server's
        # sys.path as `python .../bin/snakemake` with this PYTHONPATH builds it
        extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [console_scripts, *extra, *base_path]
        import importlib

        importlib.invalidate_caches()
        if any(os.path.isfile(os.path.join(p, "sitecustomize.py")) for p in extra):
            importlib.import_module("sitecustomize")
        sys.argv = ["snakemake", *request["argv"]]
        if request.get("patch"):
            import importlib.util

            path, _, function = request["patch"].rpartition(":")
            spec = importlib.util.spec_from_file_location("snakemake_patch", path)
            patch = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(patch)
            getattr(patch, function)()
        from snakemake.cli import main

        try:
            code = main()
        except SystemExit as done:
            code = done.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        # what the interpreter does at exit, then leave without unwinding
        # into the server's loop
        import atexit

        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# --- the client ---------------------------------------------------------------------


class Run:
    def __init__(self):
        self.started, self.ended = Future(), Future()

    @property
    def pid(self):
        return self.started.result(timeout=60)

    def wait(self, timeout=600):
        return self.ended.result(timeout=timeout)

    def poll(self):
        return self.ended.result() if self.ended.done() else None


class SnakemakeServer:
    """start(cwd, argv, env, log) -> Run: like Popen(["snakemake", *argv],
    cwd=cwd, env=env, stdout=log, stderr=STDOUT, start_new_session=True)."""

    def __init__(self):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.process = subprocess.Popen(
            [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd="/"
        )
        self.runs, self.lock, self.next_id = {}, threading.Lock(), 0
        threading.Thread(target=self._read, daemon=True).start()

    def start(self, cwd, argv, env, log, patch=None):
        with self.lock:
            self.next_id += 1
            run = self.runs[self.next_id] = Run()
            line = json.dumps(
                {
                    "id": self.next_id,
                    "cwd": str(cwd),
                    "argv": list(argv),
                    "env": dict(env),
                    "log": str(log),
                    "patch": patch,
                }
            )
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()
        return run

    def _read(self):
        for line in self.process.stdout:
            message = json.loads(line)
            run = self.runs[message["id"]]
            if "pid" in message:
                run.started.set_result(message["pid"])
            else:
                run.ended.set_result(message["code"])
        for run in self.runs.values():  # the server died: fail the runs waiting on it
            for future in (run.started, run.ended):
                if not future.done():
                    future.set_exception(RuntimeError("the Snakemake fork server ended"))

    def run(self, cwd, argv, env, timeout=900):
        """-> subprocess.CompletedProcess of `snakemake ARGV`, as
        subprocess.run(..., stderr=subprocess.STDOUT, text=True) gives it:
        both streams in .stdout, in the order written. Past `timeout` s the
        run's process group is killed and subprocess.TimeoutExpired raised."""
        handle, log = tempfile.mkstemp(prefix="snakemake-fork-", suffix=".log")
        os.close(handle)
        try:
            run = self.start(cwd, argv, env, log)
            try:
                code = run.wait(timeout=timeout)
            except RunTimeout:
                os.killpg(run.pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(["snakemake", *argv], timeout) from None
            with open(log, encoding="utf-8", errors="replace") as output:
                return subprocess.CompletedProcess(["snakemake", *argv], code, output.read(), "")
        finally:
            os.unlink(log)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


_SHARED, _SHARED_LOCK = None, threading.Lock()


def run(cwd, argv, env, timeout=900):
    """SnakemakeServer.run on this process's own server (one per pytest
    worker), started on first use and closed as the process exits: for a
    helper that runs `snakemake` and reads its output."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = SnakemakeServer()
            atexit.register(_SHARED.close)
    return _SHARED.run(cwd, argv, env, timeout)


if __name__ == "__main__":
    serve()
