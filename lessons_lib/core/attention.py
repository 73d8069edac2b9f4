"""Scaled dot-product attention in numpy, one step at a time.

    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V          (Vaswani et al. 2017, eq. 1)

The four steps, each its own function so a lesson can show them one by one:

1. ``project_qkv``        Q = X·W_Q,  K = X·W_K,  V = X·W_V      (notebook 02)
2. ``attention_scores``   scores = Q·Kᵀ, entry (i, j) = q_i·k_j   (notebook 03)
3. ``scale_scores`` then ``softmax`` (together: ``attention_weights``)
                          weights = softmax(scores / √d_k)        (notebook 04)
4. ``weighted_values``    output = weights·V                      (notebook 05)

``scaled_dot_product_attention`` is exactly their composition: the reference a learner
reads. ``low_memory_attention`` is the named alternative that computes the same result in
one ``(..., L, S)`` buffer (scores, then scaled scores, then weights, in place), with
``softmax_in_place`` and ``mask_and_softmax_in_place`` as its steps. Shapes follow
torch's SDPA: ``q (..., L, d_k)``, ``k (..., S, d_k)``, ``v (..., S, d_v)``;
rows are tokens; leading batch dimensions broadcast. The input's float dtype is
kept (float32 in, float32 out).
"""

from __future__ import annotations

import numpy as np

from .._checks import (
    as_float_array,
    batch_shape,
    check_axis,
    check_flag,
    check_memory,
    check_output_finite,
    check_qkv,
    check_scale,
    check_scores_finite,
    check_whole_number,
    is_whole_number,
)
from .masks import combine_masks

__all__ = [
    "softmax", "project_qkv", "attention_scores", "scale_scores", "attention_weights",
    "weighted_values", "scaled_dot_product_attention", "softmax_off", "low_memory_attention",
]

# What to do instead when a score matrix would not fit (see _checks.check_memory).
_USE_FLASH = ("Use a shorter sequence, or flash_attention(q, k, v), which never holds the whole "
              "(L × S) matrix.")


def _check_scores_memory(batch: tuple, n_queries: int, n_keys: int, itemsize: int, extra: int = 0) -> None:
    """Refuse at once a (..., L, S) buffer (``itemsize`` bytes per entry, plus ``extra``) too big to hold."""
    n = int(np.prod(batch, dtype=np.float64)) * n_queries * n_keys
    where = f" for each of {int(np.prod(batch))} batch items" if batch else ""
    check_memory(float(n) * (itemsize + extra),
                 f"Attention over {n_queries} queries × {n_keys} keys{where}", _USE_FLASH)


def _scores_within_memory(scores, name: str, what: str, copies: float = 2.0) -> np.ndarray:
    """``scores`` as a float array, refused (``SizeLimitError``) before its values are even scanned
    when ``copies`` of it would not fit: a scan of a huge array takes seconds, a refusal must not."""
    arr = as_float_array(scores, name, min_ndim=1, allow_neg_inf=True, check_values=False)
    check_memory(copies * arr.nbytes, f"{what} of an array of shape {arr.shape}", _USE_FLASH)
    return arr


