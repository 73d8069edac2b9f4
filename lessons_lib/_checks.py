"""Every validator of the library: errors in a learner's words that name the argument, the memory guard,
the figures' text, label and colour-range rules.

Each check raises ``TypeError`` (wrong kind of thing) or ``ValueError``
(right kind, wrong shape or content) with a message a learner can act on,
naming the array and the values involved, e.g. ``K has d_k=16 but Q has d_k=8``.
"""

from __future__ import annotations

import numbers
import os
import warnings
from fractions import Fraction

import numpy as np

__all__ = [
    "DEFAULT_MEMORY_LIMIT_MB", "SizeLimitError", "as_float_array", "as_bool_mask", "check_qkv", "batch_shape",
    "check_mask", "check_flag", "check_axis", "check_seed", "check_float_dtype", "check_real",
    "check_positive_int", "check_int_in_range", "check_scale", "check_scores_finite", "check_output_finite",
    "memory_limit_bytes", "format_bytes", "check_memory", "check_text", "check_label", "check_labels",
    "color_range", "check_choice", "is_flag", "is_whole_number", "is_real_number", "MAX_LIVE_CELLS",
    "check_cells", "check_number", "int_or_none", "check_head_weights", "MAX_COUNT", "short_number",
    "check_whole_number", "ROPE_CONVENTIONS", "check_convention", "check_base", "check_pairs",
    "check_positions", "check_kv_heads", "VALUE_BYTES", "check_value_type", "check_cache_entry",
    "check_projection", "check_top_k",
    "check_per_token",
]

# The most memory one course computation may ask for: a 2 GB Binder or classroom machine must
# still hold the kernel, numpy, matplotlib (and torch) beside it. A teacher on a bigger machine
# raises it with the environment variable LESSONS_MEMORY_LIMIT_MB before starting Jupyter.
DEFAULT_MEMORY_LIMIT_MB = 1000

MAX_LIVE_CELLS = 512 * 512  # a live figure draws at most this many cells (all panels together)

# The largest count or index any array can have (numpy's intp): a whole number above it cannot be a size,
# and would end in Python's OverflowError (float(10**400)) or numpy's "Maximum allowed size exceeded".
MAX_COUNT = int(np.iinfo(np.intp).max)


# What an array must look like, by its least number of dimensions (for messages).
_SHAPES = {1: "(n,)", 2: "(seq_len, d)", 3: "(n_heads, seq_len, d_head)"}


def _from_torch(x):
    """A torch tensor as a numpy array (on the CPU; bfloat16, which numpy lacks, as float32)."""
    x = x.detach()
    if str(x.dtype) == "torch.bfloat16":
        x = x.float()
    return x.cpu().numpy()


def as_float_array(x, name: str, *, min_ndim: int = 1, allow_neg_inf: bool = False,
                   shape: str | None = None, check_values: bool = True) -> np.ndarray:
    """Return ``x`` as a floating-point numpy array, or explain why it can't be.

    Keeps the float dtype it was given (float32 stays float32). Accepts lists
    and torch tensors (moved to the CPU; bfloat16 becomes float32). Rejects integers,
    booleans, strings, complex numbers, NaN and infinity (``-inf`` too, unless
    ``allow_neg_inf``: masked scores legitimately hold it). ``shape`` describes the
    expected shape in messages (default by ``min_ndim``, e.g. ``(seq_len, d)``).
    ``check_values=False`` skips the NaN/inf scan (for stand-ins whose values are checked elsewhere).
    """
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        x = _from_torch(x)
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
        what = shape or _SHAPES.get(min_ndim, f"({', '.join(['...'] * min_ndim)})")
        raise ValueError(
            f"{name} must have shape {what}, at least {min_ndim} dimension{'s' if min_ndim != 1 else ''}"
            f"{' with one row per token' if min_ndim >= 2 else ''}; "
            f"got shape {arr.shape} ({arr.ndim} dimension{'s' if arr.ndim != 1 else ''})."
        )
    if arr.size == 0:
        raise ValueError(
            f"{name} is empty (shape {arr.shape}). Attention needs at least one token "
            f"and at least one feature per token."
        )
    if not check_values:
        return arr
    lo, hi = arr.min(), arr.max()  # both propagate NaN: two passes, no temporary array
    if np.isfinite(lo) and np.isfinite(hi) or (allow_neg_inf and not np.isnan(lo) and hi < np.inf):
        return arr
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


