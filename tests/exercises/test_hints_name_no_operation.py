"""Hints that nudge: nothing an exercise's check can say, and no hint in a lesson, names an operation of the
exercise's worked solution, in code or in words (the operations, their words and the texts:
``tests/helpers/hints.py``). An untouched exercise says that it is not attempted yet and where to start,
nothing more; each mistake of a lesson gives graduated hints: a concept, then a shape or property, then a case
to try.

A call, attribute or operator of the solution counts with its variable names free (``K.T`` is ``k.T``, and
Q·Kᵀ in a sentence is ``Q @ K.T``), and so do the words that say it ("square root", "transpose", "lower
triangle", "one-hot vector of position i + 1", "keep the axis"). Arithmetic on sizes is a shape, which a hint
may give: ``n_heads · d_head``.
"""

from __future__ import annotations

import re
import warnings

import nbformat
import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.exercises import catalogue, messages
from tests.helpers import NOTEBOOKS, hints

SOURCES = hints.solution_sources()
SHARED = (*catalogue.TYPE_MISTAKES, *catalogue.FALLBACK_MISTAKES, catalogue.TAMPERED,
          catalogue.LIBRARY_ANSWER)


def _tiers(mistake) -> tuple:
    return mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)


def _static_texts(exercise) -> list[tuple[str, str]]:
    """The texts of a check that are written out, not computed from an answer."""
    texts = [("start hint", exercise.start_hint)]
    for mistake in (*exercise.mistakes, *SHARED):
        parts = [("title", mistake.title), ("explain", mistake.explain),
                 *((f"hint {i + 1}", hint) for i, hint in enumerate(_tiers(mistake)))]
        texts += [(f"{mistake.key} {label}", text) for label, text in parts if isinstance(text, str)]
    texts += [("error hint", hint) for _, _, hint in messages.ERRORS]
    return texts


