"""The check of lesson 09's softmax with an "off" slot (my_softmax_off) tells a shift by each row's first
score from the shift by its largest: the first fails and is named (``shift_by_first``), the second passes, and
the hint for it quotes no line of a solution."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll


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
