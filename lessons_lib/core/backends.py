"""The torch path: ``torch.nn.functional.scaled_dot_product_attention`` (SDPA).

Runs on the GPU (CUDA) when one is available and on the CPU otherwise, and
reports which device and which SDPA kernel ran: flash, memory-efficient,
cuDNN or math. torch is imported only when one of these functions is called,
so ``import lessons_lib`` stays light and numpy-only lessons run without torch.
Used from notebook 08 on; the numpy reference in ``attention.py`` is the
readable definition these results are tested against.

With ``rope=`` the queries and keys are turned by their positions first (rotary embeddings, notebook 11:
:func:`torch_rope`, the torch twin of :func:`lessons_lib.core.position.rope`), on the same device, so a
model's attention runs as one call: ``sdpa_attention(q, k, v, causal=True, rope=True)``.

Every input the numpy reference accepts is accepted here with the same result
(masks of any broadcastable shape, ``mask=True``, lists), and every problem gets
a course-style message: a kernel that cannot run on this device, a device that
is not there, a dtype a kernel lacks. Tensors keep their autograd graph.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._checks import (
    as_bool_mask,
    as_float_array,
    check_base,
    check_convention,
    check_flag,
    check_kv_heads,
    check_memory,
    check_pairs,
    check_positions,
    check_qkv,
    check_scale,
)
from . import position
from .masks import combine_masks

__all__ = ["SDPAResult", "KERNEL_NAMES", "TORCH_CPU_INSTALL", "CHOSEN_BY_TORCH", "sdpa_attention",
           "torch_attention_with_weights", "torch_available", "cuda_available", "default_device",
           "describe_torch", "torch_rope"]

# torch's SDPBackend names → words a learner knows.
KERNEL_NAMES = {
    "FLASH_ATTENTION": "flash",
    "EFFICIENT_ATTENTION": "memory-efficient",
    "CUDNN_ATTENTION": "cuDNN",
    "MATH": "math",
    "OVERRIDEABLE": "overrideable",
}

#: How to install the CPU-only build of the course's torch (a few hundred MB; a plain
#: ``pip install torch`` on Linux pulls the multi-GB CUDA build). Same pin as requirements.txt.
TORCH_CPU_INSTALL = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"

#: What ``SDPAResult.kernel`` says when torch does not tell which kernel it chose.
CHOSEN_BY_TORCH = "chosen by torch"

_DTYPES = ("float16", "bfloat16", "float32", "float64")


@dataclass
class SDPAResult:
    """What ``sdpa_attention`` returns: the output and how it was computed.

    Unpacks as ``output, device, kernel = sdpa_attention(...)``; ``dtype`` says in
    which precision the kernel ran (e.g. ``"bfloat16"``).
    """

    output: Any          # numpy array if the inputs were numpy, else a torch tensor
    device: str          # "cuda:0", "cpu", ...
    kernel: str          # "flash", "memory-efficient", "cuDNN", "math" or "chosen by torch"
    dtype: str = ""      # the precision the kernel ran in

    def __iter__(self):  # allows ``output, device, kernel = sdpa_attention(...)``
        return iter((self.output, self.device, self.kernel))


def torch_available() -> bool:
    """True when torch is installed (checked without importing it)."""
    return importlib.util.find_spec("torch") is not None


def import_torch():
    if not torch_available():
        raise ModuleNotFoundError(
            "This part of the course needs PyTorch, which is not installed in this environment. "
            f"Install the CPU-only build (a few hundred MB) with `{TORCH_CPU_INSTALL}`, then restart "
            "the kernel; on a machine with an NVIDIA GPU, `pip install torch==2.13.0` gives the CUDA "
            "build instead. Every numpy-only lesson works without it."
        )
    import torch

    return torch


def cuda_available() -> bool:
    """True when torch is installed and sees a CUDA GPU."""
    return torch_available() and import_torch().cuda.is_available()


def default_device() -> str:
    """"cuda" when a GPU is available, else "cpu"."""
    return "cuda" if cuda_available() else "cpu"


# --------------------------------------------------------------------------- checking what was asked for


def _device(torch, device):
    """``device`` (None, "cpu", "cuda", "cuda:1", a torch.device) as a torch.device that exists here."""
    if device is None:
        return torch.device(default_device())
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f'device must be a string such as "cpu" or "cuda"; '
                        f"got {device!r} ({type(device).__name__}).")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        gpu = " torch calls an NVIDIA GPU \"cuda\"." if str(device).lower().startswith("gpu") else ""
        raise ValueError(
            f'device must be "cpu" or "cuda" (an NVIDIA GPU, optionally numbered: "cuda:0"); '
            f"got {device!r}.{gpu} Leave device=None to use the GPU when there is one, else the CPU."
        ) from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            build = " (this torch is a CPU-only build)" if torch.version.cuda is None else ""
            raise ValueError(
                f"device={str(device)!r} needs an NVIDIA GPU with CUDA, but torch sees none on this "
                f"machine{build}. Leave device=None (or use \"cpu\"): the same attention runs on the CPU."
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={str(device)!r} does not exist: this machine has "
                             f"{torch.cuda.device_count()} CUDA GPU(s), numbered from 0.")
    elif dev.type != "cpu":
        backend = getattr(torch.backends, dev.type, None) or getattr(torch, dev.type, None)
        available = getattr(backend, "is_available", None)
        if available is None or not available():
            raise ValueError(f"device={str(device)!r} is not available here; use \"cpu\" or \"cuda\".")
    return dev


def _dtype(torch, dtype):
    """``dtype`` ("bfloat16", torch.float16, np.float32, ...) as a torch float dtype, or None."""
    if dtype is None:
        return None
    name = getattr(dtype, "__name__", None) or str(dtype).removeprefix("torch.")
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {list(_DTYPES)} (the precision the kernel runs in); "
                         f"got {dtype!r}.")
    return getattr(torch, name)


def _stand_in(t) -> np.ndarray:
    """A numpy array with a tensor's shape and (numpy) dtype that costs no memory: for shape checks."""
    name = str(t.dtype).removeprefix("torch.")
    np_dtype = np.float32 if name == "bfloat16" else getattr(np, name, np.int64)  # int64: any non-float
    return np.broadcast_to(np.zeros((), dtype=np_dtype), tuple(t.shape))


