"""The boolean mask trap: True means opposite things in two PyTorch APIs.

Our NumPy attention (and nn.MultiheadAttention's masks) read True as
"masked out"; F.scaled_dot_product_attention reads True as "takes part".
Passing one convention's mask to the other runs without complaint and
silently attends to exactly the wrong positions. Measured here:

- the causal mask given to sdpa inverted (correct) and as-is (reversed);
- a key padding mask given to nn.MultiheadAttention in its own convention
  and in sdpa's (inverted);
- a mask that hides every key from every query, given to sdpa as a boolean
  mask (all False) and as a float mask (all -inf): what PyTorch returns
  where NumPy's softmax of -inf gives nan.

Inputs: one numpy.random.default_rng(seed) draws Q, then K, then V, each
(n_tokens, d_k) standard normal. The padding case treats the last
n_tokens // 2 keys as padding.
"""

import logging

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment.artifacts import run_experiment
from experiments.attention import causal_mask, scaled_dot_product_attention

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
        "description": "one default_rng(seed) draws Q, K and V",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
One `default_rng(seed)` draws Q, K, V, each (n_tokens, d_k). Reference: our
NumPy attention with the causal mask (True = masked out). `correct` passes
`~mask` to `F.scaled_dot_product_attention` (its True = takes part);
`reversed` passes the mask as it is. Each of the two has:
"""
RESULT_KEYS = {
    "mask_convention.{case}.error_raised": "whether the sdpa call raised; case in correct, reversed",
    "mask_convention.{case}.error": "`\"Type: message\"` of that exception, or null",
    "mask_convention.{case}.max_abs_diff": "max |diff| of sdpa's output vs the NumPy reference, over entries that are not NaN (null if it raised)",
    "mask_convention.{case}.nan_rows": "rows of sdpa's output containing NaN",
    "mask_convention.{case}.nan_appeared": "nan_rows > 0",
    "mask_convention.{case}.fully_masked_rows": "queries the given mask lets attend to nothing (sdpa's reading of it)",
    "mask_convention.{case}.zero_weight_rows": "rows where sdpa's weights are all exactly 0 (how this PyTorch treats a fully masked row)",
    "mask_convention.{case}.max_weight_on_future": "largest weight sdpa gives a future position (j > i); 0 when correct",
    "mask_convention.key_padding.max_abs_diff": "`nn.MultiheadAttention` (1 head, identity projections) with `key_padding_mask` True = ignore, vs NumPy with the same keys masked",
    "mask_convention.key_padding.inverted_max_abs_diff": "the same with sdpa's convention passed to `key_padding_mask` (the padding attended, the rest ignored)",
    "mask_convention.key_padding.padded_keys": "how many keys are padding (the last n_tokens // 2)",
    "mask_convention.fully_masked.{form}.all_zero": "every key hidden from every query, sdpa's output is all 0.0; form `boolean` (all False) or `float` (all −inf)",
    "mask_convention.fully_masked.{form}.any_nan": "whether any of that output is NaN",
}

log = logging.getLogger("experiment")

# footprint()'s memory, as measured (peak RSS at n_tokens = 2000, d_k = 2000):
CELL_BYTES = 110  # per (T, T) cell: masks, weights and their copies, ours and PyTorch's


def footprint(p):
    """Estimated memory of these sizes (articlekit.experiment.footprint): the (T, T)
    masks and weights, and key padding's (d_k, d_k) identity projections;
    the time is a few passes over it."""
    return {"bytes": {"n_tokens": p["n_tokens"] ** 2 * CELL_BYTES, "d_k": 8 * p["d_k"] ** 2 * 8}}


def torch_weights(Q, K, attn_mask):
    """sdpa's attention weights (Tq, Tk): with V = I the output *is* the
    weight matrix, so no private API is needed to read them."""
    eye = torch.eye(K.shape[0], dtype=Q.dtype)
    return F.scaled_dot_product_attention(Q, K, eye, attn_mask=attn_mask)


def nan_aware_diff(ours, theirs):
    """max |ours - theirs| over entries where theirs is a number, and the
    number of rows of theirs that contain NaN (a fully masked row)."""
    diff = np.abs(ours - theirs)
    nan_rows = int(np.isnan(theirs).any(axis=-1).sum())
    finite = diff[~np.isnan(diff)]
    return (float(finite.max()) if finite.size else float("nan")), nan_rows


def sdpa_with_mask(Q, K, V, attn_mask):
    """Run torch sdpa; return (output, weights, error) with error as
    "Type: message" if the call raised, else None."""
    try:
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)
        return out.numpy(), torch_weights(Q, K, attn_mask).numpy(), None
    except Exception as exc:  # the experiment records whatever is raised
        return None, None, f"{type(exc).__name__}: {exc}"


def mask_case(ref_out, Q, K, V, attn_mask, future):
    """One sdpa call compared with the NumPy reference output (T, d_k)."""
    out, w, error = sdpa_with_mask(Q, K, V, attn_mask)
    if error is not None:
        return {
            "error_raised": True,
            "error": error,
            "max_abs_diff": None,
            "nan_rows": None,
            "nan_appeared": None,
            "zero_weight_rows": None,
            "max_weight_on_future": None,
            "fully_masked_rows": None,
        }
    diff, nan_rows = nan_aware_diff(ref_out, out)
    return {
        "error_raised": False,
        "error": None,
        "max_abs_diff": diff,
        "nan_rows": nan_rows,
        "nan_appeared": bool(nan_rows),
        # A query that may attend to nothing gets NaN or all-zero weights,
        # depending on the PyTorch version; count both so neither hides.
        "fully_masked_rows": int((~attn_mask.numpy()).all(axis=-1).sum()),
        "zero_weight_rows": int((w == 0).all(axis=-1).sum()),
        "max_weight_on_future": float(np.nanmax(np.where(future, w, 0.0))),
    }


def key_padding(Q, K, V, pad):
    """nn.MultiheadAttention with one head and identity projections (so it is
    plain attention of Q over K, V), padding mask in its own convention
    (True = ignore) and in sdpa's (True = takes part). pad: (Tk,) bool."""
    d = Q.shape[-1]
    mha = torch.nn.MultiheadAttention(d, 1, bias=False, batch_first=True, dtype=Q.dtype).eval()
    mha.in_proj_weight.copy_(torch.eye(d, dtype=Q.dtype).repeat(3, 1))  # (3d, d)
    mha.out_proj.weight.copy_(torch.eye(d, dtype=Q.dtype))
    ref, _ = scaled_dot_product_attention(Q.numpy(), K.numpy(), V.numpy(), mask=pad[None, :])
    result = {}
    for name, kpm in (("max_abs_diff", pad), ("inverted_max_abs_diff", ~pad)):
        out, _ = mha(Q[None], K[None], V[None], key_padding_mask=torch.from_numpy(kpm)[None])
        result[name] = float(np.max(np.abs(ref - out[0].numpy())))
    result["padded_keys"] = int(pad.sum())
    return result


