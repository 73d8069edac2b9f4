"""Attention masks. Convention (torch SDPA's): True = this query MAY attend to this key.

A mask is applied before the softmax by writing −∞ where it is False; since
exp(−∞) = 0, those keys get weight exactly 0. Taught in notebook 07, used from
notebook 04 on. What lesson 07 does with masks (the gallery, the convention trap, the leak
experiment, the wrong recipes) is in :mod:`lessons_lib.lab.masking`.
"""

from __future__ import annotations

import numpy as np

from .._checks import (
    check_flag,
    check_mask,
    check_memory,
    check_positive_int,
    check_whole_number,
    is_flag,
    is_whole_number,
)

__all__ = ["causal_mask", "padding_mask", "SequenceMask", "align_sequence_mask", "sliding_window_mask",
           "combine_masks", "additive_mask", "bottom_right_causal_mask"]

_INSTEAD = ("Use a shorter sequence. Attention that needs no mask matrix at all: "
            "flash_attention(q, k, v, causal=True), or sdpa_attention(..., causal=True).")


def check_mask_memory(n_bytes: int, what: str) -> None:
    """Refuse a mask (or an array made from one) of ``n_bytes`` too big to hold, saying what needs none.

    A bool mask takes one byte per (query, key) pair. ``n_bytes`` is counted with Python's whole
    numbers, exact at any size (a float would overflow).
    """
    check_memory(n_bytes, what, _INSTEAD)


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """``(n_queries, n_keys)`` bool, True where key j ≤ query i (no peeking ahead).

    Top-left aligned as in torch: query i sees keys 0..i, whatever n_keys is.

    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    n_queries = check_positive_int(n_queries, "n_queries")
    n_keys = n_queries if n_keys is None else check_positive_int(n_keys, "n_keys")
    check_mask_memory(n_queries * n_keys,
                       f"causal_mask({n_queries}{'' if n_keys == n_queries else f', {n_keys}'})")
    return np.tri(n_queries, n_keys, dtype=bool)  # one (n_queries, n_keys) bool buffer, nothing else


class SequenceMask(np.ndarray):
    """A bool mask whose leading axes are *sequences* (the batch), never heads: ``(..., L, S)``.

    What :func:`padding_mask` returns. Given to the attention functions with inputs
    that have more batch axes (heads: ``(B, H, L, S)``), the missing axes are inserted
    just before ``(L, S)``, so sequence b's mask reaches every head of sequence b (as
    ``mask[:, None]`` would). A raw numpy array or tensor keeps torch's rule instead: it
    is aligned from the right, so a ``(B, L, S)`` array meets ``(B, H, L, S)`` scores
    with its B against the H axis. Indexing keeps the type; ``np.asarray(mask)`` drops it.
    """


def align_sequence_mask(mask, n_dims: int):
    """``mask`` ready to broadcast against scores with ``n_dims`` dimensions ``(..., L, S)``.

    A :class:`SequenceMask` with fewer dimensions gets size-1 head axes before its last
    two: ``(B, L, S)`` against ``(B, H, L, S)`` becomes ``(B, 1, L, S)``. Anything else
    (None, raw arrays, tensors) is returned as it is: torch's broadcasting, aligned from
    the right.
    """
    if not isinstance(mask, SequenceMask) or mask.ndim >= n_dims or mask.ndim < 3:
        return mask
    return mask.reshape(*mask.shape[:-2], *(1,) * (n_dims - mask.ndim), *mask.shape[-2:])


def padding_mask(valid=None, n_queries: int | None = None, n_keys: int | None = None, *,
                 lengths=None) -> SequenceMask:
    """Mask that hides padding keys: ``(..., n_queries, n_keys)`` bool, True = may attend.

    Give one of:

    * ``valid``: a key-padding array ``(..., n_keys)``, bool or 0/1 integers, 1 (True)
      for a real token and 0 (False) for padding: Hugging Face's ``attention_mask``
      (``(batch, n_keys)`` ints) is such an array;
    * ``lengths``: whole-number lengths, one per sequence: the first ``length`` of the
      ``n_keys`` keys (default: the longest length) are real, the rest padding.

    Every query row gets the same mask; ``n_queries`` defaults to n_keys. The result is a
    :class:`SequenceMask`: its leading axes are sequences, so against inputs with heads,
    ``(B, H, L, S)``, each sequence's mask reaches all of its heads (a raw ``(B, L, S)``
    array would be aligned with the heads instead, torch's rule). Notebook 07.
    """
    if (valid is None) == (lengths is None):
        raise TypeError("padding_mask takes either a key-padding array valid (1/True = real token, "
                        "0/False = padding), e.g. padding_mask([1, 1, 0]), or lengths, e.g. "
                        "padding_mask(lengths=[3, 2]); give exactly one of them.")
    if n_queries is not None:
        n_queries = check_positive_int(n_queries, "n_queries")
    if lengths is not None:
        lengths, scalar = _check_lengths(lengths)
        n_keys = int(lengths.max()) if n_keys is None else check_positive_int(n_keys, "n_keys")
        if lengths.max() > n_keys:
            raise ValueError(f"a length of {int(lengths.max())} does not fit in n_keys={n_keys} keys.")
        n_sequences = None if scalar else len(lengths)
    else:
        keep = _keys_from_valid(valid)
        found = keep.shape[-1]
        if n_keys is not None and check_positive_int(n_keys, "n_keys") != found:
            raise ValueError(f"valid has {found} keys (its last axis) but n_keys={n_keys}.")
        n_keys = found
        n_sequences = keep.size // n_keys if keep.ndim > 1 else None
    n_queries = n_keys if n_queries is None else n_queries
    batch = "" if n_sequences is None else f" for {n_sequences} sequence{'s' if n_sequences != 1 else ''}"
    check_mask_memory((n_sequences or 1) * n_keys * (n_queries + 1),    # the keys, then the mask
                       f"padding_mask with {n_queries} queries × {n_keys} keys{batch}")
    if lengths is not None:
        keep = np.arange(n_keys) < lengths[:, None]
        keep = keep[0] if scalar else keep
    full = np.broadcast_to(keep[..., None, :], (*keep.shape[:-1], n_queries, n_keys)).copy()
    return full.view(SequenceMask)


def _items(value):
    """Every scalar inside a (nested) list or tuple, or ``value`` itself."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _items(item)
    else:
        yield value


