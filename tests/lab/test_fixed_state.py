"""A fixed state against a growing cache (notebook 13): the numbers each holds, and a timing's verdict that
follows its numbers (planted times give the words they mean; nothing here asserts a timing)."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import fixed_state


def test_the_cache_grows_by_two_vectors_a_token_and_the_state_not_at_all():
    grown = ll.state_and_cache(100, 8)
    assert np.array_equal(np.diff(grown["cache"]), np.full(99, 16))
    assert set(grown["state"].tolist()) == {8 * 8 + 8}
    assert grown["cache"][-1] == ll.numbers_kept("softmax", 100, 8)
    assert grown["state"][-1] == ll.numbers_kept("linear", 100, 8)


def _times(cache, state):
    return ll.StateAndCacheTimes(np.array([1000, 2000, 4000]), np.array(cache), np.array(state), d=16)


def test_the_verdict_follows_the_measured_times():
    grew = _times([1e-5, 2e-5, 4e-5], [2e-6, 2e-6, 2e-6])
    said = grew.verdicts()
    assert "through the cache: time per token ∝ context^1.00" in said
    assert "The cache's step grew with the context and the state's did not" in said
    assert "At 4,000 tokens the cache holds 471× the numbers of the state, and its step took 20.0× as long." \
        in said
    flat = _times([2e-6, 2e-6, 2.1e-6], [2e-6, 2e-6, 2e-6]).verdicts()
    assert "did not separate clearly" in flat


def test_a_measurement_has_one_time_per_context_and_refuses_one_context():
    times = ll.measure_state_and_cache((64, 16, 64), d=4, steps=2, repeats=1)
    assert times.contexts.tolist() == [16, 64]
    assert times.cache.shape == times.state.shape == (2,) and (times.cache > 0).all()
    assert str(times).splitlines()[0].split() == ["context", "cache", "(µs)", "state", "(µs)", "ratio"]
    with pytest.raises(ValueError, match="at least two different lengths"):
        ll.measure_state_and_cache((64, 64))
    with pytest.raises(ValueError, match="each context must be from 1 to 65536"):
        fixed_state.measure_state_and_cache((64, 10**6))
