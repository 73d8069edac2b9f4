"""The exercise checks pass every worked solution and every other right answer, and name each listed mistake.

The wrong answers are written the way learners write them (``tests/helpers/wrong_answers.py``); each
mistake's feedback must name it and say the words that explain it. `make check` runs one learner's version
of each mistake (every mistake of every table has one) and one candidate of each exercise's own table;
`make test` runs them all.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib import exercises
from tests.helpers import solutions  # the worked solutions, read from the notebooks (never in lessons_lib)
from tests.helpers.wrong_answers import MISTAKES, every_table_candidate, first_of_each, v

pytestmark = pytest.mark.usefixtures("warnings_are_errors")  # a check never lets a warning through


# ------------------------------------------------------------------ right answers pass
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_every_exercise_passes_its_worked_solution(name):
    """Each check passes the solution its notebook shows (``tests/helpers/solutions.py``)."""
    solution = getattr(solutions, name)
    feedback = exercises.EXERCISES[name].check(solution)
    assert feedback.status == "passed", f"{name} (from {solution.__notebook__}): {feedback}"
    assert feedback.passed is True and feedback.mistake is None
    assert "Well done" in feedback.message
    assert "PASSED" in repr(feedback) and "✓" in repr(feedback)


def test_every_registered_exercise_has_a_worked_solution_in_its_notebook():
    assert set(solutions.__all__) == set(exercises.EXERCISES)


@pytest.mark.parametrize("check, answer", [
    # a list of the three arrays is as good as a tuple
    (exercises.check_projection, lambda x, w_q, w_k, w_v: [x @ w_q, x @ w_k, x @ w_v]),
    (exercises.check_split_heads, lambda x, n_heads: np.stack(np.split(x, n_heads, axis=1))),
    (exercises.check_merge_heads, lambda heads: np.concatenate(list(heads), axis=1)),
    # any large enough gain, any d_head: what counts is where the head looks
    (exercises.check_next_token_head, lambda n: (np.hstack([8 * np.eye(n, k=1), np.zeros((n, 2))]),
                                                 np.hstack([np.eye(n), np.ones((n, 2))]))),
    # a large negative number instead of −∞ is as good
    (exercises.check_causal_weights, lambda s: ll.softmax(np.where(ll.causal_mask(len(s)), s, -1e9))),
], ids=["projection-list", "split-heads-np.split", "merge-heads-concatenate", "next-token-head-wider",
        "causal-weights-minus-1e9"])
def test_right_answers_written_otherwise_pass_too(check, answer):
    feedback = check(answer)
    assert feedback.passed, str(feedback)


@pytest.mark.parametrize("name", ["my_projection", "my_softmax", "my_scores", "my_scale", "my_weighted_sum",
                                  "my_softmax_off", "my_online_update"])
def test_a_slightly_wrong_answer_does_not_pass(name):
    solution = getattr(solutions, name)

    def slightly_off(*args):
        answer = solution(*args)
        (answer[-1] if isinstance(answer, tuple) else answer).flat[0] += 0.01
        return answer

    feedback = exercises.EXERCISES[name].check(slightly_off)
    assert feedback.passed is False
    assert feedback.mistake == "wrong_values"
    assert "largest difference" in feedback.message or "off by up to 0.01" in feedback.message


# ------------------------------------------------------------------ each listed mistake
@pytest.mark.parametrize("name, fn, key, words", first_of_each(
    MISTAKES, group_of=lambda m: (m[0], m[2]), id_of=lambda m: f"{m[0]}-{m[2]}-{MISTAKES.index(m)}"))
def test_each_mistake_is_named_with_the_words_that_explain_it(name, fn, key, words):
    feedback = exercises.EXERCISES[name].check(fn)
    assert feedback.status == "failed" and feedback.passed is False
    assert feedback.mistake == key, str(feedback)
    text = feedback.message + " " + feedback.hint
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    assert feedback.hint, "every mistake comes with a hint toward the fix"
    assert "Case:" in feedback.details and "expected" in feedback.details


@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_every_mistake_in_the_tables_has_a_learners_version_above(name):
    tested = {key for exercise, _, key, _ in MISTAKES if exercise == name}
    assert {m.key for m in exercises.EXERCISES[name].mistakes} <= tested


def _shapes_known(exercise, candidate) -> set[str]:
    """Every shape of the cases' inputs, the expected answers and what ``candidate`` returns on them."""
    known = set()
    for case in exercise.cases():
        try:
            with np.errstate(all="ignore"):
                outputs = candidate(*case.args.values())
        except Exception:
            outputs = ()
        expected = exercise.reference(*case.args.values())
        for value in (*case.args.values(), *(outputs if isinstance(outputs, tuple) else (outputs,)),
                      *(expected if isinstance(expected, tuple) else (expected,))):
            known.add(", ".join(map(str, np.shape(value))))
    return known


