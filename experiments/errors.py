"""Five ways attention code goes wrong, captured from the installed libraries.

Each error's type and message text are recorded exactly as this build's
NumPy and PyTorch produce them (str(exc)), so the article quotes the real
thing and notices when an upgrade rewords or removes one. An expected error
that is not raised is recorded as raised = false, not treated as a crash.

Inputs: one numpy.random.default_rng(seed) draws, in this order, Q, K, V
(n_tokens, d_k) standard normal (errors 1-3 and 5), then the float32
underflow vector a (underflow_dim, standard normal times underflow_scale);
its partner is b = -a, so that the dot product is far below zero.
"""

import logging
import warnings

import numpy as np
import torch
import torch.nn.functional as F

from articlekit.experiment.artifacts import run_experiment
from experiments.attention import causal_mask, softmax

log = logging.getLogger("experiment")

# footprint()'s memory, as measured (peak RSS at n_tokens = 2000):
CELL_BYTES = 55  # per (T, T) score: the scores, their exponentials, two normalisations


def footprint(p):
    """Estimated memory of these sizes (articlekit.experiment.footprint): the (T, T)
    scores of the wrong-axis case, Q, K, V and the underflow vector (float64
    and float32); the time is a few passes over it."""
    T = p["n_tokens"]
    return {"bytes": {"n_tokens": T * T * CELL_BYTES, "d_k": 3 * T * p["d_k"] * 8,
                      "underflow_dim": 16 * p["underflow_dim"]}}


def capture(fn):
    """Call fn; return {raised, type, message} for the exception it raises."""
    try:
        fn()
    except Exception as exc:  # whatever the library raises is the finding
        return {"raised": True, "type": type(exc).__name__, "message": str(exc)}
    return {"raised": False, "type": None, "message": None}


def underflow(rng, dim, scale):
    """Naive exp(x) / sum(exp(x)) on one float32 score that is far below 0.

    exp underflows to 0.0, so the ratio is 0/0 = nan with a RuntimeWarning;
    the max-subtracted softmax computes exp(0) = 1 instead and stays finite.
    """
    a = (rng.normal(size=dim) * scale).astype(np.float32)  # (dim,)
    b = -a  # a key pointing straight away from the query: a.b = -|a|^2 << 0
    dot = a @ b  # float32 scalar, about -dim * scale^2
    # NumPy's default error state, spelled out so that no outer setting can
    # hide the warning: underflow is silent, 0/0 warns.
    with warnings.catch_warnings(record=True) as caught, np.errstate(under="ignore", invalid="warn"):
        warnings.simplefilter("always")
        e = np.exp(dot)
        ratio = e / e
    return {
        "dot": float(dot),
        "exp": float(e),
        "ratio": float(ratio),
        "exp_float64": float(np.exp(np.float64(dot))),  # float64 underflows too
        "warning_raised": bool(caught),
        "warning_category": caught[0].category.__name__ if caught else None,
        "warning_message": str(caught[0].message) if caught else None,
        "stable_result": float(softmax(np.array([dot]))[0]),
    }


def wrong_axis(Q, K, V):
    """Softmax over the wrong axis runs silently. Scores (T, T) = Q K^T / sqrt(d_k)."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (T, T)
    e = np.exp(scores)
    w_columns = e / e.sum(axis=0)  # normalises each column: wrong
    w_rows = softmax(scores, axis=-1)  # normalises each row: right
    return {
        "axis0_row_sums": w_columns.sum(axis=-1).tolist(),
        "axis_last_row_sums": w_rows.sum(axis=-1).tolist(),
        "output_diff": float(np.max(np.abs(w_columns @ V - w_rows @ V))),
    }


def run(params):
    """params: seed, n_tokens, d_k, underflow_dim, underflow_scale."""
    T, d_k = params["n_tokens"], params["d_k"]
    rng = np.random.default_rng(params["seed"])
    Q, K, V = (rng.normal(size=(T, d_k)) for _ in "QKV")  # (T, d_k) each
    tQ, tK, tV = map(torch.from_numpy, (Q, K, V))
    causal = torch.from_numpy(~causal_mask(T))  # sdpa's convention: True = takes part

    values = {
        "numpy_no_transpose": capture(lambda: Q @ K),  # (T, d_k) @ (T, d_k)
        "torch_no_transpose": capture(lambda: tQ @ tK),
        "sdpa_mask_and_causal": capture(
            lambda: F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=causal, is_causal=True)),
        "underflow": underflow(rng, params["underflow_dim"], params["underflow_scale"]),
        "wrong_axis": wrong_axis(Q, K, V),
    }
    for name, value in values.items():
        log.info("%s: %s", name, value)
    return values


if __name__ == "__main__":
    run_experiment("errors", run)
