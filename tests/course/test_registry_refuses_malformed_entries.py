"""An entry of the registry (lessons_lib/course/lessons.py) that the tools could not use is refused when the
registry loads, saying what to write: the tools, the teacher's guide and the term plan never meet a negative
time, a string where a flag belongs or a cut list of the wrong shape."""

from __future__ import annotations

import pytest

from lessons_lib.course.lessons import LESSONS, Lesson

ENTRY = dict(slug="07_causal_masking", title="Causal masking", short="Causal masking", summary="s",
             minutes=50)


@pytest.mark.parametrize(("fields", "message"), [
    ({"slug": "7_causal"}, "two digits"),
    ({"slug": "07 causal masking"}, "two digits"),
    ({"slug": 7}, "two digits"),
    ({"title": ""}, "title must be text"),
    ({"summary": None}, "summary must be text"),
    ({"points": {"causal_weights": 3}}, "my_"),
    ({"points": {"my_causal_weights": 0}}, "positive whole number"),
    ({"points": {"my_causal_weights": 2.5}}, "positive whole number"),
    ({"points": {"my_causal_weights": True}}, "positive whole number"),
    ({"points": [("my_causal_weights", 3)]}, "points must be a dict"),
])
def test_a_malformed_name_or_points_are_refused_with_what_to_write(fields, message):
    with pytest.raises(ValueError, match=message):
        Lesson(**{**ENTRY, **fields})


@pytest.mark.parametrize("minutes", [-5, 0, 52.5, 50.0, True, False, "50", None])
def test_minutes_must_be_a_positive_whole_number(minutes):
    with pytest.raises(ValueError, match=r"lesson 07: minutes must be a positive whole number") as error:
        Lesson(**{**ENTRY, "minutes": minutes})
    assert repr(minutes) in str(error.value)


@pytest.mark.parametrize("torch", ["yes", "False", 1, 0, None])
def test_torch_must_be_true_or_false_not_a_string_or_a_number(torch):
    with pytest.raises(ValueError, match=r"torch must be True or False") as error:
        Lesson(**{**ENTRY, "torch": torch})
    assert repr(torch) in str(error.value)


@pytest.mark.parametrize(("cuts", "message"), [
    (("Quiz", "set it as homework"), "each cut is a pair"),                 # the trailing comma forgotten
    ([("Quiz", "set it as homework")], "cuts must be a tuple"),
    ((("Quiz",),), "each cut is a pair"),
    ((("Quiz", "set it as homework", "5"),), "each cut is a pair"),
    ((("Quiz", ""),), "each cut is a pair"),
    ((("Quiz", 5),), "each cut is a pair"),
    ("Quiz", "cuts must be a tuple"),
    ((("Quiz", "a"), ("Quiz", "b")), "cut once"),
])
def test_malformed_cuts_are_refused_with_an_example_of_the_form(cuts, message):
    with pytest.raises(ValueError, match=message) as error:
        Lesson(**{**ENTRY, "cuts": cuts})
    assert '("Quiz", "set it as homework")' in str(error.value) or "cut once" in message


def test_every_entry_of_the_course_passes_these_rules():
    for lesson in LESSONS.values():
        assert Lesson(**vars(lesson)) == lesson
