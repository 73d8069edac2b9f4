"""Lesson 12's exercises, ``my_decode_step`` and ``my_repeat_kv``: the worked solutions pass, the mistakes a
learner makes, written the way a learner writes them, are named (the new key not appended before the scores,
the cache appended twice, a future position attended to, the causal rows aligned at the top left, the scale
missing, tiling where each head must repeat in place, each token repeated instead of each head, n_heads not
divisible by n_kv_heads not refused), the hints nudge without naming the operations of the solutions, an
untouched exercise says only where to start, and the unseen cases keep the mistakes apart."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.exercises import grading
from tests.helpers import solutions

DECODE = exercises.EXERCISES["my_decode_step"]
REPEAT = exercises.EXERCISES["my_repeat_kv"]


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ------------------------------------------------------------------ my_decode_step, as learners write it
def _attends_then_appends(q, k, v, k_cache, v_cache):
    scores = q @ k_cache.T / np.sqrt(q.shape[-1])
    out = _softmax(scores) @ v_cache if k_cache.shape[0] else np.zeros((q.shape[0], v.shape[1]))
    return out, np.vstack([k_cache, k]), np.vstack([v_cache, v])


def _appends_twice(q, k, v, k_cache, v_cache):
    k_cache, v_cache = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])          # appended again
    past = keys.shape[0] - q.shape[0]
    scores = np.where(np.arange(len(keys)) <= past + np.arange(len(q))[:, None],
                      q @ keys.T / np.sqrt(q.shape[-1]), -np.inf)
    return _softmax(scores) @ values, k_cache, v_cache


def _no_mask(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    return _softmax(q @ keys.T / np.sqrt(q.shape[-1])) @ values, keys, values


def _tril_mask(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    mask = np.tril(np.ones((len(q), len(keys)), bool))
    scores = np.where(mask, q @ keys.T / np.sqrt(q.shape[-1]), -np.inf)
    return _softmax(scores) @ values, keys, values


def _unscaled(q, k, v, k_cache, v_cache):
    keys, values = np.vstack([k_cache, k]), np.vstack([v_cache, v])
    past = len(k_cache)
    scores = np.where(np.arange(len(keys)) <= past + np.arange(len(q))[:, None], q @ keys.T, -np.inf)
    return _softmax(scores) @ values, keys, values


@pytest.mark.parametrize("fn, key", [
    (_attends_then_appends, "not_appended_first"), (_appends_twice, "appended_twice"),
    (_no_mask, "future_position"), (_tril_mask, "mask_top_left"), (_unscaled, "no_scale"),
])
def test_the_decode_mistakes_the_issue_lists_are_named(fn, key):
    feedback = DECODE.check(fn)
    assert feedback.passed is False and feedback.mistake == key, str(feedback)


# ------------------------------------------------------------------ my_repeat_kv, as learners write it
def _tile(kv, n_heads):
    n_kv = kv.shape[-3]
    if n_heads % n_kv:
        raise ValueError(f"n_heads = {n_heads} is not a multiple of n_kv_heads = {n_kv}")
    reps = [1] * kv.ndim
    reps[-3] = n_heads // n_kv
    return np.tile(kv, reps)


def _broadcast_wrong_order(kv, n_heads):
    n_kv = kv.shape[-3]
    if n_heads % n_kv:
        raise ValueError("n_heads must be a multiple of n_kv_heads")
    group = n_heads // n_kv
    expanded = np.broadcast_to(kv[..., None, :, :, :], (*kv.shape[:-3], group, *kv.shape[-3:]))
    return expanded.reshape(*kv.shape[:-3], n_heads, *kv.shape[-2:])


def _tokens(kv, n_heads):
    n_kv = kv.shape[-3]
    if n_heads % n_kv:
        raise ValueError("n_heads is not a multiple of n_kv_heads")
    return np.repeat(kv, n_heads // n_kv, axis=-2)


def _no_refusal(kv, n_heads):
    return np.repeat(kv, max(n_heads // kv.shape[-3], 1), axis=-3)


@pytest.mark.parametrize("fn, key", [
    (_tile, "tiled"), (_broadcast_wrong_order, "tiled"), (_tokens, "tokens_repeated"),
    (_no_refusal, "not_refused"),
])
def test_the_head_sharing_mistakes_are_named(fn, key):
    feedback = REPEAT.check(fn)
    assert feedback.passed is False and feedback.mistake == key, str(feedback)


def test_a_refusal_in_numpys_words_is_not_clear_enough():
    def numpy_words(kv, n_heads):
        group = n_heads // kv.shape[-3]
        return np.repeat(kv, group, axis=-3).reshape(*kv.shape[:-3], n_heads, *kv.shape[-2:])

    feedback = REPEAT.check(numpy_words)
    assert feedback.mistake == "not_refused" and "numpy's words" in feedback.message, str(feedback)


# ------------------------------------------------------------------ the solutions, the hints, the start
def test_the_worked_solutions_pass_visible_and_unseen_cases():
    for name, fn in (("my_decode_step", solutions.my_decode_step), ("my_repeat_kv", solutions.my_repeat_kv)):
        assert exercises.EXERCISES[name].check(fn).passed
        for seed in range(5):
            cases = grading.hidden_cases(name, seed)
            assert cases and all(c.label.startswith("unseen") for c in cases)
            unseen = dataclasses.replace(exercises.EXERCISES[name], cases=lambda seed=seed, name=name:
                                         grading.hidden_cases(name, seed))
            assert unseen.check(fn).passed, (name, seed)


@pytest.mark.parametrize("exercise", [DECODE, REPEAT], ids=["decode", "repeat"])
def test_the_hints_nudge_without_naming_the_solutions_operations(exercise):
    banned = ("concatenate", "vstack", "np.repeat", "repeat_interleave", "np.where", "tril", "axis=-3",
              "np.sqrt", "-np.inf", "keepdims")
    for mistake in exercise.mistakes:
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        assert len(hints) == 3, mistake.key                   # concept, property or shape, a case to try
        for hint in hints:
            text = hint if isinstance(hint, str) else ""
            assert not any(word in text for word in banned), (mistake.key, text)
    assert not any(word in exercise.start_hint for word in banned)


@pytest.mark.parametrize("check", [exercises.check_decode_step, exercises.check_repeat_kv])
def test_an_untouched_exercise_says_only_where_to_start(check):
    def untouched(*args):
        raise NotImplementedError("your code here")

    feedback = check(untouched)
    assert feedback.status == "not attempted" and not feedback.passed
    assert feedback.hint.startswith("Start with the hand-made case")
    assert "Likely mistake" not in feedback.message


def test_the_unseen_cases_keep_the_candidate_mistakes_apart():
    """On the unseen cases of many seeds no candidate of either table passes."""
    for exercise in (DECODE, REPEAT):
        for seed in range(4):
            unseen = dataclasses.replace(exercise, cases=lambda seed=seed, name=exercise.name:
                                         grading.hidden_cases(name, seed))
            for mistake in exercise.mistakes:
                for candidate in getattr(mistake.test, "candidates", ()):
                    assert not unseen.check(candidate).passed, (exercise.name, mistake.key, seed)
