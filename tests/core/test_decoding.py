"""Generation with a KV cache (notebook 12): cached decoding is full causal attention, exactly; key/value
heads are shared by consecutive query heads; a window with sinks keeps what its mask says.

Properties over random shapes (float64, below 1e-12): the decode loop fed one token or a chunk at a time, with
or without RoPE, with any number of key/value heads dividing the heads, equals ``grouped_query_attention(...,
causal=True)``; that equals lesson 06's ``multi_head_attention`` when every head has its own key and value;
a windowed cache gives what ``sink_window_mask`` gives the whole sequence. ``repeat_kv`` is transformers'
``repeat_kv`` and torch's ``repeat_interleave``; the cache's bookkeeping (positions, ring slots, capacity,
views that grow by doubling) holds step by step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib._checks import SizeLimitError
from lessons_lib.core import decoding
from tests.helpers import examples

TIGHT = 1e-12


def _layer(rng, d_model, n_heads, n_kv_heads, d_head, biases=False):
    scale = 1 / np.sqrt(d_model)
    weights = {"w_q": rng.standard_normal((d_model, n_heads * d_head)) * scale,
               "w_k": rng.standard_normal((d_model, n_kv_heads * d_head)) * scale,
               "w_v": rng.standard_normal((d_model, n_kv_heads * d_head)) * scale,
               "w_o": rng.standard_normal((n_heads * d_head, d_model)) * scale,
               "n_heads": n_heads, "n_kv_heads": n_kv_heads}
    if biases:
        weights.update(b_q=rng.standard_normal(n_heads * d_head),
                       b_k=rng.standard_normal(n_kv_heads * d_head),
                       b_v=rng.standard_normal(n_kv_heads * d_head), b_o=rng.standard_normal(d_model))
    return weights


@st.composite
def layers(draw):
    n_kv = draw(st.sampled_from([1, 2, 3]))
    group = draw(st.sampled_from([1, 2, 4]))
    d_head = draw(st.sampled_from([2, 4, 6]))
    seq_len = draw(st.integers(1, 9))
    batch = draw(st.sampled_from([(), (2,)]))
    return dict(n_heads=n_kv * group, n_kv_heads=n_kv, d_head=d_head, seq_len=seq_len, batch=batch,
                d_model=draw(st.sampled_from([5, 8])), chunk=draw(st.integers(1, 4)),
                rope=draw(st.sampled_from([None, "half", "interleaved"])), biases=draw(st.booleans()),
                seed=draw(st.integers(0, 2**16)))


@settings(max_examples=examples(60), deadline=None)
@given(spec=layers())
def test_the_decode_loop_is_causal_attention_for_any_heads_chunks_and_rope(spec):
    rng = np.random.default_rng(spec["seed"])
    weights = _layer(rng, spec["d_model"], spec["n_heads"], spec["n_kv_heads"], spec["d_head"],
                     spec["biases"])
    x = rng.standard_normal((*spec["batch"], spec["seq_len"], spec["d_model"]))
    full, _ = ll.grouped_query_attention(x, **weights, causal=True, rope=spec["rope"])
    out, cache = ll.decode_loop(x, **weights, chunk=spec["chunk"], rope=spec["rope"])
    assert np.abs(out - full).max() < TIGHT
    assert cache.length == spec["seq_len"] and cache.next_position == spec["seq_len"]
    assert cache.keys.shape == (*spec["batch"], spec["n_kv_heads"], spec["seq_len"], spec["d_head"])
    np.testing.assert_array_equal(cache.positions, np.arange(spec["seq_len"]))


def test_grouped_query_attention_with_a_head_per_key_is_lesson_06s_multi_head_attention():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 7, 12))
    ws = [rng.standard_normal((12, 12)) / 4 for _ in range(4)]
    for rope in (None, True):
        ours, w_ours = ll.grouped_query_attention(x, *ws, 3, causal=True, rope=rope)
        lesson06, w06 = ll.multi_head_attention(x, *ws, 3, causal=True, rope=rope)
        assert np.abs(ours - lesson06).max() < TIGHT and np.abs(w_ours - w06).max() < TIGHT


def test_a_head_reads_the_key_value_head_of_its_group():
    rng = np.random.default_rng(2)
    weights = _layer(rng, 8, 6, 2, 4)
    x = rng.standard_normal((5, 8))
    _, w = ll.grouped_query_attention(x, **weights, causal=True)
    # head h by hand with KV head h // 3
    k = (x @ weights["w_k"]).reshape(5, 2, 4)
    q = (x @ weights["w_q"]).reshape(5, 6, 4)
    for h in range(6):
        _, by_hand = ll.scaled_dot_product_attention(q[:, h], k[:, h // 3], k[:, h // 3], causal=True)
        assert np.abs(w[h] - by_hand).max() < TIGHT
    assert ll.kv_head_of(6, 2).tolist() == [0, 0, 0, 1, 1, 1]
    assert ll.kv_head_of(6, 6).tolist() == list(range(6)) and ll.kv_head_of(6, 1).tolist() == [0] * 6


@settings(max_examples=examples(40), deadline=None)
@given(n_kv=st.integers(1, 4), group=st.integers(1, 4), lead=st.sampled_from([(), (2,), (2, 1)]),
       seq=st.integers(1, 5))
def test_repeat_kv_is_torch_repeat_interleave_and_transformers_repeat_kv(n_kv, group, lead, seq):
    torch = pytest.importorskip("torch")
    kv = np.random.default_rng(n_kv * 10 + group).standard_normal((*lead, n_kv, seq, 3))
    ours = ll.repeat_kv(kv, n_kv * group)
    assert ours.shape == (*lead, n_kv * group, seq, 3)
    np.testing.assert_array_equal(ours, torch.from_numpy(kv).repeat_interleave(group, dim=-3).numpy())
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import repeat_kv

    if len(lead) == 1:   # transformers' is for (batch, heads, seq, d) only
        np.testing.assert_array_equal(ours, repeat_kv(torch.from_numpy(kv), group).numpy())
    assert transformers is not None


def test_tiling_pairs_the_heads_wrongly_when_there_are_two_groups():
    kv = np.arange(2.0).reshape(2, 1, 1)
    assert ll.repeat_kv(kv, 4).ravel().tolist() == [0, 0, 1, 1]
    assert np.tile(kv, (2, 1, 1)).ravel().tolist() == [0, 1, 0, 1]


# --------------------------------------------------------------------------- the cache step by step
def test_each_step_sees_itself_and_never_the_next_token():
    q, k, v = ll.random_qkv(6, 4, seed=3)
    cache = ll.KVCache()
    for t in range(6):
        step = ll.decode_step(q[t:t + 1], k[t:t + 1], v[t:t + 1], cache)
        assert step.weights.shape == (1, t + 1) and step.key_positions.tolist() == list(range(t + 1))
        assert step.positions.tolist() == [t] and step.weights[0, t] > 0
    chunk = ll.KVCache(k[:2], v[:2])
    step = ll.decode_step(q[2:5], k[2:5], v[2:5], chunk)
    # the chunk's first query (position 2) sees keys 0, 1, 2: the causal rows are aligned at the bottom right
    np.testing.assert_array_equal(step.weights > 0, ll.bottom_right_causal_mask(3, 5))


def test_the_cache_grows_by_doubling_and_hands_out_views():
    k = np.ones((2, 1, 3))
    cache = ll.KVCache()
    rooms = []
    for _ in range(40):
        cache.append(k, k)
        rooms.append(cache._k.shape[-2])
    assert sorted(set(rooms)) == [16, 32, 64] and cache.length == 40
    assert np.shares_memory(cache.keys, cache._k) and cache.nbytes == 2 * 2 * 40 * 3 * 8


@settings(max_examples=examples(40), deadline=None)
@given(n=st.integers(1, 30), window=st.integers(1, 8), sinks=st.integers(0, 3), chunk=st.integers(1, 4),
       seed=st.integers(0, 2**16))
def test_a_windowed_cache_gives_what_the_window_mask_gives_the_whole_sequence(n, window, sinks, chunk, seed):
    q, k, v = ll.random_qkv(n, 4, seed=seed)
    full, _ = ll.scaled_dot_product_attention(q, k, v, mask=ll.sink_window_mask(n, window, sinks))
    cache = ll.KVCache(window=window, sinks=sinks)
    outs = [ll.decode_step(q[s:s + chunk], k[s:s + chunk], v[s:s + chunk], cache).output
            for s in range(0, n, chunk)]
    assert np.abs(np.concatenate(outs) - full).max() < TIGHT
    assert cache.length == min(n, window + sinks)
    kept = set(range(min(sinks, n))) | set(range(max(n - window, 0), n))
    assert set(cache.positions.tolist()) == kept


def test_the_ring_overwrites_slot_sinks_plus_p_minus_sinks_mod_window():
    held = ll.ring_buffer(13, window=4, sinks=2)
    assert held[-1].tolist() == [0, 1, 10, 11, 12, 9]
    for step, row in enumerate(held):
        for p in range(2, step + 1):
            if p > step - 4:
                assert row[2 + (p - 2) % 4] == p
    assert (held[:3, 3:] == -1).all()


def test_sink_window_mask_is_lesson_07s_window_plus_the_first_columns():
    np.testing.assert_array_equal(ll.sink_window_mask(9, 3), ll.sliding_window_mask(9, 3))
    mask = ll.sink_window_mask(9, 3, sinks=2)
    assert mask[:, :2].sum() == 9 + 8 and not np.triu(mask, 1).any()


def test_keys_and_values_given_start_the_cache_at_their_positions():
    k, v = np.ones((2, 3, 4)), np.zeros((2, 3, 4))
    cache = ll.KVCache(k, v, positions=[5, 6, 7])
    assert cache.next_position == 8 and repr(cache) == "KVCache(3 tokens; keys and values (2, 3, 4))"
    k[...] = 9                                   # the cache holds its own copy
    assert cache.keys.max() == 1


def test_a_multi_head_decode_step_with_grouped_heads_shares_the_cache():
    rng = np.random.default_rng(4)
    q = rng.standard_normal((4, 1, 6))
    k, v = rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 5, 6))
    cache = ll.KVCache(k[:, :4], v[:, :4])
    step = ll.decode_step(q, k[:, 4:], v[:, 4:], cache)
    ref, _ = ll.scaled_dot_product_attention(q, ll.repeat_kv(k, 4), ll.repeat_kv(v, 4))
    assert np.abs(step.output - ref).max() < TIGHT and cache.keys.shape == (2, 5, 6)


def test_cached_attention_turns_the_new_tokens_at_their_own_positions():
    rng = np.random.default_rng(5)
    weights = _layer(rng, 8, 2, 1, 4)
    x = rng.standard_normal((6, 8))
    cache = ll.KVCache()
    ll.cached_attention(x[:4], cache, **weights, rope=True)
    out, _ = ll.cached_attention(x[4:], cache, **weights, rope=True)
    full, _ = ll.grouped_query_attention(x, **weights, causal=True, rope=True)
    assert np.abs(out - full[4:]).max() < TIGHT


def test_decode_step_keeps_float32():
    q, k, v = ll.random_qkv(3, 4, seed=6, dtype=np.float32)
    cache = ll.KVCache()
    assert ll.decode_step(q, k, v, cache).output.dtype == np.float32 and cache.keys.dtype == np.float32
    assert decoding.DecodeStep.__iter__ is not None


def test_repeat_kv_past_the_memory_limit_is_refused_by_the_course_before_numpy_allocates():
    kv = np.zeros((2, 8, 16, 64))
    with pytest.raises(SizeLimitError, match=r"repeat_kv of kv \(2, 8, 16, 64\) for n_heads = 3,000,000,000"):
        ll.repeat_kv(kv, 3 * 10**9)
