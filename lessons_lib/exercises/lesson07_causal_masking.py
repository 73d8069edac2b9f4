"""Exercise of notebook 07_causal_masking: ``my_causal_weights(scores)``.

The learner builds the causal mask for a square ``(L, L)`` matrix of (already scaled)
scores, writes −∞ where a query may not look (keys after it), and takes the softmax of
each row. The check names the mistakes this lesson is about: the mask applied after the
softmax, the wrong diagonal, True/False inverted (the convention trap), the future
allowed instead of the past, 0 instead of −∞, no mask at all.

Content only (cases and candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import attention
from .engine import Case, Exercise, Mistake, like, rng_cases

__all__ = ["check_causal_weights"]


def _cases() -> list[Case]:
    def random_case(rng, n, spread):
        return Case(f"random scores {n}×{n} (spread {spread})",
                    {"scores": rng.normal(scale=spread, size=(n, n))})

    hand = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [3.0, 2.0, 1.0]])
    return [Case("hand-made scores 3×3", {"scores": hand}),
            *rng_cases([(5, 1.0), (7, 3.0), (6, 0.5)], 18, random_case),
            # beyond exp's range (about ±709): only a shift by each row's own (allowed) maximum survives
            Case("a row spanning more than exp's range, rows far apart",
                 {"scores": np.array([[-900.0, 5.0, 0.0, 2.0, 1.0], [5.0, -800.0, 1.0, 0.0, 2.0],
                                      [900.0, 899.0, -900.0, 3.0, 0.0],
                                      [-1000.0, -990.0, -995.0, -1002.0, 0.0],
                                      [1.0, 2.0, -1.0, 0.5, 3.0]])})]


def _reference(scores):
    return attention.attention_weights(scores, scale=1.0, causal=True)


def _softmax_plain(x, axis=-1):
    """exp(x − max) / Σ: what a learner writes; a row of only −∞ gives NaN (0/0)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _with(allowed_of, softmax=attention.softmax, fill=-np.inf):
    """A candidate: keep the scores where ``allowed_of(n)`` is True, ``fill`` elsewhere, then softmax."""
    def candidate(scores):
        return softmax(np.where(allowed_of(len(scores)), scores, fill))
    return candidate


def _both_softmaxes(allowed_of):
    """The same mask with the library's softmax (empty rows → 0) and a plain one (empty rows → NaN)."""
    return _with(allowed_of), _with(allowed_of, _softmax_plain)


def _tril(k):
    return lambda n: np.tril(np.ones((n, n), dtype=bool), k=k)


def _triu(k):
    return lambda n: np.triu(np.ones((n, n), dtype=bool), k=k)


CAUSAL_WEIGHTS = Exercise(
    name="my_causal_weights",
    params=("scores",),
    task="masks the future with −∞ and takes the softmax of each row",
    reference=_reference,
    formula=_reference,
    cases=_cases,
    start_hint="Three lines: mask = np.tril(np.ones(scores.shape, dtype=bool)) (True = may attend: key j ≤ "
               "query i); masked = np.where(mask, scores, -np.inf); then the softmax of each row of "
               "masked (exp(−∞) = 0 does the rest).",
    mistakes=(
        Mistake(
            "mask_after_softmax", "the mask is applied after the softmax",
            "Zeroing the weights after softmax leaves the rows summing to less than 1, and the future "
            "keys have already taken their share of each row's total: the past weights still depend on "
            "the future scores, so the future leaks. The mask goes on the scores, before the softmax.",
            "Write −∞ into the scores where the mask is False, then take the softmax.",
            like(lambda scores: attention.softmax(scores) * _tril(0)(len(scores)),
                 lambda scores: _softmax_plain(scores) * _tril(0)(len(scores))),
        ),
        Mistake(
            "inverted", "True and False are inverted: the past is masked and the future allowed",
            "Your mask blocks exactly the keys a query should see. This is the convention trap: "
            "nn.MultiheadAttention's attn_mask means True = blocked, torch SDPA's (and this course's) "
            "True = may attend. A row that may see nothing gets 0 (or NaN).",
            "With mask = np.tril(...) (True = may attend), keep the scores where mask is True: "
            "np.where(mask, scores, -np.inf), not np.where(mask, -np.inf, scores).",
            like(*_both_softmaxes(_triu(1))),
        ),
        Mistake(
            "no_diagonal", "the diagonal is masked: no token may look at itself",
            "np.tril(..., k=-1) keeps only the keys strictly before the query, so the first token sees "
            "nothing (a row of −∞). Every token may see itself and the tokens before it.",
            "Use np.tril(..., k=0) (the default).",
            like(*_both_softmaxes(_tril(-1))),
        ),
        Mistake(
            "upper_triangle", "the future is allowed instead of the past (upper triangle)",
            "Query i may see keys j ≤ i: those on and below the diagonal, np.tril. np.triu keeps the keys "
            "on and after the diagonal: every token looks ahead.",
            "Use np.tril instead of np.triu.",
            like(*_both_softmaxes(_triu(0))),
        ),
        Mistake(
            "zero_not_minus_infinity", "masked scores are set to 0 instead of −∞",
            "exp(0) = 1, so a masked key still gets a share of the weight, the same as a key with score 0. "
            "Only −∞ gives exp(−∞) = 0: exactly no weight.",
            "Fill with -np.inf: np.where(mask, scores, -np.inf).",
            like(_with(_tril(0), fill=0.0), _with(_tril(0), _softmax_plain, fill=0.0)),
        ),
        Mistake(
            "one_diagonal_too_many", "one future key too many is allowed (np.tril(..., k=1))",
            "With k=1 each query also sees the very next token: one step into the future.",
            "Use np.tril(..., k=0).",
            like(*_both_softmaxes(_tril(1))),
        ),
        Mistake(
            "columns", "the softmax runs down the columns (axis=0)",
            "Each query's weights are its row: the softmax must normalise along the last axis, over the "
            "keys.",
            "Use axis=-1 (or axis=1) in the max and the sum.",
            like(lambda scores: _softmax_plain(np.where(_tril(0)(len(scores)), scores, -np.inf), axis=0)),
        ),
        Mistake(
            "no_mask", "no mask is applied",
            "These are the weights of plain attention: every token sees every other, the future included.",
            "Build mask = np.tril(np.ones(scores.shape, dtype=bool)) and write −∞ where it is False "
            "before the softmax.",
            like(attention.softmax),
        ),
    ),
)


def check_causal_weights(fn):
    """Check the learner's ``my_causal_weights(scores)`` for square ``(L, L)`` scores; notebook 07.

    The answer is compared with ``lessons_lib.core.attention.attention_weights(scores, scale=1.0,
    causal=True)``. Returns a :class:`~lessons_lib.course.feedback.Feedback`; never raises.
    """
    return CAUSAL_WEIGHTS.check(fn)
