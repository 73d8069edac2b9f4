"""DeepSeek's sparse attention (notebook 14): each query attends to its top-k keys by the indexer's scores.

Properties over random shapes (float64): with top_k at least the keys a query may see, sparse attention is
dense causal attention (below 1e-12); the kept weights of every row sum to 1 and a key not kept weighs 0;
no query keeps a future key, and each keeps min(top_k, the keys it may see), the highest-scoring ones (of
equal scores, either). The
indexer's score is Σ_j w_j · ReLU(q_j · k / √d_I), written out here. transformers' ``DeepseekV32Indexer``
is ``tests/lab/test_deepseek_adapter.py``. Bad input is refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from tests.helpers import examples

TIGHT = 1e-12


@st.composite
def problems(draw):
    n_queries = draw(st.integers(1, 10))
    n_keys = n_queries + draw(st.integers(0, 4))
    d, lead = draw(st.integers(1, 5)), draw(st.sampled_from([(), (2,), (2, 3)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return {"q": rng.standard_normal((*lead, n_queries, d)), "k": rng.standard_normal((*lead, n_keys, d)),
            "v": rng.standard_normal((*lead, n_keys, draw(st.integers(1, 4)))),
            "scores": rng.standard_normal((*lead, n_queries, n_keys)),
            "top_k": draw(st.integers(1, n_keys))}


@settings(max_examples=examples(60), deadline=None)
@given(p=problems())
def test_top_k_of_every_key_is_dense_causal_attention(p):
    n_queries, n_keys = p["scores"].shape[-2:]
    sparse, _ = ll.sparse_attention(p["q"], p["k"], p["v"], n_keys, p["scores"])
    dense, _ = ll.scaled_dot_product_attention(p["q"], p["k"], p["v"],
                                               mask=ll.bottom_right_causal_mask(n_queries, n_keys))
    assert np.abs(sparse - dense).max() <= TIGHT


@settings(max_examples=examples(60), deadline=None)
@given(p=problems())
def test_kept_weights_sum_to_one_and_the_others_are_zero(p):
    _, weights = ll.sparse_attention(**p)
    keep = ll.top_k_selection(p["scores"], p["top_k"])
    assert np.abs(weights.sum(-1) - 1).max() <= TIGHT
    assert (weights[~keep] == 0).all()


@settings(max_examples=examples(60), deadline=None)
@given(p=problems())
def test_no_future_key_is_kept_and_each_query_keeps_its_highest_scores(p):
    scores, top_k = p["scores"], p["top_k"]
    n_queries, n_keys = scores.shape[-2:]
    keep = ll.top_k_selection(scores, top_k)
    causal = ll.bottom_right_causal_mask(n_queries, n_keys)
    assert not (keep & ~causal).any()
    seen = causal.sum(-1)
    assert (keep.sum(-1) == np.minimum(top_k, seen)).all()
    lowest_kept = np.where(keep, scores, np.inf).min(-1)
    highest_left = np.where(causal & ~keep, scores, -np.inf).max(-1)
    assert (lowest_kept >= highest_left).all()


def test_equal_scores_still_keep_top_k_keys_each():
    keep = ll.top_k_selection(np.zeros((5, 5)), 2)
    assert keep.sum(-1).tolist() == [1, 2, 2, 2, 2] and not (keep & ~ll.causal_mask(5)).any()


def test_the_indexer_score_is_a_weighted_sum_of_relus():
    rng = np.random.default_rng(0)
    q, k, w = rng.standard_normal((4, 3, 2)), rng.standard_normal((5, 2)), rng.standard_normal((4, 3))
    scores = ll.dsa_indexer_scores(q, k, w)
    expected = np.array([[sum(w[t, j] * max(0.0, q[t, j] @ k[s] / np.sqrt(2)) for j in range(3))
                          for s in range(5)] for t in range(4)])
    assert scores.shape == (4, 5) and np.abs(scores - expected).max() <= TIGHT


def test_the_lightning_indexer_turns_only_the_first_d_rope_numbers():
    rng = np.random.default_rng(1)
    d_model, d_cq, heads, d_i = 6, 5, 2, 4
    weights = {"w_iq": rng.standard_normal((d_cq, heads * d_i)), "w_ik": rng.standard_normal((d_model, d_i)),
               "k_norm": np.ones(d_i), "k_norm_bias": np.zeros(d_i),
               "w_iw": rng.standard_normal((d_model, heads))}
    x, c_q = rng.standard_normal((3, d_model)), rng.standard_normal((3, d_cq))
    scores = ll.lightning_indexer(x, c_q, weights, heads, 2)
    k = x @ weights["w_ik"]
    k = (k - k.mean(-1, keepdims=True)) / np.sqrt(k.var(-1, keepdims=True) + 1e-6)
    q = (c_q @ weights["w_iq"]).reshape(3, heads, d_i)
    q[..., :2] = np.swapaxes(ll.rope(np.swapaxes(q[..., :2], 0, 1), np.arange(3)), 0, 1)
    k[:, :2] = ll.rope(k[:, :2], np.arange(3))
    expected = ll.dsa_indexer_scores(q, k, x @ weights["w_iw"] / np.sqrt(heads))
    assert np.abs(scores - expected).max() <= TIGHT


@pytest.mark.parametrize("call, words", [
    (lambda: ll.top_k_selection(np.zeros((2, 3)), 4), "top_k = 4 is more than the 3 keys"),
    (lambda: ll.top_k_selection(np.zeros((2, 3)), 0), "top_k must be at least 1"),
    (lambda: ll.top_k_selection(np.zeros((4, 3)), 1), "4 queries but 3 keys"),
    (lambda: ll.sparse_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 1)), 1, np.zeros((2, 2))),
     "scores has shape (2, 2) but Q has 2 queries and K 3 keys"),
    (lambda: ll.dsa_indexer_scores(np.ones((2, 3, 4)), np.ones((5, 3)), np.ones((2, 3))), "k has d_I = 3"),
    (lambda: ll.dsa_indexer_scores(np.ones((2, 3, 4)), np.ones((5, 4)), np.ones((2, 2))),
     "one weight per query and head"),
    (lambda: ll.top_k_selection(np.zeros((2, 3), dtype=int), 1), "scores has dtype int"),
])
def test_bad_input_is_refused_by_name(call, words):
    with pytest.raises((ValueError, TypeError)) as error:
        call()
    assert words in str(error.value), str(error.value)
