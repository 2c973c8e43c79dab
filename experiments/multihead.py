"""Multi-head attention is split, attend separately, concatenate, project.

Checks the claim that reshape(T, h, dh) hands head i exactly the columns
i*dh .. (i+1)*dh - 1 of the full projections: running plain single-head
attention on those columns must reproduce head i.

Inputs: one numpy.random.default_rng(seed) draws X (n_tokens, d_model) with
standard normal entries, then W_q, W_k, W_v, W_o in that order, each
(d_model, d_model) standard normal divided by sqrt(d_model) (so that the
projections keep unit scale, as a usual initialisation would).
"""

import logging

import numpy as np

from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from experiments.attention import multi_head_attention, scaled_dot_product_attention

# What the experiment takes, with its defaults: the article's choices (the published
# edition's); config.yaml overrides them key by key. Read by the workflow without
# importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "n_tokens": {"type": "integer", "minimum": 2, "default": 5, "description": "tokens: X is (n_tokens, d_model)"},
    "d_model": {"type": "integer", "minimum": 1, "default": 16, "description": "the model's width"},
    "heads": {
        "type": "integer",
        "minimum": 1,
        "x-divides": "d_model",
        "default": 4,
        "description": "attention heads, each of d_model / heads columns",
    },
    "seed": {
        "type": "integer",
        "minimum": 0,
        "default": 20261012,
        "description": "one default_rng(seed) draws X, then the four weights",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
One `default_rng(seed)` draws X (n_tokens, d_model) standard normal, then
W_q, W_k, W_v, W_o, each (d_model, d_model) standard normal / √d_model.

Figure `figures/multihead-heads.svg`: one heatmap per head.
"""
RESULT_KEYS = {
    "multihead.output_shape": "shape of the multi-head output, [n_tokens, d_model]",
    "multihead.weights_shape": "shape of the weights, [heads, n_tokens, n_tokens]: one table per head",
    "multihead.d_head": "columns per head, d_model // heads",
    "multihead.head_columns_check": "true when every head equals single-head attention on its columns i·d_head..(i+1)·d_head−1 of XW_q, XW_k, XW_v (np.allclose, outputs and weights)",
    "multihead.head_columns_max_abs_diff": "max |diff| of that comparison over all heads",
    "multihead.weights": "the per-head weights, (heads × n_tokens × n_tokens) nested list (the figure's data)",
    "multihead.causal.weights_shape": "shape of the weights with the causal mask",
}

log = logging.getLogger("experiment")

# footprint()'s rates: memory as measured (peak RSS), time a lower bound well below it.
CELL_BYTES, CELL_S = 200, 1e-6  # per weight of the (h, T, T) stack: its arrays, its list, its JSON
TICK_BYTES, TICK_S = 15_000, 2e-4  # per tick of a heatmap: every position is labelled, on both axes
PANEL_BYTES, PANEL_S = 1_000_000, 0.05  # per head's heatmap


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint): the (h, T, T)
    weights, the four (d_model, d_model) projections and their copies, and
    one heatmap per head with a tick per position."""
    h, T = p["heads"], p["n_tokens"]
    return {
        "bytes": {
            ("heads", "n_tokens"): h * T * (T * CELL_BYTES + 2 * TICK_BYTES),
            "d_model": 6 * p["d_model"] ** 2 * 8,
            "heads": h * PANEL_BYTES,
        },
        "seconds": {("heads", "n_tokens"): h * T * (T * CELL_S + 2 * TICK_S), "heads": h * PANEL_S},
    }


def draw_inputs(n_tokens, d_model, seed):
    """X: (n_tokens, d_model); W_q, W_k, W_v, W_o: (d_model, d_model)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_tokens, d_model))
    weights = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return X, *weights


def run(params):
    """params: n_tokens (T), d_model, heads (h), seed."""
    T, d_model, h = params["n_tokens"], params["d_model"], params["heads"]
    X, W_q, W_k, W_v, W_o = draw_inputs(T, d_model, params["seed"])
    dh = d_model // h

    out, w = multi_head_attention(X, X, W_q, W_k, W_v, W_o, h)  # (T, d_model), (h, T, T)
    _, w_causal = multi_head_attention(X, X, W_q, W_k, W_v, W_o, h, causal=True)

    # With W_o = I the output is the concatenation of the heads, so head i's
    # output is columns i*dh..(i+1)*dh-1 of it.
    concat, _ = multi_head_attention(X, X, W_q, W_k, W_v, np.eye(d_model), h)  # (T, d_model)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, d_model) each
    matches, diffs = [], []
    for i in range(h):
        cols = slice(i * dh, (i + 1) * dh)
        head_out, head_w = scaled_dot_product_attention(Q[:, cols], K[:, cols], V[:, cols])
        matches.append(np.allclose(head_out, concat[:, cols]) and np.allclose(head_w, w[i]))
        diffs += [np.max(np.abs(head_out - concat[:, cols])), np.max(np.abs(head_w - w[i]))]
    max_diff = float(max(diffs))
    log.info("head i == single-head on its columns: %s, max |diff| = %r", matches, max_diff)

    return {
        "output_shape": list(out.shape),
        "weights_shape": list(w.shape),
        "d_head": dh,
        "head_columns_check": bool(all(matches)),
        "head_columns_max_abs_diff": max_diff,
        "weights": w.tolist(),
        "causal": {"weights_shape": list(w_causal.shape)},
    }


def plot(values, params, figures):
    """One heatmap per head, two per row, each cell labelled with its weight:
    drawn at the article's column width (about 7 inches), the text stays
    as large as the prose (four heads in one row came out too small to read)."""
    plt = pyplot()
    w = np.asarray(values["weights"])  # (h, T, T)
    h, T, _ = w.shape
    cols = min(h, 2)
    rows = -(-h // cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(3.4 * cols + 0.8, 3.2 * rows),
        layout="constrained",
        squeeze=False,
        sharex=True,
        sharey=True,
    )
    for i, ax in enumerate(axes.flat):
        if i >= h:
            ax.set_visible(False)
            continue
        image = ax.imshow(w[i], cmap="Blues", vmin=0, vmax=1)
        if T <= 8:  # past that the labels would overlap
            for q in range(T):
                for k in range(T):
                    # Dark cells get white text so every number stays legible.
                    color = "white" if w[i, q, k] > 0.6 else "black"
                    ax.text(k, q, f"{w[i, q, k]:.2f}", ha="center", va="center", fontsize=8, color=color)
        ax.set(title=f"head {i}", xticks=range(T), yticks=range(T))
        ax.grid(False)
    for ax in axes[-1]:
        ax.set_xlabel("key position j")
    for ax in axes[:, 0]:
        ax.set_ylabel("query position i")
    fig.colorbar(image, ax=axes, shrink=0.8, label="weight")
    tops = ", ".join(f"head {i} {w[i].max():.2f}" for i in range(h))
    save_figure(
        fig,
        figures["heads"],
        alt=(
            f"Heatmaps of the attention weights of each of the {h} heads, {T} queries by {T} keys, every cell labelled "
            f"with its weight; the largest weight of each head: {tops}"
        ),
    )
    plt.close(fig)


if __name__ == "__main__":
    run_experiment("multihead", run, plot)
