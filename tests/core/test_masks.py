"""Masks and multi-head attention (the tiled path is tested in test_flash.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from tests.helpers import examples


# ------------------------------------------------------------------ masks
@pytest.mark.parametrize("L,S", [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask_is_top_left_aligned_like_torch(L, S):
    expected = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0).numpy()
    np.testing.assert_array_equal(ll.causal_mask(L, S), expected)
    assert ll.causal_mask(L, S).dtype == np.bool_


def test_causal_mask_table_from_the_lesson():
    # "The AI Rishi is": every token sees itself and what came before.
    assert ll.causal_mask(4).astype(int).tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]


def test_padding_mask_from_lengths_and_bools():
    m = ll.padding_mask(lengths=[3, 1])
    assert m.shape == (2, 3, 3)
    assert m[0].all() and m[1][:, 0].all() and not m[1][:, 1:].any()
    np.testing.assert_array_equal(ll.padding_mask(np.array([True, False])), [[True, False], [True, False]])
    with pytest.raises(ValueError, match="at least one real token"):
        ll.padding_mask(lengths=[2, 0])


def test_sliding_window_mask():
    m = ll.sliding_window_mask(5, 2)
    assert m.astype(int).tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0],
                                      [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]
    both = ll.sliding_window_mask(5, 2, causal=False)
    assert (both == both.T).all() and both.sum() == 5 + 2 * 4


def test_padded_keys_get_zero_weight_and_do_not_change_outputs():
    q, k, v = ll.random_qkv(5, 4, seed=2)
    out_short, _ = ll.scaled_dot_product_attention(q[:3], k[:3], v[:3])
    out, w = ll.scaled_dot_product_attention(q, k, v, mask=ll.padding_mask(lengths=[3], n_keys=5)[0])
    np.testing.assert_allclose(out[:3], out_short, atol=1e-14)
    assert (w[:, 3:] == 0).all()


# ------------------------------------------------------------------ multi-head
def torch_mha(x, w_q, w_k, w_v, w_o, h, causal=False):
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
def test_multi_head_matches_torch(heads_and_d, L, causal, seed, batched):
    h, d = heads_and_d
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, L, d) if batched else (L, d))
    ws = [rng.standard_normal((d, d)) for _ in range(4)]
    out, weights = ll.multi_head_attention(x, *ws, n_heads=h, causal=causal)
    np.testing.assert_allclose(out, torch_mha(x, *ws, h, causal), atol=1e-10)
    assert weights.shape == (*x.shape[:-2], h, L, L)


def test_one_head_equals_single_head_attention():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 4))
    w_q, w_k, w_v, w_o = (rng.standard_normal((4, 4)) for _ in range(4))
    out, weights = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=1, causal=True)
    single, w1 = ll.scaled_dot_product_attention(*ll.project_qkv(x, w_q, w_k, w_v), causal=True)
    np.testing.assert_allclose(out, single @ w_o, atol=1e-14)
    np.testing.assert_allclose(weights[0], w1, atol=1e-15)


def test_split_and_merge_heads_are_inverse():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    heads = ll.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(heads[0, 1], x[0][:, 2:4])  # head 1 owns columns 2..3
    np.testing.assert_array_equal(ll.merge_heads(heads), x)


def test_multi_head_mask_applies_to_every_head():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 6))
    ws = [rng.standard_normal((6, 6)) for _ in range(4)]
    mask = ll.padding_mask(lengths=[3], n_keys=4)[0]
    _, weights = ll.multi_head_attention(x, *ws, n_heads=3, mask=mask)
    assert (weights[..., 3] == 0).all()
