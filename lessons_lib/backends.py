"""The torch path: ``torch.nn.functional.scaled_dot_product_attention`` (SDPA).

Runs on the GPU (CUDA) when one is available and on the CPU otherwise, and
reports which device and which SDPA kernel ran: flash, memory-efficient,
cuDNN or math. torch is imported only when one of these functions is called,
so ``import lessons_lib`` stays light and numpy-only lessons run without torch.
Used from notebook 08 on; the numpy reference in ``attention.py`` is the
readable definition these results are tested against.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import as_bool_mask, check_qkv, check_scale
from .masks import combine_masks

# torch's SDPBackend names → words a learner knows.
KERNEL_NAMES = {
    "FLASH_ATTENTION": "flash",
    "EFFICIENT_ATTENTION": "memory-efficient",
    "CUDNN_ATTENTION": "cuDNN",
    "MATH": "math",
    "OVERRIDEABLE": "overrideable",
}


@dataclass
class SDPAResult:
    """What ``sdpa_attention`` returns: the output and how it was computed."""

    output: Any          # numpy array if the inputs were numpy, else a torch tensor
    device: str          # "cuda:0", "cpu", ...
    kernel: str          # "flash", "memory-efficient", "cuDNN" or "math"

    def __iter__(self):  # allows ``output, device, kernel = sdpa_attention(...)``
        return iter((self.output, self.device, self.kernel))


def torch_available() -> bool:
    """True when torch is installed (checked without importing it)."""
    return importlib.util.find_spec("torch") is not None


def _torch():
    if not torch_available():
        raise ModuleNotFoundError(
            "This part of the course needs PyTorch, which is not installed in this environment. "
            "Install it with `pip install torch==2.13.0` (or run `make lab`, which does), "
            "then restart the kernel. Every numpy-only lesson works without it."
        )
    import torch

    return torch


def cuda_available() -> bool:
    """True when torch is installed and sees a CUDA GPU."""
    return torch_available() and _torch().cuda.is_available()


def default_device() -> str:
    """"cuda" when a GPU is available, else "cpu"."""
    return "cuda" if cuda_available() else "cpu"


def _to_tensors(q, k, v, mask, device, dtype=None):
    """Check inputs as the numpy path does, then move them to ``device`` as tensors."""
    torch = _torch()
    arrays = check_qkv(q, k, v)
    was_numpy = not any(isinstance(t, torch.Tensor) for t in (q, k, v))
    device = torch.device(device or default_device())
    dtype = dtype or getattr(torch, arrays[0].dtype.name)
    tq, tk, tv = (torch.as_tensor(a, dtype=dtype, device=device) for a in arrays)
    tmask = None if mask is None else torch.as_tensor(as_bool_mask(mask), device=device)
    return torch, tq, tk, tv, tmask, was_numpy


def _kernel_choice(torch, q, k, v, mask, causal, scale) -> str:
    """The SDPA kernel torch's dispatcher picks for these inputs (its own selection logic)."""
    choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, causal, scale=scale)
    name = torch.nn.attention.SDPBackend(choice).name
    return KERNEL_NAMES.get(name, name.lower())


def sdpa_attention(q, k, v, mask=None, causal: bool = False, scale: float | None = None,
                   device: str | None = None, kernel: str | None = None) -> SDPAResult:
    """softmax(Q·Kᵀ/√d_k)·V by torch's fused SDPA; returns ``SDPAResult(output, device, kernel)``.

    Same inputs as ``lessons_lib.scaled_dot_product_attention`` (numpy arrays or
    tensors; ``mask`` bool, True = may attend). ``device`` defaults to CUDA when
    available, else CPU. ``kernel`` forces one of "flash", "memory-efficient",
    "cuDNN", "math" through ``torch.nn.attention.sdpa_kernel``; by default torch
    chooses, and the result says which kernel it chose. Rows with nothing to
    attend to give output 0 (torch ≥ 2.5).
    """
    torch, tq, tk, tv, tmask, was_numpy = _to_tensors(q, k, v, mask, device)
    L, S = tq.shape[-2], tk.shape[-2]
    combine_masks(None if mask is None else as_bool_mask(mask), causal, L, S,
                  (*np.broadcast_shapes(tq.shape[:-2], tk.shape[:-2]), L, S))
    scale = check_scale(scale, tq.shape[-1])
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if causal and tmask is not None:  # SDPA takes one or the other: fold causal into the mask
        tmask = tmask & torch.ones(L, S, dtype=torch.bool, device=tq.device).tril()
        causal = False
    batch = torch.broadcast_shapes(tq.shape[:-2], tk.shape[:-2], tv.shape[:-2])
    tq, tk, tv, tmask = _as_4d(batch, tq, tk, tv, tmask)
    if kernel is None:
        used = _kernel_choice(torch, tq, tk, tv, tmask, causal, scale)
        out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask,
                                                               is_causal=causal, scale=scale)
    else:
        names = {v: k for k, v in KERNEL_NAMES.items()}
        if kernel not in names:
            raise ValueError(f"kernel must be one of {sorted(names)}; got {kernel!r}.")
        with sdpa_kernel([getattr(SDPBackend, names[kernel])]):
            out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask,
                                                                   is_causal=causal, scale=scale)
        used = kernel
    out = out.reshape(*batch, *out.shape[-2:])
    return SDPAResult(out.cpu().numpy() if was_numpy else out, str(tq.device), used)


def _as_4d(batch, q, k, v, mask):
    """View inputs as (batch, heads, seq_len, d): torch's fused CPU kernels want 4-D tensors."""
    lead = (1,) * (2 - len(batch)) + tuple(batch) if len(batch) <= 2 else (-1, batch[-1])

    def fold(t):
        t = t.expand(*batch, *t.shape[-2:])
        return t.reshape(*lead, *t.shape[-2:])
    if mask is not None and mask.dim() > 2:
        mask = fold(mask)
    return fold(q), fold(k), fold(v), mask


def torch_attention_with_weights(q, k, v, mask=None, causal: bool = False, scale: float | None = None,
                                 device: str | None = None):
    """The same attention in plain torch ops, returning ``(output, weights)`` for heatmaps.

    SDPA returns no weights, so this spells the formula out (as the math kernel
    does): scores = Q·Kᵀ·scale, −∞ where masked, softmax, times V.
    """
    torch, tq, tk, tv, _, was_numpy = _to_tensors(q, k, v, None, device)
    L, S = tq.shape[-2], tk.shape[-2]
    allowed = combine_masks(None if mask is None else as_bool_mask(mask), causal, L, S,
                            (*np.broadcast_shapes(tq.shape[:-2], tk.shape[:-2]), L, S))
    scores = (tq @ tk.transpose(-2, -1)) * check_scale(scale, tq.shape[-1])
    if allowed is not None:
        scores = scores.masked_fill(~torch.as_tensor(allowed, device=tq.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # all-masked rows: 0, not NaN
    out = weights @ tv
    if was_numpy:
        return out.cpu().numpy(), weights.cpu().numpy()
    return out, weights


def describe_torch() -> dict:
    """Versions and devices, for the environment check (imports torch)."""
    torch = _torch()
    info = {"torch": torch.__version__, "cuda": torch.cuda.is_available(), "device": default_device()}
    if info["cuda"]:
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


__all__ = ["SDPAResult", "sdpa_attention", "torch_attention_with_weights", "torch_available",
           "cuda_available", "default_device", "describe_torch"]
