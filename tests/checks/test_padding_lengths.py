"""``padding_mask(lengths=...)`` takes whole numbers only: a bool anywhere among the lengths is refused,
by the one rule every count of the course follows (``is_whole_number``: ``True`` is an int to Python,
never a length)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll

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
