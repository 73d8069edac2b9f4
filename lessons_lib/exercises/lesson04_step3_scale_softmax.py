"""Exercises of notebook 04_step3_scale_softmax: ``my_scale(scores, d_k)`` and ``my_softmax(x)``.

Content only (cases and candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import attention
from .engine import Case, Exercise, Mistake, Outcome, distinct_sizes, either, every_case, like, rng_cases

__all__ = ["check_softmax", "check_scaling"]


# ---- softmax ---------------------------------------------------------------


def _naive_softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _global_max_softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def _stable_exp(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def _random_scores(rng, rows, cols, kind="random"):
    return Case(f"{kind} {rows}×{cols} scores (non-square)", {"x": rng.normal(0, 2, (rows, cols))})


def _softmax_cases() -> list[Case]:
    return [
        Case("hand-made 2×3 scores", {"x": np.array([[1.0, 2.0, 3.0], [2.0, 0.0, -1.0]])}),
        Case("hand-made 3×3 scores", {"x": np.array([[0.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [3.0, 3.0, -2.0]])}),
        *rng_cases([(4, 6), (5, 2)], 11, _random_scores),
        Case("large logits near +1000", {"x": np.array([[1000.0, 1001.0, 1002.0], [1002.0, 1000.0, 990.0]])},
             "large"),
        Case("large logits, one row near +1000 and one near -1000",
             {"x": np.array([[1000.0, 999.0, 998.0], [-1000.0, -998.0, -999.0]])}, "large"),
        # Rows that span far more than 710 (exp overflows above about 709.8): only each row's own
        # maximum keeps every exponent ≤ 0. Shifting by the mean, the minimum, the first entry or a
        # fixed 1000 overflows (or underflows to 0/0) on one of these rows.
        Case("rows spanning about 2500 and 900 (largest entry not always first)",
             {"x": np.array([[1500.0, -1000.0, 0.0, 10.0], [-800.0, 100.0, 20.0, -5.0]])}, "large"),
    ]


def _spanning_row(rng, n: int) -> np.ndarray:
    """A row of ``n`` scores spanning far more than exp's range (about 710), its largest entry not
    first: one entry above +1450, one near −1000, the others small. Only a shift by the row's own
    maximum keeps every exponent at 0 or below; the mean, the minimum, the first entry, half the
    maximum or a fixed number leave one out of range."""
    row = rng.normal(0.0, 5.0, n)
    top, bottom = rng.choice(np.arange(1, n), size=2, replace=False)
    row[top], row[bottom] = rng.uniform(1450, 1600), -rng.uniform(800, 1200)
    return row


def _softmax_hidden(rng) -> list[Case]:
    """Unseen cases: two random non-square shapes, large logits near +N, rows near +N and −N, and rows
    spanning more than exp's range (N between 800 and 1200, drawn)."""
    (r1, c1), (r2, c2) = (distinct_sizes(rng, 2) for _ in range(2))
    big = float(rng.uniform(800, 1200))
    cols = distinct_sizes(rng, 1, (3, 5, 6))[0]
    return [
        _random_scores(rng, r1, c1, "unseen"), _random_scores(rng, r2, c2, "unseen"),
        Case(f"unseen large logits near +{big:.0f}, 2×{cols}", {"x": big + rng.normal(0, 3, (2, cols))},
             "large"),
        Case(f"unseen rows near +{big:.0f} and −{big:.0f}, 2×{cols}",
             {"x": np.stack([big + rng.normal(0, 3, cols), -big + rng.normal(0, 3, cols)])}, "large"),
        Case(f"unseen rows spanning more than exp's range, 2×{cols + 1}",
             {"x": np.stack([_spanning_row(rng, cols + 1), _spanning_row(rng, cols + 1)])}, "large"),
    ]


def _breaks(o: Outcome) -> bool:
    """NaN or inf in the answer, or an overflow (or 0/0) error: what exp of a huge number does."""
    if o.error is not None:
        return isinstance(o.error, (OverflowError, FloatingPointError, ZeroDivisionError))
    return o.is_array and o.result.dtype.kind == "f" and not np.all(np.isfinite(o.result))


def _unstable(o: Outcome) -> bool:
    """Right on small scores; on large logits right or broken, never merely a different number."""
    return o.values_ok if o.case.tag != "large" else (o.values_ok or _breaks(o))


