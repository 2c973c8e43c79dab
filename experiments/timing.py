"""How much the matrix form buys: one query at a time vs one matrix product.

Times four ways of computing the same attention output for Q, K, V of
shape (T, d), all in float64 so that they do the same arithmetic:
experiments.attention.attention_row_by_row (a Python loop over the T
queries, its softmax spelt with np.max and np.sum), the same loop spelt
with the array's methods (attention_row_by_row_methods: x.max(), e.sum()),
experiments.attention.scaled_dot_product_attention (2-D NumPy) and
torch.nn.functional.scaled_dot_product_attention.

Two levels, each with its own statistics:

- One run, one process (`run`): articlekit.experiment.measure.compare's
  protocol (its docstring says why each part is there): interleaved
  rounds, one sample of many calls per contender per round, per-round
  ratios, and a 95 % interval of the median from order statistics.
- Between runs (`combine`): the workflow runs this experiment as
  `experiments.timing.runs` independent processes, each a job that takes
  every core (nothing else of the build runs beside it), and combines
  them into results/timing.json. Every value the article prints is then
  measure.between_runs of the runs' estimates: their median, with a
  prediction interval for one more run. The rounds of one process cannot
  see what changes between processes (memory layout, core, the minute's
  load), so the first level's intervals are kept per run, not printed.
- The rule for an outlying run, fixed here before any run is seen
  (SET_ASIDE_SHARE): a run outside the interval the others predict is set
  aside from that value's interval, at most one run in five; when more
  disagree, every run is kept. A set-aside run stays in the record with
  what the machine did while it ran (articlekit.experiment.neighbours),
  and the article names it.

What this experiment adds, and why:

- One thread for the headline. The loop is single-threaded, so the fair
  question is what vectorisation buys at one thread. compare holds NumPy's
  BLAS to one thread with threadpoolctl, and PyTorch's intra-op pool with
  torch.set_num_threads (TORCH_THREADS), whatever OPENBLAS_NUM_THREADS or
  OMP_NUM_THREADS say (Snakemake sets them to the job's cores); the pools
  are recorded as threadpoolctl and torch report them. At one thread the
  clock is the CPU time of this thread (time.thread_time), which does not
  count the time other processes held the core.
- Two spellings of the loop. np.max and np.sum pass through NumPy's
  Python-level dispatch on every query; the array's methods do not. The
  ratio loop / loop_methods says how much of the loop's time is the
  spelling, not the arithmetic, and loop_methods / matrix what the matrix
  form buys over the quicker spelling.
- An all-cores figure (wall clock, at most the CPUs this process may use)
  stands beside it, informational only.
- The machine (experiments.environment.machine) and the load average
  before and after each run are recorded with it; a run whose one-minute
  load exceeded the CPUs it may use is marked loaded (measure.loaded).
  Around the headline's rounds, each run also records the machine's CPU
  time by kind (stolen by the hypervisor included), the CPU time other
  processes used and the clock (articlekit.experiment.neighbours).

Inputs, per T: numpy.random.default_rng(seed) draws Q, K, V in that order,
each (T, d) standard normal.

The loops are timed only up to loop_max_T, at the headline as in the
sweep: above it their figures (and the ratios to them) are null.
"""

import logging
import os
import socket
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment import measure, neighbours
from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from articlekit.experiment.footprint import FLOPS
from experiments.attention import (
    attention_row_by_row,
    attention_row_by_row_methods,
    scaled_dot_product_attention,
)
from experiments.environment import machine

# What the experiment takes, with its defaults: the article's choices (the published
# edition's); config.yaml overrides them key by key. Read by the workflow without
# importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "T": {
        "type": "integer",
        "minimum": 1,
        "x-at-most": "loop_max_T",
        "default": 128,
        "description": "the headline's sequence length; the article prints the per-row loop's time at T, and the loop is timed only up to loop_max_T",
    },
    "d": {"type": "integer", "minimum": 1, "default": 64, "description": "the headline's width: Q, K and V are (T, d)"},
    "sweep_T": {
        "type": "array",
        "items": {"type": "integer", "minimum": 1},
        "minItems": 1,
        "default": [32, 64, 128, 256, 512, 1024],
        "description": "the sequence lengths of the sweep's figure",
    },
    "loop_max_T": {
        "type": "integer",
        "minimum": 1,
        "default": 512,
        "description": "the per-row loops are skipped above this length",
    },
    "warmup": {
        "type": "integer",
        "minimum": 0,
        "default": 3,
        "description": "untimed calls per contender; they also size the samples",
    },
    "rounds": {
        "type": "integer",
        "minimum": 6,
        "maximum": 1000,
        "default": 21,
        "description": "interleaved rounds at (T, d) in each run: one per-round ratio each (6 are the fewest for a 95 % interval)",
    },
    "sweep_rounds": {
        "type": "integer",
        "minimum": 6,
        "maximum": 1000,
        "default": 6,
        "description": "rounds per swept T in each run (6 is the fewest for a 95 % interval)",
    },
    "sample_ms": {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": 1000,
        "default": 5,
        "description": "CPU time each sample adds up to (calls per sample calibrated)",
    },
    "seed": {"type": "integer", "minimum": 0, "default": 0, "description": "default_rng(seed) draws Q, K and V"},
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
Four implementations, all float64, inputs from `default_rng(seed)` (Q, K, V
each (T, d)): `loop` = `attention_row_by_row` (its softmax spelt with
`np.max` / `np.sum`), `loop_methods` = `attention_row_by_row_methods` (the
same loop spelt with `x.max()` / `e.sum()`), `matrix` = NumPy
`scaled_dot_product_attention` (2-D), `torch` = `F.scaled_dot_product_attention`.