@pytest.mark.parametrize("exercise, key, candidate, index", first_of_each(
    every_table_candidate(), group_of=lambda c: c[0].name, id_of=lambda c: f"{c[0].name}-{c[1]}-{c[3]}"))
def test_every_candidate_mistake_is_named_as_itself_quoting_only_shapes_of_its_case(exercise, key, candidate,
                                                                                     index):
    """The cases tell the mistakes apart: each wrong implementation of a table is named by its own entry;
    and a shape its message quotes belongs to a case, the expected answer or the learner's."""
    feedback = exercise.check(candidate)
    assert feedback.passed is False, f"{key} passes the check"
    assert feedback.mistake == key, str(feedback)
    # (an axis order quoted in code, .transpose(1, 2, 0), is not a shape)
    shapes = set(re.findall(r"(?<!transpose)\((\d+(?:, \d+)+)\)", feedback.message))
    assert shapes <= _shapes_known(exercise, candidate), f"{shapes}: {feedback.message}"


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


# ------------------------------------------------------------------ mistakes together, or in other words
def test_an_extra_in_place_change_is_mentioned_beside_the_main_mistake():
    def in_place_and_wrong_axis(x):
        x -= x.max(axis=0, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=0, keepdims=True)

    feedback = exercises.check_softmax(in_place_and_wrong_axis)
    assert feedback.mistake == "wrong_axis"
    assert "changed its input `x` in place" in feedback.message


def test_two_mistakes_at_once_get_the_generic_message_not_a_guess():
    feedback = exercises.check_scores(lambda Q, K: (K @ Q.T) / np.sqrt(Q.shape[-1]))  # swapped and scaled
    assert feedback.mistake in {"wrong_shape", "wrong_values", "raised"}, str(feedback)


def test_a_global_is_named_against_the_learners_own_parameter_name():
    feedback = exercises.check_weighted_sum(lambda w, values: w @ v)
    assert feedback.mistake == "uses_global"
    assert "use its own argument `values`" in feedback.message


@pytest.mark.parametrize("fn, key, words", [
    (lambda x, w_q, w_k, w_v: np.stack([x @ w_q, x @ w_k, x @ w_q]), "not_a_tuple", ["return Q, K, V"]),
    (lambda x, w_q, w_k, w_v: x @ w_q, "not_a_tuple", ["3 arrays", "shape (3, 2)"]),
    (lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_k), "wrong_count", ["returned 2 items", "Q, K, V"]),
    (lambda x, w_q, w_k, w_v: (x @ w_q, (x @ w_k).tolist(), x @ w_v), "output_not_an_array",
     ["Output 2 (K)"]),
    (lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_k, x @ w_v + 1), "wrong_values", ["V is off", "Q, K right"]),
])
def test_projection_shape_of_the_answer_is_explained(fn, key, words):
    feedback = exercises.check_projection(fn)
    assert feedback.mistake == key, str(feedback)
    text = f"{feedback.message} {feedback.hint}"
    for word in words:
        assert word in text, f"{word!r} not in: {text}"


def test_projection_details_show_each_output():
    feedback = exercises.check_projection(lambda x, w_q, w_k, w_v: (x @ w_k, x @ w_q, x @ w_v))
    assert "expected Q" in feedback.details and "yours V" in feedback.details


# ------------------------------------------------------------------ notebook 01: a query to design
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


@pytest.mark.parametrize("scale", [1.0, 20.0])
def test_a_head_that_looks_at_itself_is_named_so_whether_it_is_soft_or_sharp(scale):
    """Identity matrices make a head that looks at itself: too soft to pass at scale 1, sharp at 20. Either
    way the check says where it looks (it used to call the soft one "pointing the right way")."""
    feedback = exercises.check_next_token_head(lambda n: (scale * np.eye(n), np.eye(n)))
    assert feedback.mistake == "itself", str(feedback)
    assert "right way" not in feedback.message
    assert "expected key with the largest weight" in feedback.details


def test_a_soft_head_that_points_the_right_way_is_told_so_and_passes_once_sharper():
    soft = exercises.check_next_token_head(lambda n: (np.eye(n, k=1), np.eye(n)))
    assert soft.mistake == "too_soft" and "leans the right way" in soft.message
    assert exercises.check_next_token_head(lambda n: (10 * np.eye(n, k=1), np.eye(n))).passed


def test_an_error_of_the_check_is_said_once():
    feedback = exercises.check_next_token_head(lambda n: (np.eye(n + 1), np.eye(n + 1)))
    assert "ValueError: ValueError" not in str(feedback) and "one row per position" in feedback.message
