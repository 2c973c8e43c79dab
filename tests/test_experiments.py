"""The experiments as a reader relies on them: they reproduce the published
table, produce every documented key and no other, give the same bytes twice,
and never leave half an artifact behind.

Each experiment's pure run() is called on the tests' parameters (its
declared defaults, under config.yaml and config/test.yaml).
"""

import contextlib
import importlib
import inspect
import json
import math
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

# The timing's combining step imports SciPy, which loads a BLAS of its own:
# loaded first, every run in this process sees the same thread pools.
import scipy.special  # noqa: F401
import torch
import torch.nn.functional as F

from articlekit.core import jsonio
from articlekit.core.jsonio import dumps, read_json
from articlekit.experiment import (
    footprint as footprint_module,
)  # not `footprint`: this file is the demo experiments' module, whose footprint() the check looks up
from articlekit.experiment.artifacts import run_experiment
from articlekit.experiment.declared import declared_experiments

NAMES = ["environment", "scaling", "example", "multihead", "parity", "mask_convention", "timing", "errors"]
FIGURES = {"scaling": ["sweep"], "example": ["heatmaps"], "multihead": ["heads"], "timing": ["sweep"]}

# The published edition's table (d_k, n_keys=2000, seed 7), exactly as printed:
# dot std and effective terms with 2 decimals, max weights with 6.
PUBLISHED_TABLE = {
    16: {
        "dot_std": "2.47",
        "unscaled.max_weight": "0.227685",
        "scaled.max_weight": "0.004241",
        "unscaled.effective_terms": "14.85",
        "scaled.effective_terms": "1341.59",
    },
    64: {
        "dot_std": "7.32",
        "unscaled.max_weight": "0.921946",
        "scaled.max_weight": "0.009399",
        "unscaled.effective_terms": "1.17",
        "scaled.effective_terms": "829.74",
    },
    512: {
        "dot_std": "20.99",
        "unscaled.max_weight": "0.933175",
        "scaled.max_weight": "0.005796",
        "unscaled.effective_terms": "1.15",
        "scaled.effective_terms": "917.82",
    },
}


def experiment(name):
    return importlib.import_module(f"experiments.{name}")


@pytest.fixture(scope="module")
def results(test_config):
    """Every experiment's values on the test parameters, computed once: its
    artifact's values, combined from its runs where its entry has runs."""
    out = {}
    with torch_threads_kept():
        for name in NAMES:
            p = dict(test_config.get(name) or {})
            if name == "timing":
                p["threads"] = 1
            out[name] = artifact_values(name, p, test_config)
    return out


def artifact_values(name, p, test_config):
    """What results/<name>.json holds: run(p), or with `runs: N` in its
    entry the experiment's combine() of N runs (articlekit.experiment.runs)."""
    module = experiment(name)
    runs = (test_config["experiments"].get(name) or {}).get("runs", 1)
    if runs == 1:
        return module.run(p)
    return module.combine([module.run(p) for _ in range(runs)], p)


@contextlib.contextmanager
def torch_threads_kept():
    """The timing experiment sets torch's thread count for the process; undo it."""
    import torch

    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture
