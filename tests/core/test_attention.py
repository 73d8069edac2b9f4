"""The numpy reference against torch SDPA (float64) and against properties that must hold."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import lessons_lib as ll
from lessons_lib.core import attention
from lessons_lib.core.attention import attention_scores, attention_weights, scale_scores, weighted_values
from lessons_lib.lab.data import random_qkv
from tests.helpers import examples
from tests.helpers.strategies import FLOATS, finite_arrays

TOL = 1e-10


# ------------------------------------------------------------------ strategies
@st.composite
def qkv_cases(draw, max_batch_dims=2, same_length=False):
    """Random Q, K, V (float64) with batch dims that broadcast, and L ≠ S in general."""
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=max_batch_dims)))
    L = draw(st.integers(1, 9))
    S = L if same_length else draw(st.integers(1, 9))
    d_k, d_v = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # K may drop batch dims (broadcasting); scale of entries varies a lot
    k_batch = batch[draw(st.integers(0, len(batch))):]
    spread = draw(st.sampled_from([0.1, 1.0, 5.0]))
    q = rng.standard_normal((*batch, L, d_k)) * spread
    k = rng.standard_normal((*k_batch, S, d_k)) * spread
    v = rng.standard_normal((*k_batch, S, d_v))
    return q, k, v, rng


def torch_sdpa(q, k, v, mask=None, causal=False, scale=None):
    tq, tk, tv = (torch.as_tensor(a) for a in (q, k, v))
    batch = torch.broadcast_shapes(tq.shape[:-2], tk.shape[:-2])
    tq = tq.expand(*batch, *tq.shape[-2:])
    tk, tv = tk.expand(*batch, *tk.shape[-2:]), tv.expand(*batch, *tv.shape[-2:])
    tm = None if mask is None else torch.as_tensor(mask)
    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH]):
        return torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, attn_mask=tm, is_causal=causal, scale=scale).numpy()


# ------------------------------------------------------------------ against torch
@settings(max_examples=examples(150))
@given(qkv_cases())
def test_attention_matches_torch_sdpa(case):
    q, k, v, _ = case
    out, weights = ll.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out, torch_sdpa(q, k, v), rtol=0, atol=TOL)
    assert weights.shape == (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])


@settings(max_examples=examples(100))
@given(qkv_cases())
def test_causal_attention_matches_torch_sdpa(case):
    q, k, v, _ = case
    out, _ = ll.scaled_dot_product_attention(q, k, v, causal=True)
    np.testing.assert_allclose(out, torch_sdpa(q, k, v, causal=True), rtol=0, atol=TOL)


@settings(max_examples=examples(100))
@given(qkv_cases(), st.floats(0.05, 3.0))
def test_attention_with_a_bool_mask_and_a_scale_matches_torch_sdpa(case, scale):
    q, k, v, rng = case
    mask = rng.random((q.shape[-2], k.shape[-2])) < 0.6
    mask[:, 0] = True  # torch's math kernel gives NaN-free zeros too, but keep rows non-empty here
    out, weights = ll.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    np.testing.assert_allclose(out, torch_sdpa(q, k, v, mask=mask, scale=scale), rtol=0, atol=TOL)
    assert (weights[..., ~mask] == 0).all()


def test_fully_masked_row_gives_zeros_like_torch():
    q, k, v = ll.random_qkv(4, 3, seed=1)
    mask = np.ones((4, 4), dtype=bool)
    mask[2] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning either
        out, weights = ll.scaled_dot_product_attention(q, k, v, mask=mask)
    assert not np.isnan(out).any() and not np.isnan(weights).any()
    assert (out[2] == 0).all() and (weights[2] == 0).all()
    np.testing.assert_allclose(out, torch.nn.functional.scaled_dot_product_attention(
        *(torch.as_tensor(a) for a in (q, k, v)), attn_mask=torch.as_tensor(mask)).numpy(), atol=TOL)


# ------------------------------------------------------------------ properties
@settings(max_examples=examples(100))
@given(qkv_cases(), st.booleans())
def test_rows_sum_to_one_and_masked_weights_are_exactly_zero(case, causal):
    q, k, v, rng = case
    mask = rng.random((q.shape[-2], k.shape[-2])) < 0.5
    mask[:, -1] = True
    _, weights = ll.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    allowed = mask & ll.causal_mask(q.shape[-2], k.shape[-2]) if causal else mask
    assert (weights[..., ~allowed] == 0.0).all()
    sums = weights.sum(-1)
    has_any = allowed.any(-1)
    np.testing.assert_allclose(sums[..., has_any], 1.0, atol=1e-12)
    assert (sums[..., ~has_any] == 0).all()
    assert (weights >= 0).all()


@settings(max_examples=examples(100))
@given(qkv_cases(same_length=True), st.integers(0, 8))
def test_causal_attention_never_reads_a_later_token(case, cut):
    """Changing tokens after position t leaves outputs at positions ≤ t unchanged."""
    q, k, v, rng = case
    n = q.shape[-2]
    t = cut % n
    q2, k2, v2 = q.copy(), k.copy(), v.copy()
    for a in (q2, k2, v2):
        a[..., t + 1:, :] = rng.standard_normal(a[..., t + 1:, :].shape) * 10
    out, w = ll.scaled_dot_product_attention(q, k, v, causal=True)
    out2, w2 = ll.scaled_dot_product_attention(q2, k2, v2, causal=True)
    np.testing.assert_array_equal(out[..., :t + 1, :], out2[..., :t + 1, :])
    np.testing.assert_array_equal(w[..., :t + 1, :], w2[..., :t + 1, :])


@settings(max_examples=examples(100))
@given(qkv_cases(same_length=True))
def test_permutation_equivariance(case):
    """Without a mask, permuting the tokens permutes the output rows the same way."""
    q, k, v, rng = case
    perm = rng.permutation(q.shape[-2])
    out, w = ll.scaled_dot_product_attention(q, k, v)
    out_p, w_p = ll.scaled_dot_product_attention(q[..., perm, :], k[..., perm, :], v[..., perm, :])
    np.testing.assert_allclose(out_p, out[..., perm, :], atol=1e-12)
    np.testing.assert_allclose(w_p, w[..., perm, :][..., perm], atol=1e-12)


@settings(max_examples=examples(100))
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=12), st.floats(-1e3, 1e3))
def test_softmax_shift_invariance(row, c):
    """Adding a constant to every score changes nothing."""
    x = np.array(row)
    np.testing.assert_allclose(ll.softmax(x + c), ll.softmax(x), atol=1e-12)


def test_softmax_is_stable_for_huge_logits():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = ll.softmax(np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]]))
    np.testing.assert_allclose(p, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])


def test_softmax_all_minus_inf_row_is_zero():
    p = ll.softmax(np.array([[-np.inf, -np.inf], [0.0, -np.inf]]))
    np.testing.assert_array_equal(p, [[0, 0], [1, 0]])


def test_softmax_normalises_along_the_axis_it_is_given():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(ll.softmax(x, axis=0).sum(0), 1.0)
    np.testing.assert_allclose(ll.softmax(x).sum(1), 1.0)
    with pytest.raises(ValueError, match="axis=2"):
        ll.softmax(x, axis=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_step_keeps_the_float_dtype_it_is_given(dtype):
    q, k, v = ll.random_qkv(6, 4, seed=3, dtype=dtype)
    out, w = ll.scaled_dot_product_attention(q, k, v, causal=True)
    assert out.dtype == dtype and w.dtype == dtype
    assert ll.softmax(q).dtype == dtype
    assert scale_scores(attention_scores(q, k), d_k=4).dtype == dtype
    assert attention_weights(attention_scores(q, k), d_k=4).dtype == dtype
    assert ll.flash_attention(q, k, v).dtype == dtype
    x = np.ones((3, 4), dtype=dtype)
    assert all(t.dtype == dtype for t in ll.project_qkv(x, *(np.eye(4, dtype=dtype),) * 3))
    w_o = np.eye(4, dtype=dtype)
    assert ll.multi_head_attention(x, w_o, w_o, w_o, w_o, n_heads=2)[0].dtype == dtype


def test_float32_close_to_float64():
    q, k, v = ll.random_qkv(16, 8, seed=4)
    out64, _ = ll.scaled_dot_product_attention(q, k, v)
    out32, _ = ll.scaled_dot_product_attention(*(a.astype(np.float32) for a in (q, k, v)))
    np.testing.assert_allclose(out32, out64, atol=1e-5)


# ------------------------------------------------------------------ the four steps compose
@settings(max_examples=examples(50))
@given(qkv_cases(), st.booleans())
def test_attention_is_the_composition_of_the_four_steps(case, causal):
    q, k, v, _ = case
    d_k = q.shape[-1]
    scores = attention_scores(q, k)
    np.testing.assert_allclose(scores, q @ np.swapaxes(k, -1, -2))
    weights = attention_weights(scores, d_k=d_k, causal=causal)
    np.testing.assert_allclose(weights, ll.softmax(np.where(
        ll.causal_mask(q.shape[-2], k.shape[-2]) if causal else True,
        scale_scores(scores, d_k=d_k), -np.inf)), atol=1e-15)
    out, w = ll.scaled_dot_product_attention(q, k, v, causal=causal)
    np.testing.assert_allclose(weights, w, atol=1e-15)
    np.testing.assert_allclose(weighted_values(weights, v), out, atol=1e-15)


def test_project_qkv_matches_matrix_products():
    x = ll.embed_tokens(ll.tokenize("The cat sat on the mat."), d_model=8)
    w_q, w_k, w_v = ll.projection_weights(8, 4, seed=1, d_v=5)
    q, k, v = ll.project_qkv(x, w_q, w_k, w_v)
    np.testing.assert_allclose(q, x @ w_q)
    assert q.shape == (7, 4) and k.shape == (7, 4) and v.shape == (7, 5)


def test_scale_scores_divides_by_sqrt_dk():
    s = np.array([[4.0, 8.0]])
    np.testing.assert_allclose(scale_scores(s, d_k=16), [[1.0, 2.0]])
    np.testing.assert_allclose(scale_scores(s, scale=0.5), [[2.0, 4.0]])


# --------------------------------------------------------------------------- softmax with an "off" slot
@settings(max_examples=examples(60))
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 7)),
              elements=st.floats(-30, 30, allow_nan=False)))
def test_softmax_off_is_softmax_with_a_zero_score_slot_dropped(scores):
    """softmax_off(s)_j = exp(s_j) / (1 + Σ_i exp(s_i)): rows sum to less than 1, the rest is 'nothing'."""
    from lessons_lib import softmax_off

    w = softmax_off(scores)
    expected = np.exp(scores) / (1 + np.exp(scores).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(w, expected, rtol=1e-12, atol=1e-300)
    assert (w.sum(axis=-1) < 1).all() and (w >= 0).all()


# ====== finite input never gives NaN or a warning
@st.composite
def _qkv_any_magnitude(draw):
    dtype = draw(st.sampled_from(FLOATS))
    L, S, d = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    q = draw(finite_arrays(dtype, (L, d)))
    k = draw(finite_arrays(dtype, (S, d)))
    v = draw(finite_arrays(dtype, (S, d)))
    return q, k, v


@pytest.mark.usefixtures("warnings_are_errors")
@settings(max_examples=examples(150))
@given(_qkv_any_magnitude(), st.booleans())
def test_finite_input_gives_finite_output_or_a_clear_overflow_error(qkv, causal):
    q, k, v = qkv
    try:
        out, weights = ll.scaled_dot_product_attention(q, k, v, causal=causal)
    except ValueError as exc:
        assert "overflow" in str(exc) and str(q.dtype) in str(exc)
        return
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    assert out.dtype == q.dtype
    np.testing.assert_allclose(weights.sum(axis=-1), 1, rtol=1e-2)


@pytest.mark.usefixtures("warnings_are_errors")
@settings(max_examples=examples(60))
@given(_qkv_any_magnitude(), st.booleans())
def test_finite_input_gives_finite_output_or_a_clear_overflow_error_in_torch(qkv, causal):
    q, k, v = qkv
    try:
        result = ll.sdpa_attention(q, k, v, causal=causal, device="cpu")
    except ValueError as exc:
        assert "overflow" in str(exc)
        return
    assert np.isfinite(result.output).all()


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("factor, dtype", [(1e200, np.float64), (1e20, np.float32), (300, np.float16)])
def test_overflowing_scores_raise_naming_the_dtype_and_its_largest_number(factor, dtype):
    q, k, v = (a.astype(dtype) for a in random_qkv(4, 8, seed=1))
    with pytest.raises(ValueError) as info:
        ll.scaled_dot_product_attention(q * dtype(factor), k * dtype(factor), v)
    limit = f"{float(np.finfo(dtype).max):.4g}"
    assert f"overflow {np.dtype(dtype).name}" in str(info.value) and limit in str(info.value)
    with pytest.raises(ValueError, match="overflow"):
        attention.attention_scores(q * dtype(factor), k * dtype(factor))


@pytest.mark.usefixtures("warnings_are_errors")
@settings(max_examples=examples(150))
@given(st.sampled_from(FLOATS).flatmap(lambda dt: finite_arrays(dt, st.tuples(st.integers(1, 3),
                                                                                st.integers(1, 5)))))
def test_softmax_of_finite_input_is_a_distribution_without_warnings(x):
    p = ll.softmax(x)
    assert np.isfinite(p).all() and (p >= 0).all()
    np.testing.assert_allclose(p.astype(np.float64).sum(axis=-1), 1, rtol=1e-2)


@pytest.mark.usefixtures("warnings_are_errors")
def test_softmax_of_the_widest_row_sums_to_one():
    np.testing.assert_array_equal(ll.softmax([[1e308, -1e308]]), [[1.0, 0.0]])
    np.testing.assert_array_equal(ll.softmax(np.array([[6e4, -6e4]], np.float16)), [[1.0, 0.0]])


@pytest.mark.usefixtures("warnings_are_errors")
def test_many_float16_keys_do_not_overflow_the_row_sum():
    p = ll.softmax(np.zeros((1, 70_000), np.float16))
    assert p.dtype == np.float16 and np.isclose(p.astype(np.float64).sum(), 1, rtol=1e-2)


@pytest.mark.usefixtures("warnings_are_errors")
@settings(max_examples=examples(80))
@given(st.sampled_from(FLOATS).flatmap(lambda dt: st.tuples(
    finite_arrays(dt, (3, 4)), finite_arrays(dt, (4, 2)))), st.floats(0.01, 1e6))
def test_each_step_gives_finite_output_or_a_clear_error(arrays, scale):
    scores, v = arrays
    for step in (lambda: attention.scale_scores(scores, scale=scale),
                 lambda: attention.attention_weights(scores, scale=scale),
                 lambda: attention.weighted_values(np.abs(scores), v)):
        try:
            out = step()
        except ValueError as exc:
            assert "overflow" in str(exc)
            continue
        assert np.isfinite(out).all()


@pytest.mark.usefixtures("warnings_are_errors")
def test_scaling_never_turns_a_finite_score_into_a_masked_one():
    with pytest.raises(ValueError, match=r"scores × 10 overflows float64.*although the scores are finite"):
        attention.attention_weights(np.array([[-1e308, -1e308]]), scale=10.0)
