"""How the rounding error of a float32 sum grows with its length.

For each size a fresh numpy.random.default_rng(seed) draws `trials` arrays
of n float32 values uniform in [0, 1), and each is summed three ways: left
to right (naive_sum), by halves (pairwise_sum), and with numpy.sum. A
method's error at n is the mean relative error over the trials: one sum
can land near the exact total by luck. The reference is
math.fsum over the same values widened to float64: float32 values are exact
in float64 and fsum rounds only once, so its own error (about 1e-16) is far
below anything measured here.
"""

import logging
import math

import numpy as np

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure

# What the experiment takes, with its defaults: the article's choices. config.yaml
# overrides them key by key (a section summation: holding only what differs).
# Read by the workflow without importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "sizes": {
        "type": "array",
        "items": {"type": "integer", "minimum": 1},
        "minItems": 1,
        "default": [256, 1024, 4096, 16384, 65536, 262144],
        "description": "how many values each sum adds, ascending: powers of 4, even steps on the log axis",
    },
    "trials": {
        "type": "integer",
        "minimum": 1,
        "default": 8,
        "description": "draws per size; the error reported is their mean",
    },
    "seed": {
        "type": "integer",
        "minimum": 0,
        "default": 2026,
        "description": "a fresh default_rng(seed) per size",
    },
    "block": {
        "type": "integer",
        "minimum": 1,
        "default": 8,
        "description": "pairwise_sum adds runs this short left to right",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS = {
    "summation.unit_roundoff": "u, the unit roundoff of float32 (half its machine epsilon)",
    "summation.sizes": "the sizes summed (list, = params `sizes`)",
    "summation.errors.{method}": "mean relative error at each size (list); method naive, pairwise or numpy",
    "summation.largest.n": "the largest size",
    "summation.largest.{method}": "mean relative error at the largest size; method naive, pairwise or numpy",
    "summation.largest.naive_over_pairwise": "the naive error over the pairwise one, at the largest size",
    "summation.growth.n": "how many times the largest size is the smallest",
    "summation.growth.naive": "how many times the naive error grew from the smallest size to the largest",
}

log = logging.getLogger("experiment")


def naive_sum(xs):
    """Left to right: every addition rounds, and the running total grows,
    so the worst case error grows in proportion to n."""
    total = xs.dtype.type(0)
    for x in xs:
        total += x
    return total


def pairwise_sum(xs, block=8):
    """Sum each half, then add the two: a value meets about log2(n)
    roundings instead of up to n."""
    if len(xs) <= block:
        return naive_sum(xs)
    half = len(xs) // 2
    return pairwise_sum(xs[:half], block) + pairwise_sum(xs[half:], block)


def relative_error(total, exact):
    return abs(float(total) - exact) / abs(exact)


METHODS = {"naive": naive_sum, "pairwise": pairwise_sum, "numpy": np.sum}


def errors_at(n, seed, trials, block):
    """The mean relative error of each method over `trials` draws of n values."""
    rng = np.random.default_rng(seed)
    found = {method: [] for method in METHODS}
    for _ in range(trials):
        xs = rng.random(n, dtype=np.float32)
        exact = math.fsum(xs.astype(np.float64))
        found["naive"].append(relative_error(naive_sum(xs), exact))
        found["pairwise"].append(relative_error(pairwise_sum(xs, block), exact))
        found["numpy"].append(relative_error(np.sum(xs), exact))
    return {method: sum(errors) / trials for method, errors in found.items()}


def run(params):
    """params: sizes (ascending), trials, seed, block (pairwise_sum's base case)."""
    sizes = list(params["sizes"])
    rows = [errors_at(n, params["seed"], params["trials"], params["block"]) for n in sizes]
    for n, row in zip(sizes, rows):
        log.info("n=%d: %s", n, row)
    first, largest = rows[0], rows[-1]
    return {
        "unit_roundoff": float(np.finfo(np.float32).eps) / 2,
        "sizes": sizes,
        "errors": {method: [row[method] for row in rows] for method in METHODS},
        "largest": {"n": sizes[-1], **largest,
                    "naive_over_pairwise": largest["naive"] / largest["pairwise"]},
        # from the smallest size to the largest: how much n grew, and the naive error
        "growth": {"n": sizes[-1] / sizes[0], "naive": largest["naive"] / first["naive"]},
    }


def plot(values, params, figures):
    plt = pyplot()
    sizes, u = values["sizes"], values["unit_roundoff"]
    fig, ax = plt.subplots(layout="constrained")
    for method, style in zip(METHODS, ("o-", "s-", "^-")):
        ax.plot(sizes, values["errors"][method], style, label=f"{method} sum")
    ax.plot(sizes, [n * u for n in sizes], "k--", linewidth=1, label="n·u (naive bound)")
    ax.plot(sizes, [math.log2(n) * u for n in sizes], "k:", linewidth=1, label="log₂n·u (pairwise bound)")
    ax.set(xscale="log", yscale="log", xlabel="values summed, n", ylabel="relative error",
           title=f"float32 sums of uniform [0, 1) values, mean of {params['trials']} draws")
    ax.legend(loc="upper left", fontsize=8)
    largest = values["largest"]
    save_figure(fig, figures["error"], alt=(
        f"The relative error of each float32 sum against the number of values summed, on log scales: at "
        f"n = {largest['n']}, " + ", ".join(f"{method} {largest[method]:.2g}" for method in METHODS)))
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("summation", run, plot)
