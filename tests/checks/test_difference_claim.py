"""``difference_claim`` says nothing it cannot stand behind: same shapes only, a printed bound that never
contradicts the verdict, infinities without numpy's warning, NaN and the same infinity in both refused.

The printed sentence is read back as a learner reads it: the numbers in it must make it true.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lessons_lib as ll

pytestmark = pytest.mark.usefixtures("warnings_are_errors")   # no RuntimeWarning may reach a learner

CLAIM = re.compile(r"largest difference (?:below (?P<bound>\S+)"
                   r"|(?P<largest>\S+), NOT below (?P<not_bound>\S+))")

BOUNDS = st.floats(min_value=1e-300, max_value=1.0, exclude_max=True, exclude_min=True)
VALUES = st.floats(allow_nan=False, width=64)                  # ±inf included


def _largest(a, b) -> float:
    """max |a − b| entry by entry (equal entries: 0; the same infinity in both is refused before)."""
    return max((0.0 if x == y else abs(x - y) for x, y in zip(np.ravel(a).tolist(), np.ravel(b).tolist())),
               default=0.0)


def _read(claim: str) -> tuple[bool, float, float | None]:
    """(said below?, the bound as printed, the largest difference as printed or None)."""
    match = CLAIM.fullmatch(claim)
    assert match, f"not a claim: {claim!r}"
    if match["bound"]:
        return True, float(match["bound"]), None
    return False, float(match["not_bound"]), float(match["largest"])


@settings(max_examples=300, deadline=None)
@given(below=BOUNDS, data=st.data())
def test_the_printed_sentence_is_true_whatever_the_values(below, data):
    shape = data.draw(hnp.array_shapes(max_dims=2, max_side=4), label="shape")
    a = data.draw(hnp.arrays(np.float64, shape, elements=VALUES), label="a")
    # b near a: differences around the bound, where rounding the printed numbers could contradict the verdict
    factor = data.draw(st.sampled_from([0.0, 0.5, 0.999999, 1.0, 1.000001, 1.04, 1.3, 7.0]), label="factor")
    b = data.draw(st.one_of(hnp.arrays(np.float64, shape, elements=VALUES),
                            st.just(np.where(np.isfinite(a), a + below * factor, a))), label="b")
    if (np.isinf(a) & (a == b)).any():   # inf − inf is no number: refused, never claimed below a bound
        with pytest.raises(ValueError, match="inf − inf is no number"):
            ll.difference_claim(a, b, below=below)
        return
    claim = ll.difference_claim(a, b, below=below)
    said_below, printed_bound, printed_largest = _read(claim)
    largest = _largest(a, b)
    assert printed_bound == below, f"{claim}: the bound printed is not the bound given ({below!r})"
    assert said_below == (largest < below), f"{claim}: the verdict is wrong for {largest!r}"
    if not said_below:
        assert printed_largest >= printed_bound, f"{claim}: reads as below the bound it says it is not below"


@settings(max_examples=100, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
def test_arrays_of_different_shapes_are_refused_even_when_they_broadcast(shapes):
    first, second = shapes.input_shapes
    assume(first != second)
    with pytest.raises(ValueError, match=r"same shape") as error:
        ll.difference_claim(np.zeros(first), np.zeros(second), below=1e-12)
    assert str(first) in str(error.value) and str(second) in str(error.value)


def test_four_by_four_against_four_is_refused():
    with pytest.raises(ValueError, match=r"\(4, 4\) and \(4,\)"):
        ll.difference_claim(np.zeros((4, 4)), np.zeros(4), below=1e-12)


@pytest.mark.parametrize(("a", "b", "claim"), [
    ([np.inf], [-np.inf], "largest difference inf, NOT below 1e-12"),
    ([np.inf], [3.0], "largest difference inf, NOT below 1e-12"),
    ([1e308, 0.0], [-1e308, 0.0], "largest difference inf, NOT below 1e-12"),   # |a − b| overflows
])
def test_an_infinity_against_anything_else_is_an_infinite_difference_and_warns_nothing(a, b, claim):
    assert ll.difference_claim(a, b, below=1e-12) == claim


@pytest.mark.parametrize(("a", "b", "where"), [
    ([np.inf], [np.inf], r"\+inf at index \(0,\)"),
    ([1.0, -np.inf], [1.0, -np.inf], r"-inf at index \(1,\)"),
    ([[0.0, 2.0], [np.inf, 1.0]], [[0.0, 2.0], [np.inf, 1.0]], r"\+inf at index \(1, 0\)"),
])
def test_the_same_infinity_in_both_is_refused_never_claimed_below_a_bound(a, b, where):
    """inf − inf is NaN: two overflows at one place say nothing of how close two computations are."""
    with pytest.raises(ValueError, match=rf"both hold {where}.*inf − inf is no number"):
        ll.difference_claim(a, b, below=1e-12)


@pytest.mark.parametrize(("a", "b", "name"), [([np.nan], [np.nan], "a"), ([1.0, 2.0], [1.0, np.nan], "b")])
def test_nan_is_refused_naming_the_array_and_where(a, b, name):
    with pytest.raises(ValueError, match=rf"{name} holds NaN at index"):
        ll.difference_claim(a, b, below=1e-12)


def test_a_bound_between_powers_of_ten_is_printed_as_given():
    assert ll.difference_claim([0.0], [1.7e-12], below=1.5e-12) == (
        "largest difference 1.7e-12, NOT below 1.5e-12")
    assert ll.difference_claim([0.0], [1.6e-12], below=1.7e-12) == "largest difference below 1.7e-12"
    assert ll.difference_claim([0.0], [1.71e-12], below=1.705e-12) == (
        "largest difference 1.71e-12, NOT below 1.705e-12")
