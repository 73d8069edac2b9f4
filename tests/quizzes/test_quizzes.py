"""Quizzes: well-formed tables, an explanation for every option, headless answers, widgets that build."""

from __future__ import annotations

import pytest

import lessons_lib as ll
from lessons_lib.course.lessons import LESSONS
from lessons_lib.quizzes.model import Option, Question
from lessons_lib.quizzes.widget import QUIZZES, Quiz

ALL_QUESTIONS = [(lesson, n, q) for lesson, questions in QUIZZES.items() for n, q in enumerate(questions)]
IDS = [f"{lesson}-Q{n + 1}" for lesson, n, _ in ALL_QUESTIONS]


def test_every_lesson_has_its_quiz():
    assert set(QUIZZES) == set(LESSONS), "every lesson of lessons_lib/course/lessons.py has its quiz"
    for lesson in ("00", "01", "02", "03", "04", "05", "06", "07", "08", "09"):
        assert 2 <= len(QUIZZES[lesson]) <= 4, lesson
    assert len(QUIZZES["10"]) >= 1


@pytest.mark.parametrize("lesson, n, question", ALL_QUESTIONS, ids=IDS)
def test_every_option_is_explained_and_exactly_one_is_correct(lesson, n, question):
    assert sum(option.correct for option in question.options) == 1
    assert 2 <= len(question.options) <= 5
    for option in question.options:
        assert len(option.explanation.split()) >= 5, f"{lesson} Q{n + 1}: {option.text!r} is barely explained"
    assert question.prompt.strip().endswith("?")


@pytest.mark.parametrize("lesson, n, question", ALL_QUESTIONS, ids=IDS)
def test_headless_answers_give_the_right_feedback(lesson, n, question):
    q = Quiz(lesson)
    for index, option in enumerate(question.options):
        text = q.answer(n, index)
        assert option.explanation in text
        if option.correct:
            assert text.startswith("✓ Correct")
            others = [o for o in question.options if o is not option]
            assert all(o.explanation in text for o in others), "a right answer explains the other options too"
        else:
            assert text.startswith("✗ Not quite") and "Try another answer" in text
        assert q.views[n].feedback.value, "the feedback is shown in the widget too"


def test_the_correct_answers_are_not_always_the_same_letter():
    letters = {q.correct_index for _, _, q in ALL_QUESTIONS}
    assert len(letters) >= 3


def test_seed_questions_sit_in_their_lessons():
    def correct_text(lesson, source):
        (question,) = [q for q in QUIZZES[lesson] if source in q.source]
        return question.options[question.correct_index].text

    q1 = correct_text("02", "Check Your Understanding Q1")
    assert "relevance" in q1 and "V" in q1 and "averaged" in q1
    q2 = correct_text("05", "Check Your Understanding Q2")
    assert "convex combination" in q2 and "weighted average" in q2
    q3 = correct_text("10", "Check Your Understanding Q3")
    # notebook 10 asks the seed's three questions first, in order, each written once
    assert [q.source[-2:] for q in QUIZZES["10"][:3]] == ["Q1", "Q2", "Q3"]
    assert QUIZZES["10"][0] is next(q for q in QUIZZES["02"] if "Q1" in q.source)
    assert "exchange information" in q3 and "cost grow" in q3 and "sequence length" in q3
    assert q3 == correct_text("08", "Check Your Understanding Q3")  # lesson 08 asks it first


def test_a_question_two_lessons_ask_is_written_once_and_imported():
    """A quiz includes another lesson's question by importing its name: one object, never a copy."""
    by_prompt = {}
    for lesson, questions in QUIZZES.items():
        for q in questions:
            by_prompt.setdefault(q.prompt, []).append((lesson, q))
    copies = {prompt[:60]: [lesson for lesson, _ in asked] for prompt, asked in by_prompt.items()
              if len({id(q) for _, q in asked}) > 1}
    assert not copies, f"questions written twice (import the first lesson's name instead): {copies}"
    shared = {prompt[:40]: [lesson for lesson, _ in asked] for prompt, asked in by_prompt.items()
              if len(asked) > 1}
    assert shared and all("10" in lessons for lessons in shared.values()), shared


def test_a_choice_can_be_a_letter_an_index_or_the_text():
    q = QUIZZES["03"][1]
    right = q.options[q.correct_index]
    letter = "ABCD"[q.correct_index]
    expected = q.feedback(q.correct_index)
    assert q.feedback(letter) == q.feedback(letter.lower()) == q.feedback(right.text) == expected


@pytest.mark.parametrize("choice, error", [("Z", ValueError), (7, ValueError), (-1, ValueError),
                                           (True, TypeError), (1.5, TypeError)])
