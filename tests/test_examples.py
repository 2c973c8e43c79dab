"""The second article (examples/summation) and the skeleton `articlekit new`
writes: each built end to end by its own `snakemake --cores 2`, in a copy
of its folder alone, with this checkout's articlekit as the installed
library (first on PYTHONPATH) and its Snakemake module.

The builds pin renderer=pandoc so that they run wherever the suite runs;
the example's build with the real Quarto is marked `quarto` and skips,
saying why, without it (REQUIRE_QUARTO=1 makes that a failure).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from articlekit.core.jsonio import read_json
from articlekit.skeleton.new import new_article
from tests.crate_validation import declared_profile, validation_issues
from tests.shared_build import BuildFailed, shared_build
from tests.test_quarto import Loads, bound_links, git_status, page_text, require_quarto
from tests import snakemake_fork

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "summation"


def tracked_files(folder):
    """Paths under folder a fresh clone would hold (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "."],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(p for p in set(listed.split("\0")) if p and (folder / p).is_file())


def copy_article(folder, dest):
    """The article folder as a clone has it: nothing built, nothing beside it."""
    for rel in tracked_files(folder):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(folder / rel, dest / rel)
    return dest


def _environment(env=None):
    return {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def snakemake(folder, *args, env=None):
    """snakemake --cores 2 ARGS, forked from one that has imported it
    (tests/snakemake_fork.py): both streams in .stdout."""
    done = snakemake_fork.run(folder, ["--cores", "2", *args], _environment(env), timeout=900)
    if done.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} in {folder} failed (exit {done.returncode}):\n{done.stdout[-8000:]}")
    return done


def built_example(tmp_path_factory):
    """A copy of its own of examples/summation built by its own snakemake
    with Pandoc, the build made once in the run (tests/shared_build.py):
    this module and tests/test_browser.py read the same build."""

    def make(folder):
        work = copy_article(EXAMPLE, folder)
        return subprocess.run(
            ["snakemake", "--cores", "2", "--config", "renderer=pandoc"],
            cwd=work,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=900,
        )

    try:
        return shared_build(tmp_path_factory, "example", make, folder="summation").project
    except BuildFailed as exc:
        pytest.fail(f"building examples/summation failed: {exc}", pytrace=False)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    return built_example(tmp_path_factory)


def bound_texts(folder):
    """{lookup id: the text the article prints} from build/bindings.json."""
    return {lookup: b["text"] for lookup, b in read_json(folder / "build/bindings.json")["bindings"].items()}


def test_the_example_builds_its_article_audit_and_diff_from_its_own_folder(example):
    for path in (
        "build/article.html",
        "build/article.md",
        "build/audit.json",
        "build/diff.md",
        "results/summation.json",
        "results/tenths.json",
        "figures/summation-error.svg",
    ):
        assert (example / path).stat().st_size > 0, path


def test_its_article_shows_every_bound_value_and_checks_every_claim(example):
    md = (example / "build/article.md").read_text(encoding="utf-8")
    texts = bound_texts(example)
    assert texts["tenths.naive|r|"] == "0.9999999999999999"
    for lookup, text in texts.items():
        assert text in md, lookup
    claims = read_json(example / "build/bindings.json")["claims"]
    assert len(claims) >= 5 and all(claim["holds"] for claim in claims)
    assert "def pairwise_sum(xs, block=8):" in md  # the listing, cut from the experiment that ran
    assert "{{<" not in md


def test_its_figure_is_on_the_page(example):
    page = (example / "build/article.html").read_text(encoding="utf-8")
    assert "data:image/svg+xml" in page  # embedded: the page reads offline
    assert "Mean relative error of three ways to sum float32 values" in page


def test_its_audit_finds_the_published_edition_reproduced_but_for_its_erratum(example):
    summary = read_json(example / "build/audit.json")["summary"]
    assert (summary["reproduced"], summary["erratum"]) == (4, 1)
    assert summary["moved_unexpectedly"] == summary["key_missing"] == summary["claims_failed"] == 0


def test_the_examples_workflow_passes_snakemakes_lint(example):
    snakemake(example, "--lint")


def test_its_crate_is_valid_for_the_profile_it_declares_and_names_every_bound_value(example, monkeypatch, tmp_path):
    profile = declared_profile(example / "build")
    assert validation_issues(example / "build", profile, monkeypatch, cache=tmp_path / "cache") == []
    graph = {e["@id"]: e for e in read_json(example / "build/ro-crate-metadata.json")["@graph"]}
    keys = {b["key"] for b in read_json(example / "build/bindings.json")["bindings"].values()}
    assert {e["propertyID"] for e in graph.values() if e["@id"].startswith("#value-")} == keys
    # the journal's bundle carries it beside the JATS edition
    with zipfile.ZipFile(example / "build/article.meca.zip") as bundle:
        assert bundle.read("ro-crate-metadata.json") == (example / "build/ro-crate-metadata.json").read_bytes()
    # verify, in the example's folder, reads the crate back: every file matches
    done = subprocess.run(
        [sys.executable, "-m", "articlekit", "verify"], cwd=example, env=_environment(), capture_output=True, text=True
    )
    assert "build/ro-crate-metadata.json: all" in done.stdout, done.stdout + done.stderr


