"""Lesson 07's experiments with masks (lab/masking.py): the causal average, the gallery, the convention trap
named, the leak experiment, two wrong ways to mask."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import data, masking
from tests.helpers import examples

F = torch.nn.functional


# ------------------------------------------------------------------ where the mask comes from
def test_causal_average_weights_by_hand():
    expected = np.array([[1, 0, 0, 0], [1 / 2, 1 / 2, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [1 / 4] * 4])
    np.testing.assert_allclose(masking.causal_average_weights(4), expected, rtol=0, atol=1e-16)


@given(st.integers(1, 30), st.floats(-50, 50))
def test_causal_average_is_causal_softmax_of_equal_scores(n, c):
    """Equal scores + −∞ above the diagonal + softmax = the plain causal average."""
    w = ll.attention_weights(np.full((n, n), c), d_k=1, causal=True)
    np.testing.assert_allclose(w, masking.causal_average_weights(n), atol=1e-15)


# ------------------------------------------------------------------ the gallery, against arrays by hand
def test_mask_gallery_against_hand_written_arrays():
    g = masking.mask_gallery(5, lengths=(5, 3, 2), window=2)
    assert list(g) == ["causal", "padding", "causal + padding", "sliding window"]
    causal = [[1, 0, 0, 0, 0],
              [1, 1, 0, 0, 0],
              [1, 1, 1, 0, 0],
              [1, 1, 1, 1, 0],
              [1, 1, 1, 1, 1]]
    padding = [[[1, 1, 1, 1, 1]] * 5,
               [[1, 1, 1, 0, 0]] * 5,
               [[1, 1, 0, 0, 0]] * 5]
    causal_padding = [causal,
                      [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 0, 0]],
                      [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 0, 0, 0]]]
    window = [[1, 0, 0, 0, 0],
              [1, 1, 0, 0, 0],
              [0, 1, 1, 0, 0],
              [0, 0, 1, 1, 0],
              [0, 0, 0, 1, 1]]
    for name, expected in (("causal", causal), ("padding", padding), ("causal + padding", causal_padding),
                           ("sliding window", window)):
        assert g[name].dtype == np.bool_, name
        np.testing.assert_array_equal(g[name], np.array(expected, dtype=bool), err_msg=name)


def test_the_lessons_table_for_the_ai_rishi_is():
    tokens = data.tokenize(data.SENTENCES["ai"])
    assert tokens == ["The", "AI", "Rishi", "is"]
    table = {"The": "✓✗✗✗", "AI": "✓✓✗✗", "Rishi": "✓✓✓✗", "is": "✓✓✓✓"}   # the seed's ✓/✗ table
    m = masking.mask_gallery(4, lengths=(4,))["causal"]
    assert {t: "".join("✓" if ok else "✗" for ok in row) for t, row in zip(tokens, m)} == table


def test_mask_gallery_explains_bad_lengths():
    with pytest.raises(ValueError, match="lengths must be a list"):
        masking.mask_gallery(4, lengths=3)
    with pytest.raises(ValueError, match="does not fit in n_keys=4"):
        masking.mask_gallery(4, lengths=(5,))


# ------------------------------------------------------------------ the convention trap, named
def test_causal_mask_mistake_names_each_mistake():
    n = 5
    right = ll.causal_mask(n)
    assert masking.causal_mask_mistake(right) is None
    assert masking.causal_mask_mistake(torch.as_tensor(right)) is None
    mha_style = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)   # nn.MultiheadAttention's
    assert "inverted" in masking.causal_mask_mistake(mha_style)
    assert "inverted" in masking.causal_mask_mistake(~right)
    assert "diagonal is missing" in masking.causal_mask_mistake(np.tril(right, k=-1))
    assert "future instead of the past" in masking.causal_mask_mistake(right.T)
    assert "additive mask" in masking.causal_mask_mistake(ll.additive_mask(right))
    assert "dtype int64" in masking.causal_mask_mistake(right.astype(np.int64))
    assert "square" in masking.causal_mask_mistake(np.ones((3, 4), dtype=bool))
    broken = right.copy()
    broken[3, 1] = False
    assert "1 cell(s) differ" in masking.causal_mask_mistake(broken)
    assert "query 3, key 1" in masking.causal_mask_mistake(broken)


# ------------------------------------------------------------------ the leak experiment
@settings(max_examples=examples(50))
@given(st.integers(2, 10), st.sampled_from([(1, 4), (2, 4), (4, 8), (3, 6)]), st.integers(0, 10_000),
       st.data())
def test_causal_attention_never_leaks_the_future(L, hd, seed, draw):
    h, d = hd
    position = draw.draw(st.integers(1, L - 1))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    # scaled like trained weights: with huge scores an unmasked softmax can saturate to an exact 0
    ws = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4)]
    causal = masking.future_leak(lambda x: ll.multi_head_attention(x, *ws, n_heads=h, causal=True)[0], x,
                               position, seed=seed)
    open_ = masking.future_leak(lambda x: ll.multi_head_attention(x, *ws, n_heads=h)[0], x, position,
                                seed=seed)
    assert (causal[:position] == 0.0).all()          # exactly: not one bit moves
    assert causal[position] > 0 and (open_[:position] > 0).all()


@settings(max_examples=examples(30))
@given(st.integers(2, 12), st.integers(0, 10_000), st.data())
def test_torch_sdpa_is_causal_never_leaks_the_future(L, seed, draw):
    position = draw.draw(st.integers(1, L - 1))
    x = np.random.default_rng(seed).standard_normal((L, 8))

    def attend(x):
        t = torch.as_tensor(x)
        return F.scaled_dot_product_attention(t, t, t, is_causal=True).numpy()
    changes = masking.future_leak(attend, x, position, seed=seed + 1)
    assert changes[:position].max() < 1e-15


def test_future_leak_catches_a_mask_applied_after_the_softmax():
    """A 'causal' attention that masks the weights after softmax still leaks (through the normalisation)."""
    def after_softmax(x):
        w = ll.softmax(x @ x.T / np.sqrt(x.shape[1])) * ll.causal_mask(len(x))
        return w @ x
    x = np.random.default_rng(0).standard_normal((6, 4))
    assert masking.future_leak(after_softmax, x, 4)[:4].max() > 1e-3


def test_future_leak_explains_bad_input():
    x = np.ones((3, 2))
    with pytest.raises(ValueError, match=r"position must be a token index 0..2"):
        masking.future_leak(lambda x: x, x, 3)
    with pytest.raises(TypeError, match="attend must be a function"):
        masking.future_leak(None, x, 1)
    with pytest.raises(ValueError, match="one output row per token"):
        masking.future_leak(lambda x: x.sum(axis=0), x, 1)


# ------------------------------------------------------------------ two wrong ways to mask, measured
@settings(deadline=None, max_examples=40)
@given(st.integers(2, 9), st.integers(0, 2**16), st.floats(0.1, 5.0))
def test_of_four_recipes_only_the_wrong_ones_give_the_future_weight_or_break_the_row_sums(n, seed, spread):
    scores = np.random.default_rng(seed).normal(scale=spread, size=(n, n))
    right, zero, after, renormalised = masking.compare_masking(scores, ll.causal_mask(n))
    assert right.masked_weight == 0.0 and np.allclose(right.row_sums, 1) and right.difference == 0.0
    np.testing.assert_array_equal(right.weights, ll.attention_weights(scores, scale=1.0, causal=True))
    assert zero.masked_weight > 0 and np.allclose(zero.row_sums, 1)    # e^0 = 1: the future keeps a share
    assert after.masked_weight == 0.0 and (after.row_sums[:-1] < 1).all()     # the last row sees every key
    assert renormalised.masked_weight == 0.0 and renormalised.difference < 1e-12


def test_renormalising_after_the_softmax_divides_zero_by_zero_when_the_future_dwarfs_the_past():
    far = masking.masked_weights(np.array([[0.0, 800.0]]), np.array([[True, False]]), "after_renormalised")
    assert np.isnan(far).all()
    right = masking.masked_weights(np.array([[0.0, 800.0]]), np.array([[True, False]]))
    np.testing.assert_array_equal(right, [[1.0, 0.0]])


def test_masking_leak_moves_earlier_rows_only_with_the_wrong_recipes():
    x = data.embed_tokens(data.tokens_of_length(8), d_model=8, seed=0)
    moved = {name: masking.masking_leak(x, 5, name, seed=1)[:5].max() for name in masking.MASKING_RECIPES}
    assert moved["minus_inf"] == 0.0 and moved["after_renormalised"] < 1e-12
    assert moved["zero"] > 1e-3 and moved["after"] > 1e-3
    assert masking.leak_claim([0.0, 1e-17]) == "none (below 1e-12)"
    assert masking.leak_claim([0.25]) == "up to 0.250"


def test_masking_recipes_explain_bad_input():
    with pytest.raises(ValueError, match="recipe must be one of 'minus_inf'"):
        masking.masked_weights(np.zeros((2, 2)), ll.causal_mask(2), "minus infinity")
    with pytest.raises(TypeError, match="boolean mask"):
        masking.masked_weights(np.zeros((2, 2)), None)
    with pytest.raises(ValueError, match="does not broadcast"):
        masking.compare_masking(np.zeros((2, 3)), ll.causal_mask(2))
    with pytest.raises(ValueError, match="below must be a bound"):
        masking.leak_claim([0.1], below=2)
