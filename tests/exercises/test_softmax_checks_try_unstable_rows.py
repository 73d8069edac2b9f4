"""Every check that grades a softmax-like function tries rows beyond exp's range.

exp overflows above about 709 and underflows below about −745 (float64). A softmax shifted by
anything but each row's own maximum (the array's maximum, a row's minimum or mean) is right on
ordinary scores and NaN on a row that spans more than that range, or on rows far apart from
each other: the checks' cases must contain both, so that such an answer never passes.
"""

from __future__ import annotations

import numpy as np
import pytest

from lessons_lib import exercises
from tests.helpers.wrong_answers import UNSTABLE_SOFTMAXES

EXP_RANGE = 709.0

# exercise -> the argument holding the scores
SOFTMAX_LIKE = {
    "SOFTMAX": "x",
    "CAUSAL_WEIGHTS": "scores",
    "SOFTMAX_OFF": "scores",
    "ONLINE_UPDATE": "chunk",
}


def _rows(exercise, arg):
    for case in exercise.cases():
        scores = np.asarray(case.args[arg], dtype=np.float64)
        yield scores.reshape(-1, scores.shape[-1])


@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
def test_the_cases_hold_a_row_spanning_more_than_exps_range(name):
    exercise, arg = getattr(exercises, name), SOFTMAX_LIKE[name]
    spans = [np.ptp(row[np.isfinite(row)]) for rows in _rows(exercise, arg) for row in rows
             if np.isfinite(row).sum() > 1]
    assert max(spans) > EXP_RANGE


@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
def test_the_cases_hold_rows_far_apart(name):
    exercise, arg = getattr(exercises, name), SOFTMAX_LIKE[name]
    apart = []
    for rows in _rows(exercise, arg):
        peaks = [row[np.isfinite(row)].max() for row in rows if np.isfinite(row).any()]
        apart.append(max(peaks) - min(peaks))
    assert max(apart) > EXP_RANGE


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("shift", UNSTABLE_SOFTMAXES)
def test_no_softmax_shifted_by_anything_but_each_rows_maximum_passes(shift):
    """A softmax off by its shift (the array's maximum, a row's minimum, mean or first entry, …) fails, and no
    warning of its overflow leaks out of the check. The softmax with an off slot shifted by the wrong constant
    is named for it (tests/helpers/wrong_answers.py, ``shift_not_per_row``)."""
    feedback = exercises.check_softmax(UNSTABLE_SOFTMAXES[shift])
    assert feedback.passed is False, f"a softmax shifted by {shift} passes"


def test_the_hints_own_warning_is_named():
    """Lesson 09's hint: whatever makes the scores safe must be done to the off slot's 0 too; a softmax
    shifted by m = max(0, row maximum) whose off slot still counts 1 is named for it."""
    def answer(scores):
        m = np.maximum(scores.max(axis=-1, keepdims=True), 0)
        e = np.exp(scores - m)
        return e / (1 + e.sum(axis=-1, keepdims=True))
    feedback = exercises.check_softmax_off(answer)
    assert feedback.mistake == "off_slot_not_shifted", str(feedback)
    assert "off slot is left as it was" in str(feedback)
