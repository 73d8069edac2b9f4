"""Real attention modules for the adapter tests: small, random, float64, with non-zero biases.

``tests/lab/test_adapters.py`` and ``tests/lab/test_adapter_options.py`` build their modules and inputs
with these and compare the course's answer with the module's (``agree``); no weights are downloaded.
"""

from __future__ import annotations

import numpy as np
import torch

D, H, B, L = 16, 4, 3, 7
TOL = 1e-10
LENGTHS = [7, 5, 2]                      # sequence b has LENGTHS[b] real tokens, then padding


def randomize(module, seed):
    """Random weights and non-zero biases (pretrained ones are never zero), float64, eval mode."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.4)
    return module.double().eval()


def inputs(seed=0):
    return np.random.default_rng(seed).standard_normal((B, L, D))


def hf_padding():
    """Hugging Face's attention_mask: (B, L) ints, 1 = real token, 0 = padding."""
    return (np.arange(L)[None, :] < np.array(LENGTHS)[:, None]).astype(np.int64)


def additive(allowed_bshape):
    """A bool (..., L, S) mask as transformers' additive float mask (0 or the dtype's minimum)."""
    allowed = torch.as_tensor(np.asarray(allowed_bshape))
    blocked = torch.finfo(torch.float64).min
    return torch.zeros(allowed.shape, dtype=torch.float64).masked_fill(~allowed, blocked)


def agree(ours, theirs, record, name):
    (out, w), (t_out, t_w) = ours, theirs
    t_out, t_w = t_out.detach().numpy(), t_w.detach().numpy()
    errors = float(np.abs(out - t_out).max()), float(np.abs(w - t_w).max())
    record[name] = errors
    assert max(errors) < TOL, f"{name}: output off by {errors[0]:.1e}, weights by {errors[1]:.1e}"
