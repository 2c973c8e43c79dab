"""Five ways attention code goes wrong, captured from the installed libraries.

Each error's type and message text are recorded exactly as this build's
NumPy and PyTorch produce them (str(exc)), so the article quotes the real
thing and notices when an upgrade rewords or removes one. An expected error
that is not raised is recorded as raised = false, not treated as a crash.

Inputs: one numpy.random.default_rng(seed) draws, in this order, Q, K, V
(n_tokens, d_k) standard normal (errors 1-3 and 5), then a square Q and K
(d_k, d_k), where forgetting the transpose raises nothing. A second
generator, numpy.random.default_rng(underflow_seed), draws the published
edition's underflow vectors: a, then b, each (underflow_dim,) standard
normal times underflow_scale, cast to float32.
"""

import logging
import warnings

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment.artifacts import run_experiment
from experiments.attention import causal_mask, softmax

# What the experiment takes, with its defaults: the article's choices (the published
# edition's); config.yaml overrides them key by key. Read by the workflow without
# importing this module (articlekit.experiment.declared).
PARAMETERS = {
    "seed": {
        "type": "integer",
        "minimum": 0,
        "default": 20261012,
        "description": "one default_rng(seed) draws Q, K and V, then a square Q and K",
    },
    "n_tokens": {
        "type": "integer",
        "minimum": 2,
        "default": 5,
        "description": "Q, K, V: (n_tokens, d_k); unequal, or Q @ K without the transpose would not fail",
    },
    "d_k": {"type": "integer", "minimum": 1, "default": 4, "description": "the width of Q, K and V"},
    "underflow_seed": {
        "type": "integer",
        "minimum": 0,
        "default": 3,
        "description": "the edition's underflow vectors a, then b, from their own generator",
    },
    "underflow_dim": {
        "type": "integer",
        "minimum": 1,
        "default": 1024,
        "description": "the width of those float32 vectors",
    },
    "underflow_scale": {
        "type": "number",
        "exclusiveMinimum": 0,
        "default": 10.0,
        "description": "the scale of those vectors, which makes exp underflow",
    },
}

# What each key of its values means (python -m articlekit keys writes them out).
RESULT_KEYS_NOTE = """\
Captured from the installed libraries; `message` is `str(exc)` verbatim.
One `default_rng(seed)` draws Q, K, V (n_tokens, d_k), then a square Q and K
(d_k, d_k). A second, `default_rng(underflow_seed)`, draws the published
edition's float32 vectors a, then b (underflow_dim, standard normal ×
underflow_scale).
"""
RESULT_KEYS = {
    "errors.{error}.raised": "whether the mistake raised; error in numpy_no_transpose, torch_no_transpose, sdpa_mask_and_causal",
    "errors.{error}.type": "the exception's class name (e.g. `ValueError`), or null if not raised",
    "errors.{error}.message": "the exception's text, `str(exc)`, or null",
    "errors.square_no_transpose.shape": "the square Q's and K's shape, [d_k, d_k] (T = d_k)",
    "errors.square_no_transpose.numpy_raised": "whether `Q @ K` without the transpose raised there, in NumPy",
    "errors.square_no_transpose.torch_raised": "the same in PyTorch",
    "errors.square_no_transpose.max_abs_diff": "max |Q @ K − Q @ Kᵀ|: what the missing transpose changes when nothing raises",
    "errors.underflow.dot": "the float32 dot product a·b (large negative)",
    "errors.underflow.exp": "`np.exp(dot)` in float32: 0.0 (underflow)",
    "errors.underflow.ratio": "the naive softmax of that one score, exp/exp = 0/0: NaN",
    "errors.underflow.ratio_is_nan": "whether that ratio is NaN",
    "errors.underflow.exp_float64": "`np.exp(dot)` in float64 (also 0.0 when dot < ≈ −745: float64 is no fix)",
    "errors.underflow.warning_raised": "whether NumPy warned during exp and the division",
    "errors.underflow.warning_category": "the first warning's class name (`RuntimeWarning`), or null",
    "errors.underflow.warning_message": "its text, e.g. `invalid value encountered in scalar divide`",
    "errors.overflow.dot": "the same score with its sign flipped, −a·b (large positive, float32)",
    "errors.overflow.exp": "`np.exp` of it in float32: inf (overflow)",
    "errors.overflow.ratio": "exp/exp = inf/inf: NaN",
    "errors.overflow.ratio_is_nan": "whether that ratio is NaN",
    "errors.overflow.warning_messages": "NumPy's warnings during exp and the division (list of texts)",
    "errors.stable.offsets": "three scores one apart, before the shift (list)",
    "errors.stable.exact": "their softmax in float64: the weights every shift of them should get (list)",
    "errors.stable.{side}.scores": "the offsets shifted to the underflow's dot (side `below`) or to minus it (`above`), float32 (list)",
    "errors.stable.{side}.naive": "exp(s)/sum(exp(s)) of those scores (list)",
    "errors.stable.{side}.naive_all_nan": "whether every one of those weights is NaN",
    "errors.stable.{side}.stable": "the max-subtracted softmax of them (list)",
    "errors.stable.{side}.stable_sum": "its sum",
    "errors.stable.{side}.stable_max_abs_diff": "max |stable − exact| (float32 rounding)",
    "errors.masked_fill_float16.value": "the mask value tried in half precision, −1e9",
    "errors.masked_fill_float16.torch_masked_fill.raised": "whether PyTorch's `masked_fill(mask, -1e9)` on a float16 tensor raised",
    "errors.masked_fill_float16.torch_masked_fill.type": "the exception's class name, or null",
    "errors.masked_fill_float16.torch_masked_fill.message": "its text, `str(exc)`, or null",
    "errors.wrong_axis.axis0_row_sums": "row sums of exp(s)/exp(s).sum(axis=0) for s = QKᵀ/√d_k (list; not 1)",
    "errors.wrong_axis.axis0_min_deviation": "the smallest |row sum − 1| of those",
    "errors.wrong_axis.axis0_max_deviation": "the largest",
    "errors.wrong_axis.axis_last_row_sums": "row sums of the softmax along the last axis (list; 1 up to rounding)",
    "errors.wrong_axis.output_diff": "max |diff| of weights @ V between the two normalisations",
}

