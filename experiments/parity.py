"""The from-scratch NumPy attention against PyTorch's, on identical inputs.

Two parts.

At toy sizes (n_tokens, n_memory, d_model, heads; inputs from `seed`):
experiments.attention against torch.nn.functional.scaled_dot_product_attention
(per head, the heads as the batch axis of (h, T, d_k) arrays) and against
nn.MultiheadAttention(bias=False) loaded with the same projection matrices,
asked for its weights: self-attention, causal, and cross-attention (queries
from one sequence, keys and values from another), in float64 and again with
both sides in float32. One numpy.random.default_rng(seed) draws X
(n_tokens, d_model), then the memory M (n_memory, d_model), both standard
normal, then W_q, W_k, W_v, W_o, each (d_model, d_model) standard normal
divided by sqrt(d_model).

At the sizes a model uses (scale_n_tokens, scale_d_model, scale_heads;
inputs from `scale_seed`, drawn as above, self-attention only), for every
T in scale_n_tokens:

- sdpa: our per-head attention against scaled_dot_product_attention called
  as models call it, on (batch, h, T, d_k) arrays;
- mha_weights: our layer against nn.MultiheadAttention(bias=False) asked for
  its weights (need_weights=True), as in the toy part;
- mha_fused: against nn.MultiheadAttention as PyTorch builds it by default
  (with biases, here zero), in eval mode without autograd, called with
  need_weights=False: what inference runs, and where PyTorch may take its
  fused fast path;

each in float64 and float32 (both sides in that precision) and in bfloat16
(PyTorch only: NumPy has no bfloat16, so against our float64 output on the
float64 inputs). For each: the largest absolute difference, the normwise
relative error ||a - b||_F / ||b||_F (b our NumPy output), and the attention
kernel that PyTorch's profiler saw run; and which op the bias-free layer
runs when called as mha_fused is. relative_bound() says what rounding alone
would explain. PyTorch runs this part on one thread.

The seed sweep (snakemake robustness) varies `seed` only: the realistic
sizes read `scale_seed`, so their part is the same in every run of the
sweep, and is computed once per process (_at_scale is cached).
"""

import copy
import functools
import logging
import math

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment.artifacts import run_experiment
from articlekit.experiment.footprint import FLOPS
from experiments.attention import causal_mask, multi_head_attention, scaled_dot_product_attention, split_heads

