"""Every artifact is owned by its rule (issue 26, item 2).

A hostile experiment cannot put words in another rule's mouth, and nothing
edited after a build passes for the build:

- an experiment that rewrites another experiment's artifact, or the
  baseline, by a relative path (a plain write, and atomically with
  os.replace) writes into its empty scratch folder: the write lands
  nowhere, and the build is the clean one;
- the same by absolute paths, covering its tracks with articlekit's own
  ledger API: the build fails naming the file and the rule that should have
  written it (and the baseline that changed while the build ran), and
  `snakemake -n` then refuses instead of saying "Nothing to be done";
- a page edited after the build, an artifact forged after it, an input
  changed since: `python -m articlekit verify` names each, with its rule;
  the next `snakemake` refuses the forged artifact, naming the command
  that makes it again, and that command brings the build back.

The end-to-end cases copy one clean build of config/test.yaml (its mtimes
and Snakemake's records kept) and run Snakemake forked from one process
that has imported it (tests/snakemake_fork.py). The pieces (the ledger, the
manifest, verify, the values reader) are held to the same sentences
directly, without Snakemake.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from articlekit.__main__ import main as cli
from articlekit.core.ledger import Ledger, file_digest
from articlekit.core.workfiles import owner_tag
from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from articlekit.experiment.scratch import scratch_folder
from articlekit.review import verify as verifymod
from articlekit.review.manifest import MANIFEST, ManifestError, build_manifest
from tests.workspace import copy_environment

# Each end-to-end case works in a copy of its own of the built template: any
# worker may take it (tests/tiers.py).
pytestmark = pytest.mark.spread

FAST = ["--configfile", "config/test.yaml", "--config", "strict=false"]
VICTIM = "results/parity.json"
FORGED = 3.0e-16  # parity.sdpa.max_abs_diff, as the hostile experiment would have the page say


# ---- the pieces, without Snakemake ------------------------------------------------


def recorded(tmp_path, files):
    """A ledger in tmp_path recording `files` ({path: (rule, text)}) as their
    rules' jobs wrote them; the working folder is tmp_path."""
    ledger = Ledger(tmp_path / "ledger.json")
    for path, (rule, text) in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        ledger.running(rule, [path], ["experiments/x.py"])
        (tmp_path / path).write_text(text)
        ledger.finished([path])
    ledger.save()
    return Ledger.load(tmp_path / "ledger.json")


def test_an_output_is_its_rules_only_while_it_has_the_digest_taken_when_its_job_finished(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ledger = recorded(tmp_path, {"results/a.json": ("a", "{}")})
    assert ledger.unowned("results/a.json") is None
    Path("results/a.json").write_text('{"forged": 1}')
    problem = ledger.output_problem("results/a.json")
    assert problem.startswith("results/a.json: not what rule a wrote: its SHA-256 is ")
    assert "snakemake --cores all --forcerun a" in problem
    assert ledger.output_problem("results/b.json", "b").startswith("results/b.json: no record that rule b wrote it")
    ledger.running("a", ["results/a.json"], [])
    assert "never reported finishing" in ledger.unowned("results/a.json")
    missing = Ledger.load(tmp_path / "nowhere.json").output_problem("results/a.json", "a")
    assert "nowhere.json does not exist" in missing and "--forcerun a" in missing


def test_a_source_is_good_while_it_is_what_it_was_when_the_run_started(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("baseline.yaml").write_text("entries: []\n")
    ledger = Ledger(tmp_path / "ledger.json")
    ledger.run_started({"baseline.yaml": file_digest("baseline.yaml")})
    assert ledger.source_problem("baseline.yaml") is None
    assert ledger.source_problem("not-a-source.yaml") is None
    Path("baseline.yaml").write_text("entries: [forged]\n")
    assert ledger.source_problem("baseline.yaml").startswith("baseline.yaml: changed while this build ran")


def test_an_experiments_code_runs_with_nothing_of_the_project_in_reach(tmp_path, monkeypatch):
    """run() and plot() write by relative paths into their scratch folder;
    the artifact and the figure asked for land where they were asked for."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "baseline").mkdir()
    (tmp_path / "baseline/published.yaml").write_text("entries: []\n")

    def run(params):
        assert not Path("baseline/published.yaml").exists()  # nothing to read by a relative path
        Path("results").mkdir()
        Path("results/other.json").write_text("{}")
        Path("baseline").mkdir()
        Path("baseline/.forged").write_text("entries: [forged]\n")
        os.replace("baseline/.forged", "baseline/published.yaml")
        return {"x": 1}

    def plot(values, params, figures):
        plt = pyplot()
        fig, _ = plt.subplots()
        save_figure(fig, figures["f"])
        plt.close(fig)

    run_experiment(
        "probe", run, plot, argv=["--params", "{}", "--json", "results/probe.json", "--figure", "f=figures/probe-f.svg"]
    )
    assert Path.cwd() == tmp_path
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "baseline/published.yaml",
        "figures/probe-f.svg",
        "results/probe.json",
    ]
    assert (tmp_path / "baseline/published.yaml").read_text() == "entries: []\n"
    assert json.loads((tmp_path / "results/probe.json").read_text())["values"] == {"x": 1}


def test_an_experiments_next_run_removes_the_scratch_folders_its_killed_runs_left(tmp_path, monkeypatch):
    """kill -9 leaves a scratch folder in the system's temporary folder; the
    experiment's next run removes those whose owner is gone, and keeps a
    live run's (a sweep's chunk beside it), another machine's (a cluster's
    nodes may share the folder; a pid names a process of this one) and any
    name not its own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    here = f"articlekit-probe@{socket.gethostname()}@"
    killed = tmp_path / f"{here}999999999_5-abc"
    running = tmp_path / f"{here}{owner_tag()}-def"
    not_ours = [
        tmp_path / f"articlekit-probe@{socket.gethostname()}-2@999999999_5-x",  # another node's
        tmp_path / f"{here}notes",
        tmp_path / f"articlekit-other@{socket.gethostname()}@999999999_5-x",
    ]
    for folder in (killed, running, *not_ours):
        folder.mkdir()
    (killed / "results.json").write_text('{"half')
    with scratch_folder("probe") as folder:
        assert folder.parent == tmp_path and folder.name.startswith(f"{here}{owner_tag()}-")
        assert not killed.exists()
    assert not folder.exists()
    assert running.exists() and all(path.exists() for path in not_ours)


