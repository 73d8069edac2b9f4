"""flash_attention takes every shape the plain function takes, and sums float16 as it does.

Same shapes accepted, same result: Q, K, V whose batch dimensions differ (none on Q, size 1
here and there) broadcast as in ``scaled_dot_product_attention``; float16 inputs are summed
in float32 (ℓ and the output accumulator), so a long float16 sequence gives the plain
path's answer, never NaN.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from tests.helpers import examples

batch_dim = st.sampled_from([1, 2, 3])


@st.composite
def broadcasting_batches(draw):
    """Three batch shapes that broadcast together: each axis of each is the common size or 1,
    and each array may lack leading axes."""
    full = draw(st.lists(batch_dim, min_size=0, max_size=3))
    shapes = []
    for _ in range(3):
        kept = draw(st.integers(0, len(full)))                    # how many trailing axes it has
        shapes.append(tuple(n if draw(st.booleans()) else 1 for n in full[len(full) - kept:]))
    return shapes


@settings(max_examples=examples(80))
@given(batches=broadcasting_batches(), L=st.integers(1, 9), S=st.integers(1, 9), d=st.integers(1, 4),
       d_v=st.integers(1, 4), block=st.integers(1, 10), causal=st.booleans(), seed=st.integers(0, 2**16))
def test_flash_takes_every_shape_the_plain_function_takes(batches, L, S, d, d_v, block, causal, seed):
    rng = np.random.default_rng(seed)
    bq, bk, bv = batches
    q = rng.standard_normal((*bq, L, d))
    k = rng.standard_normal((*bk, S, d))
    v = rng.standard_normal((*bv, S, d_v))
    plain = ll.scaled_dot_product_attention(q, k, v, causal=causal)[0]
    tiled = ll.flash_attention(q, k, v, causal=causal, block_size=block)
    assert tiled.shape == plain.shape
    np.testing.assert_allclose(tiled, plain, rtol=0, atol=1e-12)


def test_flash_with_unbatched_queries_against_batched_keys():
    """The case of the report: Q (L, d) against K, V (B, H, S, d): numpy's broadcast error before."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(shape) for shape in ((5, 4), (2, 3, 7, 4), (2, 1, 7, 4)))
    np.testing.assert_allclose(ll.flash_attention(q, k, v, block_size=2),
                               ll.scaled_dot_product_attention(q, k, v)[0], atol=1e-12)


@settings(max_examples=examples(20))
@given(S=st.integers(2_000, 12_000), value=st.floats(100, 60_000), seed=st.integers(0, 2**16))
def test_flash_float16_sums_in_float32_like_the_plain_path(S, value, seed):
    """Many keys of large float16 values: a float16 sum of ℓ or of the weighted values overflows."""
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((3, 8)) * 0.01).astype(np.float16)
    k = (rng.standard_normal((S, 8)) * 0.01).astype(np.float16)
    v = np.full((S, 2), value, dtype=np.float16)
    v[::2, 1] = -value
    plain = ll.scaled_dot_product_attention(q, k, v)[0]
    tiled = ll.flash_attention(q, k, v, block_size=1024)
    assert tiled.dtype == np.float16
    assert np.isfinite(tiled).all() and np.isfinite(plain).all()
    np.testing.assert_allclose(tiled.astype(np.float64), plain.astype(np.float64), rtol=2e-2,
                               atol=value * 2e-2)


def test_flash_float16_long_sequence_equals_float64_reference():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((4, 16, 8)).astype(np.float16)
    k = rng.standard_normal((4, 20_000, 8)).astype(np.float16)
    v = (rng.standard_normal((4, 20_000, 8)) * 1e3).astype(np.float16)
    reference = ll.scaled_dot_product_attention(*(t.astype(np.float64) for t in (q, k, v)))[0]
    tiled = ll.flash_attention(q, k, v)
    assert np.isfinite(tiled).all()
    np.testing.assert_allclose(tiled, reference, rtol=0, atol=np.abs(reference).max() * 5e-3 + 0.5)
