"""What a plan remembers between runs is never a stale answer.

A no-op plan skips the checks that passed before on the same bytes
(articlekit/workflow/plancache.py) and the parses of unchanged modules
(codegraph's remembered scans). Each may be skipped only while everything
it read is unchanged: any byte of a file it read, a value, a module of the
code that runs it, a library's version. These tests change each kind after
the memory is warm and require the check, or the parse, to happen again:
an edited config still stops the plan naming the line, a new import is
still followed, a schema's defaults still reach the rules.
"""

import json
import os
import subprocess
import sys

import pytest

from articlekit.workflow import codegraph, plancache
from tests.workspace import PROJECT_ROOT, copy_environment

# ---- the fingerprint --------------------------------------------------------------


@pytest.fixture
def memory(tmp_path):
    return plancache.PlanMemory(tmp_path / ".snakemake/articlekit/plan.json")


def test_a_fingerprint_changes_with_every_byte_value_module_and_library_it_covers(memory, tmp_path, monkeypatch):
    read = tmp_path / "config.yaml"
    read.write_text("a: 1\n")

    def fingerprint(**changes):
        codegraph.file_digest.cache_clear()  # a new plan: files are read afresh
        plancache._version.cache_clear()
        kind = {
            "files": [read],
            "values": {"a": 1},
            "code": ["articlekit.core.fmt"],
            "libraries": ["pyyaml"],
            **changes,
        }
        return memory.fingerprint("config", **kind)

    first = fingerprint()
    assert fingerprint() == first
    read.write_text("a: 2\n")
    assert fingerprint() != first
    read.write_text("a: 1\n")
    assert fingerprint() == first
    assert fingerprint(values={"a": 1.0}) != first  # 1 and 1.0 are not the same config
    assert fingerprint(values={"a": True}) != first
    assert fingerprint(files=[read, tmp_path / "not-there.yaml"]) != first
    assert fingerprint(code=["articlekit.core.fmt", "articlekit.core.keys"]) != first
    real_version = plancache.importlib.metadata.version
    monkeypatch.setattr(
        plancache.importlib.metadata, "version", lambda name: "99.0" if name == "pyyaml" else real_version(name)
    )
    assert fingerprint() != first


def test_a_module_of_the_code_that_changes_changes_the_fingerprint(memory, tmp_path, monkeypatch):
    """The code is read from the import graph: an edit to any file the
    checking module imports counts."""
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/__init__.py").write_text("")
    (tmp_path / "experiments/check.py").write_text("from experiments import rules\n")
    (tmp_path / "experiments/rules.py").write_text("LIMIT = 1\n")
    monkeypatch.chdir(tmp_path)

    def fingerprint():
        codegraph.file_digest.cache_clear()
        return memory.fingerprint("check", code=["experiments.check"])

    first = fingerprint()
    (tmp_path / "experiments/rules.py").write_text("LIMIT = 2\n")
    assert fingerprint() != first


def test_what_was_kept_is_read_back_and_a_damaged_file_is_a_miss(memory, tmp_path):
    memory.keep("f1")
    memory.keep("f2", ["releases/x/snapshot.json"])
    memory.save()
    again = plancache.PlanMemory(memory.path)
    assert again.recall("f1") is True and again.recall("f2") == ["releases/x/snapshot.json"]
    assert again.recall("f3") is None
    for damaged in ["{not json", json.dumps([1, 2]), json.dumps({"format": 1, "results": 7}), ""]:
        memory.path.write_text(damaged)
        assert plancache.PlanMemory(memory.path).recall("f1") is None


def test_only_the_newest_fingerprints_are_kept(memory):
    for n in range(plancache.KEPT + 5):
        memory.keep(f"f{n}")
    # f0 to f4 made room for the newest; f0, kept again, is the newest now and f5 goes
    memory.keep("f0")
    assert len(memory.results) == plancache.KEPT
    assert [memory.recall(f"f{n}") for n in (0, 1, 5, 6, plancache.KEPT + 4)] == [True, None, None, True, True]


