"""Lesson 06's library: split/merge, per-head matrices, agreement with torch, cost, hand-built heads."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.core import multihead
from lessons_lib.lab import data
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


# ------------------------------------------------------------------ shape stages
@pytest.mark.parametrize("L,d,h", [(4, 8, 2), (5, 12, 3), (1, 6, 6), (7, 16, 1)])
def test_shape_stages_are_the_shapes_the_code_produces(L, d, h):
    """Run the stages' code literally and compare every shape with the table."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    q = x @ w_q
    view = q.reshape(L, h, d // h)
    heads_q = view.transpose(1, 0, 2)
    heads_k = (x @ w_k).reshape(L, h, d // h).transpose(1, 0, 2)
    heads_v = (x @ w_v).reshape(L, h, d // h).transpose(1, 0, 2)
    scores = heads_q @ heads_k.transpose(0, 2, 1) / np.sqrt(d // h)
    weights = ll.softmax(scores)
    out_heads = weights @ heads_v
    back = out_heads.transpose(1, 0, 2)
    concat = back.reshape(L, d)
    output = concat @ w_o
    produced = [x, q, view, heads_q, scores, weights, out_heads, back, concat, output]
    table = multihead.shape_stages(L, d, h)
    assert [shape for _, _, shape in table] == [a.shape for a in produced]
    np.testing.assert_array_equal(heads_q, ll.split_heads(q, h))
    np.testing.assert_allclose(output, ll.multi_head_attention(x, w_q, w_k, w_v, w_o, h)[0], atol=1e-12)


def test_shape_stages_refuses_heads_that_do_not_divide():
    with pytest.raises(ValueError, match=r"n_heads=3 does not divide d_model=8.*\[1, 2, 4, 8\]"):
        multihead.shape_stages(4, 8, 3)


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


# ------------------------------------------------------------------ agreement with torch
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


# ------------------------------------------------------------------ cost
@pytest.mark.parametrize("d", [12, 64, 96])
def test_cost_of_heads_is_the_cost_of_one_big_head(d):
    L = 32
    one = multihead.multi_head_cost(L, d, 1)
    for h in [h for h in range(1, d + 1) if d % h == 0]:
        many = multihead.multi_head_cost(L, d, h)
        assert many["params"] == one["params"] == 4 * d * d   # W_Q, W_K, W_V, W_O
        for stage in ("Q, K, V projections", "scores Q·Kᵀ", "weights·V", "output projection W_O"):
            assert many["flops"][stage] == one["flops"][stage], stage
        assert many["flops"]["softmax"] == h * one["flops"]["softmax"]
        assert many["attention_entries"] == h * L * L


def test_cost_counts_the_products_of_the_shape_stages():
    """FLOPs of each product = 2 · (output size) · (inner size), read off the shapes."""
    L, d, h = 10, 12, 3
    shapes = {name: shape for name, _, shape in multihead.shape_stages(L, d, h)}
    cost = multihead.multi_head_cost(L, d, h)["flops"]
    dh = d // h
    assert cost["scores Q·Kᵀ"] == 2 * np.prod(shapes["scores per head"]) * dh
    assert cost["weights·V"] == 2 * np.prod(shapes["head outputs"]) * L
    assert cost["Q, K, V projections"] == 3 * 2 * np.prod(shapes["queries Q = X·W_Q"]) * d
    assert cost["output projection W_O"] == 2 * np.prod(shapes["output = Concat(heads)·W_O"]) * d


def test_cost_with_full_width_heads_grows_with_the_heads():
    plain = multihead.multi_head_cost(16, 64, 8)
    wide = multihead.multi_head_cost(16, 64, 8, d_head=64)
    assert wide["params"] == 8 * plain["params"]
    with pytest.raises(ValueError, match="does not divide"):
        multihead.multi_head_cost(16, 64, 5)


# ------------------------------------------------------------------ hand-built heads
def test_handmade_heads_look_where_they_are_built_to_look():
    tokens = data.tokenize(data.SENTENCES["tired"])
    heads = multihead.handmade_heads(tokens, "animal")
    subject = tokens.index("animal")
    L = len(tokens)
    out, w = ll.multi_head_attention(heads["x"], heads["w_q"], heads["w_k"], heads["w_v"], heads["w_o"],
                                     heads["n_heads"])
    prev, subj, unif = w
    assert heads["head_names"] == ("previous token", "subject", "uniform")
    np.testing.assert_allclose(prev[0], 1 / L)                 # "The" has no previous token
    assert (np.argmax(prev[1:], axis=1) == np.arange(L - 1)).all()
    assert prev[np.arange(1, L), np.arange(L - 1)].min() > 0.99
    assert (np.argmax(subj, axis=1) == subject).all() and subj[:, subject].min() > 0.99
    np.testing.assert_allclose(unif, 1 / L, atol=1e-15)
    # W_V copies the key's position and W_O is the identity: each head's output block is its weights
    d_head = heads["x"].shape[1] // 3
    for k in range(3):
        np.testing.assert_allclose(out[:, k * d_head:k * d_head + L], w[k], atol=1e-15)


def test_handmade_heads_sharpness_sets_the_scaled_score():
    tokens = ["a", "b", "c"]
    heads = multihead.handmade_heads(tokens, 1, sharpness=2.0)
    _, w = ll.multi_head_attention(heads["x"], heads["w_q"], heads["w_k"], heads["w_v"], heads["w_o"], 3)
    # the subject's scaled score is 2, the others 0: weight e² / (e² + 2)
    np.testing.assert_allclose(w[1][:, 1], np.e ** 2 / (np.e ** 2 + 2))


def test_handmade_heads_explain_bad_input():
    with pytest.raises(TypeError, match="list of words"):
        multihead.handmade_heads("The cat sat", 0)
    with pytest.raises(ValueError, match="'dog' is not one of the tokens"):
        multihead.handmade_heads(["the", "cat"], "dog")
    with pytest.raises(ValueError, match="at least 2 tokens"):
        multihead.handmade_heads(["cat"], 0)
    with pytest.raises(ValueError, match="index 0..1"):
        multihead.handmade_heads(["the", "cat"], 5)
