"""The harmonic numbers H(n) = 1 + 1/2 + ... + 1/n against their classic
approximation ln(n) + gamma, Euler's constant: the gap shrinks like 1/(2n).
And a measured value: how many times longer the sum takes than the formula,
timed by articlekit.experiment.measure (interleaved rounds at one thread, a
95 % interval), so that a claim about it is judged on the whole interval.

Replace this with your own experiment: run(params) returns a dict of
values (each becomes a key the article can bind, e.g. harmonic.value),
plot draws the figures config.yaml names.
"""

import math

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from articlekit.experiment.measure import compare

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
