"""How a live figure's numbers cross to the browser: float32 bytes, 8-bit colour indices, mask bits.
"""

from __future__ import annotations

import zlib

import numpy as np

F32_MAX_CELLS = 2048        # a matrix crosses as float32 (exact) up to this many cells (8 kB) ...
F32_MAX_SIDE = 32           # ... and this many rows and columns (the sizes whose tokens are all labelled)


# ------------------------------------------------------------------ encoding
def encode_matrix(m: np.ndarray, vmin: float, vmax: float) -> tuple[str, bytes]:
    """``("f32", float32 bytes)`` for small matrices, ``("u8z", zlib(8-bit colour indices))`` for large ones.

    Small: at most :data:`F32_MAX_SIDE` along every axis and :data:`F32_MAX_CELLS` cells.

    The colour index of a value is matplotlib's: ``floor(256 · (v − vmin)/(vmax − vmin))``,
    clipped to 0..255 (so the 256-entry table gives exactly matplotlib's colour).

    >>> encode_matrix(np.zeros((2, 2)), 0.0, 1.0)[0]
    'f32'
    >>> encode_matrix(np.zeros((64, 64)), 0.0, 1.0)[0]
    'u8z'
    """
    finite = np.where(np.isfinite(m), m, vmin)
    if m.size <= F32_MAX_CELLS and max(m.shape) <= F32_MAX_SIDE:
        return "f32", np.ascontiguousarray(finite, dtype="<f4").tobytes()
    x = (finite - vmin) * (256.0 / (vmax - vmin))
    idx = np.clip(np.floor(x), 0, 255).astype(np.uint8)
    return "u8z", zlib.compress(idx.tobytes(), 6)


def decode_matrix(encoding: str, payload: bytes, shape, vmin: float = 0.0, vmax: float = 1.0) -> np.ndarray:
    """The values a browser reads from ``encode_matrix``'s output (bin centres for 8-bit data); for tests."""
    if encoding == "f32":
        return np.frombuffer(payload, dtype="<f4").reshape(shape).astype(np.float64)
    idx = np.frombuffer(zlib.decompress(payload), dtype=np.uint8).reshape(shape)
    return vmin + (idx + 0.5) / 256 * (vmax - vmin)


def pack_mask(hidden: np.ndarray) -> bytes:
    """Hidden (masked) cells as packed bits, first cell in the highest bit; ``b""`` when none is hidden."""
    return np.packbits(hidden.ravel()).tobytes() if hidden.any() else b""