def check_qkv(q, k, v, *, check_values: bool = True):
    """Check Q (..., L, d_k), K (..., S, d_k), V (..., S, d_v) and return them as arrays.

    The three share one float dtype afterwards (the widest of the three).
    """
    q = as_float_array(q, "Q", min_ndim=2, check_values=check_values)
    k = as_float_array(k, "K", min_ndim=2, check_values=check_values)
    v = as_float_array(v, "V", min_ndim=2, check_values=check_values)
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


def batch_shape(q, k, v=None) -> tuple:
    """The broadcast batch shape of Q, K (and V): all dimensions before the last two."""
    arrays = {"Q": q, "K": k} if v is None else {"Q": q, "K": k, "V": v}
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays.values()))
    except ValueError:
        names = [f"{name} {a.shape[:-2]}" for name, a in arrays.items()]
        listed = " and ".join([", ".join(names[:-1]), names[-1]])
        raise ValueError(
            f"The batch dimensions of {listed} do not broadcast together. Everything before the "
            f"last two axes (seq_len, d) must match or be 1 "
            f"({', '.join(f'{name} is {a.shape}' for name, a in arrays.items())})."
        ) from None


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """``mask`` (numpy, list or torch tensor) as a numpy bool array, True = may attend."""
    if hasattr(mask, "detach") and hasattr(mask, "cpu"):
        mask = mask.detach().cpu().numpy()
    mask = np.asanyarray(mask)        # keeps a SequenceMask (masks.py) a SequenceMask
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


def is_flag(value) -> bool:
    """True or False (a Python or numpy bool): the test of every switch."""
    return isinstance(value, (bool, np.bool_))


def is_whole_number(value) -> bool:
    """A whole number (a Python or numpy integer), and not a bool: the test of every count and index.

    ``True`` is an ``int`` to Python, but never a count a learner meant.
    """
    return not is_flag(value) and isinstance(value, numbers.Integral)


def is_real_number(value) -> bool:
    """A real number (int, float or their numpy kinds), and not a bool; it may still be NaN or ±inf."""
    return not is_flag(value) and isinstance(value, numbers.Real)


def check_flag(value, name: str) -> bool:
    """Check a True/False switch such as ``causal``: a truthy string like ``"no"`` is refused."""
    if not is_flag(value):
        raise TypeError(f"{name} must be True or False; got {value!r} ({type(value).__name__}).")
    return bool(value)


def check_axis(axis, ndim: int, name: str = "axis") -> int:
    """Check an axis index for an array with ``ndim`` dimensions; returns it as a non-negative int."""
    if not is_whole_number(axis):
        raise TypeError(
            f"{name} must be a whole number such as -1 (the last axis, where each row's scores are); "
            f"got {axis!r} ({type(axis).__name__})."
        )
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{name}={short_number(axis)} is out of range for an array with {ndim} "
            f"dimension{'s' if ndim != 1 else ''}: "
            f"use {-ndim} … {ndim - 1} (-1 is the last axis)."
        )
    return int(axis) % ndim


def check_seed(seed, name: str = "seed", *, allow_generator: bool = True):
    """Check a random seed: a whole number ≥ 0, or (when allowed) a ``np.random.Generator``."""
    if allow_generator and isinstance(seed, np.random.Generator):
        return seed
    if not is_whole_number(seed):
        what = "a whole number (e.g. 0)" + (" or a np.random.Generator" if allow_generator else "")
        raise TypeError(
            f"{name} must be {what}; got {seed!r} ({type(seed).__name__}). "
            f"The same seed gives the same numbers on every run."
        )
    if seed < 0:
        raise ValueError(f"{name} must be 0 or more; got {short_number(seed)}.")
    if seed > MAX_COUNT:   # numpy takes any seed, torch none above 2**64: one rule for both
        raise ValueError(f"{name} must be at most {MAX_COUNT:,}; got {short_number(seed)}.")
    return int(seed)


