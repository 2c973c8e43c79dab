"""From saving a prose edit to the new page in Quarto's own `quarto preview`,
against Quarto's preview of a plain document, in the same run.

    python benchmarks/quarto_preview.py [--edits 5] [--configfile config/test.yaml]
                                        [--project DIR ...] [--where article article-file project]

Quarto must be on PATH (or at ../shared/quarto/bin). For each --project
(default: this checkout; give another checkout, e.g. the main branch's, to
time the code before a change in the same run), a fresh copy is built
once, untimed (`snakemake --cores 2 --configfile F --config
renderer=quarto`); then, one after another, with
ARTICLEKIT_SNAKEMAKE_ARGS="--configfile F" (--where picks which):

  article       `quarto preview` in the copy's article/ folder
  article-file  `quarto preview index.qmd` there (an editor's Preview button)
  project       `quarto preview` in the copy's own folder (skipped where it
                has no _quarto.yml)

and, in the same run, Quarto alone:

  plain    `quarto preview plain.qmd` of a small document with no project and
           no articlekit (Quarto's defaults): what Quarto itself costs
  typed    `quarto preview index.qmd` of the article's text with its values
           typed in (the bound document, each value its text alone) under
           the article's _quarto.yml, no hooks: its citations and
           cross-references Quarto's to resolve, as for any Quarto author;
           Quarto's cost for the article's page
  typed-folder  `quarto preview` in that typed project's folder: Quarto's
           own route for a folder (its project server: on every save it
           compiles the page's Sass again, which a one-file preview keeps),
           the route `quarto preview` in article/ and in the project's folder
           takes; the like-for-like baseline for those two places
  typed-md the same for the build's markdown edition (build/article.md),
           whose citations and cross-references are written out already:
           the baseline until 2026-12-06, printed for comparison

For each it times the first page (from starting the command until the page
is served) and, --edits times, a one-sentence edit saved until the page is
served with it, as a browser sees it: the benchmark holds the preview's
WebSocket as the page's client script does and asks for the page once
Quarto says "reload" (asking earlier makes Quarto's preview render the
page again, and that second render was once counted here). Prints each
median and maximum, and each median as a multiple of plain's and of
typed's. Target (issue 42): save-to-page within 1.5x of typed. It
runs no farm-bench and needs no GPU; timing on a shared machine is noisy,
so read the ratios, and the load printed with them.
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.build import typed_article  # noqa: E402
from tests.test_quarto import NeverServed, QuartoPreview  # noqa: E402
from tests.workspace import PROJECT_ROOT, copy_environment, copy_project  # noqa: E402

SHARED_QUARTO = PROJECT_ROOT.parent / "shared" / "quarto" / "bin"
ANCHOR = "fits on one line"  # a sentence of article/index.qmd the edits change
PLACES = {
    "article": "`quarto preview` in article/",
    "article-file": "`quarto preview index.qmd` in article/ (an editor's Preview button)",
    "project": "`quarto preview` in the project's folder",
}
# what a terminal shows when something broke: Quarto's errors and Deno's stack traces
ERRORS = re.compile(r"^(?:ERROR|.*\bNotFound\b|\s+at \S+ \(file:)", re.M)
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
PLAIN = """---
title: "A plain document"
---

## One section

Saving this file makes Quarto render it again; the benchmark changes the
sentence below and waits for the served page to show it.

The sentence to change: first version.

## Another section

Some more prose, so that the page has a little of everything: *emphasis*,
`code`, and a list.