def restore_logging():
    """run_experiment configures the root logger; put pytest's back after."""
    import logging

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def leaves(tree, prefix):
    """Dotted key -> value for every leaf; lists are leaves, as in values.json."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from leaves(value, f"{prefix}.{key}")
    else:
        yield prefix, tree


def documented_keys(repo_root):
    """Key patterns the experiments declare (RESULT_KEYS in each script, what
    `python -m articlekit keys` prints); {placeholder} = one name part."""
    found = declared_experiments(NAMES, repo_root)
    keys = [key for name in NAMES for key in found[name].result_keys or {}]
    return {k: re.compile(re.sub(r"\\\{\w+\\\}", r"[A-Za-z0-9_]+", re.escape(k)) + "$") for k in keys}


# Measured, so different on every run: times, their ratios, the calls that
# fill a sample (calibrated on the clock), the load they ran under, what else
# the machine did, and whether the runs agreed.
MEASURED = {"calls_per_sample", "load", "neighbours", "runs"}


def without_timings(tree):
    """The tree with every measured time (and ratio of times) blanked."""
    if isinstance(tree, dict):
        return {
            k: None if k.endswith("_ms") or "speedup" in k or k in MEASURED else without_timings(v)
            for k, v in tree.items()
        }
    return tree


# ---- the published table -------------------------------------------------------


@pytest.mark.workflow
def test_scaling_reproduces_every_digit_of_the_published_table(params, results):
    p = params("scaling")
    assert (p["d_k"], p["n_keys"], p["seed"]) == ([16, 64, 512], 2000, 7)
    for d_k, row in PUBLISHED_TABLE.items():
        got = results["scaling"][f"dk{d_k}"]
        for key, printed in row.items():
            value = got["dot_std"] if key == "dot_std" else got[key.split(".")[0]][key.split(".")[1]]
            decimals = len(printed.split(".")[1])
            assert f"{value:.{decimals}f}" == printed, f"dk{d_k}.{key}"


@pytest.mark.workflow
def test_scaling_sweep_shows_the_collapse_and_its_cure(results):
    sweep = results["scaling"]["sweep"]
    assert len(sweep["unscaled"]["max_weight"]) == len(sweep["d_k"])
    # Without scaling the largest weight grows with d_k; with it, it stays small.
    assert sweep["unscaled"]["max_weight"][-1] > 0.5 > max(sweep["scaled"]["max_weight"])


# ---- every experiment: keys and sanity -------------------------------------------


@pytest.mark.workflow
def test_every_key_is_documented_and_every_documented_key_exists(results, repo_root):
    patterns = documented_keys(repo_root)
    produced = {key for name in NAMES for key, _ in leaves(results[name], name)}
    undocumented = {k for k in produced if not any(p.match(k) for p in patterns.values())}
    missing = {doc for doc, p in patterns.items() if not any(p.match(k) for k in produced)}
    assert not undocumented, f"keys no experiment's RESULT_KEYS declares: {sorted(undocumented)}"
    assert not missing, f"RESULT_KEYS declare keys no experiment produces: {sorted(missing)}"


@pytest.mark.workflow
def test_run_returns_plain_python_values(results):
    """Lists, dicts, str, int, float, bool, None: what json.dumps takes as is."""
    for name in NAMES:
        json.dumps(results[name], allow_nan=True)


def test_environment_names_the_executor(monkeypatch):
    env = experiment("environment")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    local = env.run({})
    assert (local["executor"], local["slurm_job_id"]) == ("local", None)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", local["build_date"]) and local["cores"] >= 1
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    assert (env.run({})["executor"], env.run({})["slurm_job_id"]) == ("slurm", "4242")


def test_environment_names_the_cpu_as_exactly_as_the_machine_says(monkeypatch):
    """A virtual machine's model name is generic ('Intel(R) Xeon(R)
    Processor'): family, model and stepping name the CPU, lscpu the
    hypervisor, and the clock comes with where it was read."""
    env = experiment("environment")
    cpuinfo = {
        "vendor_id": "GenuineIntel",
        "cpu family": "6",
        "model": "167",
        "stepping": "1",
        "model name": "Intel(R) Xeon(R) Processor",
        "cpu MHz": "2599.998",
        "flags": "fpu hypervisor avx2",
    }
    monkeypatch.setattr(env, "cpuinfo", lambda: cpuinfo)
    monkeypatch.setattr(env, "lscpu", lambda: {"Hypervisor vendor": "KVM"})
    monkeypatch.setattr(env, "open", lambda *a, **k: (_ for _ in ()).throw(OSError("no cpufreq")), raising=False)
    here = env.machine()
    assert here["cpu_model"] == "Intel(R) Xeon(R) Processor"
    assert here["cpu_id"] == "GenuineIntel family 6 model 167 stepping 1"
    assert (here["cpu_mhz"], here["cpu_mhz_source"], here["hypervisor"]) == (2599.998, "/proc/cpuinfo", "KVM")
    monkeypatch.setattr(env, "lscpu", lambda: {"CPU max MHz": "3500.0000"})  # no lscpu hypervisor line
    here = env.machine()
    assert (here["cpu_mhz"], here["cpu_mhz_source"], here["hypervisor"]) == (3500.0, "lscpu maximum", "unnamed")
    monkeypatch.setattr(env, "cpuinfo", lambda: {})  # no /proc/cpuinfo (not Linux)
    monkeypatch.setattr(env, "lscpu", lambda: {})
    here = env.machine()
    assert (here["cpu_id"], here["cpu_mhz"], here["cpu_mhz_source"], here["hypervisor"]) == (None, None, None, None)
    assert env.run({})["cpu_id"] is None  # the colophon's values are machine()'s


def test_environment_names_the_blas_kernel_that_runs(monkeypatch):
    """NumPy's build record names the machine it was built on (a DYNAMIC_ARCH
    OpenBLAS says Haswell wherever it runs); the record adds the kernel
    OpenBLAS picked here, as threadpoolctl reports it for NumPy's own BLAS."""
    env = experiment("environment")
    import numpy as np
    from threadpoolctl import threadpool_info

    numpy_pools = [pool for pool in threadpool_info() if pool["user_api"] == "blas" and "numpy" in pool["filepath"]]
    if numpy_pools and numpy_pools[0].get("architecture"):
        assert env.blas_kernel() == numpy_pools[0]["architecture"]
        assert env.blas_description().endswith(f", running its {numpy_pools[0]['architecture']} kernel")

    with monkeypatch.context() as without:  # a version-matrix environment: its pins, no threadpoolctl
        without.setitem(sys.modules, "threadpoolctl", None)
        assert env.threadpool_info() is None and env.blas_kernel() is None
        assert "kernel" not in env.blas_description() and env.blas_description() != "unknown"

    wheel = str(Path(np.__file__).resolve().parent.parent / "numpy.libs" / "libscipy_openblas64_.so")
    torch_blas = {"user_api": "blas", "internal_api": "mkl", "filepath": "/opt/torch/lib/libmkl_rt.so.2"}
    monkeypatch.setattr(
        env,
        "threadpool_info",
        lambda: [
            torch_blas,
            {"user_api": "blas", "internal_api": "openblas", "filepath": wheel, "architecture": "SkylakeX"},
        ],
    )
    assert env.blas_kernel() == "SkylakeX"  # NumPy's, not PyTorch's
    monkeypatch.setattr(
        env,
        "threadpool_info",
        lambda: [
            {
                "user_api": "blas",
                "internal_api": "openblas",
                "filepath": "/usr/lib/libopenblas.so.0",
                "architecture": "Zen",
            }
        ],
    )
    assert env.blas_kernel() == "Zen"  # the only BLAS loaded (NumPy linked to the system's)
    monkeypatch.setattr(env, "threadpool_info", lambda: [torch_blas, {**torch_blas, "filepath": "/usr/lib/libblas.so"}])
    assert env.blas_kernel() is None  # two others, neither NumPy's: say nothing rather than guess
    assert "kernel" not in env.blas_description()


