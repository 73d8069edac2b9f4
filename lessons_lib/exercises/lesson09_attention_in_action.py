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


SOFTMAX_OFF = Exercise(
    name="my_softmax_off",
    params=("scores",),
    task="computes a row-wise softmax with an off slot",
    reference=softmax_off,
    formula=lambda scores: np.exp(scores) / (1.0 + np.exp(scores).sum(axis=-1, keepdims=True)),
    cases=_cases,
    library_answers=(softmax_off,),
    hidden=_hidden,
    start_hint="weights_j = exp(s_j) / (1 + Σ_i exp(s_i)) along each row (axis=-1). For stability subtract "
               "m = max(0, row maximum) from every score, and remember that the off slot's score 0 "
               "becomes −m: its exponential is exp(−m), not 1.",
    mistakes=(
        Mistake(
            "plain_softmax", "there is no off slot: this is the ordinary softmax",
            "Your rows sum to exactly 1, so a row still has to give all of its weight to some word; "
            "that is what makes heads park weight on a sink token.",
            ("The off slot is one more key with score 0: its exp(0) = 1 belongs in each row's total.",
             "Add 1 to the denominator, once per row, beside the sum of the row's exponentials."),
            like(_plain_softmax),
        ),
        Mistake(
            "off_slot_not_shifted", "the scores are shifted by their maximum, but the off slot is not",
            "Subtracting m (the row maximum, or max(0, row maximum)) from every score is fine, but the "
            "off slot's score 0 must move too: it becomes −m, and its exponential exp(−m), not 1. Adding 1 "
            "after the shift gives the off slot a score of +m instead of 0, so on rows whose maximum is "
            "above 0 your weights are too small.",
            ("Shift the off slot's score with the others: 0 − m, so its term in the total is exp(−m).",
             "In the denominator, the 1 that stood for exp(0) must become the exponential of −m, with the "
             "same m you subtracted from the scores."),
            like(_shift_without_off, _shift_then_add_one),
        ),
        Mistake(
            "shift_not_per_row", "the shift is not each row's own maximum",
            "Any constant cancels in exact arithmetic, but not in floating point: exp overflows above about "
            "709 and underflows below about −745. Shifting by the maximum of the whole array, by a row's "
            "minimum or by its mean leaves some exponent out of range on rows far apart from each other or "
            "on a row that spans more than exp's range, and inf/inf or 0/0 gives NaN there.",
            ("Shift each row by its own m = max(0, that row's maximum): every exponent is then ≤ 0.",
             "The row maximum is a reduction along the last axis (kept as a column); np.maximum then "
             "compares it with 0."),
            like(_shift(lambda s: np.maximum(s.max(), 0.0)), _shift(lambda s: s.max()),
                 _shift(lambda s: s.min(axis=-1, keepdims=True)),
                 _shift(lambda s: s.mean(axis=-1, keepdims=True))),
        ),
        Mistake(
            "shift_by_first", "each row is shifted by its first score, not by its largest",
            "Shifting by a number taken from the row is the right idea, but only the row's largest score "
            "keeps every exponent at 0 or below. The first score is the largest only by chance: in a row "
            "such as (−800, 5, 900), after subtracting −800 (or 0) the last exponent is far above 709, "
            "np.exp overflows to inf, and inf/inf gives NaN.",
            "Look for the largest score of each row, wherever it stands in the row, and shift by that "
            "(or by 0 when every score is below 0).",
            like(_shift(lambda s: np.maximum(s[..., :1], 0.0)), _shift(lambda s: s[..., :1])),
        ),
        Mistake(
            "no_max_subtraction", "no max-subtraction, so exp overflows at large scores",
            "On small scores your function is right, but at scores near +800 np.exp overflows to inf "
            "and inf/inf gives NaN.",
            ("Subtract m = max(0, row maximum) from every score before exponentiating, and shift the off "
             "slot's 0 as well.",
             "Taking the maximum with 0 keeps exp(−m) from overflowing when every score is very negative."),
            either(like(_no_max), _breaks_on_large),
        ),
        Mistake(
            "one_per_key", "1 is added for every key, not once per row",
            "There is a single off slot per query, so the total gets one extra exp(0) = 1, whatever the "
            "number of keys. Adding 1 for each key makes the off slot grow with the sentence.",
            "Add the off slot's 1 once per row, not once per key.",
            like(lambda scores: np.exp(scores) / (scores.shape[-1] + np.exp(scores).sum(-1, keepdims=True)),
                 _one_per_key),
        ),
        Mistake(
            "sigmoid", "each weight is a sigmoid of its own score",
            "1 / (1 + exp(−s_j)) looks at one score at a time, so the keys no longer compete: the row can "
            "sum to more than 1. It agrees with the off-slot softmax only when a row has a single key.",
            "Divide each exponential by the whole row's total (plus the off slot), so the keys compete.",
            like(lambda scores: 1.0 / (1.0 + np.exp(-scores))),
        ),
        Mistake(
            "wrong_axis", "the softmax runs down the columns instead of along the rows",
            "Each row holds one query's scores over the keys; it is that row that shares out the weight.",
            "Reduce along the last axis: .sum(axis=-1, keepdims=True) and .max(axis=-1, keepdims=True).",
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
