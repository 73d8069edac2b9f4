"""What the lessons measure, computed here so that figures (plots, live figures) only draw.

* :func:`measure_score_variance` (notebook 04): var(q·k) ≈ d_k, and ≈ 1 after dividing by √d_k.
"""

from __future__ import annotations

import numpy as np

from ..core.attention import attention_scores, scale_scores
from .data import random_qkv

__all__ = ["measure_score_variance"]

DEFAULT_D_KS = tuple(2 ** i for i in range(10))  # 1, 2, 4, ..., 512 (the d_k slider of the explorers)


def check_d_ks(d_ks) -> np.ndarray:
    """``d_ks`` as a 1-D integer array of positive sizes, or a ValueError that says what is wrong."""
    arr = np.asarray(d_ks)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu" or (arr < 1).any():
        raise ValueError(
            f"d_ks must be a non-empty list of positive whole numbers such as [1, 2, 4, 8]; got {d_ks!r}."
        )
    return arr


def measure_score_variance(d_ks=DEFAULT_D_KS, *, seq_len: int = 256, seed: int = 0):
    """Measured variance of q·k and of q·k/√d_k for random unit-variance Q, K, one value per d_k.

    q·k = Σ_m q_m k_m is a sum of d_k independent terms of variance 1, so
    var(q·k) ≈ d_k, and dividing by √d_k brings it back to ≈ 1 (notebook 04).
    Uses ``data.random_qkv`` (seed ``seed + i`` for the i-th d_k) and
    ``attention.attention_scores`` / ``scale_scores``. Returns
    ``(d_ks, raw_variances, scaled_variances)`` as arrays (ints, floats, floats).

    >>> d_ks, raw, scaled = measure_score_variance([1, 64], seq_len=64)
    >>> d_ks.tolist(), bool(40 < raw[1] < 90), bool(0.6 < scaled[1] < 1.4)
    ([1, 64], True, True)
    """
    d_ks = check_d_ks(d_ks)
    raw, scaled = [], []
    for i, d_k in enumerate(d_ks):
        q, k, _ = random_qkv(seq_len, int(d_k), seed=seed + i)
        s = attention_scores(q, k)
        raw.append(float(np.var(s)))
        scaled.append(float(np.var(scale_scores(s, int(d_k)))))
    return d_ks, np.array(raw), np.array(scaled)