def check_float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """Check a floating-point dtype (``np.float32``, ``"float64"``, ...); returns the ``np.dtype``."""
    try:
        result = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"{name} must be a float dtype such as np.float64 or np.float32; got {dtype!r}."
        ) from None
    if result.kind != "f":
        raise TypeError(
            f"{name} must be a floating-point dtype such as np.float64 or np.float32; "
            f"got {getattr(dtype, '__name__', result)} "
            f"(attention needs fractions: softmax and √d_k)."
        )
    return result


def check_real(value, name: str, *, positive: bool = False) -> float:
    """Check a finite real number (not NaN, not ±inf, not a bool); ``positive`` also refuses ≤ 0."""
    if not is_real_number(value):
        raise TypeError(f"{name} must be a number; got {value!r} ({type(value).__name__}).")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value}.")
    if positive and value <= 0:
        raise ValueError(f"{name} must be positive; got {value}.")
    return float(value)


def short_number(value) -> str:
    """A whole number as a learner can read it: all its digits up to 15, else ``about 1.0e+400``.

    >>> short_number(2048), short_number(-10**400)
    ('2048', 'about -1.0e+400')
    """
    value = int(value)
    digits = str(abs(value))
    if len(digits) <= 15:
        return str(value)
    return f"about {'-' if value < 0 else ''}{digits[0]}.{digits[1]}e+{len(digits) - 1}"


def check_whole_number(value, name: str) -> int:
    """A whole number (not a bool) that can count or index an array (at most :data:`MAX_COUNT` either way).

    Beyond that, a :class:`SizeLimitError` naming ``name`` (``10**400`` is no count: never an
    ``OverflowError`` or numpy's "Maximum allowed size exceeded" further on).
    """
    if not is_whole_number(value):
        raise TypeError(f"{name} must be a whole number; got {value!r} ({type(value).__name__}).")
    value = int(value)
    if abs(value) > MAX_COUNT:
        raise SizeLimitError(
            f"{name} = {short_number(value)} is beyond any size or index: no array on any computer has "
            f"that many entries (numpy counts at most {MAX_COUNT:,}), and the course allows one "
            f"computation about {format_bytes(memory_limit_bytes())} of memory. Use a count of a few "
            f"thousand at most."
        )
    return value


def check_positive_int(value, name: str, *, minimum: int = 1) -> int:
    """Check an integer count such as ``n_heads`` or ``seq_len``."""
    value = check_whole_number(value, name)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}; got {short_number(value)}.")
    return value


def check_int_in_range(value, name: str, lo: int, hi: int) -> int:
    """Check a whole number from ``lo`` to ``hi`` (a slider's value, a row index)."""
    value = check_whole_number(value, name)
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}; got {short_number(value)}.")
    return value


def int_or_none(value, name: str, n: int) -> int:
    """-1 for None, else an index 0..n-1 (a live figure's highlighted row or token)."""
    if value is None:
        return -1
    if not is_whole_number(value):
        raise TypeError(f"{name} must be a whole number (a row index) or None; got {value!r}.")
    return check_int_in_range(value, name, 0, n - 1)


def check_number(value, name: str) -> float:
    """A finite number for a live figure (a marker's position, an axis' top), or a ``TypeError``."""
    if not is_real_number(value) or not np.isfinite(value):
        raise TypeError(f"{name} must be a finite number; got {value!r}.")
    return float(value)


def check_cells(n_cells: int, shape: tuple, what: str) -> None:
    """Refuse a matrix too big for a live figure (:data:`MAX_LIVE_CELLS`), saying how to show it instead."""
    if n_cells > MAX_LIVE_CELLS:
        raise ValueError(
            f"{what} of shape {shape} has {n_cells:,} cells; a live figure draws at most "
            f"{MAX_LIVE_CELLS:,} (512 × 512). Show a slice (e.g. matrix[:128, :128]) or a pooled view "
            f"(e.g. the mean over blocks of 8 × 8 cells), or draw it as a still (lessons_lib.heatmap)."
        )