# --------------------------------------------------------------------------- softmax
def softmax(x, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``: exp(x_i − max x) / Σ_j exp(x_j − max x).

    Subtracting the maximum first changes nothing mathematically (softmax is
    shift-invariant) but keeps ``exp`` from overflowing, so logits of ±1e4 are
    fine. ``-inf`` entries (masked scores) get probability exactly 0; a slice
    that is entirely ``-inf`` (nothing to attend to) gives all zeros, not NaN.
    Taught in notebook 04.
    """
    x = as_float_array(_scores_within_memory(x, "x", "softmax"), "x", allow_neg_inf=True)
    axis = check_axis(axis, x.ndim)
    out = np.array(x, copy=True)
    softmax_in_place(out, axis)
    return out


def softmax_in_place(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of ``x`` written into ``x`` itself (one N×N buffer, no copies).

    Finite input never gives NaN or a warning: after subtracting the maximum every
    exponent is ≤ 0 (a difference too large for the dtype becomes −∞, whose exp is 0,
    the right answer), and float16 rows are summed in float32 so that many keys cannot
    overflow the total.
    """
    with np.errstate(over="ignore"):
        peak = np.max(x, axis=axis, keepdims=True)
        peak[peak == -np.inf] = 0.0  # an all -inf slice: exp(-inf - 0) = 0 everywhere
        x -= peak
        np.exp(x, out=x)
        total = np.sum(x, axis=axis, keepdims=True, dtype=np.float32 if x.dtype == np.float16 else None)
        total[total == 0] = 1.0  # nothing to attend to: weights stay 0
        x /= total
    return x


def softmax_off(scores) -> np.ndarray:
    """Row-wise softmax with an extra score-0 slot that is dropped: exp(s_j) / (1 + Σ_i exp(s_i)).

    ``scores (..., S)`` → weights of the same shape, each row summing to less
    than 1; the rest, 1/(1 + Σ exp(s_i)), is the weight of "nothing". Built on
    ``attention.softmax`` (stable at any size of score). Notebook 09.
    """
    s = _scores_within_memory(scores, "scores", "softmax_off", copies=3.0)  # padded copy, its softmax
    s = as_float_array(s, "scores", allow_neg_inf=True)
    padded = np.concatenate([s, np.zeros((*s.shape[:-1], 1), dtype=s.dtype)], axis=-1)
    return softmax(padded, axis=-1)[..., :-1]


# --------------------------------------------------------------------------- step 1
def project_qkv(x, w_q, w_k, w_v):
    """Step 1: Q = X·W_Q, K = X·W_K, V = X·W_V.

    ``x (..., seq_len, d_model)`` holds one embedding per row (token);
    ``w_q, w_k (d_model, d_k)`` and ``w_v (d_model, d_v)`` are the learned
    projections. Returns ``q, k (..., seq_len, d_k)`` and ``v (..., seq_len, d_v)``.
    Notebook 02.
    """
    x = as_float_array(x, "X", min_ndim=2)
    weights = [as_float_array(w, name, min_ndim=2) for w, name in ((w_q, "W_Q"), (w_k, "W_K"), (w_v, "W_V"))]
    for w, name in zip(weights, ("W_Q", "W_K", "W_V")):
        if w.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix (d_model, d); got shape {w.shape}.")
        if w.shape[0] != x.shape[-1]:
            raise ValueError(
                f"{name} has {w.shape[0]} rows but X has d_model={x.shape[-1]} columns: "
                f"X·{name} needs {name} of shape ({x.shape[-1]}, d)."
            )
    if weights[0].shape[1] != weights[1].shape[1]:
        raise ValueError(
            f"W_K makes keys of d_k={weights[1].shape[1]} but W_Q makes queries of "
            f"d_k={weights[0].shape[1]}; queries and keys must have the same length to be compared."
        )
    outputs = []
    for w, name in zip(weights, ("Q", "K", "V")):
        with np.errstate(over="ignore", invalid="ignore"):
            product = x @ w
        check_output_finite(product, f"X·W_{name}", "X and the weights")
        outputs.append(product)
    return tuple(outputs)


# --------------------------------------------------------------------------- step 2
def attention_scores(q, k) -> np.ndarray:
    """Step 2: scores = Q·Kᵀ, all pairwise dot products.

    ``q (..., L, d_k)``, ``k (..., S, d_k)`` → ``scores (..., L, S)`` with
    entry (i, j) = q_i · k_j: how well token j's key matches token i's query.
    Notebook 03.
    """
    q = as_float_array(q, "Q", min_ndim=2)
    k = as_float_array(k, "K", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"K has d_k={k.shape[-1]} but Q has d_k={q.shape[-1]}; a dot product needs vectors "
            f"of the same length (Q is {q.shape}, K is {k.shape})."
        )
    batch = batch_shape(q, k)
    _check_scores_memory(batch, q.shape[-2], k.shape[-2], np.result_type(q, k).itemsize)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = q @ np.swapaxes(k, -1, -2)
    check_scores_finite(scores)
    return scores


# --------------------------------------------------------------------------- step 3
def scale_scores(scores, d_k: int | None = None, scale: float | None = None) -> np.ndarray:
    """Step 3a: scores / √d_k (or scores · ``scale`` when given).

    Without it, q·k has variance d_k for unit-variance entries, so softmax
    saturates to one-hot as d_k grows. Notebook 04.
    """
    scores = _scores_within_memory(scores, "scores", "scaling scores")
    scores = as_float_array(scores, "scores", min_ndim=2, allow_neg_inf=True)
    factor = check_scale(scale, _check_d_k(d_k, scale))
    return scale_by(scores, factor)


def scale_by(scores: np.ndarray, factor: float) -> np.ndarray:
    """``scores · factor`` (factor = 1/√d_k), a new array; a finite score that would overflow is an error."""
    check_memory(2.0 * scores.nbytes, f"scaling scores of shape {scores.shape}", _USE_FLASH)
    with np.errstate(over="ignore", invalid="ignore"):
        out = scores * scores.dtype.type(factor)
    if factor > 1 and not np.array_equal(np.isfinite(out), np.isfinite(scores)):
        check_output_finite(np.where(np.isfinite(scores), out, 0), f"scores × {factor:g}", "the scores")
    return out


def attention_weights(scores, d_k: int | None = None, mask=None, causal: bool = False,
                      scale: float | None = None) -> np.ndarray:
    """Step 3: weights = softmax(scores / √d_k), masked positions excluded.

    ``scores (..., L, S)``; ``mask`` is boolean, True where query i may attend to
    key j (broadcastable to ``(..., L, S)``, as in torch: see
    :func:`scaled_dot_product_attention` for masks per sequence); ``causal=True`` adds the causal
    mask. Masked positions get weight exactly 0; each row sums to 1 (or is all
    0 when nothing is allowed). Notebook 04.
    """
    scores = _scores_within_memory(scores, "scores", "attention weights")
    scores = as_float_array(scores, "scores", min_ndim=2, allow_neg_inf=True)
    factor = check_scale(scale, _check_d_k(d_k, scale))
    allowed = combine_masks(mask, causal, scores.shape[-2], scores.shape[-1], scores.shape)
    return mask_and_softmax_in_place(scale_by(scores, factor), allowed)


def mask_and_softmax_in_place(scaled: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """Mask (−∞ where not allowed) and softmax ``scaled`` in place: e^−∞ = 0, so masked keys get weight 0."""
    if allowed is not None:
        if allowed.shape != scaled.shape:
            allowed = np.broadcast_to(allowed, scaled.shape)
        np.putmask(scaled, ~allowed, -np.inf)
    return softmax_in_place(scaled, axis=-1)


def _check_d_k(d_k, scale):
    if scale is not None:
        return d_k
    if d_k is None:
        raise TypeError("Give d_k (the length of the query/key vectors) so the scores can be "
                        "divided by √d_k.")
    if not is_whole_number(d_k) or d_k < 1:
        raise ValueError(f"d_k must be a positive whole number (the key length); got {d_k!r}.")
    return check_whole_number(d_k, "d_k")


# --------------------------------------------------------------------------- step 4
def weighted_values(weights, v) -> np.ndarray:
    """Step 4: output = weights · V.

    ``weights (..., L, S)``, ``v (..., S, d_v)`` → ``output (..., L, d_v)``.
    Row i of the output is Σ_j weights[i, j] · v_j, a weighted average of the
    value vectors (a convex combination when the row sums to 1). Notebook 05.
    """
    weights = as_float_array(weights, "weights", min_ndim=2)
    v = as_float_array(v, "V", min_ndim=2)
    if weights.shape[-1] != v.shape[-2]:
        raise ValueError(
            f"weights have {weights.shape[-1]} columns (keys) but V has {v.shape[-2]} rows (values); "
            f"there must be one value per key (weights are {weights.shape}, V is {v.shape})."
        )
    try:
        np.broadcast_shapes(weights.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"The batch dimensions of the weights {weights.shape[:-2]} and of V {v.shape[:-2]} do not "
            f"broadcast together. Everything before the last two axes must match or be 1 "
            f"(weights are {weights.shape}, V is {v.shape})."
        ) from None
    with np.errstate(over="ignore", invalid="ignore"):
        output = weights @ v
    check_output_finite(output, "weights·V", "the weights and V")
    return output


# --------------------------------------------------------------------------- all four
def scaled_dot_product_attention(q, k, v, mask=None, causal: bool = False, scale: float | None = None):
    """softmax(Q·Kᵀ / √d_k) · V, returning ``(output, weights)``: the four steps, one after the other.

    ``q (..., L, d_k)``, ``k (..., S, d_k)``, ``v (..., S, d_v)``; ``mask`` bool,
    True = may attend, broadcastable to ``(..., L, S)``; ``causal`` keeps key j
    from query i when j > i (top-left aligned, as torch). A raw array (or tensor)
    ``mask`` broadcasts as in torch, aligned from the right: a ``(B, L, S)`` array
    against ``(B, H, L, S)`` scores meets the head axis H, so give ``mask[:, None]``
    for one mask per sequence; a mask from :func:`~lessons_lib.core.masks.padding_mask` (a
    ``SequenceMask``) knows its axes and reaches every head of its sequence. ``scale``
    defaults to 1/√d_k. Returns ``output (..., L, d_v)`` and ``weights (..., L, S)``. A query
    with nothing to attend to gets weights 0 and output 0, never NaN.

    This is the reference: each line is a step of notebooks 03-05. It holds the
    scores and the weights as separate ``(..., L, S)`` arrays;
    :func:`low_memory_attention` gives the same result in one buffer.
    """
    q, k, v = check_qkv(q, k, v)
    d_k = q.shape[-1]
    factor = 1 / np.sqrt(d_k) if scale is None else check_scale(scale, d_k)     # step 3's 1/√d_k
    _check_attention_memory(q, k, mask, causal)
    scores = attention_scores(q, k)                                              # step 2: Q·Kᵀ
    weights = attention_weights(scores, mask=mask, causal=causal, scale=factor)  # step 3: softmax(·/√d_k)
    output = weighted_values(weights, v)                                         # step 4: weights·V
    return output, weights


def low_memory_attention(q, k, v, mask=None, causal: bool = False, scale: float | None = None):
    """:func:`scaled_dot_product_attention` in one ``(..., L, S)`` buffer: the same result, half the memory.

    The buffer holds the scores, then (in place) the scaled scores, then the weights
    (:func:`mask_and_softmax_in_place`). Same arguments, result and errors as the
    reference; the "naive numpy" method of notebook 08 measures this one.
    """
    q, k, v = check_qkv(q, k, v)
    factor = check_scale(scale, q.shape[-1])
    _check_attention_memory(q, k, mask, causal)
    L, S = q.shape[-2], k.shape[-2]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    allowed = combine_masks(mask, causal, L, S, (*batch, L, S))
    with np.errstate(over="ignore", invalid="ignore"):
        scores = q @ np.swapaxes(k, -1, -2)  # step 2 (a fresh buffer we may overwrite)
        check_scores_finite(scores)
        scores *= q.dtype.type(factor)       # step 3a
        if factor > 1:
            check_scores_finite(scores, scale=factor)
        weights = mask_and_softmax_in_place(scores, allowed)  # step 3b
        output = weights @ v                 # step 4
    check_output_finite(output, "The output weights·V", "Q, K and V")
    return output, weights


def _check_attention_memory(q: np.ndarray, k: np.ndarray, mask, causal) -> None:
    """Refuse at once an attention whose ``(..., L, S)`` buffer (and mask) would not fit."""
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    masked = mask is not None or check_flag(causal, "causal")
    _check_scores_memory(batch, q.shape[-2], k.shape[-2], q.dtype.itemsize, extra=2 if masked else 0)
