"""The real Quarto: the article and the extension's example, built with it.

A fresh copy of the project, committed to its own git repository, is built
on config/test.yaml with `renderer=quarto`; then: every bound text is on
the page, no shortcode is left, no local link is broken, both renderers
write the same build/article.md, the work tree is clean, and a missing key,
an unknown format spec and a failed claim each stop with one clear message.

Quarto is found on PATH, else at ../shared/quarto/bin (Quarto run from
source, for machines where its installer cannot download; see its README).
Without one these tests skip, saying so; with REQUIRE_QUARTO=1 (CI) that
skip is a failure.
"""

import hashlib
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from articlekit.core.jsonio import read_json, write_json
from articlekit.render.checks import expected_literal_shortcodes
from articlekit.article.shortcodes import lookup_id, scan
from tests.child_processes import popen
from tests.test_render import VALUE_LUA, printed_ids, probe_bindings
from tests.shared_build import BuildFailed, copy_of_test_build, shared_build
from tests.workspace import copy_environment, project_files
from tests import snakemake_fork

pytestmark = [pytest.mark.quarto, pytest.mark.slow, pytest.mark.spread]

ROOT = Path(__file__).resolve().parent.parent
SHARED_QUARTO = ROOT.parent / "shared" / "quarto" / "bin"
FAST = ["--configfile", "config/test.yaml"]


def quarto_folder():
    """The folder holding the `quarto` to use, or None."""
    on_path = shutil.which("quarto")
    if on_path:
        return Path(on_path).parent
    return SHARED_QUARTO if (SHARED_QUARTO / "quarto").exists() else None


def require_quarto():
    """{"PATH": ...} with Quarto's folder first; skips (or, under
    REQUIRE_QUARTO, fails) the calling test when there is no Quarto."""
    folder = quarto_folder()
    if folder is None:
        reason = f"no Quarto: `quarto` is not on PATH and {SHARED_QUARTO} does not exist"
        if os.environ.get("REQUIRE_QUARTO"):
            pytest.fail(f"REQUIRE_QUARTO is set, but {reason}")
        pytest.skip(reason)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


@pytest.fixture(scope="module")
def quarto_env():
    return require_quarto()


def run(cmd, cwd, env, check=True, timeout=900):
    """cmd in cwd; `snakemake` forked from one that has imported it
    (tests/snakemake_fork.py: both streams in .stdout)."""
    if cmd[0] == "snakemake":
        done = snakemake_fork.run(cwd, cmd[1:], env, timeout)
    else:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return done


def git_status(work):
    return subprocess.run(["git", "status", "--porcelain"], cwd=work, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory, quarto_env):
    """(folder, env, quarto version, build seconds): the project built with
    Quarto, in a git repository of its own: this worker's copy of the build
    made once in the run (tests/shared_build.py), so that the module's tests
    may go to any worker.

    Made from a copy of the run's one TEST_BUILD (its experiments, sweep and
    figures ran on config/test.yaml, as here): the build with Quarto (and
    strict, config.yaml's default) binds and renders again, and runs no
    experiment a second time. The repository holds the project's files
    alone, as a fresh copy's `git add -A` would, so that a file either build
    leaves and .gitignore does not name shows in `git status`."""

    def make(folder):
        shutil.copytree(copy_of_test_build(tmp_path_factory).project, folder, symlinks=True)
        env = {**copy_environment(folder), **quarto_env}
        run(["git", "init", "-q"], folder, env)
        subprocess.run(
            ["git", "--literal-pathspecs", "add", "--pathspec-from-file=-", "--pathspec-file-nul"],
            cwd=folder,
            input="\0".join(project_files()),
            text=True,
            check=True,
        )
        run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "copy"], folder, env)
        done = run(["snakemake", "--cores", "2", *FAST, "--config", "renderer=quarto"], folder, env, check=False)
        if done.returncode == 0 and not re.search(r"^\s*(local)?rule html:", done.stderr + done.stdout, re.M):
            done.returncode, done.stderr = 1, done.stderr + "\nthe build with Quarto rendered no page"
        return done

    try:
        built = shared_build(tmp_path_factory, "quarto", make)
    except BuildFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    env = {**copy_environment(built.project), **quarto_env}
    version = run(["quarto", "--version"], built.project, env).stdout.strip()
    print(f"\nbuild with Quarto {version} on config/test.yaml: {built.seconds:.0f} s")
    return built.project, env, version, built.seconds


class Anchors(HTMLParser):
    """Every <a>: (href, class, title, text), and every id on the page."""

    def __init__(self):
        super().__init__()
        self.links, self.ids, self._open = [], set(), None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a":
            self._open = [attrs.get("href") or "", attrs.get("class") or "", attrs.get("title") or "", ""]

    def handle_endtag(self, tag):
        if tag == "a" and self._open:
            self.links.append(tuple(self._open))
            self._open = None

    def handle_data(self, data):
        if self._open:
            self._open[3] += data


