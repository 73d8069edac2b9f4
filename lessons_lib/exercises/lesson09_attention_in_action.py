"""Exercise of notebook 09_attention_in_action: the learner writes ``my_softmax_off(scores)``.

Softmax with an "off" slot: one more key whose score is always 0 (and whose
value is 0), so a row may give most of its weight to *nothing*::

    weights_j = exp(s_j) / (1 + Σ_i exp(s_i))          (the rows sum to less than 1)

It is ``attention.softmax`` of the scores with a column of zeros appended, that
column dropped afterwards. Stable form: with m = max(0, max_i s_i),
exp(s_j − m) / (exp(−m) + Σ_i exp(s_i − m)). Content only; the checking is
:mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core.attention import softmax, softmax_off
from .engine import Case, Exercise, Mistake, Outcome, distinct_sizes, either, like, rng_cases

__all__ = ["check_softmax_off"]


def _random_case(rng, rows, cols, kind="random"):
    return Case(f"{kind} {rows}×{cols} scores", {"scores": rng.normal(0, 2, (rows, cols))})


def _cases() -> list[Case]:
    return [
        Case("hand-made 2×3 scores", {"scores": np.array([[0.0, 1.0, 2.0], [-1.0, 0.5, 0.0]])}),
        Case("one key per query (3×1)", {"scores": np.array([[2.0], [0.0], [-3.0]])}),
        *rng_cases([(3, 5), (2, 7)], 9, _random_case),
        Case("every score far below 0 (nothing matches)",
             {"scores": np.array([[-9.0, -8.0, -12.0], [-7.0, -11.0, -9.5]])}, "negative"),
        Case("large scores near +800", {"scores": np.array([[800.0, 801.0, 799.0], [790.0, 800.0, 805.0]])},
             "large"),
        # exp over/underflows beyond about ±709 in float64: a row that spans more than that, and rows far
        # apart from each other, break every shift but the right one (per row, by max(0, row maximum)).
        Case("a row spanning more than exp's range (5 beside −800)",
             {"scores": np.array([[5.0, -800.0, 0.0], [1000.0, -1000.0, -1000.0]])}, "large"),
        Case("rows far apart (one near +800, one near −800)",
             {"scores": np.array([[800.0, 799.0, 801.0], [-800.0, -805.0, -790.0], [5.0, -800.0, 1.0]])},
             "large"),
        # The row maximum far above the first score: shifting by the first score (or by max(0, first))
        # leaves exp(900) or more, which overflows.
        Case("the largest score last, far above the first (−800, 5, 900)",
             {"scores": np.array([[-800.0, 5.0, 900.0], [2.0, 1.0, 760.0]])}, "large"),
    ]


def _hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: two random shapes, one key per query, every score far below 0,
    large scores near +N, a row spanning more than exp's range beside one near +N, and rows near +N and
    −N (N drawn from 700-900)."""
    (r1, c1), (r2, c2) = (distinct_sizes(rng, 2) for _ in range(2))
    rows, cols = distinct_sizes(rng, 2, (2, 3, 5))
    big = float(rng.uniform(700, 900))

    def near(center, shape):
        return center + rng.normal(0, 3, shape)

    spanning = near(-big, cols)  # one score near +N, the others near −N: a span of about 2N
    spanning[rng.integers(0, cols)] = big
    return [
        _random_case(rng, r1, c1, "unseen"), _random_case(rng, r2, c2, "unseen"),
        Case(f"unseen: one key per query ({rows}×1)", {"scores": rng.normal(0, 2, (rows, 1))}),
        Case(f"unseen: every score far below 0, {rows}×{cols}", {"scores": -rng.uniform(7, 12, (rows, cols))},
             "negative"),
        Case(f"unseen large scores near +{big:.0f}, {rows}×{cols}", {"scores": near(big, (rows, cols))},
             "large"),
        Case(f"unseen: a row spanning more than exp's range beside one near +{big:.0f}, 2×{cols}",
             {"scores": np.stack([spanning, near(big, cols)])}, "large"),
        Case(f"unseen rows near +{big:.0f} and −{big:.0f}, 2×{cols}",
             {"scores": np.stack([near(big, cols), near(-big, cols)])}, "large"),
    ]


