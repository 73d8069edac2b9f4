"""Multi-head latent attention (notebook 14): the absorbed order is the naive one, the cache holds a latent
and a rope key per token, and RoPE between the query and W_UK cannot be folded.

Properties over random shapes (float64): ``mla_attention(..., absorbed=True)`` equals the naive order below
1e-12, with and without the query's latent, in both RoPE layouts; fed token by token or in chunks through
its ``LatentCache`` it equals the whole sequence at once; with the rope part set to zero it is causal
attention per head with K = c·W_UK and V = c·W_UV. transformers' ``DeepseekV3Attention`` is
``tests/lab/test_deepseek_adapter.py``. Bad input is refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib._checks import SizeLimitError
from tests.helpers import examples

TIGHT = 1e-12


def _weights(rng, d_model, n_heads, d_c, d_rope, d_nope, d_v, d_cq=None):
    def w(*shape):
        return rng.standard_normal(shape) / np.sqrt(shape[0])

    weights = {"w_uq": w(d_cq or d_model, n_heads * (d_nope + d_rope)), "w_dkv": w(d_model, d_c),
               "kv_norm": 1 + 0.1 * rng.standard_normal(d_c), "w_uk": w(d_c, n_heads * d_nope),
               "w_uv": w(d_c, n_heads * d_v), "w_kr": w(d_model, d_rope), "w_o": w(n_heads * d_v, d_model)}
    if d_cq:
        weights.update(w_dq=w(d_model, d_cq), q_norm=1 + 0.1 * rng.standard_normal(d_cq))
    return weights


@st.composite
def layers(draw):
    n_heads, d_c = draw(st.integers(1, 4)), draw(st.integers(1, 8))
    d_rope, d_nope = 2 * draw(st.integers(1, 3)), 2 * draw(st.integers(1, 4))
    d_v, d_model = draw(st.integers(1, 6)), draw(st.integers(2, 12))
    d_cq = draw(st.sampled_from([None, 3, 7]))
    lead = draw(st.sampled_from([(), (2,)]))
    n = draw(st.integers(1, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return {"x": rng.standard_normal((*lead, n, d_model)),
            "weights": _weights(rng, d_model, n_heads, d_c, d_rope, d_nope, d_v, d_cq),
            "n_heads": n_heads, "d_c": d_c, "d_rope": d_rope,
            "convention": draw(st.sampled_from(["half", "interleaved"]))}


@settings(max_examples=examples(60), deadline=None)
@given(spec=layers())
def test_absorbed_order_gives_the_naive_outputs(spec):
    naive, cache = ll.mla_attention(**spec)
    absorbed, _ = ll.mla_attention(**spec, absorbed=True)
    assert np.abs(naive - absorbed).max() <= TIGHT * max(1.0, np.abs(naive).max())
    assert cache.latent.shape[-1] == spec["d_c"] and cache.rope_key.shape[-1] == spec["d_rope"]
    assert cache.numbers_per_token == spec["d_c"] + spec["d_rope"]


@settings(max_examples=examples(40), deadline=None)
@given(spec=layers(), chunk=st.integers(1, 4), absorbed=st.booleans())
def test_a_sequence_fed_through_the_latent_cache_equals_the_whole(spec, chunk, absorbed):
    whole, whole_cache = ll.mla_attention(**spec)
    x, cache, pieces = spec.pop("x"), None, []
    for start in range(0, x.shape[-2], chunk):
        out, cache = ll.mla_attention(x[..., start:start + chunk, :], **spec, cache=cache, absorbed=absorbed)
        pieces.append(out)
    assert np.abs(np.concatenate(pieces, axis=-2) - whole).max() <= TIGHT * max(1.0, np.abs(whole).max())
    assert np.array_equal(cache.positions, np.arange(x.shape[-2]))
    assert np.abs(cache.latent - whole_cache.latent).max() <= TIGHT


def test_without_its_rope_part_mla_is_multi_head_attention_over_keys_made_from_the_latent():
    rng = np.random.default_rng(0)
    D, H, d_c, d_rope, d_head = 8, 2, 3, 2, 4
    weights = _weights(rng, D, H, d_c, d_rope, d_head, d_head)
    weights["w_kr"] = np.zeros_like(weights["w_kr"])
    q_cols = weights["w_uq"].reshape(D, H, d_head + d_rope)
    q_cols[..., d_head:] = 0
    x = rng.standard_normal((5, D))
    ours, _ = ll.mla_attention(x, weights, H, d_c, d_rope, scale=1 / np.sqrt(d_head))
    c = ll.rms_norm(x @ weights["w_dkv"], weights["kv_norm"])
    q = x @ q_cols[..., :d_head].reshape(D, H * d_head)
    part = [slice(h * d_head, (h + 1) * d_head) for h in range(H)]
    heads = [ll.scaled_dot_product_attention(q[:, p], c @ weights["w_uk"][:, p], c @ weights["w_uv"][:, p],
                                             causal=True)[0] for p in part]
    expected = np.concatenate(heads, axis=-1) @ weights["w_o"]
    assert np.abs(ours - expected).max() <= TIGHT


def test_rope_between_the_query_and_w_uk_cannot_be_folded():
    rng = np.random.default_rng(1)
    q, c, w_uk = rng.standard_normal((8, 6)), rng.standard_normal((8, 5)), rng.standard_normal((5, 6))
    true, folded = ll.absorbed_rope_scores(q, c, w_uk, np.arange(8))
    assert np.abs(true - folded).max() > 0.25 * np.abs(true).max()         # not roundoff: a wrong answer
    true0, folded0 = ll.absorbed_rope_scores(q, c, w_uk, np.zeros(8))       # every token at position 0
    assert np.abs(true0 - folded0).max() <= TIGHT * np.abs(true0).max()


def test_select_narrows_each_querys_keys():
    rng = np.random.default_rng(2)
    weights = _weights(rng, 6, 2, 3, 2, 2, 3)
    x = rng.standard_normal((5, 6))
    only_self = np.eye(5, dtype=bool)
    out, _ = ll.mla_attention(x, weights, 2, 3, 2, select=only_self)
    _, cache = ll.mla_attention(x, weights, 2, 3, 2)
    v = (cache.latent @ weights["w_uv"])
    assert np.abs(out - v @ weights["w_o"]).max() <= TIGHT      # each query sees itself alone: its own value


def test_rms_norm_is_the_root_mean_square_rescaling():
    x = np.array([[3.0, 4.0], [1.0, -1.0]])
    out = ll.rms_norm(x, np.array([2.0, 1.0]), eps=0.0)
    assert np.allclose(out, x / np.sqrt([[12.5], [1.0]]) * [2.0, 1.0])


# --------------------------------------------------------------------------- refusals
def _spec():
    rng = np.random.default_rng(3)
    return {"x": rng.standard_normal((4, 6)), "weights": _weights(rng, 6, 2, 3, 2, 2, 3, d_cq=4),
            "n_heads": 2, "d_c": 3, "d_rope": 2}


@pytest.mark.parametrize("change, words", [
    (lambda s: s["weights"].pop("w_uk"), "lacks w_uk"),
    (lambda s: s["weights"].pop("q_norm"), "lacks q_norm"),
    (lambda s: s["weights"].update(w_q=np.ones((6, 6))), "'w_q', which MLA does not use"),
    (lambda s: s.update(d_c=4), "w_dkv has 3 columns but needs 4 (d_c)"),
    (lambda s: s.update(d_rope=3), "w_kr has 2 columns but needs 3 (d_rope)"),
    (lambda s: s["weights"].update(w_uk=np.ones((3, 5))), "w_uk has 5 columns, not a whole number per head"),
    (lambda s: s["weights"].update(w_o=np.ones((6, 5))), "w_o has 5 columns but needs 6 (d_model of x)"),
    (lambda s: s.update(x=np.ones((4, 5))), "w_dkv has 6 rows but needs 5 (d_model of x)"),
    (lambda s: s.update(n_heads=0), "n_heads must be at least 1"),
    (lambda s: s.update(weights=[1, 2]), "weights must map DeepSeek's names"),
    (lambda s: s.update(cache=(1, 2)), "cache must be a LatentCache"),
])
def test_bad_input_is_refused_by_name(change, words):
    spec = _spec()
    change(spec)
    with pytest.raises((ValueError, TypeError)) as error:
        ll.mla_attention(**spec)
    assert words in str(error.value), str(error.value)


def test_a_cache_refuses_tokens_before_its_own():
    spec = _spec()
    _, cache = ll.mla_attention(**spec)
    with pytest.raises(ValueError, match="new tokens come after the cached ones"):
        ll.mla_attention(**spec, cache=cache, positions=np.arange(4))


def test_a_too_large_computation_is_refused_before_it_starts(monkeypatch):
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "0.0001")   # 100 bytes
    with pytest.raises(SizeLimitError):
        ll.mla_attention(**_spec())
