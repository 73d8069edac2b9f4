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