Two levels. **A run** is one process (`run()`, one job of rule `timing`,
`results/runs/timing/run-<i>.json`): BLAS, OpenMP and PyTorch held to one
thread in-process (threadpoolctl); `warmup` calls size each contender's
samples to about `sample_ms` of CPU time; then `rounds` interleaved rounds
(order rotated), one sample per contender per round, timed with
`time.thread_time`; a sample is the mean time per call; each median with a
95 % interval from order statistics of the rounds. **The artifact**
`results/timing.json` combines the `experiments.timing.runs` runs
(`combine()`, rule `timing_combine`), and every timing and ratio in it is a
*measured value between runs* (`articlekit.experiment.measure.between_runs`):
`estimate` is the median of the runs' estimates, `low`..`high` a 95 %
prediction interval for one more run (Student's t on the logarithms of the
runs: exp(mean ± t sd √(1 + 1/n))), which claims are judged on
(articlekit/core/claims.py) and `articlekit reproduce` holds a rerun to.
Why that interval and not one for the median of the runs: the module
docstring of `articlekit/experiment/measure.py`. The loops are timed only
up to `loop_max_T`, at the headline as in the sweep: when T > loop_max_T,
`timing.main.loop`, `timing.main.loop_methods`, every ratio to them and
`timing.main.max_abs_diff` are null (this article's config/schema.yaml
refuses such a T: its prose prints them).

A value between runs has the fields: `estimate`, the median of the runs'
estimates; `low` and `high`, the 95 % interval for one more run;
`coverage`, its nominal probability (0.95); `runs`, each run's estimate in
run order (a list); `spread`, (largest − smallest) / median of the runs;
`smallest` and `largest`, the extremes of all the runs; `outliers`, the
runs (numbered from 1) outside the interval the other runs predict, at
1 − 0.05 / n each ([] when they agree); `set_aside`, the runs the rule
left out of `estimate`, `low` and `high` (searched from the farthest in,
at most one run in five, `timing.protocol.set_aside_at_most`); and
`beyond_rule`, true when more runs lay outside than that, when
`set_aside` is [] and every run is kept (`measure.runs_set_aside`).

A run's own artifact, `results/runs/timing/run-<i>.json`, holds what one
process measured, with the keys above in their one-run form: each
`{impl}` with `median_ms` {estimate, low, high, coverage} from order
statistics of its rounds, `q1_ms`, `q3_ms`, `min_ms`, `max_ms`,
`samples_ms` and `wall_samples_ms` (every sample, in round order) and
`calls_per_sample`; each ratio with `ratios` (every per-round ratio); the
sweep with `calls_per_sample`; `load` {before, after, loaded}; `neighbours`
(one record, as in `timing.neighbours.runs`); `machine`
(`experiments.environment.machine()`). Only the combined artifact enters
`build/values.json`.

