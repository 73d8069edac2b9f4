"""The cost of attention against sequence length N: count it, then measure it (notebook 08).

Counting. Every query is compared with every key, so one head of self-attention over
N tokens computes N² scores. Two matrix products do the arithmetic: Q·Kᵀ and
weights·V, each N·N·d multiply-adds, so

    scores  = N² per head                      (1,000 tokens → 1,000,000 scores)
    FLOPs   = 4·N²·d per head                  (halved with a causal mask)
    memory  = N² · itemsize for the scores     (100,000 tokens in float32: 40 GB)

Measuring. :func:`measure` times one method at one N and records its peak memory;
:func:`measure_scaling` does it for several N with a progress bar and returns a
:class:`CostTable`, whose :meth:`~CostTable.slope` is the slope of the log-log line:
about 2 for time (N² work) and for the naive method's memory, about 1 or less for
the tiled method's memory (one fixed tile plus the N × d output). Methods:

    "naive numpy"     lessons_lib.low_memory_attention (holds one N × N buffer)
    "tiled numpy"     lessons_lib.flash_attention (one tile at a time)
    "torch SDPA"      lessons_lib.sdpa_attention on the CPU, torch's choice of kernel
    "torch SDPA math" the same with torch's reference ("math") kernel, which holds N × N

Memory is the peak the call allocates beyond its inputs (the output included):
measured with ``tracemalloc`` for numpy (exact, any OS) and as the peak resident set
for torch (Linux only; ``None`` elsewhere). Before a run, :func:`estimate_memory`
predicts the need and :func:`~lessons_lib._checks.check_memory` refuses a size that
would not fit a 2 GB machine. torch is imported only for the torch methods.
"""

from __future__ import annotations

import contextlib
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._checks import SizeLimitError, check_flag, check_memory, check_positive_int, check_seed, format_bytes
from ..core.flash import default_block_size
from .measurements import slope_verdict, time_ratio_verdict

METHODS = ("naive numpy", "tiled numpy", "torch SDPA", "torch SDPA math")
MB = 1_000_000         # a megabyte: decimal, as the course counts (format_bytes: 1 GB = 10⁹ bytes)
MIN_TIMING_S = 0.1     # at one N, keep timing fast methods until this long was spent in them ...
MAX_ROUNDS = 30        # ... but at most this many rounds
TORCH_METHODS = ("torch SDPA", "torch SDPA math")


# --------------------------------------------------------------------------- counting
def _count_args(n_queries, n_keys, n_heads, batch):
    n_queries = check_positive_int(n_queries, "n_queries (the sequence length N)")
    n_keys = n_queries if n_keys is None else check_positive_int(n_keys, "n_keys")
    return n_queries, n_keys, check_positive_int(n_heads, "n_heads"), check_positive_int(batch, "batch")


def score_count(n_queries: int, n_keys: int | None = None, *, n_heads: int = 1, batch: int = 1) -> int:
    """How many scores q_i·k_j attention computes: N_q · N_k per head (N² for self-attention).

    ``score_count(1_000)`` → 1,000,000; ``score_count(100_000)`` → 10,000,000,000.
    """
    n_queries, n_keys, n_heads, batch = _count_args(n_queries, n_keys, n_heads, batch)
    return batch * n_heads * n_queries * n_keys


def attention_flops(n_queries: int, d: int, *, n_keys: int | None = None, n_heads: int = 1,
                    batch: int = 1, causal: bool = False) -> float:
    """Floating-point operations of the two matrix products: 4 · N_q · N_k · d per head.

    Q·Kᵀ and weights·V are each N_q·N_k·d multiply-adds (2 FLOPs each). Softmax adds a
    few operations per score, O(N²) too but not counted, as is usual. ``causal`` halves
    the count: a causal kernel skips the masked half. ``d`` is the head dimension.
    """
    n_queries, n_keys, n_heads, batch = _count_args(n_queries, n_keys, n_heads, batch)
    d = check_positive_int(d, "d (the head dimension)")
    causal = check_flag(causal, "causal")
    flops = 4.0 * batch * n_heads * n_queries * n_keys * d
    return flops / 2 if causal else flops


def _itemsize(dtype) -> int:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a numpy float type such as 'float32'; got {dtype!r}.") from None
    if dt.kind != "f":
        raise TypeError(f"dtype must be a floating-point type such as 'float32'; got {dt}.")
    return dt.itemsize


