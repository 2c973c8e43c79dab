"""Do the build's four caches still pay for themselves? Each against the simpler way, in one run.

    python benchmarks/caches.py [--rounds 5] [--cores 2] [--configfile config/test.yaml]

In a fresh copy of the project, after one untimed build, each round times,
back to back:
  plan memory   a no-op `snakemake --cores N` with .snakemake/articlekit/plan.json
                (articlekit/workflow/plancache.py: the config's check and the
                latest release's, remembered), then one with that file removed
                first (every check runs, as it would without the cache)
  code graph    the same with .snakemake/articlekit/codegraph.json removed
                (articlekit/workflow/codegraph.py: each file's parse, kept by
                its digest; without it every module is parsed again)
  schema memo   one edition's job (`articlekit render --to jats`, as rule jats
                runs it) reading the bindings bind wrote, with
                .snakemake/articlekit/bindings-checked.json, then with it
                removed (articlekit/core/schema.py, unless_passed: the texts
                that passed the schema, by digest; without it the job checks
                them again)
  incremental   the preview's page after a one-sentence prose edit, rendered
                chunk by chunk (articlekit/render/incremental.py), then the
                whole page rendered as `articlekit render` renders it (the
                simpler way the preview could take), in this process

Printed per cache: the median seconds with and without it, their ratio
(under 1: the cache saves time) and the seconds it saves per run, with the
range over the rounds. Ratios from paired rounds hold on a shared machine
where seconds do not.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.timed import timed  # noqa: E402
from tests.workspace import copy_project  # noqa: E402

ANCHOR = "fits on one line"  # a sentence of article/index.qmd the prose edit changes (as benchmarks/preview.py)


def edit(article, i):
    text = article.read_text(encoding="utf-8")
    start = text.index(ANCHOR)
    end = text.index(":", start)
    article.write_text(text[:start] + f"{ANCHOR} (edit {i})" + text[end:], encoding="utf-8")


def snakemake_round(work, build, removed=None):
    if removed is not None:
        (work / ".snakemake" / "articlekit" / removed).unlink(missing_ok=True)
    return timed(build, work).wall


def schema_round(work, out, removed=False):
    """-> seconds of one edition's job, as its rule runs it, writing out.
    Without the record, the job checks the schema and writes it again."""
    if removed:
        (work / ".snakemake" / "articlekit" / "bindings-checked.json").unlink(missing_ok=True)
    return timed([*EDITION_JOB, str(out)], work).wall


# rule jats's command (articlekit/workflow/rules/article.smk), but its --out
EDITION_JOB = [
    sys.executable, "-m", "articlekit", "render", "article/index.qmd", "--to", "jats",
    "--bindings", "build/bindings.json", "--renderer", "pandoc", "--bound", "build/article.bound.md",
    "--ast", "build/article.ast.json", "--out",
]  # fmt: skip


def incremental_round(work, pages, i):
    """-> (seconds of the chunked render, seconds of the whole render) after one edit each."""
    from articlekit.article.bind import bind
    from articlekit.core.jsonio import read_json, write_json
    from articlekit.data.baseline import load_baseline
    from articlekit.render import page as rendermod

    article = work / "article" / "index.qmd"
    values = read_json(work / "build" / "values.json")
    baseline = load_baseline(work / "baseline" / "published.yaml")
    seconds = []
    for way in ("incremental", "whole"):
        edit(article, f"{i}{way}")
        start = time.perf_counter()
        document = bind(str(article), article.read_text(encoding="utf-8"), values, False, baseline)
        if way == "incremental":
            pages.render(document)
        else:
            bindings = work / "bench-bindings.json"
            write_json(bindings, document)
            rendermod.render(article, bindings, "pandoc", work / "bench-whole.html")
        seconds.append(time.perf_counter() - start)
    return seconds


def report(name, with_cache, without):
    ratios = [a / b for a, b in zip(with_cache, without)]
    saved = [b - a for a, b in zip(with_cache, without)]
    print(
        f"{name:13s} with {statistics.median(with_cache):6.2f} s  without {statistics.median(without):6.2f} s  "
        f"ratio {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})  "
        f"saves {statistics.median(saved):+.2f} s per run ({min(saved):+.2f} to {max(saved):+.2f})"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config/test.yaml")
    args = parser.parse_args(argv)
    build = ["snakemake", "--cores", str(args.cores), "--configfile", args.configfile, "--config", "strict=false"]
    with tempfile.TemporaryDirectory(prefix="caches-") as scratch:
        work = copy_project(Path(scratch) / "project")
        timed(build, work)  # the cold build, untimed
        sys.path.insert(0, str(work))
        from articlekit.render.incremental import IncrementalPage

        pages = IncrementalPage(work / "article" / "index.qmd", Path(scratch) / "pieces")
        times = {name: ([], []) for name in ("plan memory", "code graph", "schema memo", "incremental")}
        for i in range(args.rounds):
            for name, removed in (("plan memory", "plan.json"), ("code graph", "codegraph.json")):
                times[name][0].append(snakemake_round(work, build))
                times[name][1].append(snakemake_round(work, build, removed))
        jats = Path(scratch) / "article.jats.zip"  # outside the build: no rule's file
        for i in range(args.rounds):
            times["schema memo"][0].append(schema_round(work, jats))
            times["schema memo"][1].append(schema_round(work, jats, removed=True))
        incremental_round(work, pages, "warm")  # every chunk once
        for i in range(args.rounds):  # after the builds: an edit would make their no-op a rebuild
            chunked, whole = incremental_round(work, pages, i)
            times["incremental"][0].append(chunked)
            times["incremental"][1].append(whole)
        print(f"{args.rounds} paired rounds, {args.configfile}, --cores {args.cores}")
        for name, (with_cache, without) in times.items():
            report(name, with_cache, without)


if __name__ == "__main__":
    main()
