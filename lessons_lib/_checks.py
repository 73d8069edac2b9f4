"""Input checks shared by every public function.

Each check raises ``TypeError`` (wrong kind of thing) or ``ValueError``
(right kind, wrong shape or content) with a message a learner can act on,
naming the array and the values involved, e.g. ``K has d_k=16 but Q has d_k=8``.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

# The most memory one course computation may ask for: a 2 GB Binder or classroom machine must
# still hold the kernel, numpy, matplotlib (and torch) beside it. A teacher on a bigger machine
# raises it with the environment variable LESSONS_MEMORY_LIMIT_MB before starting Jupyter.
DEFAULT_MEMORY_LIMIT_MB = 1024


def as_float_array(x, name: str, *, min_ndim: int = 1, allow_neg_inf: bool = False) -> np.ndarray:
    """Return ``x`` as a floating-point numpy array, or explain why it can't be.

    Keeps the float dtype it was given (float32 stays float32). Accepts lists
    and torch tensors (moved to the CPU). Rejects integers, booleans, strings,
    complex numbers, NaN and infinity (``-inf`` too, unless ``allow_neg_inf``:
    masked scores legitimately hold it).
    """
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise TypeError(
            f"{name} could not be turned into an array ({exc}). "
            f"Pass a numpy array of floats, e.g. np.array(..., dtype=np.float64)."
        ) from None
    kind = arr.dtype.kind
    if kind in "iub":
        raise TypeError(
            f"{name} has dtype {arr.dtype}, but attention needs floating-point numbers "
            f"(softmax and √d_k produce fractions). Cast it first: "
            f"{name} = {name}.astype(np.float64)"
        )
    if kind == "c":
        raise TypeError(f"{name} has complex dtype {arr.dtype}; attention is defined on real numbers.")
    if kind != "f":
        raise TypeError(
            f"{name} has dtype {arr.dtype}, which is not numeric. "
            f"Pass an array of floats, e.g. np.array(..., dtype=np.float64)."
        )
    if arr.ndim < min_ndim:
        what = "(seq_len, d)" if min_ndim == 2 else "at least 1 dimension"
        raise ValueError(
            f"{name} must have shape {what} with one row per token; "
            f"got shape {arr.shape} ({arr.ndim} dimension{'s' if arr.ndim != 1 else ''})."
        )
    if arr.size == 0:
        raise ValueError(
            f"{name} is empty (shape {arr.shape}). Attention needs at least one token "
            f"and at least one feature per token."
        )
    if allow_neg_inf:
        bad = np.isnan(arr) | (arr == np.inf)
    else:
        bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = arr[where]
        raise ValueError(
            f"{name} contains {value} at index {where} ({int(bad.sum())} bad "
            f"value{'s' if bad.sum() != 1 else ''} in all). Attention needs finite numbers: "
            f"look for a division by zero or an overflow where {name} was made."
        )
    return arr


def check_qkv(q, k, v):
    """Check Q (..., L, d_k), K (..., S, d_k), V (..., S, d_v) and return them as arrays.

    The three share one float dtype afterwards (the widest of the three).
    """
    q = as_float_array(q, "Q", min_ndim=2)
    k = as_float_array(k, "K", min_ndim=2)
    v = as_float_array(v, "V", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"K has d_k={k.shape[-1]} but Q has d_k={q.shape[-1]}. Each query is compared "
            f"with each key by a dot product, so queries and keys need the same length d_k "
            f"(Q is {q.shape}, K is {k.shape})."
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"K has {k.shape[-2]} tokens but V has {v.shape[-2]}. Every key needs exactly one "
            f"value: K (..., S, d_k) and V (..., S, d_v) must share S "
            f"(K is {k.shape}, V is {v.shape})."
        )
    batch_shape(q, k, v)
    dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)


def batch_shape(q, k, v) -> tuple:
    """The broadcast batch shape of Q, K, V (all dimensions before the last two)."""
    try:
        return np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"The batch dimensions of Q {q.shape[:-2]}, K {k.shape[:-2]} and V {v.shape[:-2]} "
            f"do not broadcast together. Everything before the last two axes "
            f"(seq_len, d) must match or be 1."
        ) from None


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """``mask`` (numpy, list or torch tensor) as a numpy bool array, True = may attend."""
    if hasattr(mask, "detach") and hasattr(mask, "cpu"):
        mask = mask.detach().cpu().numpy()
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(
            f"{name} must be boolean, True where a query may attend to a key and False where "
            f"it may not; got dtype {mask.dtype}. If you have an additive mask of 0 and -inf, "
            f"use {name} = (additive_mask == 0)."
        )
    return mask


def check_mask(mask, target_shape: tuple, name: str = "mask") -> np.ndarray | None:
    """Check a boolean mask (True = may attend) that must broadcast to ``target_shape``."""
    if mask is None:
        return None
    mask = as_bool_mask(mask, name)
    try:
        np.broadcast_shapes(mask.shape, target_shape)
    except ValueError:
        raise ValueError(
            f"{name} has shape {mask.shape}, which does not broadcast to the scores' shape "
            f"{target_shape} (..., n_queries, n_keys). A mask needs one entry per "
            f"(query, key) pair, e.g. shape {target_shape[-2:]}."
        ) from None
    if np.broadcast_shapes(mask.shape, target_shape) != tuple(target_shape):
        raise ValueError(
            f"{name} has shape {mask.shape}, which would enlarge the scores' shape "
            f"{target_shape}; it may only have the same or fewer dimensions."
        )
    return mask


def check_positive_int(value, name: str, *, minimum: int = 1) -> int:
    """Check an integer count such as ``n_heads`` or ``seq_len``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number; got {value!r} ({type(value).__name__}).")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}; got {value}.")
    return int(value)


