"""A small worked example: the attention weights of a few tokens, with and
without the causal mask, and what a finite mask value does instead of -inf.
The rows' sums are checked in float64, and beside them those of PyTorch's
softmax of the same scores in bfloat16, where rounding alone moves them.

A finite value reaches the scores in one of two ways, measured apart, in
float64 and in float32: *added* (the value is added to each masked score,
as a float attn_mask is in PyTorch) or *filled* (each masked score is
replaced by the value, as masked_fill does). Both are measured on the
causal mask, where every row keeps a visible position, and on a mask that
hides every key, where the two part ways.

Inputs: one numpy.random.default_rng(seed) draws Q, then K, then V, each
(n_tokens, d_k) with standard normal entries (rng.normal), in that order.
Self-attention of a real model would project one X three ways; independent
draws keep the example about the attention step alone.
"""

import logging
import math

import numpy as np
import torch

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from experiments.attention import causal_mask, scaled_dot_product_attention, softmax

# What the experiment takes, with its defaults: the article's choices (the published
# edition's); config.yaml overrides them key by key. Read by the workflow without
# importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "n_tokens": {
        "type": "integer",
        "minimum": 2,
        "default": 5,
        "description": "tokens: Q, K and V are (n_tokens, d_k)",
    },
    "d_k": {"type": "integer", "minimum": 1, "default": 4, "description": "the width of each query, key and value"},
    "seed": {
        "type": "integer",
        "minimum": 0,
        "default": 20261012,
        "description": "one default_rng(seed) draws Q, then K, then V",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
One `default_rng(seed)` draws Q, then K, then V, each (n_tokens, d_k) standard normal.

Figure `figures/example-heatmaps.svg`: both weight matrices, values printed.
"""
RESULT_KEYS = {
    "example.weights": "attention weights without a mask, (n_tokens × n_tokens) nested list, rows = queries",
    "example.first_row": "row 0 of `example.weights` (list)",
    "example.row_sum_max_deviation": "max over rows of |Σ_j w_ij − 1| (dimensionless; float64 rounding ≈ 1e-16)",
    "example.bfloat16.row_sum_max_deviation": "the same for PyTorch's `torch.softmax` of the same scores in bfloat16, rows summed in float64 (rounding ≈ 1e-3)",
    "example.output_shape": "shape of the attention output, [n_tokens, d_k]",
    "example.causal.weights": "weights with the causal mask (-inf above the diagonal), nested list",
    "example.causal.max_masked_weight": "largest weight at a masked (future) position; 0.0 exactly with -inf",
    "example.causal.visible_per_row": "per query row, number of weights > 0 (list of ints; row i sees i+1)",
    "example.causal.row_sum_max_deviation": "max |row sum − 1| of the causal weights",
    "example.minus_1e9.{how}.{dtype}.max_masked_weight": "causal mask with -1e9 instead of -inf: the largest weight at a masked position. how: `added` (-1e9 added to each masked score, as a float attn_mask is) or `filled` (each masked score replaced by -1e9, as masked_fill does); dtype: `float64` or `float32`, the whole computation in it",
    "example.minus_1e9.{how}.{dtype}.max_abs_diff_vs_inf": "max |diff| between those weights and the -inf causal weights computed in the same dtype",
    "example.minus_1e9.{how}.{dtype}.full_row.max_abs_diff_vs_uniform": "every key masked with -1e9: max |w − 1/n_tokens| (0: each row a uniform average)",
    "example.minus_1e9.{how}.{dtype}.full_row.max_abs_diff_vs_unmasked": "every key masked with -1e9: max |diff| from the weights without a mask, same dtype (near 0: the mask did nothing)",
    "example.minus_1e9.spacing.{dtype}": "the gap between neighbouring numbers of that dtype at -1e9 (`np.spacing`); an added score smaller than half of it is rounded away",
    "example.minus_1e9.in_float16": "-1e9 converted to float16: -inf, past float16's largest magnitude",
    "example.minus_inf.full_row_nan": "every key masked with -inf: whether every weight is NaN (-inf − -inf)",
    "example.fill_zero.max_masked_weight": "largest weight at a masked position when the masked scores are *filled* with 0 instead of -inf (0 is an ordinary score)",
}

log = logging.getLogger("experiment")

# footprint()'s rates: memory as measured (peak RSS at n_tokens = 1000 and
# 2000, the figure's at 20 to 80), time a lower bound well below it.
CELL_BYTES, CELL_S = 350, 1e-6  # per (T, T) cell: its arrays, two lists of Python floats, their JSON
LABEL_BYTES, LABEL_S = 10_000, 2e-4  # per weight printed in a heatmap (a matplotlib Text), two per cell


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint): the (T, T)
    weights dominate, held as arrays and lists, written as JSON, and printed
    cell by cell in both heatmaps."""
    T = p["n_tokens"]
    return {
        "bytes": {"n_tokens": T * T * (CELL_BYTES + 2 * LABEL_BYTES), "d_k": 4 * T * p["d_k"] * 8},
        "seconds": {"n_tokens": T * T * (CELL_S + 2 * LABEL_S)},
    }


def draw_qkv(n_tokens, d_k, seed):
    """Q, K, V: (n_tokens, d_k) each, drawn in that order from one generator."""
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(n_tokens, d_k)) for _ in "QKV")


