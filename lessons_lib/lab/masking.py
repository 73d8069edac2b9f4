"""Lesson 07's experiments with masks: where the mask comes from, the gallery, the convention trap, the leak.

The masks themselves are formulas (:mod:`lessons_lib.core.masks`: ``causal_mask``, ``padding_mask``,
...); this module is what notebook 07 does with them:

* :func:`causal_average_weights`, the plain causal average causal attention starts from;
* :func:`mask_gallery`, the masks a model uses, side by side;
* :func:`causal_mask_mistake`, the convention trap (True = may attend, or may not?) named in words;
* :func:`future_leak`, the experiment that shows a causal mask keeps the future out of the past;
* :data:`MASKING_RECIPES`, :func:`masked_weights`, :func:`compare_masking`, :func:`masking_leak`:
  −∞ before the softmax against two wrong ways to mask, and what each lets through;
* :func:`leak_claim`, how far rows moved, said so that it holds on every CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import (
    as_float_array,
    check_mask,
    check_positive_int,
    check_seed,
    is_real_number,
    is_whole_number,
)
from ..core.attention import attention_weights, softmax
from ..core.masks import causal_mask, check_mask_memory, padding_mask, sliding_window_mask

__all__ = ["causal_average_weights", "mask_gallery", "causal_mask_mistake", "future_leak", "MASKING_RECIPES",
           "masked_weights", "MaskingRecipe", "compare_masking", "masking_leak", "leak_claim"]


# ====================================================================== where the mask comes from
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
    check_mask_memory(9 * n * n, f"causal_average_weights({n})")   # the bool mask, then float64
    allowed = causal_mask(n)
    return allowed / allowed.sum(axis=1, keepdims=True)


def mask_gallery(n: int = 8, *, lengths=(8, 5, 3), window: int = 3) -> dict:
    """The masks of notebook 07's gallery, name → bool array (True = may attend).

    * ``"causal"``          ``(n, n)``: each token sees itself and the tokens before it;
    * ``"padding"``         ``(len(lengths), n, n)``: a batch of sequences of these
      lengths padded to n keys; padding keys are hidden from every query;
    * ``"causal + padding"`` the two together, as a decoder trained on a padded batch uses;
    * ``"sliding window"``  ``(n, n)``: causal, and only the last ``window`` tokens.

    Every mask is built by :mod:`lessons_lib.core.masks`, nothing by hand.
    """
    n = check_positive_int(n, "n")
    padding = padding_mask(lengths=lengths, n_keys=n)
    if padding.ndim != 3:
        raise ValueError(f"lengths must be a list of sequence lengths, one per batch item; got {lengths!r}.")
    causal = causal_mask(n)
    return {
        "causal": causal,
        "padding": padding,
        "causal + padding": padding & causal,
        "sliding window": sliding_window_mask(n, window),
    }


# ====================================================================== the convention trap and the leak
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


# ====================================================================== two wrong ways to mask
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
    if not is_real_number(below) or not 0 < below < 1:
        raise ValueError(f"below must be a bound between 0 and 1 such as 1e-12; got {below!r}.")
    largest = float(as_float_array(moved, "moved", min_ndim=1).max(initial=0.0))
    if largest < below:
        return f"none (below {below:g})"
    return f"up to {largest:.3f}"
