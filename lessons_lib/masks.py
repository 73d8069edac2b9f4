"""Attention masks. Convention (torch SDPA's): True = this query MAY attend to this key.

A mask is applied before the softmax by writing −∞ where it is False; since
exp(−∞) = 0, those keys get weight exactly 0. Taught in notebook 07, used from
notebook 04 on.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_flag, check_mask, check_memory, check_positive_int

__all__ = ["causal_mask", "padding_mask", "sliding_window_mask", "combine_masks"]

_INSTEAD = ("Use a shorter sequence. Attention that needs no mask matrix at all: "
            "flash_attention(q, k, v, causal=True), or sdpa_attention(..., causal=True).")


def _check_mask_memory(n_entries: float, what: str) -> None:
    """A bool mask takes one byte per (query, key) pair: refuse one too big to hold."""
    check_memory(float(n_entries), what, _INSTEAD)

__all__ = ["causal_mask", "padding_mask", "sliding_window_mask", "combine_masks"]


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
    _check_mask_memory(float(n_queries) * n_keys,
                       f"causal_mask({n_queries}{'' if n_keys == n_queries else f', {n_keys}'})")
    return np.tri(n_queries, n_keys, dtype=bool)  # one (n_queries, n_keys) bool buffer, nothing else


def padding_mask(valid, n_queries: int | None = None, n_keys: int | None = None) -> np.ndarray:
    """Mask that hides padding keys: ``(..., n_queries, n_keys)`` bool.

    ``valid`` is either a bool array ``(..., n_keys)`` (True = a real token) or
    whole-number lengths, one per batch item: the first ``length`` of the
    ``n_keys`` keys (default: the longest length) are real, the rest padding.
    Every query row gets the same mask; ``n_queries`` defaults to n_keys.
    """
    if hasattr(valid, "detach") and hasattr(valid, "cpu"):  # a torch tensor
        valid = valid.detach().cpu().numpy()
    arr = np.asarray(valid)
    if arr.size == 0:
        raise ValueError(
            f"padding_mask got no keys (shape {arr.shape}): give one True/False per key, "
            f"e.g. [True, True, False], or the lengths of the sequences, e.g. [3, 2]."
        )
    if arr.dtype == np.bool_:
        if arr.ndim == 0:
            raise ValueError("padding_mask needs one True/False per key, e.g. [True, True, False].")
        keep = arr
    else:
        if arr.dtype.kind not in "iu":
            raise TypeError(
                f"padding_mask takes a boolean array (True = real token) or whole-number lengths; "
                f"got dtype {arr.dtype}."
            )
        lengths = np.atleast_1d(arr)
        if lengths.ndim != 1:
            raise ValueError(
                f"lengths must be a list of whole numbers, one per sequence; got shape {arr.shape}."
            )
        if (lengths < 1).any():
            raise ValueError(f"every sequence needs at least one real token; got lengths {lengths.tolist()}.")
        n_keys = int(lengths.max()) if n_keys is None else check_positive_int(n_keys, "n_keys")
        if lengths.max() > n_keys:
            raise ValueError(f"a length of {int(lengths.max())} does not fit in n_keys={n_keys} keys.")
        keep = np.arange(n_keys) < lengths[:, None]
        if arr.ndim == 0:
            keep = keep[0]
    n_keys = keep.shape[-1]
    n_queries = n_keys if n_queries is None else check_positive_int(n_queries, "n_queries")
    _check_mask_memory(float(keep.size) * n_queries,
                       f"padding_mask with {n_queries} queries × {n_keys} keys"
                       + (f" for {keep.size // n_keys} sequences" if keep.ndim > 1 else ""))
    return np.broadcast_to(keep[..., None, :], (*keep.shape[:-1], n_queries, n_keys)).copy()


def sliding_window_mask(n: int, window: int, causal: bool = True) -> np.ndarray:
    """``(n, n)`` bool: query i sees keys within ``window`` positions.

    ``causal=True``: keys i−window+1 … i (the last ``window`` tokens, itself
    included, as in Mistral-style local attention); ``causal=False``: keys with
    |i − j| < window.
    """
    n = check_positive_int(n, "n")
    window = check_positive_int(window, "window")
    causal = check_flag(causal, "causal")
    _check_mask_memory(2.0 * n * n, f"sliding_window_mask({n}, {window})")
    # np.tri(n, n, k) is True where j ≤ i + k: keep j ≤ i (or j < i + window), drop j ≤ i − window.
    mask = np.tri(n, n, 0 if causal else window - 1, dtype=bool)
    mask &= ~np.tri(n, n, -window, dtype=bool)
    return mask


def combine_masks(mask, causal: bool, n_queries: int, n_keys: int, target_shape: tuple | None = None):
    """AND together a user ``mask`` and the causal mask; None when nothing is masked.

    ``target_shape`` (default ``(n_queries, n_keys)``) is the scores' shape the
    mask must broadcast to.
    """
    target_shape = (n_queries, n_keys) if target_shape is None else tuple(target_shape)
    mask = check_mask(mask, target_shape)
    if check_flag(causal, "causal"):
        tri = causal_mask(n_queries, n_keys)
        return tri if mask is None else mask & tri
    return mask
