"""The exercise checks: they pass the solutions, name each listed mistake, and never raise."""

from __future__ import annotations

import dataclasses
import math
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.core import attention
from lessons_lib.exercises import (
    Feedback,
    check_online_update,
    check_projection,
    check_scaling,
    check_scores,
    check_softmax,
    check_weighted_sum,
    grading,
)
from tests.helpers import (
    REPO,
    load_tool,
    solutions,  # the worked solutions, read from the notebooks (never in lessons_lib)
)

torch = pytest.importorskip("torch")

# every exercise's worked solution, as the source notebooks hold it (tests/helpers/solutions.py)
SOLUTIONS = {name: getattr(solutions, name) for name in solutions.__all__}

CHECKS = {
    "projection": (check_projection, solutions.my_projection, exercises.PROJECTION),
    "softmax": (check_softmax, solutions.my_softmax, exercises.SOFTMAX),
    "scores": (check_scores, solutions.my_scores, exercises.SCORES),
    "scaling": (check_scaling, solutions.my_scale, exercises.SCALING),
    "weighted_sum": (check_weighted_sum, solutions.my_weighted_sum, exercises.WEIGHTED_SUM),
    "softmax_off": (exercises.check_softmax_off, solutions.my_softmax_off, exercises.SOFTMAX_OFF),
    "online_update": (check_online_update, solutions.my_online_update, exercises.ONLINE_UPDATE),
}

# A notebook variable the buggy weighted sum reads by mistake (module globals play the notebook's role).
K = np.arange(12.0).reshape(4, 3)
v = np.ones((3, 2))


