"""``weights_from_deepseek_attention`` and ``weights_from_deepseek_indexer`` (notebook 14): transformers'
``DeepseekV3Attention`` (multi-head latent attention) and DeepSeek-V3.2's ``DeepseekV32Indexer`` and
``DeepseekV32Attention`` (sparse attention), read into the course's weights, are reproduced by
``mla_attention``, ``lightning_indexer`` and the top-k selection.

The modules are tiny random configs built here (4 heads, kv_lora_rank 6, nope 6 + rope 4 wide, values 5
wide, hidden 16), nothing downloaded; transformers' SDPA path in float64. Both sides get the same RoPE angles
(the course's, in float64: transformers' rotary module computes them in float32 on purpose). transformers'
RMSNorm rounds its input to float32 whatever the module's dtype (``DeepseekV3RMSNorm.forward``): the tests
that hold float64 to 1e-10 run that norm in float64 (``float64_norms``, the same formula without the
rounding), and one test holds the unchanged module to float32's precision. The indexer scores in float32
(``q.float()``): its scores agree to float32's precision and it picks the same keys. Each test prints its
agreement figures (``-s``).
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import deepseek
from tests.helpers import require
from tests.helpers.modules import additive, randomize

torch = pytest.importorskip("torch")

D, H, D_C, NOPE, ROPE, D_V, D_CQ, L, BASE = 16, 4, 6, 6, 4, 5, 8, 7, 500.0
INDEX_HEADS, INDEX_DIM, TOP_K = 8, 6, 3


@functools.cache
def _modeling(version: str = "v3"):
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    if version == "v3":
        from transformers.models.deepseek_v3 import modeling_deepseek_v3 as modeling
    else:
        from transformers.models.deepseek_v32 import modeling_deepseek_v32 as modeling
    return modeling


def _config(version: str = "v3", **changes):
    _modeling(version)
    from transformers import DeepseekV3Config, DeepseekV32Config

    settings = dict(vocab_size=32, hidden_size=D, intermediate_size=16, moe_intermediate_size=8,
                    num_hidden_layers=1, num_attention_heads=H, num_key_value_heads=H, kv_lora_rank=D_C,
                    q_lora_rank=D_CQ, qk_nope_head_dim=NOPE, qk_rope_head_dim=ROPE, v_head_dim=D_V,
                    rope_parameters={"rope_type": "default", "rope_theta": BASE})
    if version == "v32":
        settings.update(index_n_heads=INDEX_HEADS, index_head_dim=INDEX_DIM, index_topk=TOP_K)
    settings.update(changes)
    config = (DeepseekV3Config if version == "v3" else DeepseekV32Config)(**settings)
    config._attn_implementation = "sdpa"
    return config


def _module(version: str = "v3", seed: int = 0, **changes):
    modeling = _modeling(version)
    kind = modeling.DeepseekV3Attention if version == "v3" else modeling.DeepseekV32Attention
    return randomize(kind(_config(version, **changes), layer_idx=0), seed)


@pytest.fixture
def float64_norms(monkeypatch):
    """transformers' RMSNorm without its rounding to float32 (``ll.lab.deepseek.unrounded_rms_norm``)."""
    for version in ("v3", "v32"):
        norm = getattr(_modeling(version), "DeepseekV3RMSNorm" if version == "v3" else "DeepseekV32RMSNorm")
        monkeypatch.setattr(norm, "forward", deepseek.unrounded_rms_norm)


def _cos_sin(positions, width=ROPE):
    """transformers' (cos, sin) for ``positions``: [angles, angles], from the course's float64 angles."""
    angles = ll.rope_angles(np.asarray(positions), width, base=BASE)
    both = np.concatenate([angles, angles], axis=-1)[None]
    return torch.from_numpy(np.cos(both)), torch.from_numpy(np.sin(both))


def _x(seed=1, n=L):
    return np.random.default_rng(seed).standard_normal((1, n, D))


def _mask(n_queries, n_keys):
    return additive(ll.bottom_right_causal_mask(n_queries, n_keys)[None, None])


def _theirs(module, x, positions=None, cache=None, mask=None):
    positions = np.arange(x.shape[-2]) if positions is None else positions
    with torch.no_grad():
        out, _ = module(torch.from_numpy(x), position_embeddings=_cos_sin(positions), attention_mask=mask,
                        past_key_values=cache)
    return out.numpy()


