"""The concept quiz (lessons_lib/quizzes/concepts.py): the same questions before and after, first answers.

Lesson 00 shows ``concept_quiz("pre")`` and lesson 10 ``concept_quiz("post")``; a learner's first checked
answer to each question is written to ``concept-quiz.json`` beside the notebook, which the class report
reads (tests/grading/test_class_report.py).
"""

from __future__ import annotations

import json

import nbformat
import pytest

from lessons_lib.quizzes import concepts
from tests.helpers import NOTEBOOKS


def test_lesson_00_opens_and_lesson_10_closes_with_the_same_quiz():
    first = [c.source for c in nbformat.read(NOTEBOOKS / "00_start_here.ipynb", as_version=4).cells
             if c.cell_type == "code"]
    last = [c.source for c in nbformat.read(NOTEBOOKS / "10_review_and_paper.ipynb", as_version=4).cells
            if c.cell_type == "code"]
    pre = next(i for i, s in enumerate(first) if 'concept_quiz("pre")' in s)
    post = next(i for i, s in enumerate(last) if 'concept_quiz("post")' in s)
    assert pre <= 2, "lesson 00 asks before it teaches (the Colab cell, then the quiz)"
    assert post == len(last) - 1, "lesson 10 asks after everything else"
    assert not any("concept_quiz" in s for s in first[pre + 1:] + last[:post])


def test_a_check_in_lesson_00_records_the_first_answer_and_reveals_nothing(tmp_path):
    quiz = concepts.concept_quiz("pre", folder=tmp_path)
    right = concepts.CONCEPTS[0].question.correct_index
    wrong = (right + 1) % len(concepts.CONCEPTS[0].question.options)
    said = quiz.answer(0, wrong)
    assert "noted" in said and "recorded" in said
    assert "Correct" not in said and "Not quite" not in said and "✓" not in said and "✗" not in said
    quiz.answer(0, right)  # a second try changes nothing
    record = json.loads((tmp_path / concepts.RECORD).read_text())
    assert record["pre"] == {"shapes": {"answer": "ABCD"[wrong], "correct": False}}
    assert "post" not in record


def test_a_check_in_lesson_10_explains_and_keeps_the_answers_of_lesson_00(tmp_path):
    number = [c.key for c in concepts.CONCEPTS].index("causal")
    wrong = (concepts.CONCEPTS[number].question.correct_index + 1) % 4
    concepts.record_answer("pre", "causal", wrong, tmp_path)
    quiz = concepts.concept_quiz("post", folder=tmp_path)
    said = quiz.answer(number, concepts.CONCEPTS[number].question.correct_index)
    assert said.startswith("✓ Correct") and "recorded" in said.split("\n")[0]
    record = concepts.read_record(tmp_path / concepts.RECORD)
    assert record["pre"]["causal"]["correct"] is False and record["post"]["causal"]["correct"] is True


def test_scores_and_the_normalised_gain():
    record = {"pre": {"shapes": {"answer": "B", "correct": True}, "cost": {"answer": "A", "correct": False}},
              "post": {c.key: {"answer": "X", "correct": True} for c in concepts.CONCEPTS}}
    assert concepts.phase_score(record, "pre") == pytest.approx(1 / len(concepts.CONCEPTS))
    assert concepts.phase_score(record, "post") == 1.0
    assert concepts.phase_score({}, "post") is None
    assert concepts.normalised_gain(0.2, 0.6) == pytest.approx(0.5)
    assert concepts.normalised_gain(0.5, 0.25) == pytest.approx(-0.5)
    assert concepts.normalised_gain(1.0, 1.0) is None
    with pytest.raises(ValueError, match="between 0 and 1"):
        concepts.normalised_gain(40, 70)


def test_wrong_use_is_refused_in_words(tmp_path):
    with pytest.raises(ValueError, match="pre"):
        concepts.concept_quiz("before")
    with pytest.raises(ValueError, match="keys"):
        concepts.record_answer("pre", "nonsense", "A", tmp_path)
    with pytest.raises(ValueError, match="not one of the options"):
        concepts.record_answer("pre", "shapes", "Z", tmp_path)
    (tmp_path / concepts.RECORD).write_text("{}")
    with pytest.raises(ValueError, match="not a concept-quiz record"):
        concepts.read_record(tmp_path / concepts.RECORD)


