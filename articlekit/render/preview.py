"""Serve the article on 127.0.0.1 and re-render it on each save.

    python -m articlekit preview [article/index.qmd] [--values build/values.json] [--port 8000]
                                 [--renderer pandoc|build|quarto|auto]

Run it in the article's project or any folder inside it (article/ too):
it serves the project it finds there (the first folder up holding a
Snakefile and a config.yaml, articlekit.core.project), names it beside
the URL, and reads every path it is given from where it was started.
Prints the URL and the renderer the build uses (config.yaml's renderer:),
and opens nothing. Every few tenths of a second it looks at the
modification times of the article's folder (the .qmd, the extension, the
style), of the project's _quarto.yml and of the values file; when one changed, it lints the
article as the build's lint_article rule does (articlekit.article.lint),
binds it to the current values in-process (articlekit.article.bind; the
baseline and the values are parsed again only when their files change) and
renders it into build/preview/article.html. By default through Pandoc with
articlekit.render.pandoc_route's options and filters, chunk by chunk
(articlekit.render.incremental): only the sections whose text or bound
values changed go through Pandoc again, so a prose edit is on disk in a
fraction of a second, and the page is the one `articlekit render` makes of
the same text (tests/test_incremental.py). `--renderer build` renders with
the build's renderer instead, and `--renderer quarto` with Quarto: the page
whole, as `articlekit render` makes it (HTML only), seconds per save. The
open page asks the server for the render's version and reloads itself when
it changes: a few lines of script added to the page as it is served, never
written to a file.

- A typed number (the lint's finding, in the build's words), a failed
  claim, an unknown key or any other problem of the article shows
  as a banner at the top of the page, each line with its file:line; the
  last good render stays beneath it (when there is none yet, the page as a
  strict=false build shows it, with its claim-failure marks). Claims are
  checked as in the strict build (--strict false: the page always renders
  with its marks, and the banner lists the failed claims).
- A change to an experiment (experiments/, config.yaml, config/) cannot be
  previewed without rerunning it: the banner says "experiments changed: run
  snakemake", until build/values.json changes (snakemake rewrote it); then
  the page re-binds to the new values. The preview never runs the DAG.
- Snakemake removes build/values.json before the job that rewrites it: a
  missing (or not yet complete) values file is "being rebuilt, waiting",
  the last page stays, and the page re-binds once the file is back.
- Ctrl-C, SIGTERM (`kill PID`) or SIGHUP (its terminal closed) stops it
  within a second or two whatever is under way: the connections are closed
  (articlekit.render.preview_server), the render in progress is cut short
  (its Pandoc or Quarto ended), the work folder removed and the lock
  released; it prints "preview: stopped" and exits 0, for a stop asked for
  is no failure. The handlers are its own, so a SIGINT inherited as ignored
  (a background job of a script) stops it all the same; a SIGHUP inherited
  as ignored (nohup) stays ignored, as nohup asked.

The server answers only requests whose Host: names it (a page of another
site re-pointed at 127.0.0.1 gets 403), gives a silent connection no thread
and closes it after a few seconds: articlekit.render.preview_server.

One preview per output folder (build/preview/): a second one on the same
folder refuses to start, naming the process and address that hold it, for
two would overwrite each other's page. The hold is an flock on
build/preview/preview.lock, which the kernel releases when its process
ends, kill -9 included; nothing stale is left to clean by hand. The work
of a render (the pieces, the page being checked) goes in a folder named
after the preview's process (.preview-PID_START-*, articlekit.core.workfiles),
so a killed preview's is removed by the next preview and by the next
build, and a running one's never.

build/article.html is never touched: the preview writes build/preview/
only, and Snakemake's outputs are the same with or without this module.
"""

import argparse
import fcntl
import html
import json
import os
import re
import signal
import tempfile
import threading
import time
from pathlib import Path

import psutil

from articlekit.core.log import log
from articlekit.data.baseline import load_baseline
from articlekit.article.bind import BindError, bind
from articlekit.article.bindings import write_bindings
from articlekit.article.lint import lint
from articlekit.article.shortcodes import ShortcodeSyntaxError
from articlekit.core.errors import ArticlekitError
from articlekit.core.status import claim_said
from articlekit.core.text import short_text
from articlekit.render.incremental import IncrementalPage
from articlekit.core.jsonio import read_json
from articlekit.render.pagecheck import POLICY_META
from articlekit.render.preview_server import LocalHandler, PreviewServer
from articlekit.render.project import project_root
from articlekit.render.quarto_bind import quarto_pages
from articlekit.render.checks import check_output, check_page_structure, expected_literal_shortcodes
from articlekit.render.page import PREVIEW_FOLDER, PREVIEW_WORK_PREFIX, remove_stale_preview_folders, render
from articlekit.render.renderers import CHOICES, RenderError, choose, display_name, version
from articlekit.core.project import NoProject, project_folder
from articlekit.core.sources import SourceError, load_yaml, read_text
from articlekit.core.workfiles import owner_tag

