"""How much the matrix form buys: one query at a time vs one matrix product.

Times three ways of computing the same attention output for Q, K, V of
shape (T, d), all in float64 so that they do the same arithmetic:
experiments.attention.attention_row_by_row (a Python loop over the T
queries), experiments.attention.scaled_dot_product_attention (2-D NumPy) and
torch.nn.functional.scaled_dot_product_attention.

The protocol is articlekit.experiment.measure.compare's (its docstring
says why each part is there): interleaved rounds, one sample of many calls
per contender per round, per-round ratios, and a 95 % interval of the
median from order statistics, every sample stored. What this experiment
adds, and why:

- One thread for the headline. The loop is single-threaded, so the fair
  question is what vectorisation buys at one thread. compare holds NumPy's
  BLAS to one thread with threadpoolctl, and PyTorch's intra-op pool with
  torch.set_num_threads (TORCH_THREADS), whatever OPENBLAS_NUM_THREADS or
  OMP_NUM_THREADS say (Snakemake sets them to the job's cores); the pools
  are recorded as threadpoolctl and torch report them. At one thread the
  clock is the CPU time of this thread (time.thread_time), which does not
  count the time other processes held the core: the old wall-clock ratio
  swung from 0.1x to 12x on a busy machine.
- An all-cores figure (wall clock, at most the CPUs this process may use)
  stands beside it, informational only.
- The headline ratio is loop / matrix at T, d (compare's ratio to the
  baseline, the loop): the median of the `rounds` per-round ratios.

Inputs, per T: numpy.random.default_rng(seed) draws Q, K, V in that order,
each (T, d) standard normal.

The per-row loop is timed only up to loop_max_T, at the headline as in the
sweep: above it the loop's figures (and the ratios to it) are null.
"""

import logging
import os
import socket
import time

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment import measure
from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from articlekit.experiment.footprint import FLOPS
from experiments.attention import attention_row_by_row, scaled_dot_product_attention

log = logging.getLogger("experiment")

METHODS = ("loop", "matrix", "torch")
CONFIDENCE = measure.CONFIDENCE
LABELS = {"loop": "NumPy, one query at a time", "matrix": "NumPy, matrix form", "torch": "PyTorch sdpa"}

# The loop's interpreter overhead per query (a dozen NumPy calls), at least:
# with FLOPS it keeps footprint()'s time a lower bound.
ROW_S = 2e-6


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint), before any work.

    Memory: at length T the matrix form holds four (T, T) float64 arrays at
    once (scores, shifted scores, exponentials, weights), beside Q, K, V and
    the output, (T, d) each; the longest T of the run sets the peak.
    Time, a lower bound: every round takes one sample of each contender, at
    least sample_ms and at least one call (4 T^2 d flops; the loop also pays
    ROW_S a query); the all-cores rounds and the final check come on top.
    """
    longest = max(p["T"], *p["sweep_T"])
    sample = p["sample_ms"] / 1e3

    def seconds_at(T, rounds):  # every contender timed at length T
        call = 4 * T * T * p["d"] / FLOPS
        calls = [call, call] + ([call + T * ROW_S] if T <= p["loop_max_T"] else [])
        return sum(rounds * max(c, sample) + p["warmup"] * c for c in calls)

    return {
        "bytes": {"T" if p["T"] == longest else "sweep_T": 4 * longest**2 * 8, "d": 4 * longest * p["d"] * 8},
        "seconds": {("T", "rounds", "sample_ms"): seconds_at(p["T"], p["rounds"]),
                    ("sweep_T", "sweep_rounds", "sample_ms"): sum(seconds_at(T, p["sweep_rounds"])
                                                                  for T in p["sweep_T"])},
    }


# ---- statistics and thread control (articlekit.experiment.measure) --------------

median_interval = measure.median_interval
minimum_rounds = measure.minimum_rounds
ratio = measure.ratio
# PyTorch's intra-op pool, which threadpoolctl does not hold: measure holds it
# beside BLAS and OpenMP through its (get, set) pair.
TORCH_THREADS = ((torch.get_num_threads, torch.set_num_threads),)


def summary(samples_ms):
    """One contender's samples (ms per call): median with interval, quartiles, extremes."""
    q1, q3 = np.percentile(samples_ms, [25, 75])
    return {
        "median_ms": median_interval(samples_ms),
        "q1_ms": float(q1),
        "q3_ms": float(q3),
        "min_ms": min(samples_ms),
        "max_ms": max(samples_ms),
    }