Figures: `figures/timing-sweep.svg`, median CPU time per call vs T, log-log,
one thread, bars the interval for one more run, the pools' thread counts
written in it; `figures/timing-runs.svg`, each run's loop / matrix ratio with
its own interval, hollow when loaded, a grey cross where the rule set it
aside, over the band of the interval between runs.
"""
RESULT_KEYS = {
    "timing.main.T": "sequence length of the headline point",
    "timing.main.d": "width of Q, K, V at the headline point",
    "timing.main.dtype": "dtype of all three (`float64`)",
    "timing.main.{impl}.median_ms.{field}": "CPU time per call, ms, one thread, between runs (each run's median over its rounds); impl in loop, loop_methods, matrix, torch; field in estimate, low, high, coverage, runs, smallest, largest, spread, outliers, set_aside, beyond_rule",
    "timing.main.{impl}.calls_per_sample": "back-to-back calls in each sample, per run (list; calibrated to `sample_ms`)",
    "timing.main.speedup.{field}": "loop / matrix (× faster), one thread, between runs of each run's median per-round ratio; field in estimate, low, high, coverage, runs, smallest, largest, spread, outliers, set_aside, beyond_rule",
    "timing.main.speedup.run_low": "each run's own 95 % interval from its rounds, lower ends (list)",
    "timing.main.speedup.run_high": "the upper ends (list)",
    "timing.main.speedup.run_width": "median over the runs of (high − low) / estimate of their own intervals",
    "timing.main.speedup.width": "(high − low) / estimate of the interval between runs",
    "timing.main.torch_speedup.{field}": "the same for loop / torch; field in estimate, low, high, coverage, runs, smallest, largest, spread, outliers, set_aside, beyond_rule, run_low, run_high, run_width, width",
    "timing.main.spelling_speedup.{field}": "the same for loop / loop_methods: how many times faster the method spelling is",
    "timing.main.methods_speedup.{field}": "the same for loop_methods / matrix",
    "timing.main.all_cores.threads": "threads of every pool for the all-cores figure (the job's cores, at most the CPUs available)",
    "timing.main.all_cores.matrix.median_ms.{field}": "the matrix form at that many threads, wall-clock ms per call, between runs; field in estimate, low, high, coverage, runs, smallest, largest, spread, outliers, set_aside, beyond_rule",
    "timing.main.all_cores.speedup.{field}": "loop (one thread) / matrix (all cores), wall clock, per round, over `sweep_rounds` rounds a run, between runs; informational, it also measures how idle the other cores were; field in estimate, low, high, coverage, runs, smallest, largest, spread, outliers, set_aside, beyond_rule, run_low, run_high, run_width, width",
    "timing.main.max_abs_diff": "max |diff| between the loop's and the matrix form's outputs, the largest over the runs",
    "timing.main.spelling_max_abs_diff": "max |diff| between the two spellings of the loop (0: the same arithmetic), the largest over the runs",
    "timing.sweep.T": "the swept sequence lengths (list, = params `sweep_T`)",
    "timing.sweep.d": "width at every swept point (= `timing.main.d`)",
    "timing.sweep.{impl}.median_ms": "CPU ms per call per T, one thread, the median of the runs (each the median of its `sweep_rounds` rounds; list; the loops: null where T > loop_max_T)",
    "timing.sweep.{impl}.low_ms": "lower end of each point's interval for one more run (list, null likewise)",
    "timing.sweep.{impl}.high_ms": "upper end of it (list, null likewise)",
    "timing.runs.count": "how many runs were combined (config `experiments.timing.runs`)",
    "timing.runs.agree": "true when no run lies outside the interval the others predict for the headline ratio (`timing.main.speedup`'s `outliers` and `set_aside` empty, `beyond_rule` false)",
    "timing.runs.note": "the sentence the article prints about it: that they agree; or which run lies outside, that the rule set it aside and what the machine recorded while it ran; or (⚠) that more disagree than the rule may set aside; the combining step also warns on the terminal when a run lies outside",
    "timing.runs.set_aside": "the runs the rule set aside from the headline ratio (= `timing.main.speedup.set_aside`)",
    "timing.runs.set_aside_elsewhere": "the other printed values the rule set a run aside from: list of {value: its key under `timing.main`, runs}",
    "timing.protocol.threads": "threads of every pool while timing the headline and the sweep (1)",
    "timing.protocol.clock": "the clock of those samples (`time.thread_time`)",
    "timing.protocol.clock_resolution_s": "that clock's resolution, seconds (`time.get_clock_info`); a sample is never shorter than a hundred ticks",
    "timing.protocol.confidence": "nominal level of every interval (0.95)",
    "timing.protocol.interval": "the interval printed: a prediction interval for one more run (Student's t on the runs' logarithms)",
    "timing.protocol.within_run_interval": "how each run's own intervals are made (order statistics of the median)",
    "timing.protocol.runs": "runs combined (= `timing.runs.count`)",
    "timing.protocol.set_aside_share": "the rule for an outlying run, fixed before the runs: at most this share of them is set aside (0.2, one in five)",
    "timing.protocol.set_aside_at_most": "that share of these runs, rounded down, never leaving fewer than three",
    "timing.protocol.order": "how the contenders take turns",
    "timing.threads.requested": "threads the rule gave each run's job (every core)",
    "timing.threads.available": "CPUs the first run's process could use (`os.sched_getaffinity`)",
    "timing.threads.all_cores": "min(requested, available): the all-cores figure's threads",
    "timing.threads.pools_one_thread": "the native pools while timing at one thread (first run), as threadpoolctl reports them: list of {library, api, version, threads}, PyTorch's intra-op pool last",
    "timing.threads.widest_pool_one_thread": "the most threads any of those pools had in any run (1 when the limit held)",
    "timing.threads.pools_all_cores": "the same list for the all-cores figure",
    "timing.threads.omp_num_threads_env": "OMP_NUM_THREADS as the first run's job saw it, or null (overridden in-process)",
    "timing.threads.openblas_num_threads_env": "OPENBLAS_NUM_THREADS likewise",
    "timing.load.before": "`os.getloadavg()` (1, 5, 15 min) when the first run started",
    "timing.load.after": "the same when the last run ended",
    "timing.load.runs_before": "each run's one-minute load average as it started (list)",
    "timing.load.runs_after": "each run's one-minute load average as it ended (list)",
    "timing.load.cpus": "the fewest CPUs a run could use: above this the machine was loaded",
    "timing.load.loaded_runs": "the runs (numbered from 1) whose one-minute load, at start or end, was above the CPUs they could use (`measure.loaded`)",
    "timing.load.loaded_count": "how many those are",
    "timing.neighbours.runs": "what the machine did while each run timed its headline rounds (list, one record a run; `articlekit.experiment.neighbours`): {seconds, cpu_share {busy, idle, iowait, steal}, others_cpu_s, others [{command, cpu_s}, the largest three], mhz_before, mhz_after}, each null where /proc does not keep it",
    "timing.neighbours.median_seconds": "the median over the runs of how long their headline rounds took, s",
    "timing.neighbours.others_cpu_s": "CPU seconds the other processes used beside each run's headline rounds (list)",
    "timing.neighbours.steal_share": "the share of the machine's CPU time the hypervisor gave elsewhere during each (list)",
    "timing.neighbours.median_others_cpu_s": "the median of `others_cpu_s` over the runs: what an outlying run's is read against",
    "timing.neighbours.median_steal_share": "the median of `steal_share`",
    "timing.machine.cpu_model": "the CPU's model name where the runs ran (as `environment.cpu_model`, read in the first run)",
    "timing.machine.cpu_id": "vendor, family, model and stepping (as `environment.cpu_id`)",
    "timing.machine.cpu_mhz": "clock in MHz, or null (as `environment.cpu_mhz`)",
    "timing.machine.cpu_mhz_source": "where it was read (as `environment.cpu_mhz_source`)",
    "timing.machine.hypervisor": "the hypervisor's vendor, or null on bare metal (as `environment.hypervisor`)",
    "timing.machine.cores": "logical CPUs of that machine, `os.cpu_count()`",
    "timing.machine.same_for_all_runs": "whether every run ran on the same host and CPU (on a cluster they may not)",
    "timing.executor": "`slurm` when any run ran in a SLURM job, else `local`",
    "timing.hostname": "the hosts the runs ran on, in order of first use, comma-separated",
}

log = logging.getLogger("experiment")

METHODS = ("loop", "loop_methods", "matrix", "torch")
LOOPS = ("loop", "loop_methods")
CONFIDENCE = measure.CONFIDENCE
LABELS = {
    "loop": "NumPy, one query at a time (np.max, np.sum)",
    "loop_methods": "NumPy, one query at a time (x.max(), e.sum())",
    "matrix": "NumPy, matrix form",
    "torch": "PyTorch sdpa",
}
# The ratios the article reads, as (numerator, denominator): how many times
# faster the denominator is. speedup is the headline.
RATIOS = {
    "speedup": ("loop", "matrix"),
    "torch_speedup": ("loop", "torch"),
    "spelling_speedup": ("loop", "loop_methods"),
    "methods_speedup": ("loop_methods", "matrix"),
}

# The rule for an outlying run, stated before the data: at most one run in
# five is set aside from a value's interval (measure.between_runs).
SET_ASIDE_SHARE = 0.2

# The loop's interpreter overhead per query (a dozen NumPy calls), at least:
# with FLOPS it keeps footprint()'s time a lower bound.
ROW_S = 2e-6


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint), before any work.

    Memory: at length T the matrix form holds four (T, T) float64 arrays at
    once (scores, shifted scores, exponentials, weights), beside Q, K, V and
    the output, (T, d) each; the longest T of the run sets the peak.
    Time, a lower bound, of one run (each run is a job of its own): every
    round takes one sample of each contender, at least sample_ms and at
    least one call (4 T^2 d flops; each loop also pays ROW_S a query); the
    all-cores rounds and the final check come on top.
    """
    longest = max(p["T"], *p["sweep_T"])
    sample = p["sample_ms"] / 1e3

    def seconds_at(T, rounds):  # every contender timed at length T
        call = 4 * T * T * p["d"] / FLOPS
        calls = [call, call] + ([call + T * ROW_S] * len(LOOPS) if T <= p["loop_max_T"] else [])
        return sum(rounds * max(c, sample) + p["warmup"] * c for c in calls)

    return {
        "bytes": {"T" if p["T"] == longest else "sweep_T": 4 * longest**2 * 8, "d": 4 * longest * p["d"] * 8},
        "seconds": {
            ("T", "rounds", "sample_ms"): seconds_at(p["T"], p["rounds"]),
            ("sweep_T", "sweep_rounds", "sample_ms"): sum(seconds_at(T, p["sweep_rounds"]) for T in p["sweep_T"]),
        },
    }


