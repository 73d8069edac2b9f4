"""Wrong answers to the exercises, written the way learners write them, and the checks' own candidates.

The exercise tests (``tests/exercises/``) hand these to the checks: :data:`MISTAKES` (each listed mistake
of every exercise, as a learner writes it, with the words its feedback must say), :data:`UNSTABLE_SOFTMAXES`
(softmaxes shifted by anything but each row's own maximum), :func:`table_candidates` (every wrong
implementation in the exercises' own tables) and :func:`first_of_each`, which keeps one entry of each
mistake (or exercise) in `make check` and the others in `make test` only (marked ``slow``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import lessons_lib as ll
from lessons_lib import exercises
from tests.helpers import solutions
from tests.helpers.wrong_answers_part3 import PART_III

# Notebook variables the buggy weighted sums read by mistake: this module's globals play the notebook's role
# (the check looks for the arrays a learner's function reads from its globals).
K = np.arange(12.0).reshape(4, 3)
v = np.ones((3, 2))


# ------------------------------------------------------------------ lesson 04: softmax
def _softmax_no_max(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_math_exp(x):  # a loop with math.exp raises OverflowError at 1000
    rows = [[math.exp(value) for value in row] for row in x]
    return np.array([[value / sum(row) for value in row] for row in rows])


def softmax_axis0(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _softmax_global_max(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=1, keepdims=True)


def _softmax_no_keepdims(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1)


def _softmax_whole_sum(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum()


def _softmax_unnormalised(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def softmax_in_place(x):
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def _softmax_minus_mean(x):
    e = np.exp(x - x.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_floor(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e // e.sum(axis=-1, keepdims=True)


def _scale_in_place(scores, d_k):
    scores /= np.sqrt(d_k)
    return scores


# ------------------------------------------------------------------ lesson 09: softmax with an off slot
def _off_shifted_plus_one(scores):  # notebook 09: the row maximum subtracted, the off slot left at 1
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / (1 + np.sum(e, axis=1, keepdims=True))


def _off_shifted(scores, m, plus_one=False):  # the stable formula shifted by m; + 1 instead of exp(−m)
    with np.errstate(all="ignore"):
        e = np.exp(scores - m)
        return e / ((1 if plus_one else np.exp(-m)) + e.sum(axis=1, keepdims=True))


# ------------------------------------------------------------------ lesson 08: the online-softmax update
def _online(sum_line, max_line="np.maximum(m, chunk.max(axis=-1))", ret="m_new, ell_new"):
    namespace = {"np": np}
    exec(f"def f(m, ell, chunk):\n    m_new = {max_line}\n    ell_new = {sum_line}\n    return {ret}\n",
         namespace)
    return namespace["f"]


_TEXTBOOK_SUM = "ell * np.exp(m - m_new) + np.exp(chunk - m_new[:, None]).sum(axis=1)"


# ------------------------------------------------------------------ lesson 07: causal weights
def _naive_softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)


def _renormalised(scores):
    weights = ll.softmax(scores) * np.tril(np.ones(scores.shape))
    return weights / weights.sum(axis=1, keepdims=True)


def _tril_weights(k):
    return lambda s: ll.softmax(np.where(np.tril(np.ones(s.shape, bool), k), s, -np.inf))


# ------------------------------------------------------------------ lesson 11: RoPE
def learners_rope(x, positions, convention, *, refuse=True, speeds=None, degrees=False, backwards=False,
                  swapped=False):
    """RoPE on one array, written out the way a learner writes it (the numpy idioms of the lesson); the
    keywords put one mistake in (``speeds``: a function of d giving the pairs' speeds)."""
    d = x.shape[-1]
    if refuse and d % 2:
        raise ValueError(f"d_head = {d} is odd")
    theta = speeds(d) if speeds else 10000.0 ** (-np.arange(0, d, 2) / d)
    angle = np.asarray(positions)[:, None] * theta
    if degrees:
        angle = np.radians(angle)
    cos, sin = np.cos(angle), np.sin(angle)
    if swapped:
        cos, sin = sin, cos
    if backwards:
        sin = -sin
    if convention == "half":
        a, b = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return np.stack([a * cos - b * sin, b * cos + a * sin], axis=-1).reshape(x.shape)


def _rope_qk(**mistake):
    """``my_rope`` that turns Q and K with one mistake and hands V over."""
    def my_rope(q, k, v, positions, convention="half"):
        return (learners_rope(q, positions, convention, **mistake),
                learners_rope(k, positions, convention, **mistake), v)
    return my_rope


def _rope_layout(layout):
    """``my_rope`` that picks the pairs by ``layout(convention)`` instead of by the convention asked."""
    def my_rope(q, k, v, positions, convention="half"):
        pairs = layout(convention)
        return learners_rope(q, positions, pairs), learners_rope(k, positions, pairs), v
    return my_rope


def _rope_v_at_qs_speeds(q, k, v, positions, convention="half"):
    """``my_rope`` that turns V too, with the speeds of Q's d_head spread over V's own width."""
    d = q.shape[-1]
    turned_v = learners_rope(v, positions, convention,
                             speeds=lambda width: 10000.0 ** (-np.arange(0, width, 2) / d))
    return learners_rope(q, positions, convention), learners_rope(k, positions, convention), turned_v


def _rope_returns_on_odd(q, k, v, positions, convention="half"):
    if q.shape[-1] % 2:
        return q, k, v
    return learners_rope(q, positions, convention), learners_rope(k, positions, convention), v


def _rope_type_error_on_odd(q, k, v, positions, convention="half"):
    if q.shape[-1] % 2:
        raise TypeError("odd")
    return learners_rope(q, positions, convention), learners_rope(k, positions, convention), v


def _rope_row_numbers(q, k, v, positions, convention="half"):
    rows = np.arange(q.shape[-2])                                   # the row numbers, not the positions
    return learners_rope(q, rows, convention), learners_rope(k, rows, convention), v


# ------------------------------------------------------------------ lesson 12: a decode step, shared heads
def _softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _decode(q, keys, values, past, mask=True, scale=None):
    """The new tokens' attention over ``keys``, as a learner writes it: new token i sees keys 0 … past + i."""
    scores = q @ keys.T / (np.sqrt(q.shape[-1]) if scale is None else scale)
    if mask:
        scores = np.where(np.arange(len(keys)) <= past + np.arange(len(q))[:, None], scores, -np.inf)
    return _softmax_rows(scores) @ values


def _decode_attends_then_appends(q, k, v, k_cache, v_cache):
    scores = q @ k_cache.T / np.sqrt(q.shape[-1])
    out = _softmax_rows(scores) @ v_cache if k_cache.shape[0] else np.zeros((q.shape[0], v.shape[1]))
    return out, np.vstack([k_cache, k]), np.vstack([v_cache, v])


def _decode_attends_then_appends_unguarded(q, k, v, k_cache, v_cache):
    """As a learner writes it: the scores over the cache before the new keys join it, and no thought for the
    first step (its empty cache makes the softmax's max fail)."""
    scores = q @ k_cache.T / np.sqrt(q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v_cache, np.concatenate([k_cache, k]), np.concatenate([v_cache, v])


def _decode_appends_twice(q, k, v, k_cache, v_cache):
    k_cache, v_cache = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])          # appended again
    return _decode(q, keys, values, keys.shape[0] - q.shape[0]), k_cache, v_cache