def _as_numbers(value, name: str, example: str) -> np.ndarray:
    """``value`` (list, array or tensor) as a numpy array, or a clear error (ragged lists too)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if isinstance(value, str):
        raise TypeError(f"{name} must be a list or array, e.g. {example}; got the string {value!r}.")
    try:
        arr = np.asarray(value)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular list or array, e.g. {example}; its rows have "
                         f"different lengths ({value!r}).") from None
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): padding_mask got no keys; give at least "
                         f"one, e.g. {example}.")
    if arr.dtype == object:
        raise TypeError(f"{name} must hold numbers, e.g. {example}; got {value!r}.")
    return arr


def _keys_from_valid(valid) -> np.ndarray:
    """A key-padding array (bool, or 0/1 integers) as bool ``(..., n_keys)``, True = real token."""
    arr = _as_numbers(valid, "valid", "[1, 1, 0] or [True, True, False]")
    if arr.ndim == 0:
        raise ValueError("valid needs one entry per key, e.g. [1, 1, 0] (1 = real token, 0 = padding).")
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
        raise ValueError(
            f"valid must hold 1 (or True) for a real token and 0 (or False) for padding, like Hugging "
            f"Face's attention_mask; got {arr.tolist() if arr.size <= 12 else arr.dtype}. To give the "
            f"sequences' lengths instead, use padding_mask(lengths=...), e.g. lengths=[3, 2].")
    return arr.astype(bool)


def _check_lengths(lengths) -> tuple[np.ndarray, bool]:
    """Lengths, one whole number ≥ 1 per sequence, as a 1-D int array, and whether one number was given.

    A bool is never a length (``is_whole_number``'s rule): ``[True, 3]`` would be read as ``[1, 3]``.
    """
    if hasattr(lengths, "detach") and hasattr(lengths, "cpu"):  # a torch tensor
        lengths = lengths.detach().cpu().numpy()
    for item in _items(lengths):
        if is_flag(item):
            raise TypeError(f"lengths must be whole numbers, one per sequence, e.g. [3, 2]; got {lengths!r}, "
                            f"which holds {item!r}: True/False is not a length. For a 0/1 (True/False) "
                            f"mask of the real tokens, use padding_mask(valid=...) instead.")
        if is_whole_number(item):
            check_whole_number(item, "a length in lengths")       # not too large to count
    arr = _as_numbers(lengths, "lengths", "[3, 2]")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"lengths must be whole numbers, one per sequence, e.g. [3, 2]; got dtype "
                        f"{arr.dtype}.")
    lengths_1d = np.atleast_1d(arr)
    if lengths_1d.ndim != 1:
        raise ValueError(f"lengths must be a list of whole numbers, one per sequence; got shape {arr.shape}.")
    if (lengths_1d < 1).any():
        raise ValueError(f"every sequence needs at least one real token; got lengths {lengths_1d.tolist()}.")
    return lengths_1d, arr.ndim == 0


def sliding_window_mask(n: int, window: int, causal: bool = True) -> np.ndarray:
    """``(n, n)`` bool: query i sees keys within ``window`` positions.

    ``causal=True``: keys i−window+1 … i (the last ``window`` tokens, itself
    included, as in Mistral-style local attention); ``causal=False``: keys with
    |i − j| < window.
    """
    n = check_positive_int(n, "n")
    window = check_positive_int(window, "window")
    causal = check_flag(causal, "causal")
    check_mask_memory(2 * n * n, f"sliding_window_mask({n}, {window})")
    window = min(window, n)                    # a window wider than the sequence sees all of it
    # np.tri(n, n, k) is True where j ≤ i + k: keep j ≤ i (or j < i + window), drop j ≤ i − window.
    mask = np.tri(n, n, 0 if causal else window - 1, dtype=bool)
    mask &= ~np.tri(n, n, -window, dtype=bool)
    return mask


def combine_masks(mask, causal: bool, n_queries: int, n_keys: int, target_shape: tuple | None = None):
    """AND together a user ``mask`` and the causal mask; None when nothing is masked.

    ``target_shape`` (default ``(n_queries, n_keys)``) is the scores' shape the
    mask must broadcast to.
    """
    n_queries, n_keys = check_positive_int(n_queries, "n_queries"), check_positive_int(n_keys, "n_keys")
    target_shape = (n_queries, n_keys) if target_shape is None else tuple(target_shape)
    mask = check_mask(align_sequence_mask(mask, len(target_shape)), target_shape)
    if check_flag(causal, "causal"):
        tri = causal_mask(n_queries, n_keys)
        return tri if mask is None else mask & tri
    return mask


def additive_mask(mask, dtype=np.float64) -> np.ndarray:
    """The bool ``mask`` (True = may attend) as numbers to add to the scores: 0 or −∞.

    ``scores + additive_mask(mask)`` leaves allowed scores as they are and turns
    masked ones into −∞, which softmax maps to exp(−∞) = 0. This is also the
    meaning of a *float* ``attn_mask`` in torch (SDPA and ``nn.MultiheadAttention``
    alike): it is added to the scores. Notebook 07.
    """
    allowed = check_mask(mask, np.shape(mask))
    if allowed is None:
        raise TypeError("additive_mask needs a boolean mask (True = may attend); got None.")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a float type such as np.float64 (−∞ is a float); "
                        f"got {dtype!r}.") from None
    if dtype.kind != "f":
        raise TypeError(f"dtype must be a float type (−∞ is a float); got {dtype}.")
    check_mask_memory(allowed.size * dtype.itemsize, f"additive_mask of a mask of shape {allowed.shape}")
    return np.where(allowed, dtype.type(0.0), dtype.type(-np.inf))


def bottom_right_causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """``(n_queries, n_keys)`` bool, causal with the queries as the *last* n_queries tokens.

    Query i sees keys 0 … i + (n_keys − n_queries): what a model needs when new
    tokens (the queries) attend to a cache of earlier keys plus themselves. torch
    calls this ``causal_lower_right``; ``is_causal=True`` in torch SDPA is instead
    top-left aligned (:func:`causal_mask`). The two agree when n_queries = n_keys.
    A query may end up with no key at all when n_queries > n_keys. Notebook 07.

    >>> bottom_right_causal_mask(2, 4).astype(int)
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    n_queries = check_positive_int(n_queries, "n_queries")
    n_keys = n_queries if n_keys is None else check_positive_int(n_keys, "n_keys")
    check_mask_memory(2 * n_queries * n_keys,         # np.ones, then np.tril's copy
                       f"bottom_right_causal_mask({n_queries}{'' if n_keys == n_queries else f', {n_keys}'})")
    return np.tril(np.ones((n_queries, n_keys), dtype=bool), k=n_keys - n_queries)
