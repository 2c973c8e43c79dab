"""Scaled dot-product and multi-head attention, from scratch in NumPy.

A line-by-line reading of section 3.2 of "Attention Is All You Need":

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Shapes use T for sequence length, d_k for the key width, h for heads.
Masks are boolean and True means "masked out": the position's score is set
to -inf before the softmax, so its weight comes out exactly 0.
"""

import math

import numpy as np


def softmax(x, axis=-1):
    """Softmax along `axis`; subtracting the max keeps exp from overflowing."""
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Q: (..., Tq, d_k)  K: (..., Tk, d_k)  V: (..., Tk, d_v)
    mask: bool, broadcastable to (..., Tq, Tk); True = masked out.
    Returns the output (..., Tq, d_v) and the weights (..., Tq, Tk).
    """
    d_k = Q.shape[-1]
    # math.sqrt, not np.sqrt: a NumPy float64 would promote float32 inputs.
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)  # (..., Tq, Tk)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def causal_mask(T):
    """(T, T) bool, True above the diagonal: position i cannot see j > i."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def split_heads(X, h):
    """(T, d_model) -> (h, T, d_model // h); head i gets columns i*dh..(i+1)*dh-1."""
    T, d_model = X.shape
    return X.reshape(T, h, d_model // h).transpose(1, 0, 2)


def merge_heads(X):
    """(h, T, dh) -> (T, h * dh), the inverse of split_heads."""
    h, T, dh = X.shape
    return X.transpose(1, 0, 2).reshape(T, h * dh)


def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, h, causal=False):
    """X_q: (Tq, d_model) queries' sequence; X_kv: (Tk, d_model) keys' and
    values' sequence (pass X_q again for self-attention).
    W_q, W_k, W_v, W_o: (d_model, d_model), full projections; each head
    reads its own block of columns.
    Returns the output (Tq, d_model) and the weights (h, Tq, Tk).
    """
    Q = split_heads(X_q @ W_q, h)  # (h, Tq, dh)
    K = split_heads(X_kv @ W_k, h)  # (h, Tk, dh)
    V = split_heads(X_kv @ W_v, h)  # (h, Tk, dh)
    mask = causal_mask(len(X_q)) if causal else None
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    return merge_heads(heads) @ W_o, weights  # (Tq, d_model), (h, Tq, Tk)


def attention_row_by_row(Q, K, V):
    """The same as scaled_dot_product_attention(Q, K, V)[0] for 2-D inputs,
    one query at a time: Q (Tq, d_k), K (Tk, d_k), V (Tk, d_v) -> (Tq, d_v).
    Slow on purpose; it is the baseline of the timing experiment.
    """
    d_k = Q.shape[-1]
    out = np.empty((Q.shape[0], V.shape[-1]), dtype=np.result_type(Q, V))
    for i, q in enumerate(Q):
        scores = K @ q / math.sqrt(d_k)  # (Tk,)
        out[i] = softmax(scores) @ V
    return out


def attention_row_by_row_methods(Q, K, V):
    """attention_row_by_row with its softmax spelt in the array's methods,
    scores.max() and e.sum(), where softmax() calls np.max and np.sum: the
    same arithmetic in the same order (the outputs are equal), with fewer
    Python-level calls per query. Q (Tq, d_k), K (Tk, d_k), V (Tk, d_v)
    -> (Tq, d_v). The timing experiment times both spellings.
    """
    d_k = Q.shape[-1]
    out = np.empty((Q.shape[0], V.shape[-1]), dtype=np.result_type(Q, V))
    for i, q in enumerate(Q):
        scores = K @ q / math.sqrt(d_k)  # (Tk,)
        e = np.exp(scores - scores.max())  # (Tk,)
        out[i] = (e / e.sum()) @ V
    return out