log = logging.getLogger("experiment")

# The finite stand-in for -inf that masks are often filled with (experiments/example.py measures it too).
LARGE_NEGATIVE = -1e9
# Scores one apart, shifted far below and far above zero: the softmax of any
# shift of them is softmax(OFFSETS), which the naive formula cannot compute there.
OFFSETS = (0.0, 1.0, 2.0)

# footprint()'s memory, as measured (peak RSS at n_tokens = 2000):
CELL_BYTES = 55  # per (T, T) score: the scores, their exponentials, two normalisations


def footprint(p):
    """Estimated memory of these sizes (articlekit.experiment.footprint): the (T, T)
    scores of the wrong-axis case, Q, K, V, the square Q and K, and the two
    underflow vectors (float64 and float32); the time is a few passes over it."""
    T, d_k = p["n_tokens"], p["d_k"]
    return {
        "bytes": {
            "n_tokens": T * T * CELL_BYTES,
            "d_k": 3 * T * d_k * 8 + 6 * d_k * d_k * 8,
            "underflow_dim": 32 * p["underflow_dim"],
            "underflow_seed": 0,
        }
    }


def capture(fn):
    """Call fn; return {raised, type, message} for the exception it raises."""
    try:
        fn()
    except Exception as exc:  # whatever the library raises is the finding
        return {"raised": True, "type": type(exc).__name__, "message": str(exc)}
    return {"raised": False, "type": None, "message": None}


