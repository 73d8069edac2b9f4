"""The formulas (``core/``) name what was wrong with their input: the argument, its shape or dtype, and
the values involved (``K has d_k=16 but Q has d_k=8``), never numpy's message. Lengths of a padding mask are
whole numbers only: a bool anywhere among them is refused, by the one rule every count of the course
follows (``is_whole_number``: ``True`` is an int to Python, never a length)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.core.attention import attention_scores, attention_weights, scale_scores, weighted_values

Q, K, V = ll.random_qkv(4, 8, seed=0)


@pytest.mark.parametrize("fn", [ll.scaled_dot_product_attention, ll.flash_attention])
def test_d_k_mismatch_names_both(fn):
    k16 = np.ones((4, 16))
    with pytest.raises(ValueError, match=r"K has d_k=16 but Q has d_k=8"):
        fn(Q, k16, V)
    with pytest.raises(ValueError, match=r"K has d_k=16 but Q has d_k=8"):
        attention_scores(Q, k16)


@pytest.mark.parametrize("fn", [ll.scaled_dot_product_attention, ll.flash_attention])
def test_k_and_v_lengths_differ(fn):
    with pytest.raises(ValueError, match=r"K has 4 tokens but V has 6"):
        fn(Q, K, np.ones((6, 8)))
    with pytest.raises(ValueError, match=r"4 columns \(keys\) but V has 6 rows"):
        weighted_values(np.ones((4, 4)) / 4, np.ones((6, 8)))


def test_mask_shape_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4\).*\(4, 4\)"):
        ll.scaled_dot_product_attention(Q, K, V, mask=np.ones((3, 4), dtype=bool))


def test_mask_must_be_boolean():
    with pytest.raises(TypeError, match=r"mask must be boolean.*float64.*additive_mask == 0"):
        ll.scaled_dot_product_attention(Q, K, V, mask=np.zeros((4, 4)))
    with pytest.raises(TypeError, match=r"mask must be boolean.*int64"):
        attention_weights(np.zeros((4, 4)), d_k=8, mask=np.ones((4, 4), dtype=np.int64))


@pytest.mark.parametrize("bad,what", [(np.ones((4, 8), dtype=np.int64), "int64"),
                                      (np.ones((4, 8), dtype=bool), "bool"),
                                      ([["a"] * 8] * 4, "<U1")])
def test_integer_or_non_numeric_arrays_say_cast_to_float(bad, what):
    with pytest.raises(TypeError, match=rf"Q has dtype {what}.*(astype\(np.float64\)|floats)"):
        ll.scaled_dot_product_attention(bad, K, V)


@pytest.mark.parametrize("value,word", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_nan_or_infinity_in_inputs(value, word):
    v = V.copy()
    v[2, 3] = value
    with pytest.raises(ValueError, match=rf"V contains {word} at index \(2, 3\)"):
        ll.scaled_dot_product_attention(Q, K, v)
    with pytest.raises(ValueError, match=rf"V contains {word}"):
        ll.flash_attention(Q, K, v)


def test_n_heads_must_divide_d_model():
    x, w = np.ones((3, 6)), np.eye(6)
    with pytest.raises(ValueError, match=r"n_heads=4 does not divide d_model=6.*\[1, 2, 3, 6\]"):
        ll.multi_head_attention(x, w, w, w, w, n_heads=4)
    with pytest.raises(ValueError, match=r"n_heads=5 does not divide d_model=6"):
        ll.split_heads(x, 5)
    with pytest.raises(ValueError, match=r"W_O has shape \(6, 4\)"):
        ll.multi_head_attention(x, w, w, w, np.ones((6, 4)), n_heads=2)


@pytest.mark.parametrize("shape", [(0, 8), (4, 0)])
def test_empty_sequence(shape):
    with pytest.raises(ValueError, match=r"Q is empty.*at least one token"):
        ll.scaled_dot_product_attention(np.ones(shape), K, V)


def test_one_dimensional_input_asks_for_rows_of_tokens():
    with pytest.raises(ValueError, match=r"Q must have shape \(seq_len, d\).*\(8,\)"):
        ll.scaled_dot_product_attention(np.ones(8), K, V)


def test_batch_dimensions_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"batch dimensions of Q \(2,\), K \(3,\)"):
        ll.scaled_dot_product_attention(np.ones((2, 4, 8)), np.ones((3, 4, 8)), np.ones((3, 4, 8)))


def test_bad_scale_and_d_k():
    with pytest.raises(ValueError, match=r"scale must be positive"):
        ll.scaled_dot_product_attention(Q, K, V, scale=-1.0)
    with pytest.raises(TypeError, match=r"Give d_k"):
        scale_scores(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"d_k must be a positive whole number"):
        scale_scores(np.ones((2, 2)), d_k=0)


def test_projection_shape_errors():
    x = np.ones((3, 5))
    with pytest.raises(ValueError, match=r"W_Q has 4 rows but X has d_model=5"):
        ll.project_qkv(x, np.ones((4, 2)), np.ones((5, 2)), np.ones((5, 2)))
    with pytest.raises(ValueError, match=r"W_K makes keys of d_k=3 but W_Q makes queries of d_k=2"):
        ll.project_qkv(x, np.ones((5, 2)), np.ones((5, 3)), np.ones((5, 2)))


def test_mask_factories_check_their_arguments():
    with pytest.raises(TypeError, match=r"n_queries must be a whole number"):
        ll.causal_mask(2.5)
    with pytest.raises(ValueError, match=r"n_queries must be at least 1"):
        ll.causal_mask(0)
    with pytest.raises(TypeError, match=r"causal must be True or False"):
        ll.scaled_dot_product_attention(Q, K, V, causal="yes")


def test_data_helpers_check_arguments():
    with pytest.raises(TypeError, match=r"use tokenize\(sentence\) first"):
        ll.embed_tokens("The cat")
    with pytest.raises(ValueError, match=r"up to 512"):
        ll.tokens_of_length(600)
    with pytest.raises(ValueError, match=r'"tired" or "wide"'):
        ll.coreference_example("cold")


# ------------------------------------------------------------------ padding lengths
LENGTH = st.integers(min_value=1, max_value=6)
FLAG = st.sampled_from([True, False, np.True_, np.False_])


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(LENGTH, min_size=1, max_size=4), flag=FLAG, data=st.data())
def test_a_bool_among_the_lengths_is_refused(lengths, flag, data):
    at = data.draw(st.integers(0, len(lengths)), label="where")
    with pytest.raises(TypeError, match=r"lengths must be whole numbers.*True/False is not a length"):
        ll.padding_mask(lengths=[*lengths[:at], flag, *lengths[at:]])


@pytest.mark.parametrize("lengths", [True, [True, 3], (3, False), np.array([True, True]), [np.True_]])
def test_bool_lengths_in_every_form_are_refused(lengths):
    with pytest.raises(TypeError, match=r"lengths"):
        ll.padding_mask(lengths=lengths)


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.one_of(LENGTH, LENGTH.map(np.int64)), min_size=1, max_size=4))
def test_whole_number_lengths_still_give_their_padding(lengths):
    mask = ll.padding_mask(lengths=lengths)
    assert mask.shape == (len(lengths), max(lengths), max(lengths))
    assert [int(row[0].sum()) for row in mask] == [int(n) for n in lengths]
