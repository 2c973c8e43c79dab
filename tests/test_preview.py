"""preview: `python -m articlekit preview` serves the article on 127.0.0.1,
re-renders it on each save, shows problems as a banner over the last good
render, and never writes its reload script into a file. It answers only
requests addressed to it, gives a silent connection no thread and closes
it, and stops within seconds of Ctrl-C, SIGTERM or SIGHUP whatever is
open or under way, however it was started."""

import fcntl
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

from articlekit.core.jsonio import read_json, write_json
from articlekit.render.preview_server import IDLE_TIMEOUT, MAX_OPEN, WORKERS
from tests.child_processes import popen
from tests.test_render import make_article

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parent.parent
WAIT = 120  # seconds; generous, the test machine is shared (speed lives in benchmarks/preview.py)
STOP_WITHIN = 10  # seconds from a stop signal to the exit; it takes well under 2 (benchmarks/preview.py --stops)
SCRIPT_MARK = "articlekit preview: reload"


def python_env(package_parent=ROOT):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_parent), env.get("PYTHONPATH")]))
    return env


class Served:
    """A preview running in a fixture project, and what it serves."""

    def __init__(self, project, env=None, args=(), ignored=()):
        self.project = project
        self.article = project / "article" / "index.qmd"
        # a session of its own, so that a test can kill -9 it with the Pandoc it runs; the stop
        # signals' default disposition, whatever pytest inherited (then `ignored` ignored)
        self.proc = popen(
            [
                sys.executable,
                "-m",
                "articlekit",
                "preview",
                "article/index.qmd",
                "--port",
                "0",
                "--interval",
                "0.05",
                *args,
            ],
            cwd=project,
            env={**python_env(), **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            ignored=ignored,
        )
        first = self.proc.stdout.readline()
        assert first.startswith("preview: http://127.0.0.1:"), first
        self.url = first.split()[1]
        self.address = (urlsplit(self.url).hostname, urlsplit(self.url).port)
        self.renderer_line = self.proc.stdout.readline()  # which renderer the build uses, and this preview

    def get(self, path=""):
        with urllib.request.urlopen(self.url + path, timeout=90) as response:
            return response.read().decode("utf-8")

    def state(self):
        return json.loads(self.get("__preview__/state"))

    def wait_for(self, condition, what):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            page = self.get()
            if condition(page):
                return page
            time.sleep(0.1)
        pytest.fail(f"the served page never showed {what}; state: {self.state()}")

    def edit(self, old, new):
        text = self.article.read_text(encoding="utf-8")
        assert old in text
        self.article.write_text(text.replace(old, new, 1), encoding="utf-8")

    def stop(self, signum=signal.SIGINT):
        self.proc.send_signal(signum)
        out, _ = self.proc.communicate(timeout=90)
        return self.proc.returncode, out

    def request(self, host, version="HTTP/1.1"):
        """GET / over a raw socket with this Host: header (None: none); -> (status line, body)."""
        head = [f"GET / {version}"] + ([f"Host: {host}"] if host is not None else []) + ["Connection: close"]
        with socket.create_connection(self.address, timeout=90) as conn:
            conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
            answer = b"".join(iter(lambda: conn.recv(65536), b"")).decode("utf-8")
        status, _, rest = answer.partition("\r\n")
        return status, rest.partition("\r\n\r\n")[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    project = tmp_path_factory.mktemp("preview")
    article, values = make_article(project / "article")
    write_json(project / "build" / "values.json", values)
    (project / "experiments").mkdir()
    (project / "experiments" / "demo.py").write_text("# an experiment\n", encoding="utf-8")
    (project / "config.yaml").write_text("renderer: pandoc\n", encoding="utf-8")
    preview = Served(project)
    preview.wait_for(lambda page: "Numbers in prose" in page, "the first render")
    yield preview
    if preview.proc.poll() is None:
        preview.proc.kill()


@pytest.fixture(autouse=True)
def as_the_module_found_it(request):
    """The served project as every test of the module finds it, whatever
    the one before it edited or left half done: the article, its values and
    the experiment put back, and the page served clean of banners again."""
    if "served" not in request.fixturenames:
        yield
        return
    served = request.getfixturevalue("served")
    values = served.project / "build" / "values.json"
    # the experiment before the values: an experiment newer than the values
    # asks for Snakemake, and values written after it are what Snakemake writes
    files = [served.project / "experiments" / "demo.py", values, served.article]
    kept = {path: path.read_bytes() for path in files}
    yield
    changed = [path for path, data in kept.items() if not path.exists() or path.read_bytes() != data]
    if not changed or served.proc.poll() is not None:
        return
    if files[0] in changed and values not in changed:
        changed.insert(1, values)
    before = served.state()["version"]
    for path in changed:
        path.write_bytes(kept[path])
    served.wait_for(
        lambda page: (
            (state := served.state())["version"] > before
            and not (state["problems"] or state["notice"] or state["waiting"])
        ),
        "the page as the module's tests find it",
    )


def test_it_listens_on_localhost_only(served):
    assert served.url.startswith("http://127.0.0.1:")


def test_an_edit_is_rendered_and_the_open_page_reloads(served):
    before = served.state()["version"]
    served.edit("## Numbers in prose", "## Numbers in prose, edited")
    page = served.wait_for(lambda page: "Numbers in prose, edited" in page, "the edited heading")
    assert served.state()["version"] > before
    # the served page carries the reload script, polling the version
    assert SCRIPT_MARK in page and "/__preview__/state" in page
    on_disk = (served.project / "build" / "preview" / "article.html").read_text(encoding="utf-8")
    assert "Numbers in prose, edited" in on_disk


def test_a_failed_claim_shows_a_banner_over_the_last_good_render(served):
    served.edit('expect="< 1e-12"', 'expect="> 1"')
    line = next(n for n, text in enumerate(served.article.read_text().splitlines(), 1) if 'expect="> 1"' in text)
    page = served.wait_for(lambda page: "preview-banner" in page, "a banner")
    assert f"index.qmd:{line}: claim &#x27;demo.parity.max_abs_diff &gt; 1&#x27; failed" in page
    assert "Numbers in prose" in page  # the last good render, beneath
    served.edit('expect="> 1"', 'expect="< 1e-12"')
    served.wait_for(lambda page: "preview-banner" not in page, "the banner gone once the claim holds")


def test_an_unknown_key_shows_a_banner_with_its_line(served):
    served.edit("demo.params.n_tokens", "demo.params.n_tokenz")
    line = next(n for n, text in enumerate(served.article.read_text().splitlines(), 1) if "n_tokenz" in text)
    page = served.wait_for(lambda page: "preview-banner" in page, "a banner")
    assert f"index.qmd:{line}: unknown key" in page and "n_tokenz" in page
    served.edit("demo.params.n_tokenz", "demo.params.n_tokens")
    served.wait_for(lambda page: "preview-banner" not in page, "the banner gone once the key is fixed")


def test_it_says_which_renderer_the_build_uses(served):
    assert served.renderer_line.startswith("preview: the build renders with Pandoc ")
    assert "(config.yaml renderer: pandoc); this preview renders with Pandoc" in served.renderer_line


def test_a_typed_number_shows_the_builds_lint_message_as_a_banner(served):
    """The lint the build runs before it renders (rule lint_article): a
    number typed into the prose passes no preview that the build would stop."""
    served.edit("## Numbers in prose", "## Numbers in prose\n\nThe answer is 42.")
    line = next(n for n, text in enumerate(served.article.read_text().splitlines(), 1) if "answer is 42" in text)
    page = served.wait_for(lambda page: "preview-banner" in page, "a banner")
    banner = page.split('id="preview-banner"', 1)[1].split("</div>", 1)[0]
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "lint",
            "article/index.qmd",
            "--values",
            "build/values.json",
            "--out",
            "build/lint.txt",
        ],
        cwd=served.project,
        env=python_env(),
        capture_output=True,
        text=True,
    )
    assert built.returncode == 1
    finding = built.stderr.strip().splitlines()[-1]  # the build's words, after its count line
    assert finding.startswith(f"article/index.qmd:{line}: numeral '42' is typed, not bound")
    assert html.escape(finding) in banner
    assert "The answer is 42." in page  # the page beneath shows the text as saved
    served.edit("\n\nThe answer is 42.", "")
    served.wait_for(lambda page: "preview-banner" not in page, "the banner gone once the number is gone")


