"""A small worked example: the attention weights of a few tokens, with and
without the causal mask, and what a finite mask value does instead of -inf.

Inputs: one numpy.random.default_rng(seed) draws Q, then K, then V, each
(n_tokens, d_k) with standard normal entries (rng.normal), in that order.
Self-attention of a real model would project one X three ways; independent
draws keep the example about the attention step alone.
"""

import logging

import numpy as np

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from experiments.attention import causal_mask, scaled_dot_product_attention, softmax

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
    return {"bytes": {"n_tokens": T * T * (CELL_BYTES + 2 * LABEL_BYTES), "d_k": 4 * T * p["d_k"] * 8},
            "seconds": {"n_tokens": T * T * (CELL_S + 2 * LABEL_S)}}


def draw_qkv(n_tokens, d_k, seed):
    """Q, K, V: (n_tokens, d_k) each, drawn in that order from one generator."""
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(n_tokens, d_k)) for _ in "QKV")


def additive_mask_weights(Q, K, mask, fill, dtype):
    """Weights when the mask is a float added to the scores (fill where masked,
    0 elsewhere), the way a float attn_mask works, computed in `dtype`."""
    Q, K = Q.astype(dtype), K.astype(dtype)
    scores = Q @ K.T / dtype(np.sqrt(Q.shape[-1]))  # (T, T)
    scores = scores + np.where(mask, dtype(fill), dtype(0))
    return softmax(scores, axis=-1)


def row_sum_deviation(weights):
    """max |sum_j w_ij - 1| over rows: the softmax's normalisation error."""
    return float(np.max(np.abs(weights.sum(axis=-1) - 1.0)))


def run(params):
    """params: n_tokens (T), d_k, seed. Weights are (T, T) nested lists."""
    Q, K, V = draw_qkv(params["n_tokens"], params["d_k"], params["seed"])
    out, w = scaled_dot_product_attention(Q, K, V)  # (T, d_k), (T, T)
    mask = causal_mask(len(Q))  # (T, T), True = masked
    _, w_causal = scaled_dot_product_attention(Q, K, V, mask=mask)
    log.info("first row %s", w[0])

    # The same mask as a finite additive value: does exp(-1e9) reach 0 exactly?
    w_fill = {dt: additive_mask_weights(Q, K, mask, -1e9, dt) for dt in (np.float64, np.float32)}
    fill = {f"max_masked_weight_{dt.__name__}": float(wf[mask].max()) for dt, wf in w_fill.items()}
    fill["max_abs_diff_vs_inf"] = float(np.max(np.abs(w_fill[np.float64] - w_causal)))
    # A mask value of 0 masks nothing: the "masked" positions keep their weight.
    w_zero = additive_mask_weights(Q, K, mask, 0.0, np.float64)

    return {
        "weights": w.tolist(),
        "first_row": w[0].tolist(),
        "row_sum_max_deviation": row_sum_deviation(w),
        "output_shape": list(out.shape),
        "causal": {
            "weights": w_causal.tolist(),
            "max_masked_weight": float(w_causal[mask].max()),
            "visible_per_row": [int(n) for n in (w_causal > 0).sum(axis=-1)],
            "row_sum_max_deviation": row_sum_deviation(w_causal),
        },
        "fill_minus_1e9": fill,
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
        ax.set(title=title, xlabel="key position j", ylabel="query position i",
               xticks=range(T), yticks=range(T))
        ax.grid(False)
    fig.colorbar(image, ax=axes, shrink=0.8, label="weight")
    save_figure(fig, figures["heatmaps"])
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("example", run, plot)