def test_a_folder_that_cannot_be_written_still_gets_its_answer(tmp_path):
    folder = tmp_path / "missing" / "folder"  # writing there fails
    said = concepts.concept_quiz("post", folder=folder).answer(1, concepts.CONCEPTS[1].question.correct_index)
    assert said.startswith("✓") and "could not be saved" in said


def test_every_question_tests_an_outcome_and_has_a_key_of_its_own():
    keys = [c.key for c in concepts.CONCEPTS]
    assert len(set(keys)) == len(keys) >= 5
    assert all(c.outcome.startswith("O") and c.outcome[1:].isdigit() for c in concepts.CONCEPTS)


# ---------------------------------------------------------------- lesson 10: before and after, per question
def _right_and_wrong(key: str) -> tuple[int, int]:
    question = next(c.question for c in concepts.CONCEPTS if c.key == key)
    return question.correct_index, (question.correct_index + 1) % len(question.options)


def _number(key: str) -> int:
    return [c.key for c in concepts.CONCEPTS].index(key)


def test_lesson_10_says_per_question_what_the_learner_answered_in_lesson_00(tmp_path):
    right, wrong = _right_and_wrong("causal")
    concepts.record_answer("pre", "causal", wrong, tmp_path)
    quiz = concepts.concept_quiz("post", folder=tmp_path)
    said = quiz.answer(_number("causal"), right)
    assert f"In lesson 00 you answered {'ABCD'[wrong]}, not right then." in said.split("\n")[0]
    rows = {row["key"]: row for row in concepts.comparison(concepts.read_record(tmp_path / concepts.RECORD))}
    assert rows["causal"]["change"] == "learned"
    assert rows["shapes"]["change"] == "not answered yet"
    table = quiz.comparison.value
    assert "<caption" in table and "scope='col'" in table and "learned" in table
    assert quiz.tabs.children[-1] is quiz.comparison and quiz.tabs.titles[-1] == "Before and after"


def test_the_comparison_never_gives_an_answer_away(tmp_path):
    """Before the learner finds the right answer in lesson 10, neither the feedback nor the table says
    whether the answer of lesson 00 was right (it would name the right letter)."""
    right, wrong = _right_and_wrong("scaling")
    concepts.record_answer("pre", "scaling", right, tmp_path)
    quiz = concepts.concept_quiz("post", folder=tmp_path)
    assert f"{'ABCD'[right]} (right)" not in quiz.comparison.value      # nothing answered in lesson 10 yet
    said = quiz.answer(_number("scaling"), wrong)
    assert "lesson 00" not in said
    assert f"{'ABCD'[right]} (right)" not in quiz.comparison.value
    assert "find the right answer above" in quiz.comparison.value
    quiz.answer(_number("scaling"), right)                            # found: now the comparison is shown
    assert f"{'ABCD'[right]} (right)" in quiz.comparison.value
    assert "right in lesson 00, not at first in lesson 10" in quiz.comparison.value


def test_the_comparison_counts_both_lessons_once_every_question_is_answered(tmp_path):
    for concept in concepts.CONCEPTS:
        right, wrong = _right_and_wrong(concept.key)
        concepts.record_answer("pre", concept.key, wrong, tmp_path)
        concepts.record_answer("post", concept.key, right, tmp_path)
    text = concepts.comparison_text(concepts.read_record(tmp_path / concepts.RECORD))
    n = len(concepts.CONCEPTS)
    assert f"In all, lesson 00: 0 of {n} right; lesson 10: {n} of {n} right." in text
    assert text.count(": learned") == n


def test_without_the_answers_of_lesson_00_the_comparison_says_where_they_are_kept(tmp_path):
    quiz = concepts.concept_quiz("post", folder=tmp_path)
    assert "No answers of lesson 00 were found" in quiz.comparison.value
    right, _ = _right_and_wrong("cost")
    said = quiz.answer(_number("cost"), right)
    assert "In lesson 00 you did not answer this question." in said
