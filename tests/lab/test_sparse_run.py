"""Lesson 14's tiny layer (``sparse_run``): DSA's selection beside dense attention on a tiny MLA layer. Every
key kept is dense attention; the keys kept hold no more dense weight than the ones dense attention weighs
most; the layer's weights other than the latent's are the same whatever its size."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll

N = ll.TINY_MLA["tokens"]


def test_keeping_every_key_is_dense_attention():
    run = ll.sparse_run(d_c=6, top_k=N)
    assert run.difference.max() <= 1e-12 and np.abs(run.kept_weight - 1).max() <= 1e-12
    assert np.abs(run.sparse - run.dense).max() <= 1e-12


@pytest.mark.parametrize("top_k", [1, 3, 7])
def test_each_query_keeps_top_k_of_the_keys_it_sees_and_no_more_weight_than_the_best(top_k):
    run = ll.sparse_run(d_c=8, top_k=top_k)
    assert run.keep.sum(-1).tolist() == [min(i + 1, top_k) for i in range(N)]
    assert (run.kept_weight <= run.best_weight + 1e-12).all()
    assert np.abs(run.sparse.sum(-1) - 1).max() <= 1e-12 and (run.sparse[~run.keep] == 0).all()
    assert run.numbers_per_token == 8 + ll.TINY_MLA["d_rope"] and run.multi_head_numbers == 32


def test_the_latent_size_changes_only_the_latents_weights():
    (small, index_small), (large, index_large) = ll.tiny_mla_weights(4), ll.tiny_mla_weights(12)
    for name in ("w_dq", "w_uq", "w_kr", "w_o"):
        assert np.array_equal(small[name], large[name])
    assert all(np.array_equal(index_small[n], index_large[n]) for n in index_small)
    assert small["w_dkv"].shape == (16, 4) and large["w_uk"].shape == (12, 16)


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="top_k must be from 1 to 16"):
        ll.sparse_run(top_k=17)
    with pytest.raises(ValueError, match="d_c must be from 1 to 64"):
        ll.sparse_run(d_c=0)
