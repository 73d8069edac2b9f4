"""Lesson 07's library: the causal average, −∞, the gallery, the convention trap, the leak experiment."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.core import masks
from lessons_lib.lab import data
from tests.helpers import examples

F = torch.nn.functional


# ------------------------------------------------------------------ where the mask comes from
def test_causal_average_weights_by_hand():
    expected = np.array([[1, 0, 0, 0], [1 / 2, 1 / 2, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [1 / 4] * 4])
    np.testing.assert_allclose(masks.causal_average_weights(4), expected, rtol=0, atol=1e-16)


@given(st.integers(1, 30), st.floats(-50, 50))
def test_causal_average_is_causal_softmax_of_equal_scores(n, c):
    """Equal scores + −∞ above the diagonal + softmax = the plain causal average."""
    w = ll.attention_weights(np.full((n, n), c), d_k=1, causal=True)
    np.testing.assert_allclose(w, masks.causal_average_weights(n), atol=1e-15)


def test_additive_mask_is_zero_or_minus_infinity_and_equals_the_bool_mask():
    mask = ll.causal_mask(3)
    add = masks.additive_mask(mask)
    assert add.dtype == np.float64
    np.testing.assert_array_equal(add, [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    scores = np.random.default_rng(0).standard_normal((3, 3))
    np.testing.assert_array_equal(ll.softmax(scores + add),
                                  ll.attention_weights(scores, scale=1.0, mask=mask))
    assert np.exp(-np.inf) == 0.0
    assert masks.additive_mask(mask, np.float32).dtype == np.float32
    with pytest.raises(TypeError, match="mask must be boolean"):
        masks.additive_mask(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="float type"):
        masks.additive_mask(mask, dtype=int)


# ------------------------------------------------------------ the gallery, against arrays written by hand
def test_mask_gallery_against_hand_written_arrays():
    g = masks.mask_gallery(5, lengths=(5, 3, 2), window=2)
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
    m = masks.mask_gallery(4, lengths=(4,))["causal"]
    assert {t: "".join("✓" if ok else "✗" for ok in row) for t, row in zip(tokens, m)} == table


def test_mask_gallery_explains_bad_lengths():
    with pytest.raises(ValueError, match="lengths must be a list"):
        masks.mask_gallery(4, lengths=3)
    with pytest.raises(ValueError, match="does not fit in n_keys=4"):
        masks.mask_gallery(4, lengths=(5,))


# ------------------------------------------------------------------ bottom-right alignment
@pytest.mark.filterwarnings("ignore:Lower right causal bias will produce NaNs")
@given(st.integers(1, 12), st.integers(1, 12))
def test_bottom_right_causal_mask_matches_torch_causal_lower_right(L, S):
    from torch.nn.attention.bias import causal_lower_right

    expected = causal_lower_right(L, S)._materialize().numpy()
    np.testing.assert_array_equal(masks.bottom_right_causal_mask(L, S), expected)
    if L == S:
        np.testing.assert_array_equal(masks.bottom_right_causal_mask(L, S), ll.causal_mask(L, S))


def test_is_causal_in_torch_sdpa_is_top_left_aligned():
    rng = np.random.default_rng(0)
    q, k, v = (torch.as_tensor(rng.standard_normal(s)) for s in ((1, 2, 8), (1, 5, 8), (1, 5, 8)))
    top_left = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.as_tensor(ll.causal_mask(2, 5)))
    lower_right = torch.as_tensor(masks.bottom_right_causal_mask(2, 5))
    bottom_right = F.scaled_dot_product_attention(q, k, v, attn_mask=lower_right)
    is_causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(is_causal, top_left, rtol=0, atol=1e-14)
    assert (is_causal - bottom_right).abs().max() > 0.1


# ------------------------------------------------------------------ the convention trap
def test_causal_mask_mistake_names_each_mistake():
    n = 5
    right = ll.causal_mask(n)
    assert masks.causal_mask_mistake(right) is None
    assert masks.causal_mask_mistake(torch.as_tensor(right)) is None
    mha_style = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)   # nn.MultiheadAttention's
    assert "inverted" in masks.causal_mask_mistake(mha_style)
    assert "inverted" in masks.causal_mask_mistake(~right)
    assert "diagonal is missing" in masks.causal_mask_mistake(np.tril(right, k=-1))
    assert "future instead of the past" in masks.causal_mask_mistake(right.T)
    assert "additive mask" in masks.causal_mask_mistake(masks.additive_mask(right))
    assert "dtype int64" in masks.causal_mask_mistake(right.astype(np.int64))
    assert "square" in masks.causal_mask_mistake(np.ones((3, 4), dtype=bool))
    broken = right.copy()
    broken[3, 1] = False
    assert "1 cell(s) differ" in masks.causal_mask_mistake(broken)
    assert "query 3, key 1" in masks.causal_mask_mistake(broken)


@settings(max_examples=examples(25))
@given(st.integers(1, 8), st.sampled_from([(1, 4), (2, 4), (4, 8)]), st.integers(0, 10_000))
def test_sdpa_true_means_attend_and_multiheadattention_true_means_blocked(L, hd, seed):
    """The same causal attention in both conventions: SDPA gets m, nn.MultiheadAttention gets ~m."""
    h, d = hd
    rng = np.random.default_rng(seed)
    x = torch.as_tensor(rng.standard_normal((1, L, d)))
    m = torch.as_tensor(ll.causal_mask(L))
    mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=torch.float64)
    theirs, _ = mha(x, x, x, attn_mask=~m)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    q, k, v = ((x @ w.T).view(1, L, h, d // h).transpose(1, 2) for w in (w_q, w_k, w_v))
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    merged = heads.transpose(1, 2).reshape(1, L, d)
    torch.testing.assert_close(mha.out_proj(merged), theirs, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True), heads,
                               rtol=1e-12, atol=1e-12)


def test_the_trap_an_sdpa_mask_given_to_multiheadattention_leaks_and_gives_nan():
    L, d = 4, 4
    x = torch.as_tensor(np.random.default_rng(1).standard_normal((1, L, d)))
    mha = torch.nn.MultiheadAttention(d, 1, bias=False, batch_first=True, dtype=torch.float64)
    _, w = mha(x, x, x, attn_mask=torch.as_tensor(ll.causal_mask(L)))   # wrong convention
    w = w[0].detach().numpy()
    assert np.isnan(w[-1]).all()          # the last token may "see" nothing: NaN
    assert w[0, 1:].sum() > 0.99          # the first token sees only the future


# ------------------------------------------------------------------ a row with nothing to attend to
def test_a_row_with_nothing_to_attend_to_is_zero_here_and_in_sdpa():
    q, k, v = ll.random_qkv(4, 8, seed=3)
    mask = np.ones((4, 4), dtype=bool)
    mask[0] = False
    out, w = ll.scaled_dot_product_attention(q, k, v, mask=mask)
    assert not np.isnan(out).any() and (out[0] == 0).all() and (w[0] == 0).all()
    tq, tk, tv, tmask = (torch.as_tensor(a) for a in (q, k, v, mask))
    sdpa = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask)
    assert (sdpa[0] == 0).all()
    np.testing.assert_allclose(sdpa.numpy(), out, atol=1e-12)


def test_is_causal_together_with_a_mask_depends_on_the_sdpa_kernel():
    """torch 2.13 on the CPU: the flash kernel (4-D inputs) ANDs them; the math kernel refuses."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    # (batch, heads, L, d): 4-D inputs, which the CPU flash kernel takes
    q, k, v = (torch.as_tensor(a).view(1, 1, 4, 8) for a in ll.random_qkv(4, 8, seed=4))
    pad = torch.as_tensor(ll.padding_mask(lengths=[3], n_keys=4)[0])
    both = F.scaled_dot_product_attention(q, k, v, attn_mask=pad, is_causal=True)
    anded = F.scaled_dot_product_attention(q, k, v, attn_mask=pad & torch.as_tensor(ll.causal_mask(4)))
    torch.testing.assert_close(both, anded, rtol=0, atol=1e-14)
    with sdpa_kernel([SDPBackend.MATH]), pytest.raises(RuntimeError, match="attn_mask should not be set"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=pad, is_causal=True)
    with pytest.raises(RuntimeError, match="attn_mask should not be set"):   # 3-D inputs: the math kernel
        F.scaled_dot_product_attention(q[0], k[0], v[0], attn_mask=pad, is_causal=True)


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
    causal = masks.future_leak(lambda x: ll.multi_head_attention(x, *ws, n_heads=h, causal=True)[0], x,
                               position, seed=seed)
    open_ = masks.future_leak(lambda x: ll.multi_head_attention(x, *ws, n_heads=h)[0], x, position, seed=seed)
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
    changes = masks.future_leak(attend, x, position, seed=seed + 1)
    assert changes[:position].max() < 1e-15


