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
    start_hint="Start from the shapes the comment in the cell gives: x is (L, d_model), w_q and w_k are "
               "(d_model, d_k), w_v is (d_model, d_v). Write down the shape each result must have, then one "
               "line per result; the three go back together, as a tuple.",
    mistakes=(
        Mistake(
            "weights_on_the_left", "the two factors are in the wrong order",
            "Row i of the queries must belong to token i, so the embeddings come first: their d_model "
            "features meet the d_model rows of each weight matrix. With the weights first the sizes only "
            "fit by accident, and the result has one column per token at best, not one row.",
            ("X first: each query is made from one token's row of the embeddings.",
             "(L, d_model) and (d_model, d_k): only one order makes the inner sizes meet and keeps one row "
             "per token.",
             "Try x = np.array([[1.0, 0.0]]) (one token, d_model = 2) with w_q = np.array([[1.0, 2.0], "
             "[3.0, 4.0]]): its query must be [[1, 2]], the first row of w_q."),
            like(_each(lambda x, w: w @ x), _each(lambda x, w: w.T @ x.T)),
        ),
        Mistake(
            "transposed_weights", "the weight matrices are transposed",
            "W_Q is already (d_model, d_k): its rows match the d_model features of X. With W_Q.T the "
            "sizes only fit when d_k = d_model, and even then the numbers are wrong.",
            ("Use the weight matrices as they are given: their rows already match the features of X.",
             "A query has d_k numbers, one per column of w_q; its rows count the d_model features.",
             "Try x = np.array([[1.0, 0.0]]) with w_q = np.array([[1.0, 2.0], [3.0, 4.0]]): the query must "
             "be [[1, 2]], not [[1, 3]]."),
            like(_each(lambda x, w: x @ w.T)),
        ),
        Mistake(
            "elementwise", "* multiplies element by element",
            "x * w_q pairs up the entries that sit in the same place. A projection does more: for each "
            "token and each column of the weights it adds up the d_model products of the token's features "
            "with that column, a dot product.",
            ("Each number of a query is a dot product: one token's row with one column of the weights.",
             "The result has one row per token and one column per column of the weights: (L, d_k), "
             "whatever the shapes of x and w_q.",
             "Try x = np.array([[1.0, 2.0]]) with w_q = np.array([[1.0], [1.0]]): the query is "
             "[[3]], 1·1 + 2·1."),
            like(_each(lambda x, w: x * w), _each(lambda x, w: x * w.T)),
        ),
        Mistake(
            "same_matrix", "the same weight matrix is used for all three",
            "Q, K and V each have their own learned matrix: that is what lets a token ask for one "
            "thing (its query), be found for another (its key) and hand over a third (its value). With "
            "one matrix for all three, Q, K and V would be the same.",
            ("Each output has its own weight matrix: look at which one each of your three lines uses.",
             "Your three results are equal; in the check's cases they differ, because w_q, w_k and w_v "
             "differ.",
             "Print your three results for the case below: all three are the same array."),
            like(*(lambda x, w_q, w_k, w_v, _i=i: (x @ (w_q, w_k, w_v)[_i],) * 3 for i in range(3))),
        ),
        Mistake(
            "shared_q_k", "Q and K come from one shared matrix",
            "That is the shared projection of section 4: with Q = K the scores are symmetric and each "
            "token is pulled toward itself. Queries and keys have their own matrices, W_Q and W_K, so "
            "that what a token looks for can differ from what it offers.",
            ("Queries and keys each come from their own matrix: check the one your keys use.",
             "The keys come from w_k, the second weight argument; the queries from w_q.",
             "Print your Q and K for the case below: they are equal, and they must not be."),
            like(lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_v),
                 lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_k, x @ w_v)),
        ),
        Mistake(
            "wrong_order", "Q, K and V come back in the wrong order (or a weight is used for the wrong one)",
            "The three results are right, but not in their places: the caller unpacks "
            "`q, k, v = my_projection(...)`, so the first output must be the queries (made with w_q), the "
            "second the keys (w_k) and the third the values (w_v).",
            ("The order of the returned tuple matters: queries, then keys, then values.",
             "Read the `def` line: the weights come in the order w_q, w_k, w_v, and the outputs go back "
             "in the same order.",
             "On the case below, compare the expected Q, K and V with yours: the same arrays, in other "
             "places."),
            like(*(_reordered(order) for order in _ORDERS)),
        ),
        Mistake(
            "scaled_too_early", "the queries (or keys) are already divided by √d_k",
            "Scaling belongs to step 3, after the scores; a projection only combines each token's "
            "features with the weights.",
            ("Leave the scaling by √d_k to step 3: this step stops at the queries, keys and values.",
             "Your queries are √d_k times smaller than the expected ones, and your values are right.",
             "Try x = np.array([[1.0, 0.0]]) with w_q = np.eye(2) * 4: the query must be [[4, 0]]."),
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
