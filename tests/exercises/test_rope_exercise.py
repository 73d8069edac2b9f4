"""Lesson 11's exercise, ``my_rope``: the worked solution passes, the hints (its start hint too: what an
untouched exercise says, for every exercise, is in tests/exercises/test_hints_name_no_operation.py) nudge
without the recipe, the cases keep the sizes apart, and the engine's refusals (a case
whose right answer is a clear ValueError) behave. Each mistake a learner makes, written the way a learner
writes it (the layouts either way, one speed for all pairs, degrees, no base, the values turned, the two parts
of the turn swapped, an odd d_head not refused), is named in ``tests/helpers/wrong_answers.py``'s
``MISTAKES``."""

from __future__ import annotations

import numpy as np

from lessons_lib import exercises
from lessons_lib.exercises import grading
from lessons_lib.exercises.catalogue import NOT_REFUSED
from lessons_lib.exercises.engine import Case, Exercise, Refusal, like
from lessons_lib.exercises.outcome import Outcome, behave_alike, refused_clearly
from tests.helpers import solutions
from tests.helpers.wrong_answers import learners_rope

ROPE = exercises.EXERCISES["my_rope"]


def test_the_worked_solution_passes_the_shown_and_the_unseen_cases():
    assert ROPE.check(solutions.my_rope).passed
    assert grading.check_hidden("my_rope", solutions.my_rope).passed
    assert ROPE.check(lambda q, k, v, positions, convention="half": (
        learners_rope(q, positions, convention), learners_rope(k, positions, convention), v)).passed


def test_hints_nudge_from_the_idea_to_a_case_without_naming_the_operations():
    """Three tiers (an idea, a property or shape, a case to try) and no operation of the solution's code."""
    code_words = ("np.", "cos(", "sin(", "concatenate", "stack", "reshape", "**", "arange", "% 2", "raise ")
    for mistake in ROPE.mistakes:
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        assert len(hints) == 3, mistake.key
        assert hints[2].startswith("Try"), mistake.key
        for hint in hints:
            assert not any(word in hint for word in code_words), (mistake.key, hint)
    assert ROPE.start_hint.startswith("Start with the hand-made case of section 3")
    assert "cos" not in ROPE.start_hint and "10000" not in ROPE.start_hint


def test_every_visible_case_keeps_the_sizes_apart_and_the_unseen_cases_are_new():
    for case in ROPE.cases():
        arrays = [a for a in case.args.values() if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        assert not {n for a in arrays for n in a.shape} & {4, 16}, case.label
    kinds = {case.args["convention"] for case in ROPE.cases()}
    assert kinds == {"half", "interleaved"}
    assert any(not np.array_equal(case.args["positions"], np.arange(len(case.args["positions"])))
               for case in ROPE.cases())
    unseen = grading.hidden_cases("my_rope", seed=3)
    assert sum(case.tag == "odd" for case in unseen) == 1
    assert {case.args["convention"] for case in unseen} == {"half", "interleaved"}
    assert any(case.args["q"].ndim == 3 for case in unseen)


# ------------------------------------------------------------------ the engine's refusals
def test_a_refusal_asks_for_a_valueerror_that_names_the_problem():
    refusal = Refusal("d_head = 5 is odd", ("d_head", "odd"))
    assert refused_clearly(ValueError("d_head must be even"), refusal)
    assert not refused_clearly(ValueError("operands could not be broadcast together"), refusal)
    assert not refused_clearly(TypeError("d_head"), refusal)
    assert refused_clearly(ValueError("anything"), Refusal("no words asked"))
    assert repr(refusal) == "ValueError: d_head = 5 is odd"
    case = Case("odd", {})
    mine = Outcome(case, error=ValueError("d_head is odd"), expected=refusal)
    assert mine.values_ok and behave_alike(mine, Outcome(case, error=ValueError("something else")))
    assert not behave_alike(mine, Outcome(case, result=np.ones(2)))


def _halve(x):
    if x.shape[-1] % 2:
        raise ValueError("x has an odd length")
    return x[..., : x.shape[-1] // 2]


HALVE = Exercise(
    name="my_halve", params=("x",), task="keeps the first half", start_hint="Start with an even length.",
    reference=lambda x: _halve(x) if x.shape[-1] % 2 == 0 else Refusal("x has an odd length", ("odd",)),
    cases=lambda: [Case("even", {"x": np.arange(6.0)}), Case("odd", {"x": np.arange(5.0)})],
    mistakes=(), hidden=None)


def test_a_case_to_refuse_that_is_answered_is_named_not_refused_with_the_librarys_words():
    assert HALVE.check(_halve).passed
    feedback = HALVE.check(lambda x: x[..., : x.shape[-1] // 2])
    assert feedback.mistake == NOT_REFUSED.key
    assert "“x has an odd length”" in feedback.message and "returned an answer instead" in feedback.message
    assert "expected = ValueError: x has an odd length" in feedback.details
    # a tuple returned on the refused case is not called "a tuple instead of one array"
    assert HALVE.check(lambda x: (x,) if x.size % 2 else _halve(x)).mistake == NOT_REFUSED.key


def test_a_lessons_table_names_a_case_to_refuse_before_the_generic_mistake():
    named = Exercise(name="my_halve", params=("x",), task=HALVE.task, start_hint=HALVE.start_hint,
                     reference=HALVE.reference, cases=HALVE.cases, hidden=None,
                     mistakes=(exercises.Mistake("odd", "an odd length is kept", "Explained.", "Hint.",
                                                 like(lambda x: x[..., : x.shape[-1] // 2])),))
    assert named.check(lambda x: x[..., : x.shape[-1] // 2]).mistake == "odd"


def test_calling_the_checks_own_reference_earns_nothing_and_is_said():
    """The reference answers an odd d_head with the refusal it asks for (a learner's function raises): a
    function that returns it fails that case, and the feedback also says the reference does not count."""
    def borrows(q, k, v, positions, convention="half"):
        return exercises.EXERCISES["my_rope"].reference(q, k, v, positions, convention)

    feedback = ROPE.check(borrows)
    assert feedback.passed is False and feedback.mistake == "odd_d_head"
    assert "does not count as solving the exercise" in feedback.message
