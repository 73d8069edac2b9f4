"""The graded cells, run here without nbgrader: each raises exactly when its check fails, naming the
mistake in one line that the class report reads back; the points stamped on them are the table's; and the
grading functions say what was wrong with what they were given. (nbgrader's real pipeline over the same
cells: tests/grading/test_nbgrader_pipeline.py, `make test-grading`.)"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.course.feedback import FAILED, NOT_ATTEMPTED, Feedback
from lessons_lib.exercises import EXERCISES, check_scaling, grading
from lessons_lib.exercises.grading import Verdict, read_verdict
from tests.helpers import REPO, solutions
from tests.helpers.grading import (
    PLANTED,
    POINTS,
    graded_cell,
    named_mistake,
    solution_source,
    verdict_message,
)


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_graded_cell_raises_exactly_when_the_check_fails_naming_the_mistake(name):
    """Every exercise's graded cell, unseen cases included, run on the worked solution (passes) and on the
    planted mistake (raises AssertionError naming it)."""
    source = solution_source(name)
    old, new, mistake = PLANTED[name]
    mistake = mistake or named_mistake(name, EXERCISES)
    for answer, fails in ((source, False), (source.replace(old, new), True)):
        namespace = {"np": np, "ll": ll}   # what a lesson's first cells import
        exec(answer, namespace)
        if not fails:
            exec(graded_cell(name), namespace)
            continue
        with pytest.raises(AssertionError, match=re.escape(f"{name}: NOT YET ({mistake})")):
            exec(graded_cell(name), namespace)


def test_points_are_stamped_as_the_table_says():
    for lesson, points in POINTS.items():
        nb = json.loads((REPO / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
        graded = [c["metadata"]["nbgrader"] for c in nb["cells"]
                  if c["metadata"].get("nbgrader", {}).get("grade")]
        stamped = {g["grade_id"].removeprefix("test_"): g["points"] for g in graded}
        assert stamped == points, lesson


def test_a_failed_grading_assertion_shows_as_one_line_without_a_traceback():
    with pytest.raises(AssertionError) as info:
        grading.assert_passes(check_scaling(lambda scores, d_k: scores / d_k))
    lines = info.value._render_traceback_()
    assert len(lines) == 1 and "\n" not in lines[0]
    assert lines[0].startswith("AssertionError: my_scale: NOT YET (divided_by_d_k): ")
    assert "Hint: " in lines[0]
    assert "Failing case: hand-made 2×5 scores with d_k = 9 (scores: 2×5, d_k = 9)" in lines[0]
    assert "/" + "lessons_lib" not in lines[0]


# ------------------------------------------------------------------ the line, read back by the class report
@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_verdict_of_every_named_mistake_reads_back(name):
    for mistake in EXERCISES[name].mistakes:
        feedback = Feedback(name, FAILED, f"Likely mistake: {mistake.title}.", "a hint", mistake=mistake.key)
        assert read_verdict(verdict_message(feedback)) == Verdict(name, True, mistake.key)


@given(text=st.text(), hint=st.text(), key=st.from_regex(r"[a-z][a-z_]{0,20}", fullmatch=True))
def test_a_verdict_reads_back_whatever_the_message_says(text, hint, key):
    said = verdict_message(Feedback("my_softmax", FAILED, text, hint, mistake=key))
    assert read_verdict(said) == Verdict("my_softmax", True, key)
    unnamed, untouched = Feedback("my_scale", FAILED, text, hint), Feedback("my_scale", NOT_ATTEMPTED, text)
    assert read_verdict(verdict_message(unnamed)) == Verdict("my_scale", True, None)
    assert read_verdict(verdict_message(untouched)) == Verdict("my_scale", False, None)


def test_a_message_without_a_verdict_reads_as_none_and_wrong_input_is_refused():
    assert read_verdict("NameError: name 'my_scale' is not defined") is None
    with pytest.raises(TypeError, match="text"):
        read_verdict(None)


# ------------------------------------------------------------------ what the grading functions were given
@pytest.mark.parametrize("thing, words", [(None, "got None"), (True, "got bool True"),
                                          (solutions.my_softmax, "the function 'my_softmax' itself")])
def test_assert_passes_says_what_it_was_given(thing, words):
    with pytest.raises(TypeError, match="assert_passes needs what a check returns") as info:
        grading.assert_passes(thing)
    assert words in str(info.value)


def test_check_hidden_of_an_unknown_exercise_lists_the_exercises():
    with pytest.raises(ValueError) as info:
        grading.check_hidden("my_sofmax", solutions.my_softmax)
    assert "Did you mean 'my_softmax'?" in str(info.value)
    assert all(name in str(info.value) for name in EXERCISES)
