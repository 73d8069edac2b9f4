"""The course's SDPA path on a CUDA GPU: TFLOP/s and peak memory against naive torch attention.

    python benchmarks/gpu_sdpa.py                     # N = 1K … 32K, d = 64 and 128, bf16, batch×heads = 32
    python benchmarks/gpu_sdpa.py --quick             # N = 1K … 8K, d = 128
    python benchmarks/gpu_sdpa.py --out benchmarks/results

What it measures, for every N, d and causal/non-causal:

* ``lessons_lib.sdpa_attention`` (the course's path: torch SDPA, torch picks the kernel and
  the result says which: flash, cuDNN, memory-efficient or math) on bf16 tensors of shape
  (batch, heads, N, d) already on the GPU;
* naive torch attention (Q·Kᵀ·scale, softmax, ·V as three separate operations, the N × N
  matrix in GPU memory), where it fits;
* time per call (CUDA events, median of several calls after warm-up), throughput in
  TFLOP/s counting 4·N²·d floating-point operations per head (the two matrix products),
  halved for causal, and peak GPU memory beyond the inputs (``torch.cuda.max_memory_allocated``).

It also checks the path against float32 naive attention at a small size, and measures a
large bf16 matrix product for the GPU's matrix rate, to put the attention TFLOP/s beside it: at the end
it prints what share of that rate attention reached at N = 8192, d = 128, non-causal.

On a machine without CUDA (or without torch) it prints why and exits with status 0.
Results go to ``OUT/gpu_sdpa.json`` and ``OUT/gpu_sdpa.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BATCH, HEADS = 4, 8          # batch × heads = 32


def cuda_or_exit():
    try:
        import torch
    except ImportError:
        print("gpu_sdpa: torch is not installed; this benchmark needs PyTorch with CUDA. Nothing measured.")
        raise SystemExit(0) from None
    if not torch.cuda.is_available():
        print(f"gpu_sdpa: no CUDA GPU on this machine (torch {torch.__version__}); nothing measured. "
              f"Run it on a machine with an NVIDIA GPU: python benchmarks/gpu_sdpa.py")
        raise SystemExit(0)
    return torch


def attention_flops(n: int, d: int, causal: bool) -> float:
    from lessons_lib.lab.cost import attention_flops as flops

    return flops(n, d, n_heads=HEADS, batch=BATCH, causal=causal)


def naive_attention(torch, q, k, v, causal: bool):
    scores = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    if causal:
        n = q.shape[-2]
        future = ~torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def synchronize(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def time_call(torch, fn, device: str = "cuda", *, warmup: int = 3, calls: int = 10) -> float:
    """Median seconds per call: CUDA events around each call (wall clock on the CPU dry run)."""
    import time

    for _ in range(warmup):
        fn()
    synchronize(torch, device)
    times = []
    for _ in range(calls):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def peak_extra_bytes(torch, fn, device: str = "cuda") -> int | None:
    """Peak GPU memory allocated by ``fn()`` beyond what was allocated before (None on the CPU)."""
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return int(peak)


def naive_fits(torch, n: int, d: int, device: str) -> tuple[bool, float]:
    """Naive attention holds about three (batch, heads, N, N) bf16 buffers: does that fit free memory?"""
    need = 3 * BATCH * HEADS * n * n * 2 + 8 * BATCH * HEADS * n * d * 2
    free = torch.cuda.mem_get_info()[0] if device == "cuda" else 2 * 2**30
    return need < 0.8 * free, need


def matmul_rate(torch, device: str, n: int = 8192) -> float:
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    seconds = time_call(torch, lambda: a @ b, device)
    return 2 * n**3 / seconds / 1e12


def correctness(torch, ll, device: str) -> float:
    """Max |difference| between the path in bf16 and float32 naive attention, at N = 512."""
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(2, 4, 512, 64, device=device, generator=gen) for _ in range(3))
    ours = ll.sdpa_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), device=device).output.float()
    return float((ours - naive_attention(torch, q, k, v, False)).abs().max())


def measure_row(torch, ll, n: int, d: int, causal: bool, device: str) -> dict:
    """One (N, d, causal) cell: the course's path and naive attention on the same bf16 inputs."""
    gen = torch.Generator(device=device).manual_seed(n + d)
    q, k, v = (torch.randn(BATCH, HEADS, n, d, device=device, dtype=torch.bfloat16, generator=gen)
               for _ in range(3))
    flops = attention_flops(n, d, causal)
    row = {"n": n, "d": d, "causal": causal, "flops": flops}

    def ours():
        return ll.sdpa_attention(q, k, v, causal=causal, device=device).output

    def naive():
        return naive_attention(torch, q, k, v, causal)
    try:
        result = ll.sdpa_attention(q, k, v, causal=causal, device=device)
        row["kernel"], row["device"] = result.kernel, result.device
        row["ours_s"] = time_call(torch, ours, device)
        row["ours_tflops"] = flops / row["ours_s"] / 1e12
        row["ours_peak_bytes"] = peak_extra_bytes(torch, ours, device)
    except Exception as exc:  # report it, keep measuring the rest
        row["ours_error"] = f"{type(exc).__name__}: {exc}"
    fits, need = naive_fits(torch, n, d, device)
    if fits:
        row["naive_s"] = time_call(torch, naive, device, calls=5)
        row["naive_tflops"] = flops / row["naive_s"] / 1e12
        row["naive_peak_bytes"] = peak_extra_bytes(torch, naive, device)
    else:
        row["naive_skipped"] = f"needs about {need / 2**30:.0f} GB"
    return row


