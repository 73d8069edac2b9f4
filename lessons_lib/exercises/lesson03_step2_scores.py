"""Exercise of notebook 03_step2_scores: the learner writes ``my_scores(Q, K) = Q·Kᵀ``.

Content only (cases and candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import attention
from .engine import (
    Case,
    Exercise,
    Mistake,
    Outcome,
    count,
    distinct_sizes,
    either,
    every_case,
    like,
    rng_cases,
    shape_text,
)

__all__ = ["check_scores"]


def _random_case(rng, n_queries, n_keys, d_k, kind="random"):
    return Case(
        f"{kind} Q {n_queries}×{d_k} and K {n_keys}×{d_k} ({count(n_queries, 'query', 'queries')}, "
        f"{count(n_keys, 'key', 'keys')})",
        {"Q": rng.normal(size=(n_queries, d_k)), "K": rng.normal(size=(n_keys, d_k))},
    )


def _cases() -> list[Case]:
    # L ≠ S ≠ d_k in every case (and none is 4 or 16), so a missing transpose, a product in the wrong
    # order or a division by a size of Q never fits, or gives the right numbers, by accident.
    return [
        Case("hand-made Q 2×3 and K 5×3 (2 queries, 5 keys, d_k = 3)",
             {"Q": np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]]),
              "K": np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [2.0, -1.0, 1.0],
                             [0.0, 0.0, 3.0]])}),
        *rng_cases([(3, 5, 7), (6, 2, 3), (1, 6, 8)], 12, _random_case),
    ]


def _hidden(rng) -> list[Case]:
    """Unseen cases: L, S and d_k different in each, one of them with a single query."""
    cases = [_random_case(rng, *distinct_sizes(rng, 3), kind="unseen") for _ in range(3)]
    n_keys, d_k = distinct_sizes(rng, 2)
    return [*cases, _random_case(rng, 1, n_keys, d_k, kind="unseen")]


def _divisor(o: Outcome):
    """The number the learner divided Q·Kᵀ by, when the answer is Q·Kᵀ / one number (> 1)."""
    if not (o.is_array and o.result.shape == o.expected.shape and o.result.dtype.kind == "f"):
        return None
    nonzero = o.expected != 0
    if not nonzero.any() or not np.array_equal(o.result != 0, nonzero):
        return None
    ratios = o.expected[nonzero] / o.result[nonzero]
    c = float(ratios[0])
    return c if c > 1 and np.allclose(ratios, c, rtol=1e-9) else None


def _multiplied_elementwise(o: Outcome) -> bool:
    """The failing line multiplies with ``*`` and numpy could not line the arrays up (lesson 03)."""
    return o.error is not None and "broadcast" in str(o.error) and "*" in o.line.replace("**", "")


def _scaled_explain(o: Outcome) -> str:
    c, d_k = _divisor(o), o.case.args["Q"].shape[-1]
    return (f"Your scores are Q·Kᵀ divided by {c:.4g} (here d_k = {d_k}, √d_k = {np.sqrt(d_k):.4g}). "
            "Scaling is the next step (my_scale); this function returns the raw scores Q·Kᵀ.")


SCORES = Exercise(
    name="my_scores",
    params=("Q", "K"),
    task="computes all query-key dot products Q·Kᵀ",
    reference=attention.attention_scores,
    formula=lambda Q, K: Q @ K.T,
    cases=_cases,
    library_answers=(attention.attention_scores,),
    hidden=_hidden,
    start_hint="Entry (i, j) is the dot product of query row i with key row j. Q is (L, d_k) and K is "
               "(S, d_k): which one has to be transposed so that a matrix product gives (L, S)?",
    mistakes=(
        Mistake(
            "k_not_transposed", "K is not transposed",
            "Q @ K multiplies the rows of Q with the columns of K. Q is (L, d_k) and K is (S, d_k), so "
            "the sizes only fit by accident (when S = d_k), and even then the numbers are not query-key "
            "dot products.",
            ("One of the two matrices has to be transposed so that the inner sizes (d_k) meet.",
             "Write the shapes: (L, d_k) times (d_k, S) gives (L, S). Which of Q and K is (d_k, …) after "
             "a transpose?"),
            like(lambda Q, K: Q @ K),
        ),
        Mistake(
            "q_transposed", "Q is transposed instead of K",
            lambda o: "Q.T @ K compares features with features and gives a (d_k, d_k) matrix"
            + (f" (here {shape_text(o.result)})" if o.is_array else "")
            + ", not one score per (query, key) pair.",
            "Transpose the keys, not the queries: the result needs one row per query.",
            like(lambda Q, K: Q.T @ K),
        ),
        Mistake(
            "swapped", "rows and columns are swapped (K·Qᵀ)",
            "With K on the left of the product, the result has one row per key and one column per query: "
            "the transpose of the scores. "
            "By convention each row belongs to a query, so the softmax later runs over the keys.",
            "The queries go on the left of the product: each row of the result belongs to a query.",
            like(lambda Q, K: K @ Q.T),
        ),
        Mistake(
            "elementwise", "* multiplies element by element instead of a matrix product",
            "Q * K multiplies entries in the same place: it pairs query i only with key i, never with the "
            "other keys, so it cannot give the (L, S) table of all dot products (and where L ≠ S numpy "
            "cannot even line the two arrays up). Summing afterwards does not help.",
            "All dot products at once are one matrix product (the @ operator), not an element-wise *.",
            either(like(lambda Q, K: Q * K, lambda Q, K: Q * K.T), _multiplied_elementwise),
        ),
        Mistake(
            "scaled_too_early", "the scores are already scaled down",
            _scaled_explain,
            "Leave out the division: scaling is the next step's job (my_scale).",
            either(like(lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]), lambda Q, K: Q @ K.T / Q.shape[-1]),
                   every_case(lambda o: o.values_ok or _divisor(o) is not None)),
        ),
        Mistake(
            "softmax_too_early", "softmax is already applied",
            "Your rows sum to 1: that is the job of a later step. This one returns the raw scores Q·Kᵀ.",
            "Leave out the softmax: this step stops at the raw scores.",
            like(lambda Q, K: attention.softmax(Q @ K.T), lambda Q, K: attention.softmax(Q @ K.T / np.sqrt(
                Q.shape[-1]))),
        ),
    ),
)


def check_scores(fn):
    """Check the learner's ``my_scores(Q, K)`` = ``Q·Kᵀ``, shape ``(L, S)``.

    Notebook 03_step2_scores. ``Q`` is ``(L, d_k)``, ``K`` is ``(S, d_k)``; cases with
    ``L ≠ S`` and ``S ≠ d_k`` expose a missing transpose. Returns a
    :class:`~lessons_lib.course.feedback.Feedback`; never raises.
    """
    return SCORES.check(fn)
