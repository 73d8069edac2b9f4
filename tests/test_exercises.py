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
import solutions  # tests/solutions.py: the worked solutions, read from the notebooks (never in lessons_lib)

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
)

torch = pytest.importorskip("torch")

# every exercise's worked solution, as the source notebooks hold it (tests/solutions.py)
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
    ("scores", lambda Q, K: (Q * K).sum(axis=-1), "elementwise", ["element by element", "return Q @ K.T"]),
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
    ("online_update", _online(_TEXTBOOK_SUM, ret="ell_new, m_new"), "swapped_outputs", ["m_new, ell_new"]),
    ("online_update", _online("ell + np.exp(chunk - m_new[:, None]).sum(axis=1)"), "no_rescale",
     ["np.exp(m - m_new)", "OLD maximum"]),
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


def test_the_library_itself_passes_the_softmax_check():
    assert check_softmax(lambda x: attention.softmax(x)).passed


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