def test_future_leak_catches_a_mask_applied_after_the_softmax():
    """A 'causal' attention that masks the weights after softmax still leaks (through the normalisation)."""
    def after_softmax(x):
        w = ll.softmax(x @ x.T / np.sqrt(x.shape[1])) * ll.causal_mask(len(x))
        return w @ x
    x = np.random.default_rng(0).standard_normal((6, 4))
    assert masks.future_leak(after_softmax, x, 4)[:4].max() > 1e-3


# ------------------------------------------------------------------ two wrong ways to mask, measured
@settings(deadline=None, max_examples=40)
@given(st.integers(2, 9), st.integers(0, 2**16), st.floats(0.1, 5.0))
def test_of_four_recipes_only_the_wrong_ones_give_the_future_weight_or_break_the_row_sums(n, seed, spread):
    scores = np.random.default_rng(seed).normal(scale=spread, size=(n, n))
    right, zero, after, renormalised = masks.compare_masking(scores, ll.causal_mask(n))
    assert right.masked_weight == 0.0 and np.allclose(right.row_sums, 1) and right.difference == 0.0
    np.testing.assert_array_equal(right.weights, ll.attention_weights(scores, scale=1.0, causal=True))
    assert zero.masked_weight > 0 and np.allclose(zero.row_sums, 1)    # e^0 = 1: the future keeps a share
    assert after.masked_weight == 0.0 and (after.row_sums[:-1] < 1).all()     # the last row sees every key
    assert renormalised.masked_weight == 0.0 and renormalised.difference < 1e-12