def test_a_second_build_of_the_example_has_nothing_to_do(example):
    done = snakemake(example, "--config", "renderer=pandoc", "-n")
    assert "Nothing to be done" in done.stdout + done.stderr


def test_a_reviewer_recomputes_one_of_its_numbers_in_its_own_folder(example):
    """`python -m articlekit reproduce` knows no article: in the example's
    folder it reruns the example's experiment alone and judges its number."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        ["python", "-m", "articlekit", "reproduce", "tenths.fsum"],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "tenths.fsum\n  build:    1.0\n  rerun:    1.0\n" in done.stdout
    assert "verdict:  agrees" in done.stdout
    assert "tenths.fsum == 1.0: ✓ in the build, ✓ now" in done.stdout
    assert "tenths reruns with the build's params" in done.stderr
    assert not (example / "reproduce-params.yaml").exists(), "the rerun ran in a scratch copy, not here"


def test_no_file_of_the_example_is_a_copy_of_one_outside_it():
    def digest(path):
        return hashlib.sha256(path.read_bytes()).hexdigest()

    elsewhere = {digest(ROOT / p): p for p in tracked_files(ROOT) if not p.startswith("examples/")}
    copies = {p: elsewhere[digest(EXAMPLE / p)] for p in tracked_files(EXAMPLE) if digest(EXAMPLE / p) in elsewhere}
    assert copies == {}


def test_the_skeleton_from_articlekit_new_builds_as_written(tmp_path):
    folder = tmp_path / "my-article"
    new_article(folder)
    snakemake(folder, "--lint")
    snakemake(folder, "--config", "renderer=pandoc")
    md = (folder / "build/article.md").read_text(encoding="utf-8")
    assert md.startswith("# My article\n")
    for lookup, text in bound_texts(folder).items():
        assert text in md, lookup
    assert all(claim["holds"] for claim in read_json(folder / "build/bindings.json")["claims"])
    assert "data:image/svg+xml" in (folder / "build/article.html").read_text(encoding="utf-8")


def test_a_misspelt_section_stops_the_skeleton_before_any_job(tmp_path):
    folder = tmp_path / "typo"
    new_article(folder)
    config = folder / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("\npublishing:", "\npublishin:"), encoding="utf-8")
    done = snakemake_fork.run(folder, ["-n"], {**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    said = done.stdout  # both streams (Snakemake prints a WorkflowError on stdout)
    assert done.returncode != 0
    assert "config.yaml:" in said and "publishin: is neither a setting of articlekit's module" in said
    assert "did you mean publishing?" in said


@pytest.mark.quarto
def test_the_example_builds_with_the_real_quarto(tmp_path):
    quarto_env = require_quarto()
    work = copy_article(EXAMPLE, tmp_path / "summation")
    snakemake(work, "--config", "renderer=quarto", env=quarto_env)
    page = (work / "build/article.html").read_text(encoding="utf-8")
    assert "Rendered by Quarto " in page and 'class="bound-value"' in page
    assert "{{<" not in page and "{{&lt;" not in page
    # nothing left beside the article (Quarto's scratch folder is the project's, which its .gitignore names)
    assert sorted(p.name for p in (work / "article").iterdir()) == [".gitignore", "index.qmd"]
    # Quarto's own `quarto render` in the article's folder: the same article
    git_commit(work)
    quarto(work / "article", "render", env=quarto_env)
    native = work / "article/index.html"
    assert page_text(native.read_text(encoding="utf-8")) == page_text(page)
    assert bound_links(native) == bound_links(work / "build/article.html") != []
    assert git_status(work) == ""


def git_commit(folder):
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start"],
    ):
        subprocess.run(cmd, cwd=folder, check=True, capture_output=True)


def quarto(folder, *args, env):
    """`quarto ARGS` in folder, as a Quarto user runs it (this checkout's articlekit first)."""
    env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(["quarto", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(
            f"quarto {' '.join(args)} in {folder} failed (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
        )
    return done


@pytest.mark.quarto
def test_the_skeleton_renders_with_quarto_offline_and_leaves_its_tree_clean(tmp_path):
    """A new article with a formula added, as its author would: `quarto
    render` in its article folder binds it (the experiment runs) and writes
    a page that loads nothing from the network (math as MathML, no "Other
    Formats" links); the build with Quarto does too; git sees nothing new."""
    quarto_env = require_quarto()
    folder = tmp_path / "my-article"
    new_article(folder)
    article = folder / "article/index.qmd"
    article.write_text(
        article.read_text(encoding="utf-8") + "\nEuler's identity: $e^{i\\pi} + 1 = 0$.\n", encoding="utf-8"
    )
    git_commit(folder)
    quarto(folder / "article", "render", env=quarto_env)
    page = (folder / "article/index.html").read_text(encoding="utf-8")
    loads = Loads()
    loads.feed(page)
    assert [load for load in loads.loads if not load.split("=", 1)[1].startswith(("data:", "#"))] == []
    assert loads.mathml and not loads.tex
    assert "{{<" not in page and "{{&lt;" not in page
    assert 'class="bound-value"' in page and "<math" in page
    assert git_status(folder) == ""
    snakemake(folder, "--config", "renderer=quarto", env=quarto_env)
    assert page_text((folder / "build/article.html").read_text(encoding="utf-8")) == page_text(page)
    assert bound_links(folder / "build/article.html") == bound_links(folder / "article/index.html") != []
    assert git_status(folder) == ""
