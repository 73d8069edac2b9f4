"""Attention masks. Convention (torch SDPA's): True = this query MAY attend to this key.

A mask is applied before the softmax by writing −∞ where it is False; since
exp(−∞) = 0, those keys get weight exactly 0. Taught in notebook 07, used from
notebook 04 on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import (
    check_flag,
    check_mask,
    check_memory,
    check_positive_int,
    check_seed,
    check_whole_number,
    is_flag,
    is_whole_number,
)

__all__ = ["causal_mask", "padding_mask", "SequenceMask", "align_sequence_mask", "sliding_window_mask",
           "combine_masks", "causal_average_weights",
           "additive_mask", "bottom_right_causal_mask", "mask_gallery", "causal_mask_mistake", "future_leak",
           "MASKING_RECIPES", "masked_weights", "MaskingRecipe", "compare_masking", "masking_leak",
           "leak_claim"]

_INSTEAD = ("Use a shorter sequence. Attention that needs no mask matrix at all: "
            "flash_attention(q, k, v, causal=True), or sdpa_attention(..., causal=True).")


def _check_mask_memory(n_entries: int, what: str) -> None:
    """A bool mask takes one byte per (query, key) pair: refuse one too big to hold.

    ``n_entries`` is counted with Python's whole numbers, exact at any size (a float would overflow).
    """
    check_memory(n_entries, what, _INSTEAD)


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
    _check_mask_memory(n_queries * n_keys,
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
    _check_mask_memory((n_sequences or 1) * n_keys * (n_queries + 1),    # the keys, then the mask
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
    _check_mask_memory(2 * n * n, f"sliding_window_mask({n}, {window})")
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


# ====================================================================== notebook 07: the lesson's tools
# Where the mask comes from, the gallery, the convention trap and the leak experiment.

def causal_average_weights(n: int) -> np.ndarray:
    """``(n, n)`` float64: the plain causal average, row i = 1/(i+1) on keys 0..i, 0 after.

    The simplest causal operation: each token's output is the mean of itself and the
    tokens before it (``weights @ V``). Causal attention keeps this lower-triangular
    shape but learns unequal weights: softmax over scores with −∞ above the diagonal.
    Notebook 07.

    >>> causal_average_weights(3)
    array([[1.        , 0.        , 0.        ],
           [0.5       , 0.5       , 0.        ],
           [0.33333333, 0.33333333, 0.33333333]])
    """
    n = check_positive_int(n, "n")
    check_memory(9 * n * n, f"causal_average_weights({n})", _INSTEAD)   # the bool mask, then float64
    allowed = causal_mask(n)
    return allowed / allowed.sum(axis=1, keepdims=True)


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
    check_memory(allowed.size * dtype.itemsize, f"additive_mask of a mask of shape {allowed.shape}",
                 _INSTEAD)
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
    _check_mask_memory(2 * n_queries * n_keys,         # np.ones, then np.tril's copy
                       f"bottom_right_causal_mask({n_queries}{'' if n_keys == n_queries else f', {n_keys}'})")
    return np.tril(np.ones((n_queries, n_keys), dtype=bool), k=n_keys - n_queries)


def mask_gallery(n: int = 8, *, lengths=(8, 5, 3), window: int = 3) -> dict:
    """The masks of notebook 07's gallery, name → bool array (True = may attend).

    * ``"causal"``          ``(n, n)``: each token sees itself and the tokens before it;
    * ``"padding"``         ``(len(lengths), n, n)``: a batch of sequences of these
      lengths padded to n keys; padding keys are hidden from every query;
    * ``"causal + padding"`` the two together, as a decoder trained on a padded batch uses;
    * ``"sliding window"``  ``(n, n)``: causal, and only the last ``window`` tokens.

    Every mask is built by the functions above, nothing by hand.
    """
    n = check_positive_int(n, "n")
    lengths = _as_numbers(lengths, "lengths", "(8, 5, 3)")
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be a list of sequence lengths, one per batch item; got {lengths!r}.")
    padding = padding_mask(lengths=lengths, n_keys=n)
    causal = causal_mask(n)
    return {
        "causal": causal,
        "padding": padding,
        "causal + padding": padding & causal,
        "sliding window": sliding_window_mask(n, window),
    }


def causal_mask_mistake(mask) -> str | None:
    """None when ``mask`` is the causal mask (True = may attend), else the mistake, in words.

    Recognises the mistakes made most often, in this order:

    * not a boolean array (an additive 0/−∞ mask, or 0/1 integers);
    * not square;
    * **inverted**: True where the query may *not* attend, the convention of
      ``nn.MultiheadAttention``'s ``attn_mask`` handed to torch SDPA or to this
      course, where True = may attend (the convention trap);
    * the diagonal left out (a token may not see itself: ``np.tril(..., k=-1)``);
    * the future allowed instead of the past (upper instead of lower triangle);
    * anything else: which cells are wrong.

    Used by the exercise of notebook 07, and on any mask before it is trusted.
    """
    if hasattr(mask, "detach") and hasattr(mask, "cpu"):
        mask = mask.detach().cpu().numpy()
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        if m.dtype.kind == "f" and np.isneginf(m).any():
            return ("this is an additive mask (0 and −∞), but a boolean mask is wanted: True where a "
                    "query may attend. Convert it with mask == 0.")
        return (f"the mask has dtype {m.dtype}, but it must be boolean (True = may attend); "
                f"build it with dtype=bool or compare, e.g. mask == 1.")
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        return f"a causal self-attention mask is square (n, n); this one has shape {m.shape}."
    n = m.shape[0]
    right = causal_mask(n)
    if np.array_equal(m, right):
        return None
    if np.array_equal(m, ~right):
        return ("the mask is inverted: True marks the keys a query may NOT see. That is "
                "nn.MultiheadAttention's attn_mask convention; torch SDPA and this course use "
                "True = may attend. Use ~mask (or np.tril instead of np.triu(..., k=1)).")
    if np.array_equal(m, np.tril(right, k=-1)):
        return ("the diagonal is missing: each token must be allowed to see itself (key j = query i). "
                "Use np.tril(..., k=0), not k=-1.")
    if np.array_equal(m, right.T):
        return ("the mask allows the future instead of the past (upper triangle): query i must see "
                "keys j ≤ i, the lower triangle, np.tril.")
    wrong = np.argwhere(m != right)
    i, j = (int(a) for a in wrong[0])
    should = "may attend" if right[i, j] else "must not attend"
    return (f"{len(wrong)} cell(s) differ from the causal mask, the first at query {i}, key {j}: "
            f"query {i} {should} to key {j} (key j ≤ query i is allowed, key j > query i is not).")


def _outputs_of(attend, x) -> np.ndarray:
    """``attend(x)`` as one float array of outputs, or a clear error naming ``attend``."""
    result = attend(x)
    if isinstance(result, tuple):
        raise TypeError(f"attend returned a tuple of {len(result)} things (perhaps (output, weights)); "
                        f"it must "
                        f"return the outputs only, e.g. lambda x: multi_head_attention(x, ...)[0].")
    from .._checks import as_float_array

    return as_float_array(result, "the outputs of attend", min_ndim=1)


def future_leak(attend, x, position: int, *, seed: int = 0) -> np.ndarray:
    """The leak experiment: how much each output row moves when token ``position`` is replaced.

    ``attend`` maps ``x (seq_len, d)`` to outputs ``(seq_len, d_out)``, e.g.
    ``lambda x: multi_head_attention(x, ..., causal=True)[0]``. Row ``position``
    of ``x`` is replaced by a fresh random vector (from ``seed``); the result holds,
    per output row, the largest absolute change. With a causal mask, every row
    before ``position`` must not move at all: exactly 0.0, as the future cannot leak
    into the past. Without it, they all move. Notebook 07.
    """
    if not callable(attend):
        raise TypeError(f"attend must be a function x -> outputs; got {type(attend).__name__}.")
    from .._checks import as_float_array

    x = as_float_array(x, "x", min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"x must be (seq_len, d), one row per token; got shape {x.shape}.")
    if not is_whole_number(position) or not 0 <= position < len(x):
        raise ValueError(f"position must be a token index 0..{len(x) - 1}; got {position!r}.")
    seed = check_seed(seed, allow_generator=False)
    changed = x.copy()
    changed[position] = np.random.default_rng(seed).standard_normal(x.shape[1]).astype(x.dtype)
    before, after = _outputs_of(attend, x), _outputs_of(attend, changed)
    if before.shape != after.shape or before.ndim != 2 or before.shape[0] != len(x):
        raise ValueError(f"attend must return one output row per token, (seq_len, d_out); "
                         f"got shape {before.shape} for seq_len={len(x)}.")
    return np.abs(after - before).max(axis=1)


# ====================================================================== notebook 07: two wrong ways to mask
#: how to mask a matrix of scaled scores, the right recipe first: name -> what it does, in words
MASKING_RECIPES = {
    "minus_inf": "−∞ before the softmax",
    "zero": "0 instead of −∞, then softmax",
    "after": "softmax, then zero the masked weights",
    "after_renormalised": "softmax, zero the masked, renormalise",
}


def masked_weights(scores, mask, recipe: str = "minus_inf") -> np.ndarray:
    """The weights of the scaled ``scores (..., L, S)`` under ``mask`` (True = may attend), by ``recipe``.

    * ``"minus_inf"``: −∞ where the mask is False, then the softmax of each row: the right recipe
      (the library's ``attention_weights``);
    * ``"zero"``: masked scores set to 0, then softmax: exp(0) = 1, so every masked key keeps a share;
    * ``"after"``: the softmax of all the scores, then the masked weights set to 0: the rows sum to less
      than 1, and what is left was divided by a total that holds the masked keys' exponentials;
    * ``"after_renormalised"``: ``"after"``, then each row divided by its new sum. Mathematically the
      right weights, but computed from the masked scores: a row whose allowed weights all underflow
      to 0 (a masked score far larger than the allowed ones) becomes 0/0, NaN.

    The wrong recipes are what lesson 07 warns against, computed here so that the lesson can show what
    they do; ``"after_renormalised"`` returns NaN where it divides 0 by 0, as it would in a model.

    >>> s, m = np.array([[1.0, 2.0]]), np.array([[True, False]])
    >>> [masked_weights(s, m, r).round(3).tolist() for r in MASKING_RECIPES]
    [[[1.0, 0.0]], [[0.731, 0.269]], [[0.269, 0.0]], [[1.0, 0.0]]]
    """
    from .._checks import as_float_array
    from .attention import attention_weights, softmax

    if recipe not in MASKING_RECIPES:
        raise ValueError(f"recipe must be one of {', '.join(repr(r) for r in MASKING_RECIPES)}; "
                         f"got {recipe!r}.")
    s = as_float_array(scores, "scores", min_ndim=2, allow_neg_inf=True)
    allowed = check_mask(mask, s.shape)
    if allowed is None:
        raise TypeError("masked_weights needs a boolean mask (True = may attend); got None.")
    allowed = np.broadcast_to(allowed, s.shape)
    if recipe == "minus_inf":
        return attention_weights(s, mask=allowed, scale=1.0)
    if recipe == "zero":
        return softmax(np.where(allowed, s, 0.0))
    after = softmax(s) * allowed
    if recipe == "after":
        return after
    with np.errstate(invalid="ignore"):
        return after / after.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class MaskingRecipe:
    """One recipe's weights on one matrix of scores, and what they get wrong (:func:`compare_masking`).

    ``allowed``: the mask, True = may attend; ``masked_weight``: the largest weight a row gives a masked key
    (the future, for a causal mask); ``row_sums``: each row's total; ``difference``: the largest difference
    from the right weights (NaN where the recipe gave NaN).
    """

    name: str
    label: str
    weights: np.ndarray
    allowed: np.ndarray
    masked_weight: float
    row_sums: np.ndarray
    difference: float


def compare_masking(scores, mask) -> list[MaskingRecipe]:
    """Every recipe of :data:`MASKING_RECIPES` on the same ``scores (L, S)`` and ``mask``, right one first.

    >>> scores = np.array([[0.5, 1.0, 2.0], [0.0, 1.0, -1.0], [1.0, 0.0, 0.5]])
    >>> for r in compare_masking(scores, causal_mask(3)):
    ...     print(f"{r.name:18} future weight {r.masked_weight:.3f}  row sums {r.row_sums.round(3)}")
    minus_inf          future weight 0.000  row sums [1. 1. 1.]
    zero               future weight 0.274  row sums [1. 1. 1.]
    after              future weight 0.000  row sums [0.14 0.91 1.  ]
    after_renormalised future weight 0.000  row sums [1. 1. 1.]
    """
    weights = {name: masked_weights(scores, mask, name) for name in MASKING_RECIPES}
    allowed = np.broadcast_to(check_mask(mask, weights["minus_inf"].shape), weights["minus_inf"].shape)
    right = weights["minus_inf"]
    return [MaskingRecipe(name, label, w, allowed, float(np.where(allowed, 0.0, w).max(initial=0.0)),
                          w.sum(axis=-1), float(np.abs(w - right).max(initial=0.0)))
            for (name, label), w in zip(MASKING_RECIPES.items(), weights.values())]


def masking_leak(x, position: int, recipe: str, *, seed: int = 0) -> np.ndarray:
    """:func:`future_leak` of one causal attention step masked by ``recipe``: how far each row moves.

    The step is ``weights · x`` with ``weights = masked_weights(x·xᵀ/√d, causal mask, recipe)`` (queries,
    keys and values all ``x (seq_len, d)``). With the right recipe the rows before ``position`` do not
    move; with ``"zero"`` and ``"after"`` they do: the future leaks.
    """
    from .._checks import as_float_array

    x = as_float_array(x, "x", min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"x must be (seq_len, d), one row per token; got shape {x.shape}.")
    if recipe not in MASKING_RECIPES:
        raise ValueError(f"recipe must be one of {', '.join(repr(r) for r in MASKING_RECIPES)}; "
                         f"got {recipe!r}.")

    def attend(rows):
        return masked_weights(rows @ rows.T / np.sqrt(rows.shape[1]), causal_mask(len(rows)), recipe) @ rows
    return future_leak(attend, x, position, seed=seed)


def leak_claim(moved, *, below: float = 1e-12) -> str:
    """How far the rows of a leak experiment moved, as a claim that holds on every CPU.

    ``moved``: what :func:`future_leak` or :func:`masking_leak` returns for the rows that must not move.
    A move below ``below`` is rounding (another CPU may give other last digits, or exactly 0), so its
    digits are never printed.

    >>> leak_claim([0.0, 3e-17]), leak_claim([0.0, 0.0874])
    ('none (below 1e-12)', 'up to 0.087')
    """
    from .._checks import as_float_array, is_real_number

    if not is_real_number(below) or not 0 < below < 1:
        raise ValueError(f"below must be a bound between 0 and 1 such as 1e-12; got {below!r}.")
    largest = float(as_float_array(moved, "moved", min_ndim=1).max(initial=0.0))
    if largest < below:
        return f"none (below {below:g})"
    return f"up to {largest:.3f}"
