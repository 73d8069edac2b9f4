"""No quiz can be passed without learning: no cue in an option's length, wording or letter, and a concept
quiz whose questions no lesson quiz has answered already.

Every question a learner meets counts, as often as it is asked: each lesson's quiz (``QUIZZES``, read from
every ``quizzes/lessonNN_*.py``, so a new lesson's quiz is held to the same rules) and the concept quiz
(``quizzes/concepts.py``). A strategy that picks an option without reading the question (the longest, the
shortest, the most qualified) must score no more than 1.5 times chance, and no letter may be the correct one
in more than 40% of the questions.
"""

from __future__ import annotations

import collections
import math
import re

import pytest

from lessons_lib.quizzes import concepts
from lessons_lib.quizzes.model import LETTERS, Question, R, W, ask
from lessons_lib.quizzes.widget import QUIZZES

CONCEPT_QUESTIONS = [c.question for c in concepts.CONCEPTS]
#: every question as the learner meets it: each quiz's questions, then the concept quiz's
ASKED = [q for questions in QUIZZES.values() for q in questions] + CONCEPT_QUESTIONS
#: how much better than chance a strategy that does not read the question may score
MAX_CUE_RATIO = 1.5
#: the largest share of questions one letter may answer
MAX_LETTER_SHARE = 0.40
#: words and signs that qualify a claim: a hedge, a restriction, a clause added after a colon or in brackets
QUALIFIERS = re.compile(r"\b(?:about|roughly|nearly|almost|approximately|usually|typically|often|generally|"
                        r"in general|may|might|can|could|up to|only|exactly|mostly|in principle|on average|"
                        r"tends?)\b|[:;(]", re.IGNORECASE)


def _pick_by(questions: list[Question], score) -> float:
    """The expected number of right answers of a learner who picks the option(s) with the highest
    ``score(option text)`` (ties broken at random), without reading the question."""
    right = 0.0
    for question in questions:
        scores = [score(option.text) for option in question.options]
        best = [i for i, s in enumerate(scores) if s == max(scores)]
        right += (question.correct_index in best) / len(best)
    return right


def _chance(questions: list[Question]) -> float:
    return sum(1 / len(q.options) for q in questions)


def _cue_ratio(questions: list[Question], score) -> float:
    return _pick_by(questions, score) / _chance(questions)


STRATEGIES = {
    "the longest option": len,
    "the shortest option": lambda text: -len(text),
    "the most qualified option": lambda text: len(QUALIFIERS.findall(text)),
}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_picking_an_option_without_reading_the_question_scores_near_chance(strategy):
    ratio = _cue_ratio(ASKED, STRATEGIES[strategy])
    assert ratio <= MAX_CUE_RATIO, (
        f"picking {strategy} scores {ratio:.2f}× chance over the {len(ASKED)} questions of the quizzes and "
        f"the concept quiz (at most {MAX_CUE_RATIO}×): rewrite the options so that the right one does not "
        "stand out")


def test_the_correct_letters_are_spread_evenly():
    letters = collections.Counter(LETTERS[q.correct_index] for q in ASKED)
    letter, most = letters.most_common(1)[0]
    assert most / len(ASKED) <= MAX_LETTER_SHARE, (
        f"{letter} is the correct letter of {most} of {len(ASKED)} questions "
        f"({dict(sorted(letters.items()))})")
    assert len(letters) == 4


@pytest.mark.parametrize("lesson", sorted(QUIZZES))
def test_no_quiz_of_three_questions_or_more_has_a_cue_of_its_own(lesson):
    """The course-wide figures could hide one lesson whose quiz gives itself away: in each quiz the longest
    option is right in at most half of its questions, and the right letters are not all the same."""
    questions = list(QUIZZES[lesson])
    if len(questions) < 3:
        pytest.skip("too few questions to judge")
    longest = _pick_by(questions, len)
    assert longest <= len(questions) / 2, (
        f"lesson {lesson}: the longest option is right in {longest:g} of {len(questions)} questions")
    assert len({q.correct_index for q in questions}) > 1, f"lesson {lesson}: every answer is the same letter"


def test_the_cue_measures_find_the_cues_they_are_for():
    """The tests above can fail: a quiz whose right answer is always the longest, or always the most
    qualified, or always B, is caught."""
    def question(n, right, long_wrong=False):
        texts = ["short", "brief", "tiny", "small"]
        texts[right] = "a long option: it is, usually, about right" if not long_wrong else "ok"
        options = ((t, i == right, f"why option {i} is what it is") for i, t in enumerate(texts))
        return ask(f"question {n}?", *options)

    cued = [question(n, 1) for n in range(8)]
    assert _cue_ratio(cued, len) == pytest.approx(4.0)
    assert _cue_ratio(cued, STRATEGIES["the most qualified option"]) == pytest.approx(4.0)
    short_and_right = [question(n, 1, long_wrong=True) for n in range(8)]
    assert _cue_ratio(short_and_right, STRATEGIES["the shortest option"]) > 3

    def top_share(questions):
        return collections.Counter(q.correct_index for q in questions).most_common(1)[0][1] / len(questions)

    assert top_share(cued) > MAX_LETTER_SHARE
    assert top_share([question(n, n % 4) for n in range(8)]) == 0.25


# ------------------------------------------------------------------------------------------ the concept quiz
#: two questions ask the same thing when the word pairs of their prompts, or of their prompts with their
#: right answers, overlap this much (Jaccard index of word bigrams); the course's own are below 0.11
MAX_SHARED_WORDING = 0.12


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_√ᵀ·−∞']+", text.lower())


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = _words(text)
    return set(zip(words, words[1:]))


def _shared_wording(a: str, b: str) -> float:
    x, y = _bigrams(a), _bigrams(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def _with_answer(question: Question) -> str:
    return f"{question.prompt} {question.options[question.correct_index].text}"


def _closest_lesson_question(question: Question) -> tuple[float, str]:
    best = (0.0, "")
    for lesson, questions in QUIZZES.items():
        for n, asked in enumerate(questions, start=1):
            shared = max(_shared_wording(question.prompt, asked.prompt),
                         _shared_wording(_with_answer(question), _with_answer(asked)))
            best = max(best, (shared, f"lesson {lesson} Q{n}: {asked.prompt[:70]}"))
    return best


@pytest.mark.parametrize("concept", concepts.CONCEPTS, ids=lambda c: c.key)
def test_the_concept_quiz_asks_what_no_lesson_quiz_has_answered(concept):
    """The concept quiz measures what the course taught, before (lesson 00) and after (lesson 10): a question
    a lesson quiz has asked and explained already would measure the memory of that quiz instead."""
    shared, closest = _closest_lesson_question(concept.question)
    assert shared < MAX_SHARED_WORDING, (
        f"concept question {concept.key!r} shares {shared:.2f} of its wording with {closest}")


def test_the_wording_measure_finds_a_copied_question_and_one_with_new_numbers():
    lesson_question = QUIZZES["03"][1]          # the shape of Q·Kᵀ, 5 queries and 7 keys
    assert _closest_lesson_question(lesson_question)[0] == 1.0
    same_with_new_numbers = ask(
        "Q holds 6 queries and K holds 9 keys, both with d_k = 4. What is the shape of Q·Kᵀ?",
        ("(6, 9)", R, "one row per query, one column per key"),
        ("(9, 6)", W, "that is K·Qᵀ, the transposed one"))
    assert _closest_lesson_question(same_with_new_numbers)[0] >= MAX_SHARED_WORDING
    assert math.isclose(_shared_wording("a b c", "d e f"), 0.0)
