"""The validators (lessons_lib._checks) as every module uses them: a size that would kill a kernel is
refused at once, flags and arguments are checked, and messages quote only what was passed."""

from __future__ import annotations

import inspect
import time

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib import exercises
from lessons_lib._checks import SizeLimitError
from lessons_lib.core import attention, backends, masks, multihead
from lessons_lib.core.masks import combine_masks, padding_mask, sliding_window_mask
from lessons_lib.lab import data
from lessons_lib.lab.data import coreference_example, embed_tokens, projection_weights, random_qkv
from tests.helpers import examples

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("warnings_are_errors")  # no test here may let a warning through

QKV = random_qkv(6, 8, seed=4)


# ====== sizes that would kill a kernel are refused at once
BIG = [
    ("causal_mask(50000)", lambda: ll.causal_mask(50_000)),
    ("sliding_window_mask(50000, 3)", lambda: sliding_window_mask(50_000, 3)),
    ("padding_mask", lambda: padding_mask(lengths=[50_000], n_queries=50_000)),
    ("Attention over 20000 queries", lambda: ll.scaled_dot_product_attention(*random_qkv(20_000, 2))),
    ("Attention over 20000 queries", lambda: attention.attention_scores(*random_qkv(20_000, 2)[:2])),
    ("random_qkv", lambda: random_qkv(10**9, 64)),
    ("embed_tokens", lambda: embed_tokens(["a"], d_model=10**9)),
    ("Attention weights over 20000", lambda: ll.torch_attention_with_weights(*random_qkv(20_000, 2))),
]


@pytest.mark.parametrize("what, make", BIG, ids=[b[0] for b in BIG])
def test_a_size_that_would_kill_the_kernel_is_refused_at_once(what, make):
    start = time.perf_counter()
    with pytest.raises(SizeLimitError) as info:
        make()
    assert time.perf_counter() - start < 2, "refused before allocating, not after"
    message = str(info.value)
    assert what in message and "would need about" in message and "GB" in message
    assert "LESSONS_MEMORY_LIMIT_MB" in message


def test_the_limit_can_be_raised_and_lowered(monkeypatch):
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "1")
    with pytest.raises(SizeLimitError, match=r"1.0 MB"):
        ll.causal_mask(2000)
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "8")
    assert ll.causal_mask(2000).shape == (2000, 2000)


# ====== flags and arguments are checked
NOT_BOOLS = st.one_of(st.text(max_size=3), st.integers(), st.floats(allow_nan=False), st.none(),
                      st.lists(st.booleans(), max_size=2))
FLAGGED = {
    "sliding_window_mask": lambda c: sliding_window_mask(4, 2, causal=c),
    "combine_masks": lambda c: combine_masks(None, c, 3, 3),
    "scaled_dot_product_attention": lambda c: ll.scaled_dot_product_attention(*QKV, causal=c),
    "attention_weights": lambda c: attention.attention_weights(np.zeros((3, 3)), d_k=2, causal=c),
    "multi_head_attention": lambda c: ll.multi_head_attention(np.ones((3, 4)), *[np.eye(4)] * 4, n_heads=2,
                                                              causal=c),
    "sdpa_attention": lambda c: ll.sdpa_attention(*QKV, causal=c),
    "torch_attention_with_weights": lambda c: ll.torch_attention_with_weights(*QKV, causal=c),
}


@settings(max_examples=examples(25))
@given(NOT_BOOLS)
@pytest.mark.parametrize("name", FLAGGED)
def test_a_truthy_non_boolean_flag_is_refused(name, value):
    assume(not isinstance(value, bool))
    with pytest.raises(TypeError, match=r"causal must be True or False"):
        FLAGGED[name](value)


def test_a_string_flag_is_refused_naming_what_was_passed():
    with pytest.raises(TypeError, match=r"causal must be True or False; got 'no'"):
        sliding_window_mask(4, 2, causal="no")


@pytest.mark.parametrize("axis, error", [(None, TypeError), (1.0, TypeError), (True, TypeError),
                                         (2, ValueError), (-3, ValueError)])
def test_softmax_axis_is_checked(axis, error):
    with pytest.raises(error, match=r"axis"):
        ll.softmax(np.zeros((2, 3)), axis=axis)
    assert ll.softmax(np.zeros((2, 3)), axis=np.int64(0)).shape == (2, 3)