@pytest.mark.workflow
def test_example_causal_mask_gives_exact_zeros(params, results):
    T = params("example")["n_tokens"]
    ex = results["example"]
    assert ex["first_row"] == ex["weights"][0] and ex["output_shape"] == [T, params("example")["d_k"]]
    assert ex["row_sum_max_deviation"] < 1e-15
    assert ex["causal"]["max_masked_weight"] == 0.0
    assert ex["causal"]["visible_per_row"] == list(range(1, T + 1))
    assert ex["causal"]["row_sum_max_deviation"] < 1e-15
    assert ex["fill_zero"]["max_masked_weight"] > 0.01  # 0 is an ordinary score: masked keys keep a share
    assert ex["minus_inf"]["full_row_nan"] is True  # nothing to attend to: -inf says so


@pytest.mark.workflow
def test_minus_1e9_added_or_filled_is_like_minus_inf_until_a_row_has_no_visible_key(results):
    """Added (a float attn_mask) or filled (masked_fill), -1e9 gives the
    -inf weights exactly wherever a row keeps a visible key, in float64 and
    float32. With every key masked they part: filled gives a uniform average;
    added keeps the scores' differences in float64 (the unmasked softmax,
    the mask ignored) and rounds them away in float32 (uniform again)."""
    m = results["example"]["minus_1e9"]
    for how in ("added", "filled"):
        for dtype in ("float64", "float32"):
            causal = m[how][dtype]
            assert causal["max_masked_weight"] == 0.0 and causal["max_abs_diff_vs_inf"] == 0.0, (how, dtype)
    full = {(how, dtype): m[how][dtype]["full_row"] for how in ("added", "filled") for dtype in ("float64", "float32")}
    added64 = full.pop(("added", "float64"))
    assert added64["max_abs_diff_vs_unmasked"] < 1e-6 < 0.01 < added64["max_abs_diff_vs_uniform"]
    for case, row in full.items():
        assert row["max_abs_diff_vs_uniform"] == 0.0 and row["max_abs_diff_vs_unmasked"] > 0.01, case
    # why added differs by precision: the gap between numbers near -1e9
    assert m["spacing"]["float64"] < 1e-6 and m["spacing"]["float32"] == 64.0
    assert m["in_float16"] == -math.inf


