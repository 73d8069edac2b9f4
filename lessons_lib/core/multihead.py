"""Multi-head attention: split → attend in parallel → concatenate → W_O.

    MultiHead(X) = Concat(head_1, …, head_h) · W_O,
    head_i = Attention(X·W_Q^i, X·W_K^i, X·W_V^i)

Like nanoGPT, the h per-head projections are stored side by side in one
``(d_model, d_model)`` matrix each: head i owns columns i·d_head … (i+1)·d_head
− 1, with d_head = d_model / h. Taught in notebook 06; what the lesson does with heads (the
shapes at each stage, the cost, heads built by hand) is in :mod:`lessons_lib.lab.heads`.
"""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, check_mask, check_positive_int
from . import position
from .attention import project_qkv, scaled_dot_product_attention

__all__ = ["split_heads", "merge_heads", "multi_head_attention", "split_projection",
           "multi_head_attention_per_head"]


def split_heads(x, n_heads: int) -> np.ndarray:
    """``(..., seq_len, d_model)`` → ``(..., n_heads, seq_len, d_head)``, d_head = d_model / n_heads."""
    x = as_float_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    n_heads = check_heads(n_heads, d_model)
    seq_len = x.shape[-2]
    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, d_model // n_heads), -2, -3).reshape(
        *x.shape[:-2], n_heads, seq_len, d_model // n_heads)


def merge_heads(x) -> np.ndarray:
    """``(..., n_heads, seq_len, d_head)`` → ``(..., seq_len, n_heads·d_head)``: the concatenation."""
    x = as_float_array(x, "x", min_ndim=3, shape="(..., n_heads, seq_len, d_head)")
    n_heads, seq_len, d_head = x.shape[-3:]
    return np.swapaxes(x, -2, -3).reshape(*x.shape[:-3], seq_len, n_heads * d_head)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads: int, mask=None, causal: bool = False, *,
                         b_q=None, b_k=None, b_v=None, b_o=None, rope=None):
    """Self-attention with ``n_heads`` heads. Returns ``(output, weights)``.

        Q = X·W_Q + b_Q,  K = X·W_K + b_K,  V = X·W_V + b_V,   output = Concat(heads)·W_O + b_O

    ``x (..., L, d_model)``; ``w_q, w_k, w_v, w_o`` each ``(d_model, d_model)`` in the
    ``x @ W`` layout, (in, out): torch's ``nn.Linear`` stores the transpose, (out, in)
    (see :mod:`lessons_lib.lab.adapters`, which reads real models' weights). Biases ``b_q,
    b_k, b_v, b_o`` ``(d_model,)`` are optional (None: no bias, as in the lessons;
    GPT-2, BERT and ``nn.MultiheadAttention`` have them). ``mask`` bool (True = may
    attend), one mask per sequence: ``(L, L)`` or ``(..., L, L)`` with the batch
    dimensions of ``x``; it is applied to every head. ``output (..., L, d_model)``;
    ``weights (..., n_heads, L, L)``, one attention pattern per head. Notebook 06.

    ``rope`` turns every head's queries and keys by their positions before the scores (rotary
    embeddings, notebook 11; the values are not turned): ``True`` for positions 0 … L − 1, base 10000 and
    the "half" convention, a convention name, or ``Rotary(positions=..., base=..., convention=...)``
    (:mod:`lessons_lib.core.position`).
    """
    rotary = position.as_rotary(rope)
    x = as_float_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    n_heads = check_heads(n_heads, d_model)
    named = {"W_Q": w_q, "W_K": w_k, "W_V": w_v, "W_O": w_o}
    for name, w in named.items():
        w = as_float_array(w, name, min_ndim=2)
        if w.shape != (d_model, d_model):
            raise ValueError(
                f"{name} has shape {w.shape}, but with d_model={d_model} it must be "
                f"({d_model}, {d_model}): all heads' projections side by side."
            )
        named[name] = w
    biases = {name: _check_bias(b, name, d_model)
              for name, b in (("b_Q", b_q), ("b_K", b_k), ("b_V", b_v), ("b_O", b_o))}
    q, k, v = (split_heads(t, n_heads) for t in project_qkv(x, named["W_Q"], named["W_K"], named["W_V"]))
    q, k, v = (t if b is None else t + _head_slices(b, n_heads).astype(t.dtype, copy=False)
               for t, b in zip((q, k, v), (biases["b_Q"], biases["b_K"], biases["b_V"])))
    if rotary is not None:  # each head's queries and keys turn by their positions; the values do not
        q_pos, k_pos = rotary.resolve(x.shape[-2], x.shape[-2])
        q = position.rope(q, q_pos, base=rotary.base, convention=rotary.convention)
        k = position.rope(k, k_pos, base=rotary.base, convention=rotary.convention)
    if mask is not None:  # checked against the shape the learner thinks in: (..., L, L)
        mask = check_mask(mask, (*x.shape[:-2], x.shape[-2], x.shape[-2]))
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]  # the same mask for every head
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    output = merge_heads(heads) @ named["W_O"]
    if biases["b_O"] is not None:
        output = output + biases["b_O"].astype(output.dtype, copy=False)
    return output, weights


