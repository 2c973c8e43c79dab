"""Measured values with an interval: how long a call takes, and how many
times faster one call is than another, timed so that a claim can be judged
on the result.

    from articlekit.experiment.measure import compare

    timed = compare({"loop": lambda: slow(x), "vector": lambda: fast(x)},
                    baseline="loop", rounds=21)
    timed["ratios"]["vector"]   # {"estimate", "low", "high", "coverage", "ratios"}
    timed["times"]["vector"]    # {"estimate", "low", "high", "coverage", "samples_ms", ...}

A ratio is baseline time / contender time: how many times faster the
contender is (above 1) or slower (below 1). Return it from run() as one
value, under a name of your own:

    def run(params):
        timed = compare(...)
        return {"speedup": timed["ratios"]["vector"]}

and the article binds `NAME.speedup.estimate` (with `NAME.speedup.low`
and `NAME.speedup.high`, its interval), NAME being the experiment's, with
a claim judged on the whole interval (docs/reference.md, measured values;
docs/authoring.md binds `darts.speedup.estimate` this way). Returning all
of `timed` instead gives `NAME.ratios.vector.estimate` and
`NAME.times.vector.estimate` (milliseconds per call), every sample too.

The protocol, and why:

- Thread-limited. Inside compare, the native thread pools that
  threadpoolctl knows (BLAS, OpenMP) are held to `threads` whatever the
  environment says (Snakemake sets OMP_NUM_THREADS to the job's cores);
  `thread_setters` holds other pools too (a library's own intra-op pool:
  pass its (get, set) pair of functions).
- The clock. At one thread, the CPU time of the calling thread
  (time.thread_time): all the work runs on it, and the time other
  processes held the core does not count, so a busy machine does not move
  the figure. At more threads, the wall clock (time.perf_counter), since
  one thread's CPU time would miss the others' work.
- Samples of many calls. Each sample times back-to-back calls adding up to
  about `sample_ms`, calibrated per contender on `warmup` calls and never
  under a hundred ticks of the clock; a sample is the mean time per call.
- Interleaved rounds. Each round takes one sample of every contender, in
  an order that rotates from round to round, so that slow drift
  (frequency, cache, load) hits all of them alike.
- Per-round ratios. A ratio's sample is baseline / contender within one
  round: a slowdown of the whole round cancels out.
- An interval from order statistics. For the median of n independent
  samples, [x(k), x(n+1-k)] holds it with probability 1 - 2 P(B < k),
  B ~ Binomial(n, 1/2); k is the largest rank with coverage >= confidence.
  It needs no model of the noise and no random resampling, so the same
  samples always give the same interval; 95 % needs at least 6 rounds
  (minimum_rounds). Every sample is returned.

Between runs. Those intervals describe the rounds inside one process:
what varies from one process to the next (where the allocator put the
arrays, which core and cache the scheduler gave it, the machine's load in
that minute) is the same for all of a process's rounds, and so invisible
to them. An experiment run as several independent processes (config
`experiments.NAME.runs`, articlekit.experiment.runs) gives one estimate
per process; `between_runs` turns them into the value an article prints:

    speedup = between_runs([run["speedup"]["estimate"] for run in runs])
    speedup  # {"estimate", "low", "high", "coverage", "runs", "spread", "outliers", ...}

- The estimate is the median of the runs.
- The interval is a prediction interval for one more run: where the
  estimate of one further process, on the same machine, falls with
  probability `confidence`. Timings are positive and multiplicative, so it
  is made on their logarithms, from their mean and standard deviation,
  with Student's t for n - 1 degrees of freedom:
  exp(mean +- t * sd * sqrt(1 + 1/n)). Chosen over an interval for the
  median of the runs, which narrows as 1/sqrt(n) and says where the
  machine's typical value lies, because a reader who reruns the
  experiment gets new runs, not the typical value: one process must land
  inside, and so, with room to spare, must the median of a rerun of all
  n (what `articlekit reproduce` compares), whose spread is smaller.
  Distribution-free intervals of a run need more runs than a build can
  afford (the extremes of n runs hold the next one with probability
  (n - 1) / (n + 1), 67 % for five).
- Outliers: a run outside the prediction interval the other runs give
  (at confidence 1 - (1 - confidence) / n, so that n runs that do agree
  are flagged with probability about 1 - confidence at most) disagrees
  with them more than their spread allows. `outliers` lists them, by
  their number (1 for the first run); it takes at least three runs.
- A rule for them, stated before the data: `set_aside_at_most` runs may
  be left out of the interval when they are the only ones outside what the
  others predict (one run in five, say; runs_set_aside searches from the
  farthest in, so that two far out together do not hide each other). One run that shared the machine with another program would
  otherwise widen the interval for all the others; the set-aside runs
  stay in the record (`runs`, `set_aside`), and an article says that a
  rerun may land among them. When more runs than that are outliers, none
  is set aside: the runs disagree, and the interval says so by its width.
- `loaded(load, cpus)`: a run started or ended with more runnable
  processes than CPUs (the one-minute load average above the CPUs it may
  use) shared the machine, however its threads were pinned.

Nothing here asserts how fast anything is: speed targets belong in
benchmarks, and claims about them in the article, judged on the interval.
"""

