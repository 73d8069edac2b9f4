"""The check of lesson 07 (my_causal_weights): the worked solution and other right answers pass, each mistake
is named, and the named mistake leaks in the leak experiment."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch

import lessons_lib as ll
from lessons_lib import exercises
from lessons_lib.core import masks

F = torch.nn.functional


# ------------------------------------------------------------------ the exercise of notebook 07
def test_the_solution_of_notebook_07_passes_and_other_right_answers_too():
    from tests.helpers import solutions

    assert exercises.check_causal_weights(solutions.my_causal_weights).passed
    # the library's answer gives the right numbers, but calling it does not count
    # (tests/exercises/test_exercises.py)
    assert exercises.check_causal_weights(
        lambda s: ll.attention_weights(s, scale=1.0, causal=True)).mistake == "library_answer"
    assert exercises.check_causal_weights(   # a large negative number instead of −∞ is as good
        lambda s: ll.softmax(np.where(ll.causal_mask(len(s)), s, -1e9))).passed


def _naive_softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("fn, key, words", [
    (lambda s: ll.softmax(s) * np.tril(np.ones_like(s)), "mask_after_softmax", ["after the softmax"]),
    # nn.MultiheadAttention's causal mask (True = blocked) used as SDPA's (True = may attend)
    (lambda s: _naive_softmax(np.where(torch.triu(torch.ones(len(s), len(s)), 1).bool().numpy(), s, -np.inf)),
     "inverted", ["convention trap", "True = blocked"]),
    (lambda s: ll.softmax(np.where(np.tril(np.ones(s.shape, bool), -1), s, -np.inf)), "no_diagonal",
     ["itself"]),
    (lambda s: ll.softmax(s * np.tril(np.ones(s.shape))), "zero_not_minus_infinity",
     ["instead of −∞", "no weight"]),
    (lambda s: ll.softmax(np.where(np.triu(np.ones(s.shape, bool)), s, -np.inf)), "upper_triangle",
     ["future is allowed", "looks ahead"]),
    (lambda s: ll.softmax(s), "no_mask", ["no mask"]),
])
def test_each_notebook_07_mistake_is_named(fn, key, words):
    feedback = exercises.check_causal_weights(fn)
    assert feedback.mistake == key, str(feedback)
    for word in words:
        assert word in feedback.message + feedback.hint, str(feedback)


def test_the_mask_applied_after_softmax_leaks_and_the_right_one_does_not():
    """What the check names, the leak experiment shows: the mask after softmax lets the future in."""
    from tests.helpers import solutions

    x = np.random.default_rng(3).standard_normal((6, 4))

    def attend(weights_of):
        return lambda x: weights_of(x @ x.T / 2.0) @ x
    wrong = masks.future_leak(attend(lambda s: ll.softmax(s) * ll.causal_mask(len(s))), x, 3)
    right = masks.future_leak(attend(solutions.my_causal_weights), x, 3)
    assert wrong[:3].max() > 1e-3 and right[:3].max() == 0.0
