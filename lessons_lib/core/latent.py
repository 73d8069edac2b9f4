"""Multi-head latent attention (MLA, DeepSeek-V2 and V3): cache a latent, not keys and values. Notebook 14.

Multi-head attention caches a key and a value per head for every token; MLA caches one small vector per
token, the **latent** ``c = RMSNorm(x·W_DKV)`` of d_c numbers, and makes every head's key and value from it
(DeepSeek-AI 2024, "DeepSeek-V2", §2.1)::

    K_h = c·W_UK_h          V_h = c·W_UV_h          (W_UK_h: d_c × d_nope, W_UV_h: d_c × d_v)

RoPE cannot turn those keys (see below), so each head's score adds a second, rotated part: a query part
``q_rope_h`` and **one rope key per token, shared by all heads**, ``k_rope = RoPE(x·W_KR)`` (d_rope wide)::

    score_h(t, s) = (q_nope_h(t) · K_h(s) + q_rope_h(t) · k_rope(s)) / √(d_nope + d_rope)

The cache holds ``c`` and ``k_rope``: d_c + d_rope numbers per token and layer (:class:`LatentCache`).
The query has a low-rank path too, ``c_q = RMSNorm(x·W_DQ)``, ``[q_nope | q_rope] = c_q·W_UQ`` (``w_dq``
optional: without it, ``x·W_UQ``); the output is ``[o_1 … o_H]·W_O``.

**Absorption.** ``q_nope_h · (c·W_UK_h)ᵀ = (q_nope_h·W_UK_hᵀ) · cᵀ``: fold W_UK_h into the query and every
head scores the latent itself; ``(weights·c)·W_UV_h·W_O_h`` folds W_UV_h into the output. Keys and values are
never built: the heads share one key ``[c | k_rope]`` and one value ``c``, multi-query attention over the
latent (``absorbed=True``, equal to the naive order below 1e-12 in float64). A rotation R_t between the
query and W_UK_h would have to be folded too, ``q·R_t·(R_s·W_UK_hᵀ)`` depends on the key's position s: no
fixed matrix absorbs it, which is why the rope part stands apart (:func:`absorbed_rope_scores` shows it).

Weights are used as ``x @ w`` (in, out), named as in DeepSeek's papers (:data:`WEIGHT_NAMES`); RoPE is
lesson 11's :func:`~lessons_lib.core.position.rope` (both layouts: DeepSeek's checkpoints lay its pairs out
interleaved, transformers' ``rope_interleave``). Shapes: ``x (..., L, d_model)``; heads are the third axis
from the end, as in torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import (
    as_bool_mask,
    as_float_array,
    check_base,
    check_convention,
    check_flag,
    check_memory,
    check_positions,
    check_positive_int,
    check_projection,
    check_real,
    check_scale,
)
from .attention import scaled_dot_product_attention
from .multihead import merge_heads
from .position import DEFAULT_BASE, rope

__all__ = ["WEIGHT_NAMES", "rms_norm", "LatentCache", "mla_attention", "mla_scores", "absorbed_rope_scores"]

#: The weights of one MLA layer, by DeepSeek's names, and what each does (``x @ w``, (in, out)).
WEIGHT_NAMES = {
    "w_dq": "(d_model, d_cq): the query's down-projection (optional: without it the query is x·W_UQ)",
    "q_norm": "(d_cq,): the RMSNorm gain of the query's latent (with w_dq)",
    "w_uq": "(d_cq or d_model, n_heads·(d_nope + d_rope)): each head's query, nope part then rope part",
    "w_dkv": "(d_model, d_c): the down-projection to the cached latent c",
    "kv_norm": "(d_c,): the RMSNorm gain of the latent",
    "w_uk": "(d_c, n_heads·d_nope): each head's key from the latent",
    "w_uv": "(d_c, n_heads·d_v): each head's value from the latent",
    "w_kr": "(d_model, d_rope): the rope key, one for all heads",
    "w_o": "(n_heads·d_v, d_model): the output projection",
}


def rms_norm(x, gain=None, *, eps: float = 1e-6) -> np.ndarray:
    """RMSNorm: ``x / √(mean(x²) + eps) · gain`` over the last axis (Zhang & Sennrich 2019), ``x``'s shape.

    >>> rms_norm(np.array([[3.0, 4.0]]), eps=0.0).round(4).tolist()
    [[0.8485, 1.1314]]
    """
    x = as_float_array(x, "x", min_ndim=1)
    eps = check_real(eps, "eps")
    if eps < 0:
        raise ValueError(f"eps must be 0 or more (a small number that keeps a zero row from dividing by 0); "
                         f"got {eps}.")
    out = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return out if gain is None else out * check_projection(gain, "gain", x.shape[-1], ndim=1,
                                                           rows_are="the last axis of x")


@dataclass(frozen=True)
class LatentCache:
    """What MLA keeps per token: ``latent (..., S, d_c)``, ``rope_key (..., S, d_rope)`` (already turned by
    RoPE at its position) and ``positions (S,)``. Nothing per head: d_c + d_rope numbers per token and layer.
    :func:`mla_attention` returns a new cache with the new tokens appended."""

    latent: np.ndarray
    rope_key: np.ndarray
    positions: np.ndarray

    @property
    def length(self) -> int:
        return int(self.latent.shape[-2])

    @property
    def numbers_per_token(self) -> int:
        """d_c + d_rope: what one token costs this cache, in numbers."""
        return int(self.latent.shape[-1] + self.rope_key.shape[-1])

    def appended(self, latent: np.ndarray, rope_key: np.ndarray, positions: np.ndarray) -> LatentCache:
        """This cache with new tokens after it (checked: same d_c, d_rope, leading axes and dtype)."""
        for new, held, name in ((latent, self.latent, "latent"), (rope_key, self.rope_key, "rope key")):
            if new.shape[:-2] != held.shape[:-2] or new.shape[-1] != held.shape[-1]:
                raise ValueError(f"the new {name} has shape {new.shape} but the cache holds {held.shape}: a "
                                 f"cache belongs to one layer with one d_c and d_rope, one batch.")
        if latent.dtype != self.latent.dtype:
            raise ValueError(f"the new latent is {latent.dtype} but the cache holds {self.latent.dtype}: "
                             f"cast x to {self.latent.dtype}, or start a new cache.")
        return LatentCache(np.concatenate([self.latent, latent], axis=-2),
                           np.concatenate([self.rope_key, rope_key], axis=-2),
                           np.concatenate([self.positions, positions]))


def _weights(weights, n_heads: int, d_model: int, d_c: int, d_rope: int) -> dict:
    """The layer's weights, checked against each other; adds d_nope, d_v (derived from W_UK, W_UV)."""
    if not hasattr(weights, "keys"):
        raise TypeError(f"weights must map DeepSeek's names ({', '.join(WEIGHT_NAMES)}) to arrays; got "
                        f"{type(weights).__name__}.")
    unknown = sorted(set(weights) - set(WEIGHT_NAMES))
    if unknown:
        raise ValueError(f"weights has {', '.join(map(repr, unknown))}, which MLA does not use; its weights "
                         f"are {', '.join(WEIGHT_NAMES)}.")
    missing = [n for n in WEIGHT_NAMES if n not in weights and n not in ("w_dq", "q_norm")]
    if missing or (("w_dq" in weights) != ("q_norm" in weights)):
        missing = missing or (["q_norm"] if "w_dq" in weights else ["w_dq"])
        raise ValueError(f"weights lacks {', '.join(missing)}: MLA needs {', '.join(WEIGHT_NAMES)} (w_dq and "
                         f"q_norm together, or neither).")
    w = {"w_dkv": check_projection(weights["w_dkv"], "w_dkv", d_model, d_c, rows_are="d_model of x",
                                   cols_are="d_c"),
         "kv_norm": check_projection(weights["kv_norm"], "kv_norm", d_c, ndim=1, rows_are="d_c"),
         "w_kr": check_projection(weights["w_kr"], "w_kr", d_model, d_rope, rows_are="d_model of x",
                                  cols_are="d_rope")}
    w["w_uk"] = check_projection(weights["w_uk"], "w_uk", d_c, rows_are="d_c")
    w["w_uv"] = check_projection(weights["w_uv"], "w_uv", d_c, rows_are="d_c")
    for name in ("w_uk", "w_uv"):
        if w[name].shape[1] % n_heads:
            raise ValueError(f"{name} has {w[name].shape[1]} columns, not a whole number per head for "
                             f"n_heads = {n_heads}: each head's part stands side by side.")
    w["d_nope"], w["d_v"] = w["w_uk"].shape[1] // n_heads, w["w_uv"].shape[1] // n_heads
    d_q_in = d_model
    if "w_dq" in weights:
        w["w_dq"] = check_projection(weights["w_dq"], "w_dq", d_model, rows_are="d_model of x")
        d_q_in = w["w_dq"].shape[1]
        w["q_norm"] = check_projection(weights["q_norm"], "q_norm", d_q_in, ndim=1, rows_are="d_cq")
    widths = f"n_heads × (d_nope + d_rope) = {n_heads} × ({w['d_nope']} + {d_rope})"
    w["w_uq"] = check_projection(weights["w_uq"], "w_uq", d_q_in, n_heads * (w["d_nope"] + d_rope),
                                 rows_are="d_cq" if "w_dq" in weights else "d_model of x", cols_are=widths)
    w["w_o"] = check_projection(weights["w_o"], "w_o", n_heads * w["d_v"], d_model,
                                rows_are=f"n_heads × d_v = {n_heads} × {w['d_v']}", cols_are="d_model of x")
    return w