def _record(name: str, value: float) -> float:
    print(f"{name}: largest difference {value:.1e}")
    return value


# --------------------------------------------------------------------------- MLA, without a cache
@pytest.mark.parametrize("interleave", [True, False], ids=["interleaved RoPE", "half RoPE"])
@pytest.mark.parametrize("q_lora_rank", [D_CQ, None], ids=["query latent", "no query latent"])
def test_float64_mla_matches_deepseek_v3_attention(float64_norms, q_lora_rank, interleave):
    module = _module(q_lora_rank=q_lora_rank, rope_interleave=interleave)
    read = ll.weights_from_deepseek_attention(module)
    assert ("w_dq" in read["weights"]) == (q_lora_rank is not None)
    assert read["convention"] == ("interleaved" if interleave else "half")
    x = _x()
    theirs = _theirs(module, x)
    for absorbed in (False, True):
        ours, cache = ll.mla_attention(x, **read, absorbed=absorbed)
        name = f"float64 MLA, {'absorbed' if absorbed else 'naive'}, q_lora_rank={q_lora_rank}, " \
               f"{read['convention']}"
        assert _record(name, float(np.abs(ours - theirs).max())) <= 1e-10
    assert cache.latent.shape == (1, L, D_C) and cache.rope_key.shape == (1, L, ROPE)


def test_transformers_rms_norm_rounds_to_float32_so_agreement_is_float32s():
    module = _module(seed=2)
    x = _x(seed=3)
    ours, _ = ll.mla_attention(x, **ll.weights_from_deepseek_attention(module))
    difference = _record("float64 MLA against transformers' float32 RMSNorm",
                         float(np.abs(ours - _theirs(module, x)).max()))
    assert 1e-12 < difference <= 1e-5      # not float64's agreement: the norm's rounding shows


# --------------------------------------------------------------------------- MLA, with transformers' cache
@pytest.mark.parametrize("chunks", [[1] * L, [3, 1, 1, 2]], ids=["token by token", "prefill 3, then decode"])
@pytest.mark.parametrize("absorbed", [False, True], ids=["naive", "absorbed"])
def test_float64_mla_step_by_step_matches_transformers_with_its_cache(float64_norms, chunks, absorbed):
    from transformers import DynamicCache

    module = _module(seed=4)
    read = ll.weights_from_deepseek_attention(module)
    x = _x(seed=5)
    theirs_cache, ours_cache, worst, start = DynamicCache(config=module.config), None, 0.0, 0
    for size in chunks:
        piece, positions = x[:, start:start + size], np.arange(start, start + size)
        mask = _mask(size, start + size) if size > 1 else None
        theirs = _theirs(module, piece, positions, theirs_cache, mask)
        ours, ours_cache = ll.mla_attention(piece, **read, cache=ours_cache, absorbed=absorbed)
        worst = max(worst, float(np.abs(ours - theirs).max()))
        start += size
    assert _record(f"float64 MLA with the cache, {chunks}, absorbed={absorbed}", worst) <= 1e-10
    layer = theirs_cache.layers[0]          # transformers caches the latent and the turned rope key, whose
    assert float(np.abs(ours_cache.latent - layer.keys.numpy()[:, 0]).max()) <= 1e-10     # interleaved pairs
    perm = ll.convention_permutation(ROPE)  # it writes de-interleaved (apply_rotary_pos_emb_interleave)
    assert float(np.abs(ours_cache.rope_key[..., perm] - layer.values.numpy()[:, 0]).max()) <= 1e-10
    assert ours_cache.numbers_per_token == D_C + ROPE


# --------------------------------------------------------------------------- DSA: indexer, sparse attention
def _indexer_both(module, x):
    """The course's indexer scores and transformers' top-k indices (and its float32 scores) on ``x``."""
    read = ll.weights_from_deepseek_attention(module)["weights"]
    q_latent = ll.rms_norm(x @ read["w_dq"], read["q_norm"])
    ours = ll.lightning_indexer(x, q_latent, **ll.weights_from_deepseek_indexer(module.indexer))
    seen, original_topk = {}, torch.Tensor.topk

    def topk(self, k, dim=-1, **kwargs):      # the indexer's own scores, as it ranks them
        seen["scores"] = self.detach().double().numpy()
        return original_topk(self, k, dim=dim, **kwargs)

    def keep_top(_module, _inputs, out):
        seen["top"] = out.numpy()

    handle = module.indexer.register_forward_hook(keep_top)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch.Tensor, "topk", topk)
        out = _theirs(module, x, mask=_mask(x.shape[-2], x.shape[-2]))
    handle.remove()
    return ours, seen["top"][0], seen["scores"][0], out, q_latent


