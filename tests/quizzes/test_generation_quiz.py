"""Lesson 12's quiz gives no cue: the right option is never the longest (nor the most hedged with "only",
"always", "because"), and the right letters are spread over the quiz; each question is about a section the
lesson taught, and each wrong option is explained by the mistake it stands for."""

from __future__ import annotations

from collections import Counter

from lessons_lib.quizzes import lesson12_generation as quiz

QUESTIONS = quiz.QUESTIONS


def test_the_right_option_is_never_the_longest():
    for q in QUESTIONS:
        right = q.options[q.correct_index].text
        longest = max(len(o.text) for o in q.options)
        assert len(right) < longest, q.prompt[:60]


def test_the_right_letters_are_spread():
    letters = Counter(q.correct_index for q in QUESTIONS)
    assert len(letters) == 4 and max(letters.values()) <= 2, letters


def test_every_question_points_at_a_section_of_the_lesson():
    for q in QUESTIONS:
        assert q.source.startswith("notebook 12, section"), q.source
    assert {q.source for q in QUESTIONS} >= {f"notebook 12, section {n}" for n in (1, 4, 5, 6)}
