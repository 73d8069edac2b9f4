"""``weights_from_llama_attention`` (notebook 12): a Llama-style attention of transformers, read into the
course's layout, is reproduced by ``grouped_query_attention`` and by the course's decode loop with its
``KVCache``, against transformers' own attention with and without its ``DynamicCache``.

The module is a tiny random Llama config built here (6 query heads sharing 2 key/value heads, head_dim 10,
not hidden_size / heads; a RoPE base of 500), nothing downloaded. Both sides get the same RoPE angles (the
course's, in float64: transformers' own rotary module computes them in float32 on purpose, lesson 11's test
holds the two to float32's precision). Agreement: the weights read are the module's own (exactly); float64
outputs below 1e-10 against transformers' SDPA path, with and without the cache; transformers' eager path
runs its softmax in float32 whatever the model's dtype (``eager_attention_forward``), so in float64 it agrees
to float32's precision (below 1e-6), and a float32 model agrees below 1e-5, outputs and attention weights,
with and without the cache. Each test prints its agreement figures (``-s``).
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import pytest

import lessons_lib as ll
from tests.helpers import require
from tests.helpers.modules import additive, randomize

torch = pytest.importorskip("torch")

D, H, G, HEAD, L, BASE = 24, 6, 2, 10, 7, 500.0


@functools.cache
def _llama():
    """transformers' Llama module, imported by the first test that builds one rather than when this file is
    collected: every pytest worker collects it, and the import costs seconds."""
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    from transformers.models.llama import modeling_llama

    return modeling_llama


def _config(implementation: str, **changes):
    _llama()  # skips without transformers (fails in CI)
    from transformers import LlamaConfig

    config = LlamaConfig(vocab_size=32, hidden_size=D, intermediate_size=16, num_hidden_layers=1,
                         num_attention_heads=H, num_key_value_heads=G, head_dim=HEAD,
                         rope_parameters={"rope_type": "default", "rope_theta": BASE}, **changes)
    config._attn_implementation = implementation
    return config


def _module(implementation: str, dtype=torch.float64, seed: int = 0, **changes):
    module = _llama().LlamaAttention(_config(implementation, **changes), layer_idx=0)
    module = randomize(module, seed)
    return module.to(dtype)


def _cos_sin(positions, dtype):
    """Llama's (cos, sin) for ``positions``: [angles, angles] per position, from the course's float64
    angles."""
    angles = ll.rope_angles(np.asarray(positions), HEAD, base=BASE)
    both = np.concatenate([angles, angles], axis=-1)[None]
    return (torch.from_numpy(np.cos(both)).to(dtype), torch.from_numpy(np.sin(both)).to(dtype))


def _x(dtype=np.float64, seed=1):
    return np.random.default_rng(seed).standard_normal((1, L, D)).astype(dtype)


def _theirs(module, x, *, positions=None, cache=None, mask=None):
    dtype = next(module.parameters()).dtype
    positions = np.arange(x.shape[-2]) if positions is None else positions
    with torch.no_grad():
        out, weights = module(torch.from_numpy(x).to(dtype), position_embeddings=_cos_sin(positions, dtype),
                              attention_mask=mask, past_key_values=cache)
    return out.double().numpy(), None if weights is None else weights.double().numpy()


def _record(name: str, value: float) -> float:
    print(f"{name}: largest difference {value:.1e}")
    return value


def _causal(n_queries, n_keys):
    return additive(ll.bottom_right_causal_mask(n_queries, n_keys)[None, None])


# --------------------------------------------------------------------------- the weights
def test_the_weights_read_are_the_modules_own():
    module = _module("sdpa")
    w = ll.weights_from_llama_attention(module)
    assert w["w_q"].shape == (D, H * HEAD) and w["w_k"].shape == (D, G * HEAD)
    assert w["w_o"].shape == (H * HEAD, D)
    assert (w["n_heads"], w["n_kv_heads"]) == (H, G) and w["rope"] == ll.Rotary(base=BASE, convention="half")
    for name in "qkvo":
        theirs = getattr(module, f"{name}_proj").weight.detach().numpy().T
        difference = float(np.abs(w[f"w_{name}"] - theirs).max())
        assert _record(f"float64 weights W_{name.upper()}", difference) <= 1e-10
    assert not any(w[b].any() for b in ("b_q", "b_k", "b_v", "b_o"))      # attention_bias=False: zeros
    assert ll.attention_weights_of(module)["n_kv_heads"] == G


# --------------------------------------------------------------------------- without a cache
def test_float64_outputs_match_transformers_sdpa_attention():
    module = _module("sdpa")
    x = _x()
    ours, _ = ll.grouped_query_attention(x, **ll.weights_from_llama_attention(module), causal=True)
    theirs, _ = _theirs(module, x)
    difference = float(np.abs(ours - theirs).max())
    assert _record("float64 outputs, no cache (transformers SDPA)", difference) <= 1e-10


@pytest.mark.parametrize("dtype, bound", [(torch.float64, 1e-6), (torch.float32, 1e-5)])
def test_eager_attention_outputs_and_weights_match(dtype, bound):
    module = _module("eager", dtype)
    x = _x(np.float32 if dtype == torch.float32 else np.float64)
    ours, ours_w = ll.grouped_query_attention(x.astype(np.float64), **ll.weights_from_llama_attention(module),
                                              causal=True)
    theirs, theirs_w = _theirs(module, x, mask=_causal(L, L))
    name = str(dtype).removeprefix("torch.")
    assert _record(f"{name} outputs, no cache (eager)", float(np.abs(ours - theirs).max())) <= bound
    difference = float(np.abs(ours_w - theirs_w).max())
    assert _record(f"{name} attention weights, no cache (eager)", difference) <= bound


# --------------------------------------------------------------------------- with a cache
def _decode_both(module, x, chunks, *, eager: bool):
    """Feed ``x`` in ``chunks`` (sizes) through transformers with a DynamicCache and through the course's
    cached_attention with a KVCache; return the two outputs, weights per step, and the two caches."""
    from transformers import DynamicCache

    weights = ll.weights_from_llama_attention(module)
    theirs_cache, ours_cache = DynamicCache(config=module.config), ll.KVCache()
    outs, start = [], 0
    for size in chunks:
        piece = x[:, start:start + size]
        mask = _causal(size, start + size) if (eager or size > 1) else None
        theirs, theirs_w = _theirs(module, piece, positions=np.arange(start, start + size),
                                   cache=theirs_cache, mask=mask)
        ours, ours_w = ll.cached_attention(piece.astype(np.float64), ours_cache, **weights)
        outs.append((ours, theirs, ours_w, theirs_w))
        start += size
    return outs, ours_cache, theirs_cache


@pytest.mark.parametrize("chunks", [[1] * L, [3, 1, 1, 2]], ids=["token by token", "prefill 3, then decode"])
def test_float64_decode_loop_matches_transformers_with_its_dynamic_cache(chunks):
    module = _module("sdpa")
    outs, ours_cache, theirs_cache = _decode_both(module, _x(), chunks, eager=False)
    worst = max(float(np.abs(ours - theirs).max()) for ours, theirs, _, _ in outs)
    assert _record(f"float64 outputs with the cache, {chunks}", worst) <= 1e-10
    layer = theirs_cache.layers[0]
    assert layer.keys.shape == (1, G, L, HEAD) and ours_cache.keys.shape == (1, G, L, HEAD)
    assert float(np.abs(ours_cache.keys - layer.keys.numpy()).max()) <= 1e-10      # the keys turned by RoPE
    assert float(np.abs(ours_cache.values - layer.values.numpy()).max()) <= 1e-10


@pytest.mark.parametrize("dtype, bound", [(torch.float64, 1e-6), (torch.float32, 1e-5)])
def test_eager_decode_loop_matches_with_the_cache_outputs_and_weights(dtype, bound):
    module = _module("eager", dtype)
    x = _x(np.float32 if dtype == torch.float32 else np.float64)
    outs, _, _ = _decode_both(module, x, [2, 1, 1, 3], eager=True)
    name = str(dtype).removeprefix("torch.")
    worst = max(float(np.abs(ours - theirs).max()) for ours, theirs, _, _ in outs)
    worst_w = max(float(np.abs(ours_w[0] - theirs_w[0]).max()) for _, _, ours_w, theirs_w in outs)
    assert _record(f"{name} outputs with the cache (eager)", worst) <= bound
    assert _record(f"{name} attention weights with the cache (eager)", worst_w) <= bound


def test_biases_and_another_score_scale_are_reproduced():
    module = _module("sdpa", attention_bias=True, seed=3)
    with torch.no_grad():
        module.scaling = 0.5 * HEAD ** -0.5
    x = _x(seed=4)
    ours, _ = ll.grouped_query_attention(x, **ll.weights_from_llama_attention(module), causal=True)
    theirs, _ = _theirs(module, x)
    assert _record("float64 outputs, biases and scale 1/(2√d)", float(np.abs(ours - theirs).max())) <= 1e-10


def test_qwen2_attention_with_its_biases_is_read_the_same_way():
    from transformers import Qwen2Config
    from transformers.models.qwen2 import modeling_qwen2

    config = Qwen2Config(vocab_size=32, hidden_size=D, intermediate_size=16, num_hidden_layers=1,
                         num_attention_heads=H, num_key_value_heads=G, head_dim=HEAD,
                         rope_parameters={"rope_type": "default", "rope_theta": BASE})
    config._attn_implementation = "sdpa"
    module = randomize(modeling_qwen2.Qwen2Attention(config, layer_idx=0), 5)
    x = _x(seed=6)
    ours, _ = ll.grouped_query_attention(x, **ll.weights_from_llama_attention(module), causal=True)
    theirs, _ = _theirs(module, x)
    assert float(np.abs(ours - theirs).max()) <= 1e-10 and module.q_proj.bias is not None


# --------------------------------------------------------------------------- what it cannot represent
def _refused(module, words: str):
    with pytest.raises(ValueError) as error:
        ll.weights_from_llama_attention(module)
    assert words in str(error.value), str(error.value)


def test_scaled_rope_is_refused():
    llama3 = {"rope_type": "llama3", "rope_theta": BASE, "factor": 8.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 1024}
    config = _config("sdpa")
    config.rope_parameters = llama3
    _refused(_llama().LlamaAttention(config, 0), "rope_type='llama3'")
    config.rope_parameters = {"rope_type": "default", "rope_theta": BASE, "partial_rotary_factor": 0.5}
    _refused(_llama().LlamaAttention(config, 0), "partial_rotary_factor=0.5")


def test_normalised_queries_and_a_sliding_window_are_refused():
    from transformers import MistralConfig, Qwen3Config
    from transformers.models.mistral import modeling_mistral
    from transformers.models.qwen3 import modeling_qwen3

    shape = dict(vocab_size=32, hidden_size=D, intermediate_size=16, num_hidden_layers=1,
                 num_attention_heads=H, num_key_value_heads=G, head_dim=HEAD)
    _refused(modeling_qwen3.Qwen3Attention(Qwen3Config(**shape), 0), "a q_norm")
    _refused(modeling_mistral.MistralAttention(MistralConfig(**shape, sliding_window=16), 0),
             "sliding_window=16")


def test_other_modules_and_weights_on_meta_are_refused():
    with pytest.raises(TypeError, match="takes a Llama-style attention"):
        ll.weights_from_llama_attention(torch.nn.Linear(4, 4))
    with torch.device("meta"):
        empty = _llama().LlamaAttention(_config("sdpa"), 0)
    with pytest.raises(ValueError, match="meta device"):
        ll.weights_from_llama_attention(empty)
