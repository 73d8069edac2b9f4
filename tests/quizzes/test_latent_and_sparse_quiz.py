"""Lesson 14's quiz gives no cue: the right option is never the longest, the right letters are spread over the
quiz, and each question points at a section the lesson taught."""

from __future__ import annotations

from collections import Counter

from lessons_lib.quizzes import lesson14_latent_and_sparse as quiz

QUESTIONS = quiz.QUESTIONS


def test_the_right_option_is_never_the_longest():
    for q in QUESTIONS:
        right = q.options[q.correct_index].text
        assert len(right) < max(len(o.text) for o in q.options), q.prompt[:60]


def test_the_right_letters_are_spread():
    letters = Counter(q.correct_index for q in QUESTIONS)
    assert len(letters) == 4 and max(letters.values()) == 1, letters


def test_every_question_points_at_a_section_of_the_lesson():
    assert all(q.source.startswith("notebook 14, section") for q in QUESTIONS)