def score_memory(n_queries: int, n_keys: int | None = None, *, n_heads: int = 1, batch: int = 1,
                 dtype="float32") -> int:
    """Bytes needed to hold the score matrix: N_q · N_k · itemsize per head.

    ``score_memory(100_000)`` → 40,000,000,000 bytes (float32): far more than a GPU holds.
    """
    return score_count(n_queries, n_keys, n_heads=n_heads, batch=batch) * _itemsize(dtype)


# --------------------------------------------------------------------------- estimating
def _as_list(values, name: str, example: str) -> list:
    """``values`` as a list, refusing one number or one string where a list of them is expected."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list, e.g. {name}={example}; got {values!r}. "
                        f"For a single one, put it in a list: {name}=[{values!r}].")
    return list(values)


def _check_method(method) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(repr(m) for m in METHODS)}; got {method!r}.")
    return method


def estimate_memory(method: str, n: int, d: int = 64, *, dtype="float32",
                    block_size: int | None = None) -> int:
    """Bytes one call of ``method`` at sequence length ``n`` will need, inputs included.

    Q, K, V and the output are 4·N·d numbers. On top: naive numpy holds the N × N
    weights; tiled numpy a block × block tile and a temporary; torch's math kernel about three
    N × N buffers; torch's fused (flash) CPU kernel small per-thread buffers.
    """
    method = _check_method(method)
    n = check_positive_int(n, "n (the sequence length)")
    d = check_positive_int(d, "d (the head dimension)")
    size = _itemsize(dtype)
    linear = 4 * n * d * size
    if method == "naive numpy":
        return linear + n * n * size
    if method == "tiled numpy":
        block = default_block_size() if block_size is None else block_size
        tile = min(check_positive_int(block, "block_size"), n)
        return linear + 2 * tile * tile * size      # the tile, and room for a temporary
    if method == "torch SDPA math":
        return linear + 3 * n * n * size
    return 2 * linear + 4 * 2**20           # torch SDPA (fused): blocked, per-thread buffers


_INSTEAD = {
    "naive numpy": "Use a shorter sequence, or 'tiled numpy' (flash_attention), which never holds "
                   "the N × N matrix.",
    "torch SDPA math": "Use a shorter sequence, or 'torch SDPA' (the fused kernel), which never holds "
                       "the N × N matrix.",
}


def check_fits(method: str, n: int, d: int = 64, *, dtype="float32",
               block_size: int | None = None) -> int:
    """Refuse (``SizeLimitError``) a run that would not fit comfortably; else return its estimate."""
    need = estimate_memory(method, n, d, dtype=dtype, block_size=block_size)
    check_memory(need, f"{method} attention at N = {n:,} (d = {d}, {np.dtype(dtype).name})",
                 _INSTEAD.get(method, "Use a shorter sequence."))
    return need


# --------------------------------------------------------------------------- measuring
@dataclass(frozen=True)
class Measurement:
    """One method at one sequence length: best time of ``repeats`` calls and peak memory.

    ``peak_bytes``: memory the call allocated beyond its inputs (output included), or
    ``None`` where it cannot be measured (torch outside Linux). ``input_bytes``: Q, K, V.
    ``memory_source``: "tracemalloc" (numpy) or "resident set" (torch). ``kernel``: the
    SDPA kernel torch ran, "" for numpy. ``block_size``: the tiled method's block, else None.
    """

    method: str
    n: int
    d: int
    dtype: str
    seconds: float
    peak_bytes: int | None
    input_bytes: int
    memory_source: str
    kernel: str = ""
    block_size: int | None = None
    threads: int | None = None     # threads the timing ran on (None: the libraries' defaults)

    @property
    def total_bytes(self) -> int | None:
        """Inputs plus peak extra memory: what attention at this N needs in all."""
        return None if self.peak_bytes is None else self.input_bytes + self.peak_bytes


@contextlib.contextmanager
def _threads(threads: int | None):
    """Run numpy's BLAS and torch on ``threads`` threads inside the block (None: leave them alone).

    On a shared machine (a classroom hub, Binder, a busy laptop) a multi-threaded matrix
    product can wait a whole scheduler time slice for a second core, so small sizes come out
    many times too slow and the slopes mean nothing. On one thread the times are steadier
    and the growth with N is the same.
    """
    if threads is None:
        yield
        return
    threads = check_positive_int(threads, "threads")
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads, user_api="blas"):
        if torch is not None:
            torch.set_num_threads(threads)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(before)


def _inputs(n: int, d: int, dtype, seed: int):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, d), dtype=np.float64).astype(dtype) for _ in range(3))


def method_runner(method: str, block_size: int | None) -> Callable:
    """``fn(q, k, v) -> (output, kernel)`` for ``method``."""
    if method == "naive numpy":
        from ..core.attention import low_memory_attention

        return lambda q, k, v: (low_memory_attention(q, k, v)[0], "")
    if method == "tiled numpy":
        from ..core.flash import flash_attention

        return lambda q, k, v: (flash_attention(q, k, v, block_size=block_size), "")
    from ..core.backends import sdpa_attention

    kernel = "math" if method == "torch SDPA math" else None

    def run(q, k, v):
        result = sdpa_attention(q, k, v, device="cpu", kernel=kernel)
        return result.output, result.kernel
    return run


def _traced_peak(fn: Callable) -> int:
    """Peak bytes numpy allocated while ``fn()`` ran (its result included), by tracemalloc."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
        del result
    finally:
        if started:
            tracemalloc.stop()
    return max(int(peak), 0)


