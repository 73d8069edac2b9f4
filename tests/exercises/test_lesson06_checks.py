"""The checks of lesson 06 (my_split_heads, my_merge_heads, my_next_token_head): the worked solutions pass,
each mistake is named, a broken head is explained."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import strategies as st

from lessons_lib import exercises

# (n_heads, d_model) pairs where the heads divide d_model
HEADS_AND_WIDTH = st.sampled_from([(1, 4), (2, 4), (4, 8), (3, 6), (8, 16), (2, 10)])


def _weights(rng, d):
    return [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4)]


# ------------------------------------------------------------------ exercises of notebook 06
def _solutions():
    from tests.helpers import solutions

    return solutions


@pytest.mark.parametrize("check, name", [(exercises.check_split_heads, "my_split_heads"),
                                         (exercises.check_merge_heads, "my_merge_heads"),
                                         (exercises.check_next_token_head, "my_next_token_head")])
def test_the_solutions_of_notebook_06_pass(check, name):
    feedback = check(getattr(_solutions(), name))
    assert feedback.passed, str(feedback)


def test_other_right_answers_pass_too():
    assert exercises.check_split_heads(lambda x, n_heads: np.stack(np.split(x, n_heads, axis=1))).passed
    assert exercises.check_merge_heads(lambda heads: np.concatenate(list(heads), axis=1)).passed
    # any large enough gain, any d_head: what counts is where the head looks
    assert exercises.check_next_token_head(lambda n: (np.hstack([8 * np.eye(n, k=1), np.zeros((n, 2))]),
                                                      np.hstack([np.eye(n), np.ones((n, 2))]))).passed


def _placeholder(*args):
    raise NotImplementedError("your code here")


@pytest.mark.parametrize("check", [exercises.check_split_heads, exercises.check_merge_heads,
                                   exercises.check_next_token_head])
def test_placeholders_are_not_attempted(check):
    assert check(_placeholder).status == "not attempted"


@pytest.mark.parametrize("check, fn, key, words", [
    (exercises.check_split_heads, lambda x, n_heads: x.reshape(n_heads, len(x), -1), "reshape_only",
     ["in one step", "reading order"]),
    (exercises.check_split_heads, lambda x, n_heads: x.reshape(len(x), n_heads, -1), "view_only",
     ["not moved to the front"]),
    (exercises.check_split_heads, lambda x, n_heads: np.stack([x[:, i::n_heads] for i in range(n_heads)]),
     "interleaved", ["every n_heads-th column"]),
    (exercises.check_merge_heads, lambda heads: heads.reshape(heads.shape[1], -1), "reshape_only",
     ["in one step", "reading order"]),
    (exercises.check_merge_heads, lambda heads: np.concatenate(list(heads), axis=0), "stacked_tokens",
     ["under each other"]),
    (exercises.check_merge_heads, lambda heads: sum(heads), "summed", ["added"]),
    (exercises.check_next_token_head, lambda n: (10 * np.eye(n, k=-1), np.eye(n)), "previous_token",
     ["previous token"]),
    (exercises.check_next_token_head, lambda n: (np.eye(n, k=1), np.eye(n)), "too_soft",
     ["leans the right way"]),
    (exercises.check_next_token_head, lambda n: (5 * np.eye(n), 5 * np.eye(n)), "itself", ["itself"]),
])
def test_each_notebook_06_mistake_is_named(check, fn, key, words):
    feedback = check(fn)
    assert feedback.mistake == key, str(feedback)
    for word in words:
        assert word in feedback.message + feedback.hint, str(feedback)


def test_a_broken_head_is_explained_not_raised():
    feedback = exercises.check_next_token_head(lambda n: np.eye(n))
    assert feedback.passed is False and "two matrices" in feedback.message
    feedback = exercises.check_next_token_head(lambda n: (np.eye(n + 1), np.eye(n + 1)))
    assert feedback.passed is False and "one row per position" in feedback.message


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
