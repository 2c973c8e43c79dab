"""Sizes are checked before work: a size that would not fit the memory or
time an experiment's rule declares (or the memory the machine has) is
refused before run() is called, naming the key, the estimate and the
limit; the plan refuses it before any job, a dry run too. The shipped
configurations pass.

Which keys each experiment guards is read from its own footprint(), not
typed here: every parameter a term of its estimate is filed under must,
when huge, be refused under its own name.
"""

import functools
import importlib
import json
import logging
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import yaml

from tests import snakemake_fork
from articlekit.workflow import codegraph

from articlekit.experiment import footprint
from articlekit.experiment.artifacts import run_experiment
from articlekit.data.config import ConfigError, check_article_config
from articlekit.experiment.declared import declared_experiments
from articlekit.experiment.footprint import Limits, SizeError
from tests.workspace import PROJECT_ROOT, copy_environment, copy_project, merged_config

CONFIGS = ["config.yaml", "config/test.yaml"]
HUGE = 10**9  # a size no machine of today holds the square of, nor times a run over


def load(name):
    """The config a build on `name` sees: config.yaml alone, or `name` merged over it."""
    return merged_config(PROJECT_ROOT, ("config.yaml",) if name == "config.yaml" else ("config.yaml", name))


def experiments_with_sizes(config):
    """The experiments whose config section has parameters (all but environment)."""
    return [name for name in config["experiments"] if config.get(name)]


def guarded_keys(name, params):
    """{key: the measures (bytes, seconds) of the terms filed under it} for
    every parameter the experiment's footprint names, at these params. A
    term of 0 files a parameter that costs nothing (a second seed): no
    value of it is too large, so it guards nothing."""
    found = footprint.estimate(importlib.import_module(f"experiments.{name}").footprint, params, name)
    keys = {}
    for measure, estimate in found.items():
        for named, amount in estimate.terms:
            if amount == 0:
                continue
            for key in named:
                keys.setdefault(key, set()).add(measure)
    return keys


def inflated(params, key):
    """params with `key` huge: a list of sizes gets a huge one at its end."""
    value = params[key]
    return params | {key: [*value, HUGE] if isinstance(value, list) else HUGE}


TEST_CONFIG = load("config/test.yaml")
CASES = [
    (name, key, measures == {"seconds"})
    for name in experiments_with_sizes(TEST_CONFIG)
    for key, measures in sorted(guarded_keys(name, TEST_CONFIG[name]).items())
]


