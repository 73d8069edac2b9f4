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


#: the hand-checked case the hints offer: equal scores give the running average of section 1
_TRY = ("Try scores = np.zeros((3, 3)): the answer is the running average of section 1, [[1, 0, 0], "
        "[0.5, 0.5, 0], [1/3, 1/3, 1/3]].")

CAUSAL_WEIGHTS = Exercise(
    name="my_causal_weights",
    params=("scores",),
    task="masks the future with −∞ and takes the softmax of each row",
    reference=_reference,
    formula=_reference,
    cases=_cases,
    library_answers=(attention.attention_weights, attention.mask_and_softmax_in_place),
    hidden=_hidden,
    start_hint="Start from the ✓/✗ table of section 3: which keys may query i see? Mark them in a boolean "
               "array, True = may attend; then follow section 4 number by number for one row, and do the "
               "same for every row.",
    mistakes=(
        Mistake(
            "mask_after_softmax", "the mask is applied after the softmax",
            "Zeroing the weights after the softmax leaves the rows adding up to less than 1, and the future "
            "keys have already taken their share of the row: the past weights still depend on the future "
            "scores, so the future leaks. The mask goes on the scores, before the softmax.",
            ("The mask goes on the scores, before the softmax: a masked key must never take a share.",
             "After masking, every row still adds up to 1, and the keys after the query get exactly 0.",
             "Try scores = np.array([[0.0, 10.0], [0.0, 0.0]]): the answer is [[1, 0], [0.5, 0.5]]."),
            like(lambda scores: attention.softmax(scores) * _tril(0)(len(scores)),
                 lambda scores: _softmax_plain(scores) * _tril(0)(len(scores))),
        ),
        Mistake(
            "renormalised_after_softmax", "the mask comes after the softmax, and the rows are renormalised",
            "On paper this is right: setting the future weights to 0 and making each row add up to 1 again "
            "gives exactly the weights of the masked softmax. In floating point it is not: the softmax of "
            "the whole row is made safe with the help of the row's future scores too. When the past lies "
            "far below the future (here about −1000 against 0), every past weight underflows to exactly 0 "
            "before the mask is applied, and renormalising gives 0/0: NaN. Masking the scores first keeps "
            "the future out of every step.",
            ("Put the mask on the scores, before the softmax, so that the future plays no part in any step.",
             "Where the past of a row lies far below its future, the softmax of the whole row rounds every "
             "past weight to 0.",
             "Try scores = np.array([[-1000.0, 0.0], [0.0, 0.0]]): the answer is [[1, 0], [0.5, 0.5]], "
             "with no NaN."),
            like(_renormalised(attention.softmax), _renormalised(_softmax_plain)),
        ),
        Mistake(
            "inverted", "True and False are inverted: the past is masked and the future allowed",
            "Your mask blocks exactly the keys a query should see. This is the convention trap: "
            "nn.MultiheadAttention's attn_mask means True = blocked, torch SDPA's (and this course's) "
            "True = may attend. A row that may see nothing gets 0 (or NaN).",
            ("The course's masks say True = may attend: a True marks a key the query keeps.",
             "Query 0 may see only key 0, and the last query every key: check those two rows of your mask.",
             _TRY),
            like(*_both_softmaxes(_triu(1))),
        ),
        Mistake(
            "no_diagonal", "the diagonal is masked: no token may look at itself",
            "Your mask keeps only the keys strictly before each query, so the first token sees nothing (a "
            "row of −∞). Every token may see itself and the tokens before it.",
            ("Every token may see itself: key i is allowed for query i.",
             "Query 0 may see exactly one key, key 0.",
             _TRY),
            like(*_both_softmaxes(_tril(-1))),
        ),
        Mistake(
            "upper_triangle", "the future is allowed instead of the past",
            "Query i may see keys j ≤ i. Your mask allows the keys on and after the diagonal instead: "
            "every token looks ahead.",
            ("Query i may see keys 0 … i: itself and the tokens before it.",
             "Row 0 of the mask has a single True, at key 0; the last row is True everywhere.",
             _TRY),
            like(*_both_softmaxes(_triu(0))),
        ),
        Mistake(
            "zero_not_minus_infinity", "masked scores are set to 0 instead of −∞",
            "A masked key with a score of 0 still gets a share of the weight, the same as any key whose "
            "score is 0: a masked key must get none at all.",
            ("A masked key must get exactly no weight, whatever the other scores are.",
             "Only a score of −∞ gives a weight of exactly 0 (section 4).",
             "Try scores = np.zeros((2, 2)): row 0 must be [1, 0]; a fill of 0 gives [0.5, 0.5]."),
            like(_with(_tril(0), fill=0.0), _with(_tril(0), _softmax_plain, fill=0.0)),
        ),
        Mistake(
            "one_diagonal_too_many", "one future key too many is allowed: each token also sees the next",
            "Each query also sees the very next token: one step into the future.",
            ("No query may see the token after it: the edge of what it sees is itself.",
             "Row 0 of the mask has exactly one True.",
             _TRY),
            like(*_both_softmaxes(_tril(1))),
        ),
        Mistake(
            "columns", "the softmax runs down the columns",
            "Each query's weights are its row: the softmax must turn each row into a distribution over the "
            "keys, not each column.",
            ("Each row is one query's distribution over the keys.",
             "Every row of your answer must add up to 1; in yours the columns do.",
             _TRY),
            like(lambda scores: _softmax_plain(np.where(_tril(0)(len(scores)), scores, -np.inf), axis=0)),
        ),
        Mistake(
            "no_mask", "no mask is applied",
            "These are the weights of plain attention: every token sees every other, the future included.",
            ("Before the softmax, every key after its query must get the score −∞.",
             "Above the diagonal, every weight of your answer must be exactly 0.",
             _TRY),
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
