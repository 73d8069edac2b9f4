"""DeepSeek Sparse Attention (DSA, DeepSeek-V3.2): each query attends to the k keys a cheap indexer picks.
Notebook 14.

Dense causal attention costs every query a dot product with every earlier key: O(N²) for N tokens. DSA's
**lightning indexer** scores every key with a few small heads first (DeepSeek-AI 2025, "DeepSeek-V3.2",
§2.1)::

    I(t, s) = Σ_j w_{t,j} · ReLU(q_{t,j} · k_s / √d_I)          (j: the indexer's heads, d_I their width)

one small key k_s per token shared by the indexer's heads, and a weight w_{t,j} per query and head
(:func:`dsa_indexer_scores`; :func:`lightning_indexer` makes q, k and w from a layer's input as transformers'
``DeepseekV32Indexer`` does). Each query then keeps its ``top_k`` highest-scoring keys among those it may
see (:func:`top_k_selection`) and attends to them alone (:func:`sparse_attention`): O(N·k) for the
attention, while the indexer, still O(N²), is cheap per pair. With ``top_k`` ≥ the keys a query may see it
is dense causal attention; a key the indexer ranks low is never seen, whatever the attention would have
given it. :func:`sparse_attention` gathers each query's kept keys and values and attends to those alone.
"""

from __future__ import annotations

import numpy as np

from .._checks import (
    as_float_array,
    check_base,
    check_convention,
    check_memory,
    check_positions,
    check_positive_int,
    check_projection,
    check_qkv,
    check_real,
    check_scale,
    check_top_k,
)
from .position import DEFAULT_BASE, rope

__all__ = ["INDEXER_WEIGHT_NAMES", "dsa_indexer_scores", "lightning_indexer", "top_k_selection",
           "sparse_attention"]

#: The weights of DeepSeek-V3.2's indexer (``x @ w``, (in, out)), named for what they make.
INDEXER_WEIGHT_NAMES = {
    "w_iq": "(d_cq, n_heads·d_I): the indexer's queries, from the query's latent c_q",
    "w_ik": "(d_model, d_I): the indexer's key, one per token",
    "k_norm": "(d_I,): the gain of the key's LayerNorm",
    "k_norm_bias": "(d_I,): the bias of the key's LayerNorm",
    "w_iw": "(d_model, n_heads): each indexer head's weight for a query",
}


def dsa_indexer_scores(q, k, head_weights, *, scale: float | None = None) -> np.ndarray:
    """The lightning indexer's score of every key for every query: ``(..., L, S)``.

    I(t, s) = Σ_j w_{t,j} · ReLU(scale · q_{t,j} · k_s): ``q (..., L, n_heads, d_I)`` the indexer's queries,
    ``k (..., S, d_I)`` its keys (one per token, shared by its heads), ``head_weights (..., L, n_heads)``;
    ``scale`` defaults to 1/√d_I. No mask: :func:`top_k_selection` keeps the causal keys.
    """
    q = as_float_array(q, "q", min_ndim=3, shape="(..., L, n_heads, d_I)")
    k = as_float_array(k, "k", min_ndim=2, shape="(..., S, d_I)")
    head_weights = as_float_array(head_weights, "head_weights", min_ndim=2, shape="(..., L, n_heads)")
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(f"k has d_I = {k.shape[-1]} but q has d_I = {q.shape[-1]}: the indexer's queries "
                         f"and keys meet by a dot product.")
    if head_weights.shape[-2:] != q.shape[-3:-1]:
        raise ValueError(f"head_weights has shape {head_weights.shape} but q has {q.shape[-3]} queries of "
                         f"{q.shape[-2]} heads: give one weight per query and head, (..., L, n_heads).")
    factor = 1 / np.sqrt(q.shape[-1]) if scale is None else check_real(scale, "scale", positive=True)
    L, H, S = q.shape[-3], q.shape[-2], k.shape[-2]
    batch = np.broadcast_shapes(q.shape[:-3], k.shape[:-2], head_weights.shape[:-2])
    check_memory(8.0 * int(np.prod(batch)) * L * H * S, f"dsa_indexer_scores over {L} queries × {S} keys × "
                 f"{H} heads", "Use a shorter sequence or fewer indexer heads.")
    per_head = np.maximum(np.swapaxes(q, -2, -3) @ np.swapaxes(k, -1, -2)[..., None, :, :] * factor, 0)
    return np.einsum("...hls,...lh->...ls", per_head, head_weights)         # (..., L, S)


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps) * gain + bias