def test_a_changed_experiment_asks_for_snakemake(served):
    (served.project / "experiments" / "demo.py").write_text("# an experiment, edited\n", encoding="utf-8")
    page = served.wait_for(lambda page: "experiments changed: run snakemake" in page, "the experiments notice")
    assert "experiments/demo.py" in page
    # new values (snakemake ran) clear it
    values = served.project / "build" / "values.json"
    values.write_text(values.read_text(encoding="utf-8"), encoding="utf-8")
    served.wait_for(lambda page: "experiments changed" not in page, "the notice cleared by new values")


def test_the_reload_script_is_never_written_to_a_file(served):
    written = [p for p in served.project.rglob("*") if p.is_file() and SCRIPT_MARK in p.read_text(errors="ignore")]
    assert written == []


def test_a_second_preview_of_the_project_refuses_naming_the_first(served):
    """Two previews would write the same build/preview/ (the page each one
    checks before showing it included): the second says which process and
    address hold it and how to stop it, and exits non-zero."""
    second = subprocess.run(
        [sys.executable, "-m", "articlekit", "preview", "article/index.qmd", "--port", "0"],
        cwd=served.project,
        env=python_env(),
        capture_output=True,
        text=True,
        timeout=90,
    )  # it serves forever if let
    assert second.returncode != 0, second.stdout
    assert "preview: http://" not in second.stdout  # it never served
    message = second.stderr
    assert "already" in message and "build/preview" in message
    assert f"pid {served.proc.pid}" in message and served.url in message
    assert f"kill {served.proc.pid}" in message and "Ctrl-C" in message
    assert "Traceback" not in message
    served.edit("## Numbers in prose", "## Numbers in prose, edited once more")
    page = served.wait_for(lambda page: "edited once more" in page, "an edit after the second start")
    assert "preview-banner" not in page  # the first preview is undisturbed