def _status_kb(field_name: str) -> int:
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith(field_name))
    return int(line.split()[1])


def _release_free_heap() -> None:
    """Give freed heap memory back to the OS (glibc ``malloc_trim``), so reusing it shows in the RSS."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _resident_peak(fn: Callable) -> int | None:
    """Peak growth of the resident set while ``fn()`` ran (Linux: VmHWM reset first), else None.

    Without ``malloc_trim`` first, glibc would hand torch heap pages it already holds and a
    16 MB score matrix could show as 0 bytes.
    """
    _release_free_heap()
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")                    # reset the peak-RSS counter VmHWM to the current RSS
        before = _status_kb("VmRSS")
    except (OSError, StopIteration):
        return None
    result = fn()
    peak = (_status_kb("VmHWM") - before) * 1024
    del result
    return max(peak, 0)


def _peak_memory(method: str, fn: Callable) -> tuple[int | None, str]:
    if method in TORCH_METHODS:
        return _resident_peak(fn), "resident set"
    return _traced_peak(fn), "tracemalloc"


def measure(method: str, n: int, d: int = 64, *, dtype="float32", repeats: int = 3, seed: int = 0,
            block_size: int | None = None, memory: bool = True, threads: int | None = 1) -> Measurement:
    """Time ``method`` at sequence length ``n`` (best of ``repeats``) and measure its peak memory.

    One head, ``q, k, v`` of shape ``(n, d)`` drawn from ``seed``. Refuses at once
    (``SizeLimitError``) a size whose estimate exceeds the course's memory limit. Timed on
    ``threads`` threads (default 1, steady on a shared machine; None: the libraries' defaults).
    """
    return measure_runs([(_check_method(method), block_size)], n, d, dtype=dtype, repeats=repeats,
                         seed=seed, memory=memory, threads=threads)[0]


def measure_runs(runs, n, d, *, dtype, repeats, seed, memory, threads) -> list[Measurement]:
    """Every ``(method, block_size)`` of ``runs`` at one N on the same inputs, repeats interleaved.

    Interleaving (method A, B, C, A, B, C, …) keeps the ratios fair on a machine whose load
    changes while it measures. Fast sizes get more rounds than ``repeats`` (until about
    :data:`MIN_TIMING_S` has been spent, at most :data:`MAX_ROUNDS`), so that the best time
    is not one disturbed by another program. ``threads``: see :func:`_threads`. Each run is first
    checked against the memory limit.
    """
    repeats = check_positive_int(repeats, "repeats")
    seed = check_seed(seed, allow_generator=False)
    threads = None if threads is None else check_positive_int(threads, "threads")   # before any work
    for method, block in runs:
        check_fits(method, n, d, dtype=dtype, block_size=block)
    q, k, v = _inputs(n, d, dtype, seed)
    fns = [method_runner(method, block) for method, block in runs]
    kernels = [fn(q, k, v)[1] for fn in fns]                     # warm up, learn the kernel (imports torch)
    best = [float("inf")] * len(runs)
    spent, rounds = 0.0, 0
    with _threads(threads):
        while rounds < repeats or (spent < MIN_TIMING_S and rounds < MAX_ROUNDS):
            for i, fn in enumerate(fns):
                start = time.perf_counter()
                fn(q, k, v)
                elapsed = time.perf_counter() - start
                best[i], spent = min(best[i], elapsed), spent + elapsed
            rounds += 1
    results = []
    for (method, block), fn, seconds, kernel in zip(runs, fns, best, kernels):
        peak, source = _peak_memory(method, lambda fn=fn: fn(q, k, v)) if memory else (None, "not measured")
        block = (block or default_block_size()) if method == "tiled numpy" else None
        results.append(Measurement(method, n, d, np.dtype(dtype).name, seconds, peak, 3 * q.nbytes, source,
                                   kernel, block, threads))
    return results


@dataclass(frozen=True)
class BlockSizes:
    """Tiled numpy at one N for several block sizes, beside naive numpy (see :func:`measure_block_sizes`)."""

    naive: Measurement
    tiled: list[Measurement]

    @property
    def block_sizes(self) -> np.ndarray:
        return np.array([m.block_size for m in self.tiled])

    @property
    def time_ratios(self) -> np.ndarray:
        """Tiled time ÷ naive time per block size (< 1: the tiled method is faster)."""
        return np.array([m.seconds / self.naive.seconds for m in self.tiled])

    @property
    def memory_ratios(self) -> np.ndarray:
        """Tiled peak memory ÷ naive peak memory per block size."""
        return np.array([m.peak_bytes / self.naive.peak_bytes
                         if m.peak_bytes and self.naive.peak_bytes else np.nan for m in self.tiled])

    def verdict(self, block_size: int | None = None) -> str:
        """What this run says of one block size (default: the library's default block), in a sentence:
        "On this run, at N = 2,048, the tiled version with block 1024 took 1.25× the naive time: slower."
        """
        block = default_block_size() if block_size is None else check_positive_int(block_size, "block_size")
        if block not in self.block_sizes:
            raise ValueError(f"block {block} was not measured here; these were {self.block_sizes.tolist()}.")
        ratio = self.time_ratios[list(self.block_sizes).index(block)]
        return (f"On this run, at N = {self.naive.n:,}, the tiled version with block {block} took "
                f"{time_ratio_verdict(ratio)}.")

    def trend(self) -> str:
        """How this run's time ratio went with the block size, and where it was lowest, in a sentence:
        "On this run the tiled time ÷ the naive time was 2.41 at block 64, 1.63 at 128, …: lowest at block
        1024."

        The shape of that curve is a measurement like any other (on a busy machine it may fall, then rise), so
        the cell that measures prints it, and the lesson's prose describes no shape of its own. When the
        lowest is at a block of N or more, the one tile is the whole matrix, and the sentence says what that
        means.
        """
        ratios = ", ".join(f"{r:.2f} at {'block ' if i == 0 else ''}{b}"
                           for i, (b, r) in enumerate(zip(self.block_sizes, self.time_ratios)))
        best = int(self.block_sizes[int(np.argmin(self.time_ratios))])
        n = self.naive.n
        if best >= n:   # one tile, the whole matrix: the lowest time is where nothing is tiled
            return (f"On this run the tiled time ÷ the naive time was {ratios}: lowest at block {best}, "
                    f"where the one tile is the whole {n:,} × {n:,} matrix. On this run, at this N, tiles "
                    f"bought memory (the right panel), not time.")
        return f"On this run the tiled time ÷ the naive time was {ratios}: lowest at block {best}."

    def __str__(self) -> str:
        n = self.naive
        lines = [f"N = {n.n:,}, d = {n.d}, {n.dtype}: naive numpy {n.seconds * 1e3:.1f} ms, "
                 f"{format_bytes(n.peak_bytes or 0)}",
                 f"{'block':>6} {'ms':>9} {'× naive':>8} {'peak memory':>12} {'× naive':>8}"]
        for m, t, r in zip(self.tiled, self.time_ratios, self.memory_ratios):
            lines.append(f"{m.block_size:>6} {m.seconds * 1e3:>9.1f} {t:>8.2f} "
                         f"{format_bytes(m.peak_bytes or 0):>12} {r:>8.3f}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def measure_block_sizes(n: int = 2048, block_sizes: Sequence[int] = (32, 64, 128, 256, 512, 1024, 2048),
                        d: int = 64, *, dtype="float32", repeats: int = 3, seed: int = 0,
                        progress: bool = True, threads: int | None = 1) -> BlockSizes:
    """The block-size trade-off of ``flash_attention`` at one N: time and peak memory per block size.

    Small blocks hold little memory (a tile is block² scores) but pay numpy's per-call
    overhead once per tile, (N / block)² times; large blocks approach the naive method's
    memory. Measured interleaved with naive numpy on the same inputs, on ``threads`` threads.
    """
    blocks = [check_positive_int(b, "each block size")
              for b in _as_list(block_sizes, "block_sizes", "(64, 256, 1024)")]
    if not blocks:
        raise ValueError("Give at least one block size.")
    runs = [("naive numpy", None)] + [("tiled numpy", b) for b in blocks]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=1, desc=f"measuring {len(blocks)} block sizes at N = {n:,}", unit="N")
    try:
        results = measure_runs(runs, n, d, dtype=dtype, repeats=repeats, seed=seed, memory=True,
                                threads=threads)
        if bar is not None:
            bar.update()
    finally:
        if bar is not None:
            bar.close()
    return BlockSizes(results[0], results[1:])


def loglog_slope(x, y) -> float:
    """Slope of the least-squares line through (log x, log y): y ∝ x^slope.

    Time of an N² algorithm gives about 2, memory that grows like N about 1.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D and the same length; got shapes {x.shape} and {y.shape}.")
    if len(x) < 2 or len(np.unique(x)) < 2:
        raise ValueError("A slope needs at least two different sizes.")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and (x > 0).all() and (y > 0).all()):
        raise ValueError("A log-log slope needs positive, finite x and y.")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


@dataclass
class CostTable:
    """Measurements of several methods at several sequence lengths (from :func:`measure_scaling`)."""

    measurements: list[Measurement] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)   # messages of runs left out as too big

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(m.method for m in self.measurements))

    def sizes(self, method: str) -> np.ndarray:
        return np.array([m.n for m in self._of(method)])

    def seconds(self, method: str) -> np.ndarray:
        return np.array([m.seconds for m in self._of(method)])

    def memory(self, method: str, *, total: bool = False) -> np.ndarray:
        """Peak extra bytes per size (``total``: inputs included); NaN where not measured."""
        values = [m.total_bytes if total else m.peak_bytes for m in self._of(method)]
        return np.array([np.nan if b is None else b for b in values], dtype=float)

    def _of(self, method: str) -> list[Measurement]:
        rows = [m for m in self.measurements if m.method == method]
        if not rows:
            raise ValueError(f"No measurements of {method!r}; this table has {self.methods}.")
        return rows

    def slope(self, method: str, what: str = "time", *, min_n: int = 1, total: bool = False) -> float:
        """Log-log slope of time (``what="time"``) or memory (``"memory"``) against N, for N ≥ ``min_n``."""
        if what not in ("time", "memory"):
            raise ValueError(f"what must be 'time' or 'memory'; got {what!r}.")
        n = self.sizes(method)
        y = self.seconds(method) if what == "time" else self.memory(method, total=total)
        keep = (n >= min_n) & np.isfinite(y) & (y > 0)
        return loglog_slope(n[keep], y[keep])

    def slope_verdicts(self) -> str:
        """What this run measured, one line per method: the slope of its time with
        :func:`~lessons_lib.lab.measurements.slope_verdict` (what it means), and the slope of its memory.

        Times depend on the machine and its load, so this is the verdict of *this* run, printed by
        the cell that measured it; the lesson's prose says only what holds on every machine.
        """
        lines = []
        for method in self.methods:
            memory = self.memory(method)
            slope_memory = (f"memory ∝ N^{self.slope(method, 'memory'):.2f}"
                            if np.isfinite(memory).sum() >= 2 else "memory not measured")
            lines += [f"{method:12}  time   ∝ {slope_verdict(self.slope(method, 'time'))}",
                      f"{'':12}  {slope_memory}"]
        return "\n".join(lines)

    def fastest_verdict(self, n: int | None = None) -> str:
        """At one N (default: the largest), each method's time against naive numpy's on this run, fastest
        first: "At N = 2,048 on this run: torch SDPA 0.49× the naive time: faster; tiled numpy 0.92× …"."""
        sizes = sorted({m.n for m in self.measurements})
        if not sizes:
            raise ValueError("This table has no measurements.")
        n = sizes[-1] if n is None else check_positive_int(n, "n")
        rows = [r for r in self.rows() if r["N"] == n and r["method"] != "naive numpy"]
        if not rows or any(np.isnan(r["× naive"]) for r in rows):
            raise ValueError(f"N = {n:,} needs naive numpy and another method measured; sizes here: {sizes}.")
        rows.sort(key=lambda r: r["× naive"])
        return f"At N = {n:,} on this run: " + "; ".join(
            f"{r['method']} {time_ratio_verdict(r['× naive'])}" for r in rows) + "."

    def rows(self) -> list[dict]:
        """One dict per measurement, with the time ratio to the naive method at the same N."""
        naive = {m.n: m.seconds for m in self.measurements if m.method == "naive numpy"}
        return [{"method": m.method, "N": m.n, "ms": m.seconds * 1e3,
                 "× naive": m.seconds / naive[m.n] if m.n in naive else np.nan,
                 "peak memory": "–" if m.peak_bytes is None else format_bytes(m.peak_bytes),
                 "kernel": m.kernel} for m in self.measurements]

    def __str__(self) -> str:
        lines = [f"{'method':<16} {'N':>6} {'ms':>9} {'× naive':>8} {'peak memory':>12} kernel"]
        for r in self.rows():
            ratio = "" if np.isnan(r["× naive"]) else f"{r['× naive']:.2f}"
            lines.append(f"{r['method']:<16} {r['N']:>6} {r['ms']:>9.2f} {ratio:>8} "
                         f"{r['peak memory']:>12} {r['kernel']}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def default_methods() -> list[str]:
    """naive numpy, tiled numpy, and torch SDPA when PyTorch is installed (it is not on every Binder)."""
    from ..core.backends import torch_available

    return list(METHODS[:3] if torch_available() else METHODS[:2])


def measure_scaling(sizes: Sequence[int] = (256, 512, 1024, 2048), methods: Sequence[str] | None = None,
                    d: int = 64, *, dtype="float32", repeats: int = 3, seed: int = 0,
                    block_size: int | None = None, memory: bool = True, progress: bool = True,
                    too_big: str = "raise", threads: int | None = 1) -> CostTable:
    """Measure every method at every size (interleaved at each N), with a tqdm progress bar.

    Every (method, size) is checked against the memory limit before anything runs. With
    ``too_big="raise"`` a run that would not fit raises ``SizeLimitError`` at once, not
    after minutes of measuring; with ``too_big="skip"`` it is left out and its message
    kept in ``CostTable.refused``. ``methods`` defaults to :func:`default_methods`. Timed on
    ``threads`` threads: 1 by default, so that other programs on a shared machine disturb the
    times less (None: numpy's and torch's own defaults, faster on an idle multi-core machine).
    """
    sizes = sorted(check_positive_int(n, "each size") for n in _as_list(sizes, "sizes", "(256, 512, 1024)"))
    methods = default_methods() if methods is None else _as_list(methods, "methods", "['naive numpy']")
    methods = [_check_method(m) for m in methods]
    if not sizes or not methods:
        raise ValueError("Give at least one size and one method.")
    if too_big not in ("raise", "skip"):
        raise ValueError(f"too_big must be 'raise' or 'skip'; got {too_big!r}.")
    table = CostTable()
    plan = {}
    for n in sizes:
        plan[n] = []
        for method in methods:
            try:
                check_fits(method, n, d, dtype=dtype, block_size=block_size)
                plan[n].append(method)
            except SizeLimitError as exc:
                if too_big == "raise":
                    raise
                table.refused.append(str(exc))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sizes), desc="measuring", unit="size")
    try:
        for n in sizes:
            if bar is not None:
                bar.set_postfix_str(f"N = {n:,}")
            if plan[n]:
                runs = [(m, block_size) for m in plan[n]]
                table.measurements += measure_runs(runs, n, d, dtype=dtype, repeats=repeats, seed=seed,
                                                    memory=memory, threads=threads)
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    return table


__all__ = ["METHODS", "default_methods", "score_count", "attention_flops", "score_memory", "estimate_memory",
           "check_fits", "Measurement", "measure", "measure_scaling", "measure_block_sizes", "BlockSizes",
           "loglog_slope", "CostTable"]
