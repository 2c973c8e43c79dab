"""Why divide by sqrt(d_k): the softmax collapses without it.

For q and k with independent N(0, 1) components, q.k has variance d_k, so
the raw scores spread out as d_k grows and the softmax turns nearly one-hot.
Dividing by sqrt(d_k) brings the variance back to 1.

The procedure is the published one, step for step, so that the table
reproduces to every printed digit: for each d_k a fresh
numpy.random.default_rng(seed) draws q ~ N(0, 1)^(d_k) first, then
K ~ N(0, 1)^(n_keys x d_k); scores are K @ q, with and without / sqrt(d_k).

The gradient the paper speaks of is measured through the softmax: for each
key other than the top one, the norm of d weights / d (its score).
"""

import logging

import numpy as np

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from experiments.attention import softmax

# What the experiment takes, with its defaults: the article's choices (the published
# edition's); config.yaml overrides them key by key. Read by the workflow without
# importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "d_k": {
        "type": "array",
        "items": {"type": "integer", "minimum": 1},
        "minItems": 1,
        "default": [16, 64, 512],
        "description": "the key widths of the published table's rows",
    },
    "n_keys": {
        "type": "integer",
        "minimum": 2,
        "default": 2000,
        "description": "random keys each query is held against",
    },
    "seed": {
        "type": "integer",
        "minimum": 0,
        "default": 7,
        "description": "a fresh default_rng(seed) per d_k, as published",
    },
    "sweep_d_k": {
        "type": "array",
        "items": {"type": "integer", "minimum": 1},
        "minItems": 1,
        "default": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
        "description": "the key widths of the sweep's figure",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
One query against `n_keys` random keys of width `{d}`, a fresh
`default_rng(seed)` per width, q drawn before K (the published procedure).
"Effective terms" is 1 / Σ w_i²: `n_keys` for uniform weights, 1 for one-hot.

Figure `figures/scaling-sweep.svg`: the four sweep lists against d_k.
"""
RESULT_KEYS = {
    "scaling.dk{d}.dot_std": "standard deviation of the n_keys raw dot products q·k (≈ √d); d in `d_k`",
    "scaling.dk{d}.unscaled.max_weight": "largest softmax weight of the raw scores q·k (0..1)",
    "scaling.dk{d}.unscaled.effective_terms": "1 / Σ w² of the raw scores' softmax (keys, 1..n_keys)",
    "scaling.dk{d}.scaled.max_weight": "largest softmax weight of q·k / √d (0..1)",
    "scaling.dk{d}.scaled.effective_terms": "1 / Σ w² of the scaled scores' softmax (keys, 1..n_keys)",
    "scaling.dk{d}.{case}.other_keys_gradient_median": "over every key but the top one, the median of |∂w/∂s_j| (column j of the softmax's Jacobian diag(w) − wwᵀ, s the scores the softmax gets); case unscaled or scaled",
    "scaling.dk{d}.{case}.other_keys_gradient_max": "the largest of those: the runner-up keys'",
    "scaling.sweep.d_k": "the swept widths (list, = params `sweep_d_k`)",
    "scaling.sweep.dot_std": "dot-product standard deviation at each swept width (list)",
    "scaling.sweep.unscaled.max_weight": "largest weight, raw scores, per swept width (list)",
    "scaling.sweep.unscaled.effective_terms": "1 / Σ w², raw scores, per swept width (list)",
    "scaling.sweep.scaled.max_weight": "largest weight, scaled scores, per swept width (list)",
    "scaling.sweep.scaled.effective_terms": "1 / Σ w², scaled scores, per swept width (list)",
}

log = logging.getLogger("experiment")

DRAWS_PER_S = 1e9  # normal draws a second, faster than any one core: footprint()'s time is a lower bound


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint): the widest K,
    (n_keys, d_k) float64, and a dozen (n_keys,) vectors beside it (the
    scores, the weights, and the gradients' temporaries); time, every K
    drawn, once per d_k of the table and of the sweep."""
    widest = max(*p["d_k"], *p["sweep_d_k"])
    wide_key = "d_k" if widest in p["d_k"] else "sweep_d_k"
    draws = p["n_keys"] * (sum(p["d_k"]) + sum(p["sweep_d_k"]))
    return {
        "bytes": {("n_keys", wide_key): 8 * p["n_keys"] * (widest + 12)},
        "seconds": {("n_keys", "sweep_d_k"): draws / DRAWS_PER_S},
    }


def key_gradients(w):
    """How much the weights move when one key's score moves: for each key j,
    the norm of d w / d s_j, column j of the softmax's Jacobian
    diag(w) - w w^T, which is w_j * |e_j - w|. (n_keys,)"""
    return w * np.sqrt(1.0 - 2.0 * w + np.sum(w**2))


def collapse(d_k, n_keys, seed):
    """Softmax shape of one query against n_keys random keys of width d_k.

    "Effective terms" is 1 / sum(w_i^2): n for uniform weights, 1 for one-hot,
    i.e. roughly how many keys the query actually attends to.
    """
    rng = np.random.default_rng(seed)  # fresh per d_k, as published
    q = rng.normal(size=(d_k,))  # (d_k,)
    K = rng.normal(size=(n_keys, d_k))  # (n_keys, d_k)
    dots = K @ q  # (n_keys,)
    result = {"dot_std": float(dots.std())}
    for name, scores in (("unscaled", dots), ("scaled", dots / np.sqrt(d_k))):
        w = softmax(scores)  # (n_keys,)
        others = np.delete(key_gradients(w), np.argmax(w))  # every key but the top one
        result[name] = {
            "max_weight": float(w.max()),
            "effective_terms": float(1.0 / np.sum(w**2)),
            "other_keys_gradient_median": float(np.median(others)),
            "other_keys_gradient_max": float(others.max()),
        }
    return result


def run(params):
    """params: d_k (table rows), n_keys, seed, sweep_d_k (figure's x values)."""
    n_keys, seed = params["n_keys"], params["seed"]
    values = {}
    for d_k in params["d_k"]:
        values[f"dk{d_k}"] = collapse(d_k, n_keys, seed)
        log.info("d_k=%d: %s", d_k, values[f"dk{d_k}"])

    rows = [collapse(d_k, n_keys, seed) for d_k in params["sweep_d_k"]]
    values["sweep"] = {"d_k": list(params["sweep_d_k"]), "dot_std": [r["dot_std"] for r in rows]}
    for name in ("unscaled", "scaled"):
        values["sweep"][name] = {
            metric: [r[name][metric] for r in rows] for metric in ("max_weight", "effective_terms")
        }
    return values


def plot(values, params, figures):
    plt = pyplot()
    sweep = values["sweep"]
    fig, (ax_max, ax_eff) = plt.subplots(1, 2, figsize=(8, 3.4), layout="constrained")
    for name, style in (("unscaled", "o-"), ("scaled", "s-")):
        # Unicode root, not mathtext's \sqrt: its bar renders unevenly as SVG text.
        label = "q·k (unscaled)" if name == "unscaled" else "q·k / √d$_k$ (scaled)"
        ax_max.plot(sweep["d_k"], sweep[name]["max_weight"], style, label=label)
        ax_eff.plot(sweep["d_k"], sweep[name]["effective_terms"], style, label=label)
    ax_max.set(xscale="log", ylim=(0, 1.02), xlabel="$d_k$", ylabel="largest weight", title="Largest softmax weight")
    ax_eff.set(
        xscale="log",
        yscale="log",
        xlabel="$d_k$",
        ylabel=r"1 / $\sum w_i^2$",
        title=f"Effective number of keys (of {params['n_keys']})",
    )
    for ax in (ax_max, ax_eff):
        # Label every swept d_k rather than only the decades.
        ax.set_xticks(sweep["d_k"], [str(d) for d in sweep["d_k"]])
        ax.xaxis.set_minor_locator(plt.NullLocator())
        ax.tick_params(axis="x", labelrotation=45)
    ax_max.legend(loc="center right")
    widest = sweep["d_k"][-1]
    top = {name: (sweep[name]["max_weight"][-1], sweep[name]["effective_terms"][-1]) for name in ("unscaled", "scaled")}
    save_figure(
        fig,
        figures["sweep"],
        alt=(
            f"The largest softmax weight and the effective number of keys against d_k, with and without scaling: "
            f"at d_k = {widest}, unscaled attention gives its top key {top['unscaled'][0]:.2f} of the weight "
            f"(an effective {top['unscaled'][1]:.3g} of {params['n_keys']} keys), scaled attention "
            f"{top['scaled'][0]:.2f} (an effective {top['scaled'][1]:.3g})"
        ),
    )
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("scaling", run, plot)