STATE_PATH = "/__preview__/state"
EXPERIMENT_PATHS = ("experiments", "config.yaml", "config")

# Served, never written: poll the version, reload when a new render (or a
# new problem) exists. Polling keeps it to plain http.server.
RELOAD_SCRIPT = """<script>/* articlekit preview: reload on a new render */
(function () {{
  var seen = {version};
  setInterval(function () {{
    fetch("{state}", {{cache: "no-store"}}).then(function (r) {{ return r.json(); }})
      .then(function (s) {{ if (s.version !== seen) location.reload(); }}, function () {{}});
  }}, 250);
}})();</script>
"""
BANNER = (
    '<div id="preview-banner" role="alert" style="position:sticky;top:0;z-index:1000;margin:0 0 1rem;'
    'padding:.6rem 1rem;background:#fde8e8;color:#7a1414;border:2px solid #d33;border-radius:4px;'
    'font:14px/1.45 system-ui,sans-serif;white-space:pre-wrap">{}</div>'
)
NO_RENDER = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>preview</title></head><body></body></html>"


class AlreadyRunning(ArticlekitError):
    """Another preview holds the output folder."""


class PreviewLock:
    """The output folder's lock: an flock on OUT/preview.lock, held as long
    as this process keeps the file open, and released by the kernel when
    it ends however it ends (a pid file would go stale at kill -9). The
    file holds who has it (pid, address), for the message of the next one;
    it is never removed, for a removed lock file lets two processes lock two
    different files of the same name."""

    NAME = "preview.lock"

    def __init__(self, out_dir):
        self.path = Path(out_dir) / self.NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by Pandoc (PEP 446)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 4096, 0).decode("utf-8", "replace")
            os.close(self.fd)
            raise AlreadyRunning(self.refusal(holder)) from None
        self.describe(url=None)

    def describe(self, url):
        """Write who holds the lock, for the message of a second preview."""
        holder = json.dumps({"pid": os.getpid(), "url": url, "cwd": os.getcwd()}).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, holder, 0)

    def refusal(self, holder):
        try:
            who = json.loads(holder)
            pid, url, cwd = int(who["pid"]), who.get("url") or "(still starting)", who.get("cwd")
        except (ValueError, KeyError, TypeError):  # it has the lock but has not written yet
            return (
                f"another preview is already running on {self.path.parent}/ (it is starting); "
                "stop it (Ctrl-C in its terminal), or give this one its own --out folder"
            )
        return (
            f"another preview is already running on {self.path.parent}/: pid {pid}, serving {url}"
            f"{f' from {cwd}' if cwd and cwd != os.getcwd() else ''}. Open that page, or stop that preview "
            f"(Ctrl-C in its terminal, or `kill {pid}`) and start this one again; two previews of one folder "
            "would overwrite each other's page (give this one its own --out folder to run both)"
        )

    def release(self):
        if self.fd is not None:
            os.close(self.fd)  # closing the file releases the flock
            self.fd = None


class ValuesPending(Exception):
    """The values file is missing or half-written: Snakemake is rewriting it."""


class Snapshot:
    """Modification times of the files under some paths; hidden files and
    folders (Quarto's .quarto/), the excluded folders (the preview's own
    output, should the article sit above it) and the pages Quarto's own
    render writes beside a text (article/index.html, article/index_files/:
    an author's `quarto render` or `quarto preview` beside this one is no
    edit) left out."""

    def __init__(self, paths, exclude=()):
        self.paths = [Path(p) for p in paths]
        self.exclude = [Path(p).resolve() for p in exclude]
        self.times = self.read()

    def read(self):
        times, pages = {}, {}
        for root in self.paths:
            folder = root.is_dir()
            files = root.rglob("*") if folder else [root] if root.is_file() else []
            for f in files:
                hidden = any(part.startswith(".") for part in f.relative_to(root.parent).parts)
                if f.is_file() and not hidden and not any(f.resolve().is_relative_to(x) for x in self.exclude):
                    if not (folder and quartos_page(f, root, pages)):
                        times[f] = f.stat().st_mtime_ns
        return times

    def changed(self):
        """-> the files added, removed or modified since the last call."""
        now = self.read()
        changed = sorted(str(f) for f in set(now) | set(self.times) if now.get(f) != self.times.get(f))
        self.times = now
        return changed