# ---- statistics and thread control (articlekit.experiment.measure) --------------

median_interval = measure.median_interval
minimum_rounds = measure.minimum_rounds
ratio = measure.ratio
between_runs = measure.between_runs
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
    return measure.pools() + [
        {"library": "torch", "api": "intra-op", "version": torch.__version__, "threads": torch.get_num_threads()}
    ]


# ---- one run: the protocol (measure.compare), on attention ------------------------


def inputs(T, d, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(T, d)) for _ in "QKV")  # (T, d) each


def contenders(Q, K, V, p):
    """The implementations as zero-argument calls, inputs bound; the loops
    only up to loop_max_T (past it, they would dominate the run and show
    nothing new)."""
    tQ, tK, tV = map(torch.from_numpy, (Q, K, V))
    calls = {
        "loop": lambda: attention_row_by_row(Q, K, V),
        "loop_methods": lambda: attention_row_by_row_methods(Q, K, V),
        "matrix": lambda: scaled_dot_product_attention(Q, K, V),
        "torch": lambda: F.scaled_dot_product_attention(tQ, tK, tV),
    }
    if len(Q) > p["loop_max_T"]:
        for name in LOOPS:
            del calls[name]
    return calls


def timed(calls, p, rounds, threads=1, clock=None):
    """measure.compare on these calls, the loop the baseline where it is timed."""
    return measure.compare(
        calls,
        baseline="loop" if "loop" in calls else None,
        rounds=rounds,
        warmup=p["warmup"],
        sample_ms=p["sample_ms"],
        threads=threads,
        thread_setters=TORCH_THREADS,
        clock=clock,
    )


