"""DeepSeek's attention, sized and read (lesson 14): the latent cache beside MHA, GQA and MQA for the
published configurations, and transformers' ``DeepseekV3Attention`` and DeepSeek-V3.2's indexer read into the
course's weights.

**The cache.** Multi-latent attention keeps d_c + d_rope numbers per token and layer (the latent and the
shared rope key), whatever the number of heads; :func:`latent_cache_bytes` is lesson 12's
:func:`~lessons_lib.lab.kv_memory.kv_cache_bytes` for that cache (the lesson-12 calculator is unchanged and
gives the rows of MHA, GQA and MQA beside it, :func:`cache_per_token`). DeepSeek-V2's paper (§2.1.4, Table 1)
writes MLA's cache as (d_c + d_h^R)·l = (9/2)·d_h·l elements, "equivalent to GQA with only 2.25 groups"
(:func:`equivalent_gqa_groups`), and says DeepSeek-V2 reduces the KV cache by 93.3% against DeepSeek 67B
(:func:`v2_against_67b`: with its cache quantised to 6 bits per element on average, as the paper deploys it
("Training and Inference Efficiency"), against 67B's 16-bit cache; in 16 bits both, 82.2%).

**The adapters.** :func:`weights_from_deepseek_attention` reads a ``DeepseekV3Attention`` (or the MLA part of
a ``DeepseekV32Attention``) into :func:`~lessons_lib.core.latent.mla_attention`'s keywords,
:func:`weights_from_deepseek_indexer` a ``DeepseekV32Indexer`` into
:func:`~lessons_lib.core.sparse.lightning_indexer`'s. Refused, by name: ``attention_bias`` (biases the
course's MLA has no place for), a ``rope_type`` other than "default" (YaRN stretches the angles and rescales
the scores: DeepSeek-V3's released config uses it, the course's RoPE turns by position · θ_i exactly),
``num_key_value_heads`` ≠ ``num_attention_heads`` (transformers would repeat MLA's heads again), weights on
the meta device. transformers' RMSNorm rounds its input to float32 (``DeepseekV3RMSNorm``), so a float64
module agrees with the course to float32's precision unless the norm is run in float64 (the tests and
:func:`look_inside_deepseek` say which).
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .._checks import (
    VALUE_BYTES,
    as_float_array,
    check_int_in_range,
    check_positive_int,
    check_seed,
    check_value_type,
)
from ..core import latent, sparse
from .kv_memory import kv_cache_bytes

__all__ = ["LatentShape", "DEEPSEEK_V2", "DEEPSEEK_V3", "DEEPSEEK_67B", "latent_cache_bytes",
           "cache_per_token", "equivalent_gqa_groups", "v2_against_67b", "weights_from_deepseek_attention",
           "weights_from_deepseek_indexer", "TINY_MLA", "tiny_mla_weights", "SparseRun", "sparse_run",
           "absorption_counts", "sparse_counts", "measure_orders", "look_inside_deepseek"]


@dataclass(frozen=True)
class LatentShape:
    """The numbers of an MLA model that size its cache: ``layers``, ``n_heads`` of ``d_head`` (the keys' nope
    part, DeepSeek's d_h), ``d_rope`` (the shared rope key, d_h^R), ``d_c`` (the latent, kv_lora_rank),
    ``source``."""

    name: str
    layers: int
    n_heads: int
    d_head: int
    d_rope: int
    d_c: int
    source: str = ""


#: DeepSeek-V3 (and V3.2, the same attention shapes) from deepseek-ai/DeepSeek-V3's config.json.
DEEPSEEK_V3 = LatentShape(
    "DeepSeek-V3", layers=61, n_heads=128, d_head=128, d_rope=64, d_c=512,
    source="deepseek-ai/DeepSeek-V3 config.json: num_hidden_layers 61, num_attention_heads 128, "
           "qk_nope_head_dim 128, v_head_dim 128, qk_rope_head_dim 64, kv_lora_rank 512, q_lora_rank 1536.")
#: DeepSeek-V2 from its paper (§3.1.2: 60 layers, 128 heads of 128, d_c = 4·d_h = 512, d_h^R = d_h/2 = 64).
DEEPSEEK_V2 = LatentShape(
    "DeepSeek-V2", layers=60, n_heads=128, d_head=128, d_rope=64, d_c=512,
    source="DeepSeek-AI 2024, DeepSeek-V2 (arXiv:2405.04434) §3.1.2: 60 layers, 128 heads, d_h = 128, "
           "d_c = 512, d_h^R = 64.")
#: DeepSeek 67B, the dense model DeepSeek-V2's paper compares with: 95 layers, 64 query heads, 8 key/value
#: heads of 128 (DeepSeek-AI 2024, DeepSeek LLM, arXiv:2401.02954, Table 2; its config.json).
DEEPSEEK_67B = {"layers": 95, "n_heads": 64, "n_kv_heads": 8, "d_head": 128}


def latent_cache_bytes(layers: int, d_c: int, d_rope: int, tokens: int, batch: int = 1,
                       dtype: str = "bfloat16") -> int:
    """layers × (d_c + d_rope) × tokens × batch × bytes per value: MLA's cache, in bytes. No factor 2 (one
    latent, not a key and a value) and no heads. Notebook 14.

    >>> latent_cache_bytes(61, 512, 64, 1)      # DeepSeek-V3, one token, bfloat16: 70,272 bytes
    70272
    """
    per_layer = check_positive_int(d_c, "d_c") + check_positive_int(d_rope, "d_rope")
    return (check_positive_int(layers, "layers") * per_layer * check_positive_int(tokens, "tokens")
            * check_positive_int(batch, "batch") * VALUE_BYTES[check_value_type(dtype)])


def cache_per_token(shape: LatentShape = DEEPSEEK_V3, dtype: str = "bfloat16", groups: int = 8) -> list[dict]:
    """One token's cache in one layer, for ``shape``'s heads kept as multi-head, grouped-query (``groups``
    key/value heads), multi-query and latent attention: rows ``{"attention", "numbers", "bytes", "times"}``
    (``times``: how many times the latent cache's size)."""
    groups = check_positive_int(groups, "groups")
    rows = [(name, kv_cache_bytes(1, heads, shape.d_head, 1, 1, dtype)) for name, heads in (
        (f"multi-head ({shape.n_heads} key/value heads)", shape.n_heads),
        (f"grouped-query ({groups} key/value heads)", groups), ("multi-query (1 key/value head)", 1))]
    rows.append((f"latent (d_c = {shape.d_c} + rope key {shape.d_rope})",
                 latent_cache_bytes(1, shape.d_c, shape.d_rope, 1, 1, dtype)))
    latent = rows[-1][1]
    return [{"attention": name, "numbers": size // VALUE_BYTES[dtype], "bytes": size, "times": size / latent}
            for name, size in rows]


def equivalent_gqa_groups(shape: LatentShape = DEEPSEEK_V2) -> float:
    """How many key/value heads of d_head a GQA cache would need to hold as much as MLA's:
    (d_c + d_rope) / (2·d_head); 2.25 for DeepSeek-V2 (its paper's "about 2.25 groups")."""
    return (shape.d_c + shape.d_rope) / (2 * shape.d_head)


def v2_against_67b(bits: float = 6.0) -> dict:
    """DeepSeek-V2's cache per token against DeepSeek 67B's (16 bits per number): ``{"v2_bytes", "67b_bytes",
    "reduction"}`` with V2's numbers at ``bits`` each (6: the paper's deployment; 16: the same precision)."""
    v2 = DEEPSEEK_V2.layers * (DEEPSEEK_V2.d_c + DEEPSEEK_V2.d_rope) * float(bits) / 8
    dense = kv_cache_bytes(DEEPSEEK_67B["layers"], DEEPSEEK_67B["n_kv_heads"], DEEPSEEK_67B["d_head"], 1, 1,
                           "bfloat16")
    return {"v2_bytes": v2, "67b_bytes": dense, "reduction": 1 - v2 / dense}


# --------------------------------------------------------------------------- transformers' modules
def _numpy(tensor, name: str) -> np.ndarray:
    if getattr(tensor, "device", None) is not None and tensor.device.type == "meta":
        raise ValueError(f"{name} is on the meta device: the module was built without its numbers. Load or "
                         f"initialise its weights first.")
    return as_float_array(tensor.detach().double(), name).copy()


def _refuse(function: str, option: str, why: str):
    raise ValueError(f"{function}: this module has {option}, which the course's MLA cannot reproduce: {why}")


def _rope_of(config, function: str) -> float:
    rope = dict(getattr(config, "rope_parameters", None) or {})
    kind = rope.get("rope_type", "default")
    if kind != "default":
        _refuse(function, f"rope_type={kind!r}", "it stretches RoPE's angles for long contexts and rescales "
                "the scores (YaRN's mscale); the course's RoPE turns pair i by position · base^(−2i/d) "
                "exactly. "
                "Read a copy of the config with rope_parameters={'rope_type': 'default', 'rope_theta': ...}.")
    return float(rope.get("rope_theta", 10000.0))


def weights_from_deepseek_attention(module) -> dict:
    """A transformers ``DeepseekV3Attention`` (or ``DeepseekV32Attention``'s MLA) as the keywords of
    :func:`~lessons_lib.core.latent.mla_attention`: ``mla_attention(x, **read)`` computes what the module
    does.

    ``q_a_proj`` → ``w_dq``, ``q_a_layernorm`` → ``q_norm``, ``q_b_proj`` (or ``q_proj`` without
    ``q_lora_rank``) → ``w_uq``; ``kv_a_proj_with_mqa`` → ``w_dkv`` (its first kv_lora_rank outputs) and
    ``w_kr`` (the last qk_rope_head_dim); ``kv_a_layernorm`` → ``kv_norm``; ``kv_b_proj`` → ``w_uk`` and
    ``w_uv`` (per head, nope then value, side by side); ``o_proj`` → ``w_o``. ``convention``: "interleaved"
    with the config's ``rope_interleave`` (always for V3.2), else "half". Options it cannot reproduce are
    refused by name (the module docstring lists them). Notebook 14.
    """
    function = "weights_from_deepseek_attention"
    needed = ("kv_a_proj_with_mqa", "kv_b_proj", "o_proj", "config", "num_heads", "kv_lora_rank")
    missing = [a for a in needed if not hasattr(module, a)]
    if missing:
        raise TypeError(f"{function} takes a DeepseekV3Attention (or DeepseekV32Attention); got "
                        f"{type(module).__name__}, which has no {', '.join(missing)}.")
    config = module.config
    if getattr(config, "attention_bias", False):
        _refuse(function, "attention_bias=True", "q_a_proj, kv_a_proj_with_mqa and o_proj add biases, and "
                "mla_attention's weights are matrices and norms only.")
    if config.num_key_value_heads != config.num_attention_heads:
        _refuse(function, f"num_key_value_heads={config.num_key_value_heads} ≠ num_attention_heads="
                f"{config.num_attention_heads}", "MLA already gives every head its key and value; "
                "transformers would repeat those heads again.")
    base = _rope_of(config, function)
    n_heads, d_c = int(module.num_heads), int(module.kv_lora_rank)
    d_nope, d_rope, d_v = int(module.qk_nope_head_dim), int(module.qk_rope_head_dim), int(module.v_head_dim)
    weights = {}
    if getattr(module, "q_a_proj", None) is not None:
        weights["w_dq"] = _numpy(module.q_a_proj.weight, "q_a_proj.weight").T
        weights["q_norm"] = _numpy(module.q_a_layernorm.weight, "q_a_layernorm.weight")
        weights["w_uq"] = _numpy(module.q_b_proj.weight, "q_b_proj.weight").T
    else:
        weights["w_uq"] = _numpy(module.q_proj.weight, "q_proj.weight").T
    kv_a = _numpy(module.kv_a_proj_with_mqa.weight, "kv_a_proj_with_mqa.weight").T
    weights["w_dkv"], weights["w_kr"] = kv_a[:, :d_c], kv_a[:, d_c:]
    weights["kv_norm"] = _numpy(module.kv_a_layernorm.weight, "kv_a_layernorm.weight")
    kv_b = _numpy(module.kv_b_proj.weight, "kv_b_proj.weight").T.reshape(d_c, n_heads, d_nope + d_v)
    weights["w_uk"] = kv_b[..., :d_nope].reshape(d_c, n_heads * d_nope)
    weights["w_uv"] = kv_b[..., d_nope:].reshape(d_c, n_heads * d_v)
    weights["w_o"] = _numpy(module.o_proj.weight, "o_proj.weight").T
    interleaved = bool(getattr(config, "rope_interleave", False)) or hasattr(module, "indexer")
    eps = float(module.kv_a_layernorm.variance_epsilon)
    return {"weights": weights, "n_heads": n_heads, "d_c": d_c, "d_rope": d_rope, "base": base,
            "convention": "interleaved" if interleaved else "half", "scale": float(module.scaling),
            "eps": eps}


def weights_from_deepseek_indexer(module) -> dict:
    """A transformers ``DeepseekV32Indexer`` as the keywords of
    :func:`~lessons_lib.core.sparse.lightning_indexer` (its ``top_k`` is the module's ``index_topk``):
    ``wq_b`` → ``w_iq``, ``wk`` → ``w_ik``, ``k_norm`` (a LayerNorm) → ``k_norm`` and ``k_norm_bias``,
    ``weights_proj`` → ``w_iw``.
    Notebook 14.
    """
    function = "weights_from_deepseek_indexer"
    needed = ("wq_b", "wk", "k_norm", "weights_proj", "n_heads", "head_dim", "index_topk")
    missing = [a for a in needed if not hasattr(module, a)]
    if missing:
        raise TypeError(f"{function} takes a DeepseekV32Indexer (an attention's .indexer); got "
                        f"{type(module).__name__}, which has no {', '.join(missing)}.")
    base = _rope_of(module.config, function)
    if module.k_norm.bias is None or module.k_norm.weight is None:
        _refuse(function, "a LayerNorm without its gain or bias", "the indexer's key norm has both.")
    weights = {"w_iq": _numpy(module.wq_b.weight, "wq_b.weight").T,
               "w_ik": _numpy(module.wk.weight, "wk.weight").T,
               "k_norm": _numpy(module.k_norm.weight, "k_norm.weight"),
               "k_norm_bias": _numpy(module.k_norm.bias, "k_norm.bias"),
               "w_iw": _numpy(module.weights_proj.weight, "weights_proj.weight").T}
    return {"weights": weights, "n_heads": int(module.n_heads), "d_rope": int(module.qk_rope_head_dim),
            "base": base, "eps": float(module.k_norm.eps)}


# --------------------------------------------------------------------------- a tiny layer to look at
#: The tiny MLA layer of lesson 14's explorer: d_model 16, 2 heads (nope 8 + rope 4, values 8), a query
#: latent of 12, an indexer of 4 heads of 8 (rope 4), 16 tokens.
TINY_MLA = {"d_model": 16, "n_heads": 2, "d_nope": 8, "d_rope": 4, "d_v": 8, "d_cq": 12, "index_heads": 4,
            "index_dim": 8, "tokens": 16}


def tiny_mla_weights(d_c: int, seed: int = 0) -> tuple[dict, dict]:
    """Random weights of :data:`TINY_MLA` with a latent of ``d_c``: ``(mla weights, indexer weights)``, the
    same for every d_c but the latent's own (drawn from ``seed``, scaled by 1/√(inputs))."""
    d_c = check_int_in_range(d_c, "d_c", 1, 64)
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    t = TINY_MLA

    def w(rows, cols, draw=rng):
        return draw.standard_normal((rows, cols)) / np.sqrt(rows)

    mla = {"w_dq": w(t["d_model"], t["d_cq"]), "q_norm": np.ones(t["d_cq"]),
           "w_uq": w(t["d_cq"], t["n_heads"] * (t["d_nope"] + t["d_rope"])),
           "w_kr": w(t["d_model"], t["d_rope"]), "w_o": w(t["n_heads"] * t["d_v"], t["d_model"])}
    index = {"w_iq": w(t["d_cq"], t["index_heads"] * t["index_dim"]), "w_ik": w(t["d_model"], t["index_dim"]),
             "k_norm": np.ones(t["index_dim"]), "k_norm_bias": np.zeros(t["index_dim"]),
             "w_iw": w(t["d_model"], t["index_heads"])}
    own = np.random.default_rng([seed, d_c])                           # the latent's weights, per d_c
    mla.update(w_dkv=w(t["d_model"], d_c, own), kv_norm=np.ones(d_c),
               w_uk=w(d_c, t["n_heads"] * t["d_nope"], own), w_uv=w(d_c, t["n_heads"] * t["d_v"], own))
    return mla, index


@dataclass(frozen=True)
class SparseRun:
    """What lesson 14's explorer draws: a tiny MLA layer (:data:`TINY_MLA`) on ``tokens`` random inputs with a
    latent of ``d_c``, its dense weights (head 0, ``(L, L)``), the keys the indexer keeps for each query at
    ``top_k`` (``keep``), the sparse weights, how far each query's output moves from dense attention
    (``difference``: the length of the difference over the dense output's, per query) and the dense weight
    that falls on kept keys (``kept_weight``, per query), and on the ``top_k`` keys dense attention itself
    weighs most (``best_weight``: what a perfect indexer would keep)."""

    d_c: int
    top_k: int
    dense: np.ndarray
    sparse: np.ndarray
    keep: np.ndarray
    indexer: np.ndarray
    difference: np.ndarray
    kept_weight: np.ndarray
    best_weight: np.ndarray

    @property
    def numbers_per_token(self) -> int:
        """The latent cache's numbers per token and layer: d_c + d_rope."""
        return self.d_c + TINY_MLA["d_rope"]

    @property
    def multi_head_numbers(self) -> int:
        """Multi-head attention's for the same heads: 2 × n_heads × d_nope."""
        return 2 * TINY_MLA["n_heads"] * TINY_MLA["d_nope"]


def _head0_weights(x, weights, d_c, select=None) -> np.ndarray:
    t = TINY_MLA
    q_nope, q_rope, cache, w = latent.mla_scores(x, weights, t["n_heads"], d_c, t["d_rope"])
    k_nope = cache.latent @ w["w_uk"][:, : t["d_nope"]]
    scores = (q_nope[0] @ k_nope.T + q_rope[0] @ cache.rope_key.T) / np.sqrt(t["d_nope"] + t["d_rope"])
    allowed = np.tril(np.ones(scores.shape, bool)) & (True if select is None else select)
    scores = np.where(allowed, scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sparse_run(d_c: int = 8, top_k: int = 4, *, seed: int = 0) -> SparseRun:
    """A tiny MLA layer with a latent of ``d_c`` and DSA's selection of ``top_k`` keys per query, beside dense
    attention (:class:`SparseRun`). Notebook 14's explorer."""
    t = TINY_MLA
    top_k = check_int_in_range(top_k, "top_k", 1, t["tokens"])
    mla, index = tiny_mla_weights(d_c, seed)
    x = np.random.default_rng(check_seed(seed, allow_generator=False) + 1).standard_normal((t["tokens"],
                                                                                          t["d_model"]))
    q_latent = latent.rms_norm(x @ mla["w_dq"], mla["q_norm"])
    scores = sparse.lightning_indexer(x, q_latent, index, t["index_heads"], t["d_rope"])
    keep = sparse.top_k_selection(scores, top_k)
    dense_out, _ = latent.mla_attention(x, mla, t["n_heads"], d_c, t["d_rope"])
    sparse_out, _ = latent.mla_attention(x, mla, t["n_heads"], d_c, t["d_rope"], select=keep)
    dense = _head0_weights(x, mla, d_c)
    difference = np.linalg.norm(sparse_out - dense_out, axis=-1) / np.linalg.norm(dense_out, axis=-1)
    return SparseRun(d_c, top_k, dense, _head0_weights(x, mla, d_c, keep), keep,
                     np.where(np.tril(np.ones_like(scores, bool)), scores, np.nan), difference,
                     np.where(keep, dense, 0).sum(-1),
                     np.where(sparse.top_k_selection(dense, top_k), dense, 0).sum(-1))


# --------------------------------------------------------------------------- what each order costs
def absorption_counts(shape: LatentShape = DEEPSEEK_V3, context: int = 4096) -> dict:
    """Multiplications of one layer for one new token against ``context`` cached latents, per order:
    ``{"naive": ..., "absorbed": ...}``. Naive: every cached latent up-projected to each head's key and value
    (context × d_c × n_heads × (d_head + d_v)), then the scores and the weighted values over keys of
    d_head + d_rope and values of d_v. Absorbed: W_UK folded into the query (n_heads × d_head × d_c), scores
    against the latent and the rope key (context × n_heads × (d_c + d_rope)), the weighted latents (context ×
    n_heads × d_c) and W_UV (n_heads × d_c × d_v). d_v = d_head, as in DeepSeek-V2 and V3."""
    if not isinstance(shape, LatentShape):
        raise TypeError(f"shape must be a LatentShape such as ll.DEEPSEEK_V3; got {type(shape).__name__}.")
    n = check_positive_int(context, "context")
    h, d, r, c = shape.n_heads, shape.d_head, shape.d_rope, shape.d_c
    naive = n * c * h * (d + d) + n * h * (d + r) + n * h * d
    absorbed = h * d * c + n * h * (c + r) + n * h * c + h * c * d
    return {"naive": naive, "absorbed": absorbed}


def sparse_counts(context: int, top_k: int = 2048, *, n_heads: int = 128, d_c: int = 512, d_rope: int = 64,
                  index_heads: int = 64, index_dim: int = 128) -> dict:
    """Multiplications per query of DeepSeek-V3.2's absorbed attention over ``context`` keys, dense and over
    its ``top_k``, and of the lightning indexer over every key: ``{"dense", "sparse", "indexer"}``."""
    n, k = check_positive_int(context, "context"), check_positive_int(top_k, "top_k")
    per_key = check_positive_int(n_heads, "n_heads") * (2 * check_positive_int(d_c, "d_c")
                                                        + check_positive_int(d_rope, "d_rope"))
    return {"dense": n * per_key, "sparse": min(n, k) * per_key,
            "indexer": n * check_positive_int(index_heads, "index_heads") * check_positive_int(index_dim,
                                                                                              "index_dim")}


def measure_orders(contexts=(512, 2048), *, seed: int = 0, repeats: int = 3) -> dict:
    """One run's time of one new token through a layer of 16 heads (d_c 128, heads of 32, rope 16) against
    each context, naive and absorbed: ``{context: (naive seconds, absorbed seconds)}`` (the best of
    ``repeats``). Timings vary by machine: the notebook prints their ratio's verdict."""
    import time

    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    h, d, r, c, d_model = 16, 32, 16, 128, 256
    w = {"w_uq": rng.standard_normal((d_model, h * (d + r))) / 16,
         "w_dkv": rng.standard_normal((d_model, c)) / 16, "kv_norm": np.ones(c),
         "w_uk": rng.standard_normal((c, h * d)) / 11, "w_uv": rng.standard_normal((c, h * d)) / 11,
         "w_kr": rng.standard_normal((d_model, r)) / 16, "w_o": rng.standard_normal((h * d, d_model)) / 22}
    found = {}
    for n in contexts:
        n = check_int_in_range(n, "context", 1, 16384)
        _, _, cache, _ = latent.mla_scores(rng.standard_normal((n, d_model)), w, h, c, r)   # the cache only
        step = rng.standard_normal((1, d_model))
        latent.mla_attention(step, w, h, c, r, cache=cache, absorbed=True)      # a first call, not timed
        best = []
        for absorbed in (False, True):
            times = []
            for _ in range(check_positive_int(repeats, "repeats")):
                start = time.perf_counter()
                latent.mla_attention(step, w, h, c, r, cache=cache, absorbed=absorbed)
                times.append(time.perf_counter() - start)
            best.append(min(times))
        found[n] = tuple(best)
    return found


# --------------------------------------------------------------------------- transformers' modules, in a cell
def look_inside_deepseek(seed: int = 0) -> list[str]:
    """Build transformers' ``DeepseekV3Attention`` and ``DeepseekV32Attention`` on tiny random configurations
    (nothing downloaded), read them with the adapters and run the course's functions beside them; one line per
    module, its agreements as claims at their precision: below 1e-6 as transformers ships it (its RMSNorm
    rounds its input to float32), below 1e-10 with that norm run in float64 (:func:`unrounded_rms_norm`).
    Without transformers, one line saying so."""
    import importlib.util

    if importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None:
        return ["transformers (with torch) is not installed here, so there is nothing to compare with: "
                "pip install transformers==5.23.0, then run this cell again."]
    import torch
    from transformers import DeepseekV3Config, DeepseekV32Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention
    from transformers.models.deepseek_v32.modeling_deepseek_v32 import DeepseekV32Attention

    from .measurements import difference_claim

    settings = dict(vocab_size=32, hidden_size=16, intermediate_size=16, moe_intermediate_size=8,
                    num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=6,
                    q_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=4, v_head_dim=5,
                    rope_parameters={"rope_type": "default", "rope_theta": 500.0})
    gen = torch.Generator().manual_seed(check_seed(seed, allow_generator=False))
    x = np.random.default_rng(seed).standard_normal((1, 12, 16))
    angles = np.arange(12)[:, None] * 500.0 ** (-np.arange(0, 4, 2) / 4)
    both = np.concatenate([angles, angles], axis=-1)[None]
    cos_sin = (torch.from_numpy(np.cos(both)), torch.from_numpy(np.sin(both)))
    mask = torch.zeros(1, 1, 12, 12, dtype=torch.float64).masked_fill(
        ~torch.ones(12, 12, dtype=torch.bool).tril(), torch.finfo(torch.float64).min)
    inputs = dict(position_embeddings=cos_sin, attention_mask=mask)
    lines = []
    for kind, config in ((DeepseekV3Attention, DeepseekV3Config(**settings)),
                         (DeepseekV32Attention, DeepseekV32Config(**settings, index_n_heads=8,
                                                                   index_head_dim=6, index_topk=3))):
        config._attn_implementation = "sdpa"
        module = kind(config, layer_idx=0).double().eval()
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.4)
            shipped = module(torch.from_numpy(x), **inputs)[0].numpy()
            with _float64_norms(module):
                exact = module(torch.from_numpy(x), **inputs)[0].numpy()
        read = weights_from_deepseek_attention(module)
        select = None
        if kind is DeepseekV32Attention:
            q_latent = latent.rms_norm(x @ read["weights"]["w_dq"], read["weights"]["q_norm"])
            scores = sparse.lightning_indexer(x, q_latent, **weights_from_deepseek_indexer(module.indexer))
            select = sparse.top_k_selection(scores, module.indexer.index_topk)
        ours, _ = latent.mla_attention(x, **read, absorbed=True, select=select)
        what = ("DeepseekV3Attention, float64, the course's absorbed MLA" if select is None else
                "DeepseekV32Attention (top 3 keys by the indexer), float64, the course's sparse MLA")
        lines.append(f"{what}: {difference_claim(ours, shipped, below=1e-6)} as transformers ships it (its "
                     f"RMSNorm rounds its input to float32 even in a float64 model); "
                     f"{difference_claim(ours, exact, below=1e-10)} with that norm run in float64")
    return lines


@contextmanager
def _float64_norms(module):
    """``module``'s two RMSNorms (``q_a_layernorm``, ``kv_a_layernorm``) without transformers' rounding to
    float32, while the block runs (:func:`unrounded_rms_norm`)."""
    norms = [getattr(module, name) for name in ("q_a_layernorm", "kv_a_layernorm") if hasattr(module, name)]
    for norm in norms:
        norm.forward = functools.partial(unrounded_rms_norm, norm)
    try:
        yield
    finally:
        for norm in norms:
            del norm.forward


def unrounded_rms_norm(norm, hidden):
    """transformers' DeepSeek RMSNorm ``norm`` applied to the tensor ``hidden`` without its rounding to
    float32: x / √(mean(x²) + ε) · gain, in x's dtype (lesson 14's
    :func:`~lessons_lib.core.latent.rms_norm`)."""
    import torch

    if hidden.shape[-1:] != norm.weight.shape:
        raise ValueError(f"hidden has width {tuple(hidden.shape)[-1:]} but the norm's gain has shape "
                         f"{tuple(norm.weight.shape)}: the norm works along the last axis")
    mean_square = hidden.pow(2).mean(-1, keepdim=True)
    return norm.weight * (hidden * torch.rsqrt(mean_square + norm.variance_epsilon))
