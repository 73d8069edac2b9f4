"""FlashAttention's idea in numpy: tiles plus an online softmax.

Naive attention writes the whole (L × S) score matrix to memory. FlashAttention
(Dao et al. 2022) never does: it walks over blocks of keys, keeping for each
query only a running maximum m, a running sum ℓ of exp(score − m) and a running
weighted sum of values. When a new block raises the maximum from m to m', the
old sums are rescaled by exp(m − m'). At the end, output = acc / ℓ, equal to
softmax(Q·Kᵀ/√d_k)·V up to rounding. Taught in notebook 08.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_positive_int, check_qkv, check_scale

__all__ = ["flash_attention"]


def flash_attention(q, k, v, causal: bool = False, scale: float | None = None,
                    block_size: int = 64) -> np.ndarray:
    """Attention output computed block by block; holds at most a block_size² tile of scores.

    Same shapes and result as ``scaled_dot_product_attention(q, k, v, causal=causal,
    scale=scale)[0]``: ``q (..., L, d_k)``, ``k (..., S, d_k)``, ``v (..., S, d_v)``
    → ``(..., L, d_v)``.
    """
    q, k, v = check_qkv(q, k, v)
    block_size = check_positive_int(block_size, "block_size")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False; got {causal!r}.")
    dtype = q.dtype
    factor = dtype.type(check_scale(scale, q.shape[-1]))
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    L, S, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    out = np.empty((*batch, L, d_v), dtype=dtype)

    for q0 in range(0, L, block_size):
        q_blk = q[..., q0:q0 + block_size, :] * factor
        rows = np.arange(q0, q0 + q_blk.shape[-2])
        m = np.full((*batch, len(rows), 1), -np.inf, dtype=dtype)   # running max
        ell = np.zeros((*batch, len(rows), 1), dtype=dtype)        # running sum of exp
        acc = np.zeros((*batch, len(rows), d_v), dtype=dtype)      # running Σ exp·v
        k_end = min(S, rows[-1] + 1) if causal else S                # later keys are all masked
        for k0 in range(0, k_end, block_size):
            tile = q_blk @ np.swapaxes(k[..., k0:k0 + block_size, :], -1, -2)
            if causal:
                cols = np.arange(k0, k0 + tile.shape[-1])
                tile = np.where(cols[None, :] <= rows[:, None], tile, -np.inf)
            m_new = np.maximum(m, tile.max(axis=-1, keepdims=True))
            safe = np.where(m_new == -np.inf, 0, m_new)             # rows with nothing seen yet
            p = np.exp(tile - safe)
            rescale = np.exp(m - safe)
            ell = ell * rescale + p.sum(axis=-1, keepdims=True)
            acc = acc * rescale + p @ v[..., k0:k0 + block_size, :]
            m = m_new
        out[..., q0:q0 + len(rows), :] = acc / np.where(ell == 0, 1, ell)
    return out