def test_a_folder_that_cannot_be_written_keeps_nothing_and_fails_nothing(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    memory = plancache.PlanMemory(blocked / "plan.json")  # a folder that cannot exist
    memory.keep("f1")
    memory.save()
    assert not (blocked / "plan.json").exists()


# ---- the code graph's remembered parses ------------------------------------------------


def new_process():
    """What a fresh plan starts from: nothing read yet in this process."""
    for cached in (
        codegraph.file_digest,
        codegraph._scan,
        codegraph._node,
        codegraph._locate,
        codegraph._module_path,
        codegraph._package_data,
        codegraph._resolved,
    ):
        cached.cache_clear()


@pytest.fixture
def article(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/__init__.py").write_text("")
    (tmp_path / "experiments/run.py").write_text("import experiments.helper\n")
    (tmp_path / "experiments/helper.py").write_text("")
    (tmp_path / "experiments/later.py").write_text("")
    yield tmp_path
    new_process()
    codegraph._remembered.update(file=None, scans={}, changed=False)


def remembered_run(article, cache):
    new_process()
    codegraph.remember_scans(cache)
    files = codegraph.experiment_files("run", article_root=article)
    codegraph.save_scans()
    return files


def test_an_import_added_after_the_parse_was_remembered_is_followed(article):
    cache = article / ".snakemake/articlekit/codegraph.json"
    assert "experiments/later.py" not in remembered_run(article, cache)
    assert str(article / "experiments/run.py") in json.loads(cache.read_text())["scans"]
    (article / "experiments/run.py").write_text("import experiments.helper\nimport experiments.later\n")
    assert "experiments/later.py" in remembered_run(article, cache)


def test_a_remembered_parse_is_used_only_for_the_bytes_it_was_made_from(article):
    cache = article / ".snakemake/articlekit/codegraph.json"
    remembered_run(article, cache)
    kept = json.loads(cache.read_text())
    # a hand edit that keeps the digest of another content: the file is parsed again
    entry = kept["scans"][str(article / "experiments/run.py")]
    entry[0] = "0" * 64
    entry[1] = []
    cache.write_text(json.dumps(kept))
    assert "experiments/helper.py" in remembered_run(article, cache)
    # parses another version of codegraph.py made are not trusted at all
    kept = json.loads(cache.read_text())
    kept["codegraph"] = "another version"
    kept["scans"][str(article / "experiments/run.py")][1] = []
    cache.write_text(json.dumps(kept))
    assert "experiments/helper.py" in remembered_run(article, cache)


# ---- end to end: a warm memory still stops what must stop ---------------------------------

SNAKEFILE = (PROJECT_ROOT / "Snakefile").read_text()
ARTICLE = {
    "config.yaml": "experiments:\n  hello: {}\nhello:\n  n: 3\n",
    "experiments/__init__.py": "",
    "experiments/hello.py": "from articlekit.experiment.artifacts import run_experiment\n\n\ndef run(params):\n"
    "    return {'total': params['n']}\n\n\nrun_experiment('hello', run)\n",
    "article/index.qmd": "The total is {{< value hello.total >}}.\n",
    "article/_quarto.yml": "format:\n  html: {}\n",
    "baseline/published.yaml": "edition: {title: Hello}\nentries: []\n",
}


@pytest.fixture
def small_article(tmp_path):
    for name, text in {"Snakefile": SNAKEFILE, **ARTICLE}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def plan(folder, *args, check=True):
    """A dry run, as the shell command of each job (its params), and whether
    the config check ran (jsonschema loaded)."""
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: print('jsonschema loaded:', 'jsonschema' in sys.modules))\n"
        "from snakemake.cli import main\n"
        f"sys.argv = ['snakemake', '--cores', '1', '--dry-run', '--printshellcmds', *{list(args)!r}]\n"
        "main()\n"
    )
    env = {**copy_environment(PROJECT_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.mark.workflow
def test_a_warm_memory_skips_the_checks_and_an_edited_config_is_checked_again(small_article):
    assert "jsonschema loaded: True" in plan(small_article).stdout
    assert "jsonschema loaded: False" in plan(small_article).stdout  # the same bytes: remembered
    config = small_article / "config.yaml"
    config.write_text(config.read_text() + "hello:\n  n: 4\n")  # a key given twice
    failed = plan(small_article, check=False)
    assert failed.returncode != 0
    assert "config.yaml:5: hello: the key is given twice, at lines 3 and 5" in failed.stdout + failed.stderr
    config.write_text(ARTICLE["config.yaml"].replace("n: 3", "n: -1e-7"))  # read as text by Snakemake
    failed = plan(small_article, check=False)
    assert failed.returncode != 0 and "config.yaml:4: hello.n: -1e-7 is a number" in failed.stdout + failed.stderr


@pytest.mark.workflow
def test_a_warm_memory_still_checks_a_new_command_line_value(small_article):
    plan(small_article)
    failed = plan(small_article, "--config", "strict=maybe", check=False)
    assert failed.returncode != 0 and "--config: strict:" in failed.stdout + failed.stderr


@pytest.mark.workflow
def test_a_schemas_defaults_reach_the_rules_on_every_plan(small_article):
    """Snakemake's validate fills in the defaults the article's schema gives:
    that check is never skipped, or the second plan would lose them."""
    (small_article / "config").mkdir()
    (small_article / "config/schema.yaml").write_text(
        "$schema: https://json-schema.org/draft/2020-12/schema\ntype: object\nproperties:\n  hello:\n    type: object\n    properties:\n"
        "      n: {type: integer}\n      m: {type: integer, default: 5}\n"
    )
    for _ in range(2):
        shown = plan(small_article).stdout
        assert "--params '{\"n\": 3, \"m\": 5}'" in shown, shown[-2000:]


@pytest.mark.workflow
def test_the_memory_lives_under_snakemakes_own_folder(small_article):
    plan(small_article)
    kept = sorted(os.listdir(small_article / ".snakemake/articlekit"))
    assert kept == ["codegraph.json", "plan.json"]