def page_anchors(path):
    parser = Anchors()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_the_article_builds_with_quarto_and_says_so(project):
    work, _, version, _ = project
    assert f"Quarto {version}" in (work / "build/article.md").read_text(encoding="utf-8")


def test_every_bound_text_is_on_the_page_with_its_tooltip_and_link(project):
    work = project[0]
    source = (work / "article/index.qmd").read_text(encoding="utf-8")
    bindings = read_json(work / "build/bindings.json")["bindings"]
    links = {
        (href, title, " ".join(text.split()))
        for href, cls, title, text in page_anchors(work / "build/article.html").links
        if "bound-value" in cls
    }
    md = (work / "build/article.md").read_text(encoding="utf-8")
    checked = 0
    for sc in scan(source):
        if sc.name != "value" or sc.escaped:
            continue
        b = bindings[lookup_id(sc.args[0], sc.kwargs.get("fmt", ""), sc.kwargs.get("expect", ""))]
        if sc.context == "prose":
            assert ("#" + b["anchor"], b["title"], " ".join(b["text"].split())) in links, sc.where("index.qmd")
        else:  # inside code: verbatim in the markdown
            assert b["text"] in md, sc.where("index.qmd")
        checked += 1
    assert checked > 50


def test_no_shortcode_is_left(project):
    work = project[0]
    allowed = expected_literal_shortcodes((work / "article/index.qmd").read_text(encoding="utf-8"))
    for name in ("article.html", "article.md"):
        text = (work / "build" / name).read_text(encoding="utf-8")
        assert text.count("{{<") + text.count("{{&lt;") <= allowed, name


def test_no_local_link_is_broken(project):
    work = project[0]
    page = page_anchors(work / "build/article.html")
    hrefs = [href for href, *_ in page.links]
    assert [h for h in hrefs if h.startswith("#") and h[1:] not in page.ids] == []
    local = [h for h in hrefs if h and not re.match(r"#|[a-z]+:", h)]
    assert [h for h in local if not (work / "build" / h.split("#")[0]).exists()] == []
    # nothing points at a file the build renamed (Quarto's "Other Formats" links)
    assert "render-" not in " ".join(hrefs)
    md = (work / "build/article.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)", md) + re.findall(r'src="([^"]+)"', md)
    assert targets and [t for t in targets if not re.match(r"[a-z]+:", t) and not (work / "build" / t).exists()] == []


def test_both_renderers_write_the_same_markdown(project, tmp_path):
    """build/article.md exists to be diffed between builds: the renderer's
    name is its only difference."""
    work, env, version, _ = project
    run(
        [
            "python",
            "-m",
            "articlekit",
            "render",
            "article/index.qmd",
            "--bindings",
            "build/bindings.json",
            "--renderer",
            "pandoc",
            "--html",
            str(tmp_path / "a.html"),
            "--md",
            str(tmp_path / "a.md"),
        ],
        work,
        env,
    )
    by_quarto = (work / "build/article.md").read_text(encoding="utf-8")
    by_pandoc = (tmp_path / "a.md").read_text(encoding="utf-8")
    assert re.sub(r"Pandoc \d[\d.]*", f"Quarto {version}", by_pandoc) == by_quarto

    # the same numbers, tooltips and links on both pages
    def bound(path):
        return [a for a in page_anchors(path).links if "bound-value" in a[1]]

    assert bound(tmp_path / "a.html") == bound(work / "build/article.html")


def test_the_work_tree_is_clean_after_the_build(project):
    assert git_status(project[0]) == ""


def test_the_extension_example_renders_as_its_header_says(project):
    """From the repository root, with the extension from the package: the
    article folder holds no copy of it."""
    work, env, version, _ = project
    assert run(["git", "ls-files", "article/_extensions"], work, env).stdout == ""
    header = (work / "article/example.qmd").read_text(encoding="utf-8")
    commands = re.search(r"```sh\n(.*?)```", header, re.S).group(1).strip().splitlines()
    assert [c.split()[:4] for c in commands] == [
        ["python", "-m", "articlekit", "bind"],
        ["python", "-m", "articlekit", "render"],
    ]
    for command in commands:  # render picks Quarto, which is on PATH
        run(command.split(), work, env)
    page = (work / "build/example.html").read_text(encoding="utf-8")
    assert page.count("{{<") + page.count("{{&lt;") <= expected_literal_shortcodes(header)
    assert f"Rendered by Quarto {version}." in page
    assert 'class="bound-value"' in page
    assert git_status(work) == ""  # nothing left beside the article


class Loads(HTMLParser):
    """What a page loads (every src, and every href but a hyperlink's), and
    the marks of its options: a table of contents, MathML, TeX left for a script."""

    def __init__(self):
        super().__init__()
        self.loads, self.toc, self.mathml, self.tex = [], False, 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.loads += [
            f"<{tag} {name}={attrs[name]}>"[:120] for name in ("src", "href") if attrs.get(name) and tag != "a"
        ]
        self.toc = self.toc or attrs.get("id") == "TOC"
        self.mathml += tag == "math"
        self.tex += "math" in (attrs.get("class") or "").split()


