"""Picking the next token (notebook 12): ``sampling_probabilities`` and ``sample_token``.

The sampler is checked statistically with a fixed seed and enough draws that a right sampler cannot fail and
a wrong one cannot pass: a chi-square test of 40,000 draws against the distribution it claims (temperature and
top-k), far below the 0.1 % critical value; top-k never emits a token outside the k largest logits; a
temperature going to 0 is greedy decoding; a hotter temperature spreads the draws out. Properties over random
logits: the probabilities sum to 1, keep the logits' order, and are zero exactly outside the top k.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll

LOGITS = np.array([2.0, 1.0, 0.5, 0.0, -1.0, -3.0])
#: chi-square critical values at p = 0.001 for 1 … 5 degrees of freedom (a table: no scipy needed)
CHI2_0_001 = {1: 10.83, 2: 13.82, 3: 16.27, 4: 18.47, 5: 20.52}
DRAWS = 40_000


def _counts(logits, n, **kwargs) -> np.ndarray:
    rng = np.random.default_rng(1234)
    drawn = [ll.sample_token(logits, rng=rng, **kwargs) for _ in range(n)]
    return np.bincount(drawn, minlength=len(logits))


def _chi_square(counts: np.ndarray, p: np.ndarray) -> tuple[float, int]:
    kept = p > 0
    expected = counts.sum() * p[kept]
    return float(((counts[kept] - expected) ** 2 / expected).sum()), int(kept.sum() - 1)


@pytest.mark.parametrize("temperature, top_k", [(1.0, None), (0.7, 4), (1.8, 3)])
def test_draws_follow_the_distribution_they_claim_by_a_chi_square_test(temperature, top_k):
    p = ll.sampling_probabilities(LOGITS, temperature=temperature, top_k=top_k)
    counts = _counts(LOGITS, DRAWS, temperature=temperature, top_k=top_k)
    statistic, dof = _chi_square(counts, p)
    assert statistic < CHI2_0_001[dof], (statistic, dof, counts, p)


def test_a_wrong_temperature_fails_the_same_chi_square_test():
    """The test has power: draws at temperature 1 judged against the distribution of temperature 0.8."""
    counts = _counts(LOGITS, DRAWS, temperature=1.0)
    statistic, dof = _chi_square(counts, ll.sampling_probabilities(LOGITS, temperature=0.8))
    assert statistic > 10 * CHI2_0_001[dof]


def test_probabilities_are_the_softmax_of_the_logits_over_the_temperature():
    p = ll.sampling_probabilities(LOGITS, temperature=2.0)
    expected = np.exp(LOGITS / 2.0) / np.exp(LOGITS / 2.0).sum()
    assert np.abs(p - expected).max() < 1e-15


def test_top_k_never_emits_a_token_outside_the_k_largest_logits():
    counts = _counts(LOGITS, 5_000, temperature=5.0, top_k=2)      # hot: the others would be drawn often
    assert counts[2:].sum() == 0 and counts[:2].min() > 1_000


def test_temperature_zero_is_greedy_and_a_cold_temperature_draws_the_largest_logit():
    logits = np.array([0.3, 1.9, 1.7, -2.0])
    assert ll.sample_token(logits, temperature=0) == 1
    assert ll.sample_token(logits, temperature=0, rng=None) == 1          # greedy needs no random numbers
    assert (_counts(logits, 2_000, temperature=1e-3) == [0, 2_000, 0, 0]).all()


def test_a_hotter_temperature_spreads_the_draws():
    cold, hot = (ll.sampling_probabilities(LOGITS, temperature=t) for t in (0.5, 2.0))
    entropy = [float(-(p * np.log(p)).sum()) for p in (cold, hot)]
    assert entropy[0] < entropy[1] and cold.max() > hot.max()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=2, max_size=30), st.floats(0.05, 5.0), st.integers(1, 30))
def test_probabilities_sum_to_one_keep_the_order_and_vanish_outside_the_top_k(values, temperature, top_k):
    """(The largest logit has the largest probability; ties at the k-th logit are all kept.)"""
    logits = np.array(values)
    p = ll.sampling_probabilities(logits, temperature=temperature, top_k=top_k)
    assert abs(p.sum() - 1) < 1e-12
    kept = logits >= np.sort(logits)[-min(top_k, len(logits))]
    assert (p[~kept] == 0).all() and (p >= 0).all()     # a kept logit far below the best may underflow to 0
    assert p[np.argmax(logits)] == p.max() > 0
    order = np.argsort(logits[kept], kind="stable")
    assert (np.diff(p[kept][order]) >= -1e-15).all()


@pytest.mark.parametrize("call, words", [
    (lambda: ll.sampling_probabilities(np.zeros((2, 3))), "logits[-1]"),
    (lambda: ll.sampling_probabilities(LOGITS, temperature=-1), "temperature"),
    (lambda: ll.sampling_probabilities(LOGITS, top_k=0), "top_k"),
    (lambda: ll.sample_token(LOGITS, temperature=1.0), "np.random.default_rng"),
])
def test_bad_arguments_are_refused_by_name(call, words):
    with pytest.raises((ValueError, TypeError), match=words.replace("[", r"\[").replace("]", r"\]")
                       .replace(".", r"\.")):
        call()