def quartos_page(path, root, pages):
    """True where path, under the folder root, is or lies in a page Quarto
    writes beside a text of its folder (quarto_bind.quarto_pages); pages
    memoises each folder's."""
    for folder in [path.parent, *path.parent.parents]:
        if not folder.is_relative_to(root):
            return False
        name = path.relative_to(folder).parts[0]
        if folder not in pages:
            pages[folder] = quarto_pages([entry.name for entry in os.scandir(folder)])
        if name in pages[folder]:
            return True
    return False


class Preview:
    """The last good render, the problems of the latest attempt, and a version
    that changes whenever either does."""

    def __init__(self, article, values, out_dir, strict=True, baseline=None, renderer="pandoc"):
        self.article, self.values, self.out_dir, self.strict = Path(article), Path(values), Path(out_dir), strict
        self.renderer = renderer  # "pandoc" (piece by piece) or "quarto" (the page whole, as the build does)
        self.baseline = baseline and Path(baseline)  # for {{< departures >}}, as the bind rule passes it
        self.html_path = self.out_dir / "article.html"
        self.page, self.problems, self.notice, self.waiting, self.version = None, [], None, None, 0
        self.lock = threading.Lock()
        # this process's work (pieces, the page being checked), named after it:
        # a killed preview's is found and removed, a running one's is left alone
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.work = tempfile.TemporaryDirectory(dir=self.out_dir, prefix=f"{PREVIEW_WORK_PREFIX}{owner_tag()}-")
        self.work_dir = Path(self.work.name)
        self.pages = IncrementalPage(self.article, self.work_dir / "pieces")
        self.structure_checked = None  # what the provenance table's check last passed on
        self.inputs = {}  # path -> (mtime, size, parsed): the baseline and values, parsed once per version

    def parsed(self, path, parse):
        """A file parsed again only when its modification time or size changed
        (parsing the baseline took 0.4 s of each edit)."""
        stat = Path(path).stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self.inputs.get(path)
        if cached is None or cached[0] != stamp:
            cached = self.inputs[path] = (stamp, parse(path))
        return cached[1]

    def close(self):
        """Remove this preview's work folder."""
        self.work.cleanup()

    def values_now(self):
        """The values, parsed; ValuesPending while Snakemake rewrites them (it
        removes its outputs before the job that writes them again)."""
        try:
            return self.parsed(self.values, read_json)
        except FileNotFoundError:
            raise ValuesPending(
                f"{self.values} is being rebuilt (snakemake removed it to write it again): "
                "waiting; the page shows the last values until it is back"
            ) from None
        except ValueError as exc:  # written whole by jsonio, but maybe not by whoever wrote this one
            raise ValuesPending(
                f"{self.values} is not complete yet ({exc}): waiting for it to be written "
                "whole; the page shows the last values"
            ) from None

    def rebuild(self):
        """Lint, bind and render; keep the last good page when that fails."""
        problems, page, typed = [], None, []
        try:
            typed = self.typed_numbers()
            page, problems = self.bind_and_render(self.strict)
        except ValuesPending as exc:
            # not a problem of the article: the last page and its problems stand
            with self.lock:
                self.waiting, self.version = str(exc), self.version + 1
            return True
        except BindError as exc:
            problems = exc.problems
            if self.page is None and self.strict:
                # nothing shown yet: a page with its claim-failure marks beats a blank one
                page = self.try_lenient_render()
        except (RenderError, OSError, ValueError) as exc:
            problems = [f"{type(exc).__name__}: {exc}"]
        problems = typed + problems
        with self.lock:
            self.page = page or self.page
            self.problems, self.waiting = problems, None
            self.version += 1
        return not problems

    def typed_numbers(self):
        """The build's lint (rule lint_article), on the text as saved: its
        findings, each `file:line: numeral '...' ...` as the build prints
        them. The page still renders beneath them; the build would stop."""
        try:
            findings, _ = lint(str(self.article), read_text(self.article), self.values_now()["values"])
        except ShortcodeSyntaxError:
            return []  # bind names it, with its line
        return findings

    def bind_and_render(self, strict):
        """-> (the page's bytes, the failed claims as file:line lines)."""
        self.pages.rendered = 0
        text = read_text(self.article)
        baseline = self.parsed(self.baseline, load_baseline) if self.baseline else None
        document = bind(str(self.article), text, self.values_now(), strict, baseline)
        if self.renderer == "quarto":
            return self.render_whole(document), self.claim_problems(document)
        # only the chunks whose text or bindings changed go through Pandoc
        page = self.pages.render(document)
        # the checks `articlekit render` makes, on the page before it is shown;
        # the provenance table's check reads only the pieces with its anchors
        # (parsing the whole page took a quarter of a second)
        staged, tables = self.work_dir / "article.checked.html", self.work_dir / "provenance.checked.html"
        staged.write_text(page, encoding="utf-8")
        table_html = "\n".join(f for f in self.pages.fragments_now if 'id="v-' in f)
        # checked again only when the table or where it is placed may have changed
        structure = (table_html, document["provenance_md"], len(re.findall(r"provenance\s*>}}", text)))
        try:
            check_output(staged, expected_literal_shortcodes(text, document), self.html_path, self.article)
            if structure != self.structure_checked:
                tables.write_text(table_html, encoding="utf-8")
                check_page_structure(text, document["provenance_md"], tables)
                self.structure_checked = structure
        except RenderError:
            staged.unlink()
            raise
        os.replace(staged, self.html_path)  # whole or not at all: the benchmark and browsers read it
        return self.html_path.read_bytes(), self.claim_problems(document)

    @staticmethod
    def claim_problems(document):
        return [
            f"{c['location']}: {claim_said(c)}: value {short_text(c['value'])}"
            for c in document["claims"]
            if not c["holds"]
        ]

    def render_whole(self, document):
        """The page as `articlekit render` makes it with this renderer
        (Quarto: the build's route, slower; HTML only), from the bindings
        just made, with the same checks; -> its bytes."""
        bindings = self.work_dir / "bindings.json"
        write_bindings(bindings, document)
        render(self.article, bindings, self.renderer, self.html_path)
        return self.html_path.read_bytes()

    def try_lenient_render(self):
        try:
            return self.bind_and_render(strict=False)[0]
        except (BindError, RenderError, OSError, ValueError, ValuesPending):
            return None

    def set_notice(self, notice):
        with self.lock:
            if notice != self.notice:
                self.notice, self.version = notice, self.version + 1

    def served_page(self):
        """The page as served: banner and reload script added to the last good render."""
        with self.lock:
            page, lines, version = self.page, list(self.problems), self.version
            lines[:0] = [line for line in (self.waiting, self.notice) if line]
        # the build's own policy forbids the reload script's poll; the
        # server sends the preview's (preview_server) with every response
        text = (page or NO_RENDER.encode()).decode("utf-8").replace(POLICY_META, "", 1)
        if page is None and not lines:
            lines = ["no render yet"]
        banner = BANNER.format(html.escape("\n".join(["⚠ " + line for line in lines]))) if lines else ""
        script = RELOAD_SCRIPT.format(version=version, state=STATE_PATH)
        text = insert_after_body_tag(text, banner)
        at = text.rfind("</body>")
        at = len(text) if at < 0 else at
        return (text[:at] + script + text[at:]).encode("utf-8")

    def state(self):
        with self.lock:
            return {
                "version": self.version,
                "problems": list(self.problems),
                "notice": self.notice,
                "waiting": self.waiting,
                "renderer": self.renderer,
            }