def test_batch_dimensions_that_do_not_broadcast_in_each_step():
    with pytest.raises(ValueError, match=r"batch dimensions of Q \(2,\) and K \(3,\)"):
        attention.attention_scores(np.ones((2, 3, 4)), np.ones((3, 5, 4)))
    with pytest.raises(ValueError, match=r"batch dimensions of the weights \(2,\) and of V \(3,\)"):
        attention.weighted_values(np.ones((2, 3, 5)), np.ones((3, 5, 4)))


@pytest.mark.parametrize("call, error, words", [
    (lambda: embed_tokens(["a"], seed="x"), TypeError, "seed must be a whole number"),
    (lambda: embed_tokens(["a"], seed=1.5), TypeError, "seed"),
    (lambda: embed_tokens(["a"], seed=True), TypeError, "seed"),
    (lambda: embed_tokens(["a"], seed=-1), ValueError, "seed must be 0 or more"),
    (lambda: embed_tokens(["a"], position_scale=np.nan), ValueError, "position_scale must be a finite"),
    (lambda: random_qkv(3, 2, seed="x"), TypeError, "np.random.Generator"),
    (lambda: random_qkv(3, 2, dtype=int), TypeError, "got int "),
    (lambda: random_qkv(3, 2, dtype="gpu"), TypeError, "float dtype"),
    (lambda: random_qkv(3, 2, dtype=np.complex128), TypeError, "floating-point"),
    (lambda: projection_weights(4, 2, seed=None), TypeError, "seed must be a whole number"),
    (lambda: coreference_example(strength=np.nan), ValueError, "strength must be a finite number"),
    (lambda: coreference_example(strength=np.inf), ValueError, "strength"),
    (lambda: coreference_example(strength="3"), TypeError, "strength must be a number"),
])
def test_data_seeds_dtypes_and_strengths_are_checked(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_valid_seeds_still_work():
    a = random_qkv(3, 2, seed=np.random.default_rng(1))
    b = random_qkv(3, 2, seed=np.random.default_rng(1))
    np.testing.assert_array_equal(a[0], b[0])
    assert random_qkv(3, 2, dtype="float32")[0].dtype == np.float32
    assert embed_tokens(["a", "b"], seed=np.int64(3)).shape == (2, 8)


# ====== messages quote only what was passed
def test_merge_heads_says_what_it_needs():
    with pytest.raises(ValueError) as info:
        ll.merge_heads(np.ones((5, 8)))
    message = str(info.value)
    assert "at least 3 dimensions" in message and "(5, 8)" in message and "2 dimensions" in message
    assert "at least 1 dimension" not in message


def test_multi_head_attention_quotes_the_mask_shape_that_was_passed():
    with pytest.raises(ValueError) as info:
        ll.multi_head_attention(np.ones((4, 8)), *[np.eye(8)] * 4, n_heads=2, mask=np.ones((3, 3), bool))
    assert "mask has shape (3, 3)" in str(info.value) and "(1, 3, 3)" not in str(info.value)


def test_padding_mask_of_nothing():
    with pytest.raises(ValueError) as info:
        padding_mask([])
    assert "no keys" in str(info.value) and "float64" not in str(info.value)


def test_a_refused_size_quotes_the_call_as_written():
    with pytest.raises(SizeLimitError, match=r"causal_mask\(50000\) would need"):
        ll.causal_mask(50_000)


def test_scaling_messages_speak_of_the_scores_they_were_given():
    with pytest.raises(ValueError) as info:
        attention.scale_scores(np.array([[1e308, 1.0]]), scale=10.0)
    assert "although the scores are finite" in str(info.value) and "Q and K" not in str(info.value)


def test_float64_messages_do_not_suggest_float64():
    q, k, v = random_qkv(3, 2)
    for call in (lambda: ll.scaled_dot_product_attention(q * 1e200, k * 1e200, v),
                 lambda: ll.sdpa_attention(q * 1e200, k * 1e200, v),
                 lambda: ll.torch_attention_with_weights(q * 1e200, k * 1e200, v)):
        with pytest.raises(ValueError) as info:
            call()
        assert "float64." not in str(info.value).replace("overflow float64", "")
        assert "wider dtype" not in str(info.value) and "compute in float64" not in str(info.value)


def test_dtype_messages_name_what_was_passed():
    with pytest.raises(TypeError) as info:
        random_qkv(3, 2, dtype=int)
    assert "got int " in str(info.value) and "int64" not in str(info.value)


def test_every_public_function_of_the_checked_modules_has_a_docstring():
    for module in (attention, backends, exercises, masks, multihead, data):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                assert obj.__doc__, f"{module.__name__}.{name}"