# The finite stand-in for -inf that the experiment measures, a common habit.
LARGE_NEGATIVE = -1e9
DTYPES = (np.float64, np.float32)


def finite_mask_weights(Q, K, mask, value, how):
    """Weights (Tq, Tk) when the masked scores get a finite `value` instead of
    -inf, computed in the dtype of Q and K. how="added": value is added to
    the masked scores (0 elsewhere); how="filled": they are replaced by it."""
    scores = Q @ K.T / math.sqrt(Q.shape[-1])  # (Tq, Tk), as in scaled_dot_product_attention
    value, zero = scores.dtype.type(value), scores.dtype.type(0)
    if how == "added":
        scores = scores + np.where(mask, value, zero)
    else:
        scores = np.where(mask, value, scores)
    return softmax(scores, axis=-1)


def large_negative_mask(Q, K, V, mask):
    """-1e9 added and filled, in float64 and float32, against -inf. On `mask`
    (every row keeps a visible key): the largest masked weight and the
    largest difference from the -inf weights. On a mask hiding every key:
    how far the rows are from a uniform average and from the unmasked softmax."""
    hide_all = np.ones(mask.shape, dtype=bool)
    measured = {}
    for how in ("added", "filled"):
        for dtype in DTYPES:
            q, k, v = (x.astype(dtype) for x in (Q, K, V))
            w = finite_mask_weights(q, k, mask, LARGE_NEGATIVE, how)
            w_inf = scaled_dot_product_attention(q, k, v, mask=mask)[1]
            w_unmasked = scaled_dot_product_attention(q, k, v)[1]
            w_hidden = finite_mask_weights(q, k, hide_all, LARGE_NEGATIVE, how)
            uniform = np.full_like(w_hidden, dtype(1) / dtype(len(k)))
            measured.setdefault(how, {})[dtype.__name__] = {
                "max_masked_weight": float(w[mask].max()),
                "max_abs_diff_vs_inf": float(np.max(np.abs(w - w_inf))),
                "full_row": {
                    "max_abs_diff_vs_uniform": float(np.max(np.abs(w_hidden - uniform))),
                    "max_abs_diff_vs_unmasked": float(np.max(np.abs(w_hidden - w_unmasked))),
                },
            }
    # The gap between neighbouring numbers near -1e9: an added score smaller
    # than half of it is rounded away, so the scores' differences are lost.
    measured["spacing"] = {dtype.__name__: float(abs(np.spacing(dtype(LARGE_NEGATIVE)))) for dtype in DTYPES}
    with np.errstate(over="ignore"):
        measured["in_float16"] = float(np.float16(LARGE_NEGATIVE))  # past float16's largest: -inf
    return measured


