"""The from-scratch NumPy attention against PyTorch's, on identical inputs.

Compares experiments.attention with torch.nn.functional.scaled_dot_product_attention
(per head, batched over heads) and with nn.MultiheadAttention loaded with the
same projection matrices: self-attention, causal, and cross-attention
(queries from one sequence, keys and values from another), in float64 and
again with both sides in float32.

Inputs: one numpy.random.default_rng(seed) draws X (n_tokens, d_model), then
the memory M (n_memory, d_model), both standard normal, then W_q, W_k, W_v,
W_o, each (d_model, d_model) standard normal divided by sqrt(d_model).
"""

import logging

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment.artifacts import run_experiment
from articlekit.experiment.footprint import FLOPS
from experiments.attention import causal_mask, multi_head_attention, scaled_dot_product_attention, split_heads

log = logging.getLogger("experiment")

# footprint()'s memory, as measured (peak RSS at sizes where each term dominates):
CELL_BYTES = 100  # per weight of an (h, Tq, Tk) stack: a dozen float64 copies, ours and PyTorch's
WEIGHT_BYTES = 160  # per entry of a (d_model, d_model) projection: both precisions, ours and the module's


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint): the attention
    weights of the widest case and the four projections; time, the flops of
    twelve runs (three cases, two precisions, ours and PyTorch's), each
    projecting both sequences and attending."""
    T, M, d, h = p["n_tokens"], p["n_memory"], p["d_model"], p["heads"]
    flops = 12 * (8 * (T + M) * d * d + 4 * T * max(T, M) * d)
    return {"bytes": {("n_tokens", "n_memory", "heads"): h * T * max(T, M) * CELL_BYTES,
                      "d_model": d * d * WEIGHT_BYTES},
            "seconds": {("n_tokens", "n_memory", "d_model"): flops / FLOPS}}


def draw_inputs(n_tokens, n_memory, d_model, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_tokens, d_model))
    M = rng.normal(size=(n_memory, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return X, M, W


def max_abs_diff(a, b):
    """max |a - b| in float64, whichever library and dtype each side is in."""
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def torch_mha(W, h, dtype):
    """nn.MultiheadAttention holding our W_q, W_k, W_v, W_o.

    Its Linear layers compute x @ weight.T, so each (d_model, d_model) matrix
    that we apply as x @ W goes in transposed; in_proj_weight stacks the
    three input projections row-wise, q first.
    """
    W_q, W_k, W_v, W_o = (torch.from_numpy(w.T.copy()).to(dtype) for w in W)
    mha = torch.nn.MultiheadAttention(W_q.shape[0], h, bias=False, batch_first=True, dtype=dtype)
    mha.in_proj_weight.copy_(torch.cat([W_q, W_k, W_v]))  # (3 d_model, d_model)
    mha.out_proj.weight.copy_(W_o)
    return mha.eval()


def compare(X, M, W, h, np_dtype, torch_dtype):
    """All comparisons at one precision. X: (Tq, d_model), M: (Tk, d_model)."""
    X, M = X.astype(np_dtype), M.astype(np_dtype)
    W = [w.astype(np_dtype) for w in W]
    W_q, W_k, W_v, W_o = W
    mha = torch_mha(W, h, torch_dtype)
    t = torch.from_numpy  # shares memory with the NumPy inputs, which nothing writes
    result = {}

    for case, X_kv in (("self", X), ("causal", X), ("cross", M)):
        causal = case == "causal"
        # Single head per slice: (h, T, dh) batches, the heads as batch axis.
        Q, K, V = split_heads(X @ W_q, h), split_heads(X_kv @ W_k, h), split_heads(X_kv @ W_v, h)
        mask = causal_mask(len(X)) if causal else None
        ours, _ = scaled_dot_product_attention(Q, K, V, mask=mask)  # (h, Tq, dh)
        theirs = F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=causal)

        out, w = multi_head_attention(X, X_kv, W_q, W_k, W_v, W_o, h, causal=causal)  # (Tq, d), (h, Tq, Tk)
        # nn.MultiheadAttention's bool attn_mask shares our convention: True = blocked.
        attn_mask = t(causal_mask(len(X))) if causal else None
        t_out, t_w = mha(t(X)[None], t(X_kv)[None], t(X_kv)[None], attn_mask=attn_mask,
                         need_weights=True, average_attn_weights=False)  # (1, Tq, d), (1, h, Tq, Tk)
        result[case] = {
            "sdpa": max_abs_diff(ours, theirs),
            "mha": max_abs_diff(out, t_out[0]),
            "mha_weights": max_abs_diff(w, t_w[0]),
            "mha_output": out,
        }
    return result


def run(params):
    """params: n_tokens, n_memory, d_model, heads, seed."""
    X, M, W = draw_inputs(params["n_tokens"], params["n_memory"], params["d_model"], params["seed"])
    h = params["heads"]
    with torch.no_grad():
        f64 = compare(X, M, W, h, np.float64, torch.float64)
        f32 = compare(X, M, W, h, np.float32, torch.float32)
    for name, r in (("float64", f64), ("float32", f32)):
        log.info("%s: %s", name, {case: {k: v for k, v in d.items() if k != "mha_output"} for case, d in r.items()})

    return {
        "sdpa": {"max_abs_diff": f64["self"]["sdpa"]},
        "mha": {"max_abs_diff": f64["self"]["mha"], "weights_max_abs_diff": f64["self"]["mha_weights"]},
        "causal": {
            "sdpa_max_abs_diff": f64["causal"]["sdpa"],
            "mha_max_abs_diff": f64["causal"]["mha"],
            "mha_weights_max_abs_diff": f64["causal"]["mha_weights"],
        },
        "cross": {
            "sdpa_max_abs_diff": f64["cross"]["sdpa"],
            "mha_max_abs_diff": f64["cross"]["mha"],
            "mha_weights_max_abs_diff": f64["cross"]["mha_weights"],
        },
        "float32": {
            "sdpa": {"max_abs_diff": f32["self"]["sdpa"]},
            "mha": {"max_abs_diff": f32["self"]["mha"]},
            # How far float32 rounding alone moves our own multi-head output.
            "vs_float64_max_abs_diff": max_abs_diff(f32["self"]["mha_output"], f64["self"]["mha_output"]),
        },
        "max_abs_diff_overall": max(
            f64[case][k] for case in ("self", "causal", "cross") for k in ("sdpa", "mha", "mha_weights")
        ),
    }


# The headline is the largest of the float64 differences: derived from them,
# so that recomputing it (python -m articlekit reproduce) names them and
# recomputes them too.
DERIVED = {"max_abs_diff_overall": [
    "sdpa.max_abs_diff", "mha.max_abs_diff", "mha.weights_max_abs_diff",
    *(f"{case}.{k}_max_abs_diff" for case in ("causal", "cross") for k in ("sdpa", "mha", "mha_weights")),
]}


if __name__ == "__main__":
    run_experiment("parity", run, derived=DERIVED)