def _heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """``(..., L, n_heads·d)`` → ``(..., n_heads, L, d)``."""
    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, -1), -2, -3)


def mla_scores(x, weights, n_heads: int, d_c: int, d_rope: int, positions=None,
               cache: LatentCache | None = None, *, base: float = DEFAULT_BASE,
               convention: str = "interleaved", eps: float = 1e-6):
    """The pieces of an MLA layer before its scores: ``(q_nope (..., H, L, d_nope), q_rope (..., H, L,
    d_rope), cache)`` with the new tokens' latent and rope key appended to ``cache``, and the checked weights.

    Used by :func:`mla_attention`; lesson 14 shows the pieces one by one.
    """
    x = as_float_array(x, "x", min_ndim=2, shape="(..., seq_len, d_model)")
    n_heads = check_positive_int(n_heads, "n_heads")
    d_c, d_rope = check_positive_int(d_c, "d_c"), check_positive_int(d_rope, "d_rope")
    base, convention = check_base(base), check_convention(convention)
    w = _weights(weights, n_heads, x.shape[-1], d_c, d_rope)
    if cache is not None and not isinstance(cache, LatentCache):
        raise TypeError(f"cache must be a LatentCache (what mla_attention returned) or None; got "
                        f"{type(cache).__name__}.")
    start = 0 if cache is None else int(cache.positions[-1]) + 1
    positions = np.arange(start, start + x.shape[-2]) if positions is None else check_positions(
        positions, (x.shape[-2],))
    if cache is not None and positions[0] <= cache.positions[-1]:
        raise ValueError(f"positions start at {positions[0]}, but the cache already holds position "
                         f"{cache.positions[-1]}: new tokens come after the cached ones.")
    check_memory(8.0 * n_heads * x.shape[-2] * (w["d_nope"] + d_rope + d_c) * max(1, x[..., 0, 0].size),
                 f"mla_attention's queries for {x.shape[-2]} tokens × {n_heads} heads", "Use fewer tokens.")
    c_q = x if "w_dq" not in w else rms_norm(x @ w["w_dq"], w["q_norm"], eps=eps)
    q = _heads(c_q @ w["w_uq"], n_heads)                                     # (..., H, L, d_nope + d_rope)
    q_nope, q_rope = q[..., : w["d_nope"]], rope(q[..., w["d_nope"]:], positions, base=base,
                                                 convention=convention)
    latent = rms_norm(x @ w["w_dkv"], w["kv_norm"], eps=eps)                 # (..., L, d_c): cached
    rope_key = rope(x @ w["w_kr"], positions, base=base, convention=convention)  # (..., L, d_rope): cached
    if cache is None:
        cache = LatentCache(latent, rope_key, positions)
    else:
        cache = cache.appended(latent, rope_key, positions)
    return q_nope, q_rope, cache, w


