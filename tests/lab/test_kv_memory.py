"""The KV-cache calculator of notebook 12: its numbers are the formula's, its presets are the public configs
they cite, and they give what others have published for those models.

bytes = 2 × layers × n_kv_heads × d_head × tokens kept × batch × bytes per value, with tokens kept =
min(tokens, window). The published numbers (``ModelShape.published``): llama.cpp's cache for Llama-3-8B at
2,048 tokens in float16, 256 binary megabytes; the Mistral 7B paper's 8× saving of its 4,096-token rolling
buffer on a 32k-token sequence. And GPT-2 XL's 300 binary kilobytes per token in float16 (Raschka's LLM
Architecture Gallery, quoted in r/LocalLLaMA), which the formula gives for XL's config (48 layers, 25 heads
of 64).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib._checks import VALUE_BYTES
from tests.helpers import examples


@settings(max_examples=examples(60), deadline=None)
@given(layers=st.integers(1, 128), n_kv=st.integers(1, 64), d_head=st.sampled_from([32, 64, 80, 128, 256]),
       tokens=st.integers(1, 10**6), batch=st.integers(1, 64), dtype=st.sampled_from(list(VALUE_BYTES)),
       window=st.one_of(st.none(), st.integers(1, 10**5)))
def test_the_calculator_is_the_formula(layers, n_kv, d_head, tokens, batch, dtype, window):
    kept = tokens if window is None else min(tokens, window)
    expected = 2 * layers * n_kv * d_head * kept * batch * VALUE_BYTES[dtype]
    assert ll.kv_cache_bytes(layers, n_kv, d_head, tokens, batch, dtype, window=window) == expected


@pytest.mark.parametrize("name", list(ll.PRESETS))
def test_a_presets_memory_reads_as_the_formula_with_its_numbers(name):
    shape = ll.PRESETS[name]
    for tokens, batch, dtype in itertools.product((1, 1000, shape.context), (1, 8), ("float32", "bfloat16")):
        m = ll.kv_cache_memory(name, tokens, batch, dtype)
        kept = tokens if shape.window is None else min(tokens, shape.window)
        per_token = 2 * shape.layers * shape.n_kv_heads * shape.d_head * VALUE_BYTES[dtype]
        assert m.bytes == per_token * kept * batch and m.per_token == per_token
        assert m.weights_bytes == shape.params * VALUE_BYTES[dtype]
        assert m.saving == shape.n_heads / shape.n_kv_heads
        assert f"2 × {shape.layers} layers × {shape.n_kv_heads} KV heads × {shape.d_head} × {kept:,} tokens" \
            in m.formula()


def test_the_presets_are_their_public_configs():
    gpt2, llama, mistral, falcon = (ll.PRESETS[n] for n in ll.PRESETS)
    assert (gpt2.layers, gpt2.n_heads, gpt2.n_kv_heads, gpt2.d_head, gpt2.context) == (12, 12, 12, 64, 1024)
    assert (llama.layers, llama.n_heads, llama.n_kv_heads, llama.d_head) == (32, 32, 8, 128)
    assert (mistral.n_kv_heads, mistral.window) == (8, 4096) and mistral.kind == "grouped-query"
    assert (falcon.n_heads, falcon.n_kv_heads, falcon.d_head) == (71, 1, 64) and falcon.kind == "multi-query"
    # Falcon-7B's parameters, counted from its config: tied embeddings, 32 layers (LayerNorm with bias,
    # fused query/key/value, dense, a 4 × MLP), the final LayerNorm
    d, vocab = 4544, 65024
    layer = 2 * d + d * (71 * 64 + 2 * 64) + d * d + 2 * d * 4 * d
    assert falcon.params == vocab * d + 32 * layer + 2 * d
    for shape in ll.PRESETS.values():
        assert "config.json" in shape.source


def test_the_calculator_gives_the_numbers_published_for_the_presets():
    checked = 0
    for shape in ll.PRESETS.values():
        for published in shape.published:
            expected = published.bytes if published.bytes is not None else published.ratio
            assert ll.calculated(shape, published) == expected, published.what
            checked += 1
    assert checked >= 2
    lines = ll.published_comparison("Mistral-7B")
    assert lines == [f"published: {ll.PRESETS['Mistral-7B'].published[0].what} (arxiv.org/abs/2310.06825); "
                     f"the calculator: 8×"]
    gpt2_xl = ll.kv_cache_bytes(48, 25, 64, 1, dtype="float16")
    assert gpt2_xl == 300 * 1024


def test_the_sentence_compares_the_cache_with_the_weights():
    m = ll.kv_cache_memory("Llama-3-8B")
    assert m.sentence() == ("Llama-3-8B, 8,192 tokens × batch 1 in bfloat16: KV cache 1.07 GB (131 kB per "
                            "token), 0.07 × the weights' 16.1 GB; with one key/value head per query head it "
                            "would be 4× larger.")
    assert "less than 1% of the weights" in ll.kv_cache_memory("Falcon-7B (multi-query)").sentence()
    assert ll.kv_cache_memory("Mistral-7B", 32768).kept == 4096
    big = ll.kv_cache_memory("Llama-3-8B", 131072, 16)
    assert big.bytes > big.weights_bytes and "× the weights'" in big.sentence()


def test_a_windowed_models_sentence_shows_the_window_that_sizes_its_cache():
    sentence = ll.kv_cache_memory("Mistral-7B").sentence()
    assert "32,768 tokens" in sentence and "537 MB" in sentence
    assert "131 kB per token × the 4,096 tokens of its sliding window" in sentence