def test_values_rewritten_by_snakemake_keep_the_last_page_and_then_rebind(served):
    """Snakemake removes build/values.json before the job that rewrites it:
    the preview waits for it, the last page beneath, and binds the new
    values when the file is back; no FileNotFoundError in the banner."""
    values = served.project / "build" / "values.json"
    document = read_json(values)
    before = served.state()["version"]
    # the page's first heading, whatever the module's other tests made of it
    last_good = re.search(r"<h2[^>]*>.*?</h2>", served.get(), re.S).group(0)
    try:
        values.unlink()
        served.wait_for(lambda page: served.state()["version"] > before, "a new version for the removed values")
        page = served.get()
        banner = page.split('id="preview-banner"', 1)[1].split("</div>", 1)[0]
        assert "Error" not in banner  # FileNotFoundError: 'build/values.json' was there
        assert "build/values.json is being rebuilt" in banner and "waiting" in banner
        assert last_good in page  # the last good page stays, beneath the banner
        document["values"]["demo.arrow"] = "bound again after the rewrite"
    finally:  # the values back, whatever failed: the module's other tests read them
        write_json(values, document)
    page = served.wait_for(lambda page: "bound again after the rewrite" in page, "the page bound to the new values")
    assert "preview-banner" not in page


def test_a_request_naming_another_host_is_refused_in_one_line(served):
    """A page of another site whose name was re-pointed at 127.0.0.1 (DNS
    rebinding) sends its own name in Host:; the preview answers its own
    names only."""
    port = served.address[1]
    for host, version in (
        ("evil.example", "HTTP/1.1"),
        (f"evil.example:{port}", "HTTP/1.1"),
        (f"127.0.0.1:{port + 1}", "HTTP/1.1"),
        (None, "HTTP/1.0"),
    ):
        status, body = served.request(host, version)
        assert status.split()[1] == "403", (host, status)
        assert body.count("\n") == 1 and body.startswith("refused: "), body
        assert ("no Host header" if host is None else repr(host)) in body and f"127.0.0.1:{port}" in body
        assert "Numbers in prose" not in body
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}", f"[::1]:{port}"):
        status, body = served.request(host)
        assert status.split()[1] == "200", (host, status)
        assert "Numbers in prose" in body


