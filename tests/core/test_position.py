"""Positions (notebook 11): sinusoids, RoPE and ALiBi, by their properties and against their sources.

The properties that make each one what it is (a rotation keeps lengths and turns by 0 at position 0; the
score of a rotated query and key depends on their offset only; the two layouts are one permutation apart;
two sinusoid rows meet by their distance), then the agreement with what real code computes: Llama's
``apply_rotary_pos_emb`` and a whole ``LlamaAttention`` of transformers (a tiny random config, built in
code, offline) in float64, the RoFormer / GPT-J formula written out, and BLOOM's ALiBi slopes.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lessons_lib as ll
from tests.helpers import examples, require

TIGHT = 1e-12


def _vectors(n, d):
    return hnp.arrays(np.float64, (n, d), elements=st.floats(-3, 3, allow_nan=False, width=64))


def _even(lo=2, hi=24):
    return st.integers(lo // 2, hi // 2).map(lambda h: 2 * h)


# ------------------------------------------------------------------ sinusoids (§3.5)
def test_sinusoids_are_the_papers_formula_entry_by_entry():
    pe = ll.sinusoidal_positions(9, 6)
    for pos in range(9):
        for i in range(3):
            omega = 1 / 10000 ** (2 * i / 6)
            assert pe[pos, 2 * i] == pytest.approx(np.sin(pos * omega), abs=1e-15)
            assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(pos * omega), abs=1e-15)
    assert pe.shape == (9, 6) and pe.dtype == np.float64
    np.testing.assert_array_equal(ll.positional_encoding(9, 6), pe)   # the older name: the same formula


@settings(max_examples=examples(40))
@given(st.integers(2, 40), _even(2, 32), st.integers(0, 30))
def test_two_sinusoid_rows_meet_by_their_distance_only(n, d, shift):
    pe = ll.sinusoidal_positions(n + shift, d)
    near = pe[:n] @ pe[:n].T
    far = pe[shift:] @ pe[shift:].T
    np.testing.assert_allclose(near, far, atol=1e-11)
    m, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    np.testing.assert_allclose(near, np.cos((m - k)[..., None] * omega).sum(-1), atol=1e-11)


# ------------------------------------------------------------------ RoPE: properties
@settings(max_examples=examples(60))
@given(_vectors(5, 8), st.lists(st.integers(0, 5000), min_size=5, max_size=5),
       st.sampled_from(["half", "interleaved"]), st.floats(1.5, 1e6))
def test_rope_keeps_every_rows_length(x, positions, convention, base):
    out = ll.rope(x, positions, convention=convention, base=base)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-12)
    pairs = ll.rope_pairs(8, convention)
    np.testing.assert_allclose(np.hypot(out[:, pairs[:, 0]], out[:, pairs[:, 1]]),
                               np.hypot(x[:, pairs[:, 0]], x[:, pairs[:, 1]]), atol=1e-12)   # pair by pair


@settings(max_examples=examples(30))
@given(_vectors(4, 6), st.sampled_from(["half", "interleaved"]))
def test_rope_at_position_zero_leaves_the_rows_as_they_are(x, convention):
    np.testing.assert_array_equal(ll.rope(x, np.zeros(4, int), convention=convention), x)


@settings(max_examples=examples(80))
@given(_vectors(2, 10), st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000),
       st.sampled_from(["half", "interleaved"]))
def test_the_score_of_a_rotated_query_and_key_depends_on_their_offset_only(qk, m, n, shift, convention):
    q, k = qk[:1], qk[1:]

    def score(a, b):
        return (ll.rope(q, [a], convention=convention) @ ll.rope(k, [b], convention=convention).T).item()

    scale = 1.0 + float(np.abs(q).sum() * np.abs(k).sum())
    assert abs(score(m, n) - score(m + shift, n + shift)) <= 4e-12 * scale * (1 + (m + n + shift) / 100)
    # (R_m q)·(R_n k) = q·(R_{n−m} k) for n ≥ m, and = (R_{m−n} q)·k the other way
    if n >= m:
        assert abs(score(m, n) - score(0, n - m)) <= 4e-12 * scale * (1 + (m + n) / 100)
    else:
        assert abs(score(m, n) - score(m - n, 0)) <= 4e-12 * scale * (1 + (m + n) / 100)


@settings(max_examples=examples(40))
@given(_even(2, 20).flatmap(lambda d: st.tuples(st.just(d), _vectors(3, d))),
       st.lists(st.integers(0, 10_000), min_size=3, max_size=3))
def test_the_two_conventions_are_one_permutation_of_the_dimensions_apart(d_x, positions):
    d, x = d_x
    perm = ll.convention_permutation(d)
    np.testing.assert_array_equal(ll.rope(x, positions, convention="interleaved")[:, perm],
                                  ll.rope(x[:, perm], positions, convention="half"))
    assert sorted(perm) == list(range(d))


def test_the_same_numbers_turned_in_the_two_layouts_differ():
    x = np.random.default_rng(8).standard_normal((3, 6))
    half, interleaved = (ll.rope(x, [1, 2, 3], convention=c) for c in ("half", "interleaved"))
    assert np.abs(half - interleaved).max() > 0.1
    np.testing.assert_array_equal(ll.rope(x[:, :2], [1, 2, 3], convention="half"),
                                  ll.rope(x[:, :2], [1, 2, 3], convention="interleaved"))  # one pair: alike


def test_rope_turns_pair_i_by_position_times_theta_i():
    x = np.zeros((1, 6))
    x[0, [0, 1, 2]] = 1.0                          # the "half" pairs are (0, 3), (1, 4), (2, 5)
    out = ll.rope(x, [7], convention="half")
    theta = 10000.0 ** (-np.arange(0, 6, 2) / 6)
    np.testing.assert_allclose(out[0, :3], np.cos(7 * theta), atol=1e-15)
    np.testing.assert_allclose(out[0, 3:], np.sin(7 * theta), atol=1e-15)
    np.testing.assert_array_equal(ll.rope_frequencies(6), theta)
    np.testing.assert_array_equal(ll.rope_angles([0, 7], 6), np.outer([0, 7], theta))


def test_rope_takes_heads_and_batches_and_one_position_for_a_decoding_step():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 8))                            # (batch, heads, seq_len, d_head)
    whole = ll.rope(x, np.arange(5))
    for b in range(2):
        for h in range(3):
            np.testing.assert_array_equal(whole[b, h], ll.rope(x[b, h], np.arange(5)))
    np.testing.assert_array_equal(ll.rope(x[..., 4:, :], [4]), whole[..., 4:, :])   # the last token alone
    per_batch = np.array([[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]])[:, None, :]     # (batch, 1, seq_len)
    out = ll.rope(x, per_batch)
    np.testing.assert_array_equal(out[1], ll.rope(x[1], np.arange(10, 15)))
    assert ll.rope(x.astype(np.float32), np.arange(5)).dtype == np.float32


# ------------------------------------------------------------------ RoPE: the sources
@pytest.fixture(scope="module")
def llama():
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    torch = pytest.importorskip("torch")
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    config = LlamaConfig(vocab_size=16, hidden_size=24, intermediate_size=8, num_hidden_layers=1,
                         num_attention_heads=3, num_key_value_heads=3, head_dim=8, rope_theta=10000.0,
                         attention_bias=False)
    return torch, modeling_llama, config


def _cos_sin(torch, positions, d_head, base=10000.0):
    """Llama's (cos, sin) layout, [angles, angles] per position, from the course's float64 angles."""
    angles = ll.rope_angles(positions, d_head, base=base)
    doubled = np.concatenate([angles, angles], axis=-1)[None]
    return torch.from_numpy(np.cos(doubled)), torch.from_numpy(np.sin(doubled))


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_half_is_llamas_apply_rotary_pos_emb_in_float64(llama, base):
    torch, modeling_llama, _ = llama
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 1, 3, 7, 8))                      # (batch, heads, seq_len, d_head)
    positions = np.array([0, 1, 2, 5, 40, 999, 4096])
    cos, sin = _cos_sin(torch, positions, 8, base)
    q_t, k_t = modeling_llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin)
    assert q_t.dtype == torch.float64
    for theirs, x in ((q_t, q), (k_t, k)):
        assert np.abs(theirs.numpy() - ll.rope(x, positions, base=base)).max() <= TIGHT


def test_llamas_own_frequencies_and_angles_agree_at_their_float32_precision(llama):
    """transformers computes Llama's angles in float32 on purpose (its rotary module forces it): they agree
    with the course's float64 ones to float32's precision."""
    torch, modeling_llama, config = llama
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    np.testing.assert_allclose(rotary.inv_freq.double().numpy(), ll.rope_frequencies(8), rtol=1e-7)
    positions = np.arange(64)
    cos, sin = rotary(torch.zeros(1, 64, 8, dtype=torch.float64), torch.from_numpy(positions)[None])
    ours_cos, ours_sin = _cos_sin(torch, positions, 8)
    assert np.abs(cos.numpy() - ours_cos.numpy()).max() < 1e-5
    assert np.abs(sin.numpy() - ours_sin.numpy()).max() < 1e-5


def _random_llama_attention(torch, modeling_llama, config, implementation):
    config._attn_implementation = implementation
    module = modeling_llama.LlamaAttention(config, layer_idx=0).double().eval()
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.3)
    return module


def test_a_whole_llama_attention_is_multi_head_attention_with_rope(llama):
    """LlamaAttention (random weights, float64) against the course's multi-head attention with rope=True.

    Through torch's SDPA (causal, as Llama is when no mask is given) the outputs agree to 1e-12. Its eager
    path (no mask given: every key) also returns the weights, but runs the softmax in float32 on purpose:
    there they agree to float32's precision."""
    torch, modeling_llama, config = llama
    x = np.random.default_rng(2).standard_normal((2, 6, 24))
    cos_sin = _cos_sin(torch, np.arange(6), 8)
    module = _random_llama_attention(torch, modeling_llama, config, "sdpa")
    w = {name: getattr(module, f"{name}_proj").weight.detach().numpy().T for name in "qkvo"}
    ours, _ = ll.multi_head_attention(x, w["q"], w["k"], w["v"], w["o"], 3, causal=True, rope=True)
    out, _ = module(torch.from_numpy(x), position_embeddings=cos_sin, attention_mask=None)
    assert np.abs(out.detach().numpy() - ours).max() <= TIGHT
    eager = _random_llama_attention(torch, modeling_llama, config, "eager")
    ours, ours_weights = ll.multi_head_attention(x, w["q"], w["k"], w["v"], w["o"], 3, rope=True)
    out, weights = eager(torch.from_numpy(x), position_embeddings=cos_sin, attention_mask=None)
    assert np.abs(weights.detach().numpy() - ours_weights).max() < 1e-6
    assert np.abs(out.detach().numpy() - ours).max() < 1e-5