def _inputs(torch, q, k, v, device, dtype, gqa: bool = False):
    """Check Q, K, V as the numpy path does and return them as tensors on ``device``.

    Tensors stay tensors (their autograd graph kept; only their shapes come to the CPU
    for checking, their values are checked on the device); numpy arrays and lists go
    through the numpy checks and become tensors sharing memory where they can. With ``gqa``
    K and V may hold fewer heads than Q (axis −3), a number that divides Q's (:func:`_gqa_heads`).
    Returns ``(q, k, v, numpy_dtype)``, the last None when any input was a tensor.
    """
    raw = {"Q": q, "K": k, "V": v}
    tensors = {n: t for n, t in raw.items() if isinstance(t, torch.Tensor)}
    for name, t in tensors.items():
        as_float_array(_stand_in(t), name, min_ndim=2, check_values=False)  # dtype, ndim, empty
        if not _all_finite(torch, t):
            as_float_array(t, name, min_ndim=2)  # raises the numpy path's message (rare: copies)
    if gqa:  # numpy inputs checked as they are; the shape checks below see K and V with Q's heads
        raw.update({n: as_float_array(raw[n], n, min_ndim=2) for n in raw if n not in tensors})
    stand_ins = {n: (_stand_in(t) if n in tensors else t) for n, t in raw.items()}
    if gqa:
        stand_ins.update(_gqa_heads(stand_ins["Q"], stand_ins["K"], stand_ins["V"]))
    checked = check_qkv(*stand_ins.values(), check_values=False)
    arrays = dict(zip(raw, checked))
    if gqa:   # the real K and V (fewer heads), in the dtype the checks settled on
        arrays.update({n: np.asarray(raw[n]).astype(checked[0].dtype, copy=False)
                       for n in ("K", "V") if n not in tensors})
    for name in raw:  # the values of numpy inputs (tensors were checked on their device above)
        if name not in tensors:
            arrays[name] = as_float_array(arrays[name], name, min_ndim=2)
    promoted = None
    if tensors:
        promoted = tensors.get("Q", next(iter(tensors.values()))).dtype
        for t in tensors.values():
            promoted = torch.promote_types(promoted, t.dtype)
        for name in raw:
            if name not in tensors:
                promoted = torch.promote_types(promoted, getattr(torch, arrays[name].dtype.name))
    target = dtype or promoted or getattr(torch, arrays["Q"].dtype.name)
    out = []
    for name in raw:
        if name in tensors:
            out.append(tensors[name].to(device=device, dtype=target))
        else:  # a read-only array is copied: torch warns about (and may write to) non-writable memory
            array = np.require(arrays[name], requirements=["W"])
            out.append(torch.from_numpy(array).to(device=device, dtype=target))
    return (*out, None if tensors else arrays["Q"].dtype)


