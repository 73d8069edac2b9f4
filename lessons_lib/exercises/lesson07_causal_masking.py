"""Exercise of notebook 07_causal_masking: ``my_causal_weights(scores)``.

The learner builds the causal mask for a square ``(L, L)`` matrix of (already scaled)
scores, writes −∞ where a query may not look (keys after it), and takes the softmax of
each row. The check names the mistakes this lesson is about: the mask applied after the
softmax (and the rows renormalised: right on paper, NaN where the past underflows), the wrong
diagonal, True/False inverted (the convention trap), the future
allowed instead of the past, 0 instead of −∞, no mask at all.

Content only (cases and candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import attention
from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

__all__ = ["check_causal_weights"]


def _random_case(rng, n, spread, kind="random"):
    return Case(f"{kind} scores {n}×{n} (spread {spread:g})",
                {"scores": rng.normal(scale=spread, size=(n, n))})


def _cases() -> list[Case]:
    hand = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [3.0, 2.0, 1.0]])
    return [Case("hand-made scores 3×3", {"scores": hand}),
            *rng_cases([(5, 1.0), (7, 3.0), (6, 0.5)], 18, _random_case),
            # beyond exp's range (about ±709): only a shift by each row's own (allowed) maximum survives
            Case("a row spanning more than exp's range, rows far apart",
                 {"scores": np.array([[-900.0, 5.0, 0.0, 2.0, 1.0], [5.0, -800.0, 1.0, 0.0, 2.0],
                                      [900.0, 899.0, -900.0, 3.0, 0.0],
                                      [-1000.0, -990.0, -995.0, -1002.0, 0.0],
                                      [1.0, 2.0, -1.0, 0.5, 3.0]])})]


def _hidden(rng) -> list[Case]:
    """Unseen cases: three random square score matrices, and one whose rows go beyond exp's range: a
    row whose past lies far below its future (about −1000 against 0: the softmax of the whole row
    gives that past exactly 0), a row whose past spans more than 710, and a row far from the others."""
    n = distinct_sizes(rng, 1, (5, 6, 7, 8, 9))[0]  # room for three different rows between the first and last
    sizes = distinct_sizes(rng, 3, tuple(size for size in (3, 5, 6, 7, 8, 9) if size != n))
    cases = [_random_case(rng, size, float(rng.choice([0.5, 1.0, 2.0, 3.0])), "unseen") for size in sizes]
    scores = rng.normal(size=(n, n))
    low, wide, far = rng.choice(np.arange(1, n - 1), size=3, replace=False)
    scores[low, : low + 1] -= rng.uniform(900, 1100)  # the past far below the future
    scores[wide, 0] -= rng.uniform(800, 1000)  # one past key far below the others
    scores[far] += rng.uniform(800, 1000)  # a whole row far above the rest
    return [*cases, Case(f"unseen scores {n}×{n} with rows beyond exp's range", {"scores": scores})]


def _reference(scores):
    return attention.attention_weights(scores, scale=1.0, causal=True)


def _softmax_plain(x, axis=-1):
    """exp(x − max) / Σ: what a learner writes; a row of only −∞ gives NaN (0/0)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _renormalised(softmax):
    """The softmax of the whole row, the future set to 0, each row divided by what is left: right on
    paper, but when the past lies far below the future its weights underflow to 0 first (0/0)."""
    def candidate(scores):
        kept = softmax(scores) * _tril(0)(len(scores))
        return kept / kept.sum(axis=-1, keepdims=True)
    return candidate


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
    library_answers=(attention.attention_weights, attention.mask_and_softmax_in_place),
    hidden=_hidden,
    start_hint="Three steps: a boolean mask that is True where key j ≤ query i (np.tril of a matrix of "
               "True), the scores with −∞ written where the mask is False (np.where), then the softmax of "
               "each row (exp(−∞) = 0 does the rest).",
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
            "renormalised_after_softmax", "the mask comes after the softmax, and the rows are renormalised",
            "On paper this is right: setting the future weights to 0 and dividing each row by what is left "
            "gives exactly the weights of the masked softmax. In floating point it is not: the softmax of "
            "the whole row is shifted by the row's largest score, which may be a future one. When the "
            "past lies far below the future (here about −1000 against 0), exp of every past score "
            "underflows to exactly 0 before the mask is applied, and the renormalisation divides 0 by 0: "
            "NaN. Masking the scores first makes the maximum a past one, so nothing underflows.",
            ("Put the mask on the scores, before the softmax: −∞ where a key is in the future, so that "
             "each row's maximum is taken over the keys the query may see.",
             "Look at the row of the case below where the first keys are near −1000 and a later one near "
             "0: print the softmax of that whole row before you mask it."),
            like(_renormalised(attention.softmax), _renormalised(_softmax_plain)),
        ),
        Mistake(
            "inverted", "True and False are inverted: the past is masked and the future allowed",
            "Your mask blocks exactly the keys a query should see. This is the convention trap: "
            "nn.MultiheadAttention's attn_mask means True = blocked, torch SDPA's (and this course's) "
            "True = may attend. A row that may see nothing gets 0 (or NaN).",
            ("The course's masks say True = may attend: keep the scores where the mask is True, and write "
             "−∞ where it is False.",
             "np.where(condition, a, b) takes a where the condition is True and b elsewhere: check which "
             "of the two your call puts first."),
            like(*_both_softmaxes(_triu(1))),
        ),
        Mistake(
            "no_diagonal", "the diagonal is masked: no token may look at itself",
            "np.tril(..., k=-1) keeps only the keys strictly before the query, so the first token sees "
            "nothing (a row of −∞). Every token may see itself and the tokens before it.",
            ("Every token may see itself: keep the diagonal in the mask.",
             "np.tril's k argument moves the edge of the triangle: k=0, the default, keeps the diagonal."),
            like(*_both_softmaxes(_tril(-1))),
        ),
        Mistake(
            "upper_triangle", "the future is allowed instead of the past (upper triangle)",
            "Query i may see keys j ≤ i: those on and below the diagonal, np.tril. np.triu keeps the keys "
            "on and after the diagonal: every token looks ahead.",
            ("Query i may see keys 0 … i: on and below the diagonal. Use np.tril instead of np.triu.",
             "np.tril keeps the lower triangle (the past), np.triu the upper one (the future)."),
            like(*_both_softmaxes(_triu(0))),
        ),
        Mistake(
            "zero_not_minus_infinity", "masked scores are set to 0 instead of −∞",
            "exp(0) = 1, so a masked key still gets a share of the weight, the same as a key with score 0. "
            "Only −∞ gives exp(−∞) = 0: exactly no weight.",
            ("A masked key must get exactly no weight: fill with −∞ (-np.inf), whose exp is 0.",
             "exp(0) = 1, exp(−∞) = 0: which fill value gives a masked key no share at all?"),
            like(_with(_tril(0), fill=0.0), _with(_tril(0), _softmax_plain, fill=0.0)),
        ),
        Mistake(
            "one_diagonal_too_many", "one future key too many is allowed (np.tril(..., k=1))",
            "With k=1 each query also sees the very next token: one step into the future.",
            ("No query may see the next token: the edge of the triangle is the diagonal itself.",
             "np.tril's k argument: k=0 (the default) stops at the diagonal, k=1 goes one step beyond."),
            like(*_both_softmaxes(_tril(1))),
        ),
        Mistake(
            "columns", "the softmax runs down the columns (axis=0)",
            "Each query's weights are its row: the softmax must normalise along the last axis, over the "
            "keys.",
            ("Normalise each row, over the keys: the last axis, in the max and in the sum.",
             "axis=0 runs down the columns; axis=-1 (or 1) runs along each row."),
            like(lambda scores: _softmax_plain(np.where(_tril(0)(len(scores)), scores, -np.inf), axis=0)),
        ),
        Mistake(
            "no_mask", "no mask is applied",
            "These are the weights of plain attention: every token sees every other, the future included.",
            ("Before the softmax, write −∞ into every score of a key that comes after its query.",
             "np.tril of a matrix of True marks the keys a query may see; np.where writes −∞ elsewhere."),
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
