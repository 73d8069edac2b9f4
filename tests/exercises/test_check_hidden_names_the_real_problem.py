"""``check_hidden`` says what is really wrong with how it was called: the exercise's name and the function in
the wrong order (with the call written the right way round), an exercise of the course that has no unseen
cases (not "no exercise called ..."), a name that is not text, and a misspelt name (the nearest one and
the list)."""

from __future__ import annotations

import pytest

from lessons_lib import exercises
from lessons_lib.exercises import grading
from tests.helpers import solutions


def test_the_name_and_the_function_swapped_get_the_call_the_right_way_round():
    with pytest.raises(ValueError) as info:
        grading.check_hidden(solutions.my_softmax, "my_softmax")
    assert "swapped" in str(info.value)
    assert 'll.check_hidden("my_softmax", my_softmax)' in str(info.value)
    assert "no exercise called" not in str(info.value)


def test_the_function_given_twice_is_named_from_the_functions_own_name():
    with pytest.raises(ValueError, match=r'll\.check_hidden\("my_scale", my_scale\)'):
        grading.check_hidden(solutions.my_scale, solutions.my_scale)


def test_an_exercise_without_unseen_cases_is_named_as_an_exercise_not_as_none():
    with pytest.raises(ValueError) as info:
        grading.check_hidden("my_query", [0.0, 8.0, 0.0, 0.0])
    message = str(info.value)
    assert "my_query is an exercise of the course" in message and "no unseen cases" in message
    assert "no exercise called" not in message


def test_an_engine_exercise_whose_unseen_cases_were_taken_away_is_still_an_exercise(monkeypatch):
    import dataclasses

    monkeypatch.setitem(exercises.EXERCISES, "my_scores", dataclasses.replace(exercises.SCORES, hidden=None))
    with pytest.raises(ValueError, match=r"my_scores is an exercise of the course, but it has no unseen"):
        grading.check_hidden("my_scores", solutions.my_scores)


@pytest.mark.parametrize("name", [3, None, b"my_softmax", ["my_softmax"]])
def test_a_name_that_is_not_text_is_refused_saying_what_to_give(name):
    with pytest.raises(TypeError, match=r"needs the exercise's name as text") as info:
        grading.check_hidden(name, solutions.my_softmax)
    assert 'll.check_hidden("my_softmax", my_softmax)' in str(info.value)


def test_a_misspelt_name_gets_the_nearest_and_the_list():
    with pytest.raises(ValueError) as info:
        grading.check_hidden("my_sofmax", solutions.my_softmax)
    assert "Did you mean 'my_softmax'?" in str(info.value)
    assert all(name in str(info.value) for name, e in exercises.EXERCISES.items() if e.hidden is not None)


def test_the_right_call_is_still_a_check():
    assert grading.check_hidden("my_softmax", solutions.my_softmax).passed
