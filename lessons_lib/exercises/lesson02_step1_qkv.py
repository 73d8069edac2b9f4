"""Exercise of notebook 02_step1_qkv: the learner writes ``my_projection(x, w_q, w_k, w_v) -> (q, k, v)``.

Step 1 of attention: ``Q = X·W_Q``, ``K = X·W_K``, ``V = X·W_V``. Content only (cases and
candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..core import attention
from .engine import Case, Exercise, Mistake, like, rng_cases

__all__ = ["check_projection"]


def _cases() -> list[Case]:
    # L (tokens), d_model, d_k, d_v all differ in the first case, so a product in the wrong order
    # or a transposed weight cannot fit by accident; later cases make W_Q and W_K square (d_k =
    # d_model) and all three outputs the same shape, so those mistakes give numbers, not errors.
    def random_case(rng, n_tokens, d_model, d_k, d_v):
        return Case(
            f"random X {n_tokens}×{d_model} ({n_tokens} tokens, d_model = {d_model}), "
            f"W_Q and W_K {d_model}×{d_k}, W_V {d_model}×{d_v}",
            {"x": rng.normal(size=(n_tokens, d_model)),
             "w_q": rng.normal(size=(d_model, d_k)), "w_k": rng.normal(size=(d_model, d_k)),
             "w_v": rng.normal(size=(d_model, d_v))},
        )

    return rng_cases([(3, 6, 2, 5), (5, 3, 3, 3), (6, 5, 5, 2)], 15, random_case)


def _each(op):
    """A candidate that applies ``op(x, w)`` to each of the three weight matrices."""
    return lambda x, w_q, w_k, w_v: (op(x, w_q), op(x, w_k), op(x, w_v))


def _reordered(order):
    def candidate(x, w_q, w_k, w_v):
        qkv = (x @ w_q, x @ w_k, x @ w_v)
        return tuple(qkv[i] for i in order)
    return candidate


_ORDERS = [order for order in itertools.permutations(range(3)) if order != (0, 1, 2)]

PROJECTION = Exercise(
    name="my_projection",
    params=("x", "w_q", "w_k", "w_v"),
    task="projects the embeddings X into queries, keys and values",
    reference=attention.project_qkv,
    formula=lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_k, x @ w_v),
    outputs=("Q", "K", "V"),
    cases=_cases,
    start_hint="Each output is one matrix product with X on the left: X is (L, d_model) and W_Q is "
               "(d_model, d_k), so X @ W_Q is (L, d_k), one query per token. Return all three: "
               "return q, k, v.",
    mistakes=(
        Mistake(
            "weights_on_the_left", "the product is in the wrong order (W·X instead of X·W)",
            "A matrix product is not commutative. X has one row per token, (L, d_model), and W_Q turns "
            "d_model features into d_k: only X @ W_Q lines up d_model with d_model and keeps one row "
            "per token. W_Q @ X (or Wᵀ·Xᵀ) gives the transpose at best, one column per token.",
            "Put X first: q = x @ w_q, and the same for k and v.",
            like(_each(lambda x, w: w @ x), _each(lambda x, w: w.T @ x.T)),
        ),
        Mistake(
            "transposed_weights", "the weight matrices are transposed",
            "W_Q is already (d_model, d_k): its rows match the d_model features of X. With W_Q.T the "
            "sizes only fit when d_k = d_model, and even then the numbers are wrong.",
            "Use the weights as they are: q = x @ w_q.",
            like(_each(lambda x, w: x @ w.T)),
        ),
        Mistake(
            "elementwise", "* multiplies element by element instead of a matrix product",
            "x * w_q pairs up matching entries; a projection sums over the d_model features of each "
            "token, which is what @ does.",
            "Use the matrix product operator: q = x @ w_q.",
            like(_each(lambda x, w: x * w), _each(lambda x, w: x * w.T)),
        ),
        Mistake(
            "same_matrix", "the same weight matrix is used for all three",
            "Q, K and V each have their own learned matrix: that is what lets a token ask for one "
            "thing (its query), be found for another (its key) and hand over a third (its value). With "
            "one matrix for all three, Q, K and V would be the same.",
            "Use w_q for q, w_k for k and w_v for v.",
            like(*(lambda x, w_q, w_k, w_v, _i=i: (x @ (w_q, w_k, w_v)[_i],) * 3 for i in range(3))),
        ),
        Mistake(
            "shared_q_k", "Q and K come from one shared matrix",
            "That is the shared projection of section 4: with Q = K the scores are symmetric and each "
            "token is pulled toward itself. Queries and keys have their own matrices, W_Q and W_K, so "
            "that what a token looks for can differ from what it offers.",
            "Use w_q for the queries and w_k for the keys: return x @ w_q, x @ w_k, x @ w_v.",
            like(lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_v),
                 lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_k, x @ w_v)),
        ),
        Mistake(
            "wrong_order", "Q, K and V come back in the wrong order (or a weight is used for the wrong one)",
            "The three products are right, but not in their places: the caller unpacks "
            "`q, k, v = my_projection(...)`, so the first output must be X·W_Q, the second X·W_K and "
            "the third X·W_V.",
            "Return them in this order: return x @ w_q, x @ w_k, x @ w_v.",
            like(*(_reordered(order) for order in _ORDERS)),
        ),
        Mistake(
            "scaled_too_early", "the queries (or keys) are already divided by √d_k",
            "Scaling belongs to step 3, after the scores Q·Kᵀ; the projection itself is only X·W.",
            "Remove the division: q = x @ w_q.",
            like(lambda x, w_q, w_k, w_v: (x @ w_q / np.sqrt(w_q.shape[1]), x @ w_k, x @ w_v),
                 lambda x, w_q, w_k, w_v: (x @ w_q / np.sqrt(w_q.shape[1]), x @ w_k / np.sqrt(w_k.shape[1]),
                                           x @ w_v)),
        ),
    ),
)


def check_projection(fn):
    """Check the learner's ``my_projection(x, w_q, w_k, w_v)`` = ``(X·W_Q, X·W_K, X·W_V)``.

    Notebook 02_step1_qkv. ``x`` is ``(L, d_model)``, ``w_q, w_k`` are ``(d_model, d_k)``,
    ``w_v`` is ``(d_model, d_v)``; the answer is the tuple ``(q, k, v)`` with shapes
    ``(L, d_k)``, ``(L, d_k)``, ``(L, d_v)``, compared with
    ``lessons_lib.core.attention.project_qkv``. Returns a :class:`~lessons_lib.course.feedback.Feedback`;
    never raises.
    """
    return PROJECTION.check(fn)