def _head_slices(b: np.ndarray, n_heads: int) -> np.ndarray:
    """A ``(d_model,)`` bias as ``(n_heads, 1, d_head)``: head i adds its own slice to each of its rows."""
    return b.reshape(n_heads, 1, -1)


def _check_bias(b, name: str, d_model: int):
    """An optional bias: None, or a ``(d_model,)`` float vector."""
    if b is None:
        return None
    b = as_float_array(b, name, shape="(d_model,)")
    if b.shape != (d_model,):
        raise ValueError(f"{name} has shape {b.shape}, but it must be ({d_model},): one number per "
                         f"feature, added to every token's row.")
    return b


def check_heads(n_heads, d_model: int) -> int:
    """``n_heads`` as an int that divides ``d_model`` (each head gets d_model / n_heads features), or a clear
    error that names the numbers of heads that would."""
    n_heads = check_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
        raise ValueError(
            f"n_heads={n_heads} does not divide d_model={d_model}: each head gets d_model / n_heads "
            f"features, which must be a whole number. Try one of {divisors}."
        )
    return n_heads


def split_projection(w, n_heads: int) -> np.ndarray:
    """One big ``(d_model, d_model)`` projection → ``(n_heads, d_model, d_head)``, one matrix per head.

    Head i's own W_Q^i is the block of columns i·d_head … (i+1)·d_head − 1 of the
    big W_Q, so ``X @ split_projection(W_Q, h)[i]`` equals ``split_heads(X @ W_Q, h)[i]``:
    one big W_Q split into heads and a separate W_Q per head are the same
    computation. Notebook 06.
    """
    w = as_float_array(w, "W", min_ndim=2)
    if w.ndim != 2:
        raise ValueError(f"W must be one 2-D projection (d_model, d_model); got shape {w.shape}.")
    n_heads = check_heads(n_heads, w.shape[1])
    return np.ascontiguousarray(np.swapaxes(w.reshape(w.shape[0], n_heads, w.shape[1] // n_heads), 0, 1))


def multi_head_attention_per_head(x, w_q_heads, w_k_heads, w_v_heads, w_o, mask=None, causal: bool = False):
    """Multi-head attention written as the formula reads: each head on its own, then Concat·W_O.

        head_i = Attention(X·W_Q^i, X·W_K^i, X·W_V^i),   output = Concat(head_1 … head_h)·W_O

    ``w_q_heads, w_k_heads, w_v_heads`` are ``(n_heads, d_model, d_head)`` (a
    separate small matrix per head, e.g. from :func:`split_projection`);
    ``w_o (n_heads·d_head, d_model)``; ``x (L, d_model)``. Returns
    ``(output (L, d_model), weights (n_heads, L, L))``, equal to
    :func:`multi_head_attention` with the big matrices: a loop over heads instead
    of one batched product. Notebook 06.
    """
    x = as_float_array(x, "x", min_ndim=2)
    stacks = {}
    for name, w in (("W_Q heads", w_q_heads), ("W_K heads", w_k_heads), ("W_V heads", w_v_heads)):
        w = as_float_array(w, name)
        if w.ndim != 3 or w.shape[1] != x.shape[-1]:
            raise ValueError(
                f"{name} must be (n_heads, d_model, d_head) with d_model={x.shape[-1]} (the width of x); "
                f"got shape {w.shape}."
            )
        stacks[name] = w
    shapes = {w.shape for w in stacks.values()}
    if len(shapes) != 1:
        raise ValueError(f"W_Q, W_K and W_V heads must have the same shape; got {sorted(shapes)}.")
    n_heads, _, d_head = stacks["W_Q heads"].shape
    w_o = as_float_array(w_o, "W_O", min_ndim=2)
    if w_o.shape[0] != n_heads * d_head:
        raise ValueError(f"W_O has {w_o.shape[0]} rows but the concatenated heads have "
                         f"n_heads·d_head = {n_heads}·{d_head} = {n_heads * d_head} columns.")
    outputs, weights = [], []
    for i in range(n_heads):
        q, k, v = (x @ stacks[name][i] for name in ("W_Q heads", "W_K heads", "W_V heads"))
        out, w = scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
        outputs.append(out)
        weights.append(w)
    return np.concatenate(outputs, axis=-1) @ w_o, np.stack(weights, axis=-3)