def lightning_indexer(x, q_latent, weights, n_heads: int, d_rope: int, positions=None, *,
                      base: float = DEFAULT_BASE, convention: str = "half", eps: float = 1e-6) -> np.ndarray:
    """DeepSeek-V3.2's indexer on a whole sequence: the scores ``(..., L, L)`` of :func:`dsa_indexer_scores`.

    ``x (..., L, d_model)`` the layer's input, ``q_latent (..., L, d_cq)`` the query's latent c_q (MLA's
    ``RMSNorm(x·W_DQ)``); ``weights`` maps :data:`INDEXER_WEIGHT_NAMES`. As transformers'
    ``DeepseekV32Indexer``: q = c_q·W_IQ per head, k = LayerNorm(x·W_IK), RoPE on the first ``d_rope`` numbers
    of both (``convention`` "half", unlike MLA's interleaved pairs), w = x·W_IW / √n_heads.
    """
    x = as_float_array(x, "x", min_ndim=2, shape="(..., seq_len, d_model)")
    q_latent = as_float_array(q_latent, "q_latent", min_ndim=2, shape="(..., seq_len, d_cq)")
    n_heads, d_rope = check_positive_int(n_heads, "n_heads"), check_positive_int(d_rope, "d_rope")
    base, convention = check_base(base), check_convention(convention)
    if not hasattr(weights, "keys") or set(weights) != set(INDEXER_WEIGHT_NAMES):
        given = sorted(weights) if hasattr(weights, "keys") else type(weights).__name__
        raise ValueError(f"weights must map exactly {', '.join(INDEXER_WEIGHT_NAMES)}; got {given}.")
    if q_latent.shape[-2] != x.shape[-2]:
        raise ValueError(f"q_latent has {q_latent.shape[-2]} tokens but x has {x.shape[-2]}: one latent per "
                         f"token.")
    w_ik = check_projection(weights["w_ik"], "w_ik", x.shape[-1], rows_are="d_model of x")
    d_i = w_ik.shape[1]
    if not d_rope <= d_i:
        raise ValueError(f"d_rope = {d_rope} is more than the indexer's width d_I = {d_i}.")
    w_iq = check_projection(weights["w_iq"], "w_iq", q_latent.shape[-1], n_heads * d_i, rows_are="d_cq",
                            cols_are=f"n_heads × d_I = {n_heads} × {d_i}")
    w_iw = check_projection(weights["w_iw"], "w_iw", x.shape[-1], n_heads, rows_are="d_model of x",
                            cols_are="n_heads")
    gain, bias = (check_projection(weights[n], n, d_i, ndim=1, rows_are="d_I")
                  for n in ("k_norm", "k_norm_bias"))
    positions = np.arange(x.shape[-2]) if positions is None else check_positions(positions, (x.shape[-2],))
    def turned(z):          # RoPE on the first d_rope numbers of each row, the rest as it is
        return np.concatenate([rope(z[..., :d_rope], positions, base=base, convention=convention),
                               z[..., d_rope:]], axis=-1)

    q = (q_latent @ w_iq).reshape(*q_latent.shape[:-1], n_heads, d_i)       # (..., L, H, d_I)
    q = np.swapaxes(turned(np.swapaxes(q, -2, -3)), -2, -3)
    k = turned(_layer_norm(x @ w_ik, gain, bias, check_real(eps, "eps")))   # (..., L, d_I)
    return dsa_indexer_scores(q, k, (x @ w_iw) / np.sqrt(n_heads))


