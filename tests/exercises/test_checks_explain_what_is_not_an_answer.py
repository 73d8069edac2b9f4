"""What is not an answer yet is explained, never raised: a placeholder, a function that returns None, a
list, a tensor, a generator or text, one that raises, a value that is not a function, a bug in the checker
itself."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
import torch

from lessons_lib import exercises
from tests.helpers import solutions

pytestmark = pytest.mark.usefixtures("warnings_are_errors")


def _forgot_return(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    e / e.sum(axis=-1, keepdims=True)


def _typo(Q, K):
    return Q @ k.T  # noqa: F821 - the typo is the point


def _wrong_arity():
    return None


#: (exercise, a function that returns no answer or raises, the mistake named, words the feedback says)
GENERIC = [
    ("my_softmax", _forgot_return, "returned_none", ["returned None", "`return`"]),
    ("my_softmax", lambda x: solutions.my_softmax(x).tolist(), "returned_list", ["list", "numpy array"]),
    ("my_softmax", lambda x: tuple(solutions.my_softmax(x)), "returned_tuple", ["tuple of 2 items"]),
    ("my_softmax", lambda x: torch.from_numpy(solutions.my_softmax(x)), "returned_tensor", ["tensor"]),
    ("my_projection", lambda x, w_q, w_k, w_v: tuple(torch.from_numpy(x @ w) for w in (w_q, w_k, w_v)),
     "returned_tensor", ["tensor"]),
    ("my_softmax", lambda x: (row for row in solutions.my_softmax(x)), "returned_generator", ["generator"]),
    ("my_softmax", lambda x: np.exp(x).sum(), "not_an_array", ["float64", "shape (2, 3)", "no axis given"]),
    ("my_softmax", lambda x: np.full(x.shape, "a"), "not_numeric", ["dtype"]),
    ("my_softmax", lambda x: solutions.my_softmax(x)[:, :2], "wrong_shape", ["Expected shape (2, 3)",
                                                                              "got (2, 2)"]),
    ("my_softmax", lambda x: solutions.my_softmax(x) + np.log(0 * x), "not_finite", ["NaN"]),
    ("my_scores", _typo, "raised", ["NameError", "name Python does not know", "'k' is not defined",
                                    "return Q @ k.T"]),
    ("my_scores", _wrong_arity, "raised", ["TypeError"]),
    ("my_scores", lambda Q, K: Q @ K.T @ np.ones((7, 7)), "raised",
     ["ValueError", "do not fit together", "inner sizes"]),
    ("my_softmax", lambda x: x.sum(axis=3), "raised", ["AxisError", "axis that does not exist"]),
    ("my_softmax", lambda x: {}["key"], "raised", ["KeyError"]),
    ("my_softmax", lambda x: sys.exit(1), "raised", ["SystemExit"]),
    ("my_weighted_sum", lambda weights, V: weights @ V + np.ones(7), "raised",
     ["broadcast", "could not line up", "(2,5)"]),
]


@pytest.mark.parametrize("name, fn, key, words", GENERIC, ids=[f"{g[2]}-{i}" for i, g in enumerate(GENERIC)])
def test_an_answer_of_the_wrong_kind_or_an_error_is_explained_without_raising(name, fn, key, words):
    feedback = exercises.EXERCISES[name].check(fn)
    assert feedback.passed is False
    assert feedback.mistake == key, str(feedback)
    text = f"{feedback.message} {feedback.hint} {feedback.details}"
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    assert "Traceback" not in text


@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
@pytest.mark.parametrize("kind", [object, np.complex128])
def test_answers_of_object_or_complex_dtype_do_not_pass(name, kind):
    solution = getattr(solutions, name)

    def wrapped(*args):
        answer = solution(*args)
        if isinstance(answer, tuple):
            return tuple(a.astype(kind) for a in answer)
        return answer.astype(kind)

    feedback = exercises.EXERCISES[name].check(wrapped)
    assert feedback.passed is False
    assert feedback.mistake in {"not_numeric", "output_not_an_array"}
    assert ("complex" if kind is np.complex128 else "Python objects") in feedback.message


def test_a_broken_head_is_explained_not_raised():
    feedback = exercises.check_next_token_head(lambda n: np.eye(n))
    assert feedback.passed is False and "two matrices" in feedback.message
    feedback = exercises.check_next_token_head(lambda n: (np.eye(n + 1), np.eye(n + 1)))
    assert feedback.passed is False and "one row per position" in feedback.message


# ------------------------------------------------------------------ not attempted yet
def _placeholder(*args):
    raise NotImplementedError("your code here")


def _ellipsis_return(*args):
    return ...


def _ellipsis_body(*args):
    """Compute the softmax of x."""
    ...


def _pass_body(*args):
    pass


@pytest.mark.parametrize("fn", [_placeholder, _ellipsis_return, _ellipsis_body, _pass_body])
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_placeholders_are_not_attempted(name, fn):
    feedback = exercises.EXERCISES[name].check(fn)
    assert feedback.status == "not attempted"
    assert feedback.passed is None and feedback.mistake is None
    assert "not written yet" in feedback.message and feedback.hint
    assert "NOT ATTEMPTED YET" in repr(feedback) and "NOT ATTEMPTED YET" in feedback._repr_html_()


def test_a_function_that_raises_not_implemented_for_some_inputs_is_attempted():
    def partial(x):
        if x.shape[0] > 2:
            raise NotImplementedError("only two rows so far")
        return solutions.my_softmax(x)

    feedback = exercises.check_softmax(partial)
    assert feedback.status == "failed" and feedback.mistake == "raised"
    assert "NotImplementedError" in feedback.message and "placeholder" not in feedback.message


# ------------------------------------------------------------------ not a function, or the checker's own bug
@pytest.mark.parametrize("thing, words", [
    (None, "None"),
    (np.ones((2, 3)), "an array of shape (2, 3)"),
    ("my_softmax", "str"),
])
def test_not_a_function_is_explained(thing, words):
    feedback = exercises.check_softmax(thing)
    assert feedback.mistake == "not_callable"
    assert words in feedback.message and "check(...)(my_softmax)" not in feedback.message
    assert "without calling it" in feedback.hint


def test_a_bug_in_the_checker_is_reported_not_raised():
    def broken_cases():
        raise RuntimeError("boom")

    broken = dataclasses.replace(exercises.SOFTMAX, cases=broken_cases)
    feedback = broken.check(solutions.my_softmax)
    assert feedback.mistake == "checker_error" and "not your fault" in feedback.message


# ------------------------------------------------------------------ in a real IPython shell
def test_checks_work_on_functions_defined_in_notebook_cells():
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("import numpy as np\n"
                       "from lessons_lib.exercises import check_scores, check_weighted_sum")
        shell.run_cell("def my_scores(Q, K):\n    ...\n")
        assert shell.ev("check_scores(my_scores)").status == "not attempted"
        shell.run_cell("def my_scores(Q, K):\n    s = Q\n    return s @ K\n")
        feedback = shell.ev("check_scores(my_scores)")
        assert feedback.mistake == "k_not_transposed"
        shell.run_cell("K = np.ones((4, 3))\ndef my_weighted_sum(weights, V):\n    return weights @ K\n")
        assert shell.ev("check_weighted_sum(my_weighted_sum)").mistake == "weights_on_keys"
        shell.run_cell("def my_scores(Q, K):\n    x = 1\n    return Q @ k.T\n")
        assert "line 3: return Q @ k.T" in shell.ev("check_scores(my_scores)").message
    finally:
        InteractiveShell.clear_instance()
