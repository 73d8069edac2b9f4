"""The GQA path of SDPA (notebook 12): ``sdpa_attention(..., enable_gqa=True)`` is the numpy reference on the
key/value heads repeated for their groups, on the CPU, and on CUDA when there is a GPU (those tests skip
without one); ``torch_attention_with_weights`` gives the same weights; shapes that cannot be shared are
refused in the course's words."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from tests.helpers import examples

torch = pytest.importorskip("torch")
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


def _qkv(seed, lead=(2,), n_heads=6, n_kv=2, L=5, S=7, d=8, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((*lead, n_heads, L, d)).astype(dtype),
            rng.standard_normal((*lead, n_kv, S, d)).astype(dtype),
            rng.standard_normal((*lead, n_kv, S, d - 2)).astype(dtype))


def _reference(q, k, v, **kw):
    n_heads = q.shape[-3]
    return ll.scaled_dot_product_attention(q, ll.repeat_kv(k, n_heads), ll.repeat_kv(v, n_heads), **kw)


@settings(max_examples=examples(30), deadline=None)
@given(n_kv=st.sampled_from([1, 2, 3]), group=st.sampled_from([1, 2, 4]),
       lead=st.sampled_from([(), (1,), (2,)]), L=st.integers(1, 6), extra=st.integers(0, 4),
       masked=st.sampled_from(["none", "causal", "bottom right"]),
       seed=st.integers(0, 2**16))
def test_sdpa_with_shared_key_value_heads_is_the_numpy_reference(n_kv, group, lead, L, extra, masked, seed):
    q, k, v = _qkv(seed, lead, n_kv * group, n_kv, L, L + extra)
    kw = {"causal": True} if masked == "causal" else {}
    if masked == "bottom right":
        kw = {"mask": ll.bottom_right_causal_mask(L, L + extra)}
    result = ll.sdpa_attention(q, k, v, device="cpu", enable_gqa=True, **kw)
    expected, _ = _reference(q, k, v, **kw)
    assert result.output.shape == expected.shape
    assert np.abs(result.output - expected).max() < 1e-12


def test_gqa_with_rope_float32_and_forced_math_kernel():
    q, k, v = _qkv(1, L=6, S=6)
    rotated = ll.sdpa_attention(q, k, v, causal=True, rope=True, enable_gqa=True, kernel="math", device="cpu")
    expected, _ = _reference(ll.rope(q, np.arange(6)), ll.rope(k, np.arange(6)), v, causal=True)
    assert rotated.kernel == "math" and np.abs(rotated.output - expected).max() < 1e-12
    q32, k32, v32 = (a.astype(np.float32) for a in _qkv(2))
    out = ll.sdpa_attention(q32, k32, v32, enable_gqa=True, device="cpu").output
    assert out.dtype == np.float32 and np.abs(out - _reference(q32, k32, v32)[0]).max() < 1e-5


def test_tensors_keep_their_graph_and_the_weights_variant_agrees():
    q, k, v = (torch.tensor(a, requires_grad=True) for a in _qkv(3))
    out = ll.sdpa_attention(q, k, v, causal=True, enable_gqa=True, device="cpu").output
    out.sum().backward()
    assert k.grad is not None and k.grad.shape == k.shape
    plain, weights = ll.torch_attention_with_weights(*_qkv(3), causal=True, enable_gqa=True, device="cpu")
    expected, expected_weights = _reference(*_qkv(3), causal=True)
    assert np.abs(plain - expected).max() < 1e-12 and np.abs(weights - expected_weights).max() < 1e-12
    assert weights.shape == (2, 6, 5, 7)


@pytest.mark.parametrize("shapes, words", [
    (((6, 5, 8), (4, 7, 8), (4, 7, 6)), "n_heads = 6 is not a multiple of n_kv_heads = 4"),
    (((5, 8), (7, 8), (7, 6)), "so Q needs a head axis"),
    (((6, 5, 8), (2, 7, 8), (3, 7, 6)), "K has 2 key/value heads but V has 3"),
    (((6, 5, 8), (2, 7, 4), (2, 7, 6)), "K has d_k=4 but Q has d_k=8"),
])
def test_shapes_that_cannot_share_heads_are_refused_in_the_courses_words(shapes, words):
    arrays = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError) as error:
        ll.sdpa_attention(*arrays, enable_gqa=True, device="cpu")
    assert words in str(error.value)
    with pytest.raises(ValueError, match="K has 6 tokens but V has 7|do not broadcast"):
        ll.sdpa_attention(np.ones((6, 5, 8)), np.ones((2, 6, 8)), np.ones((2, 7, 8)), enable_gqa=True)
    with pytest.raises(TypeError, match="enable_gqa must be True or False"):
        ll.sdpa_attention(*_qkv(0), enable_gqa="yes")


def test_without_enable_gqa_fewer_key_heads_are_refused_as_before():
    with pytest.raises(ValueError, match="do not broadcast"):
        ll.sdpa_attention(*_qkv(0), device="cpu")


@CUDA
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_on_cuda_gqa_agrees_with_the_numpy_reference(dtype):
    q, k, v = _qkv(4, L=64, S=64, d=64)
    result = ll.sdpa_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                               causal=True, enable_gqa=True, device="cuda", dtype=dtype)
    expected, _ = _reference(q, k, v, causal=True)
    assert result.device.startswith("cuda")
    assert np.abs(result.output - expected).max() < (1e-5 if dtype == "float32" else 3e-2)


@CUDA
def test_on_cuda_the_decode_step_reads_the_shared_cache():
    q, k, v = _qkv(5, L=1, S=33, d=64)
    result = ll.sdpa_attention(q, k, v, enable_gqa=True, device="cuda")
    expected, _ = _reference(q, k, v)
    assert np.abs(result.output - expected).max() < 1e-12