def fully_masked(Q, K, V):
    """sdpa with every key hidden from every query, in both mask forms:
    whether its output is all zeros, and whether any of it is NaN."""
    T = (Q.shape[0], K.shape[0])
    masks = {
        "boolean": torch.zeros(T, dtype=torch.bool),  # False = takes no part
        "float": torch.full(T, float("-inf"), dtype=Q.dtype),
    }  # added to the scores
    result = {}
    for name, attn_mask in masks.items():
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask).numpy()
        result[name] = {"all_zero": bool((out == 0).all()), "any_nan": bool(np.isnan(out).any())}
    return result


def run(params):
    """params: n_tokens (T), d_k, seed."""
    T, d_k = params["n_tokens"], params["d_k"]
    rng = np.random.default_rng(params["seed"])
    Q, K, V = (rng.normal(size=(T, d_k)) for _ in "QKV")  # (T, d_k) each, float64

    mask = causal_mask(T)  # (T, T), True = masked out (our convention)
    ref_out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    tQ, tK, tV = map(torch.from_numpy, (Q, K, V))
    with torch.no_grad():
        correct = mask_case(ref_out, tQ, tK, tV, torch.from_numpy(~mask), mask)
        reversed_ = mask_case(ref_out, tQ, tK, tV, torch.from_numpy(mask), mask)
        pad = np.arange(T) >= T - T // 2  # (T,), True = padding key
        padding = key_padding(tQ, tK, tV, pad)
        hidden = fully_masked(tQ, tK, tV)
    log.info("correct %s", correct)
    log.info("reversed %s", reversed_)
    log.info("key padding %s", padding)
    log.info("every key masked %s", hidden)
    return {"correct": correct, "reversed": reversed_, "key_padding": padding, "fully_masked": hidden}


if __name__ == "__main__":
    run_experiment("mask_convention", run)