def test_the_indexer_scores_to_float32_precision_and_picks_the_same_keys(float64_norms):
    module = _module("v32", seed=6)
    x = _x(seed=7, n=12)
    ours, their_top, their_scores, _, _ = _indexer_both(module, x)
    causal = ll.causal_mask(12)
    difference = float(np.abs(np.where(causal, ours[0] - their_scores, 0)).max())
    relative = difference / float(np.abs(ours[0][causal]).max())
    assert _record("indexer scores (transformers scores in float32), relative", relative) <= 1e-6
    keep = ll.top_k_selection(ours, TOP_K)[0]
    theirs = np.zeros_like(keep)
    np.put_along_axis(theirs, their_top.astype(np.int64), True, axis=-1)
    assert (keep == (theirs & causal)).all(), "the course's top-k keys differ from transformers'"
    assert keep.sum(-1).tolist() == [min(i + 1, TOP_K) for i in range(12)]


def test_float64_sparse_mla_matches_deepseek_v32_attention_given_the_same_keys(float64_norms):
    module = _module("v32", seed=8)
    x = _x(seed=9, n=12)
    read = ll.weights_from_deepseek_attention(module)
    assert read["convention"] == "interleaved"      # V3.2's MLA always turns interleaved pairs
    ours_scores, _, _, theirs, _ = _indexer_both(module, x)
    keep = ll.top_k_selection(ours_scores, TOP_K)
    for absorbed in (False, True):
        ours, _ = ll.mla_attention(x, **read, select=keep, absorbed=absorbed)
        name = f"float64 sparse MLA (top {TOP_K}), {'absorbed' if absorbed else 'naive'}"
        assert _record(name, float(np.abs(ours - theirs).max())) <= 1e-10
    dense, _ = ll.mla_attention(x, **read)
    assert float(np.abs(dense - theirs).max()) > 1e-3       # the selection matters


# --------------------------------------------------------------------------- what it cannot reproduce
def _refused(module, words: str, reader=ll.weights_from_deepseek_attention):
    with pytest.raises(ValueError) as error:
        reader(module)
    assert words in str(error.value), str(error.value)


def test_attention_bias_is_refused_by_name():
    _refused(_module(attention_bias=True), "attention_bias=True")


def test_yarn_rope_is_refused_by_name():
    yarn = {"rope_type": "yarn", "rope_theta": BASE, "factor": 4.0, "original_max_position_embeddings": 64,
            "mscale_all_dim": 1.0, "mscale": 1.0, "beta_fast": 32, "beta_slow": 1}
    _refused(_module(rope_parameters=yarn, max_position_embeddings=256), "rope_type='yarn'")
    module = _module("v32", rope_parameters=yarn, max_position_embeddings=256)
    _refused(module.indexer, "rope_type='yarn'", ll.weights_from_deepseek_indexer)


def test_repeated_key_value_heads_are_refused_by_name():
    _refused(_module(num_key_value_heads=2), "num_key_value_heads=2")


def test_another_module_is_refused_by_name():
    with pytest.raises(TypeError, match="DeepseekV3Attention"):
        ll.weights_from_deepseek_attention(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="DeepseekV32Indexer"):
        ll.weights_from_deepseek_indexer(torch.nn.Linear(2, 2))


def test_the_unrounded_norm_says_which_width_is_wrong():
    norm = _modeling("v3").DeepseekV3RMSNorm(D_C)
    with pytest.raises(ValueError, match=r"hidden has width \(5,\) but the norm's gain has shape \(6,\)"):
        deepseek.unrounded_rms_norm(norm, torch.ones(2, 5))


def test_the_notebooks_look_inside_states_both_agreements_as_claims():
    _modeling("v32")
    lines = ll.look_inside_deepseek()
    assert len(lines) == 2, lines
    for line in lines:
        shipped, exact = line.split("; ")
        assert "below 1e-6 as transformers ships it" in shipped and "NOT" not in shipped, line
        assert exact.endswith("below 1e-10 with that norm run in float64") and "NOT" not in exact, line