import contextlib
import math
import statistics
import time

from threadpoolctl import ThreadpoolController

from articlekit.core.errors import ArticlekitError

CONFIDENCE = 0.95

# The keys of what compare returns for a time and for a ratio: articlekit's
# own words, which an article's publishing settings may name (a spread).
TIME_FIELDS = ("estimate", "low", "high", "coverage", "samples_ms", "wall_samples_ms", "calls_per_sample")
RATIO_FIELDS = ("estimate", "low", "high", "coverage", "ratios")
BETWEEN_RUNS_FIELDS = (
    "estimate",
    "low",
    "high",
    "coverage",
    "runs",
    "smallest",
    "largest",
    "spread",
    "outliers",
    "set_aside",
    "beyond_rule",
)
BETWEEN_RUNS_INTERVAL = "prediction interval for one more run (Student's t on the logarithms of the runs)"


class MeasureError(ArticlekitError):
    pass


# ---- the interval of a median ----------------------------------------------------


def median_interval(samples, confidence=CONFIDENCE):
    """The median of samples with a distribution-free interval.

    -> {"estimate", "low", "high", "coverage"}: coverage is the exact
    probability (>= confidence) that [low, high] holds the true median.
    Needs enough samples for such an interval to exist (6 for 95 %).
    """
    x = sorted(samples)
    if any(math.isnan(v) for v in x):
        raise MeasureError("median_interval: a sample is NaN")
    k, coverage = order_statistic_rank(len(x), confidence)
    return {
        "estimate": float(statistics.median(x)),
        "low": float(x[k - 1]),
        "high": float(x[len(x) - k]),
        "coverage": coverage,
    }