def _gptj_rotate_every_two(torch, x):
    """GPT-J's rotate_every_two (transformers' modeling_gptj, written out): (−x₁, x₀) per neighbour pair."""
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def test_interleaved_is_the_roformer_and_gpt_j_formula(llama):
    torch = llama[0]
    x = np.random.default_rng(3).standard_normal((4, 9, 10))
    positions = np.array([0, 3, 6, 9, 12, 50, 51, 700, 2048])
    angles = ll.rope_angles(positions, 10)
    sin = torch.from_numpy(np.repeat(np.sin(angles), 2, axis=-1))     # θ₀θ₀θ₁θ₁…: each neighbour pair
    cos = torch.from_numpy(np.repeat(np.cos(angles), 2, axis=-1))
    t = torch.from_numpy(x)
    theirs = (t * cos) + (_gptj_rotate_every_two(torch, t) * sin)
    assert np.abs(theirs.numpy() - ll.rope(x, positions, convention="interleaved")).max() <= TIGHT


def test_weights_written_for_one_convention_give_the_same_attention_in_the_other_once_reordered():
    rng = np.random.default_rng(4)
    d_model, n_heads = 12, 2
    x = rng.standard_normal((5, d_model))
    w_q, w_k, w_v, w_o = (rng.standard_normal((d_model, d_model)) * 0.4 for _ in range(4))
    per_head = ll.convention_permutation(d_model // n_heads)
    perm = np.concatenate([h * (d_model // n_heads) + per_head for h in range(n_heads)])
    interleaved = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, rope="interleaved")
    half = ll.multi_head_attention(x, w_q[:, perm], w_k[:, perm], w_v, w_o, n_heads, rope="half")
    as_given = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, rope="half")
    np.testing.assert_allclose(half[1], interleaved[1], atol=1e-12)
    np.testing.assert_allclose(half[0], interleaved[0], atol=1e-12)
    assert np.abs(as_given[1] - interleaved[1]).max() > 1e-3          # the trap: same weights, other numbers


def test_multi_head_attention_rotates_queries_and_keys_never_values():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 8))
    w_q, w_k, w_v, w_o = (rng.standard_normal((8, 8)) for _ in range(4))
    positions = np.array([3, 4, 5, 6, 7, 8])
    out, weights = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, 2, causal=True,
                                           rope=ll.Rotary(positions=positions, base=100.0))
    q, k, v = (ll.split_heads(x @ w, 2) for w in (w_q, w_k, w_v))
    q, k = (ll.rope(t, positions, base=100.0) for t in (q, k))
    heads, w = ll.scaled_dot_product_attention(q, k, v, causal=True)
    np.testing.assert_allclose(weights, w, atol=1e-13)
    np.testing.assert_allclose(out, ll.merge_heads(heads) @ w_o, atol=1e-12)
    shifted = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, 2, causal=True, rope=ll.Rotary(base=100.0))
    np.testing.assert_allclose(shifted[1], weights, atol=1e-12)       # positions 0..5 or 3..8: same offsets