def _decode_no_mask(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    return _decode(q, keys, values, len(k_cache), mask=False), keys, values


def _decode_tril_mask(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    mask = np.tril(np.ones((len(q), len(keys)), bool))
    scores = np.where(mask, q @ keys.T / np.sqrt(q.shape[-1]), -np.inf)
    return _softmax_rows(scores) @ values, keys, values


def _decode_scaled(scale):
    def my_decode_step(q, k, v, k_cache, v_cache):
        keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
        return _decode(q, keys, values, len(k_cache), scale=scale(q.shape[-1])), keys, values
    return my_decode_step


def _decode_old_caches(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    return _decode(q, keys, values, len(k_cache)), k_cache, v_cache


def _decode_prepended(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k, k_cache]), np.vstack([v, v_cache])          # the new tokens first
    return _decode(q, keys, values, len(k_cache)), keys, values


def _rope_step(positions_of, turn_q=True, turn_k=True):
    """``my_rope_step`` as a learner writes it, with the positions ``positions_of(past, n)``."""
    def my_rope_step(q, k, past):
        positions = positions_of(past, len(q))
        return (ll.rope(q, positions) if turn_q else q), (ll.rope(k, positions) if turn_k else k)
    return my_rope_step


def _refusing(repeat):
    """``my_repeat_kv`` that refuses head counts that cannot share, then shares them with ``repeat``."""
    def my_repeat_kv(kv, n_heads):
        n_kv = kv.shape[-3]
        if n_heads % n_kv:
            raise ValueError(f"n_heads = {n_heads} is not a multiple of n_kv_heads = {n_kv}")
        return repeat(kv, n_heads, n_kv)
    return my_repeat_kv


def _tile_heads(kv, n_heads, n_kv):
    reps = [1] * kv.ndim
    reps[-3] = n_heads // n_kv
    return np.tile(kv, reps)


def _broadcast_heads_in_turn(kv, n_heads, n_kv):
    group = n_heads // n_kv
    expanded = np.broadcast_to(kv[..., None, :, :, :], (*kv.shape[:-3], group, *kv.shape[-3:]))
    return expanded.reshape(*kv.shape[:-3], n_heads, *kv.shape[-2:])


def _repeat_kv_numpys_words(kv, n_heads):
    group = n_heads // kv.shape[-3]
    return np.repeat(kv, group, axis=-3).reshape(*kv.shape[:-3], n_heads, *kv.shape[-2:])


#: (exercise, a learner's wrong function, the mistake its check must name, words its message and hint say)
MISTAKES = [
    # lesson 02
    ("my_projection", lambda x, w_q, w_k, w_v: (w_q @ x, w_k @ x, w_v @ x), "weights_on_the_left",
     ["wrong order", "X first"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (w_q.T @ x.T, w_k.T @ x.T, w_v.T @ x.T), "weights_on_the_left",
     ["X first"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_q.T, x @ w_k.T, x @ w_v.T), "transposed_weights",
     ["transposed"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x * w_q, x * w_k, x * w_v), "elementwise",
     ["element by element"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_q), "same_matrix",
     ["same weight matrix"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_v,) * 3, "same_matrix", ["own learned matrix"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_v), "shared_q_k",
     ["shared projection", "W_K"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_k, x @ w_v), "shared_q_k",
     ["one shared matrix"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_q, x @ w_v), "wrong_order", ["wrong order"]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_v, x @ w_k, x @ w_q), "wrong_order", ["q, k, v ="]),
    ("my_projection", lambda x, w_q, w_k, w_v: (x @ w_q / np.sqrt(w_q.shape[1]), x @ w_k, x @ w_v),
     "scaled_too_early", ["√d_k"]),
    # lesson 03
    ("my_scores", lambda Q, K: Q @ K, "k_not_transposed", ["as they are stored"]),
    ("my_scores", lambda Q, K: np.dot(Q, K), "k_not_transposed", ["as they are stored"]),
    ("my_scores", lambda Q, K: Q.T @ K, "q_transposed", ["(d_k, d_k)", "features of Q are paired"]),
    ("my_scores", lambda Q, K: K @ Q.T, "swapped", ["swapped"]),
    ("my_scores", lambda Q, K: Q * K, "elementwise", ["element by element"]),
    ("my_scores", lambda Q, K: (Q * K).sum(axis=-1), "elementwise",
     ["element by element", "Every query must meet every key"]),
    ("my_scores", lambda Q, K: Q @ K.T / np.sqrt(K.shape[1]), "scaled_too_early", ["√d_k", "next step"]),
    ("my_scores", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[0]), "scaled_too_early", ["divided by 1.414"]),
    ("my_scores", lambda Q, K: solutions.my_softmax(Q @ K.T), "softmax_too_early", ["softmax"]),
    # lesson 04: softmax
    ("my_softmax", _softmax_no_max, "no_max_subtraction", ["1000", "NaN", "overflow"]),
    ("my_softmax", _softmax_math_exp, "no_max_subtraction", ["overflow"]),
    ("my_softmax", softmax_axis0, "wrong_axis", ["wrong axis", "columns sum to 1",
                                                 "your columns to [1.0, 1.0, 1.0]"]),
    ("my_softmax", _softmax_global_max, "global_max", ["whole array", "each row"]),
    ("my_softmax", _softmax_no_keepdims, "missing_keepdims", ["line up with the columns"]),
    ("my_softmax", _softmax_whole_sum, "whole_sum", ["whole array"]),
    ("my_softmax", _softmax_unnormalised, "not_normalised", ["row sums"]),
    ("my_softmax", softmax_in_place, "mutates_input", ["in place", "`x`"]),
    ("my_softmax", _softmax_minus_mean, "shift_not_row_max", ["710", "more than 710"]),
    ("my_softmax", lambda x: _softmax_no_max(x - x[..., :1]), "shift_not_row_max", ["more than 710", "710"]),
    ("my_softmax", lambda x: _softmax_no_max(x - x.min(axis=-1, keepdims=True)), "shift_not_row_max",
     ["minimum"]),
    ("my_softmax", _softmax_floor, "floor_division", ["//", "fractions"]),
    # lesson 04: scaling
    ("my_scale", lambda scores, d_k: scores, "forgot_scaling", ["scaling is missing"]),
    ("my_scale", lambda scores, d_k: scores / d_k, "divided_by_d_k", ["shrink by a factor of d_k"]),
    ("my_scale", lambda scores, d_k: scores * np.sqrt(d_k), "multiplied", ["grow instead of shrinking"]),
    ("my_scale", lambda scores, d_k: scores * d_k, "multiplied", ["grow instead of shrinking"]),
    ("my_scale", lambda scores, d_k: scores / (d_k ** 1 / 2), "power_precedence", ["d_k ** 1/2"]),
    ("my_scale", lambda scores, d_k: scores / np.sqrt(scores.shape[-1]), "d_k_from_shape", ["shape"]),
    ("my_scale", lambda scores, d_k: solutions.my_softmax(scores / np.sqrt(d_k)), "softmax_too_early",
     ["softmax"]),
    ("my_scale", lambda scores, d_k: scores // np.sqrt(d_k), "floor_division", ["//"]),
    ("my_scale", lambda scores, d_k: scores / 8, "fixed_number", ["whatever d_k is", "8 times smaller"]),
    ("my_scale", lambda scores, d_k: scores / np.sqrt(16), "fixed_number",
     ["whatever d_k is", "4 times smaller"]),
    ("my_scale", lambda scores, d_k: scores / np.sqrt(d_k + 1), "wrong_divisor",
     ["3.162 times smaller", "a factor of 3"]),
    ("my_scale", _scale_in_place, "mutates_input", ["in place", "`scores`"]),
    # lesson 05
    ("my_weighted_sum", lambda weights, V: weights @ K, "weights_on_keys", ["K instead of V", "`K`"]),
    ("my_weighted_sum", lambda weights, V: weights @ v, "uses_global", ["`v`", "`V`"]),
    ("my_weighted_sum", lambda weights, V: weights.T @ V, "transposed_weights", ["transposed"]),
    ("my_weighted_sum", lambda weights, V: V @ weights, "reversed_order", ["wrong order"]),
    ("my_weighted_sum", lambda weights, V: V.T @ weights.T, "transposed_result", ["transposed", "(d_v, L)"]),
    ("my_weighted_sum", lambda weights, V: (weights @ V).T, "transposed_result", ["transposed"]),
    ("my_weighted_sum", lambda weights, V: weights @ V.T, "v_transposed", ["V is transposed"]),
    ("my_weighted_sum", lambda weights, V: weights * V, "elementwise", ["element by element"]),
    ("my_weighted_sum", lambda weights, V: weights @ V / V.shape[0], "divided_by_s",
     ["divided by S", "already"]),
    ("my_weighted_sum", lambda weights, V: (weights[:, :, None] * V[None]).mean(axis=1), "divided_by_s",
     ["number of keys"]),
    ("my_weighted_sum", lambda weights, V: solutions.my_softmax(weights) @ V, "softmax_again", ["again"]),
    # lesson 06
    ("my_split_heads", lambda x, n_heads: x.reshape(n_heads, len(x), -1), "reshape_only",
     ["in one step", "reading order"]),
    ("my_split_heads", lambda x, n_heads: x.reshape(len(x), n_heads, -1), "view_only",
     ["not moved to the front"]),
    ("my_split_heads", lambda x, n_heads: np.stack([x[:, i::n_heads] for i in range(n_heads)]),
     "interleaved", ["every n_heads-th column"]),
    ("my_split_heads", lambda x, n_heads: x.reshape(len(x), n_heads, -1).transpose(2, 0, 1),
     "wrong_transpose", ["wrong order", "features stay last"]),
    ("my_split_heads", lambda x, n_heads: x.reshape(len(x), -1, n_heads).transpose(1, 0, 2),
     "heads_and_size_swapped", ["n_heads and d_head are swapped"]),
    ("my_merge_heads", lambda heads: heads.reshape(heads.shape[1], -1), "reshape_only",
     ["in one step", "reading order"]),
    ("my_merge_heads", lambda heads: np.stack(list(heads), axis=-1).reshape(heads.shape[1], -1),
     "interleaved", ["interleaved", "side by side"]),
    ("my_merge_heads", lambda heads: np.concatenate(list(heads), axis=0), "stacked_tokens",
     ["under each other"]),
    ("my_merge_heads", lambda heads: sum(heads), "summed", ["added"]),
    ("my_next_token_head", lambda n: (10 * np.eye(n, k=-1), np.eye(n)), "previous_token",
     ["previous token"]),
    ("my_next_token_head", lambda n: (np.eye(n, k=1), np.eye(n)), "too_soft", ["leans the right way"]),
    ("my_next_token_head", lambda n: (5 * np.eye(n), 5 * np.eye(n)), "itself", ["itself"]),
    # lesson 07
    ("my_causal_weights", lambda s: ll.softmax(s) * np.tril(np.ones_like(s)), "mask_after_softmax",
     ["after the softmax"]),
    ("my_causal_weights", _renormalised, "renormalised_after_softmax", ["On paper", "underflows", "NaN"]),
    # nn.MultiheadAttention's causal mask (True = blocked) used as SDPA's (True = may attend)
    ("my_causal_weights",
     lambda s: _naive_softmax(np.where(torch.triu(torch.ones(len(s), len(s)), 1).bool().numpy(), s, -np.inf)),
     "inverted", ["convention trap", "True = blocked"]),
    ("my_causal_weights", _tril_weights(-1), "no_diagonal", ["itself"]),
    ("my_causal_weights", lambda s: ll.softmax(s * np.tril(np.ones(s.shape))), "zero_not_minus_infinity",
     ["instead of −∞", "no weight"]),
    ("my_causal_weights", lambda s: ll.softmax(np.where(np.triu(np.ones(s.shape, bool)), s, -np.inf)),
     "upper_triangle", ["future is allowed", "looks ahead"]),
    ("my_causal_weights", _tril_weights(1), "one_diagonal_too_many", ["one step into the future"]),
    ("my_causal_weights", lambda s: ll.softmax(np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf), axis=0),
     "columns", ["down the columns"]),
    ("my_causal_weights", lambda s: ll.softmax(s), "no_mask", ["no mask"]),
    # lesson 08
    ("my_online_update", _online(_TEXTBOOK_SUM, ret="ell_new, m_new"), "swapped_outputs",
     ["wrong order", "(m_new, ell_new)"]),
    ("my_online_update", _online("ell + np.exp(chunk - m_new[:, None]).sum(axis=1)"), "no_rescale",
     ["not brought up to date", "old m"]),
    ("my_online_update", _online("ell * np.exp(m_new - m) + np.exp(chunk - m_new[:, None]).sum(axis=1)"),
     "rescale_upside_down", ["upside down", "goes the wrong way"]),
    ("my_online_update", _online("ell * np.exp(m - m_new) + np.exp(chunk - m[:, None]).sum(axis=1)"),
     "old_max_for_chunk", ["measured against the old m", "same number, m_new"]),
    ("my_online_update", _online("ell + np.exp(chunk).sum(axis=1)"), "no_max_subtraction", ["overflow"]),
    ("my_online_update", _online(_TEXTBOOK_SUM.replace("m_new[:, None]", "m_new[:, np.newaxis]"),
                                 max_line="chunk.max(axis=1)"), "chunk_max_only", ["forgets the old one"]),
    ("my_online_update", _online("ell * np.exp(m - m_new) + np.exp(chunk - m_new).sum(axis=0)",
                                 max_line="np.maximum(m, chunk.max(axis=0))"), "wrong_axis",
     ["down its columns", "along its rows"]),
    ("my_online_update", _online("ell * np.exp(m - m_new) + np.exp(chunk - m_new).sum(axis=1)"), "no_column",
     ["does not line up with the rows of chunk"]),
    ("my_online_update", _online(_TEXTBOOK_SUM), "nan_for_masked_row", ["-inf", "NaN"]),
    # lesson 09
    ("my_softmax_off", lambda scores: solutions.my_softmax(scores), "plain_softmax",
     ["no off slot", "sum to exactly 1"]),
    ("my_softmax_off", _off_shifted_plus_one, "off_slot_not_shifted",
     ["off slot", "off slot is left as it was"]),
    # the hint's own warning: m = max(0, row maximum), then + 1 instead of + exp(−m)
    ("my_softmax_off",
     lambda scores: _off_shifted(scores, np.maximum(scores.max(axis=1, keepdims=True), 0), plus_one=True),
     "off_slot_not_shifted", ["off slot", "off slot is left as it was"]),
    # a stable-looking formula shifted by the wrong constant: NaN on rows far apart or spanning > exp's range
    ("my_softmax_off", lambda scores: _off_shifted(scores, max(scores.max(), 0.0)), "shift_not_per_row",
     ["each row", "NaN"]),
    ("my_softmax_off", lambda scores: _off_shifted(scores, scores.min(axis=1, keepdims=True)),
     "shift_not_per_row", ["each row", "NaN"]),
    ("my_softmax_off", lambda scores: _off_shifted(scores, scores.mean(axis=1, keepdims=True)),
     "shift_not_per_row", ["each row", "NaN"]),
    # shifted by each row's first score, not its largest: overflows where the largest is far above it
    ("my_softmax_off", lambda scores: _off_shifted(scores, np.maximum(scores[:, :1], 0)), "shift_by_first",
     ["first score", "largest", "NaN"]),
    ("my_softmax_off", lambda scores: np.exp(scores) / (1 + np.exp(scores).sum(axis=-1, keepdims=True)),
     "no_max_subtraction", ["overflow", "NaN"]),
    ("my_softmax_off", lambda scores: np.exp(scores) / (np.exp(scores) + 1).sum(axis=1, keepdims=True),
     "one_per_key", ["once"]),
    ("my_softmax_off", lambda scores: 1 / (1 + np.exp(-scores)), "sigmoid", ["sigmoid", "compete"]),
    ("my_softmax_off", lambda scores: solutions.my_softmax_off(scores.T).T, "wrong_axis", ["columns"]),
    # lesson 11
    ("my_rope", lambda q, k, v, positions, convention="half": tuple(
        learners_rope(x, positions, convention) for x in (q, k, v)), "values_rotated",
     ["V turned", "V came back changed"]),
    # the learner of issue 55: V turned at the speeds of Q's d_head (not of its own width), "three times in a
    # row" answered "the numbers are off"
    ("my_rope", _rope_v_at_qs_speeds, "values_rotated", ["V turned", "V came back changed"]),
    ("my_rope", lambda q, k, v, positions, convention="half": (learners_rope(q, positions, convention), k, v),
     "only_one_turned", ["One of Q and K came back as it went in"]),
    ("my_rope", _rope_layout(lambda convention: "interleaved"), "interleaved_for_half", ["“half” cases"]),
    ("my_rope", _rope_layout(lambda convention: "half"), "half_for_interleaved", ["“interleaved” cases"]),
    ("my_rope", _rope_layout(lambda convention: "interleaved" if convention == "half" else "half"),
     "conventions_swapped", ["each layout is the other's"]),
    ("my_rope", _rope_qk(speeds=lambda d: np.ones(d // 2)), "one_frequency", ["same angle"]),
    ("my_rope", _rope_qk(speeds=lambda d: 10000.0 ** (-np.arange(d // 2) / d)), "speeds_fall_too_slowly",
     ["too gently"]),
    ("my_rope", _rope_qk(speeds=lambda d: 10000.0 ** (np.arange(0, d, 2) / d)), "speeds_rise",
     ["faster than the first"]),
    ("my_rope", _rope_qk(speeds=lambda d: np.exp(-np.arange(0, d, 2) / d)), "no_base", ["base 10000"]),
    ("my_rope", _rope_qk(degrees=True), "degrees", ["57.3 times too small", "degrees"]),
    ("my_rope", _rope_qk(swapped=True), "sin_cos_swapped", ["a turn by 0 must leave a vector as it is"]),
    ("my_rope", _rope_qk(backwards=True), "turns_backwards", ["clockwise"]),
    ("my_rope", _rope_row_numbers, "positions_ignored", ["whatever positions the call gives"]),
    ("my_rope", _rope_qk(refuse=False), "odd_d_head", ["numpy's words", "d_head = 5 is odd"]),
    ("my_rope", _rope_returns_on_odd, "odd_d_head", ["returned arrays anyway"]),
    ("my_rope", _rope_type_error_on_odd, "odd_d_head", ["raised TypeError"]),
    # lesson 12
    ("my_decode_step", _decode_attends_then_appends, "not_appended_first", ["not its own key"]),
    ("my_decode_step", _decode_attends_then_appends_unguarded, "not_appended_first",
     ["does not see its own key", "before the scores"]),
    ("my_decode_step", _decode_appends_twice, "appended_twice", ["twice", "weighed double"]),
    ("my_decode_step", _decode_no_mask, "future_position", ["see the future"]),
    ("my_decode_step", _decode_tril_mask, "mask_top_left", ["bottom-right"]),
    ("my_decode_step", _decode_scaled(lambda d_k: 1.0), "no_scale", ["scaling is missing"]),
    ("my_decode_step", _decode_scaled(lambda d_k: d_k), "scaled_by_d_k", ["d_k times smaller"]),
    ("my_decode_step", _decode_old_caches, "cache_not_updated", ["the caches you return are the old ones"]),
    ("my_decode_step", _decode_prepended, "prepended", ["new tokens first"]),
    ("my_rope_step", _rope_step(lambda past, n: np.arange(n)), "offset_bug",
     ["offset bug", "as if nothing came before them", "negative distance"]),
    ("my_rope_step", _rope_step(lambda past, n: range(n)), "offset_bug", ["offset bug"]),
    ("my_rope_step", _rope_step(lambda past, n: np.arange(past + 1, past + n + 1)), "one_too_far",
     ["past + 1"]),
    ("my_rope_step", _rope_step(lambda past, n: [past] * n), "one_position_for_all", ["all turned at one"]),
    ("my_rope_step", _rope_step(lambda past, n: past + np.arange(n), turn_k=False), "key_not_turned",
     ["keys come back as they went in"]),
    ("my_rope_step", _rope_step(lambda past, n: past + np.arange(n), turn_q=False), "query_not_turned",
     ["queries come back as they went in"]),
    ("my_repeat_kv", _refusing(_tile_heads), "tiled", ["in turn", "neighbours"]),
    ("my_repeat_kv", _refusing(_broadcast_heads_in_turn), "tiled", ["in turn"]),
    ("my_repeat_kv", _refusing(lambda kv, n_heads, n_kv: np.repeat(kv, n_heads // n_kv, axis=-2)),
     "tokens_repeated", ["more tokens", "third axis from the end"]),
    ("my_repeat_kv", _refusing(lambda kv, n_heads, n_kv: np.repeat(kv, n_heads // n_kv, axis=0)),
     "first_axis", ["batch"]),
    ("my_repeat_kv", _refusing(lambda kv, n_heads, n_kv: np.repeat(kv, n_heads, axis=-3)), "group_size",
     ["size of its group"]),
    ("my_repeat_kv", lambda kv, n_heads: np.repeat(kv, max(n_heads // kv.shape[-3], 1), axis=-3),
     "not_refused", ["not a multiple of"]),
    ("my_repeat_kv", _repeat_kv_numpys_words, "not_refused", ["numpy's words"]),
] + PART_III   # lessons 13 and 14: tests/helpers/wrong_answers_part3.py


# ------------------------------------------------------------------ softmaxes shifted by the wrong constant
def _minus(shift):
    def softmax(x):
        e = np.exp(x - shift(x))
        return e / e.sum(axis=-1, keepdims=True)
    return softmax


#: Softmaxes right on ordinary scores and NaN (or wrong) on rows beyond exp's range: none may pass.
UNSTABLE_SOFTMAXES = {
    "no shift": _minus(lambda x: 0),
    "row mean": _minus(lambda x: x.mean(axis=-1, keepdims=True)),
    "row min": _minus(lambda x: x.min(axis=-1, keepdims=True)),
    "row median": _minus(lambda x: np.median(x, axis=-1, keepdims=True)),
    "first entry": _minus(lambda x: x[..., :1]),
    "fixed 1000": _minus(lambda x: 1000.0),
    "global max": _minus(lambda x: x.max()),
    "column max": _minus(lambda x: x.max(axis=0, keepdims=True)),
    "clipped logits": lambda x: _minus(lambda y: 0)(np.clip(x, -700, 700)),
    "half the max": _minus(lambda x: x.max(axis=-1, keepdims=True) / 2),
}


# ------------------------------------------------------------------ the exercises' own tables
def table_candidates(exercise) -> list:
    """Every wrong implementation in ``exercise``'s table of mistakes, as (mistake key, candidate)."""
    return [(mistake.key, candidate) for mistake in exercise.mistakes
            for test in getattr(mistake.test, "tests", (mistake.test,))
            for candidate in getattr(test, "candidates", ())]


def every_table_candidate() -> list:
    """(exercise, mistake key, candidate, its index in the mistake) of every exercise's table."""
    found = []
    for exercise in exercises.EXERCISES.values():
        seen: dict[str, int] = {}
        for key, candidate in table_candidates(exercise):
            found.append((exercise, key, candidate, seen.get(key, 0)))
            seen[key] = seen.get(key, 0) + 1
    return found


def first_of_each(entries, group_of, id_of) -> list:
    """``entries`` as pytest params: the first entry of each group (``group_of(entry)``: a mistake, an
    exercise) runs in `make check`, the others, more of the same kind, in `make test` only (marked slow)."""
    params, seen = [], set()
    for entry in entries:
        group = group_of(entry)
        marks = [pytest.mark.slow] if group in seen else []
        seen.add(group)
        params.append(pytest.param(*entry, marks=marks, id=id_of(entry)))
    return params
