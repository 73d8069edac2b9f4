"""Bad input to the position functions (notebook 11) gets the course's words, naming the argument, never
numpy's: an odd d_head, a negative or fractional position, a base of 1 or less, positions that do not match
the sequence, a convention name misspelled."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib import _checks
from tests.helpers import examples

X = np.random.default_rng(0).standard_normal((5, 6))


@pytest.mark.parametrize("call, error, words", [
    (lambda: ll.rope(np.ones((3, 5)), np.arange(3)), ValueError,
     "x has d_head = 5 (its last axis), an odd number: rotary embeddings turn the dimensions two by two"),
    (lambda: ll.rope_frequencies(7), ValueError, "d_head = 7 is an odd number"),
    (lambda: ll.rope(X, [0, 1, -2, 3, 4]), ValueError,
     "positions must be 0 or more (the first token stands at 0); got -2"),
    (lambda: ll.rope(X, [0, 1, 2.5, 3, 4]), ValueError, "positions must be whole numbers"),
    (lambda: ll.rope(X, np.arange(7)), ValueError,
     "positions has 7 entries but the sequence has seq_len = 5 tokens: give exactly one position per token"),
    (lambda: ll.rope(X, np.arange(3)), ValueError, "positions has 3 entries but the sequence has"),
    (lambda: ll.rope(X, 3), TypeError, "positions must be an array with one position per token"),
    (lambda: ll.rope(X, [True] * 5), TypeError, "positions must hold whole numbers"),
    (lambda: ll.rope(X, ["a"] * 5), TypeError, "positions must hold whole numbers"),
    (lambda: ll.rope(X, np.zeros((2, 5), int)[:, None]), ValueError, "positions has shape (2, 1, 5)"),
    (lambda: ll.rope(X, np.arange(5), base=1.0), ValueError, "base must be a finite number above 1"),
    (lambda: ll.rope(X, np.arange(5), base=0.5), ValueError, "base must be a finite number above 1"),
    (lambda: ll.rope(X, np.arange(5), base=np.inf), ValueError, "base must be a finite number above 1"),
    (lambda: ll.rope(X, np.arange(5), base="10000"), TypeError, "base must be a number such as 10000.0"),
    (lambda: ll.rope(X, np.arange(5), convention="halve"), ValueError,
     'convention must be "half" or "interleaved"; got \'halve\'. Did you mean \'half\'?'),
    (lambda: ll.rope(X, np.arange(5), convention="GPT-J"), ValueError, '"interleaved": pairs (2i, 2i + 1)'),
    (lambda: ll.rope(np.ones(6), [0]), ValueError, "x must have shape (..., seq_len, d_head)"),
    (lambda: ll.rope(np.ones((2, 6), int), [0, 1]), TypeError, "x has dtype int64"),
    (lambda: ll.sinusoidal_positions(0, 8), ValueError, "seq_len must be at least 1"),
    (lambda: ll.sinusoidal_positions(4, 8, base=1), ValueError, "base must be a finite number above 1"),
    (lambda: ll.alibi_slopes(0), ValueError, "n_heads must be at least 1"),
    (lambda: ll.alibi_bias(2, 5, n_keys=3), ValueError, "n_keys must be at least seq_len = 5"),
    (lambda: ll.Rotary(convention="interleave"), ValueError, "Did you mean 'interleaved'?"),
    (lambda: ll.Rotary(base=-3), ValueError, "base must be a finite number above 1"),
    (lambda: ll.multi_head_attention(np.ones((3, 6)), *[np.eye(6)] * 4, 2, rope=ll.Rotary(positions=[0, 1])),
     ValueError, "positions has 2 entries but the sequence has seq_len = 3"),
    (lambda: ll.multi_head_attention(np.ones((3, 6)), *[np.eye(6)] * 4, 2, rope="sideways"),
     ValueError, 'rope must be "half" or "interleaved"'),
])
def test_bad_input_is_named_in_the_courses_words(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


def test_an_odd_head_inside_multi_head_attention_names_d_head():
    # d_model 6 in 2 heads: d_head 3, odd
    with pytest.raises(ValueError, match=r"x has d_head = 3 \(its last axis\), an odd number"):
        ll.multi_head_attention(np.ones((4, 6)), *[np.eye(6)] * 4, 2, rope=True)


@settings(max_examples=examples(50))
@given(st.floats(allow_nan=False).filter(lambda f: f != round(f) if np.isfinite(f) else True))
def test_any_fractional_or_infinite_position_is_refused(value):
    positions = [0.0, value, 2.0]
    with pytest.raises(ValueError, match=r"^positions must be whole numbers|^positions must be 0 or more"):
        ll.rope(np.ones((3, 4)), positions)


@settings(max_examples=examples(50))
@given(st.integers(max_value=-1))
def test_any_negative_position_is_refused(value):
    with pytest.raises(ValueError, match=r"^positions must be 0 or more"):
        ll.rope(np.ones((2, 4)), [value, 0])


def test_whole_valued_floats_and_tensors_are_positions_too():
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(ll.rope(X, np.arange(5.0)), ll.rope(X, np.arange(5)))
    np.testing.assert_array_equal(ll.rope(X, torch.arange(5)), ll.rope(X, np.arange(5)))
    assert _checks.check_positions([3], (1,)).dtype == np.int64
