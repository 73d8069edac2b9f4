"""The judge cannot be borrowed or patched: calling the library's answer does not count, patching numpy's
comparisons or the judge (during the call or in an earlier cell) does not pass and changes nothing, and an
answer that is an array subclass cannot vote on its own comparison."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.core import attention
from lessons_lib.exercises import check_softmax, grading
from tests.helpers import solutions


# ------------------------------------------------------------------ the library's answer does not count
def _calls_the_reference(x):
    return exercises.EXERCISES["my_softmax"].reference(x)


def _calls_the_formula(scores, d_k):
    return exercises.EXERCISES["my_scale"].formula(scores, d_k)


BORROWED = [
    # (exercise, a function that reaches for the library's answer, what the feedback names)
    ("my_softmax", attention.softmax, "ll.softmax"),
    ("my_softmax", lambda x: attention.softmax(x), "ll.softmax"),
    ("my_softmax", lambda x: attention.attention_weights(x, scale=1.0), "ll.attention_weights"),
    ("my_softmax", _calls_the_reference, "own reference"),
    ("my_scale", _calls_the_formula, "own reference"),
    ("my_scale", lambda scores, d_k: attention.scale_scores(scores, d_k), "ll.scale_scores"),
    ("my_scores", lambda Q, K: attention.attention_scores(Q, K), "ll.attention_scores"),
    ("my_projection", attention.project_qkv, "ll.project_qkv"),
    ("my_weighted_sum", lambda weights, V: attention.weighted_values(weights, V), "ll.weighted_values"),
    ("my_split_heads", lambda x, n_heads: exercises.lesson06_multi_head.multihead.split_heads(x, n_heads),
     "ll.split_heads"),
    ("my_causal_weights", lambda s: attention.attention_weights(s, scale=1.0, causal=True),
     "ll.attention_weights"),
    ("my_softmax_off", lambda scores: attention.softmax_off(scores), "ll.softmax_off"),
]


@pytest.mark.parametrize("name, fn, shown", BORROWED, ids=[f"{b[0]}-{i}" for i, b in enumerate(BORROWED)])
def test_calling_the_librarys_answer_does_not_pass_and_the_feedback_says_so(name, fn, shown):
    feedback = exercises.EXERCISES[name].check(fn)
    assert feedback.passed is False and feedback.mistake == "library_answer", str(feedback)
    assert shown in feedback.message and "does not count" in feedback.message


# ------------------------------------------------------------------ patching the judge
def _patches_allclose_and_returns_zeros(x):
    np.allclose = lambda *args, **kwargs: True
    np.array_equal = lambda *args, **kwargs: True
    return np.zeros_like(x)


def _patches_the_reference(x):
    attention.softmax = lambda x, axis=-1: np.zeros_like(x)
    exercises.EXERCISES["my_softmax"] = dataclasses.replace(exercises.SOFTMAX, reference=np.zeros_like)
    return np.zeros_like(x)


def _patches_feedback(x):
    from lessons_lib.course import feedback

    feedback.Feedback.passed = property(lambda self: True)
    return np.zeros_like(x)


@pytest.mark.parametrize("fn", [_patches_allclose_and_returns_zeros, _patches_the_reference,
                                _patches_feedback])
@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_patching_the_judge_during_the_call_does_not_pass_and_leaves_nothing_changed(fn, isolation,
                                                                                     monkeypatch):
    if isolation == "process" and not hasattr(os, "fork"):
        pytest.skip("no fork on this system")
    monkeypatch.setattr(exercises.runner, "ISOLATION", isolation)
    before = (np.allclose, np.array_equal, attention.softmax, exercises.EXERCISES["my_softmax"],
              vars(exercises.Feedback).get("passed"))
    feedback = check_softmax(fn)
    after = (np.allclose, np.array_equal, attention.softmax, exercises.EXERCISES["my_softmax"],
             vars(exercises.Feedback).get("passed"))
    assert all(a is b for a, b in zip(before, after)), "put back, or never left the child"
    assert feedback.passed is False and feedback.mistake == "tampered", str(feedback)
    assert "does not count" in feedback.message
    assert check_softmax(solutions.my_softmax).passed  # and the judge still works


def test_a_notebook_that_patched_numpy_before_the_check_does_not_pass(monkeypatch):
    namespace = {"np": np}
    cell = "def always(*args, **kwargs):\n    return True\n"
    exec(compile(cell, "/tmp/ipykernel_0/cell.py", "exec"), namespace)  # as a notebook cell defines it
    monkeypatch.setattr(np, "allclose", namespace["always"])
    feedback = check_softmax(lambda x: np.zeros_like(x))
    assert feedback.mistake == "tampered" and "`numpy.allclose`" in feedback.message, str(feedback)
    with pytest.raises(AssertionError, match=r"my_softmax: NOT YET \(tampered\)"):
        grading.assert_passes(check_softmax(solutions.my_softmax))


def test_a_notebook_that_made_every_feedback_pass_fails_its_graded_cell(monkeypatch):
    namespace = {}
    cell = "always = property(lambda self: True)\n"
    exec(compile(cell, "/tmp/ipykernel_0/cell.py", "exec"), namespace)  # as a notebook cell defines it
    monkeypatch.setattr(exercises.Feedback, "passed", namespace["always"])
    with pytest.raises(AssertionError, match=r"my_softmax: NOT YET \(tampered\).*Feedback.passed"):
        grading.assert_passes(check_softmax(lambda x: np.zeros_like(x)))


def test_an_answer_that_is_an_array_subclass_cannot_vote_on_its_own_comparison():
    class AlwaysEqual(np.ndarray):
        def __eq__(self, other):
            return np.ones(self.shape, bool)

        def __array_ufunc__(self, *args, **kwargs):
            return np.ones(args[2].shape if len(args) > 2 and hasattr(args[2], "shape") else (), bool)

    feedback = check_softmax(lambda x: np.zeros_like(x).view(AlwaysEqual))
    assert feedback.passed is False, str(feedback)