def run(sizes, dims, causals, device: str = "cuda") -> dict:
    torch = cuda_or_exit() if device == "cuda" else __import__("torch")
    import lessons_lib as ll

    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        name, memory = props.name, round(props.total_memory / 2**30, 1)
    else:
        name, memory = f"CPU dry run ({platform.processor() or platform.machine()})", None
    info = {"gpu": name, "memory_gb": memory, "torch": torch.__version__,
            "cuda": torch.version.cuda, "python": platform.python_version(),
            "batch": BATCH, "heads": HEADS, "dtype": "bfloat16"}
    print(f"{info['gpu']} ({info['memory_gb']} GB), torch {info['torch']}, CUDA {info['cuda']}; "
          f"batch {BATCH} × heads {HEADS}, bf16")
    info["bf16_matmul_tflops"] = matmul_rate(torch, device, 8192 if device == "cuda" else 512)
    print(f"bf16 matrix product: {info['bf16_matmul_tflops']:.1f} TFLOP/s")
    try:
        info["max_abs_error_vs_fp32_naive"] = correctness(torch, ll, device)
        print(f"path in bf16 vs float32 naive at N = 512: max |difference| "
              f"{info['max_abs_error_vs_fp32_naive']:.3g}\n")
    except Exception as exc:
        info["max_abs_error_vs_fp32_naive"] = f"{type(exc).__name__}: {exc}"
        print(f"path in bf16 could not be checked: {info['max_abs_error_vs_fp32_naive']}\n")
    rows = []
    print(f"{'N':>6} {'d':>4} {'causal':>6} {'kernel':>16} {'ours ms':>9} {'TFLOP/s':>8} {'peak MB':>9} "
          f"{'naive ms':>9} {'TFLOP/s':>8} {'peak MB':>9} {'naive÷ours':>10}")
    for d in dims:
        for causal in causals:
            for n in sizes:
                rows.append(measure_row(torch, ll, n, d, causal, device))
                print(format_row(rows[-1]), flush=True)
                if device == "cuda":
                    torch.cuda.empty_cache()
    info["rows"] = rows
    return info


