"""Multi-head attention: split → attend in parallel → concatenate → W_O.

    MultiHead(X) = Concat(head_1, …, head_h) · W_O,
    head_i = Attention(X·W_Q^i, X·W_K^i, X·W_V^i)

Like nanoGPT, the h per-head projections are stored side by side in one
``(d_model, d_model)`` matrix each: head i owns columns i·d_head … (i+1)·d_head
− 1, with d_head = d_model / h. Taught in notebook 06.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_positive_int
from .attention import project_qkv, scaled_dot_product_attention

__all__ = ["split_heads", "merge_heads", "multi_head_attention"]


def split_heads(x, n_heads: int) -> np.ndarray:
    """``(..., seq_len, d_model)`` → ``(..., n_heads, seq_len, d_head)``, d_head = d_model / n_heads."""
    x = as_float_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    n_heads = _check_heads(n_heads, d_model)
    seq_len = x.shape[-2]
    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, d_model // n_heads), -2, -3).reshape(
        *x.shape[:-2], n_heads, seq_len, d_model // n_heads)


def merge_heads(x) -> np.ndarray:
    """``(..., n_heads, seq_len, d_head)`` → ``(..., seq_len, n_heads·d_head)``: the concatenation."""
    x = as_float_array(x, "x", min_ndim=3)
    n_heads, seq_len, d_head = x.shape[-3:]
    return np.swapaxes(x, -2, -3).reshape(*x.shape[:-3], seq_len, n_heads * d_head)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads: int, mask=None, causal: bool = False):
    """Self-attention with ``n_heads`` heads. Returns ``(output, weights)``.

    ``x (..., L, d_model)``; ``w_q, w_k, w_v, w_o`` each ``(d_model, d_model)``;
    ``mask`` bool (True = may attend) broadcastable to ``(..., L, L)``.
    ``output (..., L, d_model)``; ``weights (..., n_heads, L, L)``, one
    attention pattern per head.
    """
    x = as_float_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    n_heads = _check_heads(n_heads, d_model)
    named = {"W_Q": w_q, "W_K": w_k, "W_V": w_v, "W_O": w_o}
    for name, w in named.items():
        w = as_float_array(w, name, min_ndim=2)
        if w.shape != (d_model, d_model):
            raise ValueError(
                f"{name} has shape {w.shape}, but with d_model={d_model} it must be "
                f"({d_model}, {d_model}): all heads' projections side by side."
            )
        named[name] = w
    q, k, v = (split_heads(t, n_heads) for t in project_qkv(x, named["W_Q"], named["W_K"], named["W_V"]))
    if mask is not None:
        mask = np.asarray(mask)
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]  # the same mask for every head
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    return merge_heads(heads) @ named["W_O"], weights


def _check_heads(n_heads, d_model: int) -> int:
    n_heads = check_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
        raise ValueError(
            f"n_heads={n_heads} does not divide d_model={d_model}: each head gets d_model / n_heads "
            f"features, which must be a whole number. Try one of {divisors}."
        )
    return n_heads