def headline(Q, K, V, p):
    """The T, d point at one thread, CPU time: every contender, and each
    ratio of RATIOS round by round (null when the loops are not timed)."""
    times = timed(contenders(Q, K, V, p), p, p["rounds"])["times"]
    main = {name: summary(m["samples_ms"]) | {key: m[key] for key in RAW} for name, m in times.items()}
    for name in LOOPS:
        main.setdefault(name, None)  # not timed at this T: null, as in the sweep
    for key, (slower, faster) in RATIOS.items():
        main[key] = (
            ratio(times[slower]["samples_ms"], times[faster]["samples_ms"])
            if slower in times and faster in times
            else None
        )
    return main


RAW = ("calls_per_sample", "samples_ms", "wall_samples_ms")  # a contender's samples, as compare returns them
# The all-cores figure's contenders: its one ratio, loop / matrix (the
# spelling is a one-thread question, and PyTorch's pool spinning on a busy
# machine costs the run more than the figure tells).
ALL_CORES = ("loop", "matrix")


def all_cores(Q, K, V, p, threads):
    """The same point with the pools at `threads`, by the wall clock (CPU time
    of one thread would miss the others' work). Informational: the loop still
    runs on one thread, so this ratio also measures the spare cores."""
    # sweep_rounds, not rounds: an informational figure, not worth the time;
    # the wall clock even when threads is 1 (a one-CPU machine), as the name says
    calls = {name: call for name, call in contenders(Q, K, V, p).items() if name in ALL_CORES}
    result = timed(calls, p, p["sweep_rounds"], threads, clock=time.perf_counter)
    return {
        "threads": threads,
        **{
            name: {"median_ms": median_interval(m["samples_ms"]), "calls_per_sample": m["calls_per_sample"]}
            for name, m in result["times"].items()
            if name != "loop"
        },
        "speedup": result["ratios"].get("matrix"),
    }


def sweep(p):
    """Per-call time against T at one thread, CPU time, interleaved rounds."""
    out = {"T": list(p["sweep_T"]), "d": p["d"]}
    out.update({name: {"median_ms": [], "low_ms": [], "high_ms": [], "calls_per_sample": []} for name in METHODS})
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
    """One run (one process). params: T, d (the headline point), sweep_T,
    loop_max_T (the loops are skipped for longer sequences), warmup,
    rounds, sweep_rounds, sample_ms, seed, threads (the cores the rule gave
    the job). -> the run's values; combine() makes the article's from all."""
    for key in ("rounds", "sweep_rounds"):
        if params[key] < minimum_rounds():
            raise ValueError(
                f"timing: {key}={params[key]} cannot give a {CONFIDENCE:.0%} interval; "
                f"set it to at least {minimum_rounds()}"
            )
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
            before = neighbours.snapshot()
            main = headline(Q, K, V, params)
            beside = neighbours.during(before, neighbours.snapshot())
            swept = sweep(params)
        with limited_threads(cores):
            many_thread_pools = pools()
            main["all_cores"] = all_cores(Q, K, V, params, cores)
    load_after = os.getloadavg()
    loop_timed = main["loop"] is not None
    # the loop's output against the matrix form's and against its other
    # spelling, where the loops are timed
    loop_out = attention_row_by_row(Q, K, V) if loop_timed else None
    main.update(
        T=T,
        d=d,
        dtype="float64",
        max_abs_diff=(
            float(np.max(np.abs(loop_out - scaled_dot_product_attention(Q, K, V)[0]))) if loop_timed else None
        ),
        spelling_max_abs_diff=(
            float(np.max(np.abs(loop_out - attention_row_by_row_methods(Q, K, V)))) if loop_timed else None
        ),
    )
    log.info(
        "T=%d d=%d, one thread, CPU time: matrix %.3f ms, torch %.3f ms",
        T,
        d,
        main["matrix"]["median_ms"]["estimate"],
        main["torch"]["median_ms"]["estimate"],
    )
    if loop_timed:
        s = main["speedup"]
        log.info(
            "loop %.3f ms; speedup %.2fx [%.2f, %.2f] (this run's rounds); spelling %.2fx; all %d cores: %.2fx",
            main["loop"]["median_ms"]["estimate"],
            s["estimate"],
            s["low"],
            s["high"],
            main["spelling_speedup"]["estimate"],
            cores,
            main["all_cores"]["speedup"]["estimate"],
        )
    else:
        log.info("loops not timed: T=%d > loop_max_T=%d", T, params["loop_max_T"])

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
        "load": {
            "before": list(load_before),
            "after": list(load_after),
            "loaded": measure.loaded([load_before[0], load_after[0]], available),
        },
        "neighbours": beside,  # while the headline's rounds ran
        "machine": machine(),
        "executor": "slurm" if os.environ.get("SLURM_JOB_ID") else "local",
        "hostname": socket.gethostname(),
    }


# ---- between runs: what the article prints ----------------------------------------