def _ranked(scores: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(indices (..., L, top_k), valid (..., L, top_k))``: each query's top_k keys by ``scores`` among those
    it may see (causal, bottom right), best first; ``valid`` is False where a query sees fewer than top_k keys
    (those indices point at keys it may not see). A partial sort: the top_k found in O(S) per query, then
    ordered among themselves."""
    L, S = scores.shape[-2:]
    causal = np.arange(S)[None, :] <= np.arange(S - L, S)[:, None]
    order = np.where(causal, -scores, np.inf)
    ranked = np.argpartition(order, top_k - 1, axis=-1)[..., :top_k] if top_k < S else np.argsort(order, -1)
    ranked = np.take_along_axis(ranked, np.argsort(np.take_along_axis(order, ranked, -1), -1), -1)
    valid = ranked <= np.arange(S - L, S)[:, None]
    return ranked, valid


def _checked_scores(scores, top_k) -> tuple[np.ndarray, int]:
    scores = as_float_array(scores, "scores", min_ndim=2, shape="(..., L, S)")
    L, S = scores.shape[-2:]
    if L > S:
        raise ValueError(f"scores has {L} queries but {S} keys: each query sees itself, so there are at "
                         f"least as many keys as queries.")
    top_k = check_top_k(top_k, S)
    check_memory(24.0 * scores.size, f"top_k_selection over scores of shape {scores.shape}",
                 "Use a shorter sequence.")
    return scores, top_k


def top_k_selection(scores, top_k: int) -> np.ndarray:
    """Which keys each query keeps: bool ``(..., L, S)``, True for its ``top_k`` highest ``scores`` among the
    keys it may see (causal, aligned at the bottom right: query i of L sits at S − L + i).

    A query that may see fewer than ``top_k`` keys keeps them all; of keys with equal scores at the edge,
    either may be kept.
    """
    scores, top_k = _checked_scores(scores, top_k)
    ranked, valid = _ranked(scores, top_k)
    keep = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(keep, ranked, valid, axis=-1)
    return keep


def sparse_attention(q, k, v, top_k: int, scores, *, scale: float | None = None):
    """Causal attention in which each query attends to its ``top_k`` keys by the indexer's ``scores``:
    ``(output (..., L, d_v), weights (..., L, S))``, weights 0 on every key not kept.

    ``q (..., L, d_k)``, ``k (..., S, d_k)``, ``v (..., S, d_v)`` as in
    :func:`~lessons_lib.core.attention.scaled_dot_product_attention`; ``scores`` broadcasts to ``(..., L, S)``
    (one indexer for every head: ``scores[..., None, :, :]``). Each query gathers its kept keys and values and
    attends to those alone: top_k dot products per query, not S. The kept weights of each row sum to 1.
    """
    q, k, v = check_qkv(q, k, v)
    scores, top_k = _checked_scores(scores, top_k)
    L, S = q.shape[-2], k.shape[-2]
    if scores.shape[-2:] != (L, S):
        raise ValueError(f"scores has shape {scores.shape} but Q has {L} queries and K "
                         f"{S} keys: give one indexer score per query and key, (..., L, S).")
    factor = check_scale(scale, q.shape[-1])
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], scores.shape[:-2])
    check_memory(q.dtype.itemsize * int(np.prod(batch)) * L * (top_k * (k.shape[-1] + v.shape[-1] + 2) + S),
                 f"sparse_attention over {L} queries × {top_k} keys",
                 "Use a shorter sequence or a smaller top_k.")
    ranked, valid = (np.broadcast_to(a, (*batch, L, top_k)) for a in _ranked(scores, top_k))  # chosen once
    gather = ranked[..., None]                                                      # (..., L, top_k, 1)
    keys, values = (np.take_along_axis(np.broadcast_to(x, (*batch, S, x.shape[-1]))[..., None, :, :], gather,
                                       axis=-2) for x in (k, v))                   # (..., L, top_k, d)
    kept = (q[..., None, :] @ np.swapaxes(keys, -1, -2))[..., 0, :] * factor       # (..., L, top_k)
    kept = np.where(valid, kept, -np.inf)
    kept = np.exp(kept - kept.max(axis=-1, keepdims=True))
    kept /= kept.sum(axis=-1, keepdims=True)
    output = (kept[..., None, :] @ values)[..., 0, :]                               # (..., L, d_v)
    weights = np.zeros((*batch, L, S), dtype=q.dtype)
    np.put_along_axis(weights, ranked, kept, axis=-1)
    return output, weights