- one
- two
"""


def time_preview(args, cwd, env, log, source, ready, edit, edits):
    """-> (first page seconds, [save-to-page seconds], its terminal). A save is
    timed as a browser sees it: the benchmark holds the preview's WebSocket,
    as the page's client script does, saves, waits for Quarto's "reload"
    message and only then asks for the page (the one the reload names, else
    the one shown, as the client script does: the article's, not the index
    page that led to it), until it is the edited one.
    (Asking any earlier, e.g. once the page is on disk while the post-render
    still runs, makes Quarto's preview server render the page a second time:
    its record of the last render is written only after the post-render.)"""
    started = time.perf_counter()
    preview = QuartoPreview(cwd, args, env, log)
    try:
        preview.wait_for(ready, "its first page")
        first = time.perf_counter() - started
        seconds = []
        for i in range(edits):
            time.sleep(1.0)  # let its watcher settle
            channel = preview.reload_channel()
            marker = edit(source, i)
            start = time.perf_counter()
            target = preview.reloaded(channel, 120)
            if target is None:
                # a save Quarto's watcher missed (seen once in 20): saved again, and said
                print(
                    f"  edit {i}: no render after 120 s, saved again (its time counts from the first save)",
                    file=sys.stderr,
                )
                channel = preview.reload_channel()
                source.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
            preview.page_after_reload(channel, lambda page: marker in page, f"edit {i}", target=target)
            seconds.append(time.perf_counter() - start)
            print(f"  {Path(cwd).name} {' '.join(args)}: edit {i}: {seconds[-1]:.2f} s", file=sys.stderr)
    except NeverServed as exc:
        sys.exit(str(exc))
    finally:
        preview.stop()
    return first, seconds, Path(log).read_text(encoding="utf-8", errors="replace")


def edit_plain(path, i):
    text = re.sub(
        r"The sentence to change: [^.]*\.", f"The sentence to change: version {i}.", path.read_text(encoding="utf-8")
    )
    path.write_text(text, encoding="utf-8")
    return f"version {i}."


def edit_article(path, i):
    """A prose edit: one sentence of the article changed, marked with its number."""
    text = path.read_text(encoding="utf-8")
    start = text.index(ANCHOR)
    end = text.index(":", start)
    marker = f"(quarto edit {WORDS[i % len(WORDS)]}{'s' * (i // len(WORDS))})"  # no digit: lint would flag it
    path.write_text(text[:start] + f"{ANCHOR} {marker}" + text[end:], encoding="utf-8")
    return marker


def build(work, configfile):
    cmd = ["snakemake", "--cores", "2", "--configfile", configfile, "--config", "renderer=quarto"]
    done = subprocess.run(cmd, cwd=work, env=copy_environment(work), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"snakemake failed in {work}:\n{done.stderr[-3000:]}")


def baselines(tmp, work, edits):
    """Quarto alone: the plain document, and the article's text typed in."""
    plain_dir = tmp / "plain"
    plain_dir.mkdir()
    (plain_dir / "plain.qmd").write_text(PLAIN, encoding="utf-8")
    results = {
        "plain": time_preview(
            ["plain.qmd"],
            plain_dir,
            dict(os.environ),
            tmp / "plain.log",
            plain_dir / "plain.qmd",
            lambda page: "A plain document" in page,
            edit_plain,
            edits,
        )
    }
    # the article's text with its values typed in, under the article's
    # options (benchmarks/build.py's, listing the page's format alone)
    for name, text, args in (
        ("typed", "source", ["index.qmd"]),
        ("typed-folder", "source", []),
        ("typed-md", "markdown", ["index.qmd"]),
    ):
        typed_dir = typed_article(work, tmp / name, ("html",), text)
        results[name] = time_preview(
            args,
            typed_dir,
            dict(os.environ),
            tmp / f"{name}.log",
            typed_dir / "index.qmd",
            lambda page: ANCHOR in page,
            edit_article,
            edits,
        )
    return results