def test_in_a_folder_under_a_hidden_one_quarto_still_makes_the_article_s_page(project, tmp_path):
    """Quarto ignores _quarto.yml when a folder of the path starts with "."
    (and exited 0 with a page that loads index_files/libs/, MathJax from a
    CDN and page.css by absolute path): the render hands it the options."""
    work, env, _, _ = project
    hidden = shutil.copytree(work, tmp_path / ".hidden" / "project", symlinks=True)
    run(
        ["snakemake", "--cores", "2", *FAST, "--config", "renderer=quarto", "--forcerun", "html", "gfm"],
        hidden,
        {**copy_environment(hidden), "PATH": env["PATH"]},
    )
    page = Loads()
    page.feed((hidden / "build/article.html").read_text(encoding="utf-8"))
    assert [load for load in page.loads if not load.split("=", 1)[1].startswith(("data:", "#"))] == []
    assert page.toc and page.mathml and not page.tex
    # the gfm options (wrap: preserve) too: the same markdown as outside the hidden folder
    assert (hidden / "build/article.md").read_text(encoding="utf-8") == (work / "build/article.md").read_text(
        encoding="utf-8"
    )


def test_under_quarto_value_lua_builds_pythons_lookup_id_for_every_shortcode(project, tmp_path):
    """Quarto's own parser hands value.lua the arguments, in prose and in
    code: the id it builds from them finds the binding Python's lookup_id
    names, for each shortcode of the article, in document order (the probe
    of tests/test_render.py, under the real Quarto)."""
    work, env, _, _ = project
    text = (work / "article/index.qmd").read_text(encoding="utf-8")
    shortcodes = [sc for sc in scan(text) if not sc.escaped]
    write_json(tmp_path / "probe.json", probe_bindings(sc.lookup_id for sc in shortcodes))
    (tmp_path / "index.qmd").write_text(text, encoding="utf-8")
    run(
        [
            "quarto",
            "render",
            "index.qmd",
            "--to",
            "plain",
            "--output",
            "probe.txt",
            "--wrap",
            "none",
            "-M",
            f"shortcodes:{json.dumps([str(VALUE_LUA)])}",
            "-M",
            f"value-bindings:{tmp_path / 'probe.json'}",
            "-M",
            "renderer:probe",
        ],
        tmp_path,
        env,
    )
    printed = re.findall(r"⟦([TKE] .*?)⟧", (tmp_path / "probe.txt").read_text(encoding="utf-8"), re.S)
    assert printed == [shown for sc in shortcodes for shown in printed_ids(sc)] and len(printed) > 100


# --- failures: one clear message, nothing left behind ------------------------------


@pytest.fixture
def scratch(project, quarto_env, tmp_path):
    """The module's project as `project` gives it, in a copy of its own (the
    build's mtimes kept: up to date there too), for a test that edits the
    article and builds: the module's project stays built as committed, so
    that the tests after it do not each build it again first."""
    work, _, version, seconds = project
    copy = shutil.copytree(work, tmp_path / "scratch", symlinks=True)
    return copy, {**copy_environment(copy), **quarto_env}, version, seconds


@pytest.fixture
def edited(scratch):
    """Append to the article of the scratch copy; undo (and check nothing
    stray is left) after."""
    work = scratch[0]
    article = work / "article/index.qmd"
    original = article.read_text(encoding="utf-8")

    def edit(extra):
        article.write_text(original + "\n" + extra + "\n", encoding="utf-8")
        return original.count("\n") + 2  # the line the addition lands on

    yield edit
    article.write_text(original, encoding="utf-8")
    assert git_status(work) == "", "a failed build left files behind"