def cpus_available():
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    return len(os.sched_getaffinity(0))


def limited_threads(n):
    """BLAS, OpenMP and PyTorch's intra-op pool held to n threads inside the block."""
    return measure.limited_threads(n, TORCH_THREADS)


def pools():
    """The native thread pools as they are now: library, API, version, threads."""
    return measure.pools() + [{"library": "torch", "api": "intra-op", "version": torch.__version__,
                               "threads": torch.get_num_threads()}]


# ---- the protocol (measure.compare), on attention -------------------------------


def inputs(T, d, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(T, d)) for _ in "QKV")  # (T, d) each


def contenders(Q, K, V, p):
    """The implementations as zero-argument calls, inputs bound; the loop
    only up to loop_max_T (past it, it would dominate the run and show
    nothing new)."""
    tQ, tK, tV = map(torch.from_numpy, (Q, K, V))
    calls = {
        "loop": lambda: attention_row_by_row(Q, K, V),
        "matrix": lambda: scaled_dot_product_attention(Q, K, V),
        "torch": lambda: F.scaled_dot_product_attention(tQ, tK, tV),
    }
    if len(Q) > p["loop_max_T"]:
        del calls["loop"]
    return calls


def timed(calls, p, rounds, threads=1, clock=None):
    """measure.compare on these calls, the loop the baseline where it is timed."""
    return measure.compare(calls, baseline="loop" if "loop" in calls else None, rounds=rounds,
                           warmup=p["warmup"], sample_ms=p["sample_ms"], threads=threads,
                           thread_setters=TORCH_THREADS, clock=clock)


def headline(Q, K, V, p):
    """The T, d point at one thread, CPU time: every contender, and both
    ratios to the loop (null when the loop is not timed at this T)."""
    result = timed(contenders(Q, K, V, p), p, p["rounds"])
    main = {name: summary(m["samples_ms"]) | {key: m[key] for key in RAW}
            for name, m in result["times"].items()}
    main.setdefault("loop", None)  # not timed at this T: null, as in the sweep
    main["speedup"] = result["ratios"].get("matrix")  # loop / matrix, round by round
    main["torch_speedup"] = result["ratios"].get("torch")
    return main


RAW = ("calls_per_sample", "samples_ms", "wall_samples_ms")  # a contender's samples, as compare returns them


def all_cores(Q, K, V, p, threads):
    """The same point with the pools at `threads`, by the wall clock (CPU time
    of one thread would miss the others' work). Informational: the loop still
    runs on one thread, so this ratio also measures the spare cores."""
    # sweep_rounds, not rounds: an informational figure, not worth the time;
    # the wall clock even when threads is 1 (a one-CPU machine), as the name says
    result = timed(contenders(Q, K, V, p), p, p["sweep_rounds"], threads, clock=time.perf_counter)
    return {
        "threads": threads,
        **{name: {"median_ms": median_interval(m["samples_ms"]), "calls_per_sample": m["calls_per_sample"]}
           for name, m in result["times"].items() if name != "loop"},
        "speedup": result["ratios"].get("matrix"),
    }


def sweep(p):
    """Per-call time against T at one thread, CPU time, interleaved rounds."""
    out = {"T": list(p["sweep_T"]), "d": p["d"]}
    out.update({name: {"median_ms": [], "low_ms": [], "high_ms": [], "calls_per_sample": []}
                for name in METHODS})
    for T in p["sweep_T"]:
        times = timed(contenders(*inputs(T, p["d"], p["seed"]), p), p, p["sweep_rounds"])["times"]
        for name in METHODS:
            m = times.get(name)
            out[name]["median_ms"].append(m and m["estimate"])
            out[name]["low_ms"].append(m and m["low"])
            out[name]["high_ms"].append(m and m["high"])
            out[name]["calls_per_sample"].append(m and m["calls_per_sample"])
        log.info("sweep T=%d: %s", T, {n: out[n]["median_ms"][-1] for n in METHODS})
    return out


