"""Lesson 14's stills say in words what they draw: the cache per token beside MHA, GQA and MQA; the tiny
layer's dense weights and the keys kept; the work per query of dense and sparse attention and the indexer."""

from __future__ import annotations

import pytest

import lessons_lib as ll


def test_the_cache_still_names_every_row_and_the_ratio():
    fig = ll.plot_cache_per_token(ll.DEEPSEEK_V3)
    assert "576 numbers" in fig.alt and "32,768 numbers" in fig.alt and "57 times smaller" in fig.alt


def test_the_sparse_still_states_its_settings():
    fig = ll.plot_sparse_run(ll.sparse_run(8, 4))
    assert "latent of 8" in fig.alt and "top 4 keys" in fig.alt


def test_the_cost_still_has_three_lines():
    fig = ll.plot_sparse_cost()
    assert len(fig.axes[0].lines) == 3


def test_a_wrong_argument_is_refused_by_name():
    with pytest.raises(TypeError, match="LatentShape"):
        ll.plot_cache_per_token("DeepSeek-V3")
    with pytest.raises(TypeError, match="sparse_run"):
        ll.plot_sparse_run(None)
