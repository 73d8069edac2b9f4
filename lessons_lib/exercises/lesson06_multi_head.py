"""Exercises of notebook 06_multi_head: split and merge heads, and build one head by hand.

* ``my_split_heads(x, n_heads)``: ``(L, d_model)`` → ``(n_heads, L, d_head)``, head i holding
  columns i·d_head … (i+1)·d_head − 1 (reshape, then transpose);
* ``my_merge_heads(heads)``: ``(n_heads, L, d_head)`` → ``(L, n_heads·d_head)``, the
  concatenation (transpose back, then reshape);
* ``my_next_token_head(seq_len)``: ``(W_Q, W_K)`` for tokens embedded as one-hot positions
  (X = I), such that every token puts most of its weight on the *next* token.

Content only (cases and candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import multihead
from ..core.attention import softmax
from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

__all__ = ["check_split_heads", "check_merge_heads", "check_next_token_head"]


# --------------------------------------------------------------------------- split
def _random_split(rng, n_tokens, n_heads, d_head, kind="random"):
    d_model = n_heads * d_head
    return Case(f"{kind} X {n_tokens}×{d_model} ({n_tokens} tokens, d_model = {d_model}), "
                f"n_heads = {n_heads} (d_head = {d_head})",
                {"x": rng.normal(size=(n_tokens, d_model)), "n_heads": n_heads})


def _split_cases() -> list[Case]:
    # L, n_heads and d_head all differ in every case, so a reshape to the wrong order of axes
    # cannot give the right shape by accident.
    numbered = np.arange(3 * 10, dtype=float).reshape(3, 10)
    return [Case("X = 0, 1, 2, … as a 3×10 matrix, n_heads = 2 (d_head = 5)", {"x": numbered, "n_heads": 2}),
            *rng_cases([(5, 3, 2), (2, 4, 3), (7, 2, 5)], 16, _random_split)]


def _split_hidden(rng) -> list[Case]:
    """Three unseen cases, L, n_heads and d_head different in each."""
    return [_random_split(rng, *distinct_sizes(rng, 3), kind="unseen") for _ in range(3)]


def _shape(x, n_heads):
    return x.shape[0], n_heads, x.shape[1] // n_heads


SPLIT_HEADS = Exercise(
    name="my_split_heads",
    params=("x", "n_heads"),
    task="splits the columns of X into heads, heads first",
    reference=multihead.split_heads,
    formula=lambda x, n_heads: x.reshape(x.shape[0], n_heads, -1).transpose(1, 0, 2),
    cases=_split_cases,
    library_answers=(multihead.split_heads,),
    hidden=_split_hidden,
    start_hint="Two steps: a reshape to (L, n_heads, d_head) groups the columns of each token by head, "
               "then a transpose brings the head axis to the front: (n_heads, L, d_head).",
    mistakes=(
        Mistake(
            "reshape_only", "the reshape went straight to (n_heads, L, d_head), without a transpose",
            "x.reshape(n_heads, L, d_head) has the right shape but reads the numbers row by row: its "
            "first 'head' is the first L·d_head numbers of X, whole rows of the first tokens, not the "
            "first d_head columns of every token. A reshape never moves numbers; only a transpose does "
            "(here .transpose(1, 0, 2), after a reshape that keeps the tokens first).",
            ("Group each token's columns by head first, keeping the tokens as the first axis; then move the "
             "head axis to the front.",
             "Reshape to (L, n_heads, d_head), then transpose: the argument of transpose lists the old axes "
             "in their new order."),
            like(lambda x, n_heads: x.reshape(n_heads, x.shape[0], x.shape[1] // n_heads)),
        ),
        Mistake(
            "view_only", "the heads are grouped but not moved to the front",
            "x.reshape(L, n_heads, d_head) is the right middle step, but the shape asked for is "
            "(n_heads, L, d_head): each head must be an ordinary (L, d_head) matrix, so that the "
            "attention of all heads runs as one batched product.",
            ("After the reshape, bring the head axis (axis 1) to the front with a transpose.",
             "transpose takes the old axes in their new order: heads first, then tokens, then features."),
            like(lambda x, n_heads: x.reshape(_shape(x, n_heads))),
        ),
        Mistake(
            "interleaved", "each head takes every n_heads-th column instead of a block of d_head columns",
            "With x.reshape(L, d_head, n_heads) the columns are dealt out like cards: head 0 gets columns "
            "0, n_heads, 2·n_heads, … The convention (and nn.MultiheadAttention's) is blocks: head i owns "
            "columns i·d_head … (i+1)·d_head − 1.",
            "Reshape to (L, n_heads, d_head), in that order, then transpose.",
            like(lambda x, n_heads: x.reshape(x.shape[0], -1, n_heads).transpose(2, 0, 1)),
        ),
        Mistake(
            "wrong_transpose", "the transpose puts the axes in the wrong order",
            "After x.reshape(L, n_heads, d_head), only the first two axes swap: tokens and heads. "
            "The last axis, the d_head features, stays last.",
            ("Only the first two axes (tokens and heads) trade places; the features stay last.",
             "transpose takes the old axes in their new order: which order swaps the first two and keeps "
             "the last one where it is?"),
            like(lambda x, n_heads: x.reshape(_shape(x, n_heads)).transpose(1, 2, 0),
                 lambda x, n_heads: x.reshape(_shape(x, n_heads)).transpose(2, 1, 0),
                 lambda x, n_heads: x.reshape(_shape(x, n_heads)).transpose(2, 0, 1)),
        ),
        Mistake(
            "heads_and_size_swapped", "n_heads and d_head are swapped",
            "The last axis of each head holds its d_head = d_model / n_heads features; the first axis "
            "counts the n_heads heads.",
            ("In the reshape, the middle axis counts the heads and the last axis the d_head features.",
             "d_head is d_model divided by the number of heads; it goes last."),
            like(lambda x, n_heads: x.reshape(x.shape[0], -1, n_heads).transpose(1, 0, 2),
                 lambda x, n_heads: x.reshape(x.shape[0], x.shape[1] // n_heads, n_heads)
                 .transpose(1, 0, 2).reshape(x.shape[1] // n_heads, x.shape[0], n_heads)),
        ),
    ),
)


def check_split_heads(fn):
    """Check the learner's ``my_split_heads(x, n_heads)``: ``(L, d_model)`` → ``(n_heads, L, d_head)``.

    Notebook 06_multi_head. Compared with :func:`lessons_lib.core.multihead.split_heads`. Never raises.
    """
    return SPLIT_HEADS.check(fn)


# --------------------------------------------------------------------------- merge
def _random_merge(rng, n_heads, n_tokens, d_head, kind="random"):
    return Case(f"{kind} heads {n_heads}×{n_tokens}×{d_head} ({n_heads} heads, {n_tokens} tokens, "
                f"d_head = {d_head})", {"heads": rng.normal(size=(n_heads, n_tokens, d_head))})


def _merge_cases() -> list[Case]:
    numbered = np.arange(2 * 3 * 5, dtype=float).reshape(2, 3, 5)
    return [Case("heads = 0, 1, 2, … as 2 heads × 3 tokens × 5 features", {"heads": numbered}),
            *rng_cases([(3, 5, 2), (5, 2, 3), (2, 7, 5)], 17, _random_merge)]


def _merge_hidden(rng) -> list[Case]:
    """Three unseen cases, n_heads, L and d_head different in each."""
    return [_random_merge(rng, *distinct_sizes(rng, 3), kind="unseen") for _ in range(3)]


MERGE_HEADS = Exercise(
    name="my_merge_heads",
    params=("heads",),
    task="concatenates the heads back into one (L, d_model) matrix",
    reference=multihead.merge_heads,
    formula=lambda heads: heads.transpose(1, 0, 2).reshape(heads.shape[1], -1),
    cases=_merge_cases,
    library_answers=(multihead.merge_heads,),
    hidden=_merge_hidden,
    start_hint="Undo the split in reverse order: a transpose puts the tokens first, (L, n_heads, d_head), "
               "then a reshape lays each token's heads side by side, (L, n_heads · d_head).",
    mistakes=(
        Mistake(
            "reshape_only", "the heads were reshaped to (L, d_model) without transposing back",
            "heads.reshape(L, d_model) reads the numbers in memory order, head after head: the first "
            "rows get head 0's numbers of several tokens. Concat(head_1, …, head_h) needs row i to be "
            "token i's output of head 0, then of head 1, and so on.",
            ("Undo the split in reverse order: bring the tokens to the front first, then reshape.",
             "A transpose that swaps the first two axes, then a reshape to (L, n_heads · d_head)."),
            like(lambda heads: heads.reshape(heads.shape[1], -1)),
        ),
        Mistake(
            "interleaved", "the heads' columns are interleaved instead of side by side",
            "heads.transpose(1, 2, 0) puts the head axis last, so the reshape deals out the columns: "
            "feature 0 of every head, then feature 1 of every head … Concatenation keeps each head's "
            "d_head columns together.",
            ("Keep each head's d_head columns together: before the reshape, the head axis must sit just "
             "before the feature axis.",
             "The transpose should swap heads and tokens only, and keep the features last."),
            like(lambda heads: heads.transpose(1, 2, 0).reshape(heads.shape[1], -1)),
        ),
        Mistake(
            "stacked_tokens", "the heads were stacked under each other, (n_heads·L, d_head)",
            "np.concatenate(heads, axis=0) (or reshape(-1, d_head)) puts head 1's rows under head 0's: "
            "more rows than tokens. Each token needs one row holding all heads, so the concatenation "
            "runs along the feature axis.",
            ("Concatenate along the feature axis, so that each token keeps one row with all its heads.",
             "np.concatenate joins along the axis you give it: the rows must stay the tokens."),
            like(lambda heads: heads.reshape(-1, heads.shape[2])),
        ),
        Mistake(
            "summed", "the heads were added (or averaged) instead of concatenated",
            "Summing gives (L, d_head): the heads' outputs are mixed into one small vector. "
            "MultiHead concatenates them, (L, n_heads·d_head), and lets W_O mix them afterwards.",
            ("Place the heads side by side (concatenate them) instead of adding them.",
             "np.concatenate joins arrays along an axis: here each token's heads go next to each other."),
            like(lambda heads: heads.sum(axis=0), lambda heads: heads.mean(axis=0)),
        ),
    ),
)


def check_merge_heads(fn):
    """Check the learner's ``my_merge_heads(heads)``: ``(n_heads, L, d_head)`` → ``(L, n_heads·d_head)``.

    Notebook 06_multi_head. Compared with :func:`lessons_lib.core.multihead.merge_heads`. Never raises.
    """
    return MERGE_HEADS.check(fn)


# --------------------------------------------------------------------------- a head built by hand
def head_weights(w_q, w_k) -> np.ndarray:
    """Weights of one head on one-hot positions X = I: softmax(X·W_Q (X·W_K)ᵀ / √d_head)."""
    w_q, w_k = np.asarray(w_q, dtype=float), np.asarray(w_k, dtype=float)
    if w_q.ndim != 2 or w_k.shape != w_q.shape:
        raise ValueError(f"W_Q and W_K must be two matrices of the same shape (seq_len, d_head); "
                         f"got {w_q.shape} and {w_k.shape}.")
    return softmax(w_q @ w_k.T / np.sqrt(w_q.shape[1]))


def next_token_targets(weights) -> np.ndarray:
    """For each query but the last: the key holding more than half of its weight, or −1 when none does."""
    w = np.asarray(weights)[:-1]
    return np.where(w.max(axis=1) > 0.5, w.argmax(axis=1), -1).astype(float)


class _Targets:
    """A ``seq_len -> (W_Q, W_K)`` function seen through where its head looks (what the engine compares).

    Keeps the learner's source (``__wrapped__``, for "not attempted yet") and code object
    (``__code__``, for the line an error happened on).
    """

    def __init__(self, fn):
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "my_next_token_head")
        if hasattr(fn, "__code__"):
            self.__code__ = fn.__code__

    def __call__(self, seq_len):
        result = self.__wrapped__(seq_len)
        if result is Ellipsis:  # `return ...`, a placeholder: the engine says "not attempted yet"
            return result
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(f"my_next_token_head must return two matrices, w_q, w_k; "
                            f"got {type(result).__name__}.")
        w_q, w_k = result
        dtype = np.result_type(np.asarray(w_q), np.asarray(w_k))
        if dtype.kind not in "fiu":  # let the engine name complex numbers or Python objects as such
            return np.zeros(max(seq_len - 1, 0), dtype=dtype)
        if np.ndim(w_q) != 2 or np.shape(w_q)[0] != seq_len:
            raise ValueError(f"W_Q must have one row per position ({seq_len} rows), because X = I is "
                             f"({seq_len}, {seq_len}); it has shape {np.shape(w_q)}.")
        return next_token_targets(head_weights(w_q, w_k))


def _head_case(n: int, kind: str = "") -> Case:
    return Case(f"{kind}{n} tokens, X = I (one-hot positions)", {"seq_len": n})


def _shift(n, by, gain=20.0):
    """gain · the matrix that moves one-hot position i to position i + by (row i has its 1 at i + by)."""
    return gain * np.eye(n, k=by)


def _head(w_q_of, w_k_of):
    return _Targets(lambda seq_len: (w_q_of(seq_len), w_k_of(seq_len)))


NEXT_TOKEN_HEAD = Exercise(
    name="my_next_token_head",
    params=("seq_len",),
    task="builds a head in which every token looks at the next one",
    reference=lambda seq_len: np.arange(1.0, seq_len),
    cases=lambda: [_head_case(n) for n in (5, 8, 3)],
    hidden=lambda rng: [_head_case(n, "unseen: ") for n in distinct_sizes(rng, 3, tuple(range(3, 13)))],
    adapt=lambda fn: fn if isinstance(fn, _Targets) else _Targets(fn),
    start_hint="With X = I, row i of W_Q is token i's query and row j of W_K is token j's key. Let every "
               "key be its token's one-hot position, and make query i a large multiple of the one-hot "
               "vector of position i + 1: then q_i·k_j is large only for j = i + 1.",
    mistakes=(
        Mistake(
            "previous_token", "the head looks at the previous token instead of the next",
            "The shift goes the wrong way: query i matches key i − 1. (Shifting the keys instead of the "
            "queries also turns the direction round: k_j = e_(j+1) matches q_i = e_i when j = i − 1.)",
            ("Turn the shift round: query i must match key i + 1, not key i − 1.",
             "np.eye's k argument moves the ones off the diagonal: k=1 puts row i's one in column i + 1."),
            like(_head(lambda n: _shift(n, -1), np.eye), _head(np.eye, lambda n: _shift(n, 1))),
        ),
        Mistake(
            "itself", "each token looks at itself",
            "W_Q and W_K both the identity (times a number) make q_i·k_j large for j = i: a head that "
            "attends to its own position.",
            ("Shift the queries by one position, so that query i matches key i + 1.",
             "np.eye has an argument that moves the ones of the identity to another diagonal."),
            like(_head(lambda n: _shift(n, 0), np.eye)),
        ),
        Mistake(
            "too_soft", "no token puts more than half of its weight on one key",
            "Your head may point the right way, but its scores are too close together, so softmax "
            "spreads the weight out. Remember that the scores are divided by √d_head.",
            "Multiply W_Q by a larger number (10 or 20): the gap between the best score and the others "
            "grows, and softmax concentrates the weight.",
            lambda o: o.error is None and isinstance(o.result, np.ndarray) and o.result.size > 0
            and bool((o.result == -1).all()),
        ),
    ),
)


def check_next_token_head(fn):
    """Check the learner's ``my_next_token_head(seq_len) -> (w_q, w_k)``; notebook 06_multi_head.

    Tokens are one-hot positions (X = I, ``(seq_len, seq_len)``); the head's weights are
    softmax(X·W_Q (X·W_K)ᵀ / √d_head). It passes when every token but the last puts more than
    half of its weight on the next token. Never raises.
    """
    return NEXT_TOKEN_HEAD.check(fn)