def mla_attention(x, weights, n_heads: int, d_c: int, d_rope: int, positions=None,
                  cache: LatentCache | None = None, absorbed: bool = False, *, base: float = DEFAULT_BASE,
                  convention: str = "interleaved", scale: float | None = None, eps: float = 1e-6,
                  select=None):
    """One MLA layer on new tokens ``x (..., L, d_model)``: returns ``(output (..., L, d_model), cache)``.

    ``weights`` maps :data:`WEIGHT_NAMES` to arrays; ``positions`` (default: right after ``cache``, or
    0 … L − 1) place the new tokens for RoPE (``base``, ``convention`` as lesson 11's ``rope``; DeepSeek's
    checkpoints are "interleaved"); ``cache`` (a :class:`LatentCache`, or None to start one) gets the new
    tokens' latent and rope key, and every query sees the cached keys and the new ones up to its own
    position (causal). ``scale`` defaults to the head's, 1/√(d_nope + d_rope). ``absorbed``: fold W_UK into
    the query and W_UV into W_O, so that the heads attend over the latent itself (the same numbers, another
    order; the module docstring). ``select`` (bool ``(..., L, S)``, True = kept) narrows each query's keys
    further: DeepSeek-V3.2's sparse attention passes the indexer's top-k (:mod:`~lessons_lib.core.sparse`).
    """
    absorbed = check_flag(absorbed, "absorbed")
    q_nope, q_rope, cache, w = mla_scores(x, weights, n_heads, d_c, d_rope, positions, cache, base=base,
                                          convention=convention, eps=eps)
    d_nope, d_v, new = w["d_nope"], w["d_v"], q_nope.shape[-2]
    factor = check_scale(scale, d_nope + d_rope)
    allowed = cache.positions[None, :] <= cache.positions[-new:, None]       # (L, S): causal, bottom right
    if select is not None:
        allowed = allowed & as_bool_mask(select, "select")[..., None, :, :]       # the same for every head
    c, k_rope = cache.latent[..., None, :, :], cache.rope_key[..., None, :, :]   # one "head" for all heads
    S = cache.length
    if absorbed:
        w_uk = w["w_uk"].reshape(d_c, n_heads, d_nope).transpose(1, 2, 0)        # (H, d_nope, d_c)
        q_latent = q_nope @ w_uk                                         # (..., H, L, d_c): W_UK folded
        o_latent, _ = scaled_dot_product_attention(
            np.concatenate([q_latent, q_rope], axis=-1), np.concatenate([c, k_rope], axis=-1), c,
            mask=allowed, scale=factor)                                           # (..., H, L, d_c)
        w_uv_o = (w["w_uv"].reshape(d_c, n_heads, d_v).transpose(1, 0, 2)     # (H, d_c, d_model):
                  @ w["w_o"].reshape(n_heads, d_v, -1))                          # W_UV folded into W_O
        return np.einsum("...hlc,hcd->...ld", o_latent, w_uv_o), cache
    check_memory(8.0 * n_heads * S * (2 * d_nope + d_rope + d_v) * max(1, c[..., 0, 0, 0].size),
                 f"mla_attention's keys and values for {S} tokens × {n_heads} heads",
                 "Use fewer tokens, or absorbed=True, which never builds them.")
    k_nope, v = _heads(cache.latent @ w["w_uk"], n_heads), _heads(cache.latent @ w["w_uv"], n_heads)
    k = np.concatenate([k_nope, np.broadcast_to(k_rope, (*k_nope.shape[:-1], d_rope))], axis=-1)
    out, _ = scaled_dot_product_attention(np.concatenate([q_nope, q_rope], axis=-1), k, v, mask=allowed,
                                          scale=factor)                           # (..., H, L, d_v)
    return merge_heads(out) @ w["w_o"], cache


def absorbed_rope_scores(q, k, w_uk, positions, *, base: float = DEFAULT_BASE, convention: str = "half"):
    """What folding W_UK into a *rotated* query would give, beside the true scores: ``(true, folded)``.

    ``q (L, d)`` one head's queries, ``k``: the latent ``(S, d_c)``, ``w_uk (d_c, d)``, both turned by RoPE
    at ``positions`` (one per token, L = S). True: ``RoPE(q)·RoPE(c·W_UK)ᵀ``. Folded: the query turned, then
    W_UK folded in as if no rotation stood between, ``(RoPE(q)·W_UKᵀ)·cᵀ``: equal only where every key sits
    at position 0. Notebook 14 measures the difference.
    """
    q = as_float_array(q, "q", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2, shape="(seq_len, d_c)")
    w_uk = check_projection(w_uk, "w_uk", k.shape[-1], q.shape[-1], rows_are="d_c of the latent",
                            cols_are="d of the query")
    q_rot = rope(q, positions, base=base, convention=convention)
    true = q_rot @ rope(k @ w_uk, positions, base=base, convention=convention).T
    folded = (q_rot @ w_uk.T) @ k.T
    return true, folded