def all_nan_when_hidden(Q, K, V):
    """Whether -inf on every key gives nan weights everywhere (-inf - -inf)."""
    with np.errstate(invalid="ignore"):
        _, w = scaled_dot_product_attention(Q, K, V, mask=np.ones((len(Q), len(K)), dtype=bool))
    return bool(np.isnan(w).all())


def row_sum_deviation(weights):
    """max |sum_j w_ij - 1| over rows: the softmax's normalisation error."""
    return float(np.max(np.abs(weights.sum(axis=-1) - 1.0)))


def bfloat16_row_sum_deviation(Q, K):
    """The same scores through PyTorch's softmax in bfloat16: how far its rows
    are from summing to one (summed in float64), from rounding alone."""
    scores = torch.from_numpy(Q @ K.T / math.sqrt(Q.shape[-1])).to(torch.bfloat16)  # (T, T)
    return row_sum_deviation(torch.softmax(scores, dim=-1).double().numpy())


def run(params):
    """params: n_tokens (T), d_k, seed. Weights are (T, T) nested lists."""
    Q, K, V = draw_qkv(params["n_tokens"], params["d_k"], params["seed"])
    out, w = scaled_dot_product_attention(Q, K, V)  # (T, d_k), (T, T)
    mask = causal_mask(len(Q))  # (T, T), True = masked
    _, w_causal = scaled_dot_product_attention(Q, K, V, mask=mask)
    log.info("first row %s", w[0])

    # Zero as the mask value: an ordinary score, so masked keys keep a share.
    w_zero = finite_mask_weights(Q, K, mask, 0.0, "filled")

    return {
        "weights": w.tolist(),
        "first_row": w[0].tolist(),
        "row_sum_max_deviation": row_sum_deviation(w),
        "bfloat16": {"row_sum_max_deviation": bfloat16_row_sum_deviation(Q, K)},
        "output_shape": list(out.shape),
        "causal": {
            "weights": w_causal.tolist(),
            "max_masked_weight": float(w_causal[mask].max()),
            "visible_per_row": [int(n) for n in (w_causal > 0).sum(axis=-1)],
            "row_sum_max_deviation": row_sum_deviation(w_causal),
        },
        "minus_1e9": large_negative_mask(Q, K, V, mask),
        "minus_inf": {"full_row_nan": all_nan_when_hidden(Q, K, V)},
        "fill_zero": {"max_masked_weight": float(w_zero[mask].max())},
    }


def plot(values, params, figures):
    plt = pyplot()
    T = params["n_tokens"]
    panels = (("No mask", values["weights"]), ("Causal mask", values["causal"]["weights"]))
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), layout="constrained")
    for ax, (title, weights) in zip(axes, panels):
        w = np.asarray(weights)
        image = ax.imshow(w, cmap="Blues", vmin=0, vmax=1)
        for i in range(T):
            for j in range(T):
                # Dark cells get white text so every number stays legible.
                color = "white" if w[i, j] > 0.6 else "black"
                ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=8, color=color)
        ax.set(title=title, xlabel="key position j", ylabel="query position i", xticks=range(T), yticks=range(T))
        ax.grid(False)
    fig.colorbar(image, ax=axes, shrink=0.8, label="weight")
    top = np.asarray(values["weights"]).max()
    save_figure(
        fig,
        figures["heatmaps"],
        alt=(
            f"Heatmaps of the example's {T} × {T} attention weights, without a mask and with the causal mask: "
            f"unmasked, the largest weight is {top:.2f}; masked, every weight above the diagonal is "
            f"{values['causal']['max_masked_weight']:.2g}, and query i sees i + 1 keys"
        ),
    )
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("example", run, plot)