def _lesson_hints() -> list[tuple[str, str, str]]:
    """``(exercise, where, text)`` of every hint a lesson shows beside an exercise: its folds "Hint …" and its
    paragraphs "*Hint.* …", for the exercise whose worked solution the next solution cell holds."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        for index, cell in enumerate(cells):
            if cell.cell_type != "markdown":
                continue
            texts = re.findall(r"<details>\s*<summary>\s*Hint.*?</summary>(.*?)</details>", cell.source, re.S)
            texts += re.findall(r"^\*Hint\.?\*(.*?)(?:\n\s*\n|\Z)", cell.source, re.S | re.M)
            if not texts:
                continue
            following = next(c.source for c in cells[index + 1:]
                             if c.cell_type == "code" and hints.BEGIN in c.source)
            names = [n for n in SOURCES if re.search(rf"\b(?:def {n}\b|{n}\s*=)", following)]
            found += [(name, f"{path.name}, cell {index}", text) for name in names for text in texts]
    return found


def _naming(texts, name) -> list[str]:
    return [f"{name} {label}: names {ops}\n    {text[:300]}" for label, text in texts
            if (ops := hints.named_operations(text, SOURCES[name]))]


# ------------------------------------------------------------------------------------------------ the rule
def test_every_exercise_has_a_worked_solution_whose_operations_have_words():
    assert set(SOURCES) == {*exercises.EXERCISES, "my_query"}
    unnamed = {name: hints.unnamed_operations(source) for name, source in SOURCES.items()}
    assert not any(unnamed.values()), f"add the words that name these to hints.WORDS: {unnamed}"


@pytest.mark.parametrize("name, text", [
    ("my_scale", "Use np.sqrt(d_k)."), ("my_scale", "Take the square root of d_k."),
    ("my_scores", "K.T is the transpose."), ("my_scores", "Compute Q·Kᵀ."), ("my_scores", "use q @ k.T"),
    ("my_causal_weights", "np.tril of a matrix of True"), ("my_causal_weights", "the lower triangle"),
    ("my_next_token_head", "make query i a large multiple of the one-hot vector of position i + 1"),
    ("my_softmax", "subtract each row's maximum before exponentiating"),
    ("my_softmax", "x.max(axis=-1, keepdims=True)"), ("my_softmax", "keep that axis"),
    ("my_projection", "one matrix product per output"), ("my_online_update", "m_new[:, None]"),
    ("my_softmax_off", "its exponential is e^(−m)"), ("my_split_heads", "a reshape, then a transpose"),
])
def test_the_rule_finds_an_operation_named_in_code_or_in_words(name, text):
    assert hints.named_operations(text, SOURCES[name]), f"{text!r} names an operation of {name}'s solution"


@pytest.mark.parametrize("name, text", [
    ("my_softmax", "Each row must add up to 1, and sums to 1 in every case."),
    ("my_next_token_head", "The scores are divided by √d_head before the softmax."),   # not in its solution
    ("my_merge_heads", "The answer is (L, n_heads·d_head)."),                       # a shape
    ("my_online_update", "a row that has seen only -inf becomes NaN"),
    ("my_scores", "Entry (i, j) pairs row i of Q with row j of K: a dot product."),
    ("my_split_heads", "Try x = np.array([[0.0, 1, 2], [3, 4, 5]]) with row-wise numbers"),
])
def test_the_rule_leaves_concepts_shapes_and_cases_alone(name, text):
    assert not hints.named_operations(text, SOURCES[name])


# ------------------------------------------------------------------------------------- what learners read
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_no_written_hint_or_message_names_an_operation_of_the_solution(name):
    naming = _naming(_static_texts(exercises.EXERCISES[name]), name)
    assert not naming, "\n".join(naming)


def test_no_hint_in_a_lesson_names_an_operation_of_the_solution():
    lesson_hints = _lesson_hints()
    assert {name for name, _, _ in lesson_hints} >= set(exercises.EXERCISES) - {"my_merge_heads"}
    naming = [f"{where}: {line}" for name, where, text in lesson_hints
              for line in _naming([("hint", text)], name)]
    assert not naming, "\n".join(naming)


def test_lesson_01s_check_names_no_operation_of_its_solution():
    naming = _naming(hints.query_texts(), "my_query")
    assert not naming, "\n".join(naming)


@pytest.mark.slow  # every candidate and wrong answer of every exercise through its check: about 25 s in all
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_no_feedback_of_a_check_names_an_operation_of_the_solution(name, monkeypatch):
    """Every text the check can compute for a wrong answer: the feedback of each candidate mistake of the
    table and of generic wrong answers, and each mistake's text evaluated on their outcomes and on errors."""
    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")  # the same feedback, faster
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        texts = hints.learner_texts(exercises.EXERCISES[name])
    assert len(texts) > 50
    naming = _naming(texts, name)
    assert not naming, "\n".join(dict.fromkeys(naming))


# ------------------------------------------------------------------------- where to start, then three tiers
def _placeholder(*args):
    raise NotImplementedError("your code here")


# Every check of a function the learner writes (check_street_query's my_query is a value to design, whose
# untouched all-zeros answer tests/exercises/test_checks_pass_solutions_and_name_mistakes.py holds).
FUNCTION_CHECKS = sorted(name for name in exercises.__all__
                         if name.startswith("check_") and name != "check_street_query")


@pytest.mark.parametrize("check", FUNCTION_CHECKS)
def test_an_untouched_exercise_says_only_where_to_start(check):
    feedback = getattr(exercises, check)(_placeholder)
    exercise = exercises.EXERCISES[feedback.exercise]
    assert feedback.status == "not attempted" and not feedback.passed
    assert feedback.hint == exercise.start_hint
    assert exercise.start_hint.startswith("Start "), "a start hint says where to start"
    assert not feedback.details and "Likely mistake" not in feedback.message


@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_each_mistake_of_a_lesson_gives_a_concept_then_a_property_then_a_case_to_try(name):
    for mistake in exercises.EXERCISES[name].mistakes:
        tiers = _tiers(mistake)
        assert len(tiers) == 3 and len(set(map(str, tiers))) == 3, (
            f"{name} {mistake.key}: three hints (a concept, a shape or property, a case to try), not "
            f"{len(tiers)}")
        case = tiers[2]
        assert isinstance(case, str) and re.search(r"\bTry\b|case below", case), (
            f"{name} {mistake.key}: the third hint gives a case to try: {case!r}")
