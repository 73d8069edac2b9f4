"""The tiled path (lessons_lib.core.flash): online softmax, flash_attention, its tile-by-tile replay.

flash_attention must equal the naive reference for any L, S and block size (≤ 1e-12 in float64,
≤ 1e-5 relative in float32), take every shape the plain function takes (batch dimensions that
broadcast, float16 summed in float32), never hold the L × S matrix, skip tiles above the diagonal
when causal, and turn finite input into a correct result or a clear overflow error: never NaN,
never a warning.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.core import flash
from tests.helpers import examples


def naive(q, k, v, causal=False, scale=None):
    return ll.scaled_dot_product_attention(q, k, v, causal=causal, scale=scale)[0]


@pytest.fixture(autouse=True)
def warnings_are_errors():
    """Finite input never gives a RuntimeWarning in this module's code paths."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ------------------------------------------------------------------ flash_attention = naive
sizes = st.integers(1, 70)


@settings(max_examples=examples(80))
@given(L=sizes, S=sizes, d=st.integers(1, 9), d_v=st.integers(1, 6), block=st.integers(1, 80),
       causal=st.booleans(), batched=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_flash_equals_naive_float64(L, S, d, d_v, block, causal, batched, seed):
    """Any L, S and block size, including blocks that divide neither L nor S, and blocks > L, S."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((2, L, d) if batched else (L, d)) * 3
    k, v = rng.standard_normal((S, d)) * 3, rng.standard_normal((S, d_v))
    tiled = ll.flash_attention(q, k, v, causal=causal, block_size=block)
    assert tiled.dtype == np.float64 and tiled.shape == (*q.shape[:-1], d_v)
    np.testing.assert_allclose(tiled, naive(q, k, v, causal), rtol=0, atol=1e-12)


@settings(max_examples=examples(60))
@given(L=sizes, S=sizes, d=st.integers(1, 64), block=st.integers(1, 80), causal=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_flash_float32_within_1e5_relative_of_float64_truth(L, S, d, block, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, d)) for n in (L, S, S))
    truth = naive(q, k, v, causal)
    tiled = ll.flash_attention(*(a.astype(np.float32) for a in (q, k, v)), causal=causal, block_size=block)
    assert tiled.dtype == np.float32
    np.testing.assert_allclose(tiled, truth, rtol=1e-5, atol=1e-5 * np.abs(truth).max())


@pytest.mark.parametrize("L,S", [(1, 1), (1, 37), (37, 1), (1, 5), (5, 1)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [1, 4, 64])
def test_a_single_row_or_column_equals_naive(L, S, causal, block):
    rng = np.random.default_rng(L * 100 + S)
    q, k, v = rng.standard_normal((L, 8)), rng.standard_normal((S, 8)), rng.standard_normal((S, 3))
    np.testing.assert_allclose(ll.flash_attention(q, k, v, causal=causal, block_size=block),
                               naive(q, k, v, causal), atol=1e-12)


@pytest.mark.parametrize("L,S", [(9, 4), (4, 9), (13, 13), (1, 6), (6, 1)])
def test_causal_with_l_not_s_is_top_left_aligned_like_torch(L, S):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((2, L, 6)), rng.standard_normal((2, S, 6)), rng.standard_normal((2, S, 5))
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.as_tensor(a) for a in (q, k, v)), is_causal=True).numpy()
    np.testing.assert_allclose(ll.flash_attention(q, k, v, causal=True, block_size=3), expected, atol=1e-12)


@settings(max_examples=examples(30))
@given(L=sizes, S=sizes, block=st.integers(1, 32), causal=st.booleans(), seed=st.integers(0, 10_000),
       scale=st.floats(0.01, 4))
def test_flash_matches_torch_sdpa_float64(L, S, block, causal, seed, scale):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((1, 2, n, 8)) for n in (L, S, S))
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.as_tensor(a) for a in (q, k, v)), is_causal=causal, scale=scale).numpy()
    tiled = ll.flash_attention(q, k, v, causal=causal, scale=scale, block_size=block)
    np.testing.assert_allclose(tiled, expected, atol=1e-12)


def test_default_block_size_keeps_one_call_near_a_million_scores(monkeypatch):
    assert flash.default_block_size() == 1024          # one head; 64 was about 5× slower than naive
    assert flash.default_block_size(16) == 256 and flash.default_block_size(8) == 256
    assert flash.default_block_size(10**6) == 16        # never below 16
    for heads in (1, 2, 3, 16, 100):
        b = flash.default_block_size(heads)
        assert heads * b * b <= flash.TILE_SCORES or b == 16
    with pytest.raises(ValueError, match="batch_size"):
        flash.default_block_size(0)
    q, k, v = ll.random_qkv(300, 4, seed=0)
    shapes = _tile_shapes(monkeypatch, np.stack([q] * 16), k, v)   # 16 heads: tiles of 256 at most
    assert shapes == [(16, 256, 256), (16, 256, 44), (16, 44, 256), (16, 44, 44)]


# ------------------------------------------------------------------ every shape the plain function takes
# Q, K, V whose batch dimensions differ (none on Q, size 1 here and there) broadcast as in
# scaled_dot_product_attention; float16 is summed in float32 (ℓ and the output), never NaN.
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


# ------------------------------------------------------------------ never an L × S matrix
def _tile_shapes(monkeypatch, *args, **kwargs):
    """Shapes of every score tile flash_attention computes (each is checked for overflow once)."""
    from lessons_lib._checks import check_scores_finite as real

    shapes = []

    def spy(tile):
        shapes.append(tile.shape)
        return real(tile)
    monkeypatch.setattr(flash, "check_scores_finite", spy)
    ll.flash_attention(*args, **kwargs)
    return shapes


def test_every_tile_is_at_most_block_by_block(monkeypatch):
    q, k, v = ll.random_qkv(100, 8, seed=7)
    shapes = _tile_shapes(monkeypatch, q, k, v, block_size=16)
    assert len(shapes) == 7 * 7  # ceil(100 / 16) query blocks × key blocks
    assert max(s[-2] for s in shapes) == 16 and max(s[-1] for s in shapes) == 16
    assert (4, 4) in shapes     # the last block of rows against the last block of keys: 100 = 6·16 + 4


def test_causal_skips_tiles_above_the_diagonal(monkeypatch):
    q, k, v = ll.random_qkv(64, 8, seed=1)
    full = _tile_shapes(monkeypatch, q, k, v, block_size=8)
    causal = _tile_shapes(monkeypatch, q, k, v, block_size=8, causal=True)
    assert len(full) == 64 and len(causal) == 8 * 9 // 2  # only tiles on or below the diagonal


def test_peak_memory_stays_far_below_the_score_matrix():
    """N = 2048, float64: the naive score matrix alone is 32 MB; flash with block 128 stays under 2 MB."""
    rng = np.random.default_rng(0)
    n = 2048
    q, k, v = (rng.standard_normal((n, 16)) for _ in range(3))
    tracemalloc.start()
    try:
        ll.flash_attention(q, k, v, block_size=128)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    score_matrix = n * n * 8
    assert peak < score_matrix / 16, f"peak {peak / 2**20:.1f} MB"


# ------------------------------------------------------------------ overflow: an error, never NaN
@pytest.mark.parametrize("dtype,factor", [(np.float64, 1e200), (np.float32, 1e20), (np.float16, 300.0)])
@pytest.mark.parametrize("causal", [False, True])
def test_overflowing_scores_raise_a_clear_error(dtype, factor, causal):
    q, k, v = ll.random_qkv(6, 4, seed=0)
    q, k, v = (q * factor).astype(dtype), (k * factor).astype(dtype), v.astype(dtype)
    with pytest.raises(ValueError, match=f"overflow {np.dtype(dtype).name}"):
        ll.flash_attention(q, k, v, causal=causal, block_size=4)


@settings(max_examples=examples(60))
@given(exponent=st.floats(0, 300), d=st.integers(1, 8), L=st.integers(1, 12), S=st.integers(1, 12),
       block=st.integers(1, 8), causal=st.booleans(), seed=st.integers(0, 10_000),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_finite_input_gives_finite_output_or_value_error(exponent, d, L, S, block, causal, seed, dtype):
    rng = np.random.default_rng(seed)
    big = min(10.0 ** exponent, float(np.finfo(dtype).max) / 16)
    q = (rng.standard_normal((L, d)) * big).astype(dtype)
    k = (rng.standard_normal((S, d)) * big).astype(dtype)
    v = rng.standard_normal((S, 3)).astype(dtype)
    try:
        out = ll.flash_attention(q, k, v, causal=causal, block_size=block)
    except ValueError as exc:
        assert "overflow" in str(exc)
        return
    assert np.isfinite(out).all()


def test_scores_near_the_dtype_limit_give_the_right_answer():
    """Huge but finite scores of both signs: the running max keeps every exp ≤ 1."""
    q = np.array([[1.0], [-1.0]])
    k = np.array([[1e307], [-1e307], [0.0]])
    v = np.array([[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(ll.flash_attention(q, k, v, scale=1.0, block_size=1), [[1.0], [2.0]])


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("block,err,match", [(0, ValueError, "at least 1"), (2.5, TypeError, "whole number"),
                                             (True, TypeError, "whole number")])
def test_a_bad_block_size_is_explained(block, err, match):
    q, k, v = ll.random_qkv(4, 2, seed=0)
    with pytest.raises(err, match=match):
        ll.flash_attention(q, k, v, block_size=block)


def test_causal_that_is_not_a_bool_is_refused():
    q, k, v = ll.random_qkv(4, 2, seed=0)
    with pytest.raises(TypeError, match="causal must be True or False"):
        ll.flash_attention(q, k, v, causal="no")


def test_a_shape_mismatch_is_explained():
    q, k, v = ll.random_qkv(4, 2, seed=0)
    with pytest.raises(ValueError, match="K has d_k=3 but Q has d_k=2"):
        ll.flash_attention(q, np.ones((4, 3)), v)


# ------------------------------------------------------------------ the online softmax on one row
@settings(max_examples=examples(80))
@given(n=st.integers(1, 60), cuts=st.lists(st.integers(0, 60), max_size=8), spread=st.floats(0.1, 1e4),
       n_masked=st.integers(0, 5), seed=st.integers(0, 10_000))
def test_online_softmax_equals_softmax_for_any_chunking(n, cuts, spread, n_masked, seed):
    rng = np.random.default_rng(seed)
    row = rng.standard_normal(n) * spread
    row[rng.permutation(n)[:min(n_masked, n - 1)]] = -np.inf   # masked scores, at least one left
    chunks = np.split(row, sorted(c for c in cuts if c <= n))   # empty chunks allowed too
    result = ll.online_softmax(iter(chunks))              # a one-pass stream
    np.testing.assert_allclose(result.weights, ll.softmax(row), rtol=1e-12, atol=1e-300)
    assert result.max == row.max()
    np.testing.assert_allclose(result.sum, np.exp(row - row.max()).sum(), rtol=1e-12)
    assert len(result.maxes) == len(chunks) and (result.maxes[1:] >= result.maxes[:-1]).all()


def test_online_softmax_update_rescales_the_old_sum_by_exp_old_minus_new():
    m, ell = flash.online_softmax_update(-np.inf, 0.0, [0.0, 1.0])
    assert (m, ell) == (1.0, pytest.approx(np.exp(-1) + 1))
    m2, ell2 = flash.online_softmax_update(m, ell, [3.0])        # the maximum grows from 1 to 3
    assert m2 == 3.0 and ell2 == pytest.approx(ell * np.exp(1 - 3) + 1)
    m3, ell3 = flash.online_softmax_update(m2, ell2, [2.0])      # it doesn't: nothing to rescale
    assert m3 == 3.0 and ell3 == pytest.approx(ell2 + np.exp(2 - 3))


def test_online_softmax_update_of_extreme_finite_scores_has_no_warning():
    assert flash.online_softmax_update(-np.inf, 0.0, [1e308, -1e308]) == (1e308, 1.0)
    assert flash.online_softmax_update(-1e308, 1.0, [1e308]) == (1e308, 1.0)


def test_online_softmax_update_on_rows_equals_one_row_at_a_time():
    rng = np.random.default_rng(8)
    m, ell = np.array([-np.inf, 0.5, 3.0]), np.array([0.0, 2.0, 1.5])
    chunk = rng.standard_normal((3, 5)) * 2
    chunk[0, :] = -np.inf                                          # a row masked so far: stays empty
    m_new, ell_new = flash.online_softmax_update(m, ell, chunk)
    assert m_new.shape == ell_new.shape == (3,) and (m == [-np.inf, 0.5, 3.0]).all()  # inputs untouched
    for i in range(3):
        assert (m_new[i], ell_new[i]) == flash.online_softmax_update(m[i], ell[i], chunk[i])
    assert (m_new[0], ell_new[0]) == (-np.inf, 0.0)


def test_online_softmax_of_extreme_finite_scores_has_no_warning():
    result = flash.online_softmax([np.array([1e308]), np.array([-1e308, 0.0])])
    np.testing.assert_array_equal(result.weights, [1.0, 0.0, 0.0])


def test_online_softmax_of_all_masked_row_is_zeros():
    result = flash.online_softmax([np.array([-np.inf, -np.inf]), np.array([-np.inf])])
    assert result.max == -np.inf and result.sum == 0 and (result.weights == 0).all()


@pytest.mark.parametrize("args,err,match", [
    ((np.inf, 0.0, [1.0]), ValueError, "finite or -inf"),
    ((0.0, -1.0, [1.0]), ValueError, "ell"),
    ((-np.inf, 2.0, [1.0]), ValueError, "ell must be 0"),
    (("a", 0.0, [1.0]), TypeError, "m must be a number"),
    ((0.0, 1.0, [[1.0]]), ValueError, "1-D"),
    ((0.0, 1.0, [np.nan]), ValueError, "nan"),
    ((np.zeros(2), np.ones(2), np.ones((3, 4))), ValueError, r"shape \(2, c\)"),
    ((np.zeros(2), np.ones(3), np.ones((2, 4))), ValueError, "same shape"),
])
def test_online_softmax_update_explains_bad_input(args, err, match):
    with pytest.raises(err, match=match):
        flash.online_softmax_update(*args)


@pytest.mark.parametrize("chunks,match", [([], "empty"), (np.ones(4), "list"), (3, "list")])
def test_online_softmax_explains_bad_chunks(chunks, match):
    with pytest.raises((TypeError, ValueError), match=match):
        flash.online_softmax(chunks)


# ------------------------------------------------------------------ the tile-by-tile replay
@pytest.mark.parametrize("causal", [False, True])
def test_steps_converge_to_the_naive_output(causal):
    q, k, v = ll.random_qkv(10, 4, seed=4)
    steps = flash.flash_attention_steps(q, k, v, causal=causal, block_size=3, rows=range(6, 9))
    tiles = [range(0, 3), range(3, 6), range(6, 9), range(9, 10)]
    assert [s.keys for s in steps] == (tiles[:3] if causal else tiles)  # causal: key 9 is in no row's past
    np.testing.assert_allclose(steps[-1].output, naive(q, k, v, causal)[6:9], atol=1e-14)
    maxes = np.array([s.max for s in steps])
    assert (np.diff(maxes, axis=0) >= 0).all()                 # the running maximum never falls


def test_steps_explain_bad_rows_and_batches():
    q, k, v = ll.random_qkv(5, 4, seed=0)
    with pytest.raises(ValueError, match="rows must be a range"):
        flash.flash_attention_steps(q, k, v, rows=range(3, 9))
    with pytest.raises(ValueError, match="2-D"):
        flash.flash_attention_steps(q[None], k, v)