def format_row(r) -> str:
    def f(key, scale=1.0, fmt="{:>9.2f}", width=9):
        return fmt.format(r[key] * scale) if r.get(key) is not None else f"{'–':>{width}}"
    if "ours_error" in r:
        ours = f"{'error':>16} {r['ours_error'][:40]}"
    else:
        ours = (f"{r['kernel']:>16} {f('ours_s', 1e3)} {f('ours_tflops', 1, '{:>8.0f}', 8)} "
                f"{f('ours_peak_bytes', 2**-20, '{:>9.0f}')}")
    naive = (f"{f('naive_s', 1e3)} {f('naive_tflops', 1, '{:>8.0f}', 8)} "
             f"{f('naive_peak_bytes', 2**-20, '{:>9.0f}')}"
             if "naive_s" in r else f"{'skipped: ' + r['naive_skipped']:>28}")
    ratio = f"{r['naive_s'] / r['ours_s']:>10.1f}" if "naive_s" in r and "ours_s" in r else f"{'–':>10}"
    return f"{r['n']:>6} {r['d']:>4} {str(r['causal']):>6} {ours} {naive} {ratio}"


def markdown(info) -> str:
    lines = [f"# SDPA on {info['gpu']}: the course's path against naive torch attention",
             "",
             f"torch {info['torch']}, CUDA {info['cuda']}, bf16, "
             f"batch {info['batch']} × heads {info['heads']}. "
             f"FLOPs = 4·N²·d per head (halved for causal). bf16 matrix product rate on this GPU: "
             f"{info['bf16_matmul_tflops']:.0f} TFLOP/s. Max |difference| against float32 naive attention "
             f"at N = 512: {info['max_abs_error_vs_fp32_naive']}.",
             "",
             "| N | d | causal | kernel | ours ms | ours TFLOP/s | ours peak MB | naive ms | naive TFLOP/s "
             "| naive peak MB | naive ÷ ours |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in info["rows"]:
        def cell(key, scale=1.0, fmt="{:.1f}"):
            return fmt.format(r[key] * scale) if r.get(key) is not None else "–"
        ratio = f"{r['naive_s'] / r['ours_s']:.1f}" if "naive_s" in r and "ours_s" in r else "–"
        kernel = r.get("kernel", "error: " + r.get("ours_error", "")[:60])
        naive_ms = cell("naive_s", 1e3) if "naive_s" in r else r.get("naive_skipped", "–")
        lines.append(f"| {r['n']} | {r['d']} | {r['causal']} | {kernel} | {cell('ours_s', 1e3, '{:.2f}')} "
                     f"| {cell('ours_tflops', 1, '{:.0f}')} | {cell('ours_peak_bytes', 2**-20, '{:.0f}')} "
                     f"| {naive_ms} | {cell('naive_tflops', 1, '{:.0f}')} "
                     f"| {cell('naive_peak_bytes', 2**-20, '{:.0f}')} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1K … 8K, d = 128 only")
    parser.add_argument("--cpu-dry-run", action="store_true",
                        help="the same code on the CPU at N = 256, 512 (checks the script; "
                             "measures nothing of interest)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"),
                        help="folder for gpu_sdpa.json and gpu_sdpa.md (default benchmarks/results)")
    args = parser.parse_args(argv)
    sizes = [1024, 2048, 4096, 8192] if args.quick else [1024, 2048, 4096, 8192, 16384, 32768]
    dims = [128] if args.quick else [64, 128]
    if args.cpu_dry_run:
        info = run([256, 512], [64], [False, True], device="cpu")
        args.out = args.out / "cpu-dry-run" if args.out == Path("benchmarks/results") else args.out
    else:
        info = run(sizes, dims, [False, True])
    largest = [r for r in info["rows"] if r["n"] == 8192 and r["d"] == 128 and not r["causal"]]
    if largest and "ours_tflops" in largest[0]:
        got = largest[0]["ours_tflops"]
        share = got / info["bf16_matmul_tflops"]
        print(f"\nN = 8192, d = 128, non-causal: {got:.0f} TFLOP/s, {share:.0%} of this GPU's bf16 "
              "matrix-product rate")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_sdpa.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    (args.out / "gpu_sdpa.md").write_text(markdown(info), encoding="utf-8")
    print(f"wrote {args.out / 'gpu_sdpa.json'} and {args.out / 'gpu_sdpa.md'}")


if __name__ == "__main__":
    main()