def _plain_softmax(scores):
    return softmax(scores, axis=-1)


def _no_max(scores):
    e = np.exp(scores)
    return e / (1.0 + e.sum(axis=-1, keepdims=True))


def _shift_without_off(scores):
    m = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - m)
    return e / (1.0 + e.sum(axis=-1, keepdims=True))


def _shift_then_add_one(scores):
    """The hint's warning: shift by m = max(0, row maximum), then add 1 instead of exp(−m)."""
    m = np.maximum(scores.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(scores - m)
    return e / (1.0 + e.sum(axis=-1, keepdims=True))


def _shift(constant):
    """The stable formula, but shifted by ``constant(scores)`` instead of max(0, row maximum)."""
    def shifted(scores):
        with np.errstate(all="ignore"):
            m = constant(scores)
            e = np.exp(scores - m)
            return e / (np.exp(-m) + e.sum(axis=-1, keepdims=True))
    return shifted


def _one_per_key(scores):
    m = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - m)
    return e / (scores.shape[-1] * np.exp(-m) + e.sum(axis=-1, keepdims=True))


def _breaks_on_large(outcome: Outcome) -> bool:
    if outcome.case.tag != "large":
        return False
    if outcome.error is not None:
        return isinstance(outcome.error, (OverflowError, FloatingPointError))
    return outcome.is_array and not np.all(np.isfinite(outcome.result))


#: the hand-checked case the hints offer: two keys of score 0 and the off slot share the weight in thirds
_TRY = "Try scores = np.array([[0.0, 0.0]]): the answer is [[1/3, 1/3]]."