def _all_finite(torch, t) -> bool:
    """No NaN or ±inf in tensor ``t``: two reductions (min and max propagate NaN), no extra buffer.

    On the CPU the tensor is read through numpy (no copy), which avoids waking torch's
    thread pool for a check that costs far less than the attention itself.
    """
    t = t.detach()
    if t.device.type == "cpu" and t.dtype != torch.bfloat16:
        a = t.numpy()
        return bool(np.isfinite(a.min()) and np.isfinite(a.max()))
    return bool(torch.isfinite(t.amin()) & torch.isfinite(t.amax()))


def _gqa_heads(q, k, v) -> dict:
    """Grouped-query attention's shapes: Q ``(..., n_heads, L, d)``, K and V ``(..., n_kv_heads, S, d)`` with
    n_kv_heads dividing n_heads. Returns stand-ins for K and V with Q's heads (no memory), for the other
    checks."""
    for name, a in (("Q", q), ("K", k), ("V", v)):
        if np.ndim(a) < 3:
            raise ValueError(f"enable_gqa=True shares key/value heads among query heads, so {name} needs a "
                             f"head axis: (..., heads, seq_len, d); got shape {np.shape(a)}.")
    if k.shape[-3] != v.shape[-3]:
        raise ValueError(f"K has {k.shape[-3]} key/value heads but V has {v.shape[-3]}: each key head has "
                         f"its value head (K is {k.shape}, V is {v.shape}).")
    n_heads = q.shape[-3]
    try:
        check_kv_heads(n_heads, k.shape[-3])
    except ValueError as exc:
        raise ValueError(f"enable_gqa=True: Q has n_heads = {n_heads} heads and K, V have n_kv_heads = "
                         f"{k.shape[-3]} (axis −3). {exc}") from None
    return {name: np.broadcast_to(np.zeros((), dtype=a.dtype), (*a.shape[:-3], n_heads, *a.shape[-2:]))
            for name, a in (("K", k), ("V", v))}


def _mask(torch, mask, causal, batch, L, S, device):
    """The mask as a bool tensor that broadcasts against (batch, heads, L, S), or None, and is_causal."""
    causal = check_flag(causal, "causal")
    if mask is None:
        return None, causal  # SDPA's own causal path: no L×S mask is ever built
    allowed = combine_masks(as_bool_mask(mask), causal, L, S, (*batch, L, S))
    tmask = torch.from_numpy(np.ascontiguousarray(allowed)).to(device)
    if len(batch) <= 2:  # a leading 1 per missing dimension: broadcasts without a copy
        return tmask.reshape((1,) * (4 - tmask.dim()) + tuple(tmask.shape)), False
    check_memory(float(np.prod(batch)) * L * S, f"a mask for {int(np.prod(batch))} batch items of {L}×{S}",
                 "Use causal=True instead of a mask, or fewer batch dimensions.")
    return _fold(tmask, batch), False


