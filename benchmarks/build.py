"""What a rebuild costs, as a multiple of Snakemake's own start-up, in fresh copies of the project.

    python benchmarks/build.py [--rounds 5] [--cores 2] [--configfile config.yaml --configfile config/test.yaml]
                               [--project DIR ...] [--keep]

Each (project, config file) pair is a setup: a copy of the project (this
checkout by default; --project another checkout, a worktree of an earlier
commit say, given as LABEL=DIR or DIR, once per project), built cold once
on that config. --configfile may be given more than once; by default both
the full config and the fast one of the tests.

A ratio measured in one run holds still where absolute seconds do not
(these machines are shared), and so do rounds that pair what they compare:
each round visits every setup in turn, and for each times, back to back,
`snakemake --version` (the start-up no build can avoid: Python, Snakemake
and its plugins importing), a no-op build, and a build after a
one-sentence prose edit, each build divided by the start-up timed just
before it. A before and an after given as two --project are so measured in
the same rounds, under the same load. Printed: for each setup the median
and the range over the rounds, by the wall clock and by CPU time (the
build's processes and all their children), the cold build, which rules each
scenario ran and, for the prose edit, each job's seconds (from its rule's
benchmark: file, benchmarks/out/RULE.tsv); and the machine's load (the
1-minute average) when the run started and ended.

The same rounds time Snakemake alone, a one-rule workflow beside the
copies: its no-op, and a run of its one job. That is the floor no article
can go under: Snakemake's own plan, and for any build that runs a job, the
second or so it waits before it exits (its job-rate limiter's timer, which
the default --max-jobs-per-timespan 100/1s starts after each round of jobs;
an article's build does not wait for it: articlekit/workflow/prompt_exit.py).

A one-rule workflow understates the floor of a DAG of dozens of jobs, each
with its code files as inputs: so each setup has its own, the floor lines.
Its built copy's DAG, as `snakemake --detailed-summary` gives it, becomes a
Snakefile of the same jobs and files whose every command is a touch
(benchmarks/same_dag.py), timed in a copy beside it in the same rounds: its
no-op is Snakemake's alone for this DAG, its prose edit reruns the same jobs
doing nothing. What the article's build spends above its floor is
articlekit's: the plan, and each step's work. A second floor leaves out the
inputs that are code (the files of articlekit and the article's modules
that each rule lists so that an edit reruns it): what listing them costs.

Beside each prose edit, in the same round, Quarto's own render of the same
text to the same formats: the built article's text with its values typed in
(typed_article: its citations and cross-references left to Quarto) under
the article's _quarto.yml options (its profile, the hooks, left out), its
bibliography and figures beside it, after the same one-sentence
edit, `quarto render --to all` of every edition Quarto can write here,
listed in its _quarto.yml (QUARTO_OWN:
the PDF is Typst's, which the Quarto from source in ../shared/quarto lacks;
with a Quarto that has it, --quarto-pdf adds it). Without the PDF on
Quarto's side, the same edit is also built without the build's PDF
(`snakemake --omit-from pdf`, which leaves out what is made from it too:
the MECA bundle), so that one line compares the same editions. Printed:
both in seconds and the build's as a multiple of Quarto's. Skipped, saying so, without a
`quarto` on PATH or in ../shared/quarto/bin.

Targets (issue 28): no-op under 1.2x the start-up, a prose edit under 3x;
(issue 42) a prose edit to every edition no slower than Quarto's own render
of the same text to the same formats.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import yaml  # noqa: E402

from articlekit.core.jsonio import read_json  # noqa: E402
from articlekit.render.citations import bound_bibliography  # noqa: E402
from articlekit.render.project import project_config, project_root  # noqa: E402
from benchmarks import same_dag  # noqa: E402
from benchmarks.timed import timed  # noqa: E402
from tests.workspace import PROJECT_ROOT, copy_environment, copy_project  # noqa: E402

FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")
TARGETS = {"no-op": 1.2, "prose": 3.0}
SCENARIOS = ("no-op", "prose")
FLOOR_SNAKEFILE = "Snakefile.same-dag"
# The floors, each the copy's DAG as a Snakefile of touches (same_dag.py):
# with its code inputs, and without them (what listing them costs)
FLOORS = {"floor": True, "floor, no code inputs": False}
DEFAULT_CONFIGS = ("config.yaml", "config/test.yaml")
# The editions Quarto's own render writes beside the build's prose edit
QUARTO_OWN = ("html", "gfm", "docx", "jats")
SHARED_QUARTO = PROJECT_ROOT.parent / "shared" / "quarto" / "bin"

# Snakemake alone: one rule, one job.
BARE_SNAKEFILE = """rule one:
    output:
        "one.txt",
    shell:
        "touch {output}"