def run(params):
    """params: T, d (the headline point), sweep_T, loop_max_T (the loop is
    skipped for longer sequences), warmup, rounds, sweep_rounds, sample_ms,
    seed, threads (the cores the rule gave the job)."""
    for key in ("rounds", "sweep_rounds"):
        if params[key] < minimum_rounds():
            raise ValueError(f"timing: {key}={params[key]} cannot give a {CONFIDENCE:.0%} interval; "
                             f"set it to at least {minimum_rounds()}")
    available = cpus_available()
    # Never more threads than CPUs this process may run on: oversubscribed
    # pools time the scheduler, not the code.
    cores = min(params.get("threads") or available, available)
    load_before = os.getloadavg()

    T, d = params["T"], params["d"]
    Q, K, V = inputs(T, d, params["seed"])
    with torch.no_grad():
        with limited_threads(1):
            one_thread_pools = pools()
            main = headline(Q, K, V, params)
            swept = sweep(params)
        with limited_threads(cores):
            many_thread_pools = pools()
            main["all_cores"] = all_cores(Q, K, V, params, cores)
    loop_timed = main["loop"] is not None
    # the loop's output against the matrix form's, where the loop is timed
    diff = (float(np.max(np.abs(attention_row_by_row(Q, K, V) - scaled_dot_product_attention(Q, K, V)[0])))
            if loop_timed else None)
    main.update(T=T, d=d, dtype="float64", max_abs_diff=diff)
    log.info("T=%d d=%d, one thread, CPU time: matrix %.3f ms, torch %.3f ms", T, d,
             main["matrix"]["median_ms"]["estimate"], main["torch"]["median_ms"]["estimate"])
    if loop_timed:
        s = main["speedup"]
        log.info("loop %.3f ms; speedup %.2fx [%.2f, %.2f]; all %d cores: %.2fx",
                 main["loop"]["median_ms"]["estimate"], s["estimate"], s["low"], s["high"],
                 cores, main["all_cores"]["speedup"]["estimate"])
    else:
        log.info("loop not timed: T=%d > loop_max_T=%d", T, params["loop_max_T"])

    return {
        "main": main,
        "sweep": swept,
        "protocol": {
            "threads": 1,
            "clock": measure.clock_name(time.thread_time),
            "clock_resolution_s": time.get_clock_info("thread_time").resolution,
            "confidence": CONFIDENCE,
            "interval": "order statistics of the median",
            "order": "interleaved rounds, order rotated each round",
        },
        "threads": {
            "requested": params.get("threads"),
            "available": available,
            "all_cores": cores,
            "pools_one_thread": one_thread_pools,
            "widest_pool_one_thread": max(pool["threads"] for pool in one_thread_pools),
            "pools_all_cores": many_thread_pools,
            # What Snakemake exported; the pools above override it in-process.
            "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS"),
            "openblas_num_threads_env": os.environ.get("OPENBLAS_NUM_THREADS"),
        },
        "load": {"before": list(load_before), "after": list(os.getloadavg())},
        "executor": "slurm" if os.environ.get("SLURM_JOB_ID") else "local",
        "hostname": socket.gethostname(),
    }


def plot(values, params, figures):
    plt = pyplot()
    sweep = values["sweep"]
    fig, ax = plt.subplots(layout="constrained")
    for name, marker in zip(METHODS, "os^"):
        points = [(T, m, lo, hi) for T, m, lo, hi in zip(
            sweep["T"], sweep[name]["median_ms"], sweep[name]["low_ms"], sweep[name]["high_ms"]) if m is not None]
        if not points:  # e.g. the loop skipped at every swept length
            continue
        T, median, low, high = map(np.array, zip(*points))
        # Error bars: the 95 % interval of the median (order statistics).
        ax.errorbar(T, median, yerr=[median - low, high - median], fmt=marker + "-", capsize=3,
                    label=LABELS[name])
    threads = {p["library"]: p["threads"] for p in values["threads"]["pools_one_thread"]}
    pool_text = ", ".join(f"{lib} {n}" for lib, n in threads.items())
    ax.set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="CPU time per call (ms)",
           title=f"Attention, d = {sweep['d']}, float64, one thread")
    ax.text(0.01, 0.99, f"median of {params['sweep_rounds']} interleaved rounds, bars: 95 % interval\n"
            f"threads: {pool_text}", transform=ax.transAxes, va="top", fontsize=8, color="0.3")
    ax.set_xticks(sweep["T"], [str(T) for T in sweep["T"]])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend(loc="lower right")
    save_figure(fig, figures["sweep"])
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("timing", run, plot)
