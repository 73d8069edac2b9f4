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
    return (f"Your scores are the dot products divided by {c:.4g} (here d_k = {d_k}, "
            f"√d_k = {np.sqrt(d_k):.4g}). "
            "Scaling is the next step (my_scale); this function returns the raw dot products.")


#: the hand-checked case the hints offer: one query, three keys (d_k = 2)
_TRY = ("Try Q = np.array([[1.0, 0.0]]) (one query) and K = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]) "
        "(three keys): the scores must be [[1, 0, 2]], shape (1, 3).")

SCORES = Exercise(
    name="my_scores",
    params=("Q", "K"),
    task="computes all query-key dot products Q·Kᵀ",
    reference=attention.attention_scores,
    formula=lambda Q, K: Q @ K.T,
    cases=_cases,
    library_answers=(attention.attention_scores,),
    hidden=_hidden,
    start_hint="Start from the definition: entry (i, j) is the dot product of query i (row i of Q) with key "
               "j (row j of K). Write down the shapes, Q (L, d_k), K (S, d_k) and the answer (L, S), before "
               "you write the line.",
    mistakes=(
        Mistake(
            "k_not_transposed", "the keys are used as they are stored, one key per row",
            "Your product pairs the rows of Q with the columns of K as it stands, and the columns of K are "
            "its d_k features, not its keys. The sizes only fit by accident (when S = d_k), and even then "
            "the numbers are not query-key dot products.",
            ("Every entry must pair a query (a row of Q) with a key (a row of K).",
             "Write the shapes: (L, d_k) and (S, d_k). For a product the inner sizes must be equal, so K "
             "has to enter it with its d_k first, as a (d_k, S) array.",
             _TRY),
            like(lambda Q, K: Q @ K),
        ),
        Mistake(
            "q_transposed", "the features of Q are paired with the features of K",
            lambda o: "Your result compares features with features and is (d_k, d_k)"
            + (f" (here {shape_text(o.result)})" if o.is_array else "")
            + ", not one score per (query, key) pair.",
            ("The result needs one row per query and one column per key.",
             "The answer is (L, S), here with L queries and S keys; yours has d_k rows, one per feature.",
             _TRY),
            like(lambda Q, K: Q.T @ K),
        ),
        Mistake(
            "swapped", "rows and columns are swapped: one row per key",
            "The result has one row per key and one column per query: the mirror image of the scores. By "
            "convention each row belongs to a query, so that the softmax later runs over the keys.",
            ("Each row of the result belongs to a query: the queries come first.",
             "The answer is (L, S): L queries down, S keys across; yours is (S, L).",
             _TRY),
            like(lambda Q, K: K @ Q.T),
        ),
        Mistake(
            "elementwise", "* multiplies element by element",
            "Q * K multiplies entries in the same place: it pairs query i only with key i, never with the "
            "other keys, so it cannot give the (L, S) table of all dot products (and where L ≠ S numpy "
            "cannot even line the two arrays up). Summing afterwards does not help.",
            ("Every query must meet every key, not only the key in the same position.",
             "The answer has L · S entries, one dot product for each (query, key) pair.",
             _TRY),
            either(like(lambda Q, K: Q * K, lambda Q, K: Q * K.T), _multiplied_elementwise),
        ),
        Mistake(
            "scaled_too_early", "the scores are already scaled down",
            _scaled_explain,
            ("Leave out the scaling: it is the next step's job (my_scale).",
             "Your scores are all smaller than the expected ones by the same factor.",
             _TRY),
            either(like(lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]), lambda Q, K: Q @ K.T / Q.shape[-1]),
                   every_case(lambda o: o.values_ok or _divisor(o) is not None)),
        ),
        Mistake(
            "softmax_too_early", "softmax is already applied",
            "Your rows sum to 1: that is the job of a later step. This one returns the raw dot products, "
            "which may be negative and sum to anything.",
            ("Leave out the softmax: this step stops at the raw scores.",
             "A raw score can be negative or larger than 1; yours all lie between 0 and 1.",
             _TRY),
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
