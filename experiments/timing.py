"""How much the matrix form buys: one query at a time vs one matrix product.

Times three ways of computing the same attention output for Q, K, V of
shape (T, d): experiments.attention.attention_row_by_row (a Python loop over
the T queries), experiments.attention.scaled_dot_product_attention (2-D
NumPy), and torch.nn.functional.scaled_dot_product_attention. All in
float64, so that the three do the same arithmetic.

Every measurement is `warmup` untimed calls, then `repeats` calls timed one
by one with time.perf_counter; we report the median and the quartiles,
never a single sample. The rule gives this job every core, so nothing else
runs beside it; PyTorch gets that many threads, and NumPy's BLAS uses its
default, which is every core too.

Inputs, per T: numpy.random.default_rng(seed) draws Q, K, V in that order,
each (T, d) standard normal.
"""

import logging
import os
import socket
import time

import numpy as np
import torch
import torch.nn.functional as F

from experiments.artifacts import pyplot, run_experiment, save_figure
from experiments.attention import attention_row_by_row, scaled_dot_product_attention

log = logging.getLogger("experiment")

METHODS = ("loop", "matrix", "torch")


def stats(samples):
    """Milliseconds per call: median, quartiles, extremes and every sample."""
    q1, median, q3 = np.percentile(samples, [25, 50, 75])
    return {
        "median_ms": float(median),
        "q1_ms": float(q1),
        "q3_ms": float(q3),
        "min_ms": min(samples),
        "max_ms": max(samples),
        "samples_ms": samples,
    }


def measure(calls, warmup, repeats):
    """Time each zero-argument call: `warmup` untimed calls, then `repeats`
    timed ones. One implementation at a time, not in turns: each thread pool
    (BLAS, PyTorch's OpenMP) spins for a while after its work, and taking
    turns would time one library against the other's spinning threads."""
    result = {}
    for name, fn in calls.items():
        for _ in range(warmup):
            fn()
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) * 1e3)
        result[name] = stats(samples)
    return result


def inputs(T, d, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(T, d)) for _ in "QKV")  # (T, d) each


def contenders(Q, K, V):
    """The three implementations as zero-argument calls, inputs bound."""
    tQ, tK, tV = map(torch.from_numpy, (Q, K, V))
    return {
        "loop": lambda: attention_row_by_row(Q, K, V),
        "matrix": lambda: scaled_dot_product_attention(Q, K, V),
        "torch": lambda: F.scaled_dot_product_attention(tQ, tK, tV),
    }


def run(params):
    """params: T, d (the headline point), sweep_T, loop_max_T (the loop is
    skipped for longer sequences), warmup, repeats, seed, threads."""
    # Never more threads than CPUs this process may run on: oversubscribed
    # thread pools time the scheduler, not the code.
    available = len(os.sched_getaffinity(0))
    threads = min(params.get("threads") or available, available)
    torch.set_num_threads(threads)
    warmup, repeats, seed = params["warmup"], params["repeats"], params["seed"]

    T, d = params["T"], params["d"]
    Q, K, V = inputs(T, d, seed)
    with torch.no_grad():
        main = measure(contenders(Q, K, V), warmup, repeats)
    main.update(
        T=T,
        d=d,
        dtype="float64",
        speedup=main["loop"]["median_ms"] / main["matrix"]["median_ms"],
        torch_speedup=main["loop"]["median_ms"] / main["torch"]["median_ms"],
        max_abs_diff=float(np.max(np.abs(attention_row_by_row(Q, K, V) - scaled_dot_product_attention(Q, K, V)[0]))),
    )
    log.info("T=%d d=%d: loop %.3f ms, matrix %.3f ms, torch %.3f ms, speedup %.2fx", T, d,
             main["loop"]["median_ms"], main["matrix"]["median_ms"], main["torch"]["median_ms"], main["speedup"])

    sweep = {"T": list(params["sweep_T"]), "d": d}
    sweep.update({name: {"median_ms": [], "q1_ms": [], "q3_ms": []} for name in METHODS})
    for T_i in params["sweep_T"]:
        calls = contenders(*inputs(T_i, d, seed))
        if T_i > params["loop_max_T"]:
            del calls["loop"]  # the Python loop would dominate the run and show nothing new
        with torch.no_grad():
            measured = measure(calls, warmup, repeats)
        for name in METHODS:
            for key in ("median_ms", "q1_ms", "q3_ms"):
                sweep[name][key].append(measured[name][key] if name in measured else None)
        log.info("sweep T=%d: %s", T_i, {n: sweep[n]["median_ms"][-1] for n in METHODS})

    return {
        "main": main,
        "sweep": sweep,
        "threads": {
            "torch": torch.get_num_threads(),
            "requested": threads,
            # NumPy's BLAS pool is sized by these at import (Snakemake sets
            # them to the job's threads); null when unset = every core.
            "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS"),
            "openblas_num_threads_env": os.environ.get("OPENBLAS_NUM_THREADS"),
        },
        "executor": "slurm" if os.environ.get("SLURM_JOB_ID") else "local",
        "hostname": socket.gethostname(),
    }


def plot(values, params, figures):
    plt = pyplot()
    sweep = values["sweep"]
    labels = {"loop": "NumPy, one query at a time", "matrix": "NumPy, matrix form",
              "torch": "PyTorch sdpa"}
    fig, ax = plt.subplots(layout="constrained")
    for name, marker in zip(METHODS, "os^"):
        points = [(T, m, lo, hi) for T, m, lo, hi in zip(
            sweep["T"], sweep[name]["median_ms"], sweep[name]["q1_ms"], sweep[name]["q3_ms"]) if m is not None]
        if not points:  # e.g. the loop skipped at every swept length
            continue
        T, median, q1, q3 = map(np.array, zip(*points))
        # Error bars span the interquartile range around the median.
        ax.errorbar(T, median, yerr=[median - q1, q3 - median], fmt=marker + "-", capsize=3,
                    label=labels[name])
    ax.set(xscale="log", yscale="log", xlabel="sequence length T",
           ylabel="median time per call (ms)", title=f"Attention, d = {sweep['d']}, float64")
    ax.set_xticks(sweep["T"], [str(T) for T in sweep["T"]])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend()
    save_figure(fig, figures["sweep"])
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("timing", run, plot)
