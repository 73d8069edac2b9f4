"""RoPE on the torch path (notebook 11): ``torch_rope`` and ``sdpa_attention(..., rope=...)`` agree with the
numpy reference, on the CPU here and on CUDA where there is a GPU (those tests skip without one)."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


@pytest.mark.parametrize("convention", ["half", "interleaved"])
@pytest.mark.parametrize("shape", [(5, 8), (2, 3, 7, 6), (1, 1, 4)])
def test_torch_rope_is_the_numpy_rope(convention, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    positions = np.arange(3, 3 + shape[-2]) ** 2
    theirs = ll.torch_rope(torch.from_numpy(x), positions, convention=convention, base=500.0)
    assert theirs.dtype == torch.float64
    assert np.abs(theirs.numpy() - ll.rope(x, positions, convention=convention, base=500.0)).max() <= 1e-13


def test_torch_rope_keeps_the_graph_and_the_dtype():
    x = torch.randn(2, 4, 6, dtype=torch.float32, requires_grad=True)
    out = ll.torch_rope(x, torch.arange(4))
    assert out.dtype == torch.float32
    out.square().sum().backward()          # a rotation keeps lengths: d|Rx|²/dx = 2x
    assert torch.allclose(x.grad, 2 * x.detach(), atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("rope", [True, "interleaved", ll.Rotary(positions=np.arange(10, 16), base=100.0)])
def test_sdpa_with_rope_matches_the_numpy_reference(causal, rope):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 6, 8)) for _ in range(3))
    rotary = ll.as_rotary(rope)
    q_pos, k_pos = rotary.resolve(6, 6)
    settings = {"base": rotary.base, "convention": rotary.convention}
    ref, _ = ll.scaled_dot_product_attention(ll.rope(q, q_pos, **settings), ll.rope(k, k_pos, **settings), v,
                                             causal=causal)
    result = ll.sdpa_attention(q, k, v, causal=causal, device="cpu", rope=rope)
    assert np.abs(result.output - ref).max() <= 1e-12
    out, weights = ll.torch_attention_with_weights(q, k, v, causal=causal, device="cpu", rope=rope)
    assert np.abs(out - ref).max() <= 1e-12


def test_a_decoding_step_with_rope_sees_what_the_whole_sequence_saw():
    """One new query at position 5 against the 6 keys so far: the last row of the whole causal attention."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((6, 8)) for _ in range(3))
    whole = ll.sdpa_attention(q, k, v, causal=True, device="cpu", rope=True).output
    step = ll.sdpa_attention(q[5:], k, v, device="cpu",
                             rope=ll.Rotary(positions=[5], key_positions=np.arange(6))).output
    assert np.abs(step - whole[5:]).max() <= 1e-12
    with pytest.raises(ValueError, match="say where each stands"):
        ll.sdpa_attention(q[5:], k, v, device="cpu", rope=True)


def test_bad_rope_settings_are_refused_before_any_work():
    q, k, v = ll.random_qkv(4, 5)
    with pytest.raises(ValueError, match="odd number"):
        ll.sdpa_attention(q, k, v, device="cpu", rope=True)
    q, k, v = ll.random_qkv(4, 6)
    with pytest.raises(ValueError, match='rope must be "half" or "interleaved"'):
        ll.sdpa_attention(q, k, v, device="cpu", rope="halve")
    with pytest.raises(TypeError, match="x must be a torch tensor"):
        ll.torch_rope(q, np.arange(4))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_nan_or_inf_is_refused_by_name_as_the_numpy_rope_refuses_it(bad, dtype):
    """torch_rope handed back NaN rows for NaN/inf input, where rope refuses it by name (issue 55)."""
    x = torch.ones(2, 3, 4, dtype=getattr(torch, dtype), requires_grad=dtype != "bfloat16")
    with torch.no_grad():
        poisoned = x.clone()
        poisoned[1, 2, 3] = bad
    with pytest.raises(ValueError) as numpy_words:
        ll.rope(poisoned.detach().double().numpy(), np.arange(3))
    with pytest.raises(ValueError, match=r"x contains .*at index \(1, 2, 3\)") as torch_words:
        ll.torch_rope(poisoned, np.arange(3))
    assert str(torch_words.value) == str(numpy_words.value)
    assert torch.isfinite(ll.torch_rope(x, np.arange(3))).all()


@needs_cuda
@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_torch_rope_on_cuda_matches_the_cpu(convention):
    x = torch.randn(2, 4, 9, 64, dtype=torch.float64)
    positions = torch.arange(100, 109)
    on_gpu = ll.torch_rope(x.to("cuda"), positions, convention=convention)
    assert on_gpu.device.type == "cuda"
    assert (on_gpu.cpu() - ll.torch_rope(x, positions, convention=convention)).abs().max() <= 1e-12


@needs_cuda
def test_sdpa_with_rope_on_cuda_matches_the_numpy_reference():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 4, 16, 64)).astype(np.float32) for _ in range(3))
    result = ll.sdpa_attention(q, k, v, causal=True, device="cuda", rope=True)
    assert result.device.startswith("cuda")
    positions = np.arange(16)
    ref, _ = ll.scaled_dot_product_attention(ll.rope(q.astype(np.float64), positions),
                                             ll.rope(k.astype(np.float64), positions), v.astype(np.float64),
                                             causal=True)
    assert np.abs(result.output - ref).max() < 1e-4