def order_statistic_rank(n, confidence=CONFIDENCE):
    """(k, coverage): the largest k with P(k <= B <= n-k) >= confidence,
    B ~ Binomial(n, 1/2), and that probability."""
    best = None
    for k in range(1, n // 2 + 1):
        tail = sum(math.comb(n, i) for i in range(k)) / 2**n  # P(B < k)
        coverage = 1 - 2 * tail
        if coverage < confidence:
            break
        best = (k, coverage)
    if best is None:
        raise MeasureError(
            f"{n} samples cannot give a {confidence:.0%} interval for the median; "
            f"take at least {minimum_rounds(confidence)}"
        )
    return best


def minimum_rounds(confidence=CONFIDENCE):
    """The fewest samples whose extremes already cover the median often enough."""
    return next(n for n in range(1, 64) if 1 - 2 / 2**n >= confidence)


def ratio(numerator_ms, denominator_ms, confidence=CONFIDENCE):
    """Per-round ratios numerator / denominator, their median and interval:
    {"estimate", "low", "high", "coverage", "ratios"}."""
    ratios = [a / b for a, b in zip(numerator_ms, denominator_ms, strict=True)]
    return median_interval(ratios, confidence) | {"ratios": ratios}


# ---- thread control --------------------------------------------------------------


@contextlib.contextmanager
def limited_threads(n, thread_setters=()):
    """The pools threadpoolctl knows, and each (get, set) pair of
    thread_setters, held to n threads inside the block; the old counts come
    back after it. Yields the threadpoolctl controller of those pools
    (pools(controller) lists them without looking for them again)."""
    previous = [get() for get, _ in thread_setters]
    controller = ThreadpoolController()
    with controller.limit(limits=n):
        for _, set_threads in thread_setters:
            set_threads(n)
        try:
            yield controller
        finally:
            for (_, set_threads), count in zip(thread_setters, previous):
                set_threads(count)


def pools(controller=None):
    """The native thread pools threadpoolctl sees now (or those `controller`
    found, at their threads now): library, API, version, threads."""
    return [
        {"library": p["internal_api"], "api": p["user_api"], "version": p.get("version"), "threads": p["num_threads"]}
        for p in (controller or ThreadpoolController()).info()
    ]


# ---- timing ----------------------------------------------------------------------


def clock_resolution(clock):
    """The clock's tick in seconds, as the platform reports it (1 ns for a
    stand-in clock)."""
    for name in ("thread_time", "perf_counter", "process_time", "monotonic"):
        if clock is getattr(time, name):
            return time.get_clock_info(name).resolution
    return 1e-9


def calls_per_sample(fn, warmup, sample_ms, clock, resolution=1e-9):
    """Run fn `warmup` times (at least once), timing each; -> enough calls
    to fill about sample_ms at the fastest of them, and never less than a
    hundred ticks of the clock (15.6 ms for thread_time on some Windows
    versions)."""
    fastest = math.inf
    for _ in range(max(warmup, 1)):
        start = clock()
        fn()
        fastest = min(fastest, clock() - start)
    target = max(sample_ms / 1e3, 100 * resolution)
    return max(1, round(target / max(fastest, resolution, 1e-7)))


def interleaved(calls, rounds, warmup, sample_ms, clock):
    """Time the zero-argument calls in `rounds` interleaved rounds.

    -> {name: {"calls_per_sample", "samples_ms", "wall_samples_ms"}}: one
    sample per round, the mean time per call by `clock` and by the wall clock.
    """
    names = list(calls)
    resolution = clock_resolution(clock)
    sizes = {name: calls_per_sample(calls[name], warmup, sample_ms, clock, resolution) for name in names}
    out = {name: {"calls_per_sample": sizes[name], "samples_ms": [], "wall_samples_ms": []} for name in names}
    for r in range(rounds):
        shift = r % len(names)  # rotate the order: no contender always follows the same one
        for name in names[shift:] + names[:shift]:
            fn, n = calls[name], sizes[name]
            wall, start = time.perf_counter(), clock()
            for _ in range(n):
                fn()
            out[name]["samples_ms"].append((clock() - start) / n * 1e3)
            out[name]["wall_samples_ms"].append((time.perf_counter() - wall) / n * 1e3)
    return out


def clock_name(clock):
    """time.thread_time, or the stand-in's qualified name."""
    return f"{getattr(clock, '__module__', None) or '?'}.{getattr(clock, '__qualname__', repr(clock))}"


def default_clock(threads):
    """CPU time of this thread at one thread; the wall clock above it."""
    return time.thread_time if threads == 1 else time.perf_counter


def compare(
    contenders,
    baseline=None,
    rounds=21,
    warmup=3,
    sample_ms=20.0,
    threads=1,
    thread_setters=(),
    clock=None,
    confidence=CONFIDENCE,
):
    """Time each contender (name -> zero-argument call) by the protocol
    above, and each against the baseline.

    -> {"times": {name: {"estimate", "low", "high", "coverage", "samples_ms",
                         "wall_samples_ms", "calls_per_sample"}},   # ms per call
        "ratios": {name: {"estimate", "low", "high", "coverage", "ratios"}},
        "protocol": {...}}                                          # how it was timed

    ratios holds baseline time / contender time for every contender but
    the baseline (empty without one). clock defaults to default_clock(threads);
    a stand-in clock (a function returning seconds) makes it deterministic.
    """
    if not contenders:
        raise MeasureError("compare: no contenders; pass {name: zero-argument call}")
    if baseline is not None and baseline not in contenders:
        raise MeasureError(
            f"compare: baseline {baseline!r} is not a contender; contenders: {', '.join(map(str, contenders))}"
        )
    not_callable = [name for name, fn in contenders.items() if not callable(fn)]
    if not_callable:
        raise MeasureError(
            f"compare: {', '.join(map(str, not_callable))} not callable; pass zero-argument calls, e.g. lambda: f(x)"
        )
    if rounds < minimum_rounds(confidence):
        raise MeasureError(
            f"compare: rounds={rounds} cannot give a {confidence:.0%} interval; "
            f"take at least {minimum_rounds(confidence)}"
        )
    if threads < 1:
        raise MeasureError(f"compare: threads={threads}; give at least 1")
    clock = clock or default_clock(threads)
    with limited_threads(threads, thread_setters) as controller:
        held = pools(controller)
        raw = interleaved(contenders, rounds, warmup, sample_ms, clock)
    times = {name: median_interval(m["samples_ms"], confidence) | m for name, m in raw.items()}
    ratios = {
        name: ratio(raw[baseline]["samples_ms"], m["samples_ms"], confidence)
        for name, m in raw.items()
        if baseline is not None and name != baseline
    }
    return {
        "times": times,
        "ratios": ratios,
        "protocol": {
            "baseline": baseline,
            "rounds": rounds,
            "warmup": warmup,
            "sample_ms": sample_ms,
            "threads": threads,
            "clock": clock_name(clock),
            "clock_resolution_s": clock_resolution(clock),
            "confidence": confidence,
            "interval": "order statistics of the median",
            "order": "interleaved rounds, order rotated each round",
            "pools": held,
        },
    }


# ---- between runs ----------------------------------------------------------------


def between_runs(estimates, confidence=CONFIDENCE, set_aside_at_most=0):
    """Independent runs' estimates of one positive quantity (a time, a
    ratio; one per process) -> their median, with a prediction interval
    for one more run (the module's docstring says why that one).

    set_aside_at_most: the rule for outlying runs, fixed before the runs
    are seen (runs_set_aside). When 1 to this many runs lie outside what
    the others predict, they are set aside: the estimate and interval come
    from the others, and the set-aside runs are listed. When more do, the
    runs disagree too widely for any to be called the odd one out, and all
    are kept. 0 (the default) keeps every run whatever it shows.

    -> {"estimate": median of the kept runs,
        "low", "high": where one more run falls with probability `confidence`,
                       from the kept runs,
        "coverage": that probability, "runs": the estimates as given,
        "smallest", "largest": the extremes of all the runs,
        "spread": (largest - smallest) / median,
        "outliers": the runs (numbered from 1) outside the interval the
                    others predict; [] with fewer than three runs,
        "set_aside": the runs the rule left out of the interval,
        "beyond_rule": whether more runs lay outside than the rule may set
                       aside (then set_aside is [])}
    """
    runs = [float(x) for x in estimates]
    if len(runs) < 2:
        raise MeasureError(f"between_runs: {len(runs)} run gives no spread between runs; take at least 2")
    if any(math.isnan(x) or not x > 0 for x in runs):
        raise MeasureError(
            f"between_runs: every run's estimate must be a positive number (a time or a ratio), got {runs}"
        )
    if set_aside_at_most < 0 or (set_aside_at_most > 0 and set_aside_at_most > len(runs) - 3):
        raise MeasureError(
            f"between_runs: set_aside_at_most={set_aside_at_most} with {len(runs)} runs; an interval from "
            f"the runs kept needs at least 3 of them, so it may be 0 to {max(len(runs) - 3, 0)}"
        )
    outliers = outlying_runs(runs, confidence)
    set_aside, beyond_rule = runs_set_aside(runs, set_aside_at_most, confidence)
    kept = [x for i, x in enumerate(runs, 1) if i not in set_aside]
    low, high = prediction_interval(kept, confidence)
    median = statistics.median(kept)
    return {
        "estimate": float(median),
        # never without its own estimate: runs that agree to the last digit
        # give [exp(log x), exp(log x)], which rounding may put beside x
        "low": min(low, median),
        "high": max(high, median),
        "coverage": confidence,
        "runs": runs,
        "smallest": min(runs),
        "largest": max(runs),
        "spread": (max(runs) - min(runs)) / median,
        "outliers": outliers,
        "set_aside": set_aside,
        "beyond_rule": beyond_rule,
    }


def prediction_interval(runs, confidence=CONFIDENCE):
    """(low, high) holding one more run with probability `confidence`, for
    runs whose logarithms are normal: exp(mean +- t sd sqrt(1 + 1/n))."""
    logs = [math.log(x) for x in runs]
    n = len(logs)
    centre = math.fsum(logs) / n
    sd = math.sqrt(math.fsum((x - centre) ** 2 for x in logs) / (n - 1))
    half = student_t(1 - (1 - confidence) / 2, n - 1) * sd * math.sqrt(1 + 1 / n)
    return math.exp(centre - half), math.exp(centre + half)


def runs_set_aside(runs, at_most, confidence=CONFIDENCE):
    """The runs (1 for the first) the rule sets aside: a forward search, as
    in Rosner's generalised ESD test, so that two runs far out together do
    not hide each other. Step i takes the run farthest from what the runs
    still in predict and holds it to their interval at confidence
    1 - (1 - confidence) / (runs still in); the runs set aside are those of
    the last step whose run fell outside. The search takes one step more
    than `at_most`: when that step's run falls outside too, more runs
    disagree than the rule allows, and none is set aside.
    -> (the runs set aside, whether more lay outside than at_most)."""
    if at_most == 0:
        return [], False
    remaining = dict(enumerate(runs, 1))
    picked, outside_until = [], 0
    for step in range(1, at_most + 2):
        if len(remaining) < 3:
            break
        each = 1 - (1 - confidence) / len(remaining)

        def others(run):
            return [x for j, x in remaining.items() if j != run]

        distances = {run: distance_from_others(x, others(run), each) for run, x in remaining.items()}
        farthest = max(distances, key=distances.get)
        if distances[farthest] > 1:
            outside_until = step
        picked.append(farthest)
        del remaining[farthest]
    if outside_until > at_most:
        return [], True
    return sorted(picked[:outside_until]), False


# Runs that differ by less than this on the logarithmic scale (a few ulps)
# are one value: rounding alone must not put a run outside the others.
ROUNDING = 1e-12


def distance_from_others(x, others, confidence):
    """How far x lies from the centre of the interval `others` predict, in
    its half-widths on the logarithmic scale: above 1, outside it."""
    logs = [math.log(y) for y in others]
    centre = math.fsum(logs) / len(logs)
    low, high = prediction_interval(others, confidence)
    half = (math.log(high) - math.log(low)) / 2
    gap = max(abs(math.log(x) - centre) - ROUNDING, 0.0)
    return gap / half if half > 0 else (math.inf if gap > 0 else 0.0)


def outlying_runs(runs, confidence=CONFIDENCE):
    """The runs (1 for the first) that the others' prediction interval, at
    confidence 1 - (1 - confidence) / n each, leaves out: runs that agree
    are flagged with probability about 1 - confidence at most. Needs three
    runs: two others to predict from."""
    n = len(runs)
    if n < 3:
        return []
    each = 1 - (1 - confidence) / n
    return [i + 1 for i, x in enumerate(runs) if distance_from_others(x, runs[:i] + runs[i + 1 :], each) > 1]


def student_t(p, df):
    """The p-quantile of Student's t with df degrees of freedom (SciPy's
    stdtrit). Imported here, not at the top: only the step that combines
    runs needs it, and each timed process would otherwise pay its import."""
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def loaded(load, cpus):
    """Whether a one-minute load average (or any of several) says the
    machine had more runnable processes than the `cpus` a run may use."""
    loads = load if isinstance(load, (list, tuple)) else [load]
    return any(x > cpus for x in loads)
