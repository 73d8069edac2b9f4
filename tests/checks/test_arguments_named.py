"""Left from round 2: a wrong argument is named by the function that takes it, never by numpy.

``measure(seed=...)`` names ``seed`` for any whole number below 0 (numpy's "expected non-negative integer"
never reaches the learner); ``handmade_heads(sharpness=...)`` says sharpness must be a number for anything
that is not one (numpy's ``isfinite`` TypeError never reaches the learner); ``check_softmax_off`` fails an
answer that shifts each row by its first score instead of its largest, and names that mistake.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(max_value=-1))
def test_measure_names_a_seed_below_zero(seed):
    with pytest.raises(ValueError, match=r"^seed must be 0 or more"):
        ll.measure("naive numpy", 8, d=4, seed=seed, repeats=1, memory=False)


@settings(max_examples=40, deadline=None)
@given(sharpness=st.one_of(st.text(max_size=4), st.none(), st.booleans(), st.lists(st.integers(), max_size=2),
                           st.just(np.array([8.0])), st.complex_numbers(allow_nan=False)))
def test_handmade_heads_says_sharpness_must_be_a_number(sharpness):
    with pytest.raises(TypeError, match=r"^sharpness must be a number"):
        ll.handmade_heads(["the", "cat", "sat"], 1, sharpness=sharpness)


def _off_slot_shifted_by(scores, m):
    with np.errstate(all="ignore"):
        e = np.exp(scores - m)
        return e / (np.exp(-m) + e.sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("first", [lambda s: s[:, :1], lambda s: np.maximum(s[:, :1], 0.0)],
                         ids=["first score", "max(0, first score)"])
def test_softmax_off_fails_a_shift_by_each_rows_first_score_and_names_it(first):
    feedback = ll.check_softmax_off(lambda scores: _off_slot_shifted_by(scores, first(scores)))
    assert feedback.passed is False and feedback.mistake == "shift_by_first", str(feedback)


def test_softmax_off_still_passes_the_shift_by_each_rows_largest_score():
    feedback = ll.check_softmax_off(
        lambda scores: _off_slot_shifted_by(scores, np.maximum(scores.max(axis=-1, keepdims=True), 0.0)))
    assert feedback.passed is True, str(feedback)


def test_the_shift_by_first_hint_quotes_no_solution_line():
    from lessons_lib.exercises import lesson09_attention_in_action as lesson

    mistake = next(m for m in lesson.SOFTMAX_OFF.mistakes if m.key == "shift_by_first")
    assert not any(code in mistake.hint for code in ("np.", "=", "return", "max(", "axis", "keepdims"))