@pytest.fixture
def restore_logging():
    """run_experiment configures the root logger; put pytest's back after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_every_experiment_with_sizes_has_a_footprint():
    for name in experiments_with_sizes(load("config.yaml")):
        assert footprint.from_source(codegraph.experiment_path(name)) is not None, f"experiments/{name}.py"


# ---- run time: refused before run() ---------------------------------------------


@pytest.mark.parametrize("name, key, time_only", CASES)
def test_a_huge_size_is_refused_before_run_with_the_key_the_estimate_and_the_limit(
    name, key, time_only, tmp_path, capfd, restore_logging
):
    module = importlib.import_module(f"experiments.{name}")
    called = []

    @functools.wraps(module.run)  # run_experiment finds the footprint in run's module
    def run(params):
        called.append(params)
        return {}

    entry = TEST_CONFIG["experiments"][name]
    params = inflated(TEST_CONFIG[name], key)
    with pytest.raises(SystemExit) as exited:
        run_experiment(
            name,
            run,
            argv=[
                "--params",
                json.dumps(params),
                "--mem-mb",
                str(entry["mem_mb"]),
                "--runtime",
                str(entry["runtime"]),
                "--json",
                str(tmp_path / "x.json"),
            ],
        )
    message = capfd.readouterr().err
    assert exited.value.code == 1 and not called and not (tmp_path / "x.json").exists()
    named = [line for line in message.splitlines() if f"{name}.{key} = " in line]
    assert named, message
    if time_only:  # a key that only drives the time
        assert any(
            "would take at least" in line
            and f"more than the {entry['runtime']} min its rule declares (experiments.{name}.runtime)" in line
            for line in named
        ), message
    else:
        assert any(
            "would hold an estimated" in line
            and f"more than the {entry['mem_mb']} MB its rule declares (experiments.{name}.mem_mb)" in line
            for line in named
        ), message
    assert all(f"Lower {name}." in line for line in named)


def test_without_a_declared_limit_the_machine_s_free_memory_still_bounds_the_run(monkeypatch, tmp_path):
    monkeypatch.setattr(footprint, "available_memory", lambda: 10**9)
    timing = importlib.import_module("experiments.timing")
    params = TEST_CONFIG["timing"] | {"T": 8000, "loop_max_T": 8000}  # 4 x 8000^2 float64: 2 GB
    with pytest.raises(
        SizeError,
        match=r"timing.T = 8000: the timing experiment would hold an estimated 2.05 GB "
        r"\(experiments/timing.py, footprint\(\)\), more than the 1 GB this machine "
        r"has available now\. Lower timing.T, or run it where more memory is free",
    ):
        footprint.check_run("timing", timing.run, params)


def test_the_memory_the_process_holds_already_counts_against_the_rule_s(monkeypatch):
    monkeypatch.setattr(footprint, "held_memory", lambda: 400 * 10**6)
    scaling = importlib.import_module("experiments.scaling")
    params = TEST_CONFIG["scaling"] | {"n_keys": 100_000}  # K: 100000 x 512 float64, 410 MB
    footprint.check_run("scaling", scaling.run, params, mem_mb=1000)
    with pytest.raises(SizeError, match=r"beside the 400 MB the process holds already .* more than the 500 MB"):
        footprint.check_run("scaling", scaling.run, params, mem_mb=500)


@pytest.mark.workflow
def test_the_command_line_refuses_at_once_and_writes_nothing(tmp_path):
    params = TEST_CONFIG["timing"] | {"T": 1_000_000, "loop_max_T": 1_000_000}
    target = tmp_path / "timing.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.timing",
            "--params",
            json.dumps(params),
            "--mem-mb",
            "1000",
            "--runtime",
            "15",
            "--json",
            str(target),
            "--log",
            str(tmp_path / "log"),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and not target.exists()
    log = (tmp_path / "log").read_text()  # where Snakemake points, and prints under the job's error
    assert "timing.T = 1000000: the timing experiment would hold an estimated 32 TB" in log
    assert "more than the 1000 MB its rule declares (experiments.timing.mem_mb)" in log
    assert "running with" not in log
    assert proc.stderr == ""  # said once: the log is what the terminal shows of a failed job


@pytest.mark.workflow
def test_by_hand_the_limits_are_the_config_file_s(tmp_path):
    config = load("config/test.yaml")
    config["timing"] |= {"T": 20_000, "loop_max_T": 20_000}  # 12.8 GB of scores, over mem_mb 1000
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.timing", "--config", str(path), "--json", str(tmp_path / "t.json")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "more than the 1000 MB its rule declares" in proc.stderr, proc.stderr


# ---- plan time: refused before any job ----------------------------------------------


@pytest.mark.parametrize("name, key, time_only", CASES)
def test_the_plan_refuses_the_same_sizes_without_importing_the_experiment(name, key, time_only):
    entry = TEST_CONFIG["experiments"][name]
    placed = []

    def where(dotted):
        placed.append(dotted)
        return "config/test.yaml:7"

    with pytest.raises(SizeError) as caught:
        footprint.check_plan(
            name,
            codegraph.experiment_path(name),
            inflated(TEST_CONFIG[name], key),
            entry["mem_mb"],
            entry["runtime"],
            where=where,
        )
    assert any(
        line.startswith("config/test.yaml:7: ") and f"{name}.{key} = " in line
        for line in str(caught.value).splitlines()
    ), str(caught.value)
    assert all(dotted.startswith(f"{name}.") for dotted in placed)


@pytest.mark.parametrize("config_file", CONFIGS)
def test_the_shipped_configurations_fit_their_rules_and_this_machine(config_file):
    config = load(config_file)
    for name in experiments_with_sizes(config):
        entry, params = config["experiments"][name], config[name] | {"threads": 1}
        footprint.check_plan(name, codegraph.experiment_path(name), params, entry["mem_mb"], entry["runtime"])
        module = importlib.import_module(f"experiments.{name}")
        footprint.check(
            name,
            params,
            module.footprint,
            Limits(mem_mb=entry["mem_mb"], runtime_min=entry["runtime"], available_bytes=footprint.available_memory()),
            name,
        )


@pytest.mark.parametrize("config_file", CONFIGS)
def test_the_plan_reads_the_same_footprint_the_run_imports(config_file):
    config = load(config_file)
    for name in experiments_with_sizes(config):
        params = config[name]
        planned = footprint.from_source(codegraph.experiment_path(name))(params)
        assert planned == importlib.import_module(f"experiments.{name}").footprint(params), name


# ---- the estimates count what the code allocates --------------------------------------


def traced_peak(fn):
    """Peak bytes NumPy allocates inside fn (NumPy reports to tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_timing_s_footprint_counts_the_matrix_form_s_score_matrices():
    from experiments.attention import scaled_dot_product_attention

    timing = importlib.import_module("experiments.timing")
    T, d = 768, 16
    Q, K, V = timing.inputs(T, d, 0)
    params = TEST_CONFIG["timing"] | {"T": T, "d": d, "sweep_T": [T], "loop_max_T": 1}
    estimated = sum(timing.footprint(params)["bytes"].values())
    peak = traced_peak(lambda: scaled_dot_product_attention(Q, K, V))
    assert 4 * T * T * 8 <= peak <= estimated, (peak, estimated)


def test_scaling_s_footprint_counts_its_widest_keys():
    scaling = importlib.import_module("experiments.scaling")
    params = TEST_CONFIG["scaling"] | {"n_keys": 50_000, "d_k": [256], "sweep_d_k": [1]}
    estimated = sum(scaling.footprint(params)["bytes"].values())
    peak = traced_peak(lambda: scaling.collapse(256, 50_000, 7))
    assert 50_000 * 256 * 8 <= peak <= estimated, (peak, estimated)


# ---- the footprint's own rules ---------------------------------------------------------


def write(tmp_path, source):
    path = tmp_path / "exp.py"
    path.write_text(source)
    return path


def test_the_plan_runs_a_footprint_with_its_literal_constants_and_articlekit_s_rates(tmp_path):
    path = write(
        tmp_path,
        "import numpy as np\nfrom articlekit.experiment.footprint import FLOPS\nCELL, RATE = 8, 2.0\n"
        "SCALE = np.float64(3)\n\n"
        "def footprint(p):\n    return {'bytes': {'n': CELL * p['n'] ** 2}, "
        "'seconds': {'n': p['n'] * RATE * FLOPS / FLOPS}}\n",
    )
    assert footprint.from_source(path)({"n": 10}) == {"bytes": {"n": 800}, "seconds": {"n": 20.0}}
    assert footprint.from_source(write(tmp_path, "def run(p):\n    return {}\n")) is None


def test_a_footprint_that_needs_the_module_s_imports_is_named_with_the_fix(tmp_path):
    path = write(tmp_path, "import numpy as np\n\ndef footprint(p):\n    return {'bytes': {'n': np.prod([p['n']])}}\n")
    with pytest.raises(
        SizeError,
        match=r"exp.py: footprint\(\) cannot run on its own \(name 'np' is not defined\): "
        r"it must be plain arithmetic on its params",
    ):
        footprint.check_plan("exp", path, {"n": 3}, 100, 1)


@pytest.mark.parametrize(
    "returned, complaint",
    [
        ("{'bytes': {'m': 1}}", "files a term under 'm', which is not a parameter"),
        ("{'bytes': {'n': -1}}", "must be a number >= 0"),
        ("{'memory': {'n': 1}}", "must return a dict with bytes and/or seconds"),
        ("{'bytes': 5}", "must map parameter names to amounts"),
    ],
)
def test_a_malformed_footprint_is_named(tmp_path, returned, complaint):
    path = write(tmp_path, f"def footprint(p):\n    return {returned}\n")
    with pytest.raises(SizeError, match=complaint):
        footprint.check_plan("exp", path, {"n": 3}, 100, 1)


@pytest.mark.parametrize(
    "body",
    [
        "    return {}\n",  # the issue's: an 11 GiB allocation then started
        "    return {'bytes': {}}\n",
        "    return {'bytes': {'d': 8 * p['d']}}\n",  # n forgotten
    ],
)
def test_a_footprint_that_returns_nothing_for_a_size_is_refused_naming_the_file_and_the_key(tmp_path, body):
    path = write(tmp_path, "def footprint(p):\n" + body)
    with pytest.raises(SizeError) as caught:
        footprint.check_plan("exp", path, {"n": 50_000, "d": 8, "seed": 3, "scale": 0.5}, 100, 1)
    message = str(caught.value)
    assert message.startswith(f"{path}: footprint() returns nothing for exp.n = 50000") and "seed" not in message
    assert "which it neither reads nor files a term under, so no value of" in message
    assert "Estimate what 'n' costs in footprint()" in message


def test_a_size_is_covered_when_the_footprint_reads_it_or_files_it_under_zero(tmp_path):
    reads = write(tmp_path, "def footprint(p):\n    return {'bytes': {'n': 8 * p['n'] * max(p.get('d', [1]))}}\n")
    footprint.check_plan("exp", reads, {"n": 10, "d": [1, 2], "seed": 3, "threads": 2, "scale": 0.5}, 100, 1)
    zero = write(tmp_path, "def footprint(p):\n    return {'bytes': {'n': 8 * p['n'], 'rounds': 0}}\n")
    footprint.check_plan("exp", zero, {"n": 10, "rounds": 5}, 100, 1)


def test_the_run_refuses_a_footprint_that_returns_nothing_before_run(tmp_path, monkeypatch, restore_logging):
    """The script's own check, before run(): the same refusal, whatever the
    plan did (a build given --set, a footprint edited after the plan)."""
    scaling = importlib.import_module("experiments.scaling")
    monkeypatch.setattr(scaling, "footprint", lambda p: {})
    with pytest.raises(
        SizeError,
        match=r"experiments/scaling.py: footprint\(\) returns nothing for "
        r"scaling.d_k = \[16, 64, 512\], scaling.n_keys = 2000",
    ):
        footprint.check_run("scaling", scaling.run, TEST_CONFIG["scaling"], mem_mb=500, runtime_min=5)


def test_the_key_named_is_the_largest_term_s(tmp_path):
    path = write(
        tmp_path, "def footprint(p):\n    return {'bytes': {'small': p['small'], ('a', 'b'): p['a'] * p['b']}}\n"
    )
    with pytest.raises(SizeError) as caught:
        footprint.check_plan("exp", path, {"small": 10, "a": 10**6, "b": 9 * 10**6}, 100, 1)
    assert str(caught.value).startswith(
        "exp.a = 1000000 and exp.b = 9000000: the exp experiment would hold an estimated 9 TB"
    )
    assert "Lower exp.a or exp.b, or raise experiments.exp.mem_mb." in str(caught.value)


# ---- the headline honours loop_max_T ---------------------------------------------------


def test_the_headline_does_not_run_the_loop_above_loop_max_t(monkeypatch):
    timing = importlib.import_module("experiments.timing")
    lengths = []

    def counted_loop(Q, K, V):
        lengths.append(len(Q))
        return np.zeros((len(Q), V.shape[-1]))

    monkeypatch.setattr(timing, "attention_row_by_row", counted_loop)
    import torch

    threads = torch.get_num_threads()
    try:
        v = timing.run(TEST_CONFIG["timing"] | {"T": 48, "sweep_T": [16, 48], "loop_max_T": 32, "threads": 1})
    finally:
        torch.set_num_threads(threads)
    assert lengths and set(lengths) == {16}  # the sweep's short length only
    main = v["main"]
    assert main["loop"] is main["speedup"] is main["torch_speedup"] is main["max_abs_diff"] is None
    assert main["all_cores"]["speedup"] is None and main["matrix"]["median_ms"]["estimate"] > 0
    assert v["sweep"]["loop"]["median_ms"][1] is None


def test_this_article_refuses_a_headline_the_loop_is_not_timed_at(tmp_path):
    # the prose prints the loop's time at T: a T above loop_max_T has no such figure
    config = load("config.yaml")
    config["timing"]["T"] = 2048
    path = tmp_path / "config.yaml"
    path.write_text((PROJECT_ROOT / "config.yaml").read_text() + "\ntiming:\n  T: 2048\n")
    declared = declared_experiments(config["experiments"], PROJECT_ROOT)
    with pytest.raises(ConfigError) as caught:
        check_article_config(config, PROJECT_ROOT / "config/schema.yaml", [path], config["experiments"], declared)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text == "  T: 2048")
    assert (
        f"{path}:{line}: timing.T: 2048 is more than timing.loop_max_T = 512 (the headline's sequence length; "
        "the article prints the per-row loop's time at T"
    ) in str(caught.value)
    assert "lower it to at most 512, or raise timing.loop_max_T" in str(caught.value)