def _with_heads(batch: tuple, t, gqa: bool) -> tuple:
    """``batch`` with its last axis (the heads) as ``t`` has it: K's and V's own heads under ``gqa``."""
    return (*batch[:-1], t.shape[-3]) if gqa else tuple(batch)


def _fold(t, batch):
    """View a (..., n, d) tensor as (batch, heads, n, d): torch's fused kernels want 4-D tensors."""
    lead = (1,) * (2 - len(batch)) + tuple(batch) if len(batch) <= 2 else (-1, batch[-1])
    t = t.expand(*batch, *t.shape[-2:])
    return t.reshape(*lead, *t.shape[-2:])


def torch_rope(x, positions, *, base: float = position.DEFAULT_BASE, convention: str = "half"):
    """:func:`lessons_lib.core.position.rope` for a torch tensor, on its device, keeping its autograd graph.

    ``x (..., seq_len, d_head)`` a float tensor (d_head even), ``positions`` ``(seq_len,)`` whole numbers
    ≥ 0 (a list, an array or a tensor; or a shape that broadcasts to ``x.shape[:-1]``). The angles
    position · θ_i are computed in float64 and their cosines and sines cast to ``x``'s dtype, as the numpy
    reference does; pair i turns by its angle, in the "half" or "interleaved" layout. Returns a new tensor.
    NaN or infinity in ``x`` is refused with the numpy path's words (a ValueError naming ``x``).
    """
    torch = import_torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor (use lessons_lib.rope for numpy arrays); got "
                        f"{type(x).__name__}.")
    as_float_array(_stand_in(x), "x", min_ndim=2, shape="(..., seq_len, d_head)", check_values=False)
    if not _all_finite(torch, x):  # refused by name, as rope refuses it (rare: copies to the CPU)
        as_float_array(x.detach().cpu().double().numpy(), "x", min_ndim=2)
    d_head = check_pairs(x.shape[-1])
    positions = check_positions(positions, tuple(x.shape[:-1]))
    convention = check_convention(convention)
    theta = position.rope_frequencies(d_head, base=check_base(base))
    angles = positions[..., None].astype(np.float64) * theta
    cos, sin = (torch.from_numpy(f(angles)).to(device=x.device, dtype=x.dtype) for f in (np.cos, np.sin))
    if convention == "half":
        a, b = x[..., : d_head // 2], x[..., d_head // 2:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)


def _rotated(torch, tq, tk, rope):
    """Q and K turned by their positions (``rope=`` of the attention functions), or as they are."""
    rotary = position.as_rotary(rope)
    if rotary is None:
        return tq, tk
    q_pos, k_pos = rotary.resolve(tq.shape[-2], tk.shape[-2])
    return (torch_rope(tq, q_pos, base=rotary.base, convention=rotary.convention),
            torch_rope(tk, k_pos, base=rotary.base, convention=rotary.convention))


def _kernel_choice(torch, q, k, v, mask, causal, scale, gqa: bool = False) -> str:
    """The SDPA kernel torch's dispatcher picks for these inputs, or "chosen by torch".

    Asks torch's private selection function; if it is missing or fails, the attention
    still runs and the report says that torch chose.
    """
    try:
        choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, causal, scale=scale, enable_gqa=gqa)
        name = torch.nn.attention.SDPBackend(choice).name
    except Exception:  # only a report: never let it break the attention
        return CHOSEN_BY_TORCH
    return KERNEL_NAMES.get(name, name.lower())


