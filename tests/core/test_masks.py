"""The masks of core/masks.py: True = may attend, aligned as torch aligns them, a sequence's on its heads.

``padding_mask`` returns a ``SequenceMask``: against inputs with heads, ``(B, H, L, S)``, sequence
b's mask reaches every head of sequence b (as ``mask[:, None]`` would), also when B equals H,
where torch's right-aligned rule would silently apply it per head. A raw array keeps torch's rule.
A key-padding array of 0/1 integers (``attention_mask``) or booleans is read as key padding;
lengths only through ``lengths=``. What torch does with a mask (its two conventions, a row with
nothing to attend to, ``is_causal`` beside a mask) is held here too: lesson 07 teaches it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from tests.helpers import examples

F = torch.nn.functional


# ------------------------------------------------------------------ the causal mask, aligned as in torch
@pytest.mark.parametrize("L,S", [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask_is_top_left_aligned_like_torch(L, S):
    expected = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0).numpy()
    np.testing.assert_array_equal(ll.causal_mask(L, S), expected)
    assert ll.causal_mask(L, S).dtype == np.bool_


def test_the_causal_mask_is_the_lessons_table():
    # "The AI Rishi is": every token sees itself and what came before.
    assert ll.causal_mask(4).astype(int).tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]


def test_is_causal_in_torch_sdpa_is_top_left_aligned():
    rng = np.random.default_rng(0)
    q, k, v = (torch.as_tensor(rng.standard_normal(s)) for s in ((1, 2, 8), (1, 5, 8), (1, 5, 8)))
    top_left = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.as_tensor(ll.causal_mask(2, 5)))
    lower_right = torch.as_tensor(ll.bottom_right_causal_mask(2, 5))
    bottom_right = F.scaled_dot_product_attention(q, k, v, attn_mask=lower_right)
    is_causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(is_causal, top_left, rtol=0, atol=1e-14)
    assert (is_causal - bottom_right).abs().max() > 0.1


@pytest.mark.filterwarnings("ignore:Lower right causal bias will produce NaNs")
@given(st.integers(1, 12), st.integers(1, 12))
def test_bottom_right_causal_mask_matches_torch_causal_lower_right(L, S):
    from torch.nn.attention.bias import causal_lower_right

    expected = causal_lower_right(L, S)._materialize().numpy()
    np.testing.assert_array_equal(ll.bottom_right_causal_mask(L, S), expected)
    if L == S:
        np.testing.assert_array_equal(ll.bottom_right_causal_mask(L, S), ll.causal_mask(L, S))


# ------------------------------------------------------------------ padding and sliding windows
def test_a_padding_mask_hides_the_keys_past_each_length():
    m = ll.padding_mask(lengths=[3, 1])
    assert m.shape == (2, 3, 3)
    assert m[0].all() and m[1][:, 0].all() and not m[1][:, 1:].any()
    np.testing.assert_array_equal(ll.padding_mask(np.array([True, False])), [[True, False], [True, False]])
    with pytest.raises(ValueError, match="at least one real token"):
        ll.padding_mask(lengths=[2, 0])


def test_a_sliding_window_sees_itself_and_the_tokens_just_before():
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


# ------------------------------------------------------------------ a key-padding array, or lengths
@pytest.mark.parametrize("valid", [[[1, 1, 1, 0], [1, 1, 0, 0]],
                                   [[True, True, True, False], [True, True, False, False]]],
                         ids=["0/1 ints (attention_mask)", "booleans"])
def test_a_key_padding_array_is_read_as_such(valid):
    mask = ll.padding_mask(np.array(valid))
    assert mask.shape == (2, 4, 4)
    np.testing.assert_array_equal(mask, ll.padding_mask(lengths=[3, 2], n_keys=4))


def test_an_attention_mask_of_only_ones_keeps_its_shape():
    """All ones: every key real. Read as lengths it would have been a different, silently wrong, shape."""
    assert ll.padding_mask(np.ones((2, 5), dtype=np.int64)).shape == (2, 5, 5)
    assert ll.padding_mask([1, 1, 1]).shape == (3, 3)


def test_lengths_only_where_lengths_are_asked_for():
    with pytest.raises(ValueError, match=r"lengths=") as info:
        ll.padding_mask([4, 2])
    assert "0 (or False) for padding" in str(info.value)
    with pytest.raises(TypeError, match="exactly one"):
        ll.padding_mask([1, 0], lengths=[1])
    with pytest.raises(ValueError, match="n_keys"):
        ll.padding_mask([1, 1, 0], n_keys=4)
    assert ll.padding_mask(lengths=[4, 2]).shape == (2, 4, 4)


def test_a_torch_attention_mask_is_accepted():
    hf = torch.tensor([[1, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(ll.padding_mask(hf), ll.padding_mask(lengths=[2, 1], n_keys=3))


# ------------------------------------------------------------------ a sequence's mask reaches its own heads
def _inputs(B, H, L, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((B, H, L, d)) for _ in range(3))


@settings(max_examples=examples(40))
@given(B=st.integers(1, 4), H=st.integers(1, 4), L=st.integers(2, 6), data=st.data())
def test_a_padding_mask_reaches_every_head_of_its_own_sequence(B, H, L, data):
    lengths = data.draw(st.lists(st.integers(1, L), min_size=B, max_size=B))
    q, k, v = _inputs(B, H, L, seed=B * 100 + H * 10 + L)
    mask = ll.padding_mask(lengths=lengths, n_keys=L)                     # (B, L, L)
    per_sequence = np.asarray(mask)[:, None]                              # (B, 1, L, L): what is meant
    for attend in (lambda m: ll.scaled_dot_product_attention(q, k, v, mask=m),
                   lambda m: (None, ll.attention_weights(q @ np.swapaxes(k, -1, -2), d_k=3, mask=m))):
        got, want = attend(mask), attend(per_sequence)
        for a, b in zip(got, want):
            if a is not None:
                np.testing.assert_array_equal(a, b)
    weights = ll.scaled_dot_product_attention(q, k, v, mask=mask)[1]
    for b, n in enumerate(lengths):
        assert (weights[b, :, :, n:] == 0).all()          # the padding keys of sequence b, in every head


def test_when_batch_equals_heads_the_mask_is_not_applied_per_head():
    """The report's case: lengths [4, 2] with B = H = 2 gave sequence 1's padding to head 1 of sequence 0."""
    q, k, v = _inputs(2, 2, 4)
    weights = ll.scaled_dot_product_attention(q, k, v, mask=ll.padding_mask(lengths=[4, 2]))[1]
    assert (weights[0, 1, :, 2:] > 0).all()        # sequence 0 has 4 real tokens in every head
    assert (weights[1, :, :, 2:] == 0).all()       # sequence 1 has 2, in every head


def test_a_raw_array_keeps_torchs_right_aligned_rule():
    q, k, v = _inputs(2, 2, 4)
    raw = np.asarray(ll.padding_mask(lengths=[4, 2]))          # a plain (2, 4, 4) array
    weights = ll.scaled_dot_product_attention(q, k, v, mask=raw)[1]
    assert (weights[:, 1, :, 2:] == 0).all() and (weights[0, 0, :, 2:] > 0).all()   # aligned with the heads


def test_multi_head_attention_and_torch_agree_with_a_sequence_mask():
    q, k, v = _inputs(3, 3, 5)
    mask = ll.padding_mask(lengths=[5, 3, 1])
    ours = ll.scaled_dot_product_attention(q, k, v, mask=mask)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.as_tensor(t) for t in (q, k, v)), attn_mask=torch.as_tensor(np.asarray(mask)[:, None]))
    np.testing.assert_allclose(ours[0], theirs.numpy(), atol=1e-12)
    fused = ll.sdpa_attention(q, k, v, mask=mask, device="cpu").output
    np.testing.assert_allclose(fused, ours[0], atol=1e-12)
    np.testing.assert_allclose(ll.torch_attention_with_weights(q, k, v, mask=mask)[1], ours[1], atol=1e-12)


# ------------------------------------------------------------------ the additive form, 0 or −∞
def test_additive_mask_is_zero_or_minus_infinity_and_equals_the_bool_mask():
    mask = ll.causal_mask(3)
    add = ll.additive_mask(mask)
    assert add.dtype == np.float64
    np.testing.assert_array_equal(add, [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    scores = np.random.default_rng(0).standard_normal((3, 3))
    np.testing.assert_array_equal(ll.softmax(scores + add),
                                  ll.attention_weights(scores, scale=1.0, mask=mask))
    assert np.exp(-np.inf) == 0.0
    assert ll.additive_mask(mask, np.float32).dtype == np.float32
    with pytest.raises(TypeError, match="mask must be boolean"):
        ll.additive_mask(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="float type"):
        ll.additive_mask(mask, dtype=int)


# ------------------------------------------------------------------ torch's two conventions, its edge cases
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