# What the experiment takes, with its defaults: the article's choices (the published
# edition's); config.yaml overrides them key by key. Read by the workflow without
# importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "n_tokens": {"type": "integer", "minimum": 2, "default": 5, "description": "the toy size's tokens (queries)"},
    "d_model": {"type": "integer", "minimum": 1, "default": 16, "description": "the toy size's model width"},
    "heads": {
        "type": "integer",
        "minimum": 1,
        "x-divides": "d_model",
        "default": 4,
        "description": "the toy size's heads",
    },
    "n_memory": {
        "type": "integer",
        "minimum": 1,
        "default": 7,
        "description": "keys/values for cross-attention (Tk != Tq)",
    },
    "seed": {
        "type": "integer",
        "minimum": 0,
        "default": 20261012,
        "description": "one default_rng(seed) draws the toy size's inputs",
    },
    "scale_n_tokens": {
        "type": "array",
        "items": {"type": "integer", "minimum": 1},
        "minItems": 1,
        "default": [128, 512, 2048],
        "description": "the realistic sizes: T, as a model's layer sees it",
    },
    "scale_d_model": {
        "type": "integer",
        "minimum": 1,
        "default": 512,
        "description": "the realistic model width: the paper's base model, 8 heads of d_k = 64",
    },
    "scale_heads": {
        "type": "integer",
        "minimum": 1,
        "x-divides": "scale_d_model",
        "default": 8,
        "description": "the realistic sizes' heads",
    },
    "scale_seed": {
        "type": "integer",
        "minimum": 0,
        "default": 20261012,
        "description": "the realistic sizes' own draw: the seed sweep varies `seed` only",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
NumPy (experiments/attention.py) against PyTorch on identical inputs, at two
sizes.

Toy sizes (n_tokens, n_memory, d_model, heads): one `default_rng(seed)`
draws X (n_tokens, d_model), then the memory M (n_memory, d_model), then
W_q, W_k, W_v, W_o (standard normal / √d_model). "sdpa" compares per-head
attention, heads as the batch axis of (h, T, d_k) arrays, with
`F.scaled_dot_product_attention`; "mha" compares the whole multi-head layer
with `nn.MultiheadAttention(bias=False)` holding the transposed weights,
asked for its weights. All float64 unless under `float32`.

Realistic sizes (scale_n_tokens, scale_d_model, scale_heads): for each T in
scale_n_tokens, a `default_rng(scale_seed)` draws X (T, scale_d_model) and
the four weights as above; self-attention, no mask. The seed sweep varies
`seed` only, so these values are the same in every run of it (computed once
per process). Three paths, each against our NumPy output b:

- `sdpa`: `F.scaled_dot_product_attention` on our projections as (1, h, T,
  d_k) arrays, as a model calls it, against our per-head attention;
- `mha_weights`: `nn.MultiheadAttention(bias=False)` with need_weights=True
  (the toy's module; PyTorch's general path), against our layer;
- `mha_fused`: `nn.MultiheadAttention` as built by default, with biases
  (zero), eval mode, no autograd, need_weights=False (where PyTorch may take
  its fast path), against our layer.

Our side attends 256 queries at a time (`QUERY_BLOCK`; each query's output
depends on no other), and so does the general path; the fused path takes
the whole sequence, as its fast path requires. Three precisions: `float64`
and `float32` (both sides in it), and `bfloat16` (PyTorch only, on inputs
rounded to it, against our float64 output: NumPy has no bfloat16). Lists
have one entry per T, in scale_n_tokens' order; precision is one of
float64, float32, bfloat16 and path one of sdpa, mha_weights, mha_fused.
"""
RESULT_KEYS = {
    "parity.sdpa.max_abs_diff": "max |diff| of the attention outputs, self-attention, no mask",
    "parity.sdpa.kernel": "the op PyTorch's profiler saw `scaled_dot_product_attention` dispatch to for those (h, T, d_k) arrays (`torch.autograd.profiler`: the innermost op whose name has `attention` in it, without its `aten::` namespace)",
    "parity.mha.max_abs_diff": "max |diff| of the multi-head outputs, self-attention",
    "parity.mha.weights_max_abs_diff": "max |diff| of the per-head weights (average_attn_weights=False)",
    "parity.causal.sdpa_max_abs_diff": "as sdpa, our causal mask vs `is_causal=True`",
    "parity.causal.mha_max_abs_diff": "as mha, with the boolean causal `attn_mask`",
    "parity.causal.mha_weights_max_abs_diff": "per-head weights, causal",
    "parity.cross.sdpa_max_abs_diff": "as sdpa, queries from X (n_tokens), keys/values from M (n_memory)",
    "parity.cross.mha_max_abs_diff": "as mha, cross-attention X → M",
    "parity.cross.mha_weights_max_abs_diff": "per-head weights, cross-attention",
    "parity.float32.sdpa.max_abs_diff": "sdpa comparison with both sides in float32 (≈ 1e-7)",
    "parity.float32.mha.max_abs_diff": "mha comparison with both sides in float32",
    "parity.float32.vs_float64_max_abs_diff": "max |diff| of our own multi-head output, float32 vs float64",
    "parity.max_abs_diff_overall": "the headline: the largest float64 difference of both sizes, the toy sizes' nine (sdpa, mha, weights; self, causal, cross) and the realistic sizes' (`parity.scale.float64.{path}.max_abs_diff`, every T)",
    "parity.max_abs_diff_overall_ulps": "the same in units in the last place of 1.0: max_abs_diff_overall / 2⁻⁵² (float64's machine epsilon)",
    "parity.scale.d_k": "scale_d_model / scale_heads",
    "parity.scale.mha_fastpath_enabled": "`torch.backends.mha.get_fastpath_enabled()`: whether PyTorch lets `nn.MultiheadAttention` take its fast path at all",
    "parity.scale.bias_free_fused_kernel": "the op PyTorch's profiler saw run for `nn.MultiheadAttention(bias=False)` called as mha_fused is (need_weights=False, eval mode; float64, at the first T): with no biases the fast path is not taken",
    "parity.scale.stored_roundings": "how many stored values along one output's chain the bound counts (X, W_q, W_k, W_v, Q, K, V, scores, weights, heads, W_o, output)",
    "parity.scale.{precision}.{path}.max_abs_diff": "max |a − b| per T, in float64",
    "parity.scale.{precision}.{path}.relative_error": "normwise relative error ‖a − b‖_F / ‖b‖_F per T, in float64",
    "parity.scale.{precision}.{path}.kernel": "per T, the attention op PyTorch's profiler saw run (as `parity.sdpa.kernel`); null where none did (the general path: separate matmuls and a softmax)",
    "parity.scale.{precision}.unit_roundoff": "u = eps / 2 of the precision (`torch.finfo`): 2⁻⁵³, 2⁻²⁴, 2⁻⁸",
    "parity.scale.{precision}.relative_bound": "per T, the relative error rounding alone explains (`relative_bound()`): for each side that rounds, u_store · stored_roundings + u_sum · (2√d_model + √d_k + 2√T); both sides round in float64 and float32 (u_sum = u), PyTorch alone in bfloat16, summing in float32 (u_sum = 2⁻²⁴), plus float64's share for our side",
    "parity.scale.{precision}.worst_share_of_bound": "the largest relative_error / relative_bound over the three paths and every T",
}

log = logging.getLogger("experiment")

# footprint()'s memory, as measured (peak RSS at sizes where each term dominates):
CELL_BYTES = 100  # per weight of an (h, Tq, Tk) stack: a dozen float64 copies, ours and PyTorch's
WEIGHT_BYTES = 160  # per entry of a (d_model, d_model) projection: both precisions, ours and the module's
SCALE_CELL_BYTES = 9  # per weight of the (h, T, T) float64 stack PyTorch's fused layer holds
BLOCK_CELL_BYTES = 40  # per weight of our (h, QUERY_BLOCK, T) float64 block: softmax's four copies
SCALE_WEIGHT_BYTES = 32  # per entry of the four (d, d) projections: ours and two modules', three precisions

# Our side attends QUERY_BLOCK queries at a time (to all T keys): each query's
# output depends on no other query, so the result is the same, and the (h, T, T)
# weights never exist at once (softmax's copies of them: a gigabyte at T = 2048).
QUERY_BLOCK = 256

# The precisions of the realistic sizes, NumPy's dtype beside PyTorch's (None: NumPy has none).
PRECISIONS = {
    "float64": (np.float64, torch.float64),
    "float32": (np.float32, torch.float32),
    "bfloat16": (None, torch.bfloat16),
}
PATHS = ("sdpa", "mha_weights", "mha_fused")

# relative_bound()'s count of the values a layer stores, each rounded once,
# along one output entry's chain: X, W_q, W_k, W_v, Q, K, V, the scores, the
# softmax weights, the heads' output, W_o and the output.
STORED_ROUNDINGS = 12


def footprint(p):
    """Estimated cost of these sizes (articlekit.experiment.footprint).

    Toy part: the attention weights of the widest case and the four
    projections; time, the flops of twelve runs (three cases, two
    precisions, ours and PyTorch's), each projecting both sequences and
    attending. Realistic sizes, at the largest T: PyTorch's (h, T, T)
    weights and our (h, QUERY_BLOCK, T) block of them; time, for every T,
    nine layers (ours in two precisions, PyTorch's two modules in three,
    and the bias-free one called without weights) and five per-head
    attentions (ours in two precisions, PyTorch's in three)."""
    T, M, d, h = p["n_tokens"], p["n_memory"], p["d_model"], p["heads"]
    flops = 12 * (8 * (T + M) * d * d + 4 * T * max(T, M) * d)
    sizes, d_s, h_s = p["scale_n_tokens"], p["scale_d_model"], p["scale_heads"]
    T_s = max(sizes)
    scale_flops = sum(9 * (8 * t * d_s * d_s + 4 * t * t * d_s) + 5 * 4 * t * t * d_s for t in sizes)
    return {
        "bytes": {
            ("n_tokens", "n_memory", "heads"): h * T * max(T, M) * CELL_BYTES,
            "d_model": d * d * WEIGHT_BYTES,
            ("scale_n_tokens", "scale_heads"): h_s
            * T_s
            * (T_s * SCALE_CELL_BYTES + min(T_s, QUERY_BLOCK) * BLOCK_CELL_BYTES),
            "scale_d_model": 4 * d_s * d_s * SCALE_WEIGHT_BYTES,
            "scale_seed": 0,
        },  # a seed: which draw, not how large
        "seconds": {
            ("n_tokens", "n_memory", "d_model"): flops / FLOPS,
            ("scale_n_tokens", "scale_d_model"): scale_flops / FLOPS,
        },
    }


def draw_inputs(n_tokens, n_memory, d_model, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_tokens, d_model))
    M = rng.normal(size=(n_memory, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return X, M, W


def as_float64(a):
    """A NumPy float64 copy of either library's array, whatever its dtype."""
    if isinstance(a, torch.Tensor):
        a = a.detach().to(torch.float64).numpy()
    return np.asarray(a, dtype=np.float64)


def max_abs_diff(a, b):
    """max |a - b| in float64, whichever library and dtype each side is in."""
    return float(np.max(np.abs(as_float64(a) - as_float64(b))))


def relative_error(a, b):
    """||a - b||_F / ||b||_F in float64: the error of a, relative to the size of b."""
    a, b = as_float64(a), as_float64(b)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def torch_mha(W, h, dtype, bias=False):
    """nn.MultiheadAttention holding our W_q, W_k, W_v, W_o, in eval mode.

    Its Linear layers compute x @ weight.T, so each (d_model, d_model) matrix
    that we apply as x @ W goes in transposed; in_proj_weight stacks the
    three input projections row-wise, q first. bias=True builds it as
    PyTorch does by default, with zero biases: the same layer as ours.
    """
    W_q, W_k, W_v, W_o = (torch.from_numpy(w.T.copy()).to(dtype) for w in W)
    mha = torch.nn.MultiheadAttention(W_q.shape[0], h, bias=bias, batch_first=True, dtype=dtype)
    mha.in_proj_weight.copy_(torch.cat([W_q, W_k, W_v]))  # (3 d_model, d_model)
    mha.out_proj.weight.copy_(W_o)
    if bias:
        mha.in_proj_bias.zero_()
        mha.out_proj.bias.zero_()
    return mha.eval()


def kernel_that_ran(call):
    """call()'s result, and the attention op PyTorch's profiler saw run
    inside it: the innermost op whose name has "attention" in it (the kernel
    scaled_dot_product_attention dispatched to, or the layer's fused op), or
    None when no such op ran (the layer's general path: matmuls and a softmax).
    Its name without the namespace every one of them shares ("aten::").
    The autograd profiler without Kineto: the same op names, without the
    second or two Kineto takes to start."""
    with torch.autograd.profiler.profile(use_kineto=False) as prof:
        result = call()
    names = [event.name.split("::")[-1] for event in prof.function_events if "attention" in event.name]
    return result, (names[-1] if names else None)


def compare(X, M, W, h, np_dtype, torch_dtype):
    """All toy comparisons at one precision. X: (Tq, d_model), M: (Tk, d_model)."""
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

        def sdpa():
            return F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=causal)

        # which kernel ran is recorded once, for self-attention: the profiler costs more than the call
        theirs, kernel = kernel_that_ran(sdpa) if case == "self" else (sdpa(), None)

        out, w = multi_head_attention(X, X_kv, W_q, W_k, W_v, W_o, h, causal=causal)  # (Tq, d), (h, Tq, Tk)
        # nn.MultiheadAttention's bool attn_mask shares our convention: True = blocked.
        attn_mask = t(causal_mask(len(X))) if causal else None
        t_out, t_w = mha(
            t(X)[None], t(X_kv)[None], t(X_kv)[None], attn_mask=attn_mask, need_weights=True, average_attn_weights=False
        )  # (1, Tq, d), (1, h, Tq, Tk)
        result[case] = {
            "sdpa": max_abs_diff(ours, theirs),
            "sdpa_kernel": kernel,
            "mha": max_abs_diff(out, t_out[0]),
            "mha_weights": max_abs_diff(w, t_w[0]),
            "mha_output": out,
        }
    return result


# ---- the realistic sizes ---------------------------------------------------------------


def unit_roundoff(torch_dtype):
    """u = eps / 2, the largest relative error of one rounding to this dtype (torch.finfo)."""
    return torch.finfo(torch_dtype).eps / 2


def relative_bound(T, d_model, d_k, sides):
    """The normwise relative error that rounding alone explains, for a layer of
    these sizes: a rule of thumb, not a worst case.

    sides: one (u_store, u_sum) per side that rounds: the unit roundoff of
    what it stores, and of what it sums in. Each stored value is rounded
    once (STORED_ROUNDINGS of them along an output entry's chain: u_store
    each); and a sum of n terms whose roundings do not conspire is off by
    about sqrt(n) u_sum (they add like a random walk), along the chain's
    sums of d_model (projection), d_k (score), T (softmax's normalizer), T
    (the weighted sum) and d_model terms (output projection).
    """
    sums = 2 * math.sqrt(d_model) + math.sqrt(d_k) + 2 * math.sqrt(T)
    return sum(u_store * STORED_ROUNDINGS + u_sum * sums for u_store, u_sum in sides)


def in_query_blocks(attend, n_queries):
    """attend(rows) -> (..., len(rows), d) for every QUERY_BLOCK of queries,
    joined along the query axis (-2): the same output as attending all at once."""
    blocks = [attend(slice(start, start + QUERY_BLOCK)) for start in range(0, n_queries, QUERY_BLOCK)]
    return np.concatenate(blocks, axis=-2)


def ours_at(X, W, h, np_dtype):
    """Our per-head output (h, T, d_k), from our own projections, and our layer's (T, d_model)."""
    X, W = X.astype(np_dtype), [w.astype(np_dtype) for w in W]
    W_q, W_k, W_v, W_o = W
    Q, K, V = split_heads(X @ W_q, h), split_heads(X @ W_k, h), split_heads(X @ W_v, h)  # (h, T, d_k)
    heads = in_query_blocks(lambda rows: scaled_dot_product_attention(Q[:, rows], K, V)[0], len(X))
    layer = in_query_blocks(lambda rows: multi_head_attention(X[rows], X, W_q, W_k, W_v, W_o, h)[0], len(X))
    return (Q, K, V), heads, layer


def theirs_at(X, W, QKV, h, torch_dtype):
    """PyTorch's outputs, each with the kernel that ran: {path: (output, kernel)}.
    QKV: our (h, T, d_k) projections, which the per-head call attends."""

    def t(a):
        return torch.from_numpy(np.ascontiguousarray(a)).to(torch_dtype)

    x = t(X)[None]  # (1, T, d_model): one sequence, batch first
    Q, K, V = (t(a)[None] for a in QKV)  # (1, h, T, d_k), as a model calls it
    general, default = torch_mha(W, h, torch_dtype), torch_mha(W, h, torch_dtype, bias=True)

    def weighted(rows):  # the general path attends queries to keys of any sequence, so it takes blocks too
        return as_float64(general(x[:, rows], x, x, need_weights=True, average_attn_weights=False)[0][0])

    sdpa, sdpa_kernel = kernel_that_ran(lambda: F.scaled_dot_product_attention(Q, K, V)[0])
    weights, weights_kernel = kernel_that_ran(lambda: in_query_blocks(weighted, len(X)))
    # The fast path needs query, key and value to be one tensor: the whole sequence at once.
    fused, fused_kernel = kernel_that_ran(lambda: default(x, x, x, need_weights=False)[0][0])
    return {"sdpa": (sdpa, sdpa_kernel), "mha_weights": (weights, weights_kernel), "mha_fused": (fused, fused_kernel)}


def bias_free_fused_kernel(T, d_model, h, seed):
    """The op PyTorch ran for the bias-free layer called as the fused path is
    (need_weights=False, eval mode, float64): whether the fast path needs biases."""
    X, _, W = draw_inputs(T, 0, d_model, seed)
    x = torch.from_numpy(X)[None]
    _, kernel = kernel_that_ran(lambda: torch_mha(W, h, torch.float64)(x, x, x, need_weights=False))
    return kernel


@functools.lru_cache(maxsize=2)
def _at_scale(sizes, d_model, h, seed):
    """The realistic sizes' comparisons as JSON-ready values; cached because
    the seed sweep calls run() once per `seed`, which this part does not read."""
    d_k = d_model // h
    u64 = unit_roundoff(torch.float64)
    found = {
        name: {path: {"max_abs_diff": [], "relative_error": [], "kernel": []} for path in PATHS} for name in PRECISIONS
    }
    bounds = {name: [] for name in PRECISIONS}
    for T in sizes:
        X, _, W = draw_inputs(T, 0, d_model, seed)  # self-attention: no memory
        reference = None  # our float64 outputs: what bfloat16 is held against
        for name, (np_dtype, torch_dtype) in PRECISIONS.items():
            u = unit_roundoff(torch_dtype)
            if np_dtype is None:  # PyTorch alone, which sums bfloat16 in float32, against float64
                QKV, ours = reference
                sides = [(u, unit_roundoff(torch.float32)), (u64, u64)]
            else:  # both sides in this precision
                QKV, heads, layer = ours_at(X, W, h, np_dtype)
                ours = {"sdpa": heads, "mha_weights": layer, "mha_fused": layer}
                if name == "float64":
                    reference = QKV, ours
                sides = [(u, u), (u, u)]
            theirs = theirs_at(X, W, QKV, h, torch_dtype)
            for path in PATHS:
                output, kernel = theirs[path]
                found[name][path]["max_abs_diff"].append(max_abs_diff(output, ours[path]))
                found[name][path]["relative_error"].append(relative_error(output, ours[path]))
                found[name][path]["kernel"].append(kernel)
            bounds[name].append(relative_bound(T, d_model, d_k, sides))

    result = {
        "d_k": d_k,
        "stored_roundings": STORED_ROUNDINGS,
        "mha_fastpath_enabled": bool(torch.backends.mha.get_fastpath_enabled()),
        "bias_free_fused_kernel": bias_free_fused_kernel(sizes[0], d_model, h, seed),
    }
    for name, (_, torch_dtype) in PRECISIONS.items():
        shares = [
            error / bound for path in PATHS for error, bound in zip(found[name][path]["relative_error"], bounds[name])
        ]
        result[name] = {
            "unit_roundoff": unit_roundoff(torch_dtype),
            "relative_bound": bounds[name],
            "worst_share_of_bound": max(shares),
            **found[name],
        }
        log.info("at T = %s, %s: %s", list(sizes), name, result[name])
    return result


def at_scale(params):
    """The realistic sizes' part of the artifact (a fresh copy: the cache keeps its own).

    On one PyTorch thread, whatever the process was given: a bfloat16 sum
    split over two threads rounds in another order, and the seed sweep
    (one thread per job) must find the build's values."""
    key = (tuple(params["scale_n_tokens"]), params["scale_d_model"], params["scale_heads"], params["scale_seed"])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return copy.deepcopy(_at_scale(*key))
    finally:
        torch.set_num_threads(threads)


def run(params):
    """params: n_tokens, n_memory, d_model, heads, seed (toy part);
    scale_n_tokens, scale_d_model, scale_heads, scale_seed (realistic sizes)."""
    X, M, W = draw_inputs(params["n_tokens"], params["n_memory"], params["d_model"], params["seed"])
    h = params["heads"]
    with torch.no_grad():
        f64 = compare(X, M, W, h, np.float64, torch.float64)
        f32 = compare(X, M, W, h, np.float32, torch.float32)
        scale = at_scale(params)
    for name, r in (("float64", f64), ("float32", f32)):
        log.info("%s: %s", name, {case: {k: v for k, v in d.items() if k != "mha_output"} for case, d in r.items()})

    overall = max(
        [f64[case][k] for case in ("self", "causal", "cross") for k in ("sdpa", "mha", "mha_weights")]
        + [diff for path in PATHS for diff in scale["float64"][path]["max_abs_diff"]]
    )
    return {
        "sdpa": {"max_abs_diff": f64["self"]["sdpa"], "kernel": f64["self"]["sdpa_kernel"]},
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
        "scale": scale,
        "max_abs_diff_overall": overall,
        # in units in the last place of 1.0 (float64's machine epsilon, 2**-52)
        "max_abs_diff_overall_ulps": overall / np.finfo(np.float64).eps,
    }


# The headline is the largest of the float64 differences, at both sizes:
# derived from them, so that recomputing it (python -m articlekit reproduce)
# names them and recomputes them too; its size in ULPs is derived from it.
DERIVED = {
    "max_abs_diff_overall": [
        "sdpa.max_abs_diff",
        "mha.max_abs_diff",
        "mha.weights_max_abs_diff",
        *(f"{case}.{k}_max_abs_diff" for case in ("causal", "cross") for k in ("sdpa", "mha", "mha_weights")),
        *(f"scale.float64.{path}.max_abs_diff" for path in PATHS),
    ],
    "max_abs_diff_overall_ulps": ["max_abs_diff_overall"],
}


if __name__ == "__main__":
    run_experiment("parity", run, derived=DERIVED)
