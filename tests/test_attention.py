"""The from-scratch NumPy attention is the same function as PyTorch's.

Every comparison is in float64 with identical inputs, so agreement is
expected to the last few bits (atol 1e-12); a wrong axis, a missing
transpose, a misplaced mask or a misordered reshape misses by O(1).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.attention import (
    attention_row_by_row,
    attention_row_by_row_methods,
    causal_mask,
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)

ATOL = 1e-12
small = st.integers(min_value=1, max_value=9)
examples = settings(max_examples=25, deadline=None)


def normal(seed, *shape):
    return np.random.default_rng(seed).normal(size=shape)


def torch_sdpa(Q, K, V, **kwargs):
    with torch.no_grad():
        return F.scaled_dot_product_attention(*map(torch.from_numpy, (Q, K, V)), **kwargs).numpy()


def torch_mha(X_q, X_kv, W_q, W_k, W_v, W_o, h, attn_mask=None):
    """nn.MultiheadAttention loaded with our weights; its Linear layers
    compute x @ W.T, so each of our matrices goes in transposed."""
    d_model = W_q.shape[0]
    mha = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True, dtype=torch.float64)
    t = torch.from_numpy
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([t(W_q.T), t(W_k.T), t(W_v.T)]))
        mha.out_proj.weight.copy_(t(W_o.T))
        out, w = mha(
            t(X_q)[None],
            t(X_kv)[None],
            t(X_kv)[None],
            attn_mask=None if attn_mask is None else t(attn_mask),
            need_weights=True,
            average_attn_weights=False,
        )
    return out[0].numpy(), w[0].numpy()


# ---- softmax ----------------------------------------------------------------


def test_softmax_rows_sum_to_one_and_are_positive():
    w = softmax(normal(0, 6, 11))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-15)
    assert (w > 0).all()


@pytest.mark.parametrize("scale", [1e3, 1e5, 1e300])
def test_softmax_is_finite_on_huge_inputs(scale):
    x = np.array([[1.0, -2.0, 0.5], [-3.0, -1.0, -2.0]]) * scale
    # Overflow or 0/0 fails the test; exp underflowing to 0 is expected.
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        w = softmax(x)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
    assert w[0].argmax() == 0 and w[1].argmax() == 1


def test_softmax_ignores_a_constant_shift():
    x = normal(1, 4, 7)
    np.testing.assert_allclose(softmax(x + 1e4), softmax(x), atol=1e-12)


def test_softmax_normalises_the_axis_it_is_given():
    x = normal(2, 5, 5)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), 1.0)
    assert not np.allclose(softmax(x, axis=0), softmax(x, axis=-1))


# ---- scaled dot-product attention vs F.scaled_dot_product_attention ----------


@examples
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    Tq=small,
    Tk=small,
    d_k=small,
    d_v=small,
    seed=st.integers(0, 2**32 - 1),
)
def test_sdpa_matches_torch_on_random_shapes(batch, Tq, Tk, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(*batch, Tq, d_k))
    K = rng.normal(size=(*batch, Tk, d_k))
    V = rng.normal(size=(*batch, Tk, d_v))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (*batch, Tq, d_v) and w.shape == (*batch, Tq, Tk)
    np.testing.assert_allclose(out, torch_sdpa(Q, K, V), atol=ATOL, rtol=0)


@examples
@given(Tq=small, Tk=small, d=small, seed=st.integers(0, 2**32 - 1))
def test_boolean_mask_matches_torch_with_the_inverted_convention(Tq, Tk, d, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(Tq, d)), rng.normal(size=(Tk, d)), rng.normal(size=(Tk, d))
    mask = rng.random((Tq, Tk)) < 0.5  # ours: True = masked out
    mask[np.arange(Tq), rng.integers(0, Tk, Tq)] = False  # every query sees at least one key
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert (w[mask] == 0.0).all()  # -inf in, exactly 0 out
    np.testing.assert_allclose(out, torch_sdpa(Q, K, V, attn_mask=torch.from_numpy(~mask)), atol=ATOL, rtol=0)


@pytest.mark.parametrize("T", [1, 2, 5, 16])
def test_causal_mask_matches_is_causal(T):
    Q, K, V = normal(3, 3, T, 4)
    out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))
    np.testing.assert_allclose(out, torch_sdpa(Q, K, V, is_causal=True), atol=ATOL, rtol=0)
    assert (np.triu(w, k=1) == 0.0).all()
    assert ((w > 0).sum(axis=-1) == np.arange(1, T + 1)).all()  # row i sees 0..i


def test_causal_mask_blocks_exactly_the_future():
    assert causal_mask(3).tolist() == [[False, True, True], [False, False, True], [False, False, False]]


def test_cross_attention_has_one_row_per_query_and_one_column_per_key():
    Q, K, V = normal(4, 3, 7, 4)[0], normal(5, 11, 4), normal(6, 11, 3)
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (7, 3) and w.shape == (7, 11)
    np.testing.assert_allclose(out, torch_sdpa(Q, K, V), atol=ATOL, rtol=0)


def test_float32_inputs_stay_float32():
    Q, K, V = normal(7, 3, 5, 4).astype(np.float32)
    out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(5))
    assert out.dtype == np.float32 and w.dtype == np.float32
    assert attention_row_by_row(Q, K, V).dtype == np.float32


@examples
@given(Tq=small, Tk=small, d_k=small, d_v=small, seed=st.integers(0, 2**32 - 1))
def test_the_two_spellings_of_the_loop_give_the_same_bits(Tq, Tk, d_k, d_v, seed):
    """np.max / np.sum or the array's methods: the same arithmetic in the
    same order, so the timing compares spellings, not results."""
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(Tq, d_k)), rng.normal(size=(Tk, d_k)), rng.normal(size=(Tk, d_v))
    assert np.array_equal(attention_row_by_row_methods(Q, K, V), attention_row_by_row(Q, K, V))
    assert attention_row_by_row_methods(*(a.astype(np.float32) for a in (Q, K, V))).dtype == np.float32


@examples
@given(Tq=small, Tk=small, d_k=small, d_v=small, seed=st.integers(0, 2**32 - 1))
def test_row_by_row_equals_the_matrix_form(Tq, Tk, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(Tq, d_k)), rng.normal(size=(Tk, d_k)), rng.normal(size=(Tk, d_v))
    np.testing.assert_allclose(
        attention_row_by_row(Q, K, V), scaled_dot_product_attention(Q, K, V)[0], atol=ATOL, rtol=0
    )


# ---- multi-head --------------------------------------------------------------


def test_split_heads_gives_head_i_columns_i_dh_onwards_and_merge_undoes_it():
    X = np.arange(3 * 8, dtype=float).reshape(3, 8)  # T=3, d_model=8
    heads = split_heads(X, 4)  # (4, 3, 2)
    assert heads.shape == (4, 3, 2)
    for i in range(4):
        np.testing.assert_array_equal(heads[i], X[:, 2 * i : 2 * i + 2])
    np.testing.assert_array_equal(merge_heads(heads), X)


@examples
@given(
    h=st.integers(1, 4),
    d_head=st.integers(1, 4),
    Tq=small,
    Tk=small,
    causal=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_multi_head_matches_nn_multihead_attention(h, d_head, Tq, Tk, causal, seed):
    if causal:
        Tk = Tq  # a causal mask is square
    rng = np.random.default_rng(seed)
    d_model = h * d_head
    X_q, X_kv = rng.normal(size=(Tq, d_model)), rng.normal(size=(Tk, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    out, w = multi_head_attention(X_q, X_kv, *W, h, causal=causal)
    assert out.shape == (Tq, d_model) and w.shape == (h, Tq, Tk)
    ref_out, ref_w = torch_mha(X_q, X_kv, *W, h, attn_mask=causal_mask(Tq) if causal else None)
    np.testing.assert_allclose(out, ref_out, atol=ATOL, rtol=0)
    np.testing.assert_allclose(w, ref_w, atol=ATOL, rtol=0)


def test_each_head_is_single_head_attention_on_its_columns():
    h, T, d_model = 4, 5, 16
    dh = d_model // h
    X = normal(8, T, d_model)
    W_q, W_k, W_v = normal(9, 3, d_model, d_model)
    concat, w = multi_head_attention(X, X, W_q, W_k, W_v, np.eye(d_model), h)  # W_o = I: heads side by side
    for i in range(h):
        cols = slice(i * dh, (i + 1) * dh)
        out_i, w_i = scaled_dot_product_attention((X @ W_q)[:, cols], (X @ W_k)[:, cols], (X @ W_v)[:, cols])
        np.testing.assert_allclose(concat[:, cols], out_i, atol=ATOL)
        np.testing.assert_allclose(w[i], w_i, atol=ATOL)
