"""Lesson 06's experiments with heads (lab/heads.py): the shape stages, their cost, heads built by hand."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import data, heads


# ------------------------------------------------------------------ shape stages
@pytest.mark.parametrize("L,d,h", [(4, 8, 2), (5, 12, 3), (1, 6, 6), (7, 16, 1)])
def test_shape_stages_are_the_shapes_the_code_produces(L, d, h):
    """Run the stages' code literally and compare every shape with the table."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = rng.standard_normal((4, d, d)) / np.sqrt(d)
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
    table = heads.shape_stages(L, d, h)
    assert [shape for _, _, shape in table] == [a.shape for a in produced]
    np.testing.assert_array_equal(heads_q, ll.split_heads(q, h))
    np.testing.assert_allclose(output, ll.multi_head_attention(x, w_q, w_k, w_v, w_o, h)[0], atol=1e-12)


def test_shape_stages_refuses_heads_that_do_not_divide():
    with pytest.raises(ValueError, match=r"n_heads=3 does not divide d_model=8.*\[1, 2, 4, 8\]"):
        heads.shape_stages(4, 8, 3)


# ------------------------------------------------------------------ cost
@pytest.mark.parametrize("d", [12, 64, 96])
def test_cost_of_heads_is_the_cost_of_one_big_head(d):
    L = 32
    one = heads.multi_head_cost(L, d, 1)
    for h in [h for h in range(1, d + 1) if d % h == 0]:
        many = heads.multi_head_cost(L, d, h)
        assert many["params"] == one["params"] == 4 * d * d   # W_Q, W_K, W_V, W_O
        for stage in ("Q, K, V projections", "scores Q·Kᵀ", "weights·V", "output projection W_O"):
            assert many["flops"][stage] == one["flops"][stage], stage
        assert many["flops"]["softmax"] == h * one["flops"]["softmax"]
        assert many["attention_entries"] == h * L * L


def test_cost_counts_the_products_of_the_shape_stages():
    """FLOPs of each product = 2 · (output size) · (inner size), read off the shapes."""
    L, d, h = 10, 12, 3
    shapes = {name: shape for name, _, shape in heads.shape_stages(L, d, h)}
    cost = heads.multi_head_cost(L, d, h)["flops"]
    dh = d // h
    assert cost["scores Q·Kᵀ"] == 2 * np.prod(shapes["scores per head"]) * dh
    assert cost["weights·V"] == 2 * np.prod(shapes["head outputs"]) * L
    assert cost["Q, K, V projections"] == 3 * 2 * np.prod(shapes["queries Q = X·W_Q"]) * d
    assert cost["output projection W_O"] == 2 * np.prod(shapes["output = Concat(heads)·W_O"]) * d


def test_cost_with_full_width_heads_grows_with_the_heads():
    plain = heads.multi_head_cost(16, 64, 8)
    wide = heads.multi_head_cost(16, 64, 8, d_head=64)
    assert wide["params"] == 8 * plain["params"]
    with pytest.raises(ValueError, match="does not divide"):
        heads.multi_head_cost(16, 64, 5)


# ------------------------------------------------------------------ hand-built heads
def test_handmade_heads_look_where_they_are_built_to_look():
    tokens = data.tokenize(data.SENTENCES["tired"])
    hand = heads.handmade_heads(tokens, "animal")
    subject = tokens.index("animal")
    L = len(tokens)
    out, w = ll.multi_head_attention(hand["x"], hand["w_q"], hand["w_k"], hand["w_v"], hand["w_o"],
                                     hand["n_heads"])
    prev, subj, unif = w
    assert hand["head_names"] == ("previous token", "subject", "uniform")
    np.testing.assert_allclose(prev[0], 1 / L)                 # "The" has no previous token
    assert (np.argmax(prev[1:], axis=1) == np.arange(L - 1)).all()
    assert prev[np.arange(1, L), np.arange(L - 1)].min() > 0.99
    assert (np.argmax(subj, axis=1) == subject).all() and subj[:, subject].min() > 0.99
    np.testing.assert_allclose(unif, 1 / L, atol=1e-15)
    # W_V copies the key's position and W_O is the identity: each head's output block is its weights
    d_head = hand["x"].shape[1] // 3
    for k in range(3):
        np.testing.assert_allclose(out[:, k * d_head:k * d_head + L], w[k], atol=1e-15)


def test_handmade_heads_sharpness_sets_the_scaled_score():
    tokens = ["a", "b", "c"]
    hand = heads.handmade_heads(tokens, 1, sharpness=2.0)
    _, w = ll.multi_head_attention(hand["x"], hand["w_q"], hand["w_k"], hand["w_v"], hand["w_o"], 3)
    # the subject's scaled score is 2, the others 0: weight e² / (e² + 2)
    np.testing.assert_allclose(w[1][:, 1], np.e ** 2 / (np.e ** 2 + 2))


def test_handmade_heads_explain_bad_input():
    with pytest.raises(TypeError, match="list of words"):
        heads.handmade_heads("The cat sat", 0)
    with pytest.raises(ValueError, match="'dog' is not one of the tokens"):
        heads.handmade_heads(["the", "cat"], "dog")
    with pytest.raises(ValueError, match="at least 2 tokens"):
        heads.handmade_heads(["cat"], 0)
    with pytest.raises(ValueError, match="index 0..1"):
        heads.handmade_heads(["the", "cat"], 5)
