"""The harmonic numbers H(n) = 1 + 1/2 + ... + 1/n against their classic
approximation ln(n) + gamma, Euler's constant: the gap shrinks like 1/(2n).
And a measured value: how many times longer the sum takes than the formula,
timed by articlekit.experiment.measure (interleaved rounds at one thread, a
95 % interval), so that a claim about it is judged on the whole interval.

Replace this with your own experiment: PARAMETERS declares what run()
takes (each parameter's JSON Schema, default and meaning; config.yaml's
section harmonic: overrides a default, holding only what differs),
run(params) returns a dict of values (each becomes a key the article can
bind, e.g. harmonic.value, and RESULT_KEYS says what each means), plot
draws the figures config.yaml names (experiments.harmonic.figures).
"""

import math

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from articlekit.experiment.measure import compare

# What the experiment takes, with its defaults. config.yaml overrides them key by
# key (a section harmonic: holding only what differs); a value out of its range
# stops the build at its line, before any job. Read by the workflow without
# importing this module, so it is written as a literal (articlekit.experiment.declared).
PARAMETERS = {
    "n": {"type": "integer", "minimum": 1, "default": 1000, "description": "how many terms"},
    "plot_every": {
        "type": "integer",
        "minimum": 1,
        "x-at-most": "n",  # not JSON Schema: articlekit checks it, naming both keys
        "default": 10,
        "description": "the figure's spacing between points, and the figure needs one point",
    },
    "rounds": {
        "type": "integer",
        "minimum": 6,
        "default": 9,
        "description": "interleaved timing rounds; fewer than 6 give no 95 % interval",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS = {
    "harmonic.value": "H(n), the n-th harmonic number",
    "harmonic.approximation": "ln(n) + γ, its classic approximation",
    "harmonic.gap": "H(n) − ln(n) − γ",
    "harmonic.gap_times_2n": "the gap times 2n: near 1, as the gap shrinks like 1/(2n)",
    "harmonic.speedup.{part}": "how many times longer the sum takes than the formula, measured; part estimate, "
    "low or high (its 95 % interval), coverage, or ratios (one per round)",
    "harmonic.curve.n": "the n of the figure's points: plot_every, 2 plot_every, ... up to n (list)",
    "harmonic.curve.gap": "the gap at each of them (list)",
}

EULER_GAMMA = 0.5772156649015329


def harmonic_number(n):
    """1 + 1/2 + ... + 1/n, rounded once (math.fsum), not once per term."""
    return math.fsum(1 / k for k in range(n, 0, -1))


def run(params):
    """params: n (terms), plot_every (spacing of the figure's points),
    rounds (of the timing: at least 6 for a 95 % interval)."""
    n = params["n"]
    value = harmonic_number(n)
    approximation = math.log(n) + EULER_GAMMA
    points = list(range(params["plot_every"], n + 1, params["plot_every"]))
    timed = compare({"sum": lambda: harmonic_number(n), "formula": lambda: math.log(n) + EULER_GAMMA},
                    baseline="sum", rounds=params["rounds"])
    return {
        "value": value,
        "approximation": approximation,
        "gap": value - approximation,
        "gap_times_2n": (value - approximation) * 2 * n,
        # sum time / formula time, {estimate, low, high, ...}: a measured value
        "speedup": timed["ratios"]["formula"],
        "curve": {"n": points, "gap": [harmonic_number(k) - math.log(k) - EULER_GAMMA for k in points]},
    }


def plot(values, params, figures):
    plt = pyplot()
    fig, ax = plt.subplots(layout="constrained")
    curve = values["curve"]
    ax.plot(curve["n"], curve["gap"], label="H(n) - ln n - γ")
    ax.plot(curve["n"], [1 / (2 * k) for k in curve["n"]], "--", label="1 / 2n")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="gap")
    ax.legend()
    # the alt text: what the figure shows and its headline number, from the data
    save_figure(fig, figures["partial_sums"], alt=(
        f"The gap H(n) - ln n - γ against n beside 1 / 2n, on log scales: at n = {curve['n'][-1]} it is "
        f"{curve['gap'][-1]:.3g}, and 1 / 2n is {1 / (2 * curve['n'][-1]):.3g}"))
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("harmonic", run, plot)
