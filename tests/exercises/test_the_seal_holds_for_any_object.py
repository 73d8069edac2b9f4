"""The seal on the judge in the learner's kernel holds for whatever a notebook binds to the judge's names:
a builtin, a numpy function, a callable object of the learner's own class, a plain value, another module,
a function's code swapped in place; the verdict constants and the reference are out of its reach. Each
such change fails the interactive check as ``tampered``, naming it, and fails the graded cell
(``assert_passes``) even when the check's own box says PASSED; a setting of how checks run (the runner's
``SETTINGS``) is no tampering.

The grade itself does not rely on this seal: nbgrader takes each graded cell's verdict from the course's
judge too, outside the kernel (tests/exercises/test_the_grade_comes_from_a_judge_outside_the_kernel.py,
tests/grading/test_gaming_scores_zero.py).
"""

from __future__ import annotations

import builtins
import dataclasses
import sys

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib import _seal, exercises
from lessons_lib.course import feedback as feedback_module
from lessons_lib.exercises import grading, outcome, runner
from tests.helpers import solutions


class _Yes:
    """A callable object of the learner's own class: not a function, yet it answers every comparison."""

    def __call__(self, *args, **kwargs):
        return True


def _swap_code(monkeypatch):
    monkeypatch.setattr(outcome._matches, "__code__", (lambda result, expected, kinds="f": True).__code__)


ATTACKS = {
    # name: (how, what the check names)
    "ll.assert_passes = print (a builtin)": (lambda mp: mp.setattr(ll, "assert_passes", print, raising=False),
                                             "lessons_lib.assert_passes"),
    "ll.check_softmax = a builtin": (lambda mp: mp.setattr(ll, "check_softmax", repr, raising=False),
                                     "lessons_lib.check_softmax"),
    "the comparison = all (a builtin)": (lambda mp: mp.setattr(outcome, "close", all), "outcome.close"),
    "the comparison = an object of the learner's class": (
        lambda mp: mp.setattr(outcome, "allclose", _Yes()), "outcome.allclose"),
    "np.sqrt = np.positive (the reference of my_scale)": (lambda mp: mp.setattr(np, "sqrt", np.positive),
                                                         "numpy.sqrt"),
    "the tolerance = 1e300 (a plain value)": (lambda mp: mp.setattr(outcome, "_ATOL", 1e300),
                                              "outcome._ATOL"),
    "feedback.FAILED = 'passed' (a verdict constant)": (lambda mp: mp.setattr(feedback_module, "FAILED",
                                                                               "passed"), "feedback.FAILED"),
    "the engine's FAILED = 'passed' (a verdict constant)": (
        lambda mp: mp.setattr(exercises.engine, "FAILED", "passed"), "engine.FAILED"),
    "the reference = np.zeros_like": (
        lambda mp: mp.setitem(vars(exercises.SOFTMAX), "reference", np.zeros_like),
        "EXERCISES['my_softmax'].reference"),
    "EXERCISES['my_softmax'] replaced": (lambda mp: mp.setitem(exercises.EXERCISES, "my_softmax",
                                                                dataclasses.replace(exercises.SOFTMAX)),
                                          "EXERCISES['my_softmax']"),
    "a function's code swapped in place": (_swap_code, "outcome._matches (its code)"),
    "builtins.vars = a learner's object": (lambda mp: mp.setattr(builtins, "vars", _Yes()), "builtins.vars"),
    "builtins.all = a builtin": (lambda mp: mp.setattr(builtins, "all", any), "builtins.all"),
    "a module of the judge replaced in sys.modules": (
        lambda mp: mp.setitem(sys.modules, "lessons_lib.exercises.grading", type(sys)("grading")),
        "sys.modules['lessons_lib.exercises.grading']"),
    "Feedback.passed = a property of a builtin": (
        lambda mp: mp.setattr(ll.Feedback, "passed", property(bool)), "Feedback.passed"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_whatever_is_bound_to_the_judges_names_fails_the_check_and_the_graded_cell_naming_it(attack,
                                                                                             monkeypatch):
    how, named = ATTACKS[attack]
    check = exercises.check_softmax  # taken before the notebook's change, as a graded cell's lookup
    assert_passes = grading.assert_passes
    how(monkeypatch)
    planted = _seal.changes()
    assert any(named in name for name in planted), (attack, planted)
    feedback = check(solutions.my_softmax)
    status = object.__getattribute__(feedback, "__dict__")["status"]   # the field: .passed may be the attack
    assert status != "passed" and feedback.mistake == "tampered", (attack, feedback.message)
    passing = ll.Feedback("my_softmax", "passed", "Well done.")
    with pytest.raises(AssertionError, match=r"my_softmax: NOT YET \(tampered\)"):
        assert_passes(passing)


@pytest.mark.parametrize("setting", runner.SETTINGS)
def test_a_setting_of_how_checks_run_is_no_tampering(setting, monkeypatch):
    value = {"ISOLATION": "thread", "TIME_LIMIT_S": 10.0, "_STOP_TRIES": 3, "_STOP_WAIT_S": 0.1}[setting]
    monkeypatch.setattr(runner, setting, value)
    assert _seal.changes() == []
    assert exercises.check_softmax(solutions.my_softmax).passed


def test_nothing_is_planted_in_a_library_as_it_loaded():
    assert _seal.changes() == []
    grading.assert_passes(exercises.check_softmax(solutions.my_softmax))


def _swaps_the_comparison_and_returns_zeros(x):
    outcome._matches.__code__ = (lambda result, expected, kinds="f": True).__code__
    return np.zeros_like(x)


def test_a_code_swap_made_during_a_call_in_the_kernels_own_thread_is_named_and_put_back(monkeypatch):
    """Where the call runs in the kernel's own process (no fork), what it swapped in place is undone after it:
    the seal's record is what the check puts back."""
    monkeypatch.setattr(runner, "ISOLATION", "thread")
    code = outcome._matches.__code__
    feedback = exercises.check_softmax(_swaps_the_comparison_and_returns_zeros)
    assert feedback.mistake == "tampered" and "outcome._matches (its code)" in feedback.message, str(feedback)
    assert outcome._matches.__code__ is code
    assert _seal.changes() == []
    assert exercises.check_softmax(solutions.my_softmax).passed


def test_a_numpy_functions_code_swapped_in_place_is_named():
    """Not only a rebound name: numpy's own Python functions keep the code they loaded with."""
    code = np.allclose.__wrapped__.__code__   # numpy's Python code, under its C dispatcher
    try:
        np.allclose.__wrapped__.__code__ = (lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: True).__code__
        assert "numpy._core.numeric.allclose (its code)" in _seal.changes()
        assert exercises.check_softmax(solutions.my_softmax).mistake == "tampered"
    finally:
        np.allclose.__wrapped__.__code__ = code
    assert _seal.changes() == []