def test_a_bad_choice_is_refused_with_a_clear_message(choice, error):
    with pytest.raises(error, match="option|letter"):
        QUIZZES["00"][0].index_of(choice)


def test_checking_without_a_choice_asks_for_one():
    view = Quiz("01").views[0]
    assert view.choices.value is None
    assert view.check() == "Pick an answer first, then press Check."


def test_questions_refuse_to_be_malformed():
    good, bad = Option("a", True, "because a"), Option("b", False, "because not b")
    Question("ok?", (good, bad))
    with pytest.raises(ValueError, match="exactly one correct"):
        Question("two right?", (good, Option("c", True, "also right")))
    with pytest.raises(ValueError, match="exactly one correct"):
        Question("none right?", (bad, Option("c", False, "nope")))
    with pytest.raises(ValueError, match="explanation"):
        Question("unexplained?", (good, Option("c", False, " ")))
    with pytest.raises(ValueError, match="at least 2"):
        Question("alone?", (good,))


def test_unknown_lessons_are_refused():
    unknown = f"{int(max(LESSONS)) + 1:02d}"   # the number after the last lesson
    with pytest.raises(ValueError, match="quizzes exist for"):
        Quiz(unknown)
    with pytest.raises(TypeError):
        Quiz(2.0)
    assert Quiz(2).lesson_id == "02"


# --------------------------------------------------------------------------- widgets
def test_widgets_build_with_the_installed_ipywidgets():
    widgets = pytest.importorskip("ipywidgets")
    for lesson in QUIZZES:
        q = Quiz(lesson)
        assert isinstance(q.widget, widgets.VBox)
        for view, question in zip(q.views, q.questions):
            assert isinstance(view.choices, widgets.RadioButtons)
            assert isinstance(view.button, widgets.Button) and view.button.description == "Check"
            assert isinstance(view.feedback, widgets.HTML)
            assert list(view.choices.options) == [("ABCDE"[i], i) for i in range(len(question.options))]
            assert all(o.text.replace("'", "&#x27;").replace('"', "&quot;") in view.prompt.value
                       for o in question.options if "<" not in o.text and "&" not in o.text)


def test_the_check_button_shows_feedback():
    view = Quiz("04").views[0]
    view.select("A")
    view.button.click()
    assert "Not quite" in view.feedback.value
    # the feedback area itself is the status region (set in the browser by the quiz's Access), so the box
    # inside it carries no role of its own: a region is heard when its content changes
    assert 'role="status"' not in view.feedback.value
    assert {"cls": "lessons-quiz-feedback-1", "label": "", "value": "", "options": [], "status": True} \
        in view.access_entries()
    view.select(view.question.correct_index)
    view.button.click()
    assert "Correct" in view.feedback.value and "#1a7f37" in view.feedback.value


def test_plain_text_view_lists_questions_without_answers():
    q = Quiz("05")
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert all(question.prompt in text for question in q.questions)
    assert "Correct" not in text and "✓" not in text


def test_show_displays_the_quiz(capsys):
    assert ll.show("00") is None
    assert "Quiz, lesson 00" in capsys.readouterr().out


def test_a_new_pick_clears_the_old_feedback():
    view = Quiz("03").views[0]
    view.select("B")
    assert view.check().startswith("✗")
    view.select("C")
    assert view.feedback.value == ""


@pytest.mark.parametrize("lesson", sorted(QUIZZES))
def test_quiz_shows_one_question_per_tab(lesson):
    quiz = Quiz(lesson)
    assert list(quiz.tabs.children) == [view.widget for view in quiz.views]
    assert list(quiz.tabs.titles) == [f"Q{n}" for n in range(1, len(quiz.views) + 1)]
    assert quiz.tabs in quiz.widget.children, "the tabs are the quiz's body, below its title"


def test_feedback_words_and_text_reach_4_5_to_1_on_their_box():
    """The feedback box (quiz and exercise checks): its text and its coloured word (PASSED, NOT YET, ...)
    against the box's background, by the WCAG contrast ratio."""
    from lessons_lib.course.feedback import FAILED, NOT_ATTEMPTED, PASSED, badge
    from lessons_lib.figures.style import MIN_TEXT_CONTRAST, contrast_ratio

    for status in (PASSED, FAILED, NOT_ATTEMPTED):
        look = badge(status)
        assert contrast_ratio(look.border, look.background) >= MIN_TEXT_CONTRAST, status
        assert contrast_ratio("#1f1f1f", look.background) >= MIN_TEXT_CONTRAST, status
