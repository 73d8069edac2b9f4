"""FlashAttention's idea in numpy: tiles plus an online softmax (notebook 08).

Naive attention writes the whole (L × S) score matrix to memory, then takes a
softmax over each of its rows. FlashAttention (Dao et al. 2022) never does. It
walks over tiles of keys and keeps, for each query, only

    m   the running maximum of the scores seen so far,
    ℓ   the running sum   Σ_j exp(s_j − m),
    acc the running sum   Σ_j exp(s_j − m) · v_j   (a weighted sum of values).

When a new tile of scores s arrives, the maximum may grow from m to m'. Every
term already summed was exp(s_j − m); it should be exp(s_j − m'), which is
exp(s_j − m) · exp(m − m'). So the old sums are *rescaled* by exp(m − m') ≤ 1
and the new tile is added:

    m' = max(m, max_j s_j)
    ℓ' = ℓ · exp(m − m') + Σ_j exp(s_j − m')
    acc' = acc · exp(m − m') + Σ_j exp(s_j − m') · v_j

After the last tile, output = acc / ℓ, which is softmax(Q·Kᵀ/√d_k)·V exactly
(up to rounding). On one row with no values this is the *online softmax*
(Milakov & Gimelshein 2018): :func:`online_softmax_update` is the update and
:func:`online_softmax` runs it over a stream of chunks.

Memory: naive attention holds L × S scores; :func:`flash_attention` holds one
tile of at most ``block_size × block_size`` scores (per batch entry) plus the
output, so its memory grows like N, not N². With ``causal=True`` tiles that lie
entirely above the diagonal are never computed. The default block size
(:func:`default_block_size`) was chosen by measurement
(``benchmarks/attention.py --blocks``): large enough that numpy's per-call
overhead is paid rarely, small enough that a tile stays a few MB, far below
the naive memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .._checks import (
    as_float_array,
    check_flag,
    check_memory,
    check_positive_int,
    check_qkv,
    check_scale,
    check_scores_finite,
    format_bytes,
)

# The default tile holds at most TILE_SCORES scores, all batch entries (heads) together: 2**20 scores,
# 4 MB in float32. Measured with benchmarks/attention.py --blocks (float32, d = 64, 2 CPU cores): for one
# head, blocks of 512 to 1024 run at least as fast as naive numpy from N = 2048 on, and 1024 stays so on a
# busy machine, where every extra call into the multi-threaded BLAS can wait for a core; 64 took about
# 5× naive at N = 8192. With many heads per call, each call already does the work of a big tile.
TILE_SCORES = 2**20
MAX_BLOCK = 1024

__all__ = ["TILE_SCORES", "default_block_size", "flash_attention", "flash_attention_steps", "online_softmax",
           "online_softmax_update", "OnlineSoftmax", "TileStep"]

def default_block_size(batch_size: int = 1) -> int:
    """The block size :func:`flash_attention` uses when none is given.

    The largest power of two, at most 1024 and at least 16, whose tile over all
    ``batch_size`` batch entries holds at most :data:`TILE_SCORES` scores: 1024 for one
    head, 256 for 16 heads. One numpy call then works on about a million scores, enough
    to pay its overhead, while the tile stays a few MB.
    """
    batch_size = check_positive_int(batch_size, "batch_size")
    block = MAX_BLOCK
    while block > 16 and batch_size * block * block > TILE_SCORES:
        block //= 2
    return block


# --------------------------------------------------------------------------- the update
def _absorb(m, ell, scores, acc=None, values=None):
    """One online-softmax step on arrays: absorb a tile of ``scores`` into (m, ℓ, acc).

    ``m, ell (..., rows, 1)``, ``scores (..., rows, cols)`` (overwritten: it becomes
    exp(scores − m')), ``acc (..., rows, d_v)`` and ``values (..., cols, d_v)`` or both
    None. Returns ``(m', ℓ', acc')``. Rows that have seen only −∞ so far keep m = −∞,
    ℓ = 0, acc = 0.
    """
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    shift = np.where(m_new == -np.inf, 0, m_new)  # a row with nothing to attend to yet: exp(−∞ − 0) = 0
    with np.errstate(over="ignore"):              # s − m' may round to −∞ (then exp gives 0, correctly)
        scores -= shift
        rescale = np.exp(m - shift)               # exp(m − m') ≤ 1: the old terms, re-based on m'
    p = np.exp(scores, out=scores)                # exp(s − m'), each ≤ 1
    ell_new = ell * rescale + p.sum(axis=-1, keepdims=True, dtype=ell.dtype)
    if acc is None:
        return m_new, ell_new, None
    acc *= rescale
    acc += p.astype(acc.dtype, copy=False) @ values
    return m_new, ell_new, acc


def online_softmax_update(m, ell, chunk):
    """Absorb one chunk of scores into the running maximum ``m`` and running sum ``ell``.

        m' = max(m, max_j chunk_j),   ℓ' = ℓ · exp(m − m') + Σ_j exp(chunk_j − m')

    Start from ``m = -inf, ell = 0``. After the last chunk, ``m`` is the row's maximum
    and ``ell`` = Σ_j exp(s_j − m), so softmax(s)_j = exp(s_j − m) / ℓ. One row: ``m``
    and ``ell`` numbers, ``chunk`` a 1-D array of scores; returns two floats. Several
    rows at once: ``m, ell (rows,)`` and ``chunk (rows, c)``; returns two ``(rows,)``
    arrays. ``-inf`` in a chunk is a masked score; a row that has seen only ``-inf``
    keeps ``m = -inf, ℓ = 0``. Notebook 08 (its exercise asks for this function).
    """
    scalar = np.ndim(m) == 0 and np.ndim(ell) == 0
    m, ell = _check_state(m, ell)                         # (rows,): (1,) for one row
    want_ndim = 1 if scalar else 2
    chunk_arr = np.asarray(chunk) if isinstance(chunk, (list, tuple)) else chunk
    if isinstance(chunk_arr, np.ndarray) and chunk_arr.size == 0 and chunk_arr.ndim == want_ndim:
        return (float(m[0]), float(ell[0])) if scalar else (m, ell)   # an empty chunk changes nothing
    chunk = as_float_array(chunk, "chunk", allow_neg_inf=True)
    if chunk.ndim != want_ndim or (not scalar and chunk.shape[0] != m.shape[0]):
        want = ("a 1-D array (a piece of one row of scores)" if scalar
                else f"of shape ({m.shape[0]}, c): one row of scores per entry of m")
        raise ValueError(f"chunk must be {want}; got shape {chunk.shape} (m has shape "
                         f"{() if scalar else m.shape}).")
    m_new, ell_new, _ = _absorb(m[:, None], ell[:, None], np.array(chunk, dtype=np.float64, ndmin=2))
    if scalar:
        return float(m_new[0, 0]), float(ell_new[0, 0])
    return m_new[:, 0], ell_new[:, 0]


def _check_state(m, ell) -> tuple[np.ndarray, np.ndarray]:
    """``m`` and ``ell`` as float64 arrays of one shape, () or (rows,), or a clear error."""
    arrays = []
    for value, name, what in ((m, "m", "maximum"), (ell, "ell", "sum of exponentials")):
        if isinstance(value, (bool, np.bool_, str)):
            raise TypeError(f"{name} must be a number or an array of numbers (the running {what}); "
                            f"got {value!r}.")
        try:
            arr = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a number or an array of numbers (the running {what}); "
                            f"got {value!r}.") from None
        if arr.ndim > 1:
            raise ValueError(f"{name} must be a number or a 1-D array (one entry per row); "
                             f"got shape {arr.shape}.")
        arrays.append(arr)
    m, ell = arrays
    if m.shape != ell.shape:
        raise ValueError(f"m and ell must have the same shape (one entry per row); got {m.shape} and "
                         f"{ell.shape}.")
    if np.isnan(m).any() or (m == np.inf).any():
        raise ValueError(f"m (the running maximum) must be finite or -inf (nothing seen yet); got {m}.")
    if not np.isfinite(ell).all() or (ell < 0).any():
        raise ValueError(f"ell (the running sum of exponentials) must be finite and ≥ 0; got {ell}.")
    if ((m == -np.inf) & (ell != 0)).any():
        raise ValueError(f"Where m = -inf nothing has been seen yet, so ell must be 0 there; "
                         f"got m = {m}, ell = {ell}.")
    return np.atleast_1d(m), np.atleast_1d(ell)


@dataclass(frozen=True)
class OnlineSoftmax:
    """What :func:`online_softmax` returns.

    ``weights``: the softmax of the whole row; ``max`` and ``sum``: the final m and ℓ;
    ``maxes[i]``, ``sums[i]``: m and ℓ after chunk i (for plotting how they evolve).
    """

    weights: np.ndarray
    max: float
    sum: float
    maxes: np.ndarray
    sums: np.ndarray


def online_softmax(chunks: Iterable) -> OnlineSoftmax:
    """Softmax of one row of scores that arrives as a stream of chunks, in one pass for m and ℓ.

    ``chunks``: an iterable of 1-D score arrays (a list, or a generator), e.g.
    ``np.array_split(row, 4)``. While streaming, only the running maximum m and the
    running sum ℓ are kept (:func:`online_softmax_update`). The weights exp(s_j − m)/ℓ
    need the scores again: :func:`flash_attention` avoids that second look by
    carrying the weighted sum of values instead. Notebook 08.
    """
    if isinstance(chunks, np.ndarray) or not isinstance(chunks, Iterable):
        raise TypeError("chunks must be a list (or other iterable) of 1-D arrays, e.g. "
                        "np.array_split(row, 4); to take the softmax of a whole row use softmax(row).")
    m, ell = -np.inf, 0.0
    seen, maxes, sums = [], [], []
    for i, chunk in enumerate(chunks):
        if np.size(chunk) != 0:
            chunk = as_float_array(chunk, f"chunk {i}", allow_neg_inf=True)
        m, ell = online_softmax_update(m, ell, chunk)
        seen.append(chunk)
        maxes.append(m)
        sums.append(ell)
    if not seen:
        raise ValueError("chunks is empty: give at least one chunk of scores.")
    row = np.concatenate(seen).astype(np.float64)
    if row.size == 0:
        raise ValueError("every chunk is empty: give at least one score.")
    with np.errstate(over="ignore"):                   # s − m may round to −∞: its weight is 0
        weights = np.zeros_like(row) if ell == 0 else np.exp(row - m) / ell
    return OnlineSoftmax(weights, m, ell, np.array(maxes), np.array(sums))


# --------------------------------------------------------------------------- tiled attention
def _attend_block(q_blk, first_row: int, k, v, block_size: int, causal: bool,
                  on_tile: Callable | None = None) -> np.ndarray:
    """Output rows ``first_row …`` of attention for one block of (already scaled) queries.

    Walks over key tiles of ``block_size``, absorbing each with :func:`_absorb`. With
    ``causal``, tiles entirely above the diagonal are skipped and only tiles crossing it
    are masked. ``on_tile(k0, k1, m, ell, acc)`` is called after each tile (for
    :func:`flash_attention_steps`).
    """
    batch, n_rows = q_blk.shape[:-2], q_blk.shape[-2]
    last_row = first_row + n_rows - 1
    total = _accumulation_dtype(q_blk.dtype)            # float16 sums in float32, as softmax does
    m = np.full((*batch, n_rows, 1), -np.inf, dtype=q_blk.dtype)
    ell = np.zeros((*batch, n_rows, 1), dtype=total)
    acc = np.zeros((*batch, n_rows, v.shape[-1]), dtype=total)
    S = k.shape[-2]
    k_end = min(S, last_row + 1) if causal else S      # keys after the last row's position: all masked
    for k0 in range(0, k_end, block_size):
        k1 = min(k0 + block_size, k_end)
        with np.errstate(over="ignore", invalid="ignore"):
            tile = q_blk @ np.swapaxes(k[..., k0:k1, :], -1, -2)
        check_scores_finite(tile)                       # before masking adds −∞
        if causal and k1 - 1 > first_row:               # the tile crosses the diagonal
            above = np.arange(k0, k1)[None, :] > np.arange(first_row, last_row + 1)[:, None]
            np.putmask(tile, np.broadcast_to(above, tile.shape), -np.inf)
        m, ell, acc = _absorb(m, ell, tile, acc, v[..., k0:k1, :].astype(total, copy=False))
        del tile                                        # so that two tiles never coexist
        if on_tile is not None:
            on_tile(k0, k1, m, ell, acc)
    ell[ell == 0] = 1                                   # nothing to attend to: output 0, not NaN
    return (acc / ell).astype(q_blk.dtype, copy=False)


def _accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype ℓ and the output accumulator are summed in: float32 for float16 (as the plain path's
    softmax sums), the input's own dtype otherwise. A float16 sum over many keys would overflow."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _check_tile_memory(batch: tuple, n_queries: int, n_keys: int, d_v: int, block_size: int,
                       dtype: np.dtype) -> None:
    """Refuse at once (``SizeLimitError``) a tile, with its running state and output, too big to hold."""
    n_batch = float(np.prod(batch, dtype=np.float64))
    rows, cols = min(block_size, n_queries), min(block_size, n_keys)
    total = _accumulation_dtype(dtype).itemsize
    need = n_batch * (rows * cols * (dtype.itemsize + total + 1)     # the tile, its sum's copy, a mask
                      + rows * d_v * 2 * total + n_queries * d_v * dtype.itemsize)
    check_memory(need, f"flash_attention with block_size={block_size} ({rows} × {cols} scores per tile"
                       f"{f' for each of {int(n_batch)} batch items' if batch else ''}, "
                       f"{format_bytes(n_batch * rows * cols * dtype.itemsize)} a tile)",
                 "Use a smaller block_size (the default, default_block_size(), keeps a tile near 4 MB).")


def _prepare(q, k, v, causal, scale, block_size):
    q, k, v = check_qkv(q, k, v)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if block_size is None:
        block_size = default_block_size(int(np.prod(batch, dtype=np.int64)))
    block_size = check_positive_int(block_size, "block_size")
    causal = check_flag(causal, "causal")
    _check_tile_memory(batch, q.shape[-2], k.shape[-2], v.shape[-1], block_size, q.dtype)
    factor = q.dtype.type(check_scale(scale, q.shape[-1]))
    with np.errstate(over="ignore"):
        q = q * factor                                   # scale the L × d queries once, not every tile
    # Q with fewer (or size-1) batch dimensions than K and V: the running state and the output
    # take the broadcast batch shape, as the scores of the plain function do (a view, no copy).
    q = np.broadcast_to(q, (*batch, *q.shape[-2:]))
    return q, k, v, bool(causal), block_size, batch


def flash_attention(q, k, v, causal: bool = False, scale: float | None = None,
                    block_size: int | None = None) -> np.ndarray:
    """softmax(Q·Kᵀ·scale)·V computed tile by tile; never holds the L × S score matrix.

    Same shapes and result as ``scaled_dot_product_attention(q, k, v, causal=causal,
    scale=scale)[0]``: ``q (..., L, d_k)``, ``k (..., S, d_k)``, ``v (..., S, d_v)`` →
    ``(..., L, d_v)``, in the input's float dtype. Queries are taken ``block_size`` rows
    at a time, keys ``block_size`` columns at a time, so at most a
    ``block_size × block_size`` tile of scores exists at once (per batch entry); by default
    :func:`default_block_size` (1024 for one head). With ``causal=True`` tiles entirely
    above the diagonal are skipped. A query with nothing
    to attend to gets output 0. Raises ``ValueError`` if the scores Q·Kᵀ overflow the
    dtype. Notebook 08.
    """
    q, k, v, causal, block_size, batch = _prepare(q, k, v, causal, scale, block_size)
    L = q.shape[-2]
    out = np.empty((*batch, L, v.shape[-1]), dtype=q.dtype)
    for q0 in range(0, L, block_size):
        out[..., q0:q0 + block_size, :] = _attend_block(q[..., q0:q0 + block_size, :], q0, k, v,
                                                        block_size, causal)
    return out


@dataclass(frozen=True)
class TileStep:
    """The running state of a block of queries after one key tile (see :func:`flash_attention_steps`).

    ``keys``: the key positions of the tile (a ``range``); ``max`` and ``sum`` ``(rows,)``:
    m and ℓ so far; ``output (rows, d_v)``: acc / ℓ, the output if the keys stopped here.
    """

    keys: range
    max: np.ndarray
    sum: np.ndarray
    output: np.ndarray


def flash_attention_steps(q, k, v, causal: bool = False, scale: float | None = None,
                          block_size: int = 4, rows: range | None = None) -> list[TileStep]:
    """Replay :func:`flash_attention` for one block of queries, recording the state after each tile.

    ``q (L, d_k)``, ``k (S, d_k)``, ``v (S, d_v)`` (2-D: one sequence, one head);
    ``rows``: the query rows to follow (default the first block,
    ``range(0, min(block_size, L))``). Returns one :class:`TileStep` per key tile: watch
    the running maximum grow, the sum get rescaled, and the output converge to the
    naive result. Notebook 08.
    """
    q, k, v, causal, block_size, batch = _prepare(q, k, v, causal, scale, block_size)
    if batch:
        raise ValueError(f"flash_attention_steps follows one sequence: give 2-D Q, K, V "
                         f"(seq_len, d); got Q {q.shape}, K {k.shape}, V {v.shape}.")
    L = q.shape[0]
    rows = range(0, min(block_size, L)) if rows is None else rows
    if not isinstance(rows, range) or rows.step != 1 or len(rows) == 0 or rows.start < 0 or rows.stop > L:
        raise ValueError(f"rows must be a range of consecutive query positions within 0 … {L - 1}, "
                         f"e.g. range(0, 4); got {rows!r}.")
    steps = []

    def record(k0, k1, m, ell, acc):
        with np.errstate(invalid="ignore", divide="ignore"):
            output = np.where(ell > 0, acc / np.where(ell > 0, ell, 1), 0.0)
        steps.append(TileStep(range(k0, k1), m[:, 0].copy(), ell[:, 0].copy(), output))

    _attend_block(q[rows.start:rows.stop], rows.start, k, v, block_size, causal, on_tile=record)
    return steps

