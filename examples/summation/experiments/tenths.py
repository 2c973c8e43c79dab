"""The smallest case: ten tenths. 0.1 has no exact binary form, and the
rounding of each partial sum adds up to a visible miss; math.fsum keeps
the lost low-order bits and rounds once."""

import math

from articlekit.experiment.artifacts import run_experiment

# What the experiment takes, with its defaults: the article's choices. config.yaml
# overrides them key by key (a section tenths: holding only what differs).
# Read by the workflow without importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "term": {"type": "number", "default": 0.1, "description": "the decimal fraction added"},
    "count": {"type": "integer", "minimum": 1, "default": 10, "description": "how many terms are added"},
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS = {
    "tenths.count": "how many terms were added (= params `count`)",
    "tenths.naive": "their sum, left to right in float64",
    "tenths.fsum": "their sum by math.fsum, rounded once",
    "tenths.naive_is_whole": "whether the left-to-right sum is a whole number (true/false)",
    "tenths.fsum_is_whole": "whether math.fsum's sum is a whole number (true/false)",
}


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
