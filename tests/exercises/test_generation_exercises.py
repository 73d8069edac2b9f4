"""Lesson 12's exercises, ``my_decode_step`` and ``my_repeat_kv``: the hints nudge without naming the
operations of the solutions, and the start hint begins with a hand-made case (what an untouched exercise
says, for every exercise: tests/exercises/test_hints_name_no_operation.py). That the worked solutions
pass and every candidate mistake fails on the shown and the unseen cases is held for every exercise in
tests/exercises/test_checks_pass_solutions_and_name_mistakes.py and test_unseen_cases.py. The mistakes a
learner makes, written the way a learner writes them (the new key not in the cache before the scores, the
cache holding the new tokens twice, a future position attended to, the causal rows aligned at the top left,
the scale missing, the heads in turn where each group stays together, the tokens grown instead of the heads,
n_heads not divisible by n_kv_heads not refused), are named in ``tests/helpers/wrong_answers.py``'s
``MISTAKES``."""

from __future__ import annotations

import pytest

from lessons_lib import exercises

DECODE = exercises.EXERCISES["my_decode_step"]
REPEAT = exercises.EXERCISES["my_repeat_kv"]


# ------------------------------------------------------------------ the hints, the start
@pytest.mark.parametrize("exercise", [DECODE, REPEAT], ids=["decode", "repeat"])
def test_the_hints_nudge_without_naming_the_solutions_operations(exercise):
    banned = ("concatenate", "vstack", "np.repeat", "repeat_interleave", "np.where", "tril", "axis=-3",
              "np.sqrt", "-np.inf", "keepdims")
    for mistake in exercise.mistakes:
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        assert len(hints) == 3, mistake.key                   # concept, property or shape, a case to try
        for hint in hints:
            text = hint if isinstance(hint, str) else ""
            assert not any(word in text for word in banned), (mistake.key, text)
    assert not any(word in exercise.start_hint for word in banned)
    assert exercise.start_hint.startswith("Start with the hand-made case")


def test_calling_the_checks_own_reference_for_my_repeat_kv_earns_nothing():
    """The reference answers n_heads not divisible by n_kv_heads with the refusal it asks for (a learner's
    function raises): a function that returns it fails that case (the gaming test leaves it out for this)."""
    def borrows(kv, n_heads):
        return exercises.EXERCISES["my_repeat_kv"].reference(kv, n_heads)

    feedback = REPEAT.check(borrows)
    assert feedback.passed is False and feedback.mistake == "not_refused"