"""


def summary(ratios):
    return f"{statistics.median(ratios):5.2f}x  [{min(ratios):.2f}, {max(ratios):.2f}]"


def projects(given):
    """[(label, checkout)] from --project LABEL=DIR or DIR (its folder's name labels it)."""
    found = []
    for text in given or [str(PROJECT_ROOT)]:
        label, _, folder = text.rpartition("=")
        folder = Path(folder).resolve()
        found.append((label or folder.name, folder))
    return found


def load():
    return f"{os.getloadavg()[0]:.2f}"


class Setup:
    """One project on one config: its copy, its build command, its figures,
    and beside it the floor: the same DAG with no work (same_dag.py)."""

    def __init__(self, label, checkout, configfile, folder, cores, formats=QUARTO_OWN):
        self.label, self.configfile, self.formats = label, configfile, formats
        self.folder, self.cores = Path(folder), cores
        self.work = copy_project(folder, root=checkout)
        self.build = ["snakemake", "--cores", str(cores), "--configfile", configfile]
        self.ratios = {scenario: ([], []) for scenario in SCENARIOS}
        # each floor (FLOORS): its copy, its ratios, how many jobs each scenario ran
        self.floors = {}
        self.rules, self.job_seconds = {}, {}
        self.prose_seconds, self.quarto_own = [], None  # the prose edit's wall seconds; Quarto's own folder
        self.quarto_own_seconds = []
        # the same prose edit built without the PDF (`--omit-from pdf`): the
        # editions Quarto's own render writes where it has no Typst
        self.same_formats_seconds = []

    @property
    def name(self):
        return f"{self.label}, {self.configfile}"

    def cold(self):
        wall, _, _, log = timed(self.build, self.work)
        self.cold_wall, self.cold_rules = wall, sorted(set(FINISHED.findall(log)))
        # The floor: a copy of the built project, its DAG as a Snakefile of touches
        summary = subprocess.run(
            [*self.build, "--detailed-summary"],
            cwd=self.work,
            env=copy_environment(self.work),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        build = ["snakemake", "--snakefile", FLOOR_SNAKEFILE, "--cores", str(self.cores)]
        for floor, code in FLOORS.items():
            # a copy each: Snakemake's records of one would rerun the other's jobs
            copy = self.folder.with_name(f"{self.folder.name}-{floor.replace(' ', '-').replace(',', '')}")
            shutil.copytree(self.work, copy, symlinks=True)
            (copy / FLOOR_SNAKEFILE).write_text(same_dag.snakefile(summary.splitlines(), code), encoding="utf-8")
            timed(build, copy)
            self.floors[floor] = (copy, build, {scenario: ([], []) for scenario in SCENARIOS}, {})
        if shutil.which("quarto"):
            own = self.folder.with_name(f"{self.folder.name}-quarto-own")
            self.quarto_own = typed_article(self.work, own, self.formats)
            timed(self.quarto_render, self.quarto_own)  # cold: Quarto's caches filled, untimed

    @property
    def quarto_render(self):
        return ["quarto", "render", "index.qmd", "--to", "all"]  # the formats typed_article lists

    def round(self, number):
        for scenario in SCENARIOS:
            log = self.scenario(scenario, number, self.work, self.build, self.ratios, self.prose_seconds)
            self.rules[scenario] = sorted(rules_run(log))
            if scenario == "prose":
                self.job_seconds = {rule: benchmark_seconds(self.work, rule) for rule in self.rules[scenario]}
                if self.quarto_own is not None:  # the same edit, Quarto alone, back to back
                    if "typst" not in self.formats:  # the build's edit to the editions Quarto writes here
                        edit(self.work / "article/index.qmd", number)
                        self.same_formats_seconds.append(timed([*self.build, "--omit-from", "pdf"], self.work).wall)
                    edit(self.quarto_own / "index.qmd", number)
                    self.quarto_own_seconds.append(timed(self.quarto_render, self.quarto_own).wall)
                    if self.same_formats_seconds:  # the PDF and what is made from it, untimed: the next no-op is one
                        timed(self.build, self.work)
            for copy, build, ratios, jobs in self.floors.values():
                jobs[scenario] = len(rules_run(self.scenario(scenario, number, copy, build, ratios)))

    @staticmethod
    def scenario(scenario, number, work, build, ratios, seconds=None):
        """Time one scenario in `work` after the start-up it is divided by,
        into `ratios` (and the prose edit's wall seconds into `seconds`) -> its log."""
        start_wall, start_cpu, _, _ = timed(["snakemake", "--version"], work)
        if scenario == "prose":
            edit(work / "article/index.qmd", number)
        wall, cpu, _, log = timed(build, work)
        ratios[scenario][0].append(wall / start_wall)
        ratios[scenario][1].append(cpu / start_cpu)
        if scenario == "prose" and seconds is not None:
            seconds.append(wall)
        return log


def edit(path, number):
    """The one-sentence prose edit of round `number`."""
    time.sleep(1.1)  # the edit newer than the outputs on coarse clocks
    with path.open("a", encoding="utf-8") as f:
        f.write(f"\nAnother sentence for round {'i' * number}, with no digits.\n")


def typed_article(work, folder, formats, text="source"):
    """Quarto's own project of the built article's text with its values
    typed in, under the article's options, read from the _quarto.yml that
    holds them (the project's; its render list and profile aside: no
    hooks), its style sheets beside it and its figures where its links
    find them, listing `formats` (the article's options for those it
    has). -> the folder of its index.qmd. Also benchmarks/quarto_preview.py's
    `typed`.

    text="source": the article as its author writes it, each value typed
    in as the article prints it (the bound document, build/article.bound.md,
    each value's link its text alone: typed_values); its citations and
    cross-references left for Quarto, with the bibliography, its values
    bound, that _quarto.yml names. What a Quarto author of the same article
    without articlekit would preview.
    text="markdown": the build's markdown edition (build/article.md), where
    the citations and cross-references are already written out, so Quarto
    runs no citeproc: the baseline until 2026-12-06, kept for comparison."""
    article = folder / "article"
    article.mkdir(parents=True)
    settings = project_root(work / "article")
    config = {key: value for key, value in project_config(settings).items() if key not in DROPPED}
    own = config.get("format") or {}
    config["format"] = {fmt: own.get(fmt) or "default" for fmt in formats}
    html = config["format"].get("html")
    if isinstance(html, dict) and html.get("css"):
        sheets = [html["css"]] if isinstance(html["css"], str) else html["css"]
        for sheet in sheets:  # beside the text, as its _quarto.yml names them
            shutil.copy(settings / sheet, article / Path(sheet).name)
        config["format"]["html"] = {**html, "css": [Path(sheet).name for sheet in sheets]}
    if text == "markdown" or not config.get("bibliography"):
        config.pop("bibliography", None)
    else:
        bibliography = settings / config["bibliography"]
        bindings = read_json(work / "build/bindings.json")
        (article / bibliography.name).write_text(bound_bibliography(bibliography, bindings), encoding="utf-8")
        config["bibliography"] = bibliography.name
    (article / "_quarto.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    if text == "markdown":
        shutil.copy(work / "build/article.md", article / "index.qmd")
    else:
        bound = (work / "build/article.bound.md").read_text(encoding="utf-8")
        (article / "index.qmd").write_text(typed_values(bound), encoding="utf-8")
    shutil.copytree(work / "figures", folder / "figures")
    return article


# what of the project's _quarto.yml the typed text's project leaves out
DROPPED = ("project", "profile")

# In the bound document (articlekit/article/bound.py): a value's link
# [TEXT](#ANCHOR "TITLE"){... .bound-value}, a key's {.bound-source}, and
# the empty span of a claim that holds; TEXT may be a code span
BOUND_LINK = re.compile(
    r'\[((?:`[^`]*`|[^\]\\`]|\\.)*)\]\(#[^\s)]*\s+"(?:[^"\\]|\\.)*"\)\{[^}]*\.bound-(?:value|source)\b[^}]*\}'
)
CHECKED_CLAIM = re.compile(r"\[\]\{\.claim-checked[^}]*\}")


def typed_values(bound):
    """The bound document with each value and key as its text alone, as an
    author typing the numbers in would write them."""
    return CHECKED_CLAIM.sub("", BOUND_LINK.sub(r"\1", bound))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--configfile",
        action="append",
        help="a config file (repeatable; default: " + " and ".join(DEFAULT_CONFIGS) + ")",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    parser.add_argument("--quarto-pdf", action="store_true", help="Quarto's own render writes the PDF too (Typst)")
    parser.add_argument(
        "--project", action="append", help="[LABEL=]DIR, a checkout to copy (repeatable; default: this one)"
    )
    args = parser.parse_args(argv)
    formats = QUARTO_OWN + (("typst",) if args.quarto_pdf else ())
    if not shutil.which("quarto") and (SHARED_QUARTO / "quarto").exists():
        os.environ["PATH"] = f"{SHARED_QUARTO}{os.pathsep}{os.environ['PATH']}"
    if not shutil.which("quarto"):
        print("no quarto on PATH or in ../shared/quarto/bin: Quarto's own render is not timed", file=sys.stderr)

    tmp = Path(tempfile.mkdtemp(prefix="articlekit-bench-"))
    loads = [load()]
    setups = [
        Setup(label, checkout, configfile, tmp / f"{i}-{label}-{Path(configfile).stem}", args.cores, formats)
        for i, ((label, checkout), configfile) in enumerate(
            (p, c) for p in projects(args.project) for c in (args.configfile or DEFAULT_CONFIGS)
        )
    ]
    bare = tmp / "snakemake-alone"
    bare.mkdir()
    (bare / "Snakefile").write_text(BARE_SNAKEFILE, encoding="utf-8")
    alone = {scenario: ([], []) for scenario in ("alone, no-op", "alone, 1 job")}
    print(f"benchmarking in {tmp}: " + "; ".join(s.name for s in setups), file=sys.stderr)
    try:
        for setup in setups:
            setup.cold()
        timed(["snakemake", "--cores", "1"], bare)
        for number in range(1, args.rounds + 1):
            for setup in setups:
                setup.round(number)
            for scenario in alone:
                start_wall, start_cpu, _, _ = timed(["snakemake", "--version"], bare)
                if scenario == "alone, 1 job":
                    (bare / "one.txt").unlink()
                wall, cpu, _, _ = timed(["snakemake", "--cores", str(args.cores)], bare)
                alone[scenario][0].append(wall / start_wall)
                alone[scenario][1].append(cpu / start_cpu)
            print(f"  round {number} done (load {load()})", file=sys.stderr)
    finally:
        loads.append(load())
        if not args.keep:
            shutil.rmtree(tmp)

    print(
        f"{'scenario':<34} {'wall / start-up':>22} {'CPU / start-up':>22}  rules run  ({args.rounds} rounds, "
        f"load {loads[0]} at the start, {loads[1]} at the end)"
    )
    for setup in setups:
        print(f"{setup.name}: cold build {setup.cold_wall:.1f} s wall ({len(setup.cold_rules)} rules)")
        for scenario, (wall, cpu) in setup.ratios.items():
            ran = ", ".join(setup.rules[scenario]) or "(none)"
            print(f"  {scenario:<32} {summary(wall):>22} {summary(cpu):>22}  {ran}")
        for floor, (_, _, ratios, jobs) in setup.floors.items():
            for scenario, (wall, cpu) in ratios.items():
                ran = f"{jobs[scenario]} jobs, each a touch"
                print(f"  {floor + ', ' + scenario:<32} {summary(wall):>22} {summary(cpu):>22}  {ran}")
        if setup.quarto_own_seconds:
            print(
                f"  Quarto's own render of the same text to {', '.join(setup.formats)}: "
                f"{statistics.median(setup.quarto_own_seconds):.1f} s"
            )
        for what, seconds in (
            ("every edition", setup.prose_seconds),
            ("the same editions as Quarto's (--omit-from pdf)", setup.same_formats_seconds),
        ):
            if seconds and setup.quarto_own_seconds:
                ratios = [b / q for b, q in zip(seconds, setup.quarto_own_seconds)]
                print(
                    f"  prose edit, {what}: {statistics.median(seconds):.1f} s; the build / Quarto's own "
                    f"{summary(ratios)} (target: at most 1x)"
                )
        print(
            "  the prose edit's jobs, last round (s, wall, benchmarks/out/RULE.tsv): "
            + ", ".join(
                f"{rule} {'?' if seconds is None else f'{seconds:.2f}'}" for rule, seconds in setup.job_seconds.items()
            )
        )
    print("Snakemake alone, a one-rule workflow:")
    for scenario, (wall, cpu) in alone.items():
        print(f"  {scenario:<32} {summary(wall):>22} {summary(cpu):>22}")
    print(
        "\ntargets: "
        + ", ".join(f"{scenario} under {target}x" for scenario, target in TARGETS.items())
        + " (median, wall)"
    )


def rules_run(log):
    """The rules whose jobs a Snakemake log says finished, but `all`."""
    return set(FINISHED.findall(log)) - {"all"}


def benchmark_seconds(work, rule):
    """The wall seconds of a rule's last job, from its benchmark: file (None without one)."""
    path = work / "benchmarks" / "out" / f"{rule}.tsv"
    return float(path.read_text(encoding="utf-8").splitlines()[-1].split("\t")[0]) if path.exists() else None


if __name__ == "__main__":
    main()