def test_silent_connections_hold_no_thread_and_are_closed_after_the_timeout(served):
    """200 connections that send nothing (1,000 of them held 1,002 threads):
    the thread count stays within the pool's, the open connections within
    MAX_OPEN, a real request still gets its page at once, and each silent one
    is closed by the server, the last ones after IDLE_TIMEOUT seconds."""
    process = psutil.Process(served.proc.pid)
    threads_before = process.num_threads()
    silent = [socket.create_connection(served.address, timeout=IDLE_TIMEOUT + 30) for _ in range(200)]
    opened = time.monotonic()
    try:
        most_threads, most_open = 0, 0
        while time.monotonic() < opened + 1:
            most_threads = max(most_threads, process.num_threads())
            most_open = max(most_open, sum(c.status == psutil.CONN_ESTABLISHED for c in process.net_connections("tcp")))
            time.sleep(0.05)
        assert most_threads <= threads_before + WORKERS, (threads_before, most_threads)
        assert most_open <= MAX_OPEN, most_open
        assert "Numbers in prose" in served.get()  # while they are open
        closed_after = []
        for conn in silent:
            assert conn.recv(1) == b""  # the server closed it (a timeout here: it never did)
            closed_after.append(time.monotonic() - opened)
        assert max(closed_after) > IDLE_TIMEOUT - 1, closed_after  # the newest by the timeout, not at once
    finally:
        for conn in silent:
            conn.close()
    assert process.num_threads() <= threads_before + WORKERS


def test_an_edit_of_the_projects_quarto_yml_above_the_article_is_rendered(tmp_path):
    """The article's settings in the project's _quarto.yml, outside the
    article's folder (the layout `articlekit new` writes): the preview
    watches that file too, and its edit is on the page."""
    project = tmp_path
    _, values = make_article(project / "article")
    settings = (project / "article/_quarto.yml").read_text(encoding="utf-8")
    (project / "article/_quarto.yml").unlink()
    (project / "_quarto.yml").write_text(
        settings.replace("css:\n    - style.css", "css:\n    - article/style.css").replace(
            "bibliography: references.bib", "bibliography: article/references.bib"
        ),
        encoding="utf-8",
    )
    write_json(project / "build" / "values.json", values)
    (project / "config.yaml").write_text("renderer: pandoc\n", encoding="utf-8")
    preview = Served(project)
    try:
        preview.wait_for(lambda page: 'id="TOC"' in page, "the first render, with its table of contents")
        settings = (project / "_quarto.yml").read_text(encoding="utf-8")
        assert "    toc: true\n" in settings
        (project / "_quarto.yml").write_text(settings.replace("    toc: true\n", "    toc: false\n"), encoding="utf-8")
        preview.wait_for(lambda page: 'id="TOC"' not in page, "the page without its table of contents")
    finally:
        preview.stop()


def test_ctrl_c_stops_it_cleanly(tmp_path):
    """A preview of its own: the module's, which the other tests share, runs on."""
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    preview = Served(tmp_path)
    preview.wait_for(lambda page: "Numbers in prose" in page, "a render")
    code, out = preview.stop()
    assert code == 0
    assert out.rstrip().endswith("preview: stopped")
    assert "Traceback" not in out


