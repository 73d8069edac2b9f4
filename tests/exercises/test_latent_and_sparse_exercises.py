"""Lesson 14's exercises, ``my_absorbed_scores`` and ``my_topk_keys``: three hints per mistake that nudge
without naming the operations of the solutions, and a start hint that begins with a hand-made case (what an
untouched exercise says, for every exercise: tests/exercises/test_hints_name_no_operation.py). That
the worked solutions pass and every candidate mistake fails and is named on the shown and the unseen cases is
held for every exercise in tests/exercises/test_checks_pass_solutions_and_name_mistakes.py and
test_unseen_cases.py; the mistakes written the way a learner writes them (RoPE folded in anyway, W_UK from
the wrong side, the rotated part forgotten, the latent's scale, every key ranked, the rows aligned at the top
left) are in ``tests/helpers/wrong_answers.py``'s ``MISTAKES``."""

from __future__ import annotations

import pytest

from lessons_lib import exercises

ABSORBED = exercises.EXERCISES["my_absorbed_scores"]
TOPK = exercises.EXERCISES["my_topk_keys"]


@pytest.mark.parametrize("exercise", [ABSORBED, TOPK], ids=["absorbed", "topk"])
def test_the_hints_nudge_without_naming_the_solutions_operations(exercise):
    banned = ("transpose", "ᵀ", ".T", "√", "sqrt", "square root", "argsort", "sort", "np.zeros", "ll.rope(",
              "matrix product", "@")
    for mistake in exercise.mistakes:
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        assert len(hints) == 3, mistake.key                   # concept, property or shape, a case to try
        for text in (*hints, mistake.title, mistake.explain):
            text = text if isinstance(text, str) else ""
            assert not any(word in text for word in banned), (mistake.key, text)
    assert not any(word in exercise.start_hint for word in banned)
    assert exercise.start_hint.startswith("Start with the hand-made case")


def test_the_four_mistakes_the_issue_names_are_in_the_table():
    assert {"rope_absorbed", "w_uk_wrong_side", "rope_forgotten", "scale_of_latent"} <= {
        m.key for m in ABSORBED.mistakes}
    assert {"future_keys", "short_rows_filled", "top_left", "lowest_kept", "itself_excluded"} == {
        m.key for m in TOPK.mistakes}