def insert_after_body_tag(text, snippet):
    start = text.find("<body")
    end = text.find(">", start) + 1 if start >= 0 else 0
    return text[:end] + snippet + text[end:]


def make_handler(preview):
    class Handler(LocalHandler):
        def do_GET(self):
            path = self.path.split("?")[0]
            if path == STATE_PATH:
                self.send(200, "application/json", json.dumps(preview.state()).encode())
            elif path in ("/", "/index.html", "/article.html"):
                self.send(200, "text/html; charset=utf-8", preview.served_page())
            else:
                self.send(404, "text/plain", b"not found: the preview serves / only (figures are embedded)\n")

        def send(self, status, kind, body):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


def outcome(preview, ok):
    """The terminal's line for a rebuild."""
    state = preview.state()
    if state["waiting"]:
        return state["waiting"]
    return "rendered" if ok else "problems:\n  " + "\n  ".join(state["problems"])


def watch(preview, article_paths, values_path, experiment_paths, interval, stop):
    """Poll until stop is set: re-render on article or values changes, flag experiment changes."""
    article_files = Snapshot(article_paths, exclude=[preview.out_dir, values_path])
    values_file = Snapshot([values_path])
    experiments = Snapshot(experiment_paths)
    while not stop.wait(interval):
        edited, new_values = article_files.changed(), values_file.changed()
        touched = experiments.changed()
        if touched:
            preview.set_notice(f"experiments changed: run snakemake ({', '.join(touched)})")
            print(f"preview: {', '.join(touched)} changed: run snakemake to rerun the experiments", flush=True)
        if new_values:
            preview.set_notice(None)
        if edited or new_values:
            started = time.perf_counter()
            status = outcome(preview, preview.rebuild())
            if preview.state()["waiting"]:
                print(f"preview: {status}", flush=True)
                continue
            print(f"preview: {status} ({time.perf_counter() - started:.2f} s, {how_rendered(preview)})", flush=True)


