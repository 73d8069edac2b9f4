"""The torch path: SDPA on CPU (or CUDA), its kernel report, and the weights-returning variant."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.core import backends
from lessons_lib.lab.data import random_qkv
from tests.helpers import REPO, examples


@pytest.mark.subprocess
def test_import_lessons_lib_does_not_import_torch(fresh_imports):
    assert not {"torch", "matplotlib"} & fresh_imports["import lessons_lib"]


def test_missing_torch_is_explained(monkeypatch):
    monkeypatch.setattr(backends, "torch_available", lambda: False)
    with pytest.raises(ModuleNotFoundError, match=r"needs PyTorch") as info:
        backends.sdpa_attention(*ll.random_qkv(3, 2))
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in str(info.value)


def test_the_cpu_install_command_pins_the_course_torch():
    pins = (REPO / "requirements.txt").read_text(encoding="utf-8")
    version = re.search(r"^torch==([\w.]+)", pins, flags=re.MULTILINE)[1]
    assert backends.TORCH_CPU_INSTALL == (
        f"pip install torch=={version} --index-url https://download.pytorch.org/whl/cpu")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sdpa_matches_numpy_and_reports_device_and_kernel(causal, dtype):
    q, k, v = ll.random_qkv(9, 8, seed=1, dtype=dtype)
    result = ll.sdpa_attention(q, k, v, causal=causal)
    ref, _ = ll.scaled_dot_product_attention(q, k, v, causal=causal)
    assert isinstance(result.output, np.ndarray) and result.output.dtype == dtype
    np.testing.assert_allclose(result.output, ref, atol=1e-10 if dtype == np.float64 else 1e-5)
    expected_device = "cuda" if torch.cuda.is_available() else "cpu"
    assert result.device.startswith(expected_device)
    assert result.kernel in {"flash", "memory-efficient", "cuDNN", "math"}
    output, device, kernel = result  # unpacks like a tuple
    assert device == result.device


def test_cpu_default_kernel_is_flash_for_float32():
    q, k, v = ll.random_qkv(64, 16, seed=2, dtype=np.float32)
    assert ll.sdpa_attention(q, k, v, device="cpu").kernel == "flash"


@pytest.mark.parametrize("kernel", ["math", "flash"])
def test_a_forced_kernel_is_the_one_that_runs(kernel):
    q, k, v = ll.random_qkv(16, 8, seed=3, dtype=np.float32)
    result = ll.sdpa_attention(q, k, v, device="cpu", kernel=kernel)
    assert result.kernel == kernel
    np.testing.assert_allclose(result.output, ll.scaled_dot_product_attention(q, k, v)[0], atol=1e-5)
    with pytest.raises(ValueError, match=r"kernel must be one of"):
        ll.sdpa_attention(q, k, v, kernel="turbo")


def test_tensors_in_give_tensors_out_with_the_numpy_result():
    q, k, v = (torch.as_tensor(a) for a in ll.random_qkv(5, 4, seed=4))
    mask = ll.causal_mask(5) & np.array([True, True, True, False, True])
    result = ll.sdpa_attention(q, k, v, mask=torch.as_tensor(mask), causal=True)
    assert isinstance(result.output, torch.Tensor)
    ref, ref_w = ll.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy(), mask=mask)
    np.testing.assert_allclose(result.output.cpu().numpy(), ref, atol=1e-10)
    out, weights = ll.torch_attention_with_weights(q, k, v, mask=mask)
    np.testing.assert_allclose(weights.cpu().numpy(), ref_w, atol=1e-12)


def test_weights_variant_handles_fully_masked_rows():
    q, k, v = ll.random_qkv(4, 3, seed=5)
    mask = np.ones((4, 4), dtype=bool)
    mask[1] = False
    out, weights = ll.torch_attention_with_weights(q, k, v, mask=mask)
    assert not np.isnan(out).any() and (weights[1] == 0).all() and (out[1] == 0).all()
    sdpa = ll.sdpa_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(sdpa.output, out, atol=1e-10)


def test_backend_checks_inputs_like_numpy():
    q, k, v = ll.random_qkv(4, 8)
    with pytest.raises(ValueError, match=r"K has d_k=2 but Q has d_k=8"):
        ll.sdpa_attention(q, np.ones((4, 2)), v)
    with pytest.raises(TypeError, match=r"mask must be boolean"):
        ll.sdpa_attention(q, k, v, mask=np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"mask has shape \(2, 2\)"):
        ll.torch_attention_with_weights(q, k, v, mask=np.ones((2, 2), dtype=bool))


@settings(max_examples=examples(40))
@given(st.lists(st.integers(1, 3), max_size=3), st.integers(1, 7), st.integers(1, 7), st.booleans(),
       st.booleans(), st.integers(0, 10_000))
def test_sdpa_matches_numpy_over_batch_shapes_and_masks(batch, L, S, causal, use_mask, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((*batch, n, 4)) for n in (L, S, S))
    mask = rng.random((*batch, L, S)) < 0.7 if use_mask else None
    result = ll.sdpa_attention(q, k, v, mask=mask, causal=causal)
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    assert result.output.shape == ref.shape
    np.testing.assert_allclose(result.output, ref, atol=1e-10)


# ====== the torch path takes every mask the numpy path takes
@st.composite
def _batch_and_mask(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    L, S = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    full = (*batch, L, S)
    kind = draw(st.sampled_from(["none", "scalar", "keys", "suffix", "list"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "none":
        mask = None
    elif kind == "scalar":
        mask = draw(st.booleans())
    elif kind == "keys":
        mask = rng.random(S) < 0.6
    else:
        n = draw(st.integers(2, len(full)))
        shape = tuple(1 if draw(st.booleans()) and i < n - 2 else s for i, s in enumerate(full[-n:]))
        mask = rng.random(shape) < 0.6
        if kind == "list":
            mask = mask.tolist()
    return batch, L, S, mask


@pytest.mark.usefixtures("warnings_are_errors")
@settings(max_examples=examples(120), suppress_health_check=[HealthCheck.too_slow])
@given(_batch_and_mask(), st.booleans(), st.integers(0, 10_000))
def test_every_mask_the_numpy_path_takes_gives_the_same_result_in_torch(case, causal, seed):
    batch, L, S, mask = case
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((*batch, n, 3)) for n in (L, S, S))
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    result = ll.sdpa_attention(q, k, v, mask=mask, causal=causal)
    np.testing.assert_allclose(result.output, ref, atol=1e-10)
    out, _ = ll.torch_attention_with_weights(q, k, v, mask=mask, causal=causal)
    np.testing.assert_allclose(out, ref, atol=1e-10)


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("mask", [np.array([1, 1, 0, 1], bool), True, False, [True, False, True, True]])
def test_key_masks_and_scalar_masks_give_the_numpy_result_in_torch(mask):
    q, k, v = random_qkv(4, 8, seed=2)
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(ll.sdpa_attention(q, k, v, mask=mask).output, ref, atol=1e-12)


@pytest.mark.usefixtures("warnings_are_errors")
def test_the_kernel_report_falls_back_when_torch_does_not_tell(monkeypatch):
    def broken(*args, **kwargs):
        raise IndexError("private torch function changed")

    monkeypatch.setattr(torch, "_fused_sdp_choice", broken, raising=False)
    q, k, v = random_qkv(4, 8, seed=3)
    result = ll.sdpa_attention(q, k, v)
    assert result.kernel == backends.CHOSEN_BY_TORCH
    np.testing.assert_allclose(result.output, ll.scaled_dot_product_attention(q, k, v)[0], atol=1e-12)


# ====== the torch path's errors are the course's
QKV = random_qkv(6, 8, seed=4)


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("kernel", ["memory-efficient", "cuDNN"])
def test_a_kernel_this_device_lacks_is_explained(kernel):
    if torch.cuda.is_available():
        pytest.skip("on a GPU these kernels may run")
    with pytest.raises(ValueError, match=rf"The {kernel} kernel cannot run these inputs on cpu.*"
                                         r"flash and math.*kernel=None"):
        ll.sdpa_attention(*QKV, kernel=kernel)


@pytest.mark.parametrize("device, words", [
    ("gpu", ['torch calls an NVIDIA GPU "cuda"']),
    ("cuda:7", ["cuda"]),
    ("banana", ['"cpu" or "cuda"']),
])
@pytest.mark.usefixtures("warnings_are_errors")
def test_devices_that_are_not_there_are_explained(device, words):
    if device == "cuda:7" and torch.cuda.device_count() > 7:
        pytest.skip("this machine has 8 GPUs")
    with pytest.raises(ValueError) as info:
        ll.sdpa_attention(*QKV, device=device)
    for word in words:
        assert word in str(info.value)
    with pytest.raises(ValueError):
        ll.torch_attention_with_weights(*QKV, device=device)


@pytest.mark.usefixtures("warnings_are_errors")
def test_cuda_without_cuda_is_explained():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match=r"needs an NVIDIA GPU with CUDA.*device=None"):
        ll.sdpa_attention(*QKV, device="cuda")


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", torch.bfloat16])
def test_half_precision_runs_or_is_explained(dtype):
    try:
        result = ll.sdpa_attention(*QKV, dtype=dtype, device="cpu")
    except ValueError as exc:  # a CPU kernel without this dtype: said in words
        assert "kernel" in str(exc)
        return
    assert result.output.dtype == np.float64  # numpy in, numpy out in the input's dtype
    assert result.dtype == str(dtype).removeprefix("torch.")
    np.testing.assert_allclose(result.output, ll.scaled_dot_product_attention(*QKV)[0], atol=5e-2)


@pytest.mark.usefixtures("warnings_are_errors")
def test_bfloat16_with_a_forced_kernel_it_lacks_is_explained():
    if torch.cuda.is_available():
        pytest.skip("on a GPU the memory-efficient kernel may run bfloat16")
    with pytest.raises(ValueError, match=r"memory-efficient kernel cannot run these inputs on cpu "
                                         r"\(bfloat16"):
        ll.sdpa_attention(*QKV, dtype="bfloat16", kernel="memory-efficient")


@pytest.mark.usefixtures("warnings_are_errors")
def test_bfloat16_tensors_are_accepted():
    q, k, v = (torch.tensor(a, dtype=torch.bfloat16) for a in QKV)
    out = ll.sdpa_attention(q, k, v).output
    assert out.dtype == torch.bfloat16
    out, weights = ll.torch_attention_with_weights(q, k, v)
    assert weights.dtype == torch.bfloat16


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("fn", [lambda q, k, v: ll.sdpa_attention(q, k, v, causal=True).output,
                                lambda q, k, v: ll.torch_attention_with_weights(q, k, v, causal=True)[0]])
def test_requires_grad_keeps_the_graph(fn):
    tensors = [torch.tensor(a, requires_grad=True) for a in QKV]
    fn(*tensors).square().sum().backward()
    mine = [t.grad.clone() for t in tensors]
    direct = [torch.tensor(a, requires_grad=True) for a in QKV]
    torch.nn.functional.scaled_dot_product_attention(*direct, is_causal=True).square().sum().backward()
    for a, b in zip(mine, direct):
        torch.testing.assert_close(a, b.grad)


@pytest.mark.usefixtures("warnings_are_errors")
def test_read_only_arrays_give_no_torch_warning():
    frozen = [a.copy() for a in QKV]
    for a in frozen:
        a.flags.writeable = False
    np.testing.assert_allclose(ll.sdpa_attention(*frozen).output, ll.scaled_dot_product_attention(*QKV)[0],
                               atol=1e-12)


@pytest.mark.usefixtures("warnings_are_errors")
def test_bad_dtype_argument_is_explained():
    with pytest.raises(ValueError, match=r"dtype must be one of"):
        ll.sdpa_attention(*QKV, dtype="int8")


# ------ the torch path on a GPU (skipped without CUDA)
@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_gpu_half_precision_runs_a_fused_kernel_and_says_which(dtype):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 4, 256, 64)).astype(np.float32) for _ in range(3))
    for causal in (False, True):
        result = ll.sdpa_attention(q, k, v, causal=causal, dtype=dtype)
        assert result.device.startswith("cuda") and result.dtype == dtype
        assert result.kernel in {"flash", "cuDNN"}, result.kernel
        ref, _ = ll.scaled_dot_product_attention(q.astype(np.float64), k, v, causal=causal)
        np.testing.assert_allclose(result.output, ref, atol=3e-2)
    tensors = [torch.tensor(a, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
               for a in (q, k, v)]
    out = ll.sdpa_attention(*tensors).output
    assert out.is_cuda and out.dtype == getattr(torch, dtype)
    out.float().sum().backward()
    assert tensors[0].grad is not None


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_the_gpu_masks_and_forced_kernels_give_the_numpy_result():
    q, k, v = random_qkv(8, 16, seed=6)
    mask = np.array([1, 1, 0, 1, 1, 1, 0, 1], bool)
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask, causal=True)
    np.testing.assert_allclose(ll.sdpa_attention(q, k, v, mask=mask, causal=True).output, ref, atol=1e-10)
    result = ll.sdpa_attention(q, k, v, kernel="flash", dtype="bfloat16")
    assert result.kernel == "flash"
    with pytest.raises(ValueError, match=r"flash kernel cannot run these inputs on cuda"):
        ll.sdpa_attention(q, k, v, kernel="flash")  # float64: flash needs half precision