def check_scale(scale, d_k: int) -> float:
    """Resolve the score scale: ``1/√d_k`` by default, or a positive finite number."""
    if scale is None:
        return 1.0 / float(np.sqrt(d_k))
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not np.isfinite(scale):
        raise TypeError(f"scale must be a finite number such as 1/√d_k; got {scale!r}.")
    if scale <= 0:
        raise ValueError(f"scale must be positive (the usual choice is 1/√d_k); got {scale}.")
    return float(scale)


def check_scores_finite(scores: np.ndarray) -> None:
    """Raise a clear ``ValueError`` when finite Q and K gave non-finite scores Q·Kᵀ.

    Called on the raw score matrix (or on one tile of it, in ``flash_attention``)
    before any mask adds ``-inf``. Uses ``min``/``max`` so it needs no extra
    (L × S) buffer. Compute the scores under ``np.errstate(over="ignore",
    invalid="ignore")`` so that numpy's own RuntimeWarning never reaches the learner.
    """
    lo, hi = scores.min(), scores.max()
    if np.isfinite(lo) and np.isfinite(hi):
        return
    dtype = scores.dtype
    limit = float(np.finfo(dtype).max)
    raise ValueError(
        f"The scores Q·Kᵀ overflow {dtype}: some dot product q·k is larger than "
        f"{limit:.4g}, the largest finite {dtype} number, although Q and K themselves are finite. "
        f"Scale Q and K down (for example divide each by its largest absolute value)"
        + (", or compute in float64." if dtype != np.float64 else ".")
    )


class SizeLimitError(ValueError):
    """A computation was refused before it started because it would not fit in memory."""


def memory_limit_bytes() -> int:
    """The course's memory limit in bytes (``LESSONS_MEMORY_LIMIT_MB``, default 1024 MB)."""
    raw = os.environ.get("LESSONS_MEMORY_LIMIT_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MEMORY_LIMIT_MB
    except ValueError:
        mb = DEFAULT_MEMORY_LIMIT_MB
    return int(max(mb, 1) * 2**20)


def format_bytes(n_bytes: float) -> str:
    """``1536`` → ``'1.5 kB'``: powers of 1024, one decimal, for messages and tables."""
    value = float(n_bytes)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def check_memory(n_bytes: float, what: str, instead: str) -> None:
    """Refuse at once, before allocating, a computation needing more than the memory limit.

    ``what`` names the computation (``"causal_mask(50000)"``), ``instead`` says what
    to do (``"Use a shorter sequence, or flash_attention, which never builds the mask."``).
    Raises :class:`SizeLimitError` (a ``ValueError``) with the size it would need.
    """
    limit = memory_limit_bytes()
    if n_bytes <= limit:
        return
    raise SizeLimitError(
        f"{what} would need about {format_bytes(n_bytes)} of memory, more than the "
        f"{format_bytes(limit)} this course allows one computation (so that it fits a 2 GB Binder "
        f"or classroom machine and never kills the kernel). {instead} On a machine with more "
        f"memory, raise the limit: set the environment variable LESSONS_MEMORY_LIMIT_MB before "
        f"starting Jupyter."
    )
