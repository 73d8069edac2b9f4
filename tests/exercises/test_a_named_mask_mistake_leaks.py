"""Lesson 07's check names the mask applied after the softmax (tests/helpers/wrong_answers.py); what it names,
the leak experiment shows: that mask lets the future in, and the worked solution's does not."""

from __future__ import annotations

import numpy as np

import lessons_lib as ll
from lessons_lib.lab import masking
from tests.helpers import solutions


def test_the_mask_applied_after_softmax_leaks_and_the_right_one_does_not():
    x = np.random.default_rng(3).standard_normal((6, 4))

    def attend(weights_of):
        return lambda x: weights_of(x @ x.T / 2.0) @ x
    wrong = masking.future_leak(attend(lambda s: ll.softmax(s) * ll.causal_mask(len(s))), x, 3)
    right = masking.future_leak(attend(solutions.my_causal_weights), x, 3)
    assert wrong[:3].max() > 1e-3 and right[:3].max() == 0.0