BROKEN = {
    "missing key": (
        "{{< value scaling.dk64.unscaled.no_such_key >}}",
        "unknown key 'scaling.dk64.unscaled.no_such_key'",
    ),
    "unknown format spec": ('{{< value scaling.dk64.unscaled.max_weight fmt=".3q" >}}', "'.3q'"),
    "failed claim": (
        '{{< value scaling.dk64.unscaled.max_weight fmt=".2f" expect="> 2" >}}',
        "claim 'scaling.dk64.unscaled.max_weight > 2' failed",
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_article_stops_the_quarto_build_with_one_clear_message(scratch, edited, case):
    work, env, _, _ = scratch
    shortcode, message = BROKEN[case]
    line = edited(shortcode)
    done = run(["snakemake", "--cores", "2", *FAST, "--config", "renderer=quarto"], work, env, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert re.search(rf"article/index\.qmd:{line}: .*{re.escape(message)}", out), out[-3000:]
    assert "stack traceback" not in out and "attempt to index" not in out


@pytest.mark.parametrize("case", ["missing key", "unknown format spec"])
def test_a_shortcode_the_bindings_lack_stops_the_build_and_quartos_lua_with_one_message(
    scratch, edited, case, tmp_path
):
    """The bindings file older than the article: the build's render, which
    binds the document itself, names the article's line; and value.lua,
    what an editor's Quarto runs, must stop Quarto (whose error() only
    logs) and say why, once."""
    work, env, _, _ = scratch
    # build/values.json is the article's as committed: the module's project
    # is never built with an edit (scratch)
    bindings = tmp_path / "bindings.json"  # of the article as committed
    run(
        [
            "python",
            "-m",
            "articlekit",
            "bind",
            "article/index.qmd",
            "--values",
            "build/values.json",
            "--baseline",
            "baseline/published.yaml",
            "--out",
            str(bindings),
        ],
        work,
        env,
    )
    line = edited(BROKEN[case][0])
    sc = scan(BROKEN[case][0])[0]
    ident = lookup_id(sc.args[0], sc.kwargs.get("fmt", ""), sc.kwargs.get("expect", ""))
    done = run(
        [
            "python",
            "-m",
            "articlekit",
            "render",
            "article/index.qmd",
            "--bindings",
            str(bindings),
            "--renderer",
            "quarto",
            "--html",
            str(tmp_path / "a.html"),
            "--md",
            str(tmp_path / "a.md"),
        ],
        work,
        env,
        check=False,
    )
    assert done.returncode == 1 and not (tmp_path / "a.html").exists()
    assert done.stderr.strip().splitlines() == [
        f"render: article/index.qmd:{line}: no binding for key '{sc.args[0]}' in {sc.raw} (lookup id '{ident}'): "
        "the bindings file is older than the article or the key is misspelled; run python -m articlekit bind again"
    ]
    # Quarto itself, with the packaged extension and that bindings file (no hooks)
    done = run(
        [
            "quarto",
            "render",
            "index.qmd",
            "--to",
            "html",
            "--profile",
            "articlekit-build",
            "-M",
            f"shortcodes:{json.dumps([str(VALUE_LUA)])}",
            "-M",
            f"value-bindings:{bindings}",
            "--output",
            "stale.html",
        ],
        work / "article",
        env,
        check=False,
    )
    assert done.returncode != 0 and not (work / "article" / "stale.html").exists()
    message = (
        f"value shortcode: no binding for key '{sc.args[0]}' (lookup id '{ident}'); the bindings file is older "
        "than the article or the key is misspelled: rerun python -m articlekit bind"
    )
    assert (done.stdout + done.stderr).count(message) == 1, done.stderr[-3000:]
    for leftover in ("index_files", "stale.html"):
        shutil.rmtree(work / "article" / leftover, ignore_errors=True)


def test_a_failed_claim_with_strict_false_builds_and_warns_on_the_terminal(scratch, edited):
    work, env, _, _ = scratch
    line = edited(BROKEN["failed claim"][0])
    done = run(["snakemake", "--cores", "2", *FAST, "--config", "renderer=quarto", "strict=false"], work, env)
    assert re.search(
        rf"WARNING: article/index\.qmd:{line}: claim 'scaling\.dk64\.unscaled\.max_weight > 2' "
        r"failed: .*\(strict=false",
        done.stdout + done.stderr,
    )
    page = (work / "build/article.html").read_text(encoding="utf-8")
    assert "⚠ claim failed: &gt; 2" in page
    # an editor's page (quarto render, value.lua looking each shortcode up)
    # binds the same values with the same marks as the build's bound document
    editor_env = {**env, "ARTICLEKIT_SNAKEMAKE_ARGS": " ".join([*FAST, "--config", "renderer=quarto", "strict=false"])}
    run(["quarto", "render", "index.qmd"], work / "article", editor_env)
    native = work / "article/index.html"
    assert bound_marks(native) == bound_marks(work / "build/article.html")
    assert [m for m in bound_marks(native) if m[0] == "claim-failed"], "no failed claim's mark on the page"
    assert sorted(set(bound_links(native))) == sorted(set(bound_links(work / "build/article.html"))) != []


# --- Quarto's own commands in the article's folder: quarto render, quarto preview ---------
#
# What an editor's Render and Preview buttons run. The author profile
# (_quarto-author.yml) binds through Snakemake before each render;
# $ARTICLEKIT_SNAKEMAKE_ARGS gives that Snakemake the fixture's options.


def native_env(env):
    return {**env, "ARTICLEKIT_SNAKEMAKE_ARGS": " ".join([*FAST, "--config", "renderer=quarto"])}


class PageText(HTMLParser):
    """The words a reader sees on a page (head, scripts and styles aside)."""

    def __init__(self):
        super().__init__()
        self.words, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("head", "script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("head", "script", "style")

    def handle_data(self, data):
        if not self._skip:
            self.words += data.split()


def page_text(html):
    parser = PageText()
    parser.feed(html)
    return " ".join(parser.words)


def bound_links(path):
    return [a for a in page_anchors(path).links if "bound-value" in a[1]]


class Marks(HTMLParser):
    """Every claim's span: (class, title, data-claim, text), in page order."""

    CLASSES = ("claim-checked", "claim-failed", "claim-inconclusive")

    def __init__(self):
        super().__init__()
        self.marks, self._open = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "span" and (attrs.get("class") or "") in self.CLASSES:
            self._open = [attrs["class"], attrs.get("title") or "", attrs.get("data-claim") or "", ""]
            if self._open[0] == "claim-checked":  # empty: closed at once
                self.marks.append(tuple(self._open))
                self._open = None

    def handle_endtag(self, tag):
        if tag == "span" and self._open:
            self.marks.append(tuple(self._open))
            self._open = None

    def handle_data(self, data):
        if self._open:
            self._open[3] += data


def bound_marks(path):
    parser = Marks()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.marks


def test_quarto_render_in_the_article_folder_gives_the_builds_article(project):
    """`quarto render index.qmd` in article/: the same text, bound numbers,
    tooltips and links as Snakemake's page; nothing beside the source; and
    the build still has nothing to do (the extension's copy is not its input)."""
    work, env, version, _ = project
    # build/article.html is Snakemake's page of the article as committed (no
    # test builds an edit in the module's project: scratch); the plan below
    # says it is still up to date
    run(["quarto", "render", "index.qmd"], work / "article", native_env(env))
    native = work / "article/index.html"
    assert page_text(native.read_text(encoding="utf-8")) == page_text(
        (work / "build/article.html").read_text(encoding="utf-8")
    )
    assert bound_links(native) == bound_links(work / "build/article.html") != []
    assert f"by Quarto {version}, from experiments" in page_text(native.read_text(encoding="utf-8"))
    assert (work / "article/_extensions/articlekit/value/value.lua").read_bytes() == VALUE_LUA.read_bytes()
    assert git_status(work) == ""
    plan = run(["snakemake", "-n", *FAST, "--config", "renderer=quarto"], work, env)
    assert "Nothing to be done" in plan.stdout + plan.stderr


def test_quarto_render_in_the_project_folder_gives_the_builds_article(project):
    """`quarto render` where a new author first types it, the project's own
    folder (its _quarto.yml renders article/index.qmd and the index page):
    the build's page, the page Quarto names leading to it, and the work
    tree clean, .gitignore untouched."""
    work, env, version, _ = project
    # build/article.html: Snakemake's page of the article as committed (no
    # test builds an edit in the module's project: scratch)
    done = run(["quarto", "render"], work, native_env(env))
    native = work / "article/index.html"
    assert "Output created: index.html" in done.stdout + done.stderr
    index = (work / "index.html").read_text(encoding="utf-8")
    assert '<meta http-equiv="refresh" content="0; url=article/index.html">' in index
    assert page_text(native.read_text(encoding="utf-8")) == page_text(
        (work / "build/article.html").read_text(encoding="utf-8")
    )
    assert bound_links(native) == bound_links(work / "build/article.html") != []
    assert git_status(work) == ""


class NeverServed(Exception):
    """A `quarto preview` that exited, or never served the page asked for; the message holds its terminal's end."""


class QuartoPreview:
    """`quarto preview ARGS --port P --no-browser` started in a folder, as an
    author (or an editor's Preview button) starts it; its terminal in a file,
    for Quarto blocks on a full pipe. Also timed by benchmarks/quarto_preview.py.

    browser: a folder for a stand-in browser instead of --no-browser, as an
    author at a desktop starts it (Quarto then refuses a project it cannot
    open a page of): the `xdg-open` Quarto runs, which writes the address
    it was asked to open to browser/opened."""

    def __init__(self, folder, args, env, log, browser=None):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = Path(log)
        self.shown = None  # the address of the page a browser shows (wait_for's, a reload's)
        self.browser = browser and Path(browser)
        if self.browser:
            self.browser.mkdir(parents=True, exist_ok=True)
            opener = self.browser / "xdg-open"
            opener.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{self.browser / "opened"}"\n', encoding="utf-8")
            opener.chmod(0o755)
            env = {**env, "PATH": f"{self.browser}{os.pathsep}{env.get('PATH', os.environ['PATH'])}"}
        with open(self.log, "w", encoding="utf-8") as out:
            self.proc = popen(
                ["quarto", "preview", *args, "--port", str(self.port), *([] if self.browser else ["--no-browser"])],
                cwd=folder,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def said(self):
        """Its terminal so far, colours taken out."""
        return re.sub(r"\x1b\[[0-9;]*m", "", self.log.read_text(encoding="utf-8", errors="replace"))

    def url(self):
        found = re.search(r"Browse at (\S+)", self.said())
        return found and found.group(1).replace("localhost", "127.0.0.1")

    def opened(self):
        """The address Quarto asked the stand-in browser to open."""
        return (self.browser / "opened").read_text(encoding="utf-8").replace("localhost", "127.0.0.1")

    def wait_for(self, condition, what, timeout=600):
        """Poll the served page every 0.1 s until condition(page): -> (page, seconds waited)."""
        start = time.perf_counter()
        while time.perf_counter() - start < timeout and self.proc.poll() is None:
            url = self.url()
            try:
                if url:  # else not listening yet
                    # as long as a browser waits: a request may have to wait for a render
                    page, shown = self.fetch(url, max(1.0, timeout - (time.perf_counter() - start)))
                    if condition(page):
                        self.shown = shown
                        return page, time.perf_counter() - start
            except OSError:  # not answering yet, or a 404 while it renders
                pass
            time.sleep(0.1)
        self.stop()
        raise NeverServed(f"quarto preview never served {what}:\n{self.said()[-4000:]}")

    def reload_channel(self):
        """A WebSocket to its server, as the page's client script opens one:
        Quarto sends each open one "reload..." once a render is done (and
        closes it). Open it before the save whose render it waits for."""
        import websocket  # websocket-client (selenium's): only the tests that wait as a browser does

        return websocket.create_connection(self.url().replace("http://", "ws://", 1), timeout=5)

    @staticmethod
    def reloaded(channel, timeout):
        """Wait on channel for Quarto's "reload<target>" (-> its target, "" for
        the page shown), or None after timeout s."""
        import websocket

        deadline = time.perf_counter() + timeout
        try:
            while time.perf_counter() < deadline:
                try:
                    message = channel.recv()
                except websocket.WebSocketTimeoutException:
                    continue
                if isinstance(message, str) and message.startswith("reload"):
                    return message.removeprefix("reload")
            return None
        except websocket.WebSocketConnectionClosedException:
            return None
        finally:
            channel.close()

    def page_after_reload(self, channel, condition, what, timeout=600, target=None):
        """The page as a browser sees it after a save: asked for only once
        Quarto says "reload" on channel (asking while it renders makes
        Quarto's preview render the page again), until condition(page).
        target: the reload's, where the caller waited for it already."""
        while True:
            if target is None:
                target = self.reloaded(channel, timeout)
            if target is None or self.proc.poll() is not None:
                break
            page = self.get(self.reload_url(target))
            if condition(page):
                return page
            channel, target = self.reload_channel(), None  # a reload for an earlier render: wait for the next
        self.stop()
        raise NeverServed(f"quarto preview never said reload for {what}:\n{self.said()[-4000:]}")

    def pre_renders(self):
        """The lines its pre-renders printed so far: one per render of the article."""
        return [line for line in self.said().splitlines() if "quarto pre-render:" in line]

    def settle(self, quiet=3.0, timeout=120):
        """Wait until its terminal has said nothing for `quiet` seconds: a
        render that a save set off after the page was served has begun by then."""
        start = last = time.perf_counter()
        said = self.said()
        while time.perf_counter() - last < quiet and time.perf_counter() - start < timeout:
            time.sleep(0.2)
            if self.said() != said:
                said, last = self.said(), time.perf_counter()

    def reload_url(self, target):
        """What a browser asks for on Quarto's "reload<target>": the target
        where there is one, else the page it shows, never the address it was
        first given, whose page leads to the article's (asking for that page
        makes Quarto render it again after every save of the article)."""
        if target:
            self.shown = urllib.parse.urljoin(self.url(), target)
        return self.shown or self.url()

    @staticmethod
    def get(url, timeout=60):
        """The page at url, a meta refresh followed as a browser follows it
        (index.html leads to the article's page)."""
        return QuartoPreview.fetch(url, timeout)[0]

    @staticmethod
    def fetch(url, timeout=60):
        """-> (the page at url, a meta refresh followed, and its address)."""
        with urllib.request.urlopen(url, timeout=timeout) as response:
            page = response.read().decode("utf-8", "replace")
        refresh = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]+)"', page)
        if refresh:
            return QuartoPreview.fetch(urllib.parse.urljoin(url, refresh.group(1)), timeout)
        return page, url

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


PREVIEWS = {
    # the form a new author types first, at a desktop: Quarto serves the
    # project and opens its index page in a browser (a stand-in here)
    "quarto preview in the project folder": ("", [], True),
    # the form an editor's Preview button runs (a file of the project)
    "quarto preview index.qmd in article/": ("article", ["index.qmd"], False),
}


@pytest.mark.parametrize("where", PREVIEWS)
def test_quarto_preview_serves_a_prose_edit_quickly_and_a_failure_as_its_message(scratch, tmp_path, where):
    """The bound article; a prose edit served without a Snakemake run (only
    the text changed since the pre-render's last one); a misspelt key shown
    on the page with its file:line, not as Quarto's blank "Quarto Render
    Error"; the fix served again; the work tree clean once it stops.

    In a scratch copy: the failed bind takes build/bindings.json with it
    (Snakemake removes a failed job's outputs) and the served fix does not
    make it again, while the module's other tests read the project as built."""
    work, env, _, _ = scratch
    folder, args, browser = PREVIEWS[where]
    article = work / "article/index.qmd"
    original = article.read_text(encoding="utf-8")
    preview = QuartoPreview(
        work / folder, args, native_env(env), tmp_path / "preview.log", browser=browser and tmp_path / "browser"
    )
    try:
        page, _ = preview.wait_for(lambda page: 'class="bound-value"' in page, "the bound article")
        assert "{{<" not in page and "{{&lt;" not in page and "preview-banner" not in page
        if browser:  # the page Quarto opened leads to the article's
            assert 'class="bound-value"' in QuartoPreview.get(preview.opened())
        sentence = "A sentence written while the preview runs."
        preview.settle()
        before, channel = len(preview.pre_renders()), preview.reload_channel()
        article.write_text(original.replace("\n## ", f"\n{sentence}\n\n## ", 1), encoding="utf-8")
        page = preview.page_after_reload(channel, lambda page: sentence in page, "the edit")
        assert 'class="bound-value"' in page
        preview.settle()
        hooks = preview.pre_renders()[before:]
        # one render per save: none set off by what the render itself writes
        # (the bound engine's pointer once sent a one-file preview round again)
        assert len(hooks) == 1 and "without Snakemake" in hooks[0], hooks
        line = original.count("\n") + 2
        article.write_text(original + "\nA slip: {{< value scaling.dk64.unscaled.no_such_key >}}.\n", encoding="utf-8")
        page, _ = preview.wait_for(lambda page: "preview-banner" in page, "the failure's message")
        # (a new printed key: this article's seed sweep reads them, so Snakemake runs, and its bind fails)
        assert "Quarto Render Error" not in page
        banner = html.unescape(page[page.find('id="preview-banner"') :].split("</div>", 1)[0])
        assert re.search(rf"article/index\.qmd:{line}: unknown key 'scaling\.dk64\.unscaled\.no_such_key'", banner), (
            banner
        )
        assert "`quarto render` would stop here" in page and 'class="bound-value"' in page
        article.write_text(original, encoding="utf-8")
        preview.wait_for(lambda page: "preview-banner" not in page and "A slip" not in page, "the fix")
    except NeverServed as exc:
        pytest.fail(str(exc))
    finally:
        article.write_text(original, encoding="utf-8")
        preview.stop()
    assert git_status(work) == ""


def test_a_new_skeleton_gives_its_article_to_quartos_own_commands_and_its_tree_stays_clean(quarto_env, tmp_path):
    """`python -m articlekit new`, then `quarto render` in its folder and
    `quarto preview` in its article/: both give the bound article, and
    neither touches a .gitignore (or anything else git sees), also with
    the virtual environment an author makes there (`python -m venv env`).
    In a folder whose name Pandoc's Markdown would read as markup (emphasis,
    a dash, an ellipsis, a quote, two spaces as one): the paths the
    pre-render hands Quarto as metadata (the bindings, the figures' data)
    reach Pandoc, which reads metadata as Markdown, and must come back whole."""
    folder = tmp_path / "drafts-_v2_  --it's ..." / "my-article"
    env = {**copy_environment(ROOT), **quarto_env, "ARTICLEKIT_SNAKEMAKE_ARGS": "--config strict=false"}
    run(["python", "-m", "articlekit", "new", str(folder)], tmp_path, env)
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "new"],
    ):
        run(cmd, folder, env)
    (folder / "env").mkdir()  # what Quarto takes for a virtual environment, and ignores unless .gitignore does
    (folder / "env/pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    run(["quarto", "render"], folder, env)
    page = (folder / "article/index.html").read_text(encoding="utf-8")
    assert 'class="bound-value"' in page and "{{<" not in page and "{{&lt;" not in page
    assert 'src="data:image/' in page  # its figure embedded, from the figures' data the metadata names
    assert git_status(folder) == ""
    preview = QuartoPreview(folder / "article", [], env, tmp_path / "preview.log", browser=tmp_path / "browser")
    try:
        preview.wait_for(lambda page: 'class="bound-value"' in page, "the bound article")
        assert 'class="bound-value"' in QuartoPreview.get(preview.opened())
    except NeverServed as exc:
        pytest.fail(str(exc))
    finally:
        preview.stop()
    assert git_status(folder) == ""


def test_quarto_render_stops_on_a_typed_number_with_the_lint_s_message(scratch, edited):
    """The pre-render lints, as the build does: the render fails
    with the lint's file:line and the command to rerun, and writes no page."""
    work, env, _, _ = scratch
    line = edited("The answer is 42.")
    native = work / "article/index.html"
    before = native.stat().st_mtime_ns if native.exists() else None
    done = run(["quarto", "render", "index.qmd"], work / "article", native_env(env), check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert re.search(rf"article/index\.qmd:{line}: numeral '42'", out), out[-3000:]
    assert "quarto pre-render: the article's values, bindings or lint could not be made" in out
    assert "snakemake build/article.html" in out
    after = native.stat().st_mtime_ns if native.exists() else None
    assert after == before


def test_quarto_render_without_the_extension_fails_instead_of_showing_raw_shortcodes(project, tmp_path):
    """A profile whose pre-render was taken out (so nothing installs the
    extension): Quarto alone warns and exits 0 with {{< value ... >}} on
    the page; the post-render removes that page and fails, saying why."""
    work, env, _, _ = project
    hidden = shutil.copytree(work, tmp_path / "copy", symlinks=True)
    for folder in (hidden / "article", hidden):  # the copies the pre-render installed
        shutil.rmtree(folder / "_extensions", ignore_errors=True)
    profile = hidden / "_quarto-author.yml"
    profile.write_text(
        re.sub(r"^  pre-render:.*$", "", profile.read_text(encoding="utf-8"), flags=re.M), encoding="utf-8"
    )
    (hidden / "article/index.html").unlink(missing_ok=True)
    # the metadata file the profile names, as an earlier pre-render left it, or none
    metadata = hidden / "build/quarto-project-metadata.yml"
    if not metadata.exists():
        metadata.write_text("{}\n", encoding="utf-8")
    done = run(
        ["quarto", "render", "index.qmd"],
        hidden / "article",
        {**native_env(env), **copy_environment(hidden), "PATH": env["PATH"]},
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "quarto post-render:" in out and "shortcode(s) were not resolved" in out
    assert "the value extension did not run" in out
    assert not (hidden / "article/index.html").exists()


def test_the_bound_engine_renders_the_bound_document_only_in_place_of_the_text_it_was_bound_from(quarto_env, tmp_path):
    """The bound engine (articlekit/render/quarto/_extensions/bound/): Quarto
    renders the bound document the pointer names in the article's place
    while the article's text is the very text bound (its md5); once the
    text differs by a letter, the text itself, never another text's values."""
    from articlekit.render.extension import BOUND_POINTER, install

    folder = tmp_path / "article"
    folder.mkdir()
    (folder / "_quarto.yml").write_text("project:\n  type: default\n", encoding="utf-8")
    article, bound_document = folder / "index.qmd", tmp_path / "bound.txt"
    text = "---\ntitle: An article\n---\n\nThe text as saved, first version.\n"
    article.write_text(text, encoding="utf-8")
    bound_document.write_text("---\ntitle: An article\n---\n\nThe bound document's body.\n", encoding="utf-8")
    install(folder)
    pointer = {
        "source": str(article),
        "md5": hashlib.md5(text.encode("utf-8")).hexdigest(),
        "bound": str(bound_document),
    }
    (folder / BOUND_POINTER).write_text(json.dumps(pointer), encoding="utf-8")
    env = {**os.environ, **quarto_env}

    run(["quarto", "render", "index.qmd", "--to", "html"], folder, env)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "The bound document&#39;s body." in page or "The bound document’s body." in page, page[-2000:]
    assert "first version" not in page

    article.write_text(text.replace("first", "second"), encoding="utf-8")
    run(["quarto", "render", "index.qmd", "--to", "html"], folder, env)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "second version" in page and "bound document" not in page


def test_under_quarto_the_provenance_table_is_the_table_quarto_writes_for_any_other(quarto_env, tmp_path):
    """bound.lua writes the page's provenance table itself under Quarto (its
    hundreds of rows made most of Quarto's filter time): the HTML must be
    what Quarto and scroll_regions.lua write for the same table anywhere
    else in the page, classes, rows, widths and keyboard focus included, so
    that a change in Quarto's tables shows here rather than as a table that
    looks unlike the others."""
    from articlekit.render.luafilters import BOUND_FILTER, SCROLL_REGIONS_FILTER

    table = (
        "| Key | As quoted | Script |\n"
        "|:------------|:--------|:--------|\n"
        "| a key | 1.25 | experiments/one.py |\n"
        "| another key | 0.5 | experiments/two.py |\n"
        "| a third | 7 | experiments/three.py |\n"
    )
    front = "---\ntitle: Tables\n---\n\n"
    (tmp_path / "page.qmd").write_text(
        f"{front}::: {{.provenance}}\n{table}:::\n\n::: {{.elsewhere}}\n{table}:::\n", encoding="utf-8"
    )
    (tmp_path / "_quarto.yml").write_text(
        "project:\n  type: default\nfilters:\n"
        f"  - {BOUND_FILTER}\n  - path: {SCROLL_REGIONS_FILTER}\n    at: post-render\n",
        encoding="utf-8",
    )
    run(["quarto", "render", "page.qmd", "--to", "html"], tmp_path, {**os.environ, **quarto_env})
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    tables = {
        name: re.search(rf'<div class="{name}">\s*(<table.*?</table>)', page, re.S).group(1)
        for name in ("provenance", "elsewhere")
    }
    assert 'class="caption-top table"' in tables["elsewhere"] and 'tabindex="0"' in tables["elsewhere"]
    assert tables["provenance"] == tables["elsewhere"]