def _rows_proportional(o: Outcome) -> bool:
    """Each row is the expected row times its own positive factor: right up to the division by the sum."""
    if not (o.is_array and o.result.shape == o.expected.shape and o.result.dtype.kind == "f"):
        return False
    with np.errstate(all="ignore"):
        factors = o.result / o.expected
    return bool(np.all(np.isfinite(factors)) and np.all(factors > 0)
                and np.allclose(factors, factors[..., :1], rtol=1e-6))


def _column_sums(o: Outcome) -> str:
    return (f"Your rows sum to {np.round(o.result.sum(axis=-1), 3).tolist()}, your columns to "
            f"{np.round(o.result.sum(axis=0), 3).tolist()}. ")


SOFTMAX = Exercise(
    name="my_softmax",
    params=("x",),
    task="computes a row-wise softmax",
    reference=lambda x: attention.softmax(x, axis=-1),
    cases=_softmax_cases,
    library_answers=(attention.softmax, attention.softmax_in_place),
    hidden=_softmax_hidden,
    start_hint="Start with what each row must become (section 2): positive numbers, in the same order as "
               "the scores, that add up to 1. Work out one small row by hand first, say [1, 2, 3], then "
               "write the function for a whole (L, S) array.",
    mistakes=(
        Mistake(
            "global_max", "the safeguard uses one number for the whole array, not one for each row",
            "A row whose scores lie far below those of another row (here a row near -1000 beside a row "
            "near +1000) comes out as all zeros before the last step, and 0/0 gives NaN.",
            ("Softmax looks at each row on its own: whatever makes a row safe must come from that row's own "
             "numbers.",
             "The number you take from each row must have shape (L, 1), one per row, so that numpy pairs it "
             "with its own row of the (L, S) array.",
             "Try x = np.array([[1000.0, 999.0], [-1000.0, -999.0]]): the answer is [[0.731, 0.269], "
             "[0.269, 0.731]]."),
            like(_global_max_softmax),
        ),
        Mistake(
            "no_max_subtraction", "large scores overflow: nothing keeps them in range",
            "On small scores your function is right, but on scores near ±1000 it returns NaN or inf (or "
            "stops with an overflow): a score of 1000 gives a number too large for a float (inf), and "
            "inf/inf is NaN; a score of -1000 gives one that rounds to 0, and 0/0 is NaN.",
            ("Only the differences between the scores of a row matter (the last cell of section 2).",
             "Rows that differ by a constant give the same weights: [1000, 1001, 1002] must give what "
             "[0, 1, 2] gives.",
             "Try x = np.array([[1000.0, 1001.0, 1002.0]]): the answer is [[0.090, 0.245, 0.665]]."),
            either(like(_naive_softmax),
                   every_case(lambda o: o.values_ok if o.case.tag != "large" else _breaks(o))),
        ),
        Mistake(
            "shift_not_row_max", "the safeguard works on small rows, not on rows that span more than 710",
            "You change the scores first, which is the right idea, and your function is right on small "
            "scores. But a float overflows to inf once a score above about 709.8 goes in (and every score "
            "below about -745 rounds to 0, so 0/0 gives NaN). On a row that spans more than about 710 "
            "(here from -1000 to 1500), only one choice of the number keeps every score of the row in "
            "range: the mean, the minimum, the first entry or a fixed number leave one out.",
            ("After your change, every score of the row must be at most 0, and one of them exactly 0.",
             "Which number of the row, taken from every score, leaves them all at 0 or below? It must be "
             "worked out for each row.",
             "Try x = np.array([[1500.0, -1000.0, 0.0, 10.0]]): the answer is [[1, 0, 0, 0]] (to three "
             "decimals), with no NaN."),
            every_case(_unstable),
        ),
        Mistake(
            "wrong_axis", "softmax over the wrong axis (columns sum to 1 instead of rows)",
            lambda o: _column_sums(o) + "Row i holds query i's scores over all keys, so each row must "
            "become a probability distribution.",
            ("Row i holds query i's scores over the keys: it is the row that becomes a distribution.",
             "Along a row the second index of x[i, j] changes and the first stays: work across the "
             "columns, once for each row.",
             "Try x = np.array([[0.0, 0.0], [1.0, 1.0]]): the answer is [[0.5, 0.5], [0.5, 0.5]]."),
            like(lambda x: attention.softmax(x, axis=0), lambda x: _naive_softmax(x.T).T),
        ),
        Mistake(
            "missing_keepdims", "the numbers worked out per row line up with the columns",
            "Reducing a (L, S) array row by row gives shape (L,), and numpy pairs a shape (L,) with the "
            "columns: column j then meets row j's number (or numpy refuses when L ≠ S).",
            ("One number per row must stay a column, shape (L, 1), so that numpy pairs it with its own row.",
             "Print the shape of each number you work out per row: (L,) lines up with the columns, (L, 1) "
             "with the rows.",
             "Try x = np.array([[0.0, 0.0], [0.0, 10.0]]): the first row must come out [0.5, 0.5]."),
            like(lambda x: np.exp(x) / np.exp(x).sum(axis=-1),
                 lambda x: np.exp(x - x.max(axis=-1)) / np.exp(x - x.max(axis=-1)).sum(axis=-1),
                 lambda x: _stable_exp(x) / _stable_exp(x).sum(axis=-1)),
        ),
        Mistake(
            "floor_division", "// rounds down to whole numbers",
            "`a // b` rounds its result down to a whole number, so every weight below 1 becomes 0. Softmax "
            "weights are fractions between 0 and 1.",
            ("Weights are fractions between 0 and 1: whole numbers cannot be right.",
             "// keeps only whole numbers; which operator keeps the fractions?",
             "Try x = np.array([[0.0, 0.0]]): the answer is [[0.5, 0.5]], and // gives [[0, 0]]."),
            like(lambda x: _stable_exp(x) // _stable_exp(x).sum(axis=-1, keepdims=True),
                 lambda x: np.exp(x) // np.exp(x).sum(axis=-1, keepdims=True)),
        ),
        Mistake(
            "whole_sum", "the whole array is normalised as one, instead of each row",
            "All entries together add up to 1, but each row on its own does not.",
            ("Each row is its own probability distribution: it must add up to 1 by itself.",
             "In your result only all rows together add up to 1; each row must.",
             "Try x = np.array([[0.0, 0.0], [0.0, 0.0]]): the answer is 0.5 everywhere; yours is 0.25."),
            lambda o: _rows_proportional(o) and bool(np.isclose(o.result.sum(), 1.0)),
        ),
        Mistake(
            "not_normalised", "the rows do not add up to 1",
            "Your numbers are positive and in the right order, but each row sums to more or less than 1: "
            "they are not yet probabilities.",
            ("A probability distribution adds up to 1: every row must.",
             "Your rows are the right answer times a factor, one factor per row.",
             "Try x = np.array([[0.0, 0.0]]): the answer is [[0.5, 0.5]]; yours is [[1, 1]]."),
            _rows_proportional,
        ),
    ),
)


def check_softmax(fn):
    """Check the learner's ``my_softmax(x)``: softmax over the last axis, each row sums to 1.

    Notebook 04_step3_scale_softmax. ``x`` is ``(L, S)``; the answer is compared with
    ``lessons_lib.core.attention.softmax(x, axis=-1)`` on hand-made, random non-square and
    large-logit cases. Returns a :class:`~lessons_lib.course.feedback.Feedback`; never raises.
    """
    return SOFTMAX.check(fn)


# ---- scaling ------------------------------------------------------------------


def _random_scaling(rng, n_queries, n_keys, d_k, kind="random"):
    return Case(f"{kind} {n_queries}×{n_keys} scores with d_k = {d_k}",
                {"scores": rng.normal(0, np.sqrt(d_k), (n_queries, n_keys)), "d_k": d_k})


def _scaling_cases() -> list[Case]:
    # L, S, d_k, √d_k, d_k / 2 all differ within each case (and d_k is never 4, where d_k / 2 = √d_k,
    # nor 16 or 64 alone), so dividing by d_k, by d_k / 2, by a size of the scores or by a fixed number
    # never looks right by accident.
    return [
        Case("hand-made 2×5 scores with d_k = 9",
             {"scores": np.array([[9.0, -3.0, 6.0, 0.0, 12.0], [3.0, -9.0, 0.0, 6.0, -6.0]]), "d_k": 9}),
        *rng_cases([(3, 7, 25), (6, 2, 64)], 13, _random_scaling),
    ]


#: d_k of an unseen case: never 1 (√1 = 1), 4 (4 / 2 = √4) or 16, never a size of the scores (those are 2-9)
_HIDDEN_D_K = (10, 12, 20, 25, 32, 36, 49, 50, 64, 81, 100, 128)


def _scaling_hidden(rng) -> list[Case]:
    """Three unseen cases, each with its own d_k and scores whose sizes are never d_k."""
    d_ks = distinct_sizes(rng, 3, _HIDDEN_D_K)
    return [_random_scaling(rng, *distinct_sizes(rng, 2), d_k, "unseen") for d_k in d_ks]


def _divisor(o: Outcome):
    """The number the learner divided the scores by, when the answer is the scores / one number."""
    scores = o.case.args["scores"]
    if not (o.is_array and o.result.shape == scores.shape and o.result.dtype.kind == "f"):
        return None
    nonzero = o.result != 0
    if not nonzero.any() or not np.array_equal(nonzero, scores != 0):
        return None
    ratios = scores[nonzero] / o.result[nonzero]
    return float(ratios[0]) if np.allclose(ratios, ratios[0], rtol=1e-9) else None


def _divides_by_other(o: Outcome) -> bool:
    c = _divisor(o)
    return c is not None and not np.isclose(c, np.sqrt(o.case.args["d_k"]), rtol=1e-9)


def _same_divisor_everywhere(failing: Outcome, outcomes: list[Outcome]) -> bool:
    divisors = [_divisor(o) for o in outcomes]
    return all(d is not None for d in divisors) and np.allclose(divisors, divisors[0], rtol=1e-9)


#: the hand-checked case the hints offer: d_k = 9, so the scores shrink 3 times
_TRY_SCALE = "Try scores = np.array([[6.0, -3.0]]) with d_k = 9: the answer is [[2, -1]]."


class _FixedNumber:
    """Every case's scores are divided by the same number, whatever d_k is."""

    def __call__(self, outcome: Outcome) -> bool:
        return _divides_by_other(outcome)

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return _divides_by_other(failing) and _same_divisor_everywhere(failing, outcomes)


SCALING = Exercise(
    name="my_scale",
    params=("scores", "d_k"),
    task="scales the scores by 1/√d_k",
    reference=lambda scores, d_k: attention.scale_scores(scores, d_k=d_k),
    formula=lambda scores, d_k: scores / np.sqrt(d_k),
    cases=_scaling_cases,
    library_answers=(attention.scale_scores, attention.scale_by),
    hidden=_scaling_hidden,
    start_hint="Start from section 4: the typical size of a raw score grows with d_k, and this step brings "
               "it back to about 1. d_k is an argument of its own, not a size of the scores.",
    mistakes=(
        Mistake(
            "forgot_scaling", "the scaling is missing",
            "Your function returns the scores unchanged.",
            ("The typical size of a raw score grows with d_k; after this step it is about 1, whatever d_k "
             "is.",
             "For d_k > 1 your answer must be smaller than the scores, by a factor that depends on d_k only.",
             _TRY_SCALE),
            like(lambda scores, d_k: scores),
        ),
        Mistake(
            "divided_by_d_k", "the scores shrink by a factor of d_k, which is too much",
            "Your scores come out d_k times smaller (64 times when d_k = 64), so softmax comes out nearly "
            "uniform and attention cannot focus. The spread of a dot product of d_k terms grows more slowly "
            "than d_k (section 4 measured it), so the factor must grow more slowly too.",
            ("Section 4 measured the variance of q·k: about d_k. The typical size of a score is its standard "
             "deviation, which grows more slowly.",
             "With d_k = 9 the scores must shrink by a factor of 3, with d_k = 64 by a factor of 8.",
             _TRY_SCALE + " Yours is [[0.667, -0.333]]."),
            like(lambda scores, d_k: scores / d_k),
        ),
        Mistake(
            "multiplied", "the scores grow instead of shrinking",
            "Your scores come out larger than they went in, so softmax saturates even more (one weight "
            "near 1, the rest near 0).",
            ("This step makes the scores smaller, so that their typical size is about 1.",
             "For d_k > 1 every score must come out closer to 0 than it went in.",
             _TRY_SCALE),
            like(lambda scores, d_k: scores * np.sqrt(d_k), lambda scores, d_k: scores * d_k),
        ),
        Mistake(
            "power_precedence", "`d_k ** 1/2` is half of d_k",
            "Python computes ** before what follows it, so d_k ** 1/2 means (d_k ** 1) / 2, half of d_k. "
            "That is the right factor only when d_k = 4, which is why one case may pass.",
            ("The factor you meant is not half of d_k: check what the power in your line applies to.",
             "Brackets decide what a power applies to: Python does ** first, then the rest, from left to "
             "right.",
             "Try d_k = 9: the factor must be 3, and d_k ** 1/2 gives 4.5."),
            like(lambda scores, d_k: scores / (d_k / 2), lambda scores, d_k: scores / d_k / 2),
        ),
        Mistake(
            "d_k_from_shape", "d_k is taken from the shape of the scores",
            "scores has shape (L, S): its sizes count queries and keys, not d_k, the length of each "
            "query and key vector. The two only agree by accident.",
            ("d_k is the length of each query and key vector: only the d_k argument says what it is.",
             "scores is (L, S): its sizes count queries and keys, which have nothing to do with d_k.",
             _TRY_SCALE + " Its shape is (1, 2), whatever d_k is."),
            like(lambda scores, d_k: scores / np.sqrt(scores.shape[-1]),
                 lambda scores, d_k: scores / np.sqrt(scores.shape[0])),
        ),
        Mistake(
            "softmax_too_early", "softmax is applied as well",
            "This step only scales; the softmax comes next, in its own function.",
            ("Stop after the scaling: the softmax is a step of its own.",
             "A scaled score may be negative or larger than 1; yours all lie between 0 and 1.",
             _TRY_SCALE),
            like(lambda scores, d_k: attention.softmax(scores / np.sqrt(d_k))),
        ),
        Mistake(
            "floor_division", "// rounds down to whole numbers",
            "`a // b` rounds its result down to a whole number (2.5 becomes 2.0, -0.5 becomes -1.0), so the "
            "scaled scores lose their fractions.",
            ("Scaled scores keep their fractions: 2.5 must stay 2.5.",
             "// keeps only whole numbers; which operator keeps the fractions?",
             "Try scores = np.array([[5.0]]) with d_k = 4: the answer is [[2.5]], and // gives [[2.0]]."),
            like(lambda scores, d_k: scores // np.sqrt(d_k), lambda scores, d_k: scores // d_k ** 0.5),
        ),
        Mistake(
            "fixed_number", "the scores shrink by a fixed factor, whatever d_k is",
            lambda o: f"Every case comes out {_divisor(o):.4g} times smaller, whatever d_k is (here d_k = "
            f"{o.case.args['d_k']}, which needs a factor of {np.sqrt(o.case.args['d_k']):.4g}). A number "
            "written into the function fits only the d_k it was worked out for; the check passes other "
            "values of d_k.",
            ("The factor must come from the d_k argument, each time the function runs.",
             "With d_k = 9 the factor is 3, with d_k = 25 it is 5: it changes with d_k.",
             _TRY_SCALE),
            _FixedNumber(),
        ),
        Mistake(
            "wrong_divisor", "the scores shrink by the wrong factor",
            lambda o: f"Your answer is the scores made {_divisor(o):.4g} times smaller, but here d_k = "
            f"{o.case.args['d_k']}, which needs a factor of {np.sqrt(o.case.args['d_k']):.4g}.",
            ("The factor comes from the d_k argument alone: check what yours is built from.",
             "With d_k = 9 the factor is 3, with d_k = 25 it is 5, with d_k = 64 it is 8.",
             _TRY_SCALE),
            every_case(lambda o: o.values_ok or _divides_by_other(o)),
        ),
    ),
)


def check_scaling(fn):
    """Check the learner's ``my_scale(scores, d_k)`` = ``scores / √d_k``.

    Notebook 04_step3_scale_softmax. Cases use several ``d_k`` with scores whose shape
    never equals ``d_k``. Returns a :class:`~lessons_lib.course.feedback.Feedback`; never raises.
    """
    return SCALING.check(fn)