def how_rendered(preview):
    if preview.renderer == "quarto":
        return "the page whole through Quarto"
    pieces = preview.pages.rendered
    return f"{pieces} piece{'s' * (pieces != 1)} through Pandoc{', the page whole' if preview.pages.fallback else ''}"


def build_renderer(config_path):
    """(what the build renders with: "quarto" or "pandoc", the sentence that
    says so): config's `renderer:` as the build reads it (auto: Quarto when
    it is on PATH)."""
    setting = "auto"
    if Path(config_path).is_file():
        try:
            setting = (load_yaml(config_path) or {}).get("renderer", "auto")
        except SourceError as exc:
            return "pandoc", f"cannot read {config_path} ({exc}); the build's renderer is unknown"
    try:
        chosen = choose(setting)
    except ValueError as exc:
        return "pandoc", f"{config_path}: {exc}"
    found = version(chosen)
    name = display_name(chosen, found) if found else f"{chosen.capitalize()} (not installed)"
    return chosen, f"the build renders with {name} ({config_path} renderer: {setting})"


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit preview", description=__doc__.splitlines()[0])
    parser.add_argument("article", nargs="?", default="article/index.qmd")
    parser.add_argument("--values", default="build/values.json", help="from `snakemake build/values.json`")
    parser.add_argument(
        "--baseline",
        default="baseline/published.yaml",
        help="the published edition's baseline, for {{< departures >}} ('' for none)",
    )
    parser.add_argument(
        "--out",
        default=f"build/{PREVIEW_FOLDER}",
        help="where the preview's render is written (one preview per folder)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on; only requests whose Host: names it are answered"
    )
    parser.add_argument("--port", type=int, default=8000, help="0: any free port")
    parser.add_argument(
        "--strict",
        choices=["true", "false"],
        default="true",
        help="true (as the build): a failed claim is a problem shown in the banner",
    )
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between looks at the files")
    parser.add_argument(
        "--renderer",
        choices=["build", *CHOICES],
        default="pandoc",
        help="pandoc (default): piece by piece, fast; build: the build's renderer (config "
        "renderer:); quarto: the page whole through Quarto, as the build does, slower",
    )
    parser.add_argument("--config", default="config.yaml", help="where the build's renderer: is read")
    args = parser.parse_args(argv)
    root = serve_from_project(args, parser)

    article = Path(args.article)
    if not article.is_file():
        log.error(
            f"preview: no article at {article} in {root}: run it in the article's project (the folder with "
            f"its Snakefile and config.yaml, or any folder inside it), or name the article"
        )
        return 1
    if not Path(args.values).is_file():
        log.error(f"preview: no values at {args.values}; run `snakemake build/values.json` first")
        return 1
    baseline = args.baseline if args.baseline and Path(args.baseline).is_file() else None
    try:
        lock = PreviewLock(args.out)
    except AlreadyRunning as exc:
        log.error(f"preview: {exc}")
        return 1
    except OSError as exc:
        log.error(f"preview: cannot lock {args.out}/{PreviewLock.NAME} ({exc}); give it an --out folder you can write")
        return 1
    try:
        return serve(args, article, baseline, lock, root)
    finally:
        lock.release()


PROJECT_PATHS = ("article", "values", "baseline", "out", "config")  # the options that name a file of the project