def _run_kernel(torch, kernel, q, k, v, mask, causal, scale, gqa: bool = False):
    """SDPA with ``kernel`` forced; a kernel that cannot run these inputs gets a course-style message."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    names = {v: k for k, v in KERNEL_NAMES.items()}
    if kernel not in names:
        raise ValueError(f"kernel must be one of {sorted(names)}; got {kernel!r}.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel([getattr(SDPBackend, names[kernel])]):
                return torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
        except RuntimeError as exc:
            reasons = [str(w.message) for w in caught if "kernel" in str(w.message).lower()]
            cpu = (" On a CPU, torch has only the flash and math kernels."
                   if q.device.type == "cpu" and kernel not in ("flash", "math") else "")
            raise ValueError(
                f"The {kernel} kernel cannot run these inputs on {q.device} "
                f"({str(q.dtype).removeprefix('torch.')}, head size {q.shape[-1]}"
                f"{', with a mask' if mask is not None else ''}).{cpu} "
                + (f"torch says: {' '.join(reasons)} " if reasons else f"torch says: {exc} ")
                + "Leave kernel=None to let torch choose, or use kernel=\"math\", which runs everywhere."
            ) from None


def sdpa_attention(q, k, v, mask=None, causal: bool = False, scale: float | None = None,
                   device: str | None = None, kernel: str | None = None, dtype=None, *,
                   rope=None, enable_gqa: bool = False) -> SDPAResult:
    """softmax(Q·Kᵀ/√d_k)·V by torch's fused SDPA; returns ``SDPAResult(output, device, kernel)``.

    Same inputs as ``lessons_lib.scaled_dot_product_attention`` (numpy arrays, lists or
    tensors; ``mask`` bool, True = may attend, any shape that broadcasts to
    ``(..., L, S)`` as in torch, aligned from the right: a raw ``(B, L, S)`` mask against
    ``(B, H, L, S)`` inputs meets the head axis, give ``mask[:, None]``; a mask from
    ``padding_mask`` reaches every head of its sequence). ``device`` defaults to CUDA when
    available, else CPU. ``kernel``
    forces one of "flash", "memory-efficient", "cuDNN", "math" through
    ``torch.nn.attention.sdpa_kernel``; by default torch chooses, and the result says
    which kernel it chose (or "chosen by torch" when torch does not tell). ``dtype``
    ("bfloat16", "float16", "float32", "float64") sets the precision the kernel runs in:
    the flash and cuDNN kernels on a GPU need bfloat16 or float16. Numpy inputs give a
    numpy output of their own dtype; tensors give a tensor and keep their autograd graph
    (``requires_grad`` inputs can be backpropagated through). Rows with nothing to attend
    to give output 0 (torch ≥ 2.5). Finite inputs whose scores overflow the dtype raise a
    ValueError, never return NaN. ``rope`` turns Q and K by their positions on the device before SDPA
    (``True``, a convention name or a ``Rotary``, as in ``multi_head_attention``; the values are not
    turned): notebook 11.

    ``enable_gqa=True`` is grouped-query attention (notebook 12): K and V hold ``n_kv_heads`` heads on axis
    −3, a number that divides Q's ``n_heads``, and each key/value head serves a group of n_heads / n_kv_heads
    consecutive query heads (torch's ``enable_gqa``, no copies of K and V); the result equals the numpy
    reference on ``repeat_kv(K, n_heads)`` and ``repeat_kv(V, n_heads)``.
    """
    torch = import_torch()
    dev = _device(torch, device)
    gqa = check_flag(enable_gqa, "enable_gqa")
    tq, tk, tv, np_dtype = _inputs(torch, q, k, v, dev, _dtype(torch, dtype), gqa)
    tq, tk = _rotated(torch, tq, tk, rope)
    L, S = tq.shape[-2], tk.shape[-2]
    scale = check_scale(scale, tq.shape[-1])
    kv_batch = np.broadcast_shapes(tk.shape[:-2], tv.shape[:-2])
    batch = np.broadcast_shapes(tq.shape[:-2], _with_heads(kv_batch, tq, gqa))
    tmask, is_causal = _mask(torch, mask, causal, batch, L, S, dev)
    tq = _fold(tq, batch)
    tk, tv = (_fold(t, _with_heads(batch, tk, gqa)) for t in (tk, tv))
    if kernel is None:
        used = _kernel_choice(torch, tq, tk, tv, tmask, is_causal, scale, gqa)
        out = torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, attn_mask=tmask, is_causal=is_causal, scale=scale, enable_gqa=gqa)
    else:
        out = _run_kernel(torch, kernel, tq, tk, tv, tmask, is_causal, scale, gqa)
        used = kernel
    if not _all_finite(torch, out):
        name = str(out.dtype).removeprefix("torch.")
        raise ValueError(
            f"torch's attention overflowed {name} on these finite inputs (the output holds inf or NaN): "
            f"the scores Q·Kᵀ, or their weighted sum of V, grow past the largest {name} number "
            f"({torch.finfo(out.dtype).max:.4g}). Scale Q, K and V down"
            + (", or use a wider dtype." if out.dtype != torch.float64 else ".")
        )
    out = out.reshape(*batch, *out.shape[-2:])
    ran_in = str(out.dtype).removeprefix("torch.")
    if np_dtype is not None:  # numpy in, numpy out, in the input's dtype
        out = out.detach().to("cpu", torch.float32 if out.dtype == torch.bfloat16 else out.dtype).numpy()
        out = out.astype(np_dtype, copy=False)
    return SDPAResult(out, str(tq.device), used, ran_in)


def torch_attention_with_weights(q, k, v, mask=None, causal: bool = False, scale: float | None = None,
                                 device: str | None = None, *, rope=None, enable_gqa: bool = False):
    """The same attention in plain torch ops, returning ``(output, weights)`` for heatmaps.

    SDPA returns no weights, so this spells the formula out (as the math kernel
    does): scores = Q·Kᵀ·scale, −∞ where masked, softmax, times V. Accepts the same
    inputs as :func:`sdpa_attention` (``rope`` and ``enable_gqa`` too: each key/value head is then
    repeated for its group of query heads); tensors keep their autograd graph.
    """
    torch = import_torch()
    dev = _device(torch, device)
    gqa = check_flag(enable_gqa, "enable_gqa")
    tq, tk, tv, np_dtype = _inputs(torch, q, k, v, dev, None, gqa)
    tq, tk = _rotated(torch, tq, tk, rope)
    if gqa:
        group = tq.shape[-3] // tk.shape[-3]
        tk, tv = (t.repeat_interleave(group, dim=-3) for t in (tk, tv))
    L, S = tq.shape[-2], tk.shape[-2]
    batch = np.broadcast_shapes(tq.shape[:-2], tk.shape[:-2])
    check_memory(2.0 * float(np.prod(batch)) * L * S * tq.element_size(),
                 f"Attention weights over {L} queries × {S} keys",
                 "Use a shorter sequence, or sdpa_attention, which never returns the weights.")
    allowed = combine_masks(None if mask is None else as_bool_mask(mask), causal, L, S, (*batch, L, S))
    scores = (tq @ tk.transpose(-2, -1)) * check_scale(scale, tq.shape[-1])
    if not _all_finite(torch, scores):
        name = str(scores.dtype).removeprefix("torch.")
        raise ValueError(f"The scores Q·Kᵀ overflow {name} although Q and K are finite: scale Q and K down"
                         + (", or use a wider dtype." if scores.dtype != torch.float64 else "."))
    if allowed is not None:
        scores = scores.masked_fill(~torch.as_tensor(allowed, device=tq.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # all-masked rows: 0, not NaN
    out = weights @ tv
    if np_dtype is not None:
        return out.detach().cpu().numpy(), weights.detach().cpu().numpy()
    return out, weights


def describe_torch(*, separate_process: bool = False) -> dict:
    """Versions and devices, for the environment check (imports torch).

    ``separate_process=True`` imports torch in a short-lived Python of its own and returns what it
    found, so the caller (lesson 00's kernel) never holds torch's ~200 MB. Raises ``RuntimeError``
    with that Python's last error line when torch fails to import there.
    """
    if separate_process:
        return _describe_torch_in_child()
    torch = import_torch()
    info = {"torch": torch.__version__, "cuda": torch.cuda.is_available(), "device": default_device()}
    if info["cuda"]:
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def _describe_torch_in_child() -> dict:
    package_parent = str(Path(__file__).resolve().parents[2])
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
            "from lessons_lib.core.backends import describe_torch; print(json.dumps(describe_torch()))")
    done = subprocess.run([sys.executable, "-c", code, package_parent], capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(lines[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])
