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
    start_hint="Exponentiate with np.exp, then divide each row by its own sum (.sum(axis=-1, "
               "keepdims=True)). Subtract each row's maximum first, so that exp cannot overflow.",
    mistakes=(
        Mistake(
            "global_max", "the maximum of the whole array is subtracted, not each row's",
            "A row whose scores lie far below the overall maximum (here a row near -1000 beside a row "
            "near +1000) underflows to all zeros, and 0/0 gives NaN.",
            ("Each row needs its own maximum: reduce along the last axis, and keep that axis.",
             "x.max() without an axis is one number for the whole array; with axis=-1 and keepdims=True "
             "it is one number per row, shape (L, 1)."),
            like(_global_max_softmax),
        ),
        Mistake(
            "no_max_subtraction", "no max-subtraction, so exp overflows at large logits",
            "On small scores your function is right, but on logits near ±1000 it returns NaN or inf "
            "(or stops with an overflow): np.exp(1000) is too large for a float and becomes inf "
            "(inf/inf is NaN), and np.exp(-1000) rounds to 0 (0/0 is NaN).",
            ("Softmax does not change when one number is subtracted from a whole row: pick the number "
             "that makes the largest exponent exp(0) = 1.",
             "Subtract each row's own maximum (.max along the last axis, keeping the axis) before np.exp."),
            either(like(_naive_softmax),
                   every_case(lambda o: o.values_ok if o.case.tag != "large" else _breaks(o))),
        ),
        Mistake(
            "shift_not_row_max", "each row is shifted by something other than its own maximum",
            "You shift the scores before exponentiating, which is the right idea, and your function is "
            "right on small scores. But on a row that spans more than about 710 (here from -1000 to "
            "1500), only subtracting that row's maximum keeps every exponent at 0 or below: after "
            "subtracting the mean, the minimum, the first entry or a fixed number, some exponent is "
            "still above 709.8, where np.exp overflows to inf (or all of them fall below -745, and 0/0 "
            "gives NaN).",
            ("Only the row's own maximum puts every exponent at 0 or below: use that shift.",
             "Reduce with .max along the last axis and keepdims=True, so each row is shifted by its own "
             "largest score."),
            every_case(_unstable),
        ),
        Mistake(
            "wrong_axis", "softmax over the wrong axis (columns sum to 1 instead of rows)",
            lambda o: _column_sums(o) + "Row i holds query i's scores over all keys, so each row must "
            "become a probability distribution.",
            ("Both reductions (the maximum and the sum) run along each row: the last axis.",
             "axis=0 runs down the columns; axis=-1 (or 1 for a 2-D array) runs along the rows."),
            like(lambda x: attention.softmax(x, axis=0), lambda x: _naive_softmax(x.T).T),
        ),
        Mistake(
            "missing_keepdims", "keepdims is missing, so the row sums line up with the columns",
            "x.sum(axis=-1) turns a (L, S) array into shape (L,), and numpy then divides column j by "
            "the sum of row j (or refuses when L ≠ S).",
            ("Keep the reduced axis, so that there is one total per row, shape (L, 1).",
             "Pass keepdims=True to the sum (and to the max): numpy then lines each total up with its "
             "own row."),
            like(lambda x: np.exp(x) / np.exp(x).sum(axis=-1),
                 lambda x: np.exp(x - x.max(axis=-1)) / np.exp(x - x.max(axis=-1)).sum(axis=-1),
                 lambda x: _stable_exp(x) / _stable_exp(x).sum(axis=-1)),
        ),
        Mistake(
            "floor_division", "// rounds the division down to whole numbers",
            "`a // b` is floor division: it divides and then rounds down, so every weight below 1 "
            "becomes 0. Softmax weights are fractions between 0 and 1.",
            "Use true division, a single slash (/), not //.",
            like(lambda x: _stable_exp(x) // _stable_exp(x).sum(axis=-1, keepdims=True),
                 lambda x: np.exp(x) // np.exp(x).sum(axis=-1, keepdims=True)),
        ),
        Mistake(
            "whole_sum", "divided by the sum of the whole array instead of each row's",
            "All entries together sum to 1, but each row on its own does not.",
            ("Divide by one total per row, not by one total for everything.",
             "Give the sum an axis (the last one) and keep it, so the totals have shape (L, 1)."),
            lambda o: _rows_proportional(o) and bool(np.isclose(o.result.sum(), 1.0)),
        ),
        Mistake(
            "not_normalised", "the exponentials are not divided by their row sums",
            "Your rows do not sum to 1: after exponentiating, each row still has to be divided by its total.",
            ("After exponentiating, divide each row by its total, so that it sums to 1.",
             "The total of each row is a sum along the last axis, kept as a column (keepdims=True)."),
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
    start_hint="Divide the scores by the square root of d_k (np.sqrt).",
    mistakes=(
        Mistake(
            "forgot_scaling", "the scaling is missing",
            "Your function returns the scores unchanged.",
            "The scores must come back divided by a factor that grows with d_k: which one?",
            like(lambda scores, d_k: scores),
        ),
        Mistake(
            "divided_by_d_k", "divided by d_k instead of √d_k",
            "Dividing by d_k shrinks the scores too much (by 64 instead of 8 when d_k = 64), so softmax "
            "comes out nearly uniform and attention cannot focus. The spread of a dot product grows "
            "like √d_k, so √d_k is what brings it back to about 1.",
            ("The spread of a dot product grows like the square root of d_k, not like d_k.",
             "np.sqrt gives the square root; the number to take it of is the d_k argument."),
            like(lambda scores, d_k: scores / d_k),
        ),
        Mistake(
            "multiplied", "multiplied instead of divided",
            "Multiplying makes large scores even larger, so softmax saturates even more (one weight near "
            "1, the rest near 0).",
            "Scaling makes the scores smaller: divide by the factor instead of multiplying.",
            like(lambda scores, d_k: scores * np.sqrt(d_k), lambda scores, d_k: scores * d_k),
        ),
        Mistake(
            "power_precedence", "`d_k ** 1/2` is d_k / 2, not √d_k",
            "Python applies ** before /, so d_k ** 1/2 means (d_k ** 1) / 2. It equals √d_k only when "
            "d_k = 4, which is why one case may pass.",
            "Use np.sqrt, or put the exponent in brackets, d_k ** (1/2): then the power comes first.",
            like(lambda scores, d_k: scores / (d_k / 2), lambda scores, d_k: scores / d_k / 2),
        ),
        Mistake(
            "d_k_from_shape", "d_k is taken from the shape of the scores",
            "scores has shape (L, S): its sizes count queries and keys, not d_k, the length of each "
            "query and key vector. The two only agree by accident.",
            "The d_k argument is the length of each query and key vector: take the factor from it.",
            like(lambda scores, d_k: scores / np.sqrt(scores.shape[-1]),
                 lambda scores, d_k: scores / np.sqrt(scores.shape[0])),
        ),
        Mistake(
            "softmax_too_early", "softmax is applied as well",
            "This step only scales; the softmax comes next, in its own function.",
            "Stop after the scaling: the softmax is a step of its own.",
            like(lambda scores, d_k: attention.softmax(scores / np.sqrt(d_k))),
        ),
        Mistake(
            "floor_division", "// rounds the division down to whole numbers",
            "`a // b` is floor division: it divides and then rounds down (2.5 becomes 2.0, -0.5 becomes "
            "-1.0), so the scaled scores lose their fractions.",
            "Use true division, a single slash (/), not //.",
            like(lambda scores, d_k: scores // np.sqrt(d_k), lambda scores, d_k: scores // d_k ** 0.5),
        ),
        Mistake(
            "fixed_number", "the scores are divided by a fixed number, not by √d_k",
            lambda o: f"Every case is divided by {_divisor(o):.4g}, whatever d_k is (here d_k = "
            f"{o.case.args['d_k']}, so √d_k = {np.sqrt(o.case.args['d_k']):.4g}). A number written into "
            "the function fits only the d_k it was worked out for; the check passes other values of d_k.",
            "Compute the factor from the d_k argument each time, instead of writing a number into the "
            "function.",
            _FixedNumber(),
        ),
        Mistake(
            "wrong_divisor", "the scores are divided by the wrong number",
            lambda o: f"Your answer is the scores divided by {_divisor(o):.4g}, but here d_k = "
            f"{o.case.args['d_k']}, so the factor is √d_k = {np.sqrt(o.case.args['d_k']):.4g}.",
            ("The factor is the square root of the d_k argument; check what your divisor is built from.",
             "Print your divisor next to np.sqrt(d_k) for the case below: they should be the same number."),
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
