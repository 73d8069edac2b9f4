"""Grading with nbgrader: a check's verdict as an assertion, and the same check on hidden cases.

The interactive checks (``check_softmax(my_softmax)``) never raise: they return a
:class:`~lessons_lib.course.feedback.Feedback` box. nbgrader grades a test cell by whether it raises,
so each exercise's graded test cell (written by ``tools/stamp_notebooks.py``) wraps the same
check::

    from lessons_lib.exercises.grading import assert_passes, check_hidden

    assert_passes(check_softmax(my_softmax))             # visible: the cases the learner sees
    ### BEGIN HIDDEN TESTS
    assert_passes(check_hidden("my_softmax", my_softmax))  # removed from the learner's copy
    ### END HIDDEN TESTS

The cell raises exactly when the check does not pass (not yet, or not attempted), with the
check's named mistake and message, so nbgrader's feedback names the mistake. The message's format
(``my_softmax: NOT YET (wrong_axis): …``) is written by :func:`assert_passes` and read back by
:func:`read_verdict`, here beside it: the class report (``tools/class_report.py``) counts the
mistakes of a class from the graded notebooks with it.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from .._checks import check_seed
from ..course.feedback import Feedback
from .engine import Case

__all__ = ["assert_passes", "read_verdict", "Verdict", "hidden_cases", "check_hidden"]

#: Seed of the hidden cases' row shuffles (fixed: the same hidden cases for every learner).
HIDDEN_SEED = 2026


def assert_passes(feedback: Feedback) -> None:
    """Raise ``AssertionError`` unless ``feedback`` says PASSED; the message names the mistake.

    >>> assert_passes(Feedback("my_f", "passed", "Well done."))
    >>> assert_passes(Feedback("my_f", "failed", "Rows do not sum to 1.", mistake="wrong_axis"))
    Traceback (most recent call last):
    AssertionError: my_f: NOT YET (wrong_axis): Rows do not sum to 1.
    """
    if feedback.passed:
        return
    mistake = f" ({feedback.mistake})" if feedback.mistake else ""
    label = _NOT_YET if feedback.passed is False else _NOT_ATTEMPTED
    hint = f" Hint: {feedback.hint}" if feedback.hint else ""
    raise AssertionError(f"{feedback.exercise}: {label}{mistake}: {feedback.message}{hint}")


_NOT_YET, _NOT_ATTEMPTED = "NOT YET", "NOT ATTEMPTED YET"
_VERDICT = re.compile(r"\b(my_\w+): (NOT ATTEMPTED YET|NOT YET)(?: \((\w+)\))?: ")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What a failed graded cell said: the exercise, whether it was attempted, the mistake it named."""

    exercise: str
    attempted: bool
    mistake: str | None  # the check's key (``wrong_axis``), or None when it named no mistake


def read_verdict(message: str) -> Verdict | None:
    """The verdict in a message of :func:`assert_passes` (the ``evalue`` of a failed graded cell,
    or the text of a feedback page); None when ``message`` holds none (another error).

    >>> read_verdict("my_softmax: NOT YET (wrong_axis): Rows do not sum to 1. Hint: axis=-1.")
    Verdict(exercise='my_softmax', attempted=True, mistake='wrong_axis')
    >>> read_verdict("my_scale: NOT ATTEMPTED YET: my_scale still raises NotImplementedError.")
    Verdict(exercise='my_scale', attempted=False, mistake=None)
    >>> read_verdict("name 'my_scale' is not defined") is None
    True
    """
    if not isinstance(message, str):
        raise TypeError(f"message must be the text of a graded cell's error; got {type(message).__name__}.")
    match = _VERDICT.search(message)
    if match is None:
        return None
    return Verdict(match.group(1), match.group(2) == _NOT_YET, match.group(3))


def hidden_cases(cases: list[Case], seed: int = HIDDEN_SEED) -> list[Case]:
    """Cases the learner does not see, made from the visible ones without changing what they test.

    Every array argument has its rows (axis 0) shuffled, one seeded permutation per row count,
    so arrays that share a row count stay paired (a running max with its running sum; weights
    with values) and rows stay what they were (a row of weights still sums to 1). A case with
    no array argument (sizes only) has each integer size grown by one instead.
    """
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    hidden = []
    for case in cases:
        arrays = {k: v for k, v in case.args.items() if isinstance(v, np.ndarray) and v.ndim}
        if arrays:
            orders: dict[int, np.ndarray] = {}
            for value in arrays.values():
                n = value.shape[0]
                if n not in orders:
                    order = rng.permutation(n)
                    orders[n] = order if n < 2 or (order != np.arange(n)).any() else np.roll(order, 1)
            args = {k: (v[orders[v.shape[0]]] if k in arrays else v) for k, v in case.args.items()}
            label = f"hidden: {case.label}, rows shuffled"
        else:
            args = {k: (v + 1 if isinstance(v, int) and not isinstance(v, bool) else v)
                    for k, v in case.args.items()}
            label = "hidden: " + ", ".join(f"{k} = {v}" for k, v in args.items())
        hidden.append(dataclasses.replace(case, label=label, args=args))
    return hidden


def check_hidden(name: str, fn) -> Feedback:
    """The check of exercise ``name`` (e.g. ``"my_softmax"``) run on :func:`hidden_cases` only."""
    from . import EXERCISES

    exercise = EXERCISES[name]
    return dataclasses.replace(exercise, cases=lambda: hidden_cases(exercise.cases())).check(fn)