def caught_warnings(fn):
    """fn() under NumPy's default error state, spelled out so that no outer
    setting hides a warning (underflow silent; overflow and 0/0 warn);
    returns (result, the warnings caught)."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(under="ignore", over="warn", invalid="warn"):
        warnings.simplefilter("always")
        result = fn()
    return result, caught


def naive_softmax(x):
    """exp(x) / sum(exp(x)), without subtracting the maximum first."""
    e = np.exp(x)
    return e / e.sum()


def exp_and_ratio(score):
    """exp(score) and the naive softmax of that one score, exp / exp."""
    e = np.exp(score)
    return e, e / e


def underflow(seed, dim, scale):
    """The edition's procedure: a float32 dot product far below zero. Its exp
    underflows to 0.0, so the naive softmax of that one score is 0/0 = nan,
    with a RuntimeWarning."""
    rng = np.random.default_rng(seed)
    a = (rng.normal(size=dim) * scale).astype(np.float32)  # (dim,), drawn first
    b = (rng.normal(size=dim) * scale).astype(np.float32)  # (dim,)
    dot = a @ b  # float32 scalar
    (e, ratio), caught = caught_warnings(lambda: exp_and_ratio(dot))
    return dot, {
        "dot": float(dot),
        "exp": float(e),
        "ratio": float(ratio),
        "ratio_is_nan": bool(np.isnan(ratio)),
        "exp_float64": float(np.exp(np.float64(dot))),  # float64 underflows too
        "warning_raised": bool(caught),
        "warning_category": caught[0].category.__name__ if caught else None,
        "warning_message": str(caught[0].message) if caught else None,
    }


def overflow(dot):
    """The same score with its sign flipped: exp overflows to inf, inf / inf."""
    score = -dot  # float32, far above zero
    (e, ratio), caught = caught_warnings(lambda: exp_and_ratio(score))
    return {
        "dot": float(score),
        "exp": float(e),
        "ratio": float(ratio),
        "ratio_is_nan": bool(np.isnan(ratio)),
        "warning_messages": [str(w.message) for w in caught],
    }


def stable_against_naive(dot):
    """Three float32 scores one apart, shifted to `dot` (far below zero) and
    to -dot (far above): the naive softmax against the max-subtracted one,
    which should give softmax(OFFSETS) wherever the scores sit."""
    exact = softmax(np.array(OFFSETS))  # float64: the right weights
    result = {"offsets": list(OFFSETS), "exact": exact.tolist()}
    for name, shift in (("below", dot), ("above", -dot)):
        scores = shift + np.array(OFFSETS, dtype=np.float32)  # (3,) float32
        naive, _ = caught_warnings(lambda: naive_softmax(scores))
        stable = softmax(scores)
        result[name] = {
            "scores": scores.tolist(),
            "naive": naive.tolist(),
            "naive_all_nan": bool(np.isnan(naive).all()),
            "stable": stable.tolist(),
            "stable_sum": float(stable.sum(dtype=np.float64)),
            "stable_max_abs_diff": float(np.max(np.abs(stable - exact))),
        }
    return result


def square_no_transpose(Q, K):
    """Q @ K without the transpose when Q and K are square (T = d_k): both
    libraries run it, and it is not Q @ K.T."""
    numpy_call = capture(lambda: Q @ K)
    torch_call = capture(lambda: torch.from_numpy(Q) @ torch.from_numpy(K))
    return {
        "shape": list(Q.shape),
        "numpy_raised": numpy_call["raised"],
        "torch_raised": torch_call["raised"],
        "max_abs_diff": float(np.max(np.abs(Q @ K - Q @ K.T))),
    }


def masked_fill_float16(mask):
    """-1e9 filled into a float16 tensor with PyTorch's masked_fill (NumPy's
    float16 cast of it is experiments/example.py's minus_1e9.in_float16)."""
    scores = torch.zeros(mask.shape, dtype=torch.float16)
    return {
        "value": LARGE_NEGATIVE,
        "torch_masked_fill": capture(lambda: scores.masked_fill(torch.from_numpy(mask), LARGE_NEGATIVE)),
    }


def wrong_axis(Q, K, V):
    """Softmax over the wrong axis runs silently. Scores (T, T) = Q K^T / sqrt(d_k)."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (T, T)
    e = np.exp(scores)
    w_columns = e / e.sum(axis=0)  # normalises each column: wrong
    w_rows = softmax(scores, axis=-1)  # normalises each row: right
    deviation = np.abs(w_columns.sum(axis=-1) - 1.0)  # (T,)
    return {
        "axis0_row_sums": w_columns.sum(axis=-1).tolist(),
        "axis0_min_deviation": float(deviation.min()),
        "axis0_max_deviation": float(deviation.max()),
        "axis_last_row_sums": w_rows.sum(axis=-1).tolist(),
        "output_diff": float(np.max(np.abs(w_columns @ V - w_rows @ V))),
    }


def run(params):
    """params: seed, n_tokens, d_k, underflow_seed, underflow_dim, underflow_scale."""
    T, d_k = params["n_tokens"], params["d_k"]
    rng = np.random.default_rng(params["seed"])
    Q, K, V = (rng.normal(size=(T, d_k)) for _ in "QKV")  # (T, d_k) each
    Q_square, K_square = (rng.normal(size=(d_k, d_k)) for _ in "QK")  # (d_k, d_k) each
    dot, underflowed = underflow(params["underflow_seed"], params["underflow_dim"], params["underflow_scale"])
    tQ, tK, tV = map(torch.from_numpy, (Q, K, V))
    causal = torch.from_numpy(~causal_mask(T))  # sdpa's convention: True = takes part

    values = {
        "numpy_no_transpose": capture(lambda: Q @ K),  # (T, d_k) @ (T, d_k)
        "torch_no_transpose": capture(lambda: tQ @ tK),
        "sdpa_mask_and_causal": capture(
            lambda: F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=causal, is_causal=True)
        ),
        "square_no_transpose": square_no_transpose(Q_square, K_square),
        "underflow": underflowed,
        "overflow": overflow(dot),
        "stable": stable_against_naive(dot),
        "masked_fill_float16": masked_fill_float16(causal_mask(T)),
        "wrong_axis": wrong_axis(Q, K, V),
    }
    for name, value in values.items():
        log.info("%s: %s", name, value)
    return values


if __name__ == "__main__":
    run_experiment("errors", run)