def check_choice(value, name: str, options):
    """One of ``options`` (a slider's or a button row's values), or a ``ValueError`` naming ``name``.

    ``8.0`` is not the option ``8``, nor ``True`` the option ``1``: a slider would show something else.
    """
    options = list(options)
    whole = numbers.Integral
    ok = not is_flag(value) and any(
        type(value) is type(o) or isinstance(value, whole) and isinstance(o, whole) for o in options
        if _equal(value, o))
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(str, options))}; got {value!r}.")
    return value


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def check_scale(scale, d_k: int) -> float:
    """Resolve the score scale: ``1/√d_k`` by default, or a positive finite number."""
    if scale is None:
        return 1.0 / float(np.sqrt(d_k))
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not np.isfinite(scale):
        raise TypeError(f"scale must be a finite number such as 1/√d_k; got {scale!r}.")
    if scale <= 0:
        raise ValueError(f"scale must be positive (the usual choice is 1/√d_k); got {scale}.")
    return float(scale)


def check_scores_finite(scores: np.ndarray, scale: float | None = None) -> None:
    """Raise a clear ``ValueError`` when finite Q and K gave non-finite scores Q·Kᵀ.

    Called on the raw score matrix (or on one tile of it, in ``flash_attention``)
    before any mask adds ``-inf``; pass ``scale`` when the scores were already
    multiplied by it. Uses ``min``/``max`` so it needs no extra (L × S) buffer.
    Compute the scores under ``np.errstate(over="ignore", invalid="ignore")`` so
    that numpy's own RuntimeWarning never reaches the learner.
    """
    lo, hi = scores.min(), scores.max()
    if np.isfinite(lo) and np.isfinite(hi):
        return
    dtype = scores.dtype
    limit = float(np.finfo(dtype).max)
    scaled = scale is not None and scale != 1
    raise ValueError(
        f"The scores Q·Kᵀ{' · scale' if scaled else ''} overflow {dtype}: some "
        f"{'scaled ' if scaled else ''}dot product q·k is larger than "
        f"{limit:.4g}, the largest finite {dtype} number, although Q and K themselves are finite. "
        f"Scale Q and K down (for example divide each by its largest absolute value)"
        + (f", use a smaller scale than {scale:g}" if scaled and scale > 1 else "")
        + (", or compute in float64." if dtype != np.float64 else ".")
    )


def check_output_finite(output: np.ndarray, what: str, inputs: str) -> None:
    """Raise a clear ``ValueError`` when finite inputs gave a non-finite ``output`` (an overflow).

    ``what`` names the result (``"weights·V"``), ``inputs`` the arrays to shrink (``"V"``).
    """
    if np.isfinite(output.min()) and np.isfinite(output.max()):
        return
    dtype = output.dtype
    raise ValueError(
        f"{what} overflows {dtype}: a result is larger than {float(np.finfo(dtype).max):.4g}, the "
        f"largest finite {dtype} number, although {inputs} are finite. Scale {inputs} down"
        + (", or compute in float64." if dtype != np.float64 else ".")
    )


class SizeLimitError(ValueError):
    """A computation was refused before it started because it would not fit in memory."""


_MEMORY_LIMIT_VARIABLE = "LESSONS_MEMORY_LIMIT_MB"
refused_limits: set = set()  # settings already refused, so each is said once, not at every check


def memory_limit_bytes() -> int:
    """The course's memory limit in bytes (``LESSONS_MEMORY_LIMIT_MB``, default 1000 MB = 1 GB).

    The setting must be a finite number of megabytes above 0 (``4000``, ``1500.5``). Anything else
    (``inf``, ``nan``, ``1e400``, ``-5``, ``0``, ``4GB``) is refused: a warning says so once, naming the
    value, and the default is used.
    """
    raw = os.environ.get(_MEMORY_LIMIT_VARIABLE, "")
    if not raw.strip():
        return int(DEFAULT_MEMORY_LIMIT_MB * 1e6)
    try:
        mb = float(raw)
    except ValueError:
        mb = None
    if mb is not None and np.isfinite(mb) and mb > 0:
        return max(int(Fraction(mb) * 10**6), 1)           # exact: 1e302 MB is no float's worth of bytes
    if raw not in refused_limits:
        refused_limits.add(raw)
        warnings.warn(
            f"{_MEMORY_LIMIT_VARIABLE}={raw!r} is not a memory limit: it must be a finite number of "
            f"megabytes above 0, e.g. {_MEMORY_LIMIT_VARIABLE}=4000 for 4 GB. The course uses its "
            f"default, {DEFAULT_MEMORY_LIMIT_MB} MB, until you change it.", UserWarning, stacklevel=3)
    return int(DEFAULT_MEMORY_LIMIT_MB * 1e6)


