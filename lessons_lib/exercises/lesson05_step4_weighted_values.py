"""Exercise of notebook 05_step4_weighted_values: the learner writes ``my_weighted_sum(weights, V)``.

Content only (cases and candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import attention
from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

__all__ = ["check_weighted_sum"]


def _random_case(rng, n_queries, n_keys, d_v, kind="random"):
    weights = attention.softmax(rng.normal(size=(n_queries, n_keys)))
    return Case(f"{kind} weights {n_queries}×{n_keys} (rows sum to 1) and V {n_keys}×{d_v}",
                {"weights": weights, "V": rng.normal(size=(n_keys, d_v))})


def _cases() -> list[Case]:
    # L ≠ S ≠ d_v in every case, so a transpose or a product in the wrong order never fits by accident.
    hand_weights = np.array([[1.0, 0.0, 0.0], [0.25, 0.25, 0.5]])
    hand_values = np.array([[1.0, 0.0, 2.0, 0.0, 1.0], [0.0, 2.0, 0.0, 1.0, 3.0], [4.0, 4.0, 0.0, 2.0, 1.0]])
    return [
        Case("hand-made weights 2×3 and V 3×5 (2 queries, 3 keys, d_v = 5)",
             {"weights": hand_weights, "V": hand_values}),
        *rng_cases([(2, 5, 3), (5, 3, 6), (1, 4, 2)], 14, _random_case),
    ]


def _hidden(rng) -> list[Case]:
    """Unseen cases: L, S and d_v different in each, one with a single query."""
    n_keys, d_v = distinct_sizes(rng, 2)
    return [*(_random_case(rng, *distinct_sizes(rng, 3), kind="unseen") for _ in range(3)),
            _random_case(rng, 1, n_keys, d_v, kind="unseen")]


#: the hand-checked case the hints offer: one query, two keys, d_v = 1
_TRY = ("Try weights = np.array([[0.5, 0.5]]) with V = np.array([[2.0], [4.0]]): the answer is [[3]], the "
        "average of 2 and 4.")

WEIGHTED_SUM = Exercise(
    name="my_weighted_sum",
    params=("weights", "V"),
    task="mixes the value vectors with the weights (weights·V)",
    reference=attention.weighted_values,
    formula=lambda weights, V: weights @ V,
    cases=_cases,
    library_answers=(attention.weighted_values,),
    hidden=_hidden,
    start_hint="Start from one output row: row i mixes all the value vectors, each with its weight from row "
               "i of the weights (section 2 did it by hand for \"sat\"). Write down the shapes, weights "
               "(L, S), V (S, d_v) and the answer (L, d_v), before you write the line.",
    mistakes=(
        Mistake(
            "divided_by_s", "the weighted sum is divided by S, the number of keys",
            "Each row of the weights already sums to 1, so mixing the values with them already gives an "
            "average: dividing by S as well shrinks every output S times, out of the range of the values.",
            ("The weights already average: they add up to 1 in every row.",
             "Each output lies within the range of the values (section 4); yours are S times too small.",
             _TRY),
            like(lambda weights, V: weights @ V / V.shape[0]),
        ),
        Mistake(
            "transposed_weights", "the weights are transposed",
            "Your function uses column i of the weights for output i, but row i holds query i's weights "
            "(the row that sums to 1).",
            ("Use the weights as they are: row i of the weights belongs to query i.",
             "Output i takes in every value vector with the weights of row i, which add up to 1.",
             _TRY),
            like(lambda weights, V: weights.T @ V),
        ),
        Mistake(
            "transposed_result", "the answer is transposed",
            "Your numbers are right but laid out as (d_v, L): one row per value feature instead of "
            "one row per query: transposing both factors of a product and swapping them transposes the "
            "result, (AB)ᵀ = BᵀAᵀ.",
            ("No transpose is needed at all: each row of the answer belongs to a query.",
             "The answer is (L, d_v): one row per query, d_v numbers each.",
             _TRY),
            like(lambda weights, V: (weights @ V).T),
        ),
        Mistake(
            "reversed_order", "the product is in the wrong order",
            "The order of the two factors matters: with V first, the rows of the result no longer belong "
            "to the queries.",
            ("Each output row belongs to a query: the weights come first.",
             "(L, S) and (S, d_v) fit in this order; the other order fits only when sizes happen to match.",
             _TRY),
            like(lambda weights, V: V @ weights, lambda weights, V: V.T @ weights),
        ),
        Mistake(
            "v_transposed", "V is transposed",
            "V is already (S, d_v), one value vector per row, which is what the product needs.",
            ("Use V as it is: its rows are the value vectors, one per key.",
             "The weights have one column per key, and V one row per key: these must meet.",
             _TRY),
            like(lambda weights, V: weights @ V.T),
        ),
        Mistake(
            "elementwise", "* multiplies element by element",
            "weights * V pairs up the entries that sit in the same place and never adds up over the keys.",
            ("Each output row takes in every value vector, each with its own weight.",
             "Output row i is one vector of d_v numbers: the value vectors v_j, each scaled by its weight "
             "w_ij, added up.",
             _TRY),
            like(lambda weights, V: weights * V, lambda weights, V: weights * V.T),
        ),
        Mistake(
            "softmax_again", "softmax is applied to the weights again",
            "The weights are already probabilities (each row sums to 1). A second softmax flattens "
            "them toward uniform and changes which values get mixed in.",
            ("Use the weights as they are: they are already the softmax of the scores.",
             "Weights of 1 and 0 must pick one value vector exactly; a second softmax blurs them.",
             _TRY),
            like(lambda weights, V: attention.softmax(weights) @ V),
        ),
    ),
)


def check_weighted_sum(fn):
    """Check the learner's ``my_weighted_sum(weights, V)`` = ``weights·V``, shape ``(L, d_v)``.

    Notebook 05_step4_weighted_values. ``weights`` is ``(L, S)`` with rows summing to 1,
    ``V`` is ``(S, d_v)``. Returns a :class:`~lessons_lib.course.feedback.Feedback`; never raises.
    """
    return WEIGHTED_SUM.check(fn)
