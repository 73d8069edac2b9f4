"""A :class:`Mistake`: how to recognise it (:func:`like`, :func:`every_case`, :func:`either`), what to say.

Part of the exercise engine (:mod:`.engine`); the mistakes every exercise shares are in
:mod:`.catalogue`, each lesson's own in its ``lessonNN_name`` module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..course.feedback import FAILED, Feedback
from .messages import case_text, describe, quoted_names
from .outcome import Outcome, behave_alike
from .runner import run

__all__ = ["Text", "Mistake", "like", "either", "every_case"]

Text = str | Callable[[Outcome], str]


class _Like:
    """A test: the learner's function behaves like one of these wrong implementations on every case."""

    def __init__(self, candidates: tuple[Callable, ...]):
        self.candidates = candidates

    def _alike(self, outcome: Outcome, candidate: Callable) -> bool:
        return behave_alike(outcome, run(candidate, outcome.case))

    def __call__(self, outcome: Outcome) -> bool:  # on one case
        return any(self._alike(outcome, c) for c in self.candidates)

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return any(all(self._alike(o, c) for o in outcomes) for c in self.candidates)


class _Either:
    def __init__(self, tests: tuple[Callable, ...]):
        self.tests = tests

    def __call__(self, outcome: Outcome) -> bool:
        return any(test(outcome) for test in self.tests)

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return any(_test_matches(test, failing, outcomes) for test in self.tests)


class _EveryCase:
    def __init__(self, predicate: Callable[[Outcome], bool]):
        self.predicate = predicate

    def __call__(self, outcome: Outcome) -> bool:
        return bool(self.predicate(outcome))

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return all(self.predicate(o) for o in outcomes)


def every_case(predicate: Callable[[Outcome], bool]) -> _EveryCase:
    """A test: ``predicate(outcome)`` holds on every case (e.g. "right on small scores, NaN on large")."""
    return _EveryCase(predicate)


def like(*candidates: Callable) -> _Like:
    """A test: the learner's function behaves like one of these wrong implementations.

    It counts as a match only when one candidate gives the same answers (or fails the same
    way) on *every* case of the exercise.
    """
    return _Like(candidates)


def either(*tests: Callable[[Outcome], bool]) -> _Either:
    """A test that matches when any of ``tests`` matches (each with its own scope)."""
    return _Either(tests)


def _test_matches(test, failing: Outcome, outcomes: list[Outcome]) -> bool:
    if hasattr(test, "matches"):
        return test.matches(failing, outcomes)
    return bool(test(failing))


@dataclass(frozen=True)
class Mistake:
    """One likely mistake: how to recognise it, what to tell, how to fix.

    ``test`` is :func:`like` (wrong implementations that must behave like the learner's
    function on every case), :func:`every_case` (a predicate that must hold on every
    case), :func:`either`, or a plain predicate ``test(outcome) -> bool`` on the
    failing case. ``explain`` and ``hint`` are text, or functions of the failing
    outcome that return text.

    A hint names the idea and where to look, never a line of the solution
    (``tests/exercises/test_hints_and_messages.py`` holds every hint and message against every solution
    line of the notebooks). ``hint`` may be a tuple of hints, each more specific than the one before: the
    first is the *nudge* (what nbgrader's feedback shows), and a learner who makes the same mistake
    again in self-study gets the next one.
    """

    key: str
    title: str
    explain: Text
    hint: Text | tuple[Text, ...]
    test: Callable[[Outcome], bool]

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return _test_matches(self.test, failing, outcomes)

    def hints(self, outcome: Outcome) -> list[str]:
        """Every hint, the nudge first, as text for ``outcome``."""
        hints = self.hint if isinstance(self.hint, tuple) else (self.hint,)
        return [h(outcome) if callable(h) else h for h in hints]

    def feedback(self, exercise: str, outcome: Outcome, outputs: tuple[str, ...] = (),
                 attempt: int = 0) -> Feedback:
        """The feedback for ``outcome``; ``attempt`` (0 the first time the mistake is named) picks a hint."""
        explain = self.explain(outcome) if callable(self.explain) else self.explain
        hints = self.hints(outcome)
        message = f"Likely mistake: {self.title}. {explain}"
        if outcome.mutated and self.key != "mutates_input":
            message += f" Also, your function changed its input {quoted_names(outcome.mutated)} in place."
        hint = hints[min(attempt, len(hints) - 1)]
        return Feedback(exercise, FAILED, message, hint, describe(outcome, outputs), self.key, nudge=hints[0],
                        case=case_text(outcome.case))