def format_bytes(n_bytes: float) -> str:
    """``1500`` → ``'1.5 kB'``: decimal units (1 GB = 10⁹ bytes, as the lessons count), one decimal.

    Any size, however large (a whole number of 400 digits too): past 10,000 TB it is written
    ``'1.0e+388 TB'``.

    >>> format_bytes(1500), format_bytes(4 * 10**9), format_bytes(10**400)
    ('1.5 kB', '4.0 GB', '1.0e+388 TB')
    """
    if isinstance(n_bytes, numbers.Integral) and abs(int(n_bytes)) >= 10**300:  # beyond a float
        digits = str(abs(int(n_bytes)) // 10**12)
        return f"{'-' if n_bytes < 0 else ''}{digits[0]}.{digits[1]}e+{len(digits) - 1} TB"
    value = float(n_bytes)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            if unit == "TB" and abs(value) >= 10_000:
                return f"{value:.1e} TB"
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
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


# ------------------------------------------------------------------ positions (lesson 11)
#: The two layouts of rotary embeddings (RoPE): which dimensions of a head turn together as one pair.
ROPE_CONVENTIONS = {
    "half": "pairs (i, i + d_head/2): the first half turns with the second (GPT-NeoX, Llama in transformers)",
    "interleaved": "pairs (2i, 2i + 1): neighbours turn together (the RoFormer paper, GPT-J)",
}


def did_you_mean(value, names, cutoff: float = 0.6) -> str:
    """`` Did you mean 'half'?`` for a misspelt name ``value`` close to one of ``names``, else ``""``.

    >>> did_you_mean("halfs", ("half", "interleaved"))
    " Did you mean 'half'?"
    """
    if not isinstance(value, str):
        return ""
    import difflib

    close = difflib.get_close_matches(value.lower(), list(names), n=1, cutoff=cutoff)
    return f" Did you mean {close[0]!r}?" if close else ""


def check_convention(value, name: str = "convention") -> str:
    """One of :data:`ROPE_CONVENTIONS` ("half" or "interleaved"), or an error saying what each means.

    >>> check_convention("interleaved")
    'interleaved'
    """
    if isinstance(value, str) and value in ROPE_CONVENTIONS:
        return value
    guess = did_you_mean(value, ROPE_CONVENTIONS, cutoff=0.5)
    kinds = "; ".join(f'"{key}": {words}' for key, words in ROPE_CONVENTIONS.items())
    raise ValueError(f"{name} must be \"half\" or \"interleaved\"; got {value!r}.{guess} ({kinds}.)")


def check_base(value, name: str = "base") -> float:
    """The base of the rotary (or sinusoidal) frequencies, θ_i = base^(−2i/d): a finite number above 1."""
    if not is_real_number(value):
        raise TypeError(f"{name} must be a number such as 10000.0 (the paper's); got {value!r} "
                        f"({type(value).__name__}).")
    if not np.isfinite(value) or value <= 1:
        raise ValueError(f"{name} must be a finite number above 1 (10000 in the paper, 500000 in Llama 3); "
                         f"got {value!r}. The frequencies are base^(−2i/d): with a base of 1 or less they "
                         f"would not fall from one pair to the next.")
    return float(value)


def check_pairs(d: int, name: str = "x", what: str = "d_head") -> int:
    """``d``, the last size of ``name``, as an even number: rotations turn the dimensions two by two."""
    if d % 2:
        where = f"{what} = {d} is" if name == what else f"{name} has {what} = {d} (its last axis),"
        raise ValueError(f"{where} an odd number: rotary embeddings turn the dimensions two by two, so one "
                         f"would be left without a partner. Use an even {what} (e.g. {d - 1} or {d + 1}).")
    return d


def check_positions(positions, lead_shape: tuple, name: str = "positions") -> np.ndarray:
    """Token positions: whole numbers ≥ 0, one per token of a ``lead_shape = (..., seq_len)`` array.

    ``positions`` is ``(seq_len,)`` (one position per token, shared by the leading axes) or any shape that
    broadcasts to ``lead_shape`` with the same last size (a batch of sequences at different places). A list
    or a float array of whole values is fine; a fraction, a negative number, a length that is not seq_len
    or a bool is refused. Returns an int64 array.
    """
    if hasattr(positions, "detach") and hasattr(positions, "cpu"):
        positions = positions.detach().cpu().numpy()
    if is_whole_number(positions):
        raise TypeError(f"{name} must be an array with one position per token, e.g. np.arange(seq_len) or "
                        f"[{positions}] for one token; got the number {positions}.")
    try:
        arr = np.asarray(positions)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} could not be turned into an array of whole numbers ({exc}).") from None
    seq_len = lead_shape[-1]
    if arr.dtype.kind == "O" and arr.size and all(is_whole_number(v) for v in arr.flat):   # beyond int64
        low = min(arr.flat)
        if low < 0:
            raise ValueError(f"{name} must be 0 or more (the first token stands at 0); got "
                             f"{short_number(low)}.")
        raise ValueError(f"{name} must be at most 2**53 (beyond it a float64 angle has no digits left for "
                         f"the rotation); got {short_number(max(arr.flat))}.")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold whole numbers (token positions such as 0, 1, 2); got dtype "
                        f"{arr.dtype}.")
    if arr.ndim == 0 or arr.shape[-1] != seq_len:
        given = "one number" if arr.ndim == 0 else f"{arr.shape[-1]} entries"
        raise ValueError(f"{name} has {given} but the sequence has seq_len = {seq_len} tokens: give exactly "
                         f"one position per token (shape ({seq_len},)).")
    try:
        fits = np.broadcast_shapes(arr.shape, tuple(lead_shape)) == tuple(lead_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name} has shape {arr.shape}, which does not fit the tokens' shape "
                         f"{tuple(lead_shape)} (..., seq_len): give ({seq_len},) for every sequence alike.")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            value = arr[tuple(np.argwhere(bad)[0])]
            raise ValueError(f"{name} must be whole numbers (a token stands at position 0, 1, 2, …); got "
                             f"{value}.")
    if arr.min() < 0:
        raise ValueError(f"{name} must be 0 or more (the first token stands at 0); got {arr.min()}.")
    if arr.max() > 2**53:
        raise ValueError(f"{name} must be at most 2**53 (beyond it a float64 angle has no digits left for "
                         f"the rotation); got {arr.max()}.")
    return arr.astype(np.int64)