def combine(runs, params):
    """The runs' values (one dict per process, as run() returns them, in run
    order) -> results/timing.json's: every time and ratio the median of the
    runs with a prediction interval for one more run
    (measure.between_runs, under the rule SET_ASIDE_SHARE), each run's own
    figures beside it, the machine and the load of every run, and what the
    machine did beside each."""
    first = runs[0]
    rule = set_aside_at_most(len(runs))
    main = {"T": first["main"]["T"], "d": first["main"]["d"], "dtype": first["main"]["dtype"]}
    for key in ("max_abs_diff", "spelling_max_abs_diff"):
        diffs = [r["main"][key] for r in runs]
        main[key] = None if None in diffs else max(diffs)
    for name in METHODS:
        timed_runs = [r["main"][name] for r in runs]
        main[name] = (
            None
            if None in timed_runs
            else {
                "median_ms": between_runs([t["median_ms"]["estimate"] for t in timed_runs], set_aside_at_most=rule),
                "calls_per_sample": [t["calls_per_sample"] for t in timed_runs],
            }
        )
    for key in RATIOS:
        main[key] = ratio_between_runs([r["main"][key] for r in runs], rule)
    cores = [r["main"]["all_cores"] for r in runs]
    # Informational, and not held to the rule: a wall-clock figure moves
    # with how idle the other cores were, which is no fault of the run. The
    # article prints its range over the runs, not an interval.
    main["all_cores"] = {
        "threads": first["main"]["all_cores"]["threads"],
        **{
            name: {"median_ms": between_runs([c[name]["median_ms"]["estimate"] for c in cores])}
            for name in ALL_CORES
            if name != "loop"
        },
        "speedup": ratio_between_runs([c["speedup"] for c in cores], 0),
    }
    speedup = main["speedup"] or {}
    disagree = bool(speedup.get("outliers") or speedup.get("set_aside") or speedup.get("beyond_rule"))
    values = {
        "main": main,
        "sweep": sweep_between_runs([r["sweep"] for r in runs], rule),
        "load": load_of(runs),
        "neighbours": neighbours_of(runs),
        "machine": machine_of(runs),
    }
    values["runs"] = {
        "count": len(runs),
        "agree": not disagree,
        "set_aside": main["speedup"]["set_aside"] if main["speedup"] else [],
        "set_aside_elsewhere": set_aside_elsewhere(main),
        "note": disagreement_note(main["speedup"], values),
    }
    values |= {
        "protocol": first["protocol"]
        | {
            "within_run_interval": first["protocol"]["interval"],
            "interval": measure.BETWEEN_RUNS_INTERVAL,
            "runs": len(runs),
            "set_aside_share": SET_ASIDE_SHARE,
            "set_aside_at_most": rule,
        },
        "threads": first["threads"]
        | {"widest_pool_one_thread": max(r["threads"]["widest_pool_one_thread"] for r in runs)},
        "executor": "slurm" if any(r["executor"] == "slurm" for r in runs) else "local",
        "hostname": ", ".join(dict.fromkeys(r["hostname"] for r in runs)),
    }
    if disagree:  # in the job's log, and on the build's terminal (Snakemake shows a job's stderr)
        log.warning("timing: %s", values["runs"]["note"])
        print(f"timing: warning: {values['runs']['note']}", file=sys.stderr)
    return values


def set_aside_at_most(runs):
    """How many of `runs` runs the rule may set aside: one in five, rounded
    down, and never so many that fewer than three are left."""
    return max(0, min(int(runs * SET_ASIDE_SHARE), runs - 3))


def ratio_between_runs(per_run, rule):
    """A ratio over the runs (each run's median of its per-round ratios), and
    each run's own interval beside it: run_low, run_high. Null when a run
    did not time it."""
    if None in per_run:
        return None
    combined = between_runs([r["estimate"] for r in per_run], set_aside_at_most=rule)
    widths = [(r["high"] - r["low"]) / r["estimate"] for r in per_run]
    return combined | {
        "run_low": [r["low"] for r in per_run],
        "run_high": [r["high"] for r in per_run],
        # how wide one run's interval from its rounds is, and the runs' interval
        "run_width": float(np.median(widths)),
        "width": (combined["high"] - combined["low"]) / combined["estimate"],
    }


def sweep_between_runs(sweeps, rule):
    """Each swept point the median of the runs with the interval for one more."""
    out = {"T": sweeps[0]["T"], "d": sweeps[0]["d"]}
    for name in METHODS:
        out[name] = {"median_ms": [], "low_ms": [], "high_ms": []}
        for i in range(len(out["T"])):
            points = [s[name]["median_ms"][i] for s in sweeps]
            combined = None if None in points else between_runs(points, set_aside_at_most=rule)
            for field, key in (("median_ms", "estimate"), ("low_ms", "low"), ("high_ms", "high")):
                out[name][field].append(combined and combined[key])
    return out


def set_aside_elsewhere(main):
    """The printed values other than the headline ratio from which the rule
    set a run aside: [{"value": its key under timing.main, "runs": [...]}]."""
    found = [(f"{name}.median_ms", main[name] and main[name]["median_ms"]) for name in METHODS]
    found += [(key, main[key]) for key in RATIOS if key != "speedup"]
    return [{"value": key, "runs": v["set_aside"]} for key, v in found if v and v["set_aside"]]