def test_minus_1e9_is_measured_the_way_the_article_names_it():
    """ "Added" adds to the masked scores and leaves the rest; "filled"
    replaces them: the two are told apart on scores where they differ."""
    import numpy as np

    weights = experiment("example").finite_mask_weights
    Q, K = np.eye(2), np.array([[3.0, 0.0], [0.0, 1.0]])  # Q K^T = diag(3, 1), then / sqrt(2)
    hide_first_key = np.array([[True, False], [True, False]])
    added = weights(Q, K, hide_first_key, -1.0, "added")
    filled = weights(Q, K, hide_first_key, -1.0, "filled")
    s = Q @ K.T / math.sqrt(2)
    expected_added = np.exp([s[0, 0] - 1, s[0, 1]])
    assert np.allclose(added[0], expected_added / expected_added.sum())
    expected_filled = np.exp([-1.0, s[0, 1]])
    assert np.allclose(filled[0], expected_filled / expected_filled.sum())
    assert weights(Q.astype(np.float32), K.astype(np.float32), hide_first_key, -1e9, "added").dtype == np.float32


@pytest.mark.workflow
def test_multihead_heads_are_column_blocks(params, results):
    p, mh = params("multihead"), results["multihead"]
    T, d, h = p["n_tokens"], p["d_model"], p["heads"]
    assert mh["output_shape"] == [T, d] and mh["weights_shape"] == [h, T, T] == mh["causal"]["weights_shape"]
    assert mh["d_head"] == d // h
    assert mh["head_columns_check"] is True and mh["head_columns_max_abs_diff"] < 1e-12


@pytest.mark.workflow
def test_parity_is_floating_point_noise(results):
    par = results["parity"]
    toy = [
        v
        for k, v in leaves(par, "parity")
        if k.endswith("max_abs_diff") and not k.startswith(("parity.float32", "parity.scale"))
    ]
    assert len(toy) == 9 and all(0 <= v < 1e-12 for v in toy), toy
    at_scale = [
        v for path in ("sdpa", "mha_weights", "mha_fused") for v in par["scale"]["float64"][path]["max_abs_diff"]
    ]
    assert all(0 <= v < 1e-12 for v in at_scale), at_scale
    # the headline: every float64 comparison, at both sizes; and its size in ULPs of 1.0
    assert par["max_abs_diff_overall"] == max(toy + at_scale)
    assert par["max_abs_diff_overall_ulps"] == par["max_abs_diff_overall"] / 2**-52
    assert par["float32"]["sdpa"]["max_abs_diff"] < 1e-5 and par["float32"]["mha"]["max_abs_diff"] < 1e-5


# ---- parity at the realistic sizes (config/test.yaml's small stand-ins) ----------------


PRECISIONS, PATHS = ("float64", "float32", "bfloat16"), ("sdpa", "mha_weights", "mha_fused")


@pytest.mark.workflow
def test_parity_at_scale_measures_every_size_path_and_precision_within_its_rounding_bound(params, results):
    sizes, scale = params("parity")["scale_n_tokens"], results["parity"]["scale"]
    assert scale["d_k"] == params("parity")["scale_d_model"] // params("parity")["scale_heads"]
    for name in PRECISIONS:
        bounds = scale[name]["relative_bound"]
        assert len(bounds) == len(sizes)
        for path in PATHS:
            found = scale[name][path]
            assert len(found["max_abs_diff"]) == len(found["relative_error"]) == len(found["kernel"]) == len(sizes)
            assert all(0 < error < bound for error, bound in zip(found["relative_error"], bounds)), (name, path)
        shares = [e / b for path in PATHS for e, b in zip(scale[name][path]["relative_error"], bounds)]
        assert scale[name]["worst_share_of_bound"] == max(shares) < 1


@pytest.mark.workflow
def test_the_rounding_bounds_grow_with_the_unit_roundoff_and_the_size(results):
    scale = results["parity"]["scale"]
    # u = eps / 2 of each dtype, read from torch.finfo
    assert [scale[name]["unit_roundoff"] for name in PRECISIONS] == [2**-53, 2**-24, 2**-8]
    bounds = [scale[name]["relative_bound"] for name in PRECISIONS]
    assert all(b64 < b32 < b16 for b64, b32, b16 in zip(*bounds))
    assert all(longer > shorter for bound in bounds for shorter, longer in zip(bound, bound[1:]))


def test_the_bound_leaves_no_room_for_a_real_bug():
    """A missing 1/sqrt(d_k), the article's first pitfall, misses the float32
    bound by far more than the bound itself: the claims would catch it."""
    parity = experiment("parity")
    X, _, W = parity.draw_inputs(64, 0, 32, 3)
    (Q, K, V), heads, _ = parity.ours_at(X, W, 4, np.float32)
    unscaled = F.scaled_dot_product_attention(
        *(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)), scale=1.0
    )
    bound = parity.relative_bound(64, 32, 8, [(2**-24, 2**-24)] * 2)
    assert parity.relative_error(unscaled, heads) > 100 * bound