def test_renormalising_after_the_softmax_divides_zero_by_zero_when_the_future_dwarfs_the_past():
    far = masks.masked_weights(np.array([[0.0, 800.0]]), np.array([[True, False]]), "after_renormalised")
    assert np.isnan(far).all()
    right = masks.masked_weights(np.array([[0.0, 800.0]]), np.array([[True, False]]))
    np.testing.assert_array_equal(right, [[1.0, 0.0]])


def test_masking_leak_moves_earlier_rows_only_with_the_wrong_recipes():
    x = data.embed_tokens(data.tokens_of_length(8), d_model=8, seed=0)
    moved = {name: masks.masking_leak(x, 5, name, seed=1)[:5].max() for name in masks.MASKING_RECIPES}
    assert moved["minus_inf"] == 0.0 and moved["after_renormalised"] < 1e-12
    assert moved["zero"] > 1e-3 and moved["after"] > 1e-3
    assert masks.leak_claim([0.0, 1e-17]) == "none (below 1e-12)"
    assert masks.leak_claim([0.25]) == "up to 0.250"


def test_masking_recipes_explain_bad_input():
    with pytest.raises(ValueError, match="recipe must be one of 'minus_inf'"):
        masks.masked_weights(np.zeros((2, 2)), ll.causal_mask(2), "minus infinity")
    with pytest.raises(TypeError, match="boolean mask"):
        masks.masked_weights(np.zeros((2, 2)), None)
    with pytest.raises(ValueError, match="does not broadcast"):
        masks.compare_masking(np.zeros((2, 3)), ll.causal_mask(2))
    with pytest.raises(ValueError, match="below must be a bound"):
        masks.leak_claim([0.1], below=2)


def test_plot_masking_recipes_one_panel_per_recipe_with_each_rows_sum():
    scores = np.random.default_rng(0).normal(size=(4, 4))
    fig = ll.plot_masking_recipes(masks.compare_masking(scores, ll.causal_mask(4)), ["a", "b", "c", "d"])
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 4
    sums = [t.get_text() for t in heatmaps[2].texts if t.get_text().startswith("Σ")]
    assert len(sums) == 4 and sums[-1] == "Σ 1.00" and sums[0] != "Σ 1.00"    # "after": rows below 1
    with pytest.raises(ValueError, match="start with the right recipe"):
        ll.plot_masking_recipes(masks.compare_masking(scores, ll.causal_mask(4))[1:], ["a", "b", "c", "d"])


def test_future_leak_explains_bad_input():
    x = np.ones((3, 2))
    with pytest.raises(ValueError, match=r"position must be a token index 0..2"):
        masks.future_leak(lambda x: x, x, 3)
    with pytest.raises(TypeError, match="attend must be a function"):
        masks.future_leak(None, x, 1)
    with pytest.raises(ValueError, match="one output row per token"):
        masks.future_leak(lambda x: x.sum(axis=0), x, 1)