# ------------------------------------------------------------------ generation (lesson 12)
def check_kv_heads(n_heads, n_kv_heads, name: str = "n_kv_heads") -> int:
    """The number of key/value heads: a whole number ≥ 1 that divides ``n_heads`` (grouped-query attention).

    Each key/value head serves a group of n_heads / n_kv_heads query heads, so that ratio must be whole:
    n_kv_heads = n_heads is multi-head attention, 1 is multi-query attention.

    >>> check_kv_heads(8, 2)
    2
    """
    n_heads = check_positive_int(n_heads, "n_heads")
    n_kv_heads = check_positive_int(n_kv_heads, name)
    if n_heads % n_kv_heads:
        fits = [g for g in range(1, n_heads + 1) if n_heads % g == 0]
        more = (" There are more key/value heads than query heads: a key/value head with no query head "
                "would never be read." if n_kv_heads > n_heads else "")
        raise ValueError(
            f"n_heads = {n_heads} is not a multiple of {name} = {short_number(n_kv_heads)}: every key/value "
            f"head serves a group of n_heads / {name} query heads, and that must be a whole number.{more} "
            f"With {n_heads} query heads, {name} can be {', '.join(map(str, fits))}.")
    return n_kv_heads


#: How many bytes one cached number takes, by the name of its type (the KV-cache calculator of lesson 12).
VALUE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float8": 1}


