"""Multi-head attention (core/multihead.py): split and merge, per-head matrices, agreement with torch.

What lesson 06 does with heads (the shape stages, the cost, heads built by hand) is tested in
tests/lab/test_heads.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.core import multihead
from tests.helpers import examples

# (n_heads, d_model) pairs where the heads divide d_model
HEADS_AND_WIDTH = st.sampled_from([(1, 4), (2, 4), (4, 8), (3, 6), (8, 16), (2, 10)])


def _weights(rng, d):
    return [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4)]


# ------------------------------------------------------------------ split / merge
@settings(max_examples=examples(60))
@given(HEADS_AND_WIDTH, st.integers(1, 9), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 10_000))
def test_split_then_merge_is_the_identity_and_back(heads_and_width, L, batch, seed):
    h, d = heads_and_width
    x = np.random.default_rng(seed).standard_normal((*batch, L, d))
    heads = ll.split_heads(x, h)
    assert heads.shape == (*batch, h, L, d // h)
    np.testing.assert_array_equal(ll.merge_heads(heads), x)
    np.testing.assert_array_equal(ll.split_heads(ll.merge_heads(heads), h), heads)


def test_split_heads_gives_head_i_the_columns_i_times_d_head():
    x = np.arange(3 * 12, dtype=float).reshape(3, 12)
    heads = ll.split_heads(x, 4)
    for i in range(4):
        np.testing.assert_array_equal(heads[i], x[:, 3 * i:3 * (i + 1)])


# ------------------------------------------------------------------ 1 head = single head
@settings(max_examples=examples(40))
@given(st.integers(1, 9), st.sampled_from([1, 2, 5, 8]), st.booleans(), st.integers(0, 10_000))
def test_one_head_is_single_head_attention(L, d, causal, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    out, weights = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=1, causal=causal)
    single, w1 = ll.scaled_dot_product_attention(*ll.project_qkv(x, w_q, w_k, w_v), causal=causal)
    np.testing.assert_allclose(out, single @ w_o, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(weights[0], w1, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ one big W_Q = separate W_Q per head
@settings(max_examples=examples(40))
@given(HEADS_AND_WIDTH, st.integers(1, 8), st.booleans(), st.integers(0, 10_000))
def test_one_big_projection_split_into_heads_equals_separate_per_head_projections(hd, L, causal, seed):
    h, d = hd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    per_head = [multihead.split_projection(w, h) for w in (w_q, w_k, w_v)]
    assert per_head[0].shape == (h, d, d // h)
    for i in range(h):  # X·W_Q^i is head i's slice of X·W_Q
        np.testing.assert_allclose(x @ per_head[0][i], ll.split_heads(x @ w_q, h)[i], atol=1e-13)
    big_out, big_w = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, h, causal=causal)
    loop_out, loop_w = multihead.multi_head_attention_per_head(x, *per_head, w_o, causal=causal)
    np.testing.assert_allclose(loop_out, big_out, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(loop_w, big_w, rtol=1e-11, atol=1e-13)


def test_split_projection_takes_blocks_of_columns():
    w = np.arange(4 * 8, dtype=float).reshape(4, 8)
    blocks = multihead.split_projection(w, 2)
    np.testing.assert_array_equal(blocks[0], w[:, :4])
    np.testing.assert_array_equal(blocks[1], w[:, 4:])


def test_per_head_attention_explains_bad_shapes():
    x = np.ones((3, 4))
    good = np.ones((2, 4, 2))
    with pytest.raises(ValueError, match=r"W_K heads must be \(n_heads, d_model, d_head\) with d_model=4"):
        multihead.multi_head_attention_per_head(x, good, np.ones((2, 5, 2)), good, np.eye(4))
    with pytest.raises(ValueError, match=r"W_O has 3 rows but the concatenated heads have .* = 4"):
        multihead.multi_head_attention_per_head(x, good, good, good, np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"same shape"):
        multihead.multi_head_attention_per_head(x, good, np.ones((2, 4, 3)), good, np.eye(4))


# ------------------------------------------------------------------ a mask reaches every head
def test_multi_head_mask_applies_to_every_head():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 6))
    ws = [rng.standard_normal((6, 6)) for _ in range(4)]
    mask = ll.padding_mask(lengths=[3], n_keys=4)[0]
    _, weights = ll.multi_head_attention(x, *ws, n_heads=3, mask=mask)
    assert (weights[..., 3] == 0).all()


# ------------------------------------------------------------------ agreement with torch
def _torch_sdpa_heads(x, w_q, w_k, w_v, w_o, h, causal=False):
    """Multi-head attention written with torch SDPA, heads as in nanoGPT."""
    tx = torch.as_tensor(x)
    L, d = tx.shape[-2:]

    def heads(t):
        return t.view(*t.shape[:-1], h, d // h).transpose(-2, -3)
    q, k, v = (heads(tx @ torch.as_tensor(w)) for w in (w_q, w_k, w_v))
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return (o.transpose(-2, -3).reshape(*tx.shape[:-1], d) @ torch.as_tensor(w_o)).numpy()


@settings(max_examples=examples(40))
@given(st.sampled_from([(1, 4), (2, 4), (4, 8), (3, 6)]), st.integers(1, 7), st.booleans(),
       st.integers(0, 1000), st.booleans())
def test_multi_head_attention_matches_heads_written_with_torch_sdpa(heads_and_d, L, causal, seed, batched):
    h, d = heads_and_d
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, L, d) if batched else (L, d))
    ws = [rng.standard_normal((d, d)) for _ in range(4)]
    out, weights = ll.multi_head_attention(x, *ws, n_heads=h, causal=causal)
    np.testing.assert_allclose(out, _torch_sdpa_heads(x, *ws, h, causal), atol=1e-10)
    assert weights.shape == (*x.shape[:-2], h, L, L)


def _torch_mha(d, h, w_q, w_k, w_v, w_o):
    """nn.MultiheadAttention carrying our weights. torch computes x·Wᵀ, so it stores W transposed."""
    mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.as_tensor(np.concatenate([w_q.T, w_k.T, w_v.T])))
        mha.out_proj.weight.copy_(torch.as_tensor(w_o.T))
    return mha


@settings(max_examples=examples(40))
@given(HEADS_AND_WIDTH, st.integers(1, 8), st.sampled_from(["none", "causal", "padding"]),
       st.integers(0, 10_000))
def test_multi_head_attention_agrees_with_torch_nn_multiheadattention(hd, L, masking, seed):
    h, d = hd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, L, d))
    ws = _weights(rng, d)
    mask = {"none": None, "causal": ll.causal_mask(L),
            "padding": ll.padding_mask(lengths=[L], n_keys=L)[0] & (np.arange(L) < max(1, L - 2))}[masking]
    ours, our_w = ll.multi_head_attention(x, *ws, n_heads=h, mask=mask)
    tx = torch.as_tensor(x)
    # nn.MultiheadAttention's bool attn_mask means True = NOT allowed: the opposite of ours
    blocked = None if mask is None else torch.as_tensor(~mask)
    theirs, their_w = _torch_mha(d, h, *ws)(tx, tx, tx, attn_mask=blocked, need_weights=True,
                                            average_attn_weights=False)
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_w, their_w.detach().numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=examples(25))
@given(HEADS_AND_WIDTH, st.integers(1, 8), st.booleans(), st.integers(0, 10_000))
def test_multi_head_attention_agrees_with_multi_head_attention_forward(hd, L, causal, seed):
    h, d = hd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    ours, our_w = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=h, causal=causal)
    tx = torch.as_tensor(x)[:, None, :]   # (L, batch=1, d): the function's sequence-first layout
    t = {name: torch.as_tensor(w.T.copy()) for name, w in (("q", w_q), ("k", w_k), ("v", w_v), ("o", w_o))}
    blocked = torch.as_tensor(~ll.causal_mask(L)) if causal else None
    out, w = torch.nn.functional.multi_head_attention_forward(
        tx, tx, tx, d, h, in_proj_weight=None, in_proj_bias=None, bias_k=None, bias_v=None,
        add_zero_attn=False, dropout_p=0.0, out_proj_weight=t["o"], out_proj_bias=None, training=False,
        need_weights=True, attn_mask=blocked, use_separate_proj_weight=True, q_proj_weight=t["q"],
        k_proj_weight=t["k"], v_proj_weight=t["v"], average_attn_weights=False)
    np.testing.assert_allclose(ours, out[:, 0].numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_w, w[0].numpy(), rtol=1e-10, atol=1e-12)