# ---- end to end: Snakemake refuses before any job ---------------------------------------


@pytest.fixture
def project(tmp_path):
    """An unbuilt copy of the project of this test's own (0.2 s): a refusal at
    plan time needs no build, and asserts that none happened (no `results/`),
    which a test that runs a job in a copy shared by the module made untrue
    for every test after it (under a random order: -p randomly)."""
    return copy_project(tmp_path / "project")


def snakemake(work, *args):
    """-> (exit code, output) of `snakemake ARGS`, forked from Snakemake
    imported once (tests/snakemake_fork.py)."""
    proc = snakemake_fork.run(work, args, copy_environment(work), timeout=300)
    return proc.returncode, proc.stdout


@pytest.mark.workflow
@pytest.mark.parametrize(
    "given, expected",
    ids=["above loop_max_T", "above mem_mb"],
    argvalues=[
        # the size: above the loop's limit too (its default, experiments/timing.py),
        # which this article's schema names first
        ("timing:\n  T: 1000000\n", "timing.T: 1000000 is more than timing.loop_max_T = 512"),
        (
            "timing:\n  T: 1000000\n  loop_max_T: 1000000\n",
            "timing.T = 1000000: the timing experiment would hold an estimated 32 TB (experiments/timing.py, "
            "footprint()), more than the 1000 MB its rule declares (experiments.timing.mem_mb). Lower timing.T",
        ),
    ],
)
@pytest.mark.parametrize("mode", [["--dry-run"], ["--cores", "2"]], ids=["dry run", "build"])
def test_snakemake_refuses_a_huge_size_before_any_job_naming_its_line(project, given, expected, mode):
    """The size an author gives in config.yaml, over the script's default."""
    config = project / "config.yaml"
    original = config.read_text()
    assert "\ntiming:" not in original  # the defaults are the script's: the author adds the section
    text = original + "\n" + given
    config.write_text(text)
    try:
        returncode, output = snakemake(project, *mode)
    finally:
        config.write_text(original)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row == "  T: 1000000")
    assert returncode != 0 and f"config.yaml:{line}: {expected}" in output, output[-3000:]
    assert not (project / "results").exists()  # no job ran: nothing was built