# A Pandoc that answers --version and then hangs: a preview running it sits
# in the middle of a render, its work folders on disk, until it is killed.
HANGING_PANDOC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "pandoc 3.6"; exit 0; fi
echo "$$" >> "$HANGING_PANDOC_LOG"
exec sleep 300
"""


def hanging_preview(project):
    """A preview of `project` in the middle of its first render, its Pandoc hanging."""
    pandoc, log = project / "hanging-pandoc", project / "hanging-pandoc.log"
    pandoc.write_text(HANGING_PANDOC)
    pandoc.chmod(0o755)
    log.unlink(missing_ok=True)
    preview = Served(project, env={"PYPANDOC_PANDOC": str(pandoc), "HANGING_PANDOC_LOG": str(log)})
    deadline = time.monotonic() + WAIT
    while not (log.exists() and log.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert log.exists(), f"the preview never ran its Pandoc: {preview.proc.poll()}"
    return preview


def preview_killed_mid_render(project):
    """kill -9 a preview (and its Pandoc) in the middle of a render; -> the
    work files and folders it left under build/preview/."""
    preview = hanging_preview(project)
    os.killpg(preview.proc.pid, signal.SIGKILL)
    preview.proc.wait(timeout=90)
    left = sorted(p.relative_to(project) for p in (project / "build" / "preview").rglob(".*"))
    assert any(p.name.startswith(".piece-") for p in left), left  # what the kill left behind
    return left


def test_a_preview_killed_with_sigkill_leaves_nothing_once_the_next_one_starts(tmp_path):
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    left = preview_killed_mid_render(tmp_path)
    preview = Served(tmp_path)  # the lock died with the killed one: this one starts
    try:
        preview.wait_for(lambda page: "Numbers in prose" in page, "a render")
        still_there = [p for p in left if (tmp_path / p).exists()]
        assert still_there == []
        assert list((tmp_path / "build" / "preview").rglob(".piece-*")) == []
    finally:
        assert preview.stop()[0] == 0


def test_a_build_removes_a_killed_previews_work_but_not_a_live_ones(tmp_path):
    """The render job (what snakemake runs) clears a killed preview's work
    folders as it clears its own kind; a running preview's stay."""
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "articlekit", *args],
            cwd=tmp_path,
            env=python_env(),
            check=True,
            capture_output=True,
            text=True,
        )

    run("bind", "article/index.qmd", "--values", "build/values.json", "--out", "build/bindings.json")

    def build():
        return run(
            "render",
            "article/index.qmd",
            "--bindings",
            "build/bindings.json",
            "--renderer",
            "pandoc",
            "--html",
            "build/article.html",
            "--md",
            "build/article.md",
        )

    left = preview_killed_mid_render(tmp_path)
    build()
    assert [p for p in left if (tmp_path / p).exists()] == []
    live = hanging_preview(tmp_path)
    try:
        live_work = sorted((tmp_path / "build" / "preview").rglob(".piece-*"))
        assert live_work  # the live preview's, in the middle of its render
        build()
        assert all(p.exists() for p in live_work)
    finally:
        os.killpg(live.proc.pid, signal.SIGKILL)
        live.proc.wait(timeout=90)