def serve_from_project(args, parser):
    """Run from the project's folder, found from wherever the preview was
    started inside it (articlekit.core.project): a path given on the command
    line stays the file it named, a default is the project's. Outside any
    project, the paths are the working folder's. -> the folder served."""
    here = Path.cwd()
    try:
        root = project_folder(here)
    except NoProject:
        return here
    for name in PROJECT_PATHS:
        value = getattr(args, name)
        if value and value != parser.get_default(name):
            setattr(args, name, os.path.relpath((here / value).resolve(), root))
    os.chdir(root)
    return root


class StopRequested(KeyboardInterrupt):
    """A stop signal arrived: unwind, then clean up (a KeyboardInterrupt, so
    that no `except Exception` on the way swallows it)."""


class Stopper:
    """Ctrl-C, SIGTERM and SIGHUP, by handlers of our own: a process started
    by a background job of a script inherits SIGINT ignored, and Python then
    installs no KeyboardInterrupt. A SIGHUP inherited as ignored is nohup's
    doing, and stays ignored.

    The first signal is raised as StopRequested in the main thread, once it
    runs Python again. The system may hand the signal to any thread, and the
    main thread may be waiting for a render that only its Pandoc's end
    finishes; so a thread of ours, woken by the signal (set_wakeup_fd),
    ends this process's children (a render's Pandoc or Quarto: SIGTERM, and
    SIGKILL half a second later) as they appear until the main thread is
    back. The render returns, and the pieces its pool still starts have
    their Pandoc ended likewise. Further signals are ignored: the stop under
    way finishes."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.raised, self.done = False, threading.Event()
        self.woken, wake = os.pipe()
        os.set_blocking(wake, False)
        for signum in self.SIGNALS:
            if signum == signal.SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
                continue
            signal.signal(signum, self.on_signal)
        signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
        threading.Thread(target=self.end_children, name="preview-stop", daemon=True).start()

    def on_signal(self, signum, frame):
        if not self.raised:
            self.raised = True
            raise StopRequested(signal.Signals(signum).name)

    def end_children(self):
        os.read(self.woken, 1)  # a stop signal arrived, in whichever thread
        me, seen = psutil.Process(), {}
        while not self.done.is_set():
            for child in me.children(recursive=True):
                try:
                    if time.monotonic() - seen.setdefault(child.pid, time.monotonic()) < 0.5:
                        child.terminate()
                    else:
                        child.kill()
                except psutil.Error:  # gone already
                    pass
            self.done.wait(0.01)

    def finish(self):
        """The main thread is back: no render runs any more."""
        self.done.set()


def serve(args, article, baseline, lock, root):
    """Serve and watch until a stop signal, holding the output folder's lock."""
    stopper = Stopper()
    preview = server = None
    try:
        remove_stale_preview_folders(args.out)  # a killed preview's work: none is running, we hold the lock
        build, said = build_renderer(args.config)
        renderer = build if args.renderer == "build" else choose(args.renderer)
        preview = Preview(
            article, args.values, args.out, strict=args.strict == "true", baseline=baseline, renderer=renderer
        )
        try:
            server = PreviewServer((args.host, args.port), make_handler(preview))
        except OSError as exc:
            log.error(f"preview: cannot listen on {args.host}:{args.port}: {exc}; try --port 0")
            return 1
        lock.describe(server.url)
        server.start()
        print(f"preview: {server.url} ({article} of the project {root}, Ctrl-C stops)", flush=True)
        print(
            f"preview: {said}; this preview renders with {renderer.capitalize()}"
            + (" (--renderer build renders as the build does)" if renderer != build else ""),
            flush=True,
        )
        print(f"preview: {outcome(preview, preview.rebuild())}", flush=True)
        settings = project_root(article.parent.resolve()) / "_quarto.yml"  # the project's, above article/
        watched = [article.parent, *([settings] if settings.is_file() else []), *([Path(baseline)] if baseline else [])]
        watch(preview, watched, args.values, EXPERIMENT_PATHS, args.interval, threading.Event())
    except KeyboardInterrupt:  # StopRequested, or a Ctrl-C before the handlers were ours
        pass
    finally:
        stopper.finish()  # the render is over (or never began): no child to end any more
        if server is not None:
            server.stop()
        if preview is not None:
            preview.close()
    try:
        print("preview: stopped", flush=True)
    except OSError:  # its terminal is gone (SIGHUP): nobody to tell
        pass
    return 0