def test_rotary_settings_name_where_queries_and_keys_stand():
    assert ll.as_rotary(None) is None and ll.as_rotary(False) is None
    assert ll.as_rotary(True) == ll.Rotary() and ll.as_rotary("interleaved").convention == "interleaved"
    q_pos, k_pos = ll.Rotary().resolve(4, 4)
    np.testing.assert_array_equal(q_pos, np.arange(4))
    np.testing.assert_array_equal(k_pos, np.arange(4))
    q_pos, k_pos = ll.Rotary(positions=[5], key_positions=np.arange(6)).resolve(1, 6)
    assert q_pos.tolist() == [5] and k_pos.tolist() == list(range(6))
    with pytest.raises(ValueError, match=r"Q has 1 tokens and K has 6.*key_positions=np.arange\(6\)"):
        ll.Rotary().resolve(1, 6)
    with pytest.raises(TypeError, match="rope must be True"):
        ll.as_rotary(3)


# ------------------------------------------------------------------ ALiBi
def test_alibi_slopes_are_the_papers():
    np.testing.assert_array_equal(ll.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_array_equal(ll.alibi_slopes(1), [2.0 ** -8])
    # 12 heads: the 8 of the power of two below, then every other slope of 16 heads
    np.testing.assert_array_equal(ll.alibi_slopes(12), np.concatenate(
        [2.0 ** -np.arange(1, 9), 2.0 ** (-0.5 * np.arange(1, 17))[0::2][:4]]))


@pytest.mark.parametrize("n_heads", [1, 2, 3, 5, 8, 12, 16])
def test_alibi_slopes_are_blooms(n_heads):
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    torch = pytest.importorskip("torch")
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    # BLOOM adds slope · key position, which softmax sees as −slope · (i − j) behind its causal mask
    alibi = build_alibi_tensor(torch.ones(1, 4, dtype=torch.long), n_heads, torch.float64)
    slopes = alibi[:, 0, 1].numpy()                     # key position 1
    np.testing.assert_allclose(slopes, ll.alibi_slopes(n_heads), rtol=1e-6)


def test_alibi_bias_falls_with_the_distance_head_by_head():
    bias = ll.alibi_bias(4, 5)
    assert bias.shape == (4, 5, 5)
    slopes = ll.alibi_slopes(4)
    i, j = np.meshgrid(np.arange(5), np.arange(5), indexing="ij")
    np.testing.assert_array_equal(bias, -slopes[:, None, None] * np.abs(i - j))
    assert (np.diagonal(bias, axis1=1, axis2=2) == 0).all()
    # a decoding step: one query, the last of 6 positions
    step = ll.alibi_bias(4, 1, n_keys=6)[:, 0]
    np.testing.assert_array_equal(step, -slopes[:, None] * np.arange(5, -1, -1))
    # behind a causal mask, the bias and the paper's "slope · key position" give the same weights
    scores = np.random.default_rng(6).standard_normal((4, 5, 5))
    ours = ll.attention_weights(scores + bias, scale=1.0, causal=True)
    bloom = ll.attention_weights(scores + slopes[:, None, None] * j, scale=1.0, causal=True)
    np.testing.assert_allclose(ours, bloom, atol=1e-12)