# --------------------------------------------------------------------------- wrong implementations
def _softmax_no_max(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_math_exp(x):  # a loop with math.exp raises OverflowError at 1000
    rows = [[math.exp(value) for value in row] for row in x]
    return np.array([[value / sum(row) for value in row] for row in rows])


def _softmax_axis0(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _softmax_global_max(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=1, keepdims=True)


def _softmax_no_keepdims(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1)


def _softmax_whole_sum(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum()


def _softmax_unnormalised(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def _softmax_in_place(x):
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


MISTAKES = [
    # (exercise, buggy function, expected mistake key, words the message must contain)
    ("softmax", _softmax_no_max, "no_max_subtraction", ["max-subtraction", "1000", "NaN"]),
    ("softmax", _softmax_math_exp, "no_max_subtraction", ["overflow"]),
    ("softmax", _softmax_axis0, "wrong_axis", ["wrong axis", "columns sum to 1"]),
    ("softmax", _softmax_global_max, "global_max", ["whole array", "each row"]),
    ("softmax", _softmax_no_keepdims, "missing_keepdims", ["keepdims"]),
    ("softmax", _softmax_whole_sum, "whole_sum", ["whole array"]),
    ("softmax", _softmax_unnormalised, "not_normalised", ["row sums"]),
    ("softmax", _softmax_in_place, "mutates_input", ["in place", "`x`"]),
    ("scores", lambda Q, K: Q @ K, "k_not_transposed", ["K is not transposed"]),
    ("scores", lambda Q, K: np.dot(Q, K), "k_not_transposed", ["K is not transposed"]),
    ("scores", lambda Q, K: Q.T @ K, "q_transposed", ["Q is transposed", "(d_k, d_k)"]),
    ("scores", lambda Q, K: K @ Q.T, "swapped", ["swapped"]),
    ("scores", lambda Q, K: Q * K, "elementwise", ["element by element"]),
    ("scores", lambda Q, K: (Q * K).sum(axis=-1), "elementwise", ["element by element", "@ operator"]),
    ("scores", lambda Q, K: Q @ K.T / np.sqrt(K.shape[1]), "scaled_too_early", ["√d_k", "next step"]),
    ("scores", lambda Q, K: solutions.my_softmax(Q @ K.T), "softmax_too_early", ["softmax"]),
    ("scaling", lambda scores, d_k: scores, "forgot_scaling", ["scaling is missing"]),
    ("scaling", lambda scores, d_k: scores / d_k, "divided_by_d_k", ["divided by d_k instead of √d_k"]),
    ("scaling", lambda scores, d_k: scores * np.sqrt(d_k), "multiplied", ["multiplied instead of divided"]),
    ("scaling", lambda scores, d_k: scores * d_k, "multiplied", ["multiplied instead of divided"]),
    ("scaling", lambda scores, d_k: scores / (d_k ** 1 / 2), "power_precedence", ["d_k ** 1/2"]),
    ("scaling", lambda scores, d_k: scores / np.sqrt(scores.shape[-1]), "d_k_from_shape", ["shape"]),
    ("scaling", lambda scores, d_k: solutions.my_softmax(scores / np.sqrt(d_k)), "softmax_too_early",
     ["softmax"]),
    ("weighted_sum", lambda weights, V: weights @ K, "weights_on_keys", ["K instead of V", "`K`"]),
    ("weighted_sum", lambda weights, V: weights @ v, "uses_global", ["`v`", "`V`"]),
    ("weighted_sum", lambda weights, V: weights.T @ V, "transposed_weights", ["transposed"]),
    ("weighted_sum", lambda weights, V: V @ weights, "reversed_order", ["wrong order"]),
    ("weighted_sum", lambda weights, V: V.T @ weights.T, "transposed_result", ["transposed", "(d_v, L)"]),
    ("weighted_sum", lambda weights, V: (weights @ V).T, "transposed_result", ["transposed"]),
    ("weighted_sum", lambda weights, V: weights @ V.T, "v_transposed", ["V is transposed"]),
    ("weighted_sum", lambda weights, V: weights * V, "elementwise", ["element by element"]),
    ("weighted_sum", lambda weights, V: weights @ V / V.shape[0], "divided_by_s",
     ["divided by S", "already"]),
    ("weighted_sum", lambda weights, V: (weights[:, :, None] * V[None]).mean(axis=1), "divided_by_s",
     ["number of keys"]),
    ("weighted_sum", lambda weights, V: solutions.my_softmax(weights) @ V, "softmax_again", ["again"]),
]


def _projection_list(x, w_q, w_k, w_v):
    return [x @ w_q, x @ w_k, x @ w_v]  # a list of the three arrays is as good as a tuple


MISTAKES += [
    ("projection", lambda x, w_q, w_k, w_v: (w_q @ x, w_k @ x, w_v @ x), "weights_on_the_left",
     ["wrong order", "W·X"]),
    ("projection", lambda x, w_q, w_k, w_v: (w_q.T @ x.T, w_k.T @ x.T, w_v.T @ x.T), "weights_on_the_left",
     ["X first"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_q.T, x @ w_k.T, x @ w_v.T), "transposed_weights",
     ["transposed"]),
    ("projection", lambda x, w_q, w_k, w_v: (x * w_q, x * w_k, x * w_v), "elementwise",
     ["element by element"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_q), "same_matrix",
     ["same weight matrix"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_v,) * 3, "same_matrix", ["own learned matrix"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_v), "shared_q_k",
     ["shared projection", "W_K"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_k, x @ w_v), "shared_q_k", ["one shared matrix"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_q, x @ w_v), "wrong_order", ["wrong order"]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_v, x @ w_k, x @ w_q), "wrong_order", ["q, k, v ="]),
    ("projection", lambda x, w_q, w_k, w_v: (x @ w_q / np.sqrt(w_q.shape[1]), x @ w_k, x @ w_v),
     "scaled_too_early", ["√d_k"]),
]


def _softmax_minus_mean(x):
    e = np.exp(x - x.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_floor(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e // e.sum(axis=-1, keepdims=True)


MISTAKES += [
    ("softmax", _softmax_minus_mean, "shift_not_row_max", ["other than its own maximum", "710"]),
    ("softmax", lambda x: _softmax_no_max(x - x[..., :1]), "shift_not_row_max", ["maximum"]),
    ("softmax", lambda x: _softmax_no_max(x - x.min(axis=-1, keepdims=True)), "shift_not_row_max",
     ["minimum"]),
    ("softmax", _softmax_floor, "floor_division", ["//", "single slash"]),
    ("scaling", lambda scores, d_k: scores // np.sqrt(d_k), "floor_division", ["//"]),
    ("scaling", lambda scores, d_k: scores / 8, "fixed_number", ["divided by 8", "whatever d_k is"]),
    ("scaling", lambda scores, d_k: scores / np.sqrt(16), "fixed_number", ["divided by 4,"]),
    ("scaling", lambda scores, d_k: scores / np.sqrt(d_k + 1), "wrong_divisor", ["divided by 3.162",
                                                                                   "√d_k = 3"]),
    ("scores", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[0]), "scaled_too_early", ["divided by 1.414"]),
]


def _scale_in_place(scores, d_k):
    scores /= np.sqrt(d_k)
    return scores


MISTAKES.append(("scaling", _scale_in_place, "mutates_input", ["in place", "`scores`"]))


def _off_shifted_plus_one(scores):  # notebook 09: the row maximum subtracted, the off slot left at 1
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / (1 + np.sum(e, axis=1, keepdims=True))


def _off_shifted(scores, m, plus_one=False):  # the stable formula shifted by m; + 1 instead of exp(−m)
    with np.errstate(all="ignore"):
        e = np.exp(scores - m)
        return e / ((1 if plus_one else np.exp(-m)) + e.sum(axis=1, keepdims=True))


MISTAKES += [
    ("softmax_off", lambda scores: solutions.my_softmax(scores), "plain_softmax",
     ["no off slot", "sum to exactly 1"]),
    ("softmax_off", _off_shifted_plus_one, "off_slot_not_shifted", ["exp(−m)", "off slot"]),
    # the hint's own warning: m = max(0, row maximum), then + 1 instead of + exp(−m)
    ("softmax_off",
     lambda scores: _off_shifted(scores, np.maximum(scores.max(axis=1, keepdims=True), 0), plus_one=True),
     "off_slot_not_shifted", ["exp(−m)", "off slot"]),
    # a stable-looking formula shifted by the wrong constant: NaN on rows far apart or spanning > exp's range
    ("softmax_off", lambda scores: _off_shifted(scores, max(scores.max(), 0.0)), "shift_not_per_row",
     ["each row", "NaN"]),
    ("softmax_off", lambda scores: _off_shifted(scores, scores.min(axis=1, keepdims=True)),
     "shift_not_per_row", ["each row", "NaN"]),
    # shifted by each row's first score, not its largest: overflows where the largest is far above it
    ("softmax_off", lambda scores: _off_shifted(scores, np.maximum(scores[:, :1], 0)), "shift_by_first",
     ["first score", "largest", "NaN"]),
    ("softmax_off", lambda scores: np.exp(scores) / (1 + np.exp(scores).sum(axis=-1, keepdims=True)),
     "no_max_subtraction", ["overflow", "NaN"]),
    ("softmax_off", lambda scores: np.exp(scores) / (np.exp(scores) + 1).sum(axis=1, keepdims=True),
     "one_per_key", ["once"]),
    ("softmax_off", lambda scores: 1 / (1 + np.exp(-scores)), "sigmoid", ["sigmoid", "compete"]),
    ("softmax_off", lambda scores: solutions.my_softmax_off(scores.T).T, "wrong_axis", ["columns"]),
]


# notebook 08: the online-softmax update, written the way learners write it
def _online(sum_line, max_line="np.maximum(m, chunk.max(axis=-1))", ret="m_new, ell_new"):
    namespace = {"np": np}
    exec(f"def f(m, ell, chunk):\n    m_new = {max_line}\n    ell_new = {sum_line}\n    return {ret}\n",
         namespace)
    return namespace["f"]


_TEXTBOOK_SUM = "ell * np.exp(m - m_new) + np.exp(chunk - m_new[:, None]).sum(axis=1)"
MISTAKES += [
    ("online_update", _online(_TEXTBOOK_SUM, ret="ell_new, m_new"), "swapped_outputs", ["maximum first"]),
    ("online_update", _online("ell + np.exp(chunk - m_new[:, None]).sum(axis=1)"), "no_rescale",
     ["exp(m − m_new)", "OLD maximum"]),
    ("online_update", _online("ell * np.exp(m_new - m) + np.exp(chunk - m_new[:, None]).sum(axis=1)"),
     "rescale_upside_down", ["upside down", "exp(m − m_new)"]),
    ("online_update", _online("ell * np.exp(m - m_new) + np.exp(chunk - m[:, None]).sum(axis=1)"),
     "old_max_for_chunk", ["same maximum"]),
    ("online_update", _online("ell + np.exp(chunk).sum(axis=1)"), "no_max_subtraction", ["overflow"]),
    ("online_update", _online(_TEXTBOOK_SUM.replace("m_new[:, None]", "m_new[:, np.newaxis]"),
                              max_line="chunk.max(axis=1)"), "chunk_max_only", ["forgets the old one"]),
    ("online_update", _online("ell * np.exp(m - m_new) + np.exp(chunk - m_new).sum(axis=0)",
                              max_line="np.maximum(m, chunk.max(axis=0))"), "wrong_axis", ["axis=-1"]),
    ("online_update", _online("ell * np.exp(m - m_new) + np.exp(chunk - m_new).sum(axis=1)"), "no_column",
     ["m_new[:, None]"]),
    ("online_update", _online(_TEXTBOOK_SUM), "nan_for_masked_row", ["-inf", "np.where"]),
]


# --------------------------------------------------------------------------- passing
@pytest.mark.parametrize("name", CHECKS)
def test_the_solution_passes(name):
    check, solution, _ = CHECKS[name]
    feedback = check(solution)
    assert feedback.status == "passed", str(feedback)
    assert feedback.passed is True and feedback.mistake is None
    assert "Well done" in feedback.message
    assert "PASSED" in repr(feedback) and "✓" in repr(feedback)


def test_the_librarys_own_softmax_gives_the_right_numbers_but_does_not_count_as_an_answer():
    feedback = check_softmax(lambda x: attention.softmax(x))
    assert feedback.passed is False and feedback.mistake == "library_answer", str(feedback)
    assert "`ll.softmax`" in feedback.message and "does not count" in feedback.message


@pytest.mark.parametrize("name", CHECKS)
def test_a_slightly_wrong_answer_does_not_pass(name):
    check, solution, _ = CHECKS[name]
    def slightly_off(*args):
        answer = solution(*args)
        (answer[-1] if isinstance(answer, tuple) else answer).flat[0] += 0.01
        return answer

    feedback = check(slightly_off)
    assert feedback.passed is False
    assert feedback.mistake == "wrong_values"
    assert "largest difference" in feedback.message or "off by up to 0.01" in feedback.message


# --------------------------------------------------------------------------- each listed mistake
@pytest.mark.parametrize(
    "name, fn, key, words", MISTAKES, ids=[f"{m[0]}-{m[2]}-{i}" for i, m in enumerate(MISTAKES)]
)
def test_each_mistake_is_named(name, fn, key, words):
    check = CHECKS[name][0]
    feedback = check(fn)
    assert feedback.status == "failed" and feedback.passed is False
    assert feedback.mistake == key, str(feedback)
    text = feedback.message + " " + feedback.hint
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    assert feedback.hint, "every mistake comes with a hint toward the fix"
    assert "Case:" in feedback.details and "expected" in feedback.details


def test_a_list_of_the_three_projections_passes():
    assert check_projection(_projection_list).passed


@pytest.mark.parametrize("fn, key, words", [
    (lambda x, w_q, w_k, w_v: np.stack([x @ w_q, x @ w_k, x @ w_q]), "not_a_tuple", ["return Q, K, V"]),
    (lambda x, w_q, w_k, w_v: x @ w_q, "not_a_tuple", ["3 arrays", "shape (3, 2)"]),
    (lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_k), "wrong_count", ["returned 2 items", "Q, K, V"]),
    (lambda x, w_q, w_k, w_v: (x @ w_q, (x @ w_k).tolist(), x @ w_v), "output_not_an_array",
     ["Output 2 (K)"]),
    (lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_k, x @ w_v + 1), "wrong_values", ["V is off", "Q, K right"]),
])
def test_projection_shape_of_the_answer_is_explained(fn, key, words):
    feedback = check_projection(fn)
    assert feedback.mistake == key, str(feedback)
    text = f"{feedback.message} {feedback.hint}"
    for word in words:
        assert word in text, f"{word!r} not in: {text}"


def test_projection_details_show_each_output():
    feedback = check_projection(lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_q, x @ w_v))
    assert "expected Q" in feedback.details and "yours V" in feedback.details


@pytest.mark.parametrize("name", CHECKS)
def test_every_mistake_in_the_tables_has_a_test(name):
    exercise = CHECKS[name][2]
    tested = {key for ex, _, key, _ in MISTAKES if ex == name}
    assert {m.key for m in exercise.mistakes} <= tested


def test_mistakes_keep_shapes_in_their_messages():
    feedback = check_scores(lambda Q, K: Q.T @ K)
    assert "(d_k, d_k)" in feedback.message
    feedback = check_softmax(_softmax_axis0)
    assert "your columns to [1.0, 1.0, 1.0]" in feedback.message


def test_an_extra_in_place_change_is_mentioned_beside_the_main_mistake():
    def in_place_and_wrong_axis(x):
        x -= x.max(axis=0, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=0, keepdims=True)

    feedback = check_softmax(in_place_and_wrong_axis)
    assert feedback.mistake == "wrong_axis"
    assert "changed its input `x` in place" in feedback.message


def test_no_warnings_leak_from_an_overflowing_softmax():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_softmax(_softmax_no_max).mistake == "no_max_subtraction"


# --------------------------------------------------------------------------- generic problems
def _forgot_return(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    e / e.sum(axis=-1, keepdims=True)


def _returns_list(x):
    return solutions.my_softmax(x).tolist()


def _typo(Q, K):
    return Q @ k.T  # noqa: F821 - the typo is the point


def _wrong_arity():
    return None


GENERIC = [
    (check_softmax, _forgot_return, "returned_none", ["returned None", "`return`"]),
    (check_softmax, _returns_list, "returned_list", ["list", "numpy array"]),
    (check_softmax, lambda x: tuple(solutions.my_softmax(x)), "returned_tuple", ["tuple of 2 items"]),
    (check_softmax, lambda x: np.exp(x).sum(), "not_an_array", ["float64", "shape (2, 3)", ".sum()"]),
    (check_softmax, lambda x: np.full(x.shape, "a"), "not_numeric", ["dtype"]),
    (check_softmax, lambda x: solutions.my_softmax(x)[:, :2], "wrong_shape", ["Expected shape (2, 3)",
                                                                               "got (2, 2)"]),
    (check_softmax, lambda x: solutions.my_softmax(x) + np.log(0 * x), "not_finite", ["NaN"]),
    (check_scores, _typo, "raised", ["NameError", "name Python does not know", "'k' is not defined",
                                    "return Q @ k.T"]),
    (check_scores, _wrong_arity, "raised", ["TypeError"]),
    (check_scores, lambda Q, K: Q @ K.T @ np.ones((7, 7)), "raised",
     ["ValueError", "do not fit together", "inner sizes"]),
    (check_softmax, lambda x: x.sum(axis=3), "raised", ["AxisError", "axis that does not exist"]),
    (check_softmax, lambda x: {}["key"], "raised", ["KeyError"]),
    (check_softmax, lambda x: sys.exit(1), "raised", ["SystemExit"]),
    (check_weighted_sum, lambda weights, V: weights @ V + np.ones(7), "raised",
     ["broadcast", "could not line up", "(2,5)"]),
]


@pytest.mark.parametrize("check, fn, key, words", GENERIC, ids=[f"{g[2]}-{i}" for i, g in enumerate(GENERIC)])
def test_generic_problems_are_explained_without_raising(check, fn, key, words):
    feedback = check(fn)
    assert feedback.passed is False
    assert feedback.mistake == key, str(feedback)
    text = f"{feedback.message} {feedback.hint} {feedback.details}"
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    assert "Traceback" not in text


def test_a_global_is_named_against_the_learners_own_parameter_name():
    feedback = check_weighted_sum(lambda w, values: w @ v)
    assert feedback.mistake == "uses_global"
    assert "use its own argument `values`" in feedback.message


def test_the_failing_line_is_shown_for_an_exception():
    feedback = check_scores(_typo)
    assert "line " in feedback.message and "return Q @ k.T" in feedback.message


# --------------------------------------------------------------------------- not attempted, not callable
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
@pytest.mark.parametrize("name", CHECKS)
def test_placeholders_are_not_attempted(name, fn):
    check = CHECKS[name][0]
    feedback = check(fn)
    assert feedback.status == "not attempted"
    assert feedback.passed is None and feedback.mistake is None
    assert "not written yet" in feedback.message and feedback.hint
    assert "NOT ATTEMPTED YET" in repr(feedback) and "NOT ATTEMPTED YET" in feedback._repr_html_()


@pytest.mark.parametrize("thing, words", [
    (None, "None"),
    (np.ones((2, 3)), "an array of shape (2, 3)"),
    ("my_softmax", "str"),
])
def test_not_a_function_is_explained(thing, words):
    feedback = check_softmax(thing)
    assert feedback.mistake == "not_callable"
    assert words in feedback.message and "check(...)(my_softmax)" not in feedback.message
    assert "without calling it" in feedback.hint


def test_a_bug_in_the_checker_is_reported_not_raised():
    def broken_cases():
        raise RuntimeError("boom")

    broken = dataclasses.replace(exercises.SOFTMAX, cases=broken_cases)
    feedback = broken.check(solutions.my_softmax)
    assert feedback.mistake == "checker_error" and "not your fault" in feedback.message


# --------------------------------------------------------------------------- feedback display
def test_feedback_renders_html_with_words_not_only_colour():
    passed, failed = check_softmax(solutions.my_softmax), check_softmax(_softmax_axis0)
    assert "✓ PASSED" in passed._repr_html_() and "#1a7f37" in passed._repr_html_()
    assert "✗ NOT YET" in failed._repr_html_() and "Hint:" in failed._repr_html_()
    assert "<details" in failed._repr_html_() and "<details" not in passed._repr_html_()
    assert str(failed).startswith("✗ NOT YET: my_softmax")


def test_feedback_html_is_escaped():
    feedback = Feedback("my_softmax", "failed", "x < y & <script>", hint="a<b")
    page = feedback._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page and "a&lt;b" in page


def test_the_inputs_of_the_check_are_not_changed_by_a_mutating_learner():
    _softmax_in_place_feedback = check_softmax(_softmax_in_place)
    assert _softmax_in_place_feedback.mistake == "mutates_input"
    assert check_softmax(solutions.my_softmax).passed  # the cases are rebuilt fresh each time


# --------------------------------------------------------------------------- in a real IPython shell
def test_checks_work_on_functions_defined_in_notebook_cells():
    IPython = pytest.importorskip("IPython")
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
    assert IPython


# --------------------------------------------------------------------------- the tables, generically
def _candidates():
    """Every wrong implementation in every exercise's table, with the mistake it stands for."""
    for exercise in exercises.EXERCISES.values():
        for mistake in exercise.mistakes:
            for test in getattr(mistake.test, "tests", (mistake.test,)):
                for i, candidate in enumerate(getattr(test, "candidates", ())):
                    yield pytest.param(exercise, mistake.key, candidate,
                                       id=f"{exercise.name}-{mistake.key}-{i}")


@pytest.mark.parametrize("exercise, key, candidate", list(_candidates()))
def test_every_candidate_mistake_fails_and_is_named_as_itself(exercise, key, candidate):
    """The cases tell the mistakes apart: each wrong implementation of a table is named by its own entry."""
    feedback = exercise.check(candidate)
    assert feedback.passed is False, f"{key} passes the check"
    assert feedback.mistake == key, str(feedback)


def test_every_exercise_is_registered_exported_and_graded():
    """One check per graded exercise of the registry (lessons_lib/course/lessons.py), each exported; every
    exercise of the engine is one of them (my_query, a value to design, has a check of its own)."""
    from lessons_lib.course.lessons import LESSONS

    graded = {name for lesson in LESSONS.values() for name in lesson.points}
    assert set(exercises.EXERCISES) <= graded, "an exercise with no points in lessons_lib/course/lessons.py"
    checks = [name for name in exercises.__all__ if name.startswith("check_")]
    assert len(checks) == len(set(checks)) == len(graded), (checks, sorted(graded))
    assert all(callable(getattr(exercises, name)) for name in checks)
    assert set(exercises.__all__) == {"Feedback", "EXERCISES", *checks}


def test_the_solutions_are_not_part_of_the_package():
    import importlib.util

    assert importlib.util.find_spec("lessons_lib.solutions") is None


def test_the_engine_recipe_for_a_new_exercise_works_as_written():
    """The example in the engine's docstring (how a later lesson adds an exercise) runs and checks."""
    doc = exercises.engine.__doc__
    block = doc[doc.index("    import numpy as np"):doc.index("Then add a test")]
    code = textwrap.dedent(block).replace("from ..core import masks", "from lessons_lib.core import masks")
    code = code.replace("from .engine import", "from lessons_lib.exercises.engine import").replace('\\"', '"')
    namespace: dict = {}
    exec(compile(code, "recipe", "exec"), namespace)
    check = namespace["check_causal_mask"]
    assert check(lambda n_queries, n_keys: np.tril(np.ones((n_queries, n_keys), bool))).passed
    assert check(lambda n_queries, n_keys: np.triu(np.ones((n_queries, n_keys), bool))).mistake == "upper"


def test_every_registered_exercise_has_a_worked_solution_in_its_notebook():
    """The source notebooks hold a solution region for each exercise, and the check passes it."""
    assert set(solutions.__all__) == set(exercises.EXERCISES)
    for name, exercise in exercises.EXERCISES.items():
        feedback = exercise.check(getattr(solutions, name))
        assert feedback.passed, f"{name} (from {getattr(solutions, name).__notebook__}): {feedback}"


# --------------------------------------------------------------------------- notebook 01: a query to design
@pytest.mark.parametrize("query, status, key, words", [
    ([0, 8, 0, 0], "passed", None, ["0.83", "mostly at the street"]),
    ([0, 0, 0, 0], "not attempted", None, ["all zeros", "1/12"]),
    ("place", "failed", "not_numbers", ["4 numbers"]),
    ([0, 8, 0], "failed", "wrong_shape", ["shape (3,)"]),
    ([0, np.inf, 0, 0], "failed", "not_finite", ["inf or nan"]),
    ([8, 0, 0, 0], "failed", "wrong_features", ["“animal” gets more", "asks most for “living thing”"]),
    ([0, -3, 0, 0], "failed", "wrong_features", ["asks for no feature", "away from keys that offer “place”"]),
    ([3, 3, 0, 0], "failed", "tie", ["“animal” gets just as much", "a tie"]),
    ([0, 4, 0, 0], "failed", "too_soft", ["0.40", "not most of it"]),
])
def test_the_street_query_check_names_each_outcome(query, status, key, words):
    feedback = exercises.check_street_query(query)
    assert (feedback.status, feedback.mistake) == (status, key), str(feedback)
    text = f"{feedback.message} {feedback.hint}"
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    assert "more (" not in text or "tie" not in text, "a tie is never called 'more'"


# ====== a wrong answer never passes
def _minus(shift):
    def softmax(x):
        e = np.exp(x - shift(x))
        return e / e.sum(axis=-1, keepdims=True)
    return softmax


UNSTABLE_SOFTMAXES = {
    "no shift": _minus(lambda x: 0),
    "row mean": _minus(lambda x: x.mean(axis=-1, keepdims=True)),
    "row min": _minus(lambda x: x.min(axis=-1, keepdims=True)),
    "row median": _minus(lambda x: np.median(x, axis=-1, keepdims=True)),
    "first entry": _minus(lambda x: x[..., :1]),
    "fixed 1000": _minus(lambda x: 1000.0),
    "global max": _minus(lambda x: x.max()),
    "column max": _minus(lambda x: x.max(axis=0, keepdims=True)),
    "clipped logits": lambda x: _minus(lambda y: 0)(np.clip(x, -700, 700)),
    "half the max": _minus(lambda x: x.max(axis=-1, keepdims=True) / 2),
}


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("name", UNSTABLE_SOFTMAXES)
def test_no_unstable_softmax_passes(name):
    feedback = exercises.check_softmax(UNSTABLE_SOFTMAXES[name])
    assert feedback.passed is False, f"a softmax shifted by {name} passes"


@pytest.mark.usefixtures("warnings_are_errors")
def test_the_checks_contain_rows_that_overflow_exp():
    spans = [np.ptp(row) for case in exercises.SOFTMAX.cases() for row in case.args["x"]]
    assert max(spans) > 710


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("name", sorted(SOLUTIONS))
@pytest.mark.parametrize("kind", [object, np.complex128])
def test_answers_of_object_or_complex_dtype_do_not_pass(name, kind):
    solution = SOLUTIONS[name]

    def wrapped(*args):
        answer = solution(*args)
        if isinstance(answer, tuple):
            return tuple(a.astype(kind) for a in answer)
        return answer.astype(kind)

    feedback = exercises.EXERCISES[name].check(wrapped)
    assert feedback.passed is False
    assert feedback.mistake in {"not_numeric", "output_not_an_array"}
    assert ("complex" if kind is np.complex128 else "Python objects") in feedback.message


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_the_solutions_pass(name):
    assert exercises.EXERCISES[name].check(SOLUTIONS[name]).passed


# ====== a check names the right mistake, or none
@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("exercise", list(exercises.EXERCISES.values()), ids=list(exercises.EXERCISES))
def test_case_shapes_keep_the_mistakes_apart(exercise):
    """Within a case the sizes differ (L, S, d_k, d_v), none 4 or 16: no shape makes two mistakes alike."""
    for case in exercise.cases():
        arrays = [a for a in case.args.values() if isinstance(a, np.ndarray)]
        sizes = {n for a in arrays for n in a.shape}
        d_k = case.args.get("d_k")
        if d_k is not None:
            assert d_k not in (4, 16) and d_k not in sizes, case.label
        assert not sizes & {4, 16} or exercise.name in ("my_softmax", "my_weighted_sum"), case.label
        hand_made = case.label.startswith("hand")
        if exercise.name in ("my_scores", "my_weighted_sum", "my_projection") and hand_made:
            assert len({n for a in arrays for n in a.shape}) >= 3, case.label


KNOWN_WRONG_ANSWERS = [
    # (exercise, learner function, mistake that must be named)
    ("my_softmax", lambda x: np.exp(x - x.max(-1, keepdims=True)) // np.exp(x - x.max(-1, keepdims=True)).sum(
        -1, keepdims=True), "floor_division"),
    ("my_scores", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[0]), "scaled_too_early"),
    ("my_scale", lambda scores, d_k: scores / np.sqrt(16), "fixed_number"),
    ("my_weighted_sum", lambda weights, V: (weights @ V).T, "transposed_result"),
    ("my_softmax", lambda x: tuple(solutions.my_softmax(x)), "returned_tuple"),
    ("my_softmax", lambda x: torch.from_numpy(solutions.my_softmax(x)), "returned_tensor"),
    ("my_softmax", lambda x: (row for row in solutions.my_softmax(x)), "returned_generator"),
    ("my_projection", lambda x, w_q, w_k, w_v: tuple(torch.from_numpy(x @ w) for w in (w_q, w_k, w_v)),
     "returned_tensor"),
]


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("name, fn, key", KNOWN_WRONG_ANSWERS,
                         ids=[f"{e[0]}-{e[2]}" for e in KNOWN_WRONG_ANSWERS])
def test_known_wrong_answers_get_their_mistake_named(name, fn, key):
    feedback = exercises.EXERCISES[name].check(fn)
    assert feedback.mistake == key, str(feedback)


@pytest.mark.usefixtures("warnings_are_errors")
def test_a_function_that_raises_not_implemented_for_some_inputs_is_attempted():
    def partial(x):
        if x.shape[0] > 2:
            raise NotImplementedError("only two rows so far")
        return solutions.my_softmax(x)

    feedback = exercises.check_softmax(partial)
    assert feedback.status == "failed" and feedback.mistake == "raised"
    assert "NotImplementedError" in feedback.message and "placeholder" not in feedback.message


@pytest.mark.usefixtures("warnings_are_errors")
def test_two_mistakes_at_once_get_the_generic_message_not_a_guess():
    feedback = exercises.check_scores(lambda Q, K: (K @ Q.T) / np.sqrt(Q.shape[-1]))  # swapped and scaled
    assert feedback.mistake in {"wrong_shape", "wrong_values", "raised"}, str(feedback)


# ====== learner code that never returns is stopped
def _endless(x):
    while True:
        pass


def _endless_swallowing(x):
    while True:
        try:
            while True:
                pass
        except:  # noqa: E722 - a learner's bare except, which must not keep the check waiting
            pass


def _sleeps(x):
    time.sleep(60)


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("fn", [_endless, _endless_swallowing, _sleeps])
def test_a_function_that_never_returns_is_stopped_and_the_case_named(fn):
    quick = dataclasses.replace(exercises.SOFTMAX, time_limit=0.5)
    start = time.perf_counter()
    feedback = quick.check(fn)
    assert time.perf_counter() - start < 5
    assert feedback.mistake == "timed_out", str(feedback)
    assert "hand-made 2×3 scores" in feedback.message and "0.5 s" in feedback.message


@pytest.mark.usefixtures("warnings_are_errors")
def test_only_the_hanging_case_is_reported():
    def hangs_on_big(x):
        if x.shape[1] == 6:
            while True:
                pass
        return solutions.my_softmax(x)

    feedback = dataclasses.replace(exercises.SOFTMAX, time_limit=0.5).check(hangs_on_big)
    assert feedback.mistake == "timed_out" and "random 4×6 scores" in feedback.message


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.slow
def test_the_time_limit_works_inside_a_real_ipykernel():
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        code = ("import time, dataclasses\nfrom lessons_lib import exercises\n"
                "def my_softmax(x):\n    while True:\n        pass\n"
                "t = time.perf_counter()\n"
                "fb = dataclasses.replace(exercises.SOFTMAX, time_limit=1.0).check(my_softmax)\n"
                "print(fb.mistake, round(time.perf_counter() - t, 1))\n"
                "print(exercises.check_softmax(lambda x: x).mistake)\n")
        reply = kc.execute_interactive(code, timeout=60, output_hook=_collect(out := []))
        assert reply["content"]["status"] == "ok", out
        mistake, seconds, after = "".join(out).split()
        assert mistake == "timed_out" and float(seconds) < 5
        assert after != "timed_out", "the kernel works normally after a stopped check"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _collect(sink):
    def hook(msg):
        if msg["msg_type"] == "stream":
            sink.append(msg["content"]["text"])
    return hook


# ====== the judge cannot be borrowed or patched
def _calls_the_reference(x):
    return exercises.EXERCISES["my_softmax"].reference(x)


def _calls_the_formula(scores, d_k):
    return exercises.EXERCISES["my_scale"].formula(scores, d_k)


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


@pytest.mark.parametrize("fn", [_patches_allclose_and_returns_zeros, _patches_the_reference,
                                _patches_feedback])
@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_patching_the_judge_during_the_call_does_not_pass_and_leaves_nothing_changed(fn, isolation,
                                                                                     monkeypatch):
    if isolation == "process" and not hasattr(__import__("os"), "fork"):
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


def test_a_lookup_table_of_the_shown_answers_passes_the_shown_cases_and_fails_the_unseen_ones():
    table = {case.args["x"].tobytes(): attention.softmax(case.args["x"])
             for case in exercises.SOFTMAX.cases()}

    def my_softmax(x):
        return table[x.tobytes()]

    assert check_softmax(my_softmax).passed
    feedback = grading.check_hidden("my_softmax", my_softmax)
    assert feedback.passed is False and feedback.mistake == "raised" and "unseen" in feedback.message


# ====== unseen cases: drawn at grading time from the course's secret
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_two_secrets_give_different_unseen_cases_and_one_secret_the_same(name, monkeypatch):
    def drawn(secret):
        monkeypatch.setenv(grading.SECRET_VARIABLE, secret)
        return grading.hidden_cases(name)

    def same(a, b):
        return len(a) == len(b) and all(x.label == y.label and all(np.array_equal(x.args[k], y.args[k])
                                                                 for k in x.args) for x, y in zip(a, b))

    first, again = drawn("teacher A's secret"), drawn("teacher A's secret")
    other = drawn("teacher B's secret")
    assert same(first, again) and not same(first, other)
    shown = exercises.EXERCISES[name].cases()
    assert not any(same([h], [c]) for h in first for c in shown), "an unseen case is never a shown one"


def test_without_a_secret_the_unseen_cases_are_fresh_each_time_and_the_feedback_says_so(monkeypatch):
    monkeypatch.delenv(grading.SECRET_VARIABLE, raising=False)
    a, b = (grading.hidden_cases("my_scores") for _ in range(2))
    assert any(not np.array_equal(x.args["Q"], y.args["Q"]) or x.args["Q"].shape != y.args["Q"].shape
               for x, y in zip(a, b))
    feedback = grading.check_hidden("my_scores", solutions.my_scores)
    assert feedback.passed and "no course secret is set" in feedback.message
    monkeypatch.setenv(grading.SECRET_VARIABLE, "s3cret")
    assert "drawn with this course's secret" in grading.check_hidden("my_scores", solutions.my_scores).message


SECRETS = [f"secret {i}" for i in range(12)]


@pytest.mark.slow  # 4-15 s per exercise: several secrets, every mistake on each
@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_every_solution_passes_and_every_listed_mistake_fails_on_unseen_cases_of_any_secret(name,
                                                                                            monkeypatch):
    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")  # the same judge, faster for 12 secrets
    exercise = exercises.EXERCISES[name]
    wrong = [c for m in exercise.mistakes for t in getattr(m.test, "tests", (m.test,))
             for c in getattr(t, "candidates", ())]
    wrong += list(UNSTABLE_SOFTMAXES.values()) if name == "my_softmax" else []
    for secret in SECRETS:
        monkeypatch.setenv(grading.SECRET_VARIABLE, secret)
        assert grading.check_hidden(name, SOLUTIONS[name]).passed, secret
        for candidate in wrong:
            assert grading.check_hidden(name, candidate).passed is False, (secret, candidate)


@pytest.mark.subprocess
def test_the_installed_package_and_the_learner_copy_hold_nothing_to_compute_the_unseen_cases_from(tmp_path,
                                                                                                   monkeypatch):
    """The cases come from the secret, which only the teacher's environment holds: every place a learner
    can read (the package's files, the learner copy) lacks it, and any seed a file could hold gives other
    cases than the course's."""
    import importlib.util
    from pathlib import Path

    secret = "a teacher's secret that no file holds"
    monkeypatch.setenv(grading.SECRET_VARIABLE, secret)
    course = grading.hidden_cases("my_softmax")
    package = Path(importlib.util.find_spec("lessons_lib").origin).parent
    learner_release = load_tool("learner_release")
    learner_release.release(tmp_path / "learner")
    for folder in (package, tmp_path / "learner"):
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix in (".py", ".ipynb", ".md", ".txt", ".toml", ".cfg", ".json"):
                assert secret not in path.read_text(encoding="utf-8", errors="replace"), path
    for seed in (0, 1, 2026, 42):  # seeds a learner might guess: none gives the course's cases
        guess = grading.hidden_cases("my_softmax", seed=seed)
        assert not all(np.array_equal(a.args["x"], b.args["x"]) for a, b in zip(guess, course))


# ====== hints that teach, never a line of the solution
def _code_tokens(text: str) -> list[str]:
    """Tokens with every name replaced by NAME (Python's keywords kept): spacing and names do not matter."""
    import keyword
    import re

    text = text.replace("−", "-").replace("·", "*").replace("×", "*")
    text = re.sub(r"\.(?=\s|$)", " ;", text)  # a full stop ends a sentence: it is not an attribute's dot
    tokens = re.findall(r"[A-Za-z_]\w*|\d+(?:\.\d*)?|\*\*|//|==|!=|<=|>=|\S", text)
    return [t.lower() if keyword.iskeyword(t.lower()) else ("NAME" if re.match(r"[A-Za-z_]", t) else t)
            for t in tokens]


_OPERATORS = {"@", "/", "//", "*", "-", "+"}
_COMPUTES = _OPERATORS | {"("}


def _formula(tokens: list[str]) -> list[str]:
    """What a ``return`` returns or an assignment assigns (its ``=`` outside any brackets)."""
    if tokens[:1] == ["return"]:
        return tokens[1:]
    depth = 0
    for i, token in enumerate(tokens):
        depth += token in "([{" and 1 or (token in ")]}" and -1 or 0)
        if token == "=" and depth == 0:
            return tokens[i + 1:]
    return []


def _solution_lines() -> dict[str, list[str]]:
    """Every line of every worked solution in the notebooks that computes something (code with an operator
    or a call, not a comment), as tokens; a line that returns or assigns a formula of more than three
    tokens counts by the formula alone too (``x - x.max(axis=-1, keepdims=True)``)."""

    import nbformat

    lines = {}
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                stripped = line.strip()
                if stripped.startswith("### BEGIN SOLUTION"):
                    inside = True
                elif stripped.startswith("### END SOLUTION"):
                    inside = False
                elif inside and stripped and not stripped.startswith("#"):
                    code = stripped.split("  #")[0].strip()
                    tokens = _code_tokens(code)
                    if not set(tokens) & _COMPUTES:  # `return m_new, ell_new`, `L, d = x.shape`: no computing
                        continue
                    lines[code] = tokens
                    rest = _formula(tokens)
                    if set(rest) & _OPERATORS and len(rest) > 3:  # a formula, not `a @ b` alone (any product)
                        lines[f"{code} (its formula)"] = rest
    assert len(lines) > 20
    return lines


SOLUTION_LINES = _solution_lines()


def _quoted_line(text: str) -> str | None:
    tokens = _code_tokens(text)
    for line, line_tokens in SOLUTION_LINES.items():
        n = len(line_tokens)
        if any(tokens[i:i + n] == line_tokens for i in range(len(tokens) - n + 1)):
            return line
    return None


def _without_own_code(text: str, fn) -> str:
    """``text`` without the lines of ``fn``'s own source it quotes (feedback shows learners their line)."""
    import inspect

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return text
    for line in source.splitlines():
        if line.strip():
            text = text.replace(line.strip(), "<your line>")
    return text


def _texts_of_every_mistake():
    """Every text a learner can be shown: each mistake's title, explanation and hints (every tier) of all
    12 exercises and of the shared catalogue, the feedback of every candidate and known wrong answer,
    lesson 01's feedback, and the hints of a placeholder (where to start)."""
    from lessons_lib.exercises import catalogue, messages, runner

    texts, evaluated = [], set()
    tables = {name: ex.mistakes for name, ex in exercises.EXERCISES.items()}
    shared = (*catalogue.TYPE_MISTAKES, *catalogue.FALLBACK_MISTAKES, catalogue.TAMPERED,
              catalogue.LIBRARY_ANSWER)
    for exercise in exercises.EXERCISES.values():
        texts.append((exercise.name, "start hint", exercise.start_hint))
        pool = []
        wrong = [c for m in exercise.mistakes for t in getattr(m.test, "tests", (m.test,))
                 for c in getattr(t, "candidates", ())]
        wrong += [fn for name, fn, _, _ in MISTAKES if CHECKS[name][2] is exercise]
        wrong += [lambda *a: None, lambda *a: [1.0], lambda *a: (np.ones(2),), lambda *a: 1 / 0]
        for fn in wrong:
            feedback = exercise.check(fn)
            texts.append((exercise.name, f"feedback {feedback.mistake}",
                          _without_own_code(f"{feedback.message} {feedback.hint}", fn)))
            for case in exercise.cases():
                outcome = runner.run(fn, case, exercise.reference(*case.args.values()),
                                     answer_kind=exercise.answer_kind, outputs=exercise.outputs)
                outcome.line = ""  # the feedback may quote the learner's own line back: that is theirs
                pool.append(outcome)
        case = exercise.cases()[0]
        pool += [runner.Outcome(case, timed_out=True, time_limit=3.0, still_running=still)
                 for still in (False, True)]
        pool += [runner.Outcome(case, tampered=("numpy.allclose",)),
                 runner.Outcome(case, borrowed=("ll.softmax",))]
        for mistake in (*tables[exercise.name], *shared):
            texts.append((exercise.name, f"{mistake.key} title", mistake.title))
            parts = [("explain", mistake.explain),
                     *((f"hint {i}", h) for i, h in enumerate(mistake.hint if isinstance(mistake.hint, tuple)
                                                              else (mistake.hint,)))]
            for label, part in parts:
                if not callable(part):
                    texts.append((exercise.name, f"{mistake.key} {label}", part))
                    continue
                for outcome in pool:
                    try:
                        text = part(outcome)
                    except Exception:  # not this mistake's kind of outcome
                        continue
                    evaluated.add((mistake.key, label, id(part)))
                    texts.append((exercise.name, f"{mistake.key} {label}", text))
    for _, _, hint in messages.ERRORS:
        texts.append(("any", "error hint", hint))
    for query in ([0, 8, 0, 0], [0, 0, 0, 0], "place", [0, 8, 0], [8, 0, 0, 0], [3, 3, 0, 0], [0, 4, 0, 0]):
        feedback = exercises.check_street_query(query)
        texts.append(("my_query", f"feedback {feedback.mistake}", f"{feedback.message} {feedback.hint}"))
    return texts, evaluated


@pytest.mark.slow  # every mistake's feedback of every exercise: 14 s
def test_no_hint_or_message_of_any_exercise_contains_a_line_of_a_worked_solution(monkeypatch):
    from lessons_lib.exercises import catalogue

    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")  # the same feedback, faster
    texts, evaluated = _texts_of_every_mistake()
    shared = (*catalogue.TYPE_MISTAKES, *catalogue.FALLBACK_MISTAKES, catalogue.TAMPERED,
              catalogue.LIBRARY_ANSWER)
    for mistake in {m for ex in exercises.EXERCISES.values() for m in (*ex.mistakes, *shared)}:
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        for label, part in (("explain", mistake.explain), *((f"hint {i}", h) for i, h in enumerate(hints))):
            assert not callable(part) or (mistake.key, label, id(part)) in evaluated, (mistake.key, label)
    quoting = [(name, label, line) for name, label, text in texts if (line := _quoted_line(text))]
    assert not quoting, "\n".join(f"{name} {label}: quotes `{line}`" for name, label, line in quoting)
    exercises_covered = {name for name, _, _ in texts}
    assert exercises_covered >= set(exercises.EXERCISES) | {"my_query"}  # all 12 exercises


def test_the_solution_line_test_would_catch_a_quoted_line_under_other_names_and_spacing():
    assert _quoted_line("Finish with:   return e/e.sum( axis = -1,keepdims=True )")  # spacing, names
    assert _quoted_line("Use the square root: Return s / np.sqrt(k).")
    assert _quoted_line("Use the fragment np.sqrt(d_k) and .sum(axis=-1, keepdims=True).") is None


def test_a_hint_grows_more_specific_when_a_notebooks_function_makes_the_same_mistake_again():
    namespace = {"np": np, "__name__": "__main__"}
    exec("def my_softmax(x):\n    e = np.exp(x - x.max())\n    return e / e.sum(axis=-1, keepdims=True)\n",
         namespace)
    exercises.engine._ATTEMPTS.pop(("my_softmax", "global_max"), None)
    first, second, third = (check_softmax(namespace["my_softmax"]) for _ in range(3))
    assert first.mistake == second.mistake == "global_max"
    assert first.hint == first.nudge and second.hint != first.hint and third.hint == second.hint
    assert second.nudge == first.nudge  # graded feedback always carries the nudge
    assert _quoted_line(second.hint) is None


# ====== errors of the grading functions themselves
@pytest.mark.parametrize("thing, words", [(None, "got None"), (True, "got bool True"),
                                          (solutions.my_softmax, "the function 'my_softmax' itself")])
def test_assert_passes_says_what_it_was_given(thing, words):
    with pytest.raises(TypeError, match="assert_passes needs what a check returns") as info:
        grading.assert_passes(thing)
    assert words in str(info.value)


def test_check_hidden_of_an_unknown_exercise_lists_the_exercises():
    with pytest.raises(ValueError) as info:
        grading.check_hidden("my_sofmax", solutions.my_softmax)
    assert "Did you mean 'my_softmax'?" in str(info.value)
    assert all(name in str(info.value) for name in exercises.EXERCISES)


def test_a_failed_grading_assertion_shows_as_one_line_without_a_traceback():
    with pytest.raises(AssertionError) as info:
        grading.assert_passes(check_scaling(lambda scores, d_k: scores / d_k))
    lines = info.value._render_traceback_()
    assert len(lines) == 1 and "\n" not in lines[0]
    assert lines[0].startswith("AssertionError: my_scale: NOT YET (divided_by_d_k): ")
    assert "Hint: " in lines[0]
    assert "Failing case: hand-made 2×5 scores with d_k = 9 (scores: 2×5, d_k = 9)" in lines[0]
    assert "/" + "lessons_lib" not in lines[0]


# ====== a runaway function is really stopped
def _spawns_and_loops(x):
    import subprocess

    subprocess.Popen(["sleep", "60"], start_new_session=False)
    _endless_swallowing(x)


def _children(pid: int) -> set[int]:
    from pathlib import Path

    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text() if (task / "children").exists() else ""
        found |= {int(p) for p in text.split()}
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("fn", [_endless, _endless_swallowing, _sleeps,
                                pytest.param(_spawns_and_loops, marks=pytest.mark.subprocess)])
def test_an_endless_function_leaves_no_thread_or_process_running_after_its_check(fn):
    import os
    import threading

    assert exercises.runner.ISOLATION == "process"
    before = _children(os.getpid())
    feedback = dataclasses.replace(exercises.SOFTMAX, time_limit=0.5).check(fn)
    assert feedback.mistake == "timed_out" and "so the check stopped it" in feedback.message
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (_children(os.getpid()) - before or _sleepers()):
        time.sleep(0.05)
    assert not _children(os.getpid()) - before, "a process of the check is still running"
    assert not _sleepers(), "a process the learner's function started is still running"
    assert not [t for t in threading.enumerate() if t.name == "lessons-exercise-check"]


def _sleepers() -> list[int]:
    from pathlib import Path

    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == b"sleep\x0060\x00":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_without_fork_the_check_says_truthfully_whether_it_stopped_the_function(monkeypatch):
    import threading

    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")
    monkeypatch.setattr(exercises.runner, "_STOP_TRIES", 2)

    def sleeps_a_while(x):
        time.sleep(1.5)  # one C call: an exception raised in the thread waits until it returns

    feedback = dataclasses.replace(exercises.SOFTMAX, time_limit=0.2).check(sleeps_a_while)
    assert feedback.mistake == "timed_out"
    assert "could not stop it" in feedback.message and "so the check stopped it" not in feedback.message
    for thread in [t for t in threading.enumerate() if t.name == "lessons-exercise-check"]:
        thread.join(10)  # it ends when the sleep returns and meets the pending exception
    feedback = dataclasses.replace(exercises.SOFTMAX, time_limit=0.2).check(_endless)
    assert feedback.mistake == "timed_out" and "so the check stopped it" in feedback.message


def test_a_functions_prints_are_shown_and_an_os_exit_ends_only_the_checks_process(capsys):
    def prints(x):
        print("shape", x.shape)
        return solutions.my_softmax(x)

    assert check_softmax(prints).passed
    assert "shape (2, 3)" in capsys.readouterr().out
    if exercises.runner.ISOLATION == "process":
        import os

        feedback = check_softmax(lambda x: os._exit(3))
        assert feedback.mistake == "raised" and "ended the Python process" in feedback.message


# ====== lesson 07: the mask after the softmax, then renormalised
def test_renormalising_after_the_softmax_is_named_with_where_it_underflows():
    def my_causal_weights(scores):
        weights = attention.softmax(scores) * np.tril(np.ones(scores.shape))
        return weights / weights.sum(axis=1, keepdims=True)

    feedback = exercises.check_causal_weights(my_causal_weights)
    assert feedback.mistake == "renormalised_after_softmax", str(feedback)
    assert "On paper" in feedback.message and "underflows" in feedback.message and "NaN" in feedback.message
    assert _quoted_line(feedback.message + " " + feedback.hint) is None
