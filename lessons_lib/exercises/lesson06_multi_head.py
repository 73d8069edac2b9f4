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
from .engine import Case, Exercise, Mistake, distinct_sizes, every_case, like, rng_cases

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


#: the hand-checked case the hints of the split offer: 2 tokens, 6 columns, 2 heads of 3
_TRY_SPLIT = ("Try x = np.array([[0.0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]) with n_heads = 2: head 1, "
              "result[1], must be [[3, 4, 5], [9, 10, 11]].")

SPLIT_HEADS = Exercise(
    name="my_split_heads",
    params=("x", "n_heads"),
    task="splits the columns of X into heads, heads first",
    reference=multihead.split_heads,
    formula=lambda x, n_heads: x.reshape(x.shape[0], n_heads, -1).transpose(1, 0, 2),
    cases=_split_cases,
    library_answers=(multihead.split_heads,),
    hidden=_split_hidden,
    start_hint="Start from the picture of section 2: head i owns the d_head columns i·d_head … "
               "(i+1)·d_head − 1 of every token. Write down the shape you start from, (L, d_model), and the "
               "shape to reach, (n_heads, L, d_head), then check your steps on numbered cells.",
    mistakes=(
        Mistake(
            "reshape_only", "the numbers were laid out as (n_heads, L, d_head) in one step, in reading order",
            "Your array has the right shape but takes the numbers of X row by row: its first 'head' is the "
            "first L·d_head numbers of X, whole rows of the first tokens, not the first d_head columns of "
            "every token. A new shape alone never moves a number to another token.",
            ("A head owns a block of columns of every token, not a block of rows.",
             "Keep the tokens as the first axis while you group each token's columns by head, "
             "(L, n_heads, d_head); only then bring the heads to the front.",
             _TRY_SPLIT),
            like(lambda x, n_heads: x.reshape(n_heads, x.shape[0], x.shape[1] // n_heads)),
        ),
        Mistake(
            "view_only", "the heads are grouped but not moved to the front",
            "Your array is (L, n_heads, d_head), the right middle step, but the shape asked for is "
            "(n_heads, L, d_head): each head must be an ordinary (L, d_head) matrix, so that the "
            "attention of all heads runs as one batched product.",
            ("The first axis must count the heads: result[i] is head i, an (L, d_head) matrix.",
             "From (L, n_heads, d_head) to (n_heads, L, d_head): the first two axes trade places, the "
             "last one stays.",
             _TRY_SPLIT),
            like(lambda x, n_heads: x.reshape(_shape(x, n_heads))),
        ),
        Mistake(
            "interleaved", "each head takes every n_heads-th column instead of a block of d_head columns",
            "Your heads get their columns dealt out like cards: head 0 gets columns 0, n_heads, "
            "2·n_heads, … The convention (and nn.MultiheadAttention's) is blocks: head i owns columns "
            "i·d_head … (i+1)·d_head − 1.",
            ("A head owns d_head neighbouring columns, a block, not every n_heads-th column.",
             "When you group each token's columns, the heads come before the features: (L, n_heads, "
             "d_head), in that order.",
             _TRY_SPLIT),
            like(lambda x, n_heads: x.reshape(x.shape[0], -1, n_heads).transpose(2, 0, 1)),
        ),
        Mistake(
            "wrong_transpose", "the axes end up in the wrong order",
            "From the grouped (L, n_heads, d_head), only the first two axes trade places: tokens and "
            "heads. The last axis, the d_head features, stays last.",
            ("Only the first two axes (tokens and heads) trade places; the features stay last.",
             "Write the axes' order before and after: (L, n_heads, d_head) becomes (n_heads, L, d_head).",
             _TRY_SPLIT),
            like(lambda x, n_heads: x.reshape(_shape(x, n_heads)).transpose(1, 2, 0),
                 lambda x, n_heads: x.reshape(_shape(x, n_heads)).transpose(2, 1, 0),
                 lambda x, n_heads: x.reshape(_shape(x, n_heads)).transpose(2, 0, 1)),
        ),
        Mistake(
            "heads_and_size_swapped", "n_heads and d_head are swapped",
            "The last axis of each head holds its d_head = d_model / n_heads features; the first axis "
            "counts the n_heads heads.",
            ("In the grouped (L, n_heads, d_head) array, the middle axis counts the heads and the last "
             "the d_head features.",
             "d_head is d_model / n_heads; it goes last.",
             _TRY_SPLIT),
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


#: the hand-checked case the hints of the merge offer: 2 heads, 2 tokens, d_head = 2
_TRY_MERGE = ("Try heads = np.array([[[0.0, 1], [2, 3]], [[4, 5], [6, 7]]]) (2 heads, 2 tokens): the answer "
              "is [[0, 1, 4, 5], [2, 3, 6, 7]].")

MERGE_HEADS = Exercise(
    name="my_merge_heads",
    params=("heads",),
    task="concatenates the heads back into one (L, d_model) matrix",
    reference=multihead.merge_heads,
    formula=lambda heads: heads.transpose(1, 0, 2).reshape(heads.shape[1], -1),
    cases=_merge_cases,
    library_answers=(multihead.merge_heads,),
    hidden=_merge_hidden,
    start_hint="Start from the shapes: heads is (n_heads, L, d_head) and the answer is (L, n_heads·d_head), "
               "each token's heads side by side: head 0's d_head numbers, then head 1's, and so on. Check "
               "your steps on numbered cells, as section 2 does.",
    mistakes=(
        Mistake(
            "reshape_only", "the heads were laid out as (L, d_model) in one step, in reading order",
            "Your result takes the numbers in memory order, head after head: the first rows get head 0's "
            "numbers of several tokens. Concat(head_1, …, head_h) needs row i to be token i's output of "
            "head 0, then of head 1, and so on.",
            ("Row i of the answer belongs to token i: it holds token i's numbers from every head.",
             "Bring the tokens to the front first, (L, n_heads, d_head); only then lay each token's heads "
             "side by side.",
             _TRY_MERGE),
            like(lambda heads: heads.reshape(heads.shape[1], -1)),
        ),
        Mistake(
            "interleaved", "the heads' columns are interleaved instead of side by side",
            "Your result deals out the columns: feature 0 of every head, then feature 1 of every head … "
            "Concatenation keeps each head's d_head columns together.",
            ("Keep each head's d_head columns together, as one block.",
             "Before the heads are laid side by side, the head axis must sit just before the feature "
             "axis: (L, n_heads, d_head).",
             _TRY_MERGE),
            like(lambda heads: heads.transpose(1, 2, 0).reshape(heads.shape[1], -1)),
        ),
        Mistake(
            "stacked_tokens", "the heads were stacked under each other, (n_heads·L, d_head)",
            "np.concatenate(heads, axis=0) puts head 1's rows under head 0's: more rows than tokens. Each "
            "token needs one row holding all its heads, so the heads go side by side, along the features.",
            ("Each token keeps one row, holding all its heads.",
             "The answer has L rows and n_heads·d_head columns; yours has n_heads·L rows.",
             _TRY_MERGE),
            like(lambda heads: heads.reshape(-1, heads.shape[2])),
        ),
        Mistake(
            "summed", "the heads were added (or averaged) instead of concatenated",
            "Summing gives (L, d_head): the heads' outputs are mixed into one small vector. "
            "MultiHead concatenates them, (L, n_heads·d_head), and lets W_O mix them afterwards.",
            ("Place the heads side by side (concatenate them) instead of adding them.",
             "The answer is n_heads times as wide as one head: (L, n_heads·d_head).",
             _TRY_MERGE),
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


def leaning_targets(weights) -> np.ndarray:
    """For each query but the last: the key holding its largest weight, however small."""
    return np.asarray(weights)[:-1].argmax(axis=1).astype(float)


class _Targets:
    """A ``seq_len -> (W_Q, W_K)`` function seen through where its head looks (what the engine compares):
    for each query but the last, the key that holds more than half of its weight (−1 when none does), and
    the key that holds its largest weight, so that a head too soft to pass still shows its direction.

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
            return (np.zeros(max(seq_len - 1, 0), dtype=dtype),) * 2
        if np.ndim(w_q) != 2 or np.shape(w_q)[0] != seq_len:
            raise ValueError(f"W_Q must have one row per position ({seq_len} rows), because X = I is "
                             f"({seq_len}, {seq_len}); it has shape {np.shape(w_q)}.")
        weights = head_weights(w_q, w_k)
        return next_token_targets(weights), leaning_targets(weights)


def _head_case(n: int, kind: str = "") -> Case:
    return Case(f"{kind}{n} tokens, X = I (one-hot positions)", {"seq_len": n})


def _leans(offset: int):
    """A test: on every case the head's largest weights sit ``offset`` keys after each query (``-1``: the
    previous token, for every query that has one; ``0``: itself; ``1``: the next), however soft it is."""
    def test(o) -> bool:
        if o.error is not None or not isinstance(o.result, tuple) or len(o.result) != 2:
            return False
        lean = np.asarray(o.result[1])
        queries = np.arange(lean.size)
        mine = queries >= 1 if offset < 0 else queries >= 0
        return lean.size > 0 and bool(np.array_equal(lean[mine], (queries + offset)[mine]))
    return test


def _leans_right_but_soft(o) -> bool:
    return _leans(1)(o) and bool((np.asarray(o.result[0]) == -1).any())


#: what the hints of the hand-built head ask the learner to look at
_TRY_HEAD = ("Try seq_len = 3: print ll.attention_scores(w_q, w_k), your head's scores before the division "
             "by √d_head. Row 0 must be largest in column 1 and row 1 in column 2, each by a wide margin.")

NEXT_TOKEN_HEAD = Exercise(
    name="my_next_token_head",
    params=("seq_len",),
    task="builds a head in which every token looks at the next one",
    reference=lambda seq_len: (np.arange(1.0, seq_len), np.arange(1.0, seq_len)),
    outputs=("key with more than half", "key with the largest weight"),
    cases=lambda: [_head_case(n) for n in (5, 8, 3)],
    hidden=lambda rng: [_head_case(n, "unseen: ") for n in distinct_sizes(rng, 3, tuple(range(3, 13)))],
    adapt=lambda fn: fn if isinstance(fn, _Targets) else _Targets(fn),
    start_hint="Start from what X = I means (section 4's hand-made heads): row i of W_Q is token i's query "
               "and row j of W_K is token j's key. Decide first which key query i must match, then write "
               "both matrices for seq_len = 3 on paper.",
    mistakes=(
        Mistake(
            "previous_token", "the head looks at the previous token instead of the next",
            "The head points one position the wrong way: query i matches key i − 1 (this also happens when "
            "the keys, rather than the queries, are moved by one position).",
            ("Query i must match key i + 1, the token after it, not the one before.",
             "With X = I, q_i·k_j is the dot product of row i of W_Q with row j of W_K: it must be large "
             "only for j = i + 1.",
             _TRY_HEAD),
            every_case(_leans(-1)),
        ),
        Mistake(
            "itself", "each token looks at itself",
            "Your queries and keys match at the same position: q_i·k_j is largest for j = i, a head that "
            "attends to its own token.",
            ("Query i must match key i + 1, not key i.",
             "Row i of W_Q must point the way row i + 1 of W_K points, not the way row i does.",
             _TRY_HEAD + " Yours is largest on the diagonal."),
            every_case(_leans(0)),
        ),
        Mistake(
            "too_soft", "the head leans the right way, but no key gets more than half of the weight",
            "Every token's largest weight is on the next token, but the scores are too close together, so "
            "softmax spreads the weight out. Remember that the scores are divided by √d_head.",
            ("How peaked softmax is depends on how far apart the scores are (lesson 01's loud pear).",
             "Each query's score for the next key must beat its other scores by a wide margin after the "
             "division by √d_head: a gap of 3 already gives that key e³ ≈ 20 times the weight of each "
             "other one.",
             "A larger number in W_Q makes every gap larger. Try seq_len = 3: print "
             "ll.attention_scores(w_q, w_k), your head's scores before the division by √d_head, and watch "
             "the margin in row 0 grow as the numbers in W_Q grow."),
            every_case(lambda o: o.values_ok or _leans_right_but_soft(o)),
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