def assert_stopped_cleanly(preview, signum, sent_at):
    """The preview exited 0 within STOP_WITHIN seconds of the signal, said
    so, and left no work behind and its lock free."""
    out, _ = preview.proc.communicate(timeout=90)
    took = time.monotonic() - sent_at
    assert preview.proc.returncode == 0 and out.rstrip().endswith("preview: stopped"), out
    assert "Traceback" not in out
    assert took < STOP_WITHIN, f"{signum.name}: {took:.1f} s to stop"
    out_dir = preview.project / "build" / "preview"
    assert list(out_dir.rglob(".*")) == []  # the work folders, pieces included
    fd = os.open(out_dir / "preview.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: still held
    finally:
        os.close(fd)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_stops_it_within_seconds_whatever_connections_are_open(tmp_path, signum):
    """Ctrl-C, `kill PID` (as a second preview suggests) and a closed
    terminal each stop it cleanly, with silent connections and a request
    stopped halfway open. It is started as a background job of a script
    starts it, SIGINT ignored: its own handlers do not care."""
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    preview = Served(tmp_path, ignored=(signal.SIGINT,))
    preview.wait_for(lambda page: "Numbers in prose" in page, "a render")
    assert list((tmp_path / "build" / "preview").glob(".preview-*"))  # its work folder, while it runs
    silent = [socket.create_connection(preview.address, timeout=90) for _ in range(50)]
    halfway = socket.create_connection(preview.address, timeout=90)
    halfway.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{preview.address[1]}\r\n".encode())  # no blank line
    time.sleep(0.5)  # all of them accepted, the halfway one in a worker's hands
    try:
        sent_at = time.monotonic()
        preview.proc.send_signal(signum)
        assert_stopped_cleanly(preview, signum, sent_at)
        assert all(conn.recv(1) == b"" for conn in silent + [halfway])
    finally:
        for conn in silent + [halfway]:
            conn.close()
        if preview.proc.poll() is None:
            os.killpg(preview.proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_stop_signal_cuts_a_render_in_progress_short(tmp_path, signum):
    """The signal reaches the preview alone (`kill PID`, not its process
    group): it ends the Pandoc it runs itself, and each one its render
    starts after that, rather than wait for them."""
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    preview = hanging_preview(tmp_path)
    log = tmp_path / "hanging-pandoc.log"
    try:
        sent_at = time.monotonic()
        preview.proc.send_signal(signum)
        assert_stopped_cleanly(preview, signum, sent_at)
    finally:
        if preview.proc.poll() is None:
            os.killpg(preview.proc.pid, signal.SIGKILL)
    pandocs = [int(pid) for pid in log.read_text().split()]
    deadline = time.monotonic() + STOP_WITHIN
    while time.monotonic() < deadline and any(alive(pid) for pid in pandocs):
        time.sleep(0.05)
    assert [pid for pid in pandocs if alive(pid)] == []


def alive(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_sighup_that_nohup_ignored_stays_ignored(tmp_path):
    """`nohup python -m articlekit preview &` asks to outlive its terminal:
    SIGHUP inherited as ignored leaves it running; SIGTERM still stops it."""
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    preview = Served(tmp_path, ignored=(signal.SIGHUP,))
    try:
        preview.wait_for(lambda page: "Numbers in prose" in page, "a render")
        preview.proc.send_signal(signal.SIGHUP)
        time.sleep(1)
        assert preview.proc.poll() is None and "Numbers in prose" in preview.get()
        sent_at = time.monotonic()
        preview.proc.send_signal(signal.SIGTERM)
        assert_stopped_cleanly(preview, signal.SIGTERM, sent_at)
    finally:
        if preview.proc.poll() is None:
            os.killpg(preview.proc.pid, signal.SIGKILL)


def test_a_claim_failing_from_the_start_shows_the_marked_page_beneath_the_banner(tmp_path):
    article, values = make_article(tmp_path / "article")
    article.write_text(
        article.read_text(encoding="utf-8").replace('expect="< 1e-12"', 'expect="> 1"', 1), encoding="utf-8"
    )
    write_json(tmp_path / "build" / "values.json", values)
    preview = Served(tmp_path)
    try:
        page = preview.wait_for(lambda page: "Numbers in prose" in page, "a render")
        assert "preview-banner" in page and "claim &#x27;demo.parity.max_abs_diff &gt; 1&#x27; failed" in page
        assert "⚠ claim failed: &gt; 1" in page
    finally:
        assert preview.stop()[0] == 0


def test_the_built_html_is_the_same_with_or_without_the_preview_code(tmp_path):
    """`articlekit render` (what Snakemake runs) gives the same bytes from a
    copy of the package that has no preview module at all."""
    article, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    without = tmp_path / "without"
    shutil.copytree(ROOT / "articlekit", without / "articlekit", ignore=shutil.ignore_patterns("__pycache__"))
    (without / "articlekit" / "render" / "preview.py").unlink()
    pages = []
    for parent, name in ((ROOT, "with"), (without, "without")):
        env = python_env(parent)

        def run(*args, env=env):
            return subprocess.run(
                [sys.executable, "-m", "articlekit", *args], cwd=tmp_path, env=env, check=True, capture_output=True
            )

        run("bind", "article/index.qmd", "--values", "build/values.json", "--out", f"build/{name}.json")
        run(
            "render",
            "article/index.qmd",
            "--bindings",
            f"build/{name}.json",
            "--renderer",
            "pandoc",
            "--html",
            f"build/{name}.html",
            "--md",
            f"build/{name}.md",
        )
        pages.append((tmp_path / "build" / f"{name}.html").read_bytes())
    assert pages[0] == pages[1]
    assert SCRIPT_MARK.encode() not in pages[0]


@pytest.mark.quarto
def test_with_the_builds_renderer_quarto_the_page_is_quartos_behind_the_same_banner(tmp_path):
    """--renderer build where the build renders with Quarto: the page is
    the one `articlekit render` makes with Quarto; a typed number still
    shows as the banner over it."""
    from tests.test_quarto import require_quarto

    env = require_quarto()
    _, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "values.json", values)
    (tmp_path / "config.yaml").write_text("renderer: quarto\n", encoding="utf-8")
    preview = Served(tmp_path, env=env, args=["--renderer", "build"])
    try:
        assert "the build renders with Quarto " in preview.renderer_line
        assert "this preview renders with Quarto" in preview.renderer_line
        page = preview.wait_for(lambda page: "Built by Quarto " in page, "Quarto's page")
        assert "preview-banner" not in page and 'class="bound-value"' in page
        preview.edit("## Numbers in prose", "## Numbers in prose\n\nThe answer is 42.")
        page = preview.wait_for(lambda page: "preview-banner" in page, "a banner")
        assert "numeral &#x27;42&#x27; is typed, not bound" in page and "Built by Quarto " in page
        assert preview.state()["renderer"] == "quarto"
    finally:
        assert preview.stop()[0] == 0