def test_values_refuses_an_artifact_its_rule_did_not_write(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    envelope = {"experiment": "a", "script": "experiments/a.py", "params": {}, "values": {"x": 1}}
    recorded(tmp_path, {"results/a.json": ("a", json.dumps(envelope))})
    assert cli(["values", "results/a.json", "--ledger", "ledger.json", "--out", "values.json"]) == 0
    Path("results/a.json").write_text(json.dumps({**envelope, "values": {"x": 2}}))
    assert cli(["values", "results/a.json", "--ledger", "ledger.json", "--out", "values.json"]) == 1
    said = capsys.readouterr().err
    assert "values: results/a.json: not what rule a wrote" in said and "--forcerun a" in said


def test_the_manifest_lists_every_file_with_its_rule_and_refuses_a_forged_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("experiments").mkdir()
    Path("experiments/x.py").write_text("def run(params): ...\n")
    Path("config.yaml").write_text("x: {}\n")
    ledger = recorded(tmp_path, {"results/a.json": ("a", "{}"), "build/page.html": ("render", "<html>")})
    manifest = build_manifest(ledger, ["results/a.json", "build/page.html"], ["config.yaml"])
    assert manifest["outputs"]["build/page.html"] == {"sha256": file_digest("build/page.html"), "rule": "render"}
    assert manifest["inputs"]["experiments/x.py"]["read_by"] == ["a", "render"]
    assert manifest["inputs"]["config.yaml"]["read_by"] == ["the plan"]
    Path("build/page.html").write_text("<html>forged")
    with pytest.raises(ManifestError, match="build/page.html: not what rule render wrote"):
        build_manifest(ledger, ["results/a.json", "build/page.html"])


def test_verify_names_a_changed_output_a_changed_input_and_a_rewritten_manifest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("experiments").mkdir()
    Path("experiments/x.py").write_text("def run(params): ...\n")
    ledger = recorded(tmp_path, {"build/page.html": ("render", "<html>")})
    manifest = build_manifest(ledger, ["build/page.html"])
    assert verifymod.problems(manifest) == []
    Path("build/page.html").write_text("<html>edited")
    Path("experiments/x.py").write_text("def run(params): return {}\n")
    found = verifymod.problems(manifest)
    assert [p.split(":")[0] for p in found] == ["build/page.html", "experiments/x.py"]
    assert "changed since rule render made it" in found[0] and "--forcerun render" in found[0]
    assert "changed since the build" in found[1] and "read by render" in found[1]
    # a manifest made to match the edit is not the one its rule wrote
    ledger = recorded(tmp_path, {MANIFEST: ("manifest", json.dumps(manifest))})
    Path(MANIFEST).write_text(json.dumps({**manifest, "outputs": {}}))
    assert f"{MANIFEST}: not what rule manifest wrote" in verifymod.problems(manifest, ledger)[0]


# ---- end to end ------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(built_project):
    """One clean build of config/test.yaml (conftest's, shared): never changed, only copied."""
    return built_project


@pytest.fixture(scope="module")
def server():
    from tests.snakemake_fork import SnakemakeServer

    server = SnakemakeServer()
    yield server
    server.close()


@pytest.fixture
def case(template, tmp_path):
    work = tmp_path / "case"
    shutil.copytree(template, work, symlinks=True)
    return work


def snakemake(server, work, *args):
    """-> (exit code, output) of snakemake --cores 2 ARGS on the fast config."""
    log = work.parent / f"snakemake-{len(list(work.parent.glob('snakemake-*.log')))}.log"
    code = server.start(work, ["--cores", "2", *args, *FAST], copy_environment(work), log).wait(timeout=900)
    return code, log.read_text(encoding="utf-8", errors="replace")


def verify(work):
    return subprocess.run(
        [sys.executable, "-m", "articlekit", "verify"],
        cwd=work,
        env=copy_environment(work),
        capture_output=True,
        text=True,
        timeout=120,
    )


# What the hostile experiment runs before its own work: parity's artifact
# with a value of its choosing, and a baseline whose check says yes to
# anything, written through `root` (the job's working folder, or the real
# project found from the script's own path) as a plain write and atomically.
HOSTILE = '''

import json as _json
import os as _os
from pathlib import Path as _Path

_PROJECT = _Path(__file__).resolve().parents[1]  # the real project, through the shadow's link too


def _forge(where):
    # The sweep's chunks run this script too, beside its own job: one forger
    # at a time, or one reads the victim while another has it half-written.
    import fcntl as _fcntl

    with open(__file__, "rb") as _me:
        _fcntl.flock(_me, _fcntl.LOCK_EX)
        _forge_alone(where)


def _forge_alone(where):
    root = _PROJECT if where == "absolute" else _Path(".")
    victim = _json.loads((_PROJECT / "{victim}").read_text())
    victim["values"]["sdpa"]["max_abs_diff"] = {forged!r}
    (root / "results").mkdir(exist_ok=True)
    (root / "{victim}").write_text(_json.dumps(victim))
    (root / "results/.forged").write_text(_json.dumps(victim, indent=1))
    _os.replace(root / "results/.forged", root / "{victim}")
    baseline = (_PROJECT / "baseline/published.yaml").read_text().replace('check: "< 1e-12"', 'check: "< 1"')
    (root / "baseline").mkdir(exist_ok=True)
    (root / "baseline/.forged").write_text(baseline)
    _os.replace(root / "baseline/.forged", root / "baseline/published.yaml")
    if where == "absolute":  # and cover its tracks with articlekit's own API
        try:
            from articlekit.core.ledger import Ledger, file_digest
        except ImportError:
            return
        ledger = Ledger.load(_PROJECT / ".snakemake/articlekit/ledger.json")
        ledger.outputs["{victim}"]["sha256"] = file_digest(_PROJECT / "{victim}")
        ledger.save()
'''


def make_hostile(work, where):
    script = work / "experiments/example.py"
    text = script.read_text(encoding="utf-8")
    assert "def run(params):\n" in text
    text = text.replace("def run(params):\n", f"def run(params):\n    _forge({where!r})\n", 1)
    main = text.index("\nif __name__ == \"__main__\":")
    script.write_text(text[:main] + HOSTILE.format(victim=VICTIM, forged=FORGED) + text[main:], encoding="utf-8")


def printed_sdpa(work):
    bindings = json.loads((work / "build/bindings.json").read_text(encoding="utf-8"))["bindings"]
    return {b["text"] for b in bindings.values() if b["key"] == "parity.sdpa.max_abs_diff"}


@pytest.mark.slow
def test_a_write_by_relative_path_to_another_rules_artifact_or_the_baseline_lands_nowhere(server, case, template):
    make_hostile(case, "relative")
    code, output = snakemake(server, case)
    assert code == 0, output[-4000:]
    assert "example" in output  # the hostile experiment did run
    assert (case / VICTIM).read_bytes() == (template / VICTIM).read_bytes()
    assert (case / "baseline/published.yaml").read_bytes() == (template / "baseline/published.yaml").read_bytes()
    assert printed_sdpa(case) == printed_sdpa(template)
    assert verify(case).returncode == 0
    # every artifact still names its script as the article does, not by where it ran
    for result in (case / "results").glob("*.json"):
        script = json.loads(result.read_text(encoding="utf-8"))["script"]
        assert not Path(script).is_absolute(), f"{result.name}: {script}"


@pytest.mark.slow
def test_a_forgery_by_absolute_path_fails_the_build_naming_the_file_and_its_rule(server, case, template):
    make_hostile(case, "absolute")
    code, output = snakemake(server, case)
    assert code != 0, output[-4000:]
    assert f"{VICTIM}: not what rule parity wrote" in output, output[-4000:]
    assert "snakemake --cores all --forcerun parity" in output
    assert "baseline/published.yaml: changed while this build ran" in output
    assert "Traceback (most recent call last)" not in output
    assert printed_sdpa(case) == printed_sdpa(template)  # the page never got the forged value
    code, plan = snakemake(server, case, "--dry-run")
    assert "Nothing to be done" not in plan
    assert code != 0 and f"{VICTIM}: not what rule parity wrote" in plan, plan[-3000:]


@pytest.mark.slow
def test_a_page_edited_after_the_build_is_named_by_verify(server, case):
    assert verify(case).returncode == 0
    page = case / "build/article.html"
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", "<p>Added later.</p></body>"), encoding="utf-8")
    checked = verify(case)
    assert checked.returncode == 1
    assert "build/article.html: changed since rule html made it" in checked.stderr, checked.stderr
    assert "snakemake --cores all --forcerun html" in checked.stderr
    code, plan = snakemake(server, case, "--dry-run")
    assert code != 0 and "build/article.html: not what rule html wrote" in plan, plan[-3000:]


@pytest.mark.slow
def test_an_artifact_forged_after_the_build_is_named_and_refused_until_its_rule_runs_again(server, case, template):
    forged = json.loads((case / VICTIM).read_text(encoding="utf-8"))
    forged["values"]["sdpa"]["max_abs_diff"] = FORGED
    (case / VICTIM).write_text(json.dumps(forged), encoding="utf-8")
    checked = verify(case)
    assert checked.returncode == 1
    assert f"{VICTIM}: changed since rule parity made it" in checked.stderr, checked.stderr
    for attempt in range(2):  # refused, and again: nothing is built on it
        code, output = snakemake(server, case)
        assert code != 0 and f"{VICTIM}: not what rule parity wrote" in output, output[-3000:]
        assert "Rerun those rules: snakemake --cores all --configfile config/test.yaml --forcerun parity" in output
    code, output = snakemake(server, case, "--forcerun", "parity")  # what the message says to do
    assert code == 0, output[-4000:]
    assert (case / VICTIM).read_bytes() == (template / VICTIM).read_bytes()
    assert verify(case).returncode == 0


@pytest.mark.slow
def test_a_timing_run_forged_after_the_build_is_refused_before_its_runs_are_combined(server, case, template):
    """Each run of an experiment with runs: N is an output of rule timing:
    a run file rewritten by hand (a faster loop, say) is not combined into
    the printed interval, even when the combine step is asked to run."""
    run = case / "results/runs/timing/run-1.json"
    forged = json.loads(run.read_text(encoding="utf-8"))
    forged["values"] = json.loads(json.dumps(forged["values"]), parse_float=lambda text: float(text) / 2)
    run.write_text(json.dumps(forged), encoding="utf-8")
    code, output = snakemake(server, case, "--forcerun", "timing_combine")
    assert code != 0, output[-4000:]
    assert "results/runs/timing/run-1.json: not what rule timing wrote" in output, output[-4000:]
    assert (
        not (case / "results/timing.json").exists()
        or (case / "results/timing.json").read_bytes() == (template / "results/timing.json").read_bytes()
    )
    assert (case / "build/bindings.json").read_bytes() == (template / "build/bindings.json").read_bytes()


@pytest.mark.slow
def test_an_input_changed_since_the_build_is_named_by_verify(case):
    article = case / "article/index.qmd"
    article.write_text(article.read_text(encoding="utf-8") + "\nA sentence added after the build.\n", encoding="utf-8")
    checked = verify(case)
    assert checked.returncode == 1
    assert "article/index.qmd: changed since the build" in checked.stderr, checked.stderr
    assert "read by bind" in checked.stderr


@pytest.mark.slow
@pytest.mark.parametrize("target", [[], ["build/values.json"]], ids=["the default target", "a file's own target"])
def test_a_job_whose_end_snakemake_recorded_before_a_kill_is_taken_as_finished(server, case, target):
    """The main process killed between Snakemake's record of a finished job
    and the ledger's: the ledger says the job is still running, Snakemake's
    metadata has it complete with the file's mtime. The run takes it as
    finished, so the next job that reads it does not refuse it: whatever
    the target (the default target's plan adopts it, and so does the start
    of a run of any other)."""
    ledger_file = case / ".snakemake/articlekit/ledger.json"
    ledger = json.loads(ledger_file.read_text(encoding="utf-8"))
    ledger["outputs"][VICTIM]["state"] = "running"
    ledger_file.write_text(json.dumps(ledger), encoding="utf-8")
    code, output = snakemake(server, case, *target, "--forcerun", "values")
    assert code == 0, output[-4000:]
    assert json.loads(ledger_file.read_text(encoding="utf-8"))["outputs"][VICTIM]["state"] == "finished"


@pytest.mark.slow
def test_a_run_that_would_hide_its_jobs_ends_is_refused_before_any_job(server, case):
    code, output = snakemake(server, case, "--quiet", "progress", "--forcerun", "values")
    assert code != 0 and "--quiet progress (a bare --quiet means it too)" in output, output[-3000:]
    assert "Leave progress out: --quiet rules host reason" in output


@pytest.mark.slow
def test_a_build_without_its_ledger_is_refused_once_in_one_sentence_and_forceall_mends_it(server, case):
    """.snakemake/ removed (or a checkout built before the ledger): no output
    can be vouched for. One sentence says so and how to rebuild, not one
    line per output; the rebuild it names then builds."""
    shutil.rmtree(case / ".snakemake" / "articlekit")
    code, output = snakemake(server, case, "--dry-run")
    assert code != 0
    assert output.count("does not exist") == 1, output[-3000:]
    assert "takes none of them. Rebuild them once: snakemake --cores all --forceall" in output
    code, output = snakemake(server, case, "--forceall")
    assert code == 0, output[-3000:]


@pytest.mark.workflow
def test_verify_without_a_build_says_to_build_and_help_exits_0(tmp_path):
    run = [sys.executable, "-m", "articlekit", "verify"]
    missing = subprocess.run(
        run, cwd=tmp_path, env=copy_environment(Path(__file__).parent.parent), capture_output=True, text=True
    )
    assert missing.returncode == 1 and f"{MANIFEST}: no such file" in missing.stderr
    assert subprocess.run([*run, "--help"], capture_output=True).returncode == 0


@pytest.mark.e2e
def test_a_release_pins_the_editions_and_a_forged_page_then_fails_verify(server, case):
    """snakemake release writes the digests a later verify holds the build to;
    a page forged with its digests in the manifest and the ledger fails there."""
    log = case.parent / "release.log"
    command = [
        "release",
        "--cores",
        "2",
        "--configfile",
        "config/test.yaml",
        "--config",
        "strict=false",
        "release_label=t1",
    ]
    code = server.start(case, command, copy_environment(case), log).wait(timeout=900)
    output = log.read_text(encoding="utf-8", errors="replace")
    assert code == 0, output[-3000:]
    pinned = json.loads((case / "releases/t1/digests.json").read_text(encoding="utf-8"))
    assert "build/article.html" in pinned["outputs"] and "build/article.pdf" in pinned["outputs"]
    checked = verify(case)
    assert checked.returncode == 0 and "releases/t1/digests.json" in checked.stdout, checked.stdout
    page = case / "build/article.html"
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", "<p>Forged.</p></body>"), encoding="utf-8")
    forged = file_digest(page)
    crate = json.loads((case / MANIFEST).read_text(encoding="utf-8"))
    for entity in crate["@graph"]:
        if entity.get("name") == "build/article.html" and "sha256" in entity:
            entity["sha256"] = forged
    (case / MANIFEST).write_text(json.dumps(crate), encoding="utf-8")
    ledger = case / ".snakemake/articlekit/ledger.json"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace(pinned["outputs"]["build/article.html"], forged))
    checked = verify(case)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "build/article.html: not the file release t1 shipped" in checked.stderr, checked.stderr