def test_the_kernel_recorded_is_the_one_pytorch_ran():
    """Read from PyTorch's profiler, never typed: forcing another SDPA backend,
    or turning the fast path off, changes what is recorded."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    parity = experiment("parity")
    q = torch.randn(1, 2, 16, 8, dtype=torch.float64)
    _, chosen = parity.kernel_that_ran(lambda: F.scaled_dot_product_attention(q, q, q))
    with sdpa_kernel([SDPBackend.MATH]):
        _, forced = parity.kernel_that_ran(lambda: F.scaled_dot_product_attention(q, q, q))
    assert "math" in forced and chosen != forced, (chosen, forced)

    X, _, W = parity.draw_inputs(16, 0, 8, 0)
    with torch.no_grad():
        x = torch.from_numpy(X)[None]
        layer = parity.torch_mha(W, 2, torch.float64, bias=True)
        _, fused = parity.kernel_that_ran(lambda: layer(x, x, x, need_weights=False))
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            _, general = parity.kernel_that_ran(lambda: layer(x, x, x, need_weights=False))
        finally:
            torch.backends.mha.set_fastpath_enabled(True)
        _, bias_free = parity.kernel_that_ran(lambda: parity.torch_mha(W, 2, torch.float64)(x, x, x))
    assert "multi_head_attention" in fused and general != fused, (fused, general)
    assert bias_free is None  # bias=False: PyTorch's general path, a matmul and a softmax


@pytest.mark.workflow
def test_the_layer_takes_pytorch_s_fast_path_only_with_biases(results):
    scale = results["parity"]["scale"]
    fused = scale["float64"]["mha_fused"]["kernel"][0]
    assert scale["mha_fastpath_enabled"] is True and "native_multi_head_attention" in fused
    # the same call on the bias-free layer goes through scaled_dot_product_attention instead
    assert "scaled_dot_product" in scale["bias_free_fused_kernel"] and scale["bias_free_fused_kernel"] != fused


def traced_peak(fn):
    """fn()'s result and the peak bytes NumPy allocated inside it (NumPy reports to tracemalloc)."""
    import tracemalloc

    tracemalloc.start()
    try:
        return fn(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_our_side_attends_in_query_blocks_without_holding_every_weight_at_once():
    """Each query's output depends on no other query: blocks give the same
    output as one call, while only (h, QUERY_BLOCK, T) weights exist at once,
    as footprint() counts them."""
    from experiments.attention import multi_head_attention

    parity = experiment("parity")
    T, d, h = 4 * parity.QUERY_BLOCK, 16, 2
    X, _, W = parity.draw_inputs(T, 0, d, 5)
    (whole, _), whole_peak = traced_peak(lambda: multi_head_attention(X, X, *W, h))
    (_, _, layer), peak = traced_peak(lambda: parity.ours_at(X, W, h, np.float64))
    assert np.array_equal(layer, whole)
    assert peak < whole_peak / 2 and peak <= h * parity.QUERY_BLOCK * T * parity.BLOCK_CELL_BYTES, (peak, whole_peak)


@pytest.mark.workflow
def test_the_realistic_sizes_read_their_own_seed_and_are_computed_once_per_process(params):
    """The seed sweep varies `seed`: the toy part moves with it, the realistic
    sizes (scale_seed) do not, and a caller cannot change the cached copy."""
    parity = experiment("parity")
    p = params("parity")
    first = parity.run(p)
    first["scale"]["float64"]["sdpa"]["max_abs_diff"].append("changed by a caller")
    other = parity.run(p | {"seed": p["seed"] + 1})
    assert {k: v for k, v in other.items() if k != "scale"} != {k: v for k, v in first.items() if k != "scale"}
    assert other["scale"] == parity.run(p)["scale"] and "changed by a caller" not in dumps(other)
    moved = parity.run(p | {"scale_seed": p["scale_seed"] + 1})["scale"]
    assert moved["float64"]["sdpa"]["relative_error"] != other["scale"]["float64"]["sdpa"]["relative_error"]


@pytest.mark.workflow
def test_mask_convention_correct_matches_and_reversed_does_not(results):
    mc = results["mask_convention"]
    assert mc["correct"]["error_raised"] is False and mc["correct"]["max_abs_diff"] < 1e-12
    assert mc["correct"]["max_weight_on_future"] == 0.0
    assert isinstance(mc["reversed"]["error_raised"], bool)
    if not mc["reversed"]["error_raised"]:
        assert mc["reversed"]["max_abs_diff"] > 0.1 and mc["reversed"]["max_weight_on_future"] > 0
        assert mc["reversed"]["fully_masked_rows"] == 1  # the last query may see nothing "future"
    assert mc["key_padding"]["max_abs_diff"] < 1e-12 < mc["key_padding"]["inverted_max_abs_diff"]


@pytest.mark.workflow
def test_errors_are_captured_verbatim(results):
    err = results["errors"]
    for name in ("numpy_no_transpose", "torch_no_transpose", "sdpa_mask_and_causal"):
        e = err[name]
        assert isinstance(e["raised"], bool)
        assert (e["type"] is None) == (e["message"] is None) == (not e["raised"])
    assert err["numpy_no_transpose"]["raised"]  # NumPy cannot multiply (5,4) @ (5,4)
    u = err["underflow"]
    assert u["dot"] < -745 and u["exp"] == 0.0 and math.isnan(u["ratio"])
    assert u["warning_category"] == "RuntimeWarning" and u["ratio_is_nan"]
    o = err["overflow"]
    assert o["exp"] == math.inf and o["ratio_is_nan"]
    for side in ("below", "above"):  # the naive softmax fails on both sides, the stable one on neither
        st = err["stable"][side]
        assert st["naive_all_nan"] and abs(st["stable_sum"] - 1) < 1e-6 and st["stable_max_abs_diff"] < 1e-6
    sq = err["square_no_transpose"]  # T = d_k: nothing raises, and the result is wrong
    assert not sq["numpy_raised"] and not sq["torch_raised"] and sq["max_abs_diff"] > 0.1
    w = err["wrong_axis"]
    assert all(abs(s - 1) < 1e-12 for s in w["axis_last_row_sums"])
    assert any(abs(s - 1) > 1e-3 for s in w["axis0_row_sums"]) and w["output_diff"] > 0


def test_an_error_that_is_not_raised_is_recorded_not_fatal():
    capture = experiment("errors").capture
    assert capture(lambda: None) == {"raised": False, "type": None, "message": None}
    assert capture(lambda: 1 / 0) == {"raised": True, "type": "ZeroDivisionError", "message": "division by zero"}


@pytest.mark.workflow
def test_timing_measures_every_point_and_skips_the_slow_loop(params, tmp_path):
    timing = experiment("timing")
    # the loop timed at the headline, and skipped where the sweep goes past it
    p = params("timing")
    p |= {"loop_max_T": p["T"], "sweep_T": [*p["sweep_T"], 2 * p["T"]]}
    with torch_threads_kept():
        v = timing.run(p)
    for impl in timing.METHODS:
        stats = v["main"][impl]
        median = stats["median_ms"]
        assert len(stats["samples_ms"]) == len(stats["wall_samples_ms"]) == p["rounds"]
        assert 0 < stats["min_ms"] <= median["low"] <= median["estimate"] <= median["high"] <= stats["max_ms"]
        assert stats["calls_per_sample"] >= 1
        assert len(v["sweep"][impl]["median_ms"]) == len(p["sweep_T"])
    assert len(v["main"]["speedup"]["ratios"]) == p["rounds"]
    loop = v["sweep"]["loop"]["median_ms"]
    assert [m is None for m in loop] == [T > p["loop_max_T"] for T in p["sweep_T"]]
    assert v["main"]["max_abs_diff"] < 1e-12 and v["threads"]["requested"] == 1
    timing.plot(v, p, {"sweep": tmp_path / "sweep.svg"})  # a skipped point must not break the figure
    assert (tmp_path / "sweep.svg").read_text().startswith("<?xml")


# ---- determinism ---------------------------------------------------------------


@pytest.mark.workflow
@pytest.mark.parametrize("name", NAMES)
def test_two_runs_give_identical_json(name, params, results, test_config):
    with torch_threads_kept():
        again = artifact_values(name, params(name), test_config)
    first, second = results[name], again
    if name == "environment":
        first, second = ({k: v for k, v in d.items() if not k.startswith("build_")} for d in (first, second))
    assert dumps(without_timings(second)) == dumps(without_timings(first))


@pytest.mark.workflow
@pytest.mark.parametrize("name", ["scaling", "example", "multihead"])
def test_two_runs_give_identical_figures(name, params, results, tmp_path):
    module = experiment(name)
    svg = []
    for attempt in ("a", "b"):  # two builds: the same file names, in two folders
        figures = {fig: tmp_path / attempt / f"{name}-{fig}.svg" for fig in FIGURES[name]}
        module.plot(results[name], params(name), figures)
        svg.append([path.read_bytes() for path in figures.values()])
    assert svg[0] == svg[1]


# ---- the command-line adapter and atomic writes -----------------------------------


def cli(repo_root, name, *args):
    return subprocess.run(
        [sys.executable, "-m", f"experiments.{name}", "--config", "config.yaml", "--config", "config/test.yaml", *args],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.workflow
def test_command_line_writes_the_artifact_and_figure(repo_root, tmp_path, params, results):
    target, figure = tmp_path / "out" / "x.json", tmp_path / "out" / "x.svg"
    proc = cli(repo_root, "scaling", "--json", str(target), "--figure", f"sweep={figure}")
    assert proc.returncode == 0, proc.stderr
    artifact = read_json(target)
    assert artifact["experiment"] == "scaling" and artifact["script"] == "experiments/scaling.py"
    assert artifact["params"] == params("scaling")
    assert set(artifact["versions"]) >= {"python", "numpy"} and "torch" not in artifact["versions"]
    assert dumps(artifact["values"]) == dumps(results["scaling"])
    assert figure.read_text().startswith("<?xml")
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.json", "x.svg"]  # no temp files left


@pytest.mark.workflow
def test_command_line_set_overrides_one_parameter(repo_root, tmp_path):
    target = tmp_path / "x.json"
    assert cli(repo_root, "example", "--json", str(target), "--set", "seed=1").returncode == 0
    assert read_json(target)["params"]["seed"] == 1


@pytest.mark.workflow
def test_command_line_runs_an_experiment_without_parameters(repo_root, tmp_path):
    target = tmp_path / "environment.json"
    assert cli(repo_root, "environment", "--json", str(target)).returncode == 0
    assert read_json(target)["params"] == {}


def run_module(repo_root, name, *args):
    return subprocess.run(
        [sys.executable, "-m", f"experiments.{name}", *args], cwd=repo_root, capture_output=True, text=True, timeout=120
    )


@pytest.mark.workflow
def test_the_workflow_passes_params_as_json_and_asks_which_versions_to_record(repo_root, tmp_path, params):
    target, log = tmp_path / "x.json", tmp_path / "logs" / "x.log"
    given = json.dumps(params("scaling"))
    proc = run_module(
        repo_root,
        "scaling",
        "--params",
        given,
        "--json",
        str(target),
        "--log",
        str(log),
        "--library",
        "numpy",
        "--library",
        "torch",
    )
    assert proc.returncode == 0, proc.stderr
    artifact = read_json(target)
    assert artifact["params"] == params("scaling")
    # torch was asked for but never imported: its version would say nothing
    assert list(artifact["versions"]) == ["python", "numpy"]
    assert f"scaling: wrote {target}" in log.read_text()


@pytest.mark.workflow
def test_threads_the_job_got_enter_the_params_apart_from_the_json(repo_root, tmp_path, params):
    # the workflow passes the core count as --threads so that the --params
    # JSON stays a plain value that Snakemake's params trigger compares
    target = tmp_path / "x.json"
    proc = run_module(
        repo_root, "scaling", "--params", json.dumps(params("scaling")), "--threads", "3", "--json", str(target)
    )
    assert proc.returncode == 0, proc.stderr
    assert read_json(target)["params"] == {**params("scaling"), "threads": 3}


@pytest.mark.workflow
def test_a_figure_records_the_library_that_drew_it(repo_root, tmp_path, params):
    target = tmp_path / "x.json"
    proc = run_module(
        repo_root,
        "scaling",
        "--params",
        json.dumps(params("scaling")),
        "--json",
        str(target),
        "--figure",
        f"sweep={tmp_path / 'sweep.svg'}",
        "--library",
        "numpy",
    )
    assert proc.returncode == 0, proc.stderr
    assert list(read_json(target)["versions"]) == ["python", "numpy", "matplotlib"]


@pytest.mark.workflow
def test_by_hand_the_versions_recorded_are_the_config_files(repo_root, tmp_path):
    target = tmp_path / "x.json"
    assert cli(repo_root, "parity", "--json", str(target)).returncode == 0
    assert list(read_json(target)["versions"]) == ["python", "numpy", "torch"]


@pytest.mark.workflow
@pytest.mark.parametrize(
    "args, complaint",
    [
        (["--params", "[1, 2]"], "--params must be a JSON object"),
        (["--params", "{seed: 1}"], "--params is not JSON"),
        (["--params", "{}", "--set", "seed=1"], "--set changes a --config file's parameters"),
        (["--params", "{}", "--config", "config.yaml"], "not allowed with argument"),
        (["--figure", "sweep"], "--figure 'sweep': write NAME=PATH"),
        (["--params", "{}", "--threads", "0"], "--threads 0: give the number of cores"),
    ],
)
def test_a_bad_command_line_says_what_to_write(repo_root, args, complaint):
    proc = run_module(repo_root, "example", *args, "--json", "/nonexistent/x.json")
    assert proc.returncode == 2 and complaint in proc.stderr, proc.stderr


OLD = '{"old": "artifact"}\n'


def test_a_failure_during_the_write_leaves_the_old_artifact(tmp_path, monkeypatch, params, restore_logging):
    target = tmp_path / "scaling.json"
    target.write_text(OLD)

    def interrupted(fd):
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(jsonio.os, "fsync", interrupted)
    # the footprint check counts what this process holds already: the test
    # runner's, after whatever tests ran before in it (a pytest-xdist worker
    # may hold past the rule's mem_mb), which is not what this test is about
    monkeypatch.setattr(footprint_module, "held_memory", lambda: 0)
    scaling = experiment("scaling")
    with pytest.raises(KeyboardInterrupt):
        run_experiment(
            "scaling",
            scaling.run,
            argv=["--config", "config.yaml", "--config", "config/test.yaml", "--json", str(target)],
        )
    assert target.read_text() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["scaling.json"]  # the temp file was removed


def test_a_process_killed_mid_write_leaves_no_partial_json(repo_root, tmp_path):
    """SIGKILL (no cleanup possible) in the middle of writing: the target
    keeps its old content; at most a hidden temp file is left beside it."""
    target = tmp_path / "scaling.json"
    target.write_text(OLD)
    code = (
        "import os, signal, sys\n"
        "from articlekit.core import jsonio\n"
        "jsonio.os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from experiments import scaling\n"
        "from articlekit.experiment.artifacts import run_experiment\n"
        "run_experiment('scaling', scaling.run, argv=sys.argv[1:])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "--config", "config.yaml", "--config", "config/test.yaml", "--json", str(target)],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert target.read_text() == OLD
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "scaling.json"]
    assert all(name.startswith(".scaling.json.") and name.endswith(".tmp") for name in leftovers)
    json.loads(target.read_text())


# --- what the config declares, held to (articlekit/experiment/declared.py) --------


def run_by_hand(tmp_path, run, plot=None, figures=()):
    """run_experiment as the workflow calls it, in tmp_path; -> (exit code, its log)."""
    argv = [
        "--params",
        json.dumps({"n": 3}),
        "--json",
        str(tmp_path / "r.json"),
        "--log",
        str(tmp_path / "x.log"),
        *[arg for figure in figures for arg in ("--figure", figure)],
    ]
    with pytest.raises(SystemExit) as stopped:
        run_experiment("demo", run, plot, argv=argv)
    return stopped.value.code, (tmp_path / "x.log").read_text()


@pytest.mark.workflow
def test_a_parameter_the_section_lacks_names_the_section_its_keys_and_the_line(tmp_path, restore_logging, monkeypatch):
    monkeypatch.chdir(Path(__file__).parent.parent)  # the line is named relative to the article root

    def run(params):
        return {"x": params["scale"]}

    code, log = run_by_hand(tmp_path, run)
    line = inspect.getsourcelines(run)[1] + 1
    assert code == 1 and not (tmp_path / "r.json").exists()
    assert (
        f"tests/test_experiments.py:{line}: the experiment asks for params['scale'], but the section demo: of config.yaml "
        "has no key 'scale' (it sets n); add `scale: ...` under demo:"
    ) in log


@pytest.mark.workflow
def test_a_figure_plot_asks_for_that_config_does_not_declare_names_those_it_does(tmp_path, restore_logging):
    def plot(values, params, figures):
        figures["histogram"]

    code, log = run_by_hand(tmp_path, lambda params: {}, plot, ["error=figures/demo-error.svg"])
    assert code == 1 and not (tmp_path / "r.json").exists()
    assert (
        "plot() asks for figures['histogram'], but experiments.demo.figures in config.yaml declares "
        "error (figures/demo-error.svg)"
    ) in log


@pytest.mark.workflow
def test_declared_figures_without_a_plot_are_refused(tmp_path, restore_logging):
    code, log = run_by_hand(tmp_path, lambda params: {}, None, [f"error={tmp_path}/e.svg"])
    assert code == 1 and "the experiment passes no plot to run_experiment" in log
