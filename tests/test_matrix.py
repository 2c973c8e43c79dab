"""The version matrix: its config, its environments and its page.

Fast tests pin down each piece (pip's package sources handed to uv, the
checks on the matrix: section, the Python each environment runs, how rows
are judged); the slow one runs
`snakemake matrix` on config/test.yaml in a fresh copy of the project, which
builds two real environments with uv.
"""

import json
import os
import platform
import re
import subprocess
import sys

import pytest
import yaml

from articlekit.review import matrix as matrixlib
from articlekit.review import matrixenv
from articlekit.data.publishing import parse as parse_publishing
from articlekit.article.bind import bind
from articlekit.data.config import ConfigError, check_config
from articlekit.core.jsonio import read_json, write_json
from articlekit.data.baseline import load_baseline
from articlekit.data.values import merge, published_envelope
from tests.shared_build import copy_of_test_build
from tests.workspace import copy_environment, copy_project
from tests.workspace import merged_config
from tests import snakemake_fork

SCHEMA = "config/schema.yaml"


# ---- package sources: what pip uses, uv uses -------------------------------------


def test_uv_gets_pips_indexes_find_links_and_constraints(monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    settings = {
        "index-url": "https://mirror/simple",
        "extra-index-url": "file:///a file:///b",
        "find-links": "/opt/wheels",
        "constraint": "/etc/c.txt",
        "cert": "/ca.pem",
    }
    flags = matrixenv.uv_source_flags(settings)
    assert flags[:2] == ["--index-strategy", "unsafe-best-match"]  # pip's choice: best version anywhere
    pairs = list(zip(flags[2::2], flags[3::2]))
    assert pairs == [
        ("--default-index", "https://mirror/simple"),
        ("--extra-index-url", "file:///a"),
        ("--extra-index-url", "file:///b"),
        ("--find-links", "/opt/wheels"),
        ("--constraint", "/etc/c.txt"),
    ]
    assert matrixenv.uv_environ(settings)["SSL_CERT_FILE"] == "/ca.pem"


def test_pip_settings_read_this_machines_pip(monkeypatch):
    monkeypatch.setenv("PIP_FIND_LINKS", "/somewhere/wheels")
    assert matrixenv.pip_settings()["find-links"] == "/somewhere/wheels"  # env over files, as pip does


# ---- the matrix: section ----------------------------------------------------------


def _config_with(tmp_path, repo_root, environments):
    text = (repo_root / "config.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    config["matrix"]["environments"] = environments
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config, path


def test_both_shipped_configs_have_a_valid_matrix(repo_root):
    for name in ("config.yaml", "config/test.yaml"):
        config = merged_config(repo_root, ("config.yaml",) if name == "config.yaml" else ("config.yaml", name))
        check_config(config, repo_root / SCHEMA)
        matrixenv.check_matrix(config)
        assert len(config["matrix"]["environments"]) >= 2
    assert len(yaml.safe_load((repo_root / "config.yaml").read_text())["matrix"]["environments"]) >= 3


def test_the_default_matrix_runs_the_editions_own_environment(repo_root):
    """The audit asks that column which departures are the versions' (its
    Python, NumPy and PyTorch are baseline/published.yaml's edition: versions)."""
    edition = load_baseline(repo_root / "baseline/published.yaml").edition["versions"]
    for name in ("config.yaml", "config/matrix-docs.yaml"):
        entries = yaml.safe_load((repo_root / name).read_text())["matrix"]["environments"]
        asked = [
            {"python": e.get("python"), **{matrixenv.pin_name(p): p.split("==")[1] for p in e["pins"]}} for e in entries
        ]
        assert edition in asked, name


def test_two_entries_with_the_same_label_are_rejected_with_their_lines(tmp_path, repo_root):
    config, path = _config_with(
        tmp_path,
        repo_root,
        [
            {"label": "np", "pins": ["numpy==1.26.4", "torch==2.13.0"]},
            {"label": "np", "pins": ["numpy==2.4.6", "torch==2.13.0"]},
        ],
    )
    with pytest.raises(matrixenv.MatrixConfigError) as err:
        matrixenv.check_matrix(config, [path])
    message = str(err.value)
    assert re.search(
        r"config\.yaml:\d+: matrix\.environments\[1\]\.label: 'np' is already the label of entry 0", message
    )


def test_an_entry_must_pin_numpy_and_torch(tmp_path, repo_root):
    config, path = _config_with(tmp_path, repo_root, [{"label": "np", "pins": ["numpy==1.26.4"]}])
    with pytest.raises(matrixenv.MatrixConfigError, match=r"\(np\) pins no torch"):
        matrixenv.check_matrix(config, [path])


def test_the_pins_every_entry_needs_are_the_libraries_the_article_records(tmp_path, repo_root):
    """Named by publishing.libraries (Python aside), not by articlekit."""
    config, path = _config_with(tmp_path, repo_root, [{"label": "s", "pins": ["SciPy==1.14.0"]}])
    config["publishing"] = {"libraries": {"python": "Python", "scipy": "SciPy"}}
    matrixenv.check_matrix(config, [path])
    config["publishing"] = {"libraries": {"python": "Python", "scipy": "SciPy", "sympy": "SymPy"}}
    with pytest.raises(matrixenv.MatrixConfigError, match=r"\(s\) pins no sympy"):
        matrixenv.check_matrix(config, [path])


@pytest.mark.parametrize(
    "entry",
    [
        {"label": "np 1", "pins": ["numpy==1.26.4", "torch==2.13.0"]},  # a label names a folder
        {"label": "np", "pins": ["numpy", "torch==2.13.0"]},  # a pin needs a version
        {"label": "np", "pins": []},
        {"label": "np"},
        {"label": "np", "python": 3.13, "pins": ["numpy==2.5.4", "torch==2.14.1"]},  # unquoted: a float
        {"label": "np", "python": "python3", "pins": ["numpy==2.5.4", "torch==2.14.1"]},  # a version, not a name
    ],
)
def test_the_schema_rejects_malformed_entries(tmp_path, repo_root, entry):
    config, path = _config_with(tmp_path, repo_root, [entry])
    with pytest.raises(ConfigError, match=r"config\.yaml:\d+: matrix\.environments"):
        check_config(config, repo_root / SCHEMA, [path])


# ---- the Python each environment runs ------------------------------------------------

THIS_PYTHON = ".".join(platform.python_version_tuple()[:2])  # "3.11"


@pytest.mark.workflow
def test_an_entrys_python_is_found_on_this_machine_by_its_version():
    path, version = matrixenv.find_python(THIS_PYTHON)
    assert version.startswith(THIS_PYTHON + ".") and matrixenv.python_version(path) == version
    assert matrixenv.entry_python(None) == (sys.executable, platform.python_version())  # none named: the build's


@pytest.mark.workflow
def test_a_python_this_machine_lacks_is_an_error_saying_how_to_get_it():
    with pytest.raises(matrixenv.PythonNotFound) as err:
        matrixenv.entry_python("3.99", where="config.yaml:57: matrix.environments[4].python")
    message = str(err.value)
    assert message.startswith("config.yaml:57: matrix.environments[4].python: no Python 3.99 on this machine")
    assert "uv python install 3.99" in message and "pyenv install 3.99" in message


@pytest.mark.workflow
def test_a_python_this_machine_lacks_stops_the_lock_before_anything_is_installed(tmp_path, capsys):
    out = tmp_path / "requirements.lock"
    assert (
        matrixenv.main(
            [
                "lock",
                "--label",
                "future",
                "--pin",
                "numpy==2.4.6",
                "--python",
                "3.99",
                "--where",
                "x.yaml:3: matrix.environments[0].python",
                "--out",
                str(out),
            ]
        )
        == 1
    )
    message = capsys.readouterr().err
    assert "matrix environment 'future': x.yaml:3: matrix.environments[0].python: no Python 3.99" in message
    assert "nothing was installed" in message and not out.exists()


@pytest.mark.workflow
def test_snakemake_matrix_names_the_config_line_of_a_python_this_machine_lacks(tmp_path):
    """Through the config a user writes: the lock job fails, and the
    terminal (not only the job's log) names the entry's python: line."""
    work = copy_project(tmp_path / "project")
    entry = {"label": "future", "python": "3.99", "pins": ["numpy==2.4.6", "torch==2.13.0"]}
    (work / "future.yaml").write_text(
        yaml.safe_dump({"matrix": {"exclude": ["timing"], "environments": [entry]}}, sort_keys=False)
    )
    line = next(i for i, text in enumerate((work / "future.yaml").read_text().splitlines(), 1) if "python:" in text)
    proc = _snakemake(work, "results/matrix/future/requirements.lock", also=["future.yaml"], check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"future.yaml:{line}: matrix.environments[0].python: no Python 3.99 on this machine" in output, output[
        -3000:
    ]
    assert not (work / "results/matrix/future/requirements.lock").exists()


def _tiny_project(tmp_path):
    project = tmp_path / "tiny"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\n'
        'build-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tiny"\nversion = "0"\n'
        '[tool.setuptools]\npy-modules = ["tiny"]\n'
    )
    (project / "tiny.py").write_text("")
    return project


@pytest.mark.workflow
def test_an_environment_records_the_python_it_runs_and_its_column_shows_it(tmp_path):
    """The version the venv's own interpreter reports, beside what the entry
    asked for, in freeze.json, the column and the page."""
    lock = tmp_path / "requirements.lock"
    assert matrixenv.lock("asked", ["pyyaml>=6"], lock, python=THIS_PYTHON) == 0
    assert lock.read_text().startswith(f"# asked: pyyaml>=6 (Python {platform.python_version()})\n")
    out = tmp_path / "freeze.json"
    assert (
        matrixenv.install(
            "asked",
            lock,
            tmp_path / "venv",
            out,
            tmp_path / "install.log",
            project=_tiny_project(tmp_path),
            python_request=THIS_PYTHON,
        )
        == 0
    )
    record = read_json(out)
    assert record["installed"], (tmp_path / "install.log").read_text()
    assert (record["python_requested"], record["python_version"]) == (THIS_PYTHON, platform.python_version())
    assert matrixenv.python_version(record["python"]) == platform.python_version()

    article = tmp_path / "index.qmd"
    article.write_text("Built with NumPy {{< value environment.numpy >}}.\n")
    result = tmp_path / "environment.json"
    write_json(
        result,
        {
            "experiment": "environment",
            "script": "experiments/environment.py",
            "versions": {"numpy": "2.4.6"},
            "values": {"numpy": "2.4.6"},
        },
    )
    doc = matrixlib.column("asked", ["pyyaml>=6"], out, [result], [], article, python=THIS_PYTHON)
    assert doc["python"] == {"requested": THIS_PYTHON, "version": platform.python_version()}
    matrix = matrixlib.build([doc])
    assert matrix["environments"][0]["python"] == doc["python"]
    assert f"| `asked` | Python {THIS_PYTHON} pyyaml&gt;=6 |" in matrixlib.to_markdown(matrix)


@pytest.mark.workflow
def test_an_entry_without_a_python_plans_the_jobs_it_planned_before(tmp_path):
    """Only an entry that names its Python gets --python (and its line, for
    the error): the others' params, hence their environments, stay as built."""
    work = copy_project(tmp_path / "project")
    environments = [
        {"label": "plain", "pins": ["numpy==2.4.6", "torch==2.13.0"]},
        {"label": "asked", "python": THIS_PYTHON, "pins": ["numpy==2.4.6", "torch==2.13.0"]},
    ]
    (work / "two.yaml").write_text(
        yaml.safe_dump({"matrix": {"exclude": ["timing"], "environments": environments}}, sort_keys=False)
    )
    out = _snakemake(work, "matrix", "--dry-run", "--printshellcmds", also=["two.yaml"]).stdout
    locks = {m.group(1): m.group(0) for m in re.finditer(r"matrixenv lock --label (\w+) [^\n]*", out)}
    assert locks["plain"].startswith("matrixenv lock --label plain --pin numpy==2.4.6 --pin torch==2.13.0  --out")
    assert f"--python {THIS_PYTHON} --where 'two.yaml:" in locks["asked"]
    installs = {m.group(1): m.group(0) for m in re.finditer(r"matrixenv install --label (\w+) [^\n]*", out)}
    assert "--python" not in installs["plain"] and f"--python {THIS_PYTHON} --venv" in installs["asked"]


# ---- lock and install: bad input, clear errors --------------------------------------


@pytest.mark.workflow
def test_a_pin_the_index_does_not_have_fails_before_anything_is_installed(tmp_path, capsys):
    out = tmp_path / "requirements.lock"
    assert matrixenv.lock("bad", ["numpy==9.9.9", "torch==2.13.0"], out) == 1
    message = capsys.readouterr().err
    assert "matrix environment 'bad'" in message and "numpy==9.9.9" in message
    assert "nothing was installed" in message
    assert not out.exists()


@pytest.mark.workflow
def test_an_environment_that_fails_to_install_is_recorded_with_its_log(tmp_path, capsys):
    lock = tmp_path / "requirements.lock"
    lock.write_text("attention-no-such-package==0.0.1\n")
    out, log = tmp_path / "freeze.json", tmp_path / "install.log"
    assert matrixenv.install("broken", lock, tmp_path / "venv", out, log) == 0  # the others still build
    record = read_json(out)
    assert record["installed"] is False and record["log"] == str(log)
    assert "attention-no-such-package" in log.read_text()
    assert str(log) in capsys.readouterr().err
    # ... and every experiment of it is recorded as not run, naming that log
    result = tmp_path / "scaling.json"
    assert matrixenv.run_experiment(out, "scaling", {}, result) == 0
    assert read_json(result) == {
        "experiment": "scaling",
        "not_run": True,
        "log": str(log),
        "reason": "environment broken did not install",
    }


# Run by a venv's Python: imports the modules named, then prints those of the
# venv that Python found no .pyc for (it compiled them, and, told not to
# write bytecode, compiles them again in every process).
_UNCACHED = """
import importlib, json, os, sys
for module in sys.argv[1:]:
    importlib.import_module(module)
print(json.dumps(sorted(
    name for name, module in list(sys.modules.items())
    if (getattr(module, "__file__", None) or "").startswith(sys.prefix) and module.__file__.endswith(".py")
    and not os.path.exists(getattr(module, "__cached__", None) or "")
)))
"""


def compiled_at_import(python, modules, cwd=None):
    """The venv's modules that importing `modules` with its Python compiles,
    as a cell does where Python may not cache what it compiles
    (PYTHONDONTWRITEBYTECODE=1, a read-only shared filesystem): [] when the
    install left the .pyc of each."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's own packages, as a cell gets
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [str(python), "-c", _UNCACHED, *modules], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.workflow
def test_an_environment_compiles_the_bytecode_of_what_its_experiments_import(tmp_path, monkeypatch):
    """Otherwise every cell compiles torch's modules again on import (where
    Python may not cache them: PYTHONDONTWRITEBYTECODE, a read-only shared
    filesystem), seconds per job. The libraries they require too (jinja2's
    markupsafe; torch's sympy, which it imports only as a cell runs). A
    library that does not import, or is not installed, fails nothing: each
    cell that imports it reports its own error."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as on this machine: the install writes them all the same
    project = _tiny_project(tmp_path)
    (project / "tiny.py").write_text("raise ImportError('tiny is broken')\n")
    lock = tmp_path / "requirements.lock"
    assert matrixenv.lock("tiny", ["pyyaml>=6", "jinja2"], lock) == 0
    venv, out = tmp_path / "venv", tmp_path / "freeze.json"
    warm = ["jinja2", "nosuchlib", "tiny", "yaml"]
    assert matrixenv.install("tiny", lock, venv, out, tmp_path / "install.log", project=project, warm=warm) == 0
    record = read_json(out)
    assert record["installed"], (tmp_path / "install.log").read_text()
    assert record["warm_up"] == {
        "imported": ["jinja2", "yaml", "markupsafe"],
        "not_installed": ["nosuchlib"],
        "failed": {"tiny": "ImportError: tiny is broken"},
    }
    assert "warm-up: import tiny failed: ImportError: tiny is broken" in (tmp_path / "install.log").read_text()
    python = venv / "bin" / "python"
    assert compiled_at_import(python, ["yaml", "jinja2"]) == []
    # the check sees a module the install did not import: setuptools (installed, required by none)
    assert "setuptools" in compiled_at_import(python, ["setuptools"])


@pytest.mark.workflow
def test_an_experiment_in_an_environment_checks_its_sizes_against_its_jobs_limits(tmp_path, repo_root, monkeypatch):
    """The limits the job got reach the script, which refuses before any
    work what its footprint says will not fit, as in the main build."""
    monkeypatch.chdir(repo_root)  # `python -m experiments.example`, from this checkout
    environment = tmp_path / "freeze.json"
    write_json(environment, {"label": "here", "installed": True, "log": "install.log", "python": sys.executable})
    out, log = tmp_path / "example.json", tmp_path / "example.log"
    params = {"n_tokens": 5, "d_k": 4, "seed": 1}
    assert (
        matrixenv.main(
            [
                "run",
                "--environment",
                str(environment),
                "--experiment",
                "example",
                "--params",
                json.dumps(params),
                "--mem-mb",
                "1",
                "--runtime",
                "5",
                "--out",
                str(out),
                "--log",
                str(log),
            ]
        )
        == 0
    )
    assert read_json(out)["not_run"] is True
    assert "more than the 1 MB its rule declares (experiments.example.mem_mb)" in log.read_text()


@pytest.mark.workflow
def test_each_cell_of_the_matrix_asks_for_its_experiments_own_resources(tmp_path):
    """A cell is the experiment's script in another environment: on a cluster
    its job gets what the experiment's entry declares, not one size for all."""
    work = copy_project(tmp_path / "project")
    config = merged_config(work)
    config["experiments"]["parity"].update(mem_mb=1234, runtime=7)
    (work / "bigger.yaml").write_text(
        yaml.safe_dump(
            {
                "experiments": config["experiments"],
                "matrix": {"exclude": ["timing"], "environments": [config["matrix"]["environments"][0]]},
            }
        )
    )
    out = _snakemake(work, "matrix", "--dry-run", "--printshellcmds", also=["bigger.yaml"]).stdout
    blocks = re.split(r"^(?:local)?rule ", out, flags=re.M)  # one per planned job
    jobs = {m.group(1): block for block in blocks if (m := re.search(r"experiment=(\w+)", block))}
    assert "runtime=7, mem_mb=1234" in jobs["parity"], jobs.get("parity")
    assert "--mem-mb 1234 --runtime 7" in jobs["parity"]
    assert "runtime=5, mem_mb=600" in jobs["environment"] and "--mem-mb 600 --runtime 5" in jobs["environment"]


# ---- the page: how rows are judged -----------------------------------------------

ARTICLE = """\
Matmul says: {{< value errors.msg >}}.
The largest difference is {{< value parity.diff fmt=".1e" expect="< 1e-12" >}}.
The weight is {{< value example.w fmt=".2f" >}}.
Built with NumPy {{< value environment.numpy >}}.

{{< provenance >}}
"""


def _column(label, numpy, msg, diff, w):
    artifacts = [
        (
            "environment.json",
            {
                "experiment": "environment",
                "script": "experiments/environment.py",
                "versions": {"numpy": numpy},
                "values": {"numpy": numpy},
            },
        ),
        ("errors.json", {"experiment": "errors", "script": "experiments/errors.py", "values": {"msg": msg}}),
        ("parity.json", {"experiment": "parity", "script": "experiments/parity.py", "values": {"diff": diff}}),
        ("example.json", {"experiment": "example", "script": "experiments/example.py", "values": {"w": w}}),
    ]
    return {
        "label": label,
        "pins": [f"numpy=={numpy}"],
        "installed": True,
        "log": "x.log",
        "versions": {"numpy": numpy},
        "failed": [],
        "shared": [],
        "bindings": bind("index.qmd", ARTICLE, merge(artifacts), strict=False),
    }


def _rows(matrix):
    return {r["key"]: r for r in matrix["rows"]}


def test_rows_differ_when_a_text_changes_a_claim_fails_or_a_value_moves(tmp_path):
    baseline = None  # no baseline: strings and numbers must be equal, as in the diff
    same = _column("a", "1.26.4", "mismatch", 1e-16, 0.25)
    other = _column("b", "2.4.6", "shapes differ", 1e-10, 0.26)
    matrix = matrixlib.build([same, other], baseline)
    rows = _rows(matrix)
    assert rows["errors.msg"]["kind"] == "text"
    assert rows["errors.msg"]["reasons"] == ["b: text changed from a"]
    assert any("b: claim '< 1e-12' failed" in r for r in rows["parity.diff"]["reasons"])
    assert rows["example.w"]["differs"]
    assert not rows["environment.numpy"]["differs"]  # versions are what the columns differ in
    a, b = matrix["environments"]
    assert (a["claims_held"], a["claims_failed"], b["claims_held"], b["claims_failed"]) == (1, 0, 0, 1)
    assert (b["texts_changed"], b["moved"]) == (1, 2)
    assert matrix["differing"] == 3


def test_identical_columns_differ_nowhere_and_render_without_highlights(tmp_path):
    columns = [_column(label, "2.4.6", "m", 1e-16, 0.25) for label in ("a", "b")]
    matrix = matrixlib.build(columns)
    assert matrix["differing"] == 0 and matrix["reference"] == "a"
    page = matrixlib.to_html(matrix)
    assert 'class="differs"' not in page and "None: every row agrees" in page
    assert "<style>" in page and "http" not in page.replace("http-equiv", "")  # self-contained
    assert "| `errors.msg` |" in matrixlib.to_markdown(matrix)


def test_a_failed_environment_is_a_column_with_its_log_and_fails_the_check(tmp_path, capsys):
    built = _column("a", "2.4.6", "m", 1e-16, 0.25)
    broken = {
        "label": "b",
        "pins": ["numpy==2.4.6"],
        "installed": False,
        "log": "logs/matrix/b/install.log",
        "versions": {},
        "failed": [{"experiment": "(install)", "reason": "no such wheel", "log": "logs/matrix/b/install.log"}],
        "shared": [],
        "bindings": None,
    }
    matrix = matrixlib.build([built, broken])
    assert "logs/matrix/b/install.log" in matrixlib.to_html(matrix)
    assert all(r["cells"].get("b") is None for r in matrix["rows"])
    path = tmp_path / "matrix.json"
    write_json(path, matrix)
    assert matrixlib.main(["check", str(path)]) == 1
    assert (
        "matrix environment 'b': (install): no such wheel (log: logs/matrix/b/install.log)" in capsys.readouterr().err
    )


TIMED_ARTICLE = """\
The largest difference is {{< value parity.diff fmt=".1e" expect="< 1e-12" >}};
the loop took {{< value timing.loop_ms fmt=".1f" >}} ms.

{{< departures >}}

{{< provenance >}}
"""
TIMED_BASELINE = """\
edition: {title: fixture, source: tests/test_matrix.py, date: "2026-10-12", versions: {python: "3.11", numpy: "2.4.6", torch: "2.13.0"}}
entries:
  - id: timing.loop-ms
    class: timing
    published: "5.669"
    value: 5.669
    key: timing.loop_ms
    fmt: ".3f"
    band: [0.1, 10.0]
    where: {section: timing, quote: "the loop took 5.669 ms"}
"""


def _timed_matrix(tmp_path, loop_ms):
    """A one-column matrix whose timing is the main build's (shared), as
    `snakemake matrix` makes it, with that build's loop time."""
    path = tmp_path / "published.yaml"
    path.write_text(TIMED_BASELINE, encoding="utf-8")
    baseline = load_baseline(path)
    artifacts = [
        ("parity.json", {"experiment": "parity", "script": "experiments/parity.py", "values": {"diff": 1e-16}}),
        ("timing.json", {"experiment": "timing", "script": "experiments/timing.py", "values": {"loop_ms": loop_ms}}),
        (path, published_envelope(path)),
    ]
    bindings = bind("index.qmd", TIMED_ARTICLE, merge(artifacts), strict=False, baseline=baseline)
    column = {
        "label": "a",
        "pins": ["numpy==2.4.6"],
        "installed": True,
        "log": "x.log",
        "versions": {},
        "failed": [],
        "shared": ["timing"],
        "bindings": bindings,
    }
    return matrixlib.build([column], baseline)


def test_rows_do_not_depend_on_how_fast_the_main_build_ran(tmp_path):
    """The edition's loop time is printed beside a departure only when the
    main build's loop left its band: a busy machine (a cluster's node, a
    loaded CI run) must not add a row to one build of the matrix."""
    calm, busy = _timed_matrix(tmp_path, 5.0), _timed_matrix(tmp_path, 100.0)
    assert [r["key"] for r in calm["rows"]] == [r["key"] for r in busy["rows"]] == ["parity.diff"]
    assert calm["left_out"] == busy["left_out"] == ["timing"]


# ---- end to end -----------------------------------------------------------------------


def _snakemake(work, *args, also=(), check=True):
    """snakemake on config/test.yaml, plus the config files in `also`; strict=false,
    as the run's shared build was made (tests.workspace.TEST_BUILD). Forked from
    a Snakemake imported once (tests/snakemake_fork.py): both streams in .stdout."""
    argv = ["--cores", "2", *args, "--configfile", "config/test.yaml", *also, "--config", "strict=false"]
    proc = snakemake_fork.run(work, argv, copy_environment(work), timeout=1800)
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-6000:]}")
    return proc


