"""What the lessons measure, computed here so that figures (plots, live figures) only draw.

* :func:`measure_score_variance` (notebook 04): var(q·k) ≈ d_k, and ≈ 1 after dividing by √d_k.
* :func:`difference_claim` (notebooks 00, 08): how closely two computations of the same thing agree,
  said as a claim at its precision ("largest difference below 1e-12"), never as roundoff digits.
* :func:`time_ratio_verdict`, :func:`slope_verdict` (notebook 08): what one run measured, said as the
  verdict of *that* run ("took 1.25× the naive time: slower"). A time depends on the machine and on what
  else it is doing, so a lesson's prose never states one; the cell that measures prints its verdict.
"""

from __future__ import annotations

import numpy as np

from .._checks import is_real_number
from ..core.attention import attention_scores, scale_scores
from .data import random_qkv

__all__ = ["measure_score_variance", "difference_claim", "time_ratio_verdict", "slope_verdict",
           "SAME_SPEED", "SLOPE_NEAR_TWO"]

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


def _scientific(value: float, digits: int | None = None) -> str:
    """``1e-12`` → ``'1e-12'``, ``0.001`` → ``'1e-3'``, ``1.5e-12`` → ``'1.5e-12'``: as a learner writes it.

    With ``digits=None`` the shortest text that reads back as exactly ``value``; else that many
    significant digits (trailing zeros dropped).
    """
    if digits is None:
        text = np.format_float_scientific(value, unique=True, trim="-")
    else:
        text = np.format_float_scientific(value, precision=digits - 1, unique=False, trim="-")
    mantissa, exponent = text.split("e")
    return f"{mantissa}e{int(exponent)}"


def _largest_text(largest: float, bound: float) -> str:
    """``largest`` (≥ ``bound``) with 2 significant digits, or more where 2 would round it below the bound.

    So "largest difference 1.7e-12, NOT below 1.7e-12" never reads as a contradiction: the printed
    difference is never smaller than the printed bound.
    """
    if not np.isfinite(largest):
        return "inf"
    if largest >= 1e-3:
        text = f"{largest:.2g}"
        if float(text) >= bound:
            return text
    for digits in range(2, 18):
        text = _scientific(largest, digits)
        if float(text) >= bound:
            return text
    return _scientific(largest)                 # 17 digits: exactly largest, which is ≥ bound


def _same_infinity(a: np.ndarray, b: np.ndarray) -> None:
    """Refuse the same infinity in ``a`` and ``b`` at one place: inf − inf is NaN, no difference at all."""
    both = np.isinf(a) & (a == b)
    if both.any():
        where = tuple(int(i) for i in np.argwhere(both)[0])
        raise ValueError(
            f"a and b both hold {a[where]:+} at index {where}: inf − inf is no number, so no claim about "
            f"their difference can be made there (two overflows agree on nothing). Compare where both are "
            f"finite (np.isfinite), or find why both overflow."
        )


def _not_a_number(x: np.ndarray, name: str) -> None:
    if x.dtype.kind == "f" and np.isnan(x).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(x))[0])
        raise ValueError(
            f"{name} holds NaN at index {where}: a difference with NaN is no number, so no claim can be "
            f"made. Look for 0/0 or inf − inf where {name} was computed."
        )