def load_of(runs):
    """The one-minute load average around each run, and which runs were
    loaded (numbered from 1): above the CPUs the run could use."""
    loaded = [i + 1 for i, r in enumerate(runs) if r["load"]["loaded"]]
    return {
        "before": runs[0]["load"]["before"],  # when the first run started
        "after": runs[-1]["load"]["after"],  # when the last ended
        "runs_before": [r["load"]["before"][0] for r in runs],
        "runs_after": [r["load"]["after"][0] for r in runs],
        "cpus": min(r["threads"]["available"] for r in runs),
        "loaded_runs": loaded,
        "loaded_count": len(loaded),
    }


def neighbours_of(runs):
    """What the machine did beside each run's headline rounds
    (neighbours.during), run by run, and the median of the runs for the
    figures a note compares an outlying run with."""
    records = [r.get("neighbours") or {} for r in runs]

    def per_run(field):
        return [record.get(field) for record in records]

    def median(values):
        known = [v for v in values if v is not None]
        return float(np.median(known)) if known else None

    others = per_run("others_cpu_s")
    steal = [share and share["steal"] for share in per_run("cpu_share")]
    return {
        "runs": records,
        "median_seconds": median(per_run("seconds")),
        "others_cpu_s": others,
        "steal_share": steal,
        "median_others_cpu_s": median(others),
        "median_steal_share": median(steal),
    }


MACHINE_IDENTITY = ("cpu_model", "cpu_id", "cores", "hostname")


def machine_of(runs):
    """The machine the runs ran on (the first run's description) and whether
    every run ran on that one: on a cluster they may not."""
    machines = [r["machine"] for r in runs]
    first = {k: v for k, v in machines[0].items() if k != "hostname"}  # timing.hostname lists the hosts
    same = all(all(m[k] == machines[0][k] for k in MACHINE_IDENTITY) for m in machines)
    return first | {"same_for_all_runs": same}


def disagreement_note(speedup, values):
    """The sentence the article prints on whether the runs agree: each run
    against the interval the other runs predict (measure.between_runs'
    outliers), what the rule did with it, and what the record holds of the
    machine while it ran."""
    if not speedup:
        return "The loop was not timed at this length, so no ratio was held run against run."
    runs = speedup["runs"]
    if len(runs) < 3:
        return f"With {len(runs)} runs, no run can be held against the others."
    if speedup["set_aside"]:
        aside = speedup["set_aside"]
        one = len(aside) == 1
        named = ", ".join(f"run {i} ({runs[i - 1]:.2f})" for i in aside)
        record = " ".join(what_was_recorded(i, values) for i in aside)
        return (
            f"{named} {'lies' if one else 'lie'} outside the interval the other runs predict, and the rule "
            f"stated above sets {'it' if one else 'them'} aside: the ratio and its interval are the other "
            f"{len(runs) - len(aside)} runs'. A rerun may land where {'it' if one else 'they'} did. {record} "
            f"The record holds these, not a cause."
        )
    if not (speedup["outliers"] or speedup["beyond_rule"]):
        return "No run lies outside the interval the other runs predict: they agree within their spread."
    if speedup["outliers"]:
        one = len(speedup["outliers"]) == 1
        named = ", ".join(f"run {i} ({runs[i - 1]:.2f})" for i in speedup["outliers"])
        which = f"{named} {'lies' if one else 'lie'} outside the interval the other runs predict"
        record = " ".join(what_was_recorded(i, values) for i in speedup["outliers"])
        record += " The record holds these, not a cause."
    else:
        which = "more runs lie outside the interval the others predict"
        record = "What the machine did beside each run is in the record (timing.neighbours)."
    return (
        f"⚠ The runs disagree: {which}, more than the rule stated above may set aside, so every run is kept "
        f"and the interval above may not hold for a rerun. {record}"
    )


def what_was_recorded(run, values):
    """One sentence of what the machine did while run `run` (from 1) timed
    its headline, beside the other runs' median."""
    load = values["load"]
    said = [f"one-minute load {load['runs_before'][run - 1]:.2f} before it and {load['runs_after'][run - 1]:.2f} after"]
    record = values["neighbours"]["runs"][run - 1]
    if record.get("others_cpu_s") is not None:
        top = ", ".join(f"{p['command']} {p['cpu_s']:.2f} s" for p in record["others"])
        said.append(
            f"other processes used {record['others_cpu_s']:.2f} CPU-seconds while its "
            f"{record['seconds']:.2f} s of rounds ran{f' ({top})' if top else ''}, against a median of "
            f"{values['neighbours']['median_others_cpu_s']:.2f} s for all the runs"
        )
    if record.get("cpu_share") is not None:
        said.append(f"the hypervisor took {record['cpu_share']['steal']:.0%} of the machine's CPU time")
    if record.get("mhz_before") is not None:
        said.append(f"the clock read {record['mhz_before']:.0f} MHz before and {record['mhz_after']:.0f} after")
    return f"Run {run}: {'; '.join(said)}."


# ---- figures -------------------------------------------------------------------------


def plot(values, params, figures):
    plt = pyplot()
    if "sweep" in figures:
        plot_sweep(plt, values, params, figures["sweep"])
    if "runs" in figures:
        plot_runs(plt, values, figures["runs"])


