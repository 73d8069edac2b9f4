"""Reference solutions to the exercises: what a learner is asked to write, for the tests.

These live with the tests, not in ``lessons_lib``: the installed package holds no
solutions, and the checks in :mod:`lessons_lib.exercises` compare a learner's answer
with the library's own reference functions (:mod:`lessons_lib.attention`), so a
learner's copy of the course works without this file. The tests use it to prove that
each check passes a right answer written the way a learner writes it; the teachers'
copies of the notebooks carry the same code in their solution regions.

They are deliberately *not* calls into :mod:`lessons_lib.attention`: they show the
few lines of numpy a learner should arrive at, and do not validate their inputs.

The four steps of ``Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V``:

=====================  ====================================  ==========================
exercise               formula                               notebook
=====================  ====================================  ==========================
``my_projection``      ``X·W_Q, X·W_K, X·W_V``               02_step1_qkv
``my_scores``          ``scores = Q·Kᵀ``                     03_step2_scores
``my_scale``           ``scores / √d_k``                     04_step3_scale_softmax
``my_softmax``         ``exp(x_j - max x) / Σ exp(...)``     04_step3_scale_softmax
``my_weighted_sum``    ``output = weights·V``                05_step4_weighted_values
``my_softmax_off``     ``exp(s_j) / (1 + Σ_i exp(s_i))``     09_attention_in_action
``my_split_heads``     ``(L, d) → (h, L, d/h)``              06_multi_head
``my_merge_heads``     ``(h, L, d/h) → (L, d)``              06_multi_head
``my_next_token_head`` ``W_Q, W_K`` of a next-token head     06_multi_head
``my_causal_weights``  ``softmax(scores + causal −∞)``       07_causal_masking
``my_online_update``   ``m', ℓ·exp(m − m') + Σ exp(s − m')``  08_cost_and_flashattention
=====================  ====================================  ==========================
"""

from __future__ import annotations

import numpy as np

__all__ = ["my_projection", "my_softmax", "my_scores", "my_scale", "my_weighted_sum", "my_softmax_off", "my_split_heads", "my_merge_heads", "my_next_token_head", "my_causal_weights", "my_online_update"]


def my_projection(x, w_q, w_k, w_v):
    """Step 1: ``Q = X·W_Q``, ``K = X·W_K``, ``V = X·W_V``, returned as ``(q, k, v)``.

    Taught in notebook 02_step1_qkv. ``x`` is ``(L, d_model)``, one embedding per token;
    each weight matrix has ``d_model`` rows, so the product keeps one row per token.
    """
    return x @ w_q, x @ w_k, x @ w_v


def my_softmax(x):
    """Row-wise softmax over the last axis: ``softmax(x)_ij = exp(x_ij) / Σ_j' exp(x_ij')``.

    Taught in notebook 04_step3_scale_softmax. ``x`` has shape ``(seq_len, n_keys)``;
    every row of the result is a probability distribution (entries in [0, 1], summing to 1).

    Subtracting each row's maximum first changes nothing mathematically (softmax is
    unchanged when a constant is added to a whole row) but keeps ``np.exp`` from
    overflowing at scores like 1000: the largest exponent becomes ``exp(0) = 1``.
    ``keepdims=True`` keeps the reduced axis, so a ``(L, S)`` array gives ``(L, 1)``
    and each row is shifted and divided by its own numbers.
    """
    shifted = x - x.max(axis=-1, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=-1, keepdims=True)


def my_scores(Q, K):
    """All pairwise query-key dot products: ``scores = Q·Kᵀ``, entry ``(i, j) = q_i · k_j``.

    Taught in notebook 03_step2_scores. ``Q`` is ``(L, d_k)`` (one query per row),
    ``K`` is ``(S, d_k)`` (one key per row); the result is ``(L, S)``: one row per
    query, one column per key. ``K.T`` is ``(d_k, S)``, so the inner sizes ``d_k`` meet.
    """
    return Q @ K.T


def my_scale(scores, d_k):
    """Scale raw scores by the square root of the key length: ``scores / √d_k``.

    Taught in notebook 04_step3_scale_softmax. ``scores`` is ``(L, S)``; ``d_k`` is the
    length of each query/key vector (not a size of ``scores``). A dot product of two
    random vectors with ``d_k`` unit-variance entries has variance ``d_k``; dividing by
    ``√d_k`` brings it back to about 1, so softmax does not saturate. Returns a new
    array and leaves ``scores`` untouched.
    """
    return scores / np.sqrt(d_k)


def my_weighted_sum(weights, V):
    """Mix the value vectors with the attention weights: ``output = weights·V``.

    Taught in notebook 05_step4_weighted_values. ``weights`` is ``(L, S)`` (each row
    sums to 1), ``V`` is ``(S, d_v)``; the result is ``(L, d_v)``, and its row ``i`` is
    ``Σ_j weights[i, j] · v_j``, a weighted average of the rows of ``V``.
    """
    return weights @ V


def my_softmax_off(scores):
    """Notebook 09: softmax with an off slot, exp(s_j) / (1 + Σ exp(s_i)), stable for any scores."""
    m = np.maximum(scores.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(scores - m)
    return e / (np.exp(-m) + e.sum(axis=-1, keepdims=True))
def my_split_heads(x, n_heads):
    """``(L, d_model)`` → ``(n_heads, L, d_head)``: head i gets columns i·d_head … (i+1)·d_head − 1.

    Taught in notebook 06_multi_head. The reshape only groups each token's columns by head
    (a view: no number moves); the transpose brings the head axis to the front.
    """
    L, d_model = x.shape
    return x.reshape(L, n_heads, d_model // n_heads).transpose(1, 0, 2)


def my_merge_heads(heads):
    """``(n_heads, L, d_head)`` → ``(L, n_heads·d_head)``: Concat(head_1, …, head_h), row by row.

    Taught in notebook 06_multi_head: the split undone in reverse order.
    """
    n_heads, L, d_head = heads.shape
    return heads.transpose(1, 0, 2).reshape(L, n_heads * d_head)


def my_next_token_head(seq_len):
    """``(W_Q, W_K)`` of a head that looks at the next token, for one-hot positions X = I.

    Taught in notebook 06_multi_head. Query i = 20·e_(i+1), key j = e_j: q_i·k_j = 20 only
    for j = i + 1; after dividing by √d_head the gap is still large enough for softmax to put
    almost all of the weight there.
    """
    return 20.0 * np.eye(seq_len, k=1), np.eye(seq_len)


def my_causal_weights(scores):
    """Causal attention weights of square scores ``(L, L)``: −∞ above the diagonal, then softmax.

    Taught in notebook 07_causal_masking. ``mask`` is True where key j ≤ query i (may attend).
    """
    mask = np.tril(np.ones(scores.shape, dtype=bool))
    masked = np.where(mask, scores, -np.inf)
    exps = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)
def my_online_update(m, ell, chunk):
    """The online-softmax update for rows: m, ell (rows,), chunk (rows, c) -> (m_new, ell_new).

    Notebook 08. A row that has seen only -inf is shifted by 0, so it stays m = -inf, ell = 0.
    """
    m_new = np.maximum(m, chunk.max(axis=-1))
    safe = np.where(m_new == -np.inf, 0.0, m_new)
    ell_new = ell * np.exp(m - safe) + np.exp(chunk - safe[:, None]).sum(axis=-1)
    return m_new, ell_new