def check_value_type(value, name: str = "dtype") -> str:
    """One of :data:`VALUE_BYTES` ("float32", "bfloat16", "float16", "float8"), or an error that says which
    names exist and, for a misspelling, which one was probably meant.

    >>> check_value_type("bfloat16")
    'bfloat16'
    """
    if isinstance(value, str) and value in VALUE_BYTES:
        return value
    guess = did_you_mean(value, VALUE_BYTES, cutoff=0.6)
    sizes = ", ".join(f"{key} ({size} byte{'s' if size > 1 else ''})" for key, size in VALUE_BYTES.items())
    raise ValueError(f"{name} must name how each cached number is stored, one of {sizes}; got "
                     f"{value!r}.{guess}")


def check_cache_entry(new: np.ndarray, held: np.ndarray, name: str) -> None:
    """A new key (or value) fits the cache: the same dtype, the same d_head and the same heads in front.

    ``new`` is ``(..., n_new, d_head)``, ``held`` ``(..., length, d_head)``; ``name`` ("key", "value").
    """
    if new.dtype != held.dtype:
        raise ValueError(f"the new {name} is {new.dtype} but the cache holds {held.dtype} {name}s: one cache "
                         f"holds one kind of number. Cast the new one first (.astype(np.{held.dtype})) or "
                         f"start a new cache.")
    if new.shape[-1] != held.shape[-1]:
        raise ValueError(f"the new {name} has d_head = {new.shape[-1]} but the cache holds {name}s of "
                         f"d_head = {held.shape[-1]}: every {name} of one head has the same length.")
    if new.shape[:-2] != held.shape[:-2]:
        raise ValueError(f"the new {name} has shape {new.shape}, whose leading axes {new.shape[:-2]} (batch, "
                         f"heads) differ from the cache's {held.shape[:-2]}: a cache belongs to one layer of "
                         f"one batch, (..., n_kv_heads, length, d_head).")


# ------------------------------------------------------------------ latent and sparse attention (lesson 14)
def check_projection(w, name: str, rows: int | None, cols: int | None = None, *, rows_are: str = "",
                     cols_are: str = "", ndim: int = 2) -> np.ndarray:
    """A weight ``w`` of ``ndim`` axes (2: a matrix used as ``x @ w``, (in, out); 1: a norm's gain) whose
    first axis has ``rows`` entries and last ``cols`` (None: any), each named in the message by
    ``rows_are`` / ``cols_are`` (``"d_model"``, ``"n_heads × d_nope"``).

    >>> check_projection(np.ones((4, 3)), "w_dkv", 4, 3).shape
    (4, 3)
    """
    shape = "(in, out)" if ndim == 2 else "(width,)"
    w = as_float_array(w, name, min_ndim=ndim, shape=shape)
    if w.ndim != ndim:
        plural = "s" if ndim > 1 else ""
        raise ValueError(f"{name} must have shape {shape}, {ndim} dimension{plural}; got shape {w.shape}.")
    for axis, want, what in ((0, rows, rows_are), (-1, cols, cols_are)):
        if want is not None and w.shape[axis] != want:
            side = "rows" if (axis == 0 and ndim == 2) else ("columns" if ndim == 2 else "entries")
            raise ValueError(f"{name} has {w.shape[axis]} {side} but needs {want}"
                             f"{f' ({what})' if what else ''}: {name} is {w.shape}.")
    return w


def check_top_k(top_k, n_keys: int, name: str = "top_k") -> int:
    """How many keys each query keeps: a whole number from 1 to ``n_keys`` (the keys there are).

    >>> check_top_k(4, 10)
    4
    """
    top_k = check_positive_int(top_k, name)
    if top_k > n_keys:
        raise ValueError(f"{name} = {short_number(top_k)} is more than the {n_keys} keys there are: each "
                         f"query keeps at most every key (top_k = {n_keys} is dense causal attention).")
    return top_k