def plot_sweep(plt, values, params, path):
    sweep = values["sweep"]
    fig, ax = plt.subplots(layout="constrained")
    for name, marker in zip(METHODS, "oDs^"):
        points = [
            (T, m, lo, hi)
            for T, m, lo, hi in zip(sweep["T"], sweep[name]["median_ms"], sweep[name]["low_ms"], sweep[name]["high_ms"])
            if m is not None
        ]
        if not points:  # e.g. the loop skipped at every swept length
            continue
        T, median, low, high = map(np.array, zip(*points))
        # Error bars: where one more run falls (combined), or the interval of
        # one run's median (a run's own values, plotted by hand).
        ax.errorbar(T, median, yerr=[median - low, high - median], fmt=marker + "-", capsize=3, label=LABELS[name])
    threads = {p["library"]: p["threads"] for p in values["threads"]["pools_one_thread"]}
    pool_text = ", ".join(f"{lib} {n}" for lib, n in threads.items())
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="sequence length T",
        ylabel="CPU time per call (ms)",
        title=f"Attention, d = {sweep['d']}, float64, one thread",
    )
    confidence = values["protocol"]["confidence"]
    said = (
        f"median of {values['runs']['count']} runs ({params['sweep_rounds']} interleaved rounds each); "
        f"bars: {confidence:.0%} interval for one more run"
        if "runs" in values
        # combined
        else f"one run: median of {params['sweep_rounds']} interleaved rounds; bars: {confidence:.0%} interval "
        "of that median"
    )
    ax.text(0.01, 0.99, f"{said}\nthreads: {pool_text}", transform=ax.transAxes, va="top", fontsize=8, color="0.3")
    ax.set_xticks(sweep["T"], [str(T) for T in sweep["T"]])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend(loc="lower right", fontsize=8)
    longest = max(sweep["T"])
    at_longest = [
        f"{LABELS[name]} {median:.3g} ms"
        for name in METHODS
        for T, median in zip(sweep["T"], sweep[name]["median_ms"])
        if T == longest and median is not None
    ]
    save_figure(
        fig,
        path,
        alt=(
            f"CPU time per call against sequence length T, on log scales, for each way of computing attention; "
            f"at T = {longest}: {'; '.join(at_longest) or 'none was timed'}"
        ),
    )
    plt.close(fig)


def plot_runs(plt, values, path):
    """Each run's loop / matrix ratio with its own interval (its rounds),
    hollow where the machine was loaded, a grey cross where the rule set it
    aside; the band is the interval between runs that the article prints,
    the line their median."""
    speedup = values["main"]["speedup"]
    fig, ax = plt.subplots(figsize=(6.4, 3.0), layout="constrained")
    if speedup is None:  # the loop not timed at the headline: nothing to draw
        ax.text(0.5, 0.5, "the loop was not timed at this T", ha="center", transform=ax.transAxes)
    else:
        runs = np.arange(1, len(speedup["runs"]) + 1)
        estimate, low, high = (np.array(speedup[k]) for k in ("runs", "run_low", "run_high"))
        loaded = set(values["load"]["loaded_runs"])
        set_aside = set(speedup["set_aside"])
        ax.axhspan(
            speedup["low"],
            speedup["high"],
            color="C0",
            alpha=0.15,
            label=f"{values['protocol']['confidence']:.0%} interval for one more run",
        )
        ax.axhline(speedup["estimate"], color="C0", lw=1, label="median of the runs")
        kinds = (
            ("a run, its own interval", lambda r: r not in loaded and r not in set_aside, "o", "C1"),
            ("a run on a loaded machine", lambda r: r in loaded and r not in set_aside, "o", "white"),
            ("set aside by the rule", lambda r: r in set_aside, "X", "0.4"),
        )
        for label, belongs, marker, face in kinds:
            chosen = np.array([belongs(r) for r in runs])
            if chosen.any():
                ax.errorbar(
                    runs[chosen],
                    estimate[chosen],
                    yerr=[estimate[chosen] - low[chosen], high[chosen] - estimate[chosen]],
                    fmt=marker,
                    capsize=3,
                    color="0.4" if marker == "X" else "C1",
                    mfc=face,
                    label=label,
                )
        ax.set_xticks(runs)
        ax.set(
            xlabel="run (one process each)",
            ylabel="loop / matrix (× faster)",
            title="One run's interval against the runs' spread",
        )
        ax.legend(loc="best", fontsize=8)
    headline = (
        "The loop was not timed at the headline length"
        if speedup is None
        else (
            f"The loop's time over the matrix form's in each of {len(speedup['runs'])} runs "
            f"({', '.join(f'{r:.3g}' for r in speedup['runs'])}), each with its own interval; "
            + (
                f"run {', '.join(map(str, speedup['set_aside']))} set aside by the rule; "
                if speedup["set_aside"]
                else ""
            )
            + f"the runs' median is {speedup['estimate']:.3g}, and one more run falls between "
            f"{speedup['low']:.3g} and {speedup['high']:.3g}"
        )
    )
    save_figure(fig, path, alt=headline)
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("timing", run, plot, combine=combine)
