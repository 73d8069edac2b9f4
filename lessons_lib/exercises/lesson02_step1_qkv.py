"""Exercise of notebook 02_step1_qkv: the learner writes ``my_projection(x, w_q, w_k, w_v) -> (q, k, v)``.

Step 1 of attention: ``Q = X·W_Q``, ``K = X·W_K``, ``V = X·W_V``. Content only (cases and
candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..core import attention
from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

__all__ = ["check_projection"]


def _random_case(rng, n_tokens, d_model, d_k, d_v, kind="random"):
    return Case(
        f"{kind} X {n_tokens}×{d_model} ({n_tokens} tokens, d_model = {d_model}), "
        f"W_Q and W_K {d_model}×{d_k}, W_V {d_model}×{d_v}",
        {"x": rng.normal(size=(n_tokens, d_model)),
         "w_q": rng.normal(size=(d_model, d_k)), "w_k": rng.normal(size=(d_model, d_k)),
         "w_v": rng.normal(size=(d_model, d_v))},
    )


def _cases() -> list[Case]:
    # L (tokens), d_model, d_k, d_v all differ in the first case, so a product in the wrong order
    # or a transposed weight cannot fit by accident; later cases make W_Q and W_K square (d_k =
    # d_model) and all three outputs the same shape, so those mistakes give numbers, not errors.
    return rng_cases([(3, 6, 2, 5), (5, 3, 3, 3), (6, 5, 5, 2)], 15, _random_case)


def _hidden(rng) -> list[Case]:
    """Unseen cases of the same three kinds: all sizes different; square weights and outputs of one
    shape; square W_Q and W_K with another d_v."""
    a = distinct_sizes(rng, 4)
    b = distinct_sizes(rng, 2)
    c = distinct_sizes(rng, 3)
    return [_random_case(rng, *a, kind="unseen"), _random_case(rng, b[0], b[1], b[1], b[1], kind="unseen"),
            _random_case(rng, c[0], c[1], c[1], c[2], kind="unseen")]


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
    library_answers=(attention.project_qkv,),
    hidden=_hidden,
    start_hint="Each output is one matrix product of the embeddings with one weight matrix. Write the "
               "shapes down first: X is (L, d_model) and W_Q is (d_model, d_k); which order of the two "
               "gives one row per token? The function hands back the three results together, as a tuple.",
    mistakes=(
        Mistake(
            "weights_on_the_left", "the product is in the wrong order (W·X instead of X·W)",
            "A matrix product is not commutative. X has one row per token, (L, d_model), and W_Q turns "
            "d_model features into d_k: only X @ W_Q lines up d_model with d_model and keeps one row "
            "per token. W_Q @ X (or Wᵀ·Xᵀ) gives the transpose at best, one column per token.",
            ("Put X first in each product: the token axis must stay the first axis of the result.",
             "Write the shapes of each product: (L, d_model) times (d_model, d_k) is the one that fits."),
            like(_each(lambda x, w: w @ x), _each(lambda x, w: w.T @ x.T)),
        ),
        Mistake(
            "transposed_weights", "the weight matrices are transposed",
            "W_Q is already (d_model, d_k): its rows match the d_model features of X. With W_Q.T the "
            "sizes only fit when d_k = d_model, and even then the numbers are wrong.",
            "Use the weight matrices as they are given: their rows already match the features of X.",
            like(_each(lambda x, w: x @ w.T)),
        ),
        Mistake(
            "elementwise", "* multiplies element by element instead of a matrix product",
            "x * w_q pairs up matching entries; a projection sums over the d_model features of each "
            "token, which is what @ does.",
            "A projection is a matrix product (the @ operator), not an element-wise one (*).",
            like(_each(lambda x, w: x * w), _each(lambda x, w: x * w.T)),
        ),
        Mistake(
            "same_matrix", "the same weight matrix is used for all three",
            "Q, K and V each have their own learned matrix: that is what lets a token ask for one "
            "thing (its query), be found for another (its key) and hand over a third (its value). With "
            "one matrix for all three, Q, K and V would be the same.",
            "Each output has its own weight matrix: look at which one each of your three lines uses.",
            like(*(lambda x, w_q, w_k, w_v, _i=i: (x @ (w_q, w_k, w_v)[_i],) * 3 for i in range(3))),
        ),
        Mistake(
            "shared_q_k", "Q and K come from one shared matrix",
            "That is the shared projection of section 4: with Q = K the scores are symmetric and each "
            "token is pulled toward itself. Queries and keys have their own matrices, W_Q and W_K, so "
            "that what a token looks for can differ from what it offers.",
            ("Queries and keys each come from their own matrix: check the one your keys use.",
             "The keys come from w_k, the second weight argument; the queries from w_q."),
            like(lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_v),
                 lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_k, x @ w_v)),
        ),
        Mistake(
            "wrong_order", "Q, K and V come back in the wrong order (or a weight is used for the wrong one)",
            "The three products are right, but not in their places: the caller unpacks "
            "`q, k, v = my_projection(...)`, so the first output must be X·W_Q, the second X·W_K and "
            "the third X·W_V.",
            ("The order of the returned tuple matters: queries, then keys, then values.",
             "Read the `def` line: the weights come in the order w_q, w_k, w_v, and the outputs go back "
             "in the same order."),
            like(*(_reordered(order) for order in _ORDERS)),
        ),
        Mistake(
            "scaled_too_early", "the queries (or keys) are already divided by √d_k",
            "Scaling belongs to step 3, after the scores Q·Kᵀ; the projection itself is only X·W.",
            "The projection is only the matrix product; leave the division by √d_k to step 3.",
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
