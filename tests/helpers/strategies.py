"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOATS = [np.float16, np.float32, np.float64]


def finite_arrays(dtype, shape):
    """Finite arrays of ``dtype`` over the whole range, huge magnitudes included."""
    info = np.finfo(dtype)
    elements = st.floats(-float(info.max), float(info.max), allow_nan=False, allow_infinity=False,
                         width=info.bits)
    return hnp.arrays(dtype, shape, elements=elements)
