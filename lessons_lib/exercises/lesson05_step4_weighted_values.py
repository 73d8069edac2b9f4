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


WEIGHTED_SUM = Exercise(
    name="my_weighted_sum",
    params=("weights", "V"),
    task="mixes the value vectors with the weights (weights·V)",
    reference=attention.weighted_values,
    formula=lambda weights, V: weights @ V,
    cases=_cases,
    library_answers=(attention.weighted_values,),
    hidden=_hidden,
    start_hint="Output row i is Σ_j weights[i, j] · V[j]: one matrix product. weights is (L, S) and V is "
               "(S, d_v); the answer is (L, d_v).",
    mistakes=(
        Mistake(
            "divided_by_s", "the weighted sum is divided by S, the number of keys",
            "Each row of the weights already sums to 1, so Σ_j weights[i, j] · V[j] is already an "
            "average of the values: dividing by S as well shrinks every output S times, out of the "
            "range of the values.",
            "The weights already average: leave out the division by the number of keys.",
            like(lambda weights, V: weights @ V / V.shape[0]),
        ),
        Mistake(
            "transposed_weights", "the weights are transposed",
            "weights.T @ V uses column i of the weights for output i, but row i holds query i's weights "
            "(the row that sums to 1).",
            "Use the weights as they are: row i of the weights belongs to query i.",
            like(lambda weights, V: weights.T @ V),
        ),
        Mistake(
            "transposed_result", "the answer is transposed",
            "Your numbers are right but laid out as (d_v, L): one row per value feature instead of "
            "one row per query: transposing both factors of a product and swapping them transposes the "
            "result, (AB)ᵀ = BᵀAᵀ.",
            ("The product needs no transpose at all: write the shapes, (L, S) times (S, d_v).",
             "(L, S) times (S, d_v) gives (L, d_v): one row per query, which is the layout asked for."),
            like(lambda weights, V: (weights @ V).T),
        ),
        Mistake(
            "reversed_order", "the product is in the wrong order",
            "A matrix product is not commutative. With V first, the rows of the result no longer "
            "belong to the queries.",
            ("The weights go on the left of the product: each output row belongs to a query.",
             "(L, S) times (S, d_v) fits; (S, d_v) times (L, S) does not, unless sizes happen to match."),
            like(lambda weights, V: V @ weights, lambda weights, V: V.T @ weights),
        ),
        Mistake(
            "v_transposed", "V is transposed",
            "V is already (S, d_v), one value vector per row, which is what the product needs.",
            "Use V as it is: its rows are the value vectors, one per key.",
            like(lambda weights, V: weights @ V.T),
        ),
        Mistake(
            "elementwise", "* multiplies element by element instead of a matrix product",
            "weights * V pairs up matching entries and never sums over the keys.",
            "Use the matrix product (the @ operator): it sums weights[i, j] · V[j] over j.",
            like(lambda weights, V: weights * V, lambda weights, V: weights * V.T),
        ),
        Mistake(
            "softmax_again", "softmax is applied to the weights again",
            "The weights are already probabilities (each row sums to 1). A second softmax flattens "
            "them toward uniform and changes which values get mixed in.",
            "Use the weights as they are: they are already the softmax of the scores.",
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