SOFTMAX_OFF = Exercise(
    name="my_softmax_off",
    params=("scores",),
    task="computes a row-wise softmax with an off slot",
    reference=softmax_off,
    formula=lambda scores: np.exp(scores) / (1.0 + np.exp(scores).sum(axis=-1, keepdims=True)),
    cases=_cases,
    library_answers=(softmax_off,),
    hidden=_hidden,
    start_hint="Start from the formula above the cell: the softmax of each row with one more score, 0, that "
               "is dropped at the end. Work out one row by hand first, say [0, 0]: each weight is 1/3.",
    mistakes=(
        Mistake(
            "plain_softmax", "there is no off slot: this is the ordinary softmax",
            "Your rows sum to exactly 1, so a row still has to give all of its weight to some word; "
            "that is what makes heads park weight on a sink token.",
            ("The off slot is one more key with score 0, dropped at the end: it takes its share, so the "
             "rows come out below 1.",
             "Every row must come out below 1: the off slot keeps the rest of the weight.",
             _TRY),
            like(_plain_softmax),
        ),
        Mistake(
            "off_slot_not_shifted", "the scores are made safe, but the off slot is left as it was",
            "Changing every score by the same m is fine, but the off slot's score 0 must change with them. "
            "Left as it was, it counts as a score of +m instead of 0, so on rows whose scores are above 0 "
            "your weights are too small.",
            ("The off slot is a score like the others (0): whatever you do to the scores, do to it.",
             "Rows far above 0 must still come out right: the off slot's share of [[800, 800]] is almost "
             "nothing.",
             "Try scores = np.array([[800.0, 800.0]]): the answer is [[0.5, 0.5]] (to many decimals)."),
            like(_shift_without_off, _shift_then_add_one),
        ),
        Mistake(
            "shift_not_per_row", "the safeguard is not worked out for each row",
            "Any constant cancels in exact arithmetic, but not in floating point: a float overflows once a "
            "score above about 709 goes in, and rounds to 0 below about −745. A number taken from the whole "
            "array, or a row's smallest score, or its mean, leaves some score out of range on rows far "
            "apart from each other or on a row that spans more than 710, and inf/inf or 0/0 gives NaN there.",
            ("Each row is made safe from its own numbers, and the off slot's 0.",
             "After your change no score of a row, the off slot's included, may be above 0.",
             "Try scores = np.array([[900.0, 899.0], [-900.0, -899.0]]): the answer is [[0.731, 0.269], "
             "[0, 0]] to three decimals."),
            like(_shift(lambda s: np.maximum(s.max(), 0.0)), _shift(lambda s: s.max()),
                 _shift(lambda s: s.min(axis=-1, keepdims=True)),
                 _shift(lambda s: s.mean(axis=-1, keepdims=True))),
        ),
        Mistake(
            "shift_by_first", "each row is made safe by its first score, which need not be the largest",
            "Using a number taken from the row is the right idea, but the first score is the largest only "
            "by chance: in a row such as (−800, 5, 900), made safe with the first score (or with 0), the "
            "last score is still far above 709, overflows to inf, and inf/inf gives NaN.",
            ("Whatever number you take from a row must leave every score of that row at 0 or below.",
             "It must not depend on where the scores stand in the row.",
             "Try scores = np.array([[-800.0, 5.0, 900.0]]): the answer is [[0, 0, 1]] to three decimals."),
            like(_shift(lambda s: np.maximum(s[..., :1], 0.0)), _shift(lambda s: s[..., :1])),
        ),
        Mistake(
            "no_max_subtraction", "large scores overflow: nothing keeps them in range",
            "On small scores your function is right, but at scores near +800 a float overflows to inf, "
            "and inf/inf gives NaN.",
            ("Only the differences between the scores matter, the off slot's 0 included.",
             "[[800, 800]] must give about 0.5 each, and [[0, 0]] 1/3 each: here the off slot does not "
             "move with the scores.",
             "Try scores = np.array([[800.0, 800.0]]): the answer is [[0.5, 0.5]], with no NaN."),
            either(like(_no_max), _breaks_on_large),
        ),
        Mistake(
            "one_per_key", "the off slot is counted once for every key, not once per row",
            "There is a single off slot per query, whatever the number of keys. Counting it for each key "
            "makes the off slot grow with the sentence.",
            ("One query has one off slot.",
             "With S keys of score 0, each weight is 1/(S + 1).",
             "Try scores = np.array([[0.0, 0.0, 0.0]]): the answer is [[0.25, 0.25, 0.25]]."),
            like(lambda scores: np.exp(scores) / (scores.shape[-1] + np.exp(scores).sum(-1, keepdims=True)),
                 _one_per_key),
        ),
        Mistake(
            "sigmoid", "each weight is a sigmoid of its own score",
            "Your weights each look at one score alone, so the keys no longer compete: a row can add up to "
            "more than 1. It agrees with the off-slot softmax only when a row has a single key.",
            ("The keys of a row share out the weight: they compete with each other and with the off slot.",
             "Every row must add up to less than 1.",
             _TRY + " A sigmoid of each score gives [[0.5, 0.5]]."),
            like(lambda scores: 1.0 / (1.0 + np.exp(-scores))),
        ),
        Mistake(
            "wrong_axis", "the softmax runs down the columns instead of along the rows",
            "Each row holds one query's scores over the keys; it is that row that shares out the weight.",
            ("Each row holds one query's scores over the keys: the row shares out the weight.",
             "Every row of your answer must add up to less than 1, not every column.",
             "Try scores = np.array([[0.0, 0.0], [10.0, 10.0]]): row 0 of the answer is [1/3, 1/3]."),
            like(lambda scores: softmax_off(scores.T).T),
        ),
    ),
)


def check_softmax_off(fn):
    """Check the learner's ``my_softmax_off(scores)``: exp(s_j) / (1 + Σ_i exp(s_i)) along each row.

    Notebook 09_attention_in_action. ``scores`` is ``(L, S)``; the answer is compared with
    ``softmax_off`` (``attention.softmax`` with a zero column appended, then dropped) on
    hand-made, random, one-key, very negative and large cases. Returns a Feedback; never raises.
    """
    return SOFTMAX_OFF.check(fn)