@pytest.mark.workflow
def test_a_job_given_less_memory_than_its_sizes_need_is_refused_by_the_script(project):
    # the plan checks the config's mem_mb; the script the job's own resources
    returncode, output = snakemake(
        project,
        "results/scaling.json",
        "--cores",
        "1",
        "--set-resources",
        "scaling:mem_mb=1",
        "--configfile",
        "config/test.yaml",
    )
    assert returncode != 0 and "scaling.n_keys = 2000" in output, output[-3000:]
    assert not (project / "results/scaling.json").exists()
    log = (project / "logs/scaling.log").read_text()
    assert "more than the 1 MB its rule declares (experiments.scaling.mem_mb)" in log and "running with" not in log


@pytest.mark.workflow
def test_a_new_limit_reruns_nothing_it_changes_no_result(project):
    # the limits reach the script from the job's resources ("derived" params):
    # a result does not depend on them, so changing one must not redo it
    fast = ["--configfile", "config/test.yaml"]
    returncode, output = snakemake(project, "results/scaling.json", "--cores", "1", *fast)
    assert returncode == 0, output[-3000:]
    test_config = project / "config/test.yaml"
    original = test_config.read_text()
    edited = original.replace("  parity: {mem_mb: 800}\n", "  parity: {mem_mb: 800}\n  scaling: {mem_mb: 600}\n", 1)
    assert edited != original, "config/test.yaml no longer sets experiments.parity.mem_mb"
    test_config.write_text(edited)
    try:
        returncode, output = snakemake(project, "results/scaling.json", "--dry-run", *fast)
    finally:
        test_config.write_text(original)
    assert returncode == 0 and "Nothing to be done" in output, output[-3000:]