def time_project(tmp, project, configfile, where, edits):
    work = copy_project(tmp / "project", root=project)
    print(f"building {work} (from {project}) once, untimed ...", file=sys.stderr)
    build(work, configfile)
    # the copy's articlekit byte-compiled once, as an installed package is
    # (pip compiles at install): without it, where PYTHONDONTWRITEBYTECODE
    # is set, each hook would compile its modules again on every save
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(work / "articlekit")], check=True)
    env = {**copy_environment(work), "ARTICLEKIT_SNAKEMAKE_ARGS": f"--configfile {configfile}"}
    results = {}
    if "project" in where and not (work / "_quarto.yml").exists():
        print(
            f"{project}: no _quarto.yml in the project's folder: `quarto preview` there is not timed", file=sys.stderr
        )
    for place in where:
        cwd = work if place == "project" else work / "article"
        if place == "project" and not (work / "_quarto.yml").exists():
            continue
        args = ["index.qmd"] if place == "article-file" else []
        print(f"timing quarto preview {' '.join(args)} in {cwd} ...", file=sys.stderr)
        results[place] = time_preview(
            args,
            cwd,
            env,
            tmp / f"{place}.log",
            work / "article/index.qmd",
            lambda page: 'class="bound-value"' in page,
            edit_article,
            edits,
        )
    return work, results


def quarto_on_path():
    if shutil.which("quarto"):
        return
    if (SHARED_QUARTO / "quarto").exists():
        os.environ["PATH"] = f"{SHARED_QUARTO}{os.pathsep}{os.environ['PATH']}"
        return
    sys.exit(f"no Quarto: put `quarto` on PATH (or install Quarto from source at {SHARED_QUARTO})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--configfile", default="config/test.yaml")
    parser.add_argument(
        "--project", action="append", type=Path, help="a checkout whose article to time (repeatable; default: this one)"
    )
    parser.add_argument(
        "--where",
        nargs="+",
        choices=list(PLACES),
        default=list(PLACES),
        help="; ".join(f"{name}: {what}" for name, what in PLACES.items()),
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))  # unwind: the previews are stopped too
    quarto_on_path()
    projects = args.project or [PROJECT_ROOT]
    rows, loads = [], [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="attention-quarto-preview-bench-") as tmp:
        tmp = Path(tmp)
        timed = []
        for n, project in enumerate(projects):
            (tmp / str(n)).mkdir()
            timed.append(
                (project, *time_project(tmp / str(n), project.resolve(), args.configfile, args.where, args.edits))
            )
            loads.append(os.getloadavg()[0])
        print("timing Quarto alone ...", file=sys.stderr)
        alone = baselines(tmp, timed[0][1], args.edits)
        loads.append(os.getloadavg()[0])
    plain, typed, typed_folder, typed_md = (
        statistics.median(alone[name][1]) for name in ("plain", "typed", "typed-folder", "typed-md")
    )
    print(
        f"{'quarto preview of':<44} {'first':>6} {'median':>7} {'max':>6} {'x plain':>8} {'x typed':>8} "
        f"{'x typed-folder':>14} {'x typed-md':>10} {'binds':>6} {'errors':>6}"
    )
    for name, result in alone.items():
        rows.append((f"{name} document (Quarto alone)", *result))
    for project, _, results in timed:
        for place, result in results.items():
            rows.append((f"{project.name}: {PLACES[place].replace('`', '')}"[:44], *result))
    for title, first, seconds, said in rows:
        median = statistics.median(seconds)
        print(
            f"{title:<44} {first:>6.2f} {median:>7.2f} {max(seconds):>6.2f} {median / plain:>8.2f} "
            f"{median / typed:>8.2f} {median / typed_folder:>14.2f} {median / typed_md:>10.2f} "
            f"{said.count('quarto pre-render: article/'):>6} "
            f"{len(ERRORS.findall(said)):>6}"
        )
    print(
        f"(seconds; first: start to first page; median/max: save to page over {args.edits} edits; "
        f"binds: the pre-renders that bound or checked the article over the start and the edits; "
        f"errors: the terminal's error lines and stack traces; "
        f"{args.configfile}; 1-minute load average up to {max(loads):.1f} on {os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()
