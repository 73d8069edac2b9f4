"""The torch path: SDPA on CPU (or CUDA), its kernel report, and the weights-returning variant."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib import backends

REPO = Path(__file__).resolve().parents[1]


def test_import_lessons_lib_does_not_import_torch():
    code = "import sys, lessons_lib; print('torch' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


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
def test_forcing_a_kernel(kernel):
    q, k, v = ll.random_qkv(16, 8, seed=3, dtype=np.float32)
    result = ll.sdpa_attention(q, k, v, device="cpu", kernel=kernel)
    assert result.kernel == kernel
    np.testing.assert_allclose(result.output, ll.scaled_dot_product_attention(q, k, v)[0], atol=1e-5)
    with pytest.raises(ValueError, match=r"kernel must be one of"):
        ll.sdpa_attention(q, k, v, kernel="turbo")


def test_tensors_in_tensors_out_and_masks():
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


@settings(max_examples=40, deadline=None)
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
