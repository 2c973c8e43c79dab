"""The smallest case: ten tenths. 0.1 has no exact binary form, and the
rounding of each partial sum adds up to a visible miss; math.fsum keeps
the lost low-order bits and rounds once."""

import math

from articlekit.experiment.artifacts import run_experiment


def run(params):
    """params: term (a decimal fraction) and count (how many to add)."""
    terms = [params["term"]] * params["count"]
    running = 0.0
    for term in terms:
        running += term
    exact = math.fsum(terms)
    return {
        "count": params["count"],
        "naive": running,
        "fsum": exact,
        "naive_is_whole": running == round(running),
        "fsum_is_whole": exact == round(exact),
    }


if __name__ == "__main__":
    run_experiment("tenths", run)