def _planned(work, *also):
    """{rule: jobs} a dry run of `snakemake matrix` would execute."""
    out = _snakemake(work, "matrix", "--dry-run", also=also).stdout
    table = out.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {
        m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M) if m.group(1) != "total"
    }


EXPERIMENTS = ["environment", "scaling", "example", "multihead", "parity", "mask_convention", "timing", "errors"]


@pytest.mark.slow
def test_snakemake_matrix_builds_each_environment_and_the_page(tmp_path_factory, test_config):
    # in a copy of the run's one build (tests/shared_build.py): the matrix's own jobs
    # run, its columns take the timing, the sweep and the listings from that build
    work = copy_of_test_build(tmp_path_factory).project
    environments = test_config["matrix"]["environments"]
    assert len(environments) >= 3  # CI runs the NumPy axis

    _snakemake(work, "matrix")

    matrix = read_json(work / "build/matrix.json")
    assert [e["label"] for e in matrix["environments"]] == [e["label"] for e in environments]
    for entry, summary in zip(environments, matrix["environments"]):
        label = entry["label"]
        freeze = read_json(work / f"results/matrix/{label}/freeze.json")
        assert freeze["installed"] and set(entry["pins"]) - {"torch==2.13.0"} <= set(freeze["freeze"])
        assert "torch==2.13.0+cpu" in freeze["freeze"]  # the CPU build, as requirements.txt gets it
        # no cell compiles what it imports: the install left the .pyc of each
        assert "torch" in freeze["warm_up"]["imported"] and not freeze["warm_up"]["failed"]
        cells = [f"experiments.{e}" for e in EXPERIMENTS if e not in test_config["matrix"]["exclude"]]
        assert compiled_at_import(work / f".venv-matrix/{label}/bin/python", cells, cwd=work) == [], label
        numpy = next(p.split("==")[1] for p in entry["pins"] if p.startswith("numpy"))
        assert summary["versions"]["numpy"] == numpy  # the experiments ran in that environment
        ran = read_json(work / f"results/matrix/{label}/scaling.json")
        assert ran["params"] == test_config["scaling"] and ran["versions"]["numpy"] == numpy
        assert not (work / f"results/matrix/{label}/timing.json").exists()  # excluded by config
        assert summary["complete"] and summary["claims_held"] > 0
    assert matrix["rows"] and "timing" in matrix["left_out"]
    for page in ("build/matrix.html", "build/matrix.md"):
        assert (work / page).stat().st_size > 0

    # Rebuilt only when pins change: nothing but the check, then one environment.
    assert _planned(work) == {"matrix": 1}  # the target rule has no output: it always checks
    changed = json.loads(json.dumps(test_config["matrix"]))
    changed["environments"][0]["pins"] = ["numpy==2.0.2", "torch==2.13.0"]
    (work / "changed.yaml").write_text(yaml.safe_dump({"matrix": changed}))
    plan = _planned(work, "changed.yaml")
    assert plan["matrix_lock"] == plan["matrix_env"] == plan["matrix_column"] == 1
    per_environment = [e for e in EXPERIMENTS if e not in test_config["matrix"]["exclude"]]
    assert plan["matrix_experiment"] == len(per_environment)  # that environment's, no other's

    # Two entries with one label: stopped before any job runs.
    changed["environments"][1]["label"] = changed["environments"][0]["label"]
    (work / "dup.yaml").write_text(yaml.safe_dump({"matrix": changed}))
    proc = _snakemake(work, "matrix", "--dry-run", also=["dup.yaml"], check=False)
    assert proc.returncode != 0 and "is already the label of entry 0" in proc.stdout + proc.stderr


def test_a_column_whose_results_lack_a_key_the_article_binds_records_why(tmp_path):
    environment = tmp_path / "freeze.json"
    write_json(environment, {"label": "old", "installed": True, "log": "install.log"})
    result = tmp_path / "errors.json"
    write_json(
        result,
        {
            "experiment": "errors",
            "script": "experiments/errors.py",
            "versions": {"numpy": "1.26.4"},
            "values": {"msg": "m"},
        },
    )
    article = tmp_path / "index.qmd"
    article.write_text(ARTICLE)
    article_libraries = parse_publishing({"libraries": {"python": "Python", "numpy": "NumPy"}})
    doc = matrixlib.column("old", ["numpy==1.26.4"], environment, [result], [], article, publishing=article_libraries)
    assert doc["bindings"] is None and doc["versions"] == {"numpy": "1.26.4"}
    [failure] = doc["failed"]
    assert failure["experiment"] == "(bind)" and "unknown key 'parity.diff'" in failure["reason"]