def difference_claim(a, b, *, below: float) -> str:
    """The largest difference max|a − b|, said as a claim that holds on every machine.

    Two computations of the same formula (tiled and plain attention, float32 and float64) differ by
    rounding errors, and those depend on the CPU: another one (AVX-512, ARM, another BLAS) adds the same
    numbers in another order and gets other last digits. So the digits of the difference are never
    printed: it is compared with ``below``, a bound chosen well above the rounding error of the dtype
    (1e-12 for float64, 1e-6 for float32 at the lessons' sizes). Notebooks 00 and 08 print it.

    ``a`` and ``b`` must have the same shape (one is never stretched against the other, as numpy's
    broadcasting would). The difference is measured in float64. An infinity against a number, or against
    the other infinity, is an infinite difference. The same infinity in both places is refused, as NaN
    is: inf − inf is no number, and two overflows say nothing of how close the computations are, so no
    bound can be claimed there. The printed bound is ``below`` exactly, and a difference not below it is
    printed with the digits it needs not to read as below.

    >>> difference_claim([1.0, 2.0], [1.0, 2.0 + 4e-16], below=1e-12)
    'largest difference below 1e-12'
    >>> difference_claim([1.0, 2.0], [1.0, 2.5], below=1e-12)
    'largest difference 0.5, NOT below 1e-12'
    >>> difference_claim([0.0], [1.7e-12], below=1.5e-12)
    'largest difference 1.7e-12, NOT below 1.5e-12'
    """
    if not is_real_number(below) or not 0 < below < 1:
        raise ValueError(f"below must be a bound between 0 and 1 such as 1e-12; got {below!r}.")
    below = float(below)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iuf" or b.dtype.kind not in "iuf":
        raise TypeError(f"difference_claim compares arrays of numbers; got dtypes {a.dtype} and {b.dtype}.")
    if a.shape != b.shape:
        raise ValueError(f"difference_claim compares two arrays of the same shape, entry by entry; got "
                         f"{a.shape} and {b.shape}. numpy would stretch one against the other "
                         f"(broadcasting) and compare entries that are not the same thing.")
    _not_a_number(a, "a")
    _not_a_number(b, "b")
    a, b = a.astype(np.float64), b.astype(np.float64)
    _same_infinity(a, b)
    with np.errstate(over="ignore"):                          # an overflow of |a − b| is an infinite one
        differences = np.abs(a - b)
    largest = float(differences.max(initial=0.0))
    if largest < below:
        return f"largest difference below {_scientific(below)}"
    return f"largest difference {_largest_text(largest, below)}, NOT below {_scientific(below)}"


#: two times within this factor of each other are "about as fast": closer than one run's noise on a busy
#: machine
SAME_SPEED = 1.1
#: a time slope in this range is "close to 2": the N² work dominates the time
SLOPE_NEAR_TWO = (1.8, 2.2)


def _positive(value, name: str) -> float:
    if not is_real_number(value) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number measured in this run; got {value!r}.")
    return float(value)


def time_ratio_verdict(ratio, reference: str = "the naive time") -> str:
    """One run's time ratio as its verdict: "1.25× the naive time: slower".

    ``ratio``: the time measured ÷ the reference time measured in the same run. Within a factor
    :data:`SAME_SPEED` of 1 the verdict is "about as fast": closer than that, another run on a busy
    machine may well reverse the order.

    >>> time_ratio_verdict(1.25), time_ratio_verdict(0.8), time_ratio_verdict(1.04)
    ('1.25× the naive time: slower', '0.80× the naive time: faster', '1.04× the naive time: about as fast')
    """
    ratio = _positive(ratio, "ratio")
    if 1 / SAME_SPEED < ratio < SAME_SPEED:
        word = "about as fast"
    else:
        word = "faster" if ratio < 1 else "slower"
    return f"{ratio:.2f}× {reference}: {word}"


def slope_verdict(slope) -> str:
    """A measured log-log slope of time against N, as the verdict of one run, with what it means.

    The work of exact attention grows like N², slope 2. A slope well below 2 means that fixed costs
    per call, which do not grow with N (Python's overhead, starting threads, picking a kernel), are still
    a large part of the time at these sizes; one above 2 means that the larger sizes were slowed by
    something besides the work (the CPU's caches, or other programs on the machine).

    >>> slope_verdict(2.05)
    'N^2.05: close to 2, the N² work dominates'
    >>> slope_verdict(1.54)
    'N^1.54: below 2, fixed costs per call still weigh at these sizes'
    """
    slope = float(slope) if is_real_number(slope) else slope
    if not is_real_number(slope) or not np.isfinite(slope):
        raise ValueError(f"slope must be a finite number (a fitted log-log slope); got {slope!r}.")
    low, high = SLOPE_NEAR_TWO
    if slope < low:
        meaning = "below 2, fixed costs per call still weigh at these sizes"
    elif slope > high:
        meaning = "above 2, the larger sizes were slowed by more than the work (caches, other programs)"
    else:
        meaning = "close to 2, the N² work dominates"
    return f"N^{slope:.2f}: {meaning}"