# ------------------------------------------------------------------ gates per token (lesson 13)
def check_per_token(values, name: str, lead_shape: tuple, n_tokens: int, *, low: float, high: float,
                    low_open: bool, meaning: str) -> np.ndarray:
    """One number per token, ``(..., N)``, from ``low`` to ``high`` (``low`` refused when ``low_open``).

    ``lead_shape`` is the batch shape of Q, K, V (the gates may leave axes out or hold 1 there, as in
    broadcasting); ``meaning`` says what the number does, for the message ("the share of the state kept").
    Returns the values broadcast to ``lead_shape + (n_tokens,)``.
    """
    arr = as_float_array(values, name, shape="(..., N)")
    if arr.shape[-1] != n_tokens:
        raise ValueError(f"{name} has {arr.shape[-1]} numbers on its last axis but there are {n_tokens} "
                         f"tokens: {name} needs one number per token, shape (..., {n_tokens}) "
                         f"(got {arr.shape}).")
    try:
        arr = np.broadcast_to(arr, np.broadcast_shapes(arr.shape[:-1], lead_shape) + (n_tokens,))
    except ValueError:
        raise ValueError(f"{name} has shape {arr.shape}, whose leading axes {arr.shape[:-1]} do not "
                         f"broadcast with the batch axes {lead_shape} of Q, K and V.") from None
    if arr.shape[:-1] != tuple(lead_shape):
        raise ValueError(f"{name} has shape {arr.shape}, which would enlarge the batch axes {lead_shape} of "
                         f"Q, K and V; it may only have the same or fewer axes.")
    bad = (arr <= low if low_open else arr < low) | (arr > high)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise ValueError(f"{name} must lie in {interval} ({meaning}); it holds {arr[where]} at index {where} "
                         f"({int(bad.sum())} value{'s' if bad.sum() != 1 else ''} outside in all).")
    return arr


# ------------------------------------------------------------------ figures (stills and live figures)
def check_text(value, name: str, *, required: bool = True) -> str:
    """A title or axis label: a string; a ``required`` one (a still's title) must also say something."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string that says what is shown; got {value!r} "
                        f"({type(value).__name__}).")
    if required and not value.strip():
        raise TypeError(f"{name} must be a non-empty string that says what is shown; got {value!r}.")
    return value


def check_label(value, name: str) -> str:
    """An optional label (a live figure's title or axis label): a string, empty for none."""
    return check_text(value, name, required=False)


def check_labels(labels, n: int, name: str, what: str) -> list[str]:
    """One label per ``what`` ("row", "column", "bar"): ``n`` of them; ``None`` means 0, 1, 2, ..."""
    if labels is None:
        return [str(i) for i in range(n)]
    if isinstance(labels, str):
        raise TypeError(f"{name} must be a list of tokens, one per {what}, not the string {labels!r}; "
                        f"use tokenize(sentence) to split it.")
    try:
        out = [str(t) for t in labels]
    except TypeError:
        raise TypeError(f"{name} must be a list of tokens; got {type(labels).__name__}.") from None
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but there are {n} {what}s: "
                         f"give one label per {what}.")
    return out


def check_head_weights(weights, name: str = "weights") -> np.ndarray:
    """Attention weights of several heads, ``(n_heads, seq_len, seq_len)``: one square matrix per head."""
    w = as_float_array(weights, name)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"{name} must be (n_heads, seq_len, seq_len), one square matrix per head; "
                         f"got shape {w.shape}.")
    return w


def color_range(values: np.ndarray, vmin, vmax) -> tuple[float, float]:
    """The colour scale's (low, high): ``vmin``/``vmax`` or the values' range (a constant one ±0.5)."""
    for v, name in ((vmin, "vmin"), (vmax, "vmax")):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v)):
            raise TypeError(f"{name} must be a finite number or None; got {v!r}.")
    lo = float(np.min(values)) if vmin is None and values.size else (0.0 if vmin is None else float(vmin))
    hi = float(np.max(values)) if vmax is None and values.size else (1.0 if vmax is None else float(vmax))
    if lo > hi:
        raise ValueError(f"vmin={lo} is larger than vmax={hi}; the colour scale needs vmin ≤ vmax.")
    if lo == hi:  # a constant matrix: give the colour scale some room
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi
