"""Time and memory of attention against sequence length N on the CPU: naive numpy, tiled numpy, torch SDPA.

    python benchmarks/attention.py              # N = 512 … 16384, d = 64, float32, one head
    python benchmarks/attention.py --quick      # N = 512 … 2048
    python benchmarks/attention.py --blocks     # only the block-size trade-off of the tiled method
    python benchmarks/attention.py --json out.json
    python benchmarks/attention.py --threads 1  # time on one thread (steadier on a shared machine)

Methods (lessons_lib.lab.cost): naive numpy (``scaled_dot_product_attention``, holds N × N),
tiled numpy (``flash_attention`` at its default block size), torch SDPA through the
course's path (``sdpa_attention``, torch's choice of kernel: flash on the CPU) and torch
SDPA with the math kernel. All methods at one N run on the same inputs, interleaved, best
of several repeats, so the printed ratios compare like with like on whatever machine
runs them. Peak memory is what one call allocates beyond its inputs (the output
included): tracemalloc for numpy, the peak resident set for torch.

Also: ``import lessons_lib`` time, the course's torch path against calling
``torch.nn.functional.scaled_dot_product_attention`` directly, and the block-size
trade-off (time and memory against block size) at N = 2048 and 8192.

Bars: tiled at N = 8192 no slower than naive, with under 32 MB extra memory
(naive needs ≥ 256 MB); tiled at N = 16384 under 64 MB; the torch path picks the flash
CPU kernel and is within 1.1× of SDPA called directly. Naive at N = 16384 needs 1 GB,
above the course's default limit, so this script raises LESSONS_MEMORY_LIMIT_MB to 4096
unless it is set.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LESSONS_MEMORY_LIMIT_MB", "4096")

D = 64
MB = 2**20


def import_time() -> tuple[float, bool]:
    code = ("import time, sys; t = time.perf_counter(); import lessons_lib; "
            "print(time.perf_counter() - t, 'torch' in sys.modules)")
    best, torch_loaded = float("inf"), False
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
        best, torch_loaded = min(best, float(out[0])), torch_loaded or out[1] == "True"
    return best, torch_loaded


def repeats_for(n: int) -> int:
    return 5 if n <= 2048 else 3 if n <= 4096 else 1


def scaling(sizes, methods, threads=None) -> dict:
    """One row per N: every method that fits the memory limit, measured interleaved."""
    from lessons_lib.lab import cost

    rows = {}
    head = (f"{'N':>6} " + " ".join(f"{m + ' ms':>16}" for m in methods) + "   "
            + " ".join(f"{m.split()[0] + '/' + m.split()[-1] + '÷naive':>14}" for m in methods[1:])
            + "   peak MB: " + " ".join(f"{m:>15}" for m in methods))
    print(head)
    for n in sizes:
        table = cost.measure_scaling([n], methods, D, repeats=repeats_for(n), progress=False, too_big="skip",
                                     threads=threads)
        got = {x.method: x for x in table.measurements}
        rows[n] = {m: {"seconds": x.seconds, "peak_bytes": x.peak_bytes, "kernel": x.kernel}
                   for m, x in got.items()}
        naive = got.get("naive numpy")

        def ms(m):
            return f"{got[m].seconds * 1e3:>16.1f}" if m in got else f"{'refused':>16}"

        def ratio(m):
            return f"{got[m].seconds / naive.seconds:>14.2f}" if m in got and naive else f"{'–':>14}"

        def mem(m):
            peak = got[m].peak_bytes if m in got else None
            return f"{peak / MB:>15.1f}" if peak is not None else f"{'–':>15}"
        print(f"{n:>6} " + " ".join(ms(m) for m in methods) + "   "
              + " ".join(ratio(m) for m in methods[1:]) + "   peak MB: " + " ".join(mem(m) for m in methods),
              flush=True)
    return rows


def slopes(rows, methods) -> dict:
    from lessons_lib.lab.cost import loglog_slope

    out = {}
    for m in methods:
        ns = [n for n in rows if m in rows[n]]
        if len(ns) < 2:
            continue
        t = loglog_slope(ns, [rows[n][m]["seconds"] for n in ns])
        peaks = [(n, rows[n][m]["peak_bytes"]) for n in ns if rows[n][m]["peak_bytes"]]
        mem = loglog_slope(*zip(*peaks)) if len(peaks) >= 2 else float("nan")
        out[m] = {"time": t, "memory": mem}
        print(f"  {m:<16} time ∝ N^{t:.2f}   memory ∝ N^{mem:.2f}")
    return out


def torch_path_vs_direct(sizes, repeats: int = 5) -> dict:
    """The course's sdpa_attention (numpy in and out) against torch's SDPA on ready 4-D tensors."""
    import numpy as np
    import torch

    import lessons_lib as ll

    print(f"{'N':>6} {'direct ms':>10} {'ours ms':>9} {'ours÷direct':>12}  kernel")
    out = {}
    for n in sizes:
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((n, D), dtype=np.float32) for _ in range(3))
        tq, tk, tv = (torch.from_numpy(a)[None, None] for a in (q, k, v))
        fns = {"direct": lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv),
               "ours": lambda: ll.sdpa_attention(q, k, v, device="cpu")}
        kernel = fns["ours"]().kernel
        fns["direct"]()
        best = dict.fromkeys(fns, float("inf"))
        for _ in range(repeats if n <= 4096 else 3):
            for name, fn in fns.items():
                t = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t)
        ratio = best["ours"] / best["direct"]
        out[n] = {"direct": best["direct"], "ours": best["ours"], "ratio": ratio, "kernel": kernel}
        print(f"{n:>6} {best['direct'] * 1e3:>10.2f} {best['ours'] * 1e3:>9.2f} {ratio:>12.2f}  {kernel}",
              flush=True)
    return out


def block_sizes(sizes, threads=None) -> dict:
    from lessons_lib.lab import cost

    out = {}
    for n in sizes:
        blocks = [b for b in (32, 64, 128, 256, 512, 1024, 2048) if b <= n and (n <= 4096 or b >= 64)]
        result = cost.measure_block_sizes(n, blocks, D, repeats=repeats_for(n), progress=False,
                                          threads=threads)
        print(result, "\n", flush=True)
        out[n] = {"naive_seconds": result.naive.seconds, "naive_peak_bytes": result.naive.peak_bytes,
                  "blocks": {int(m.block_size): {"seconds": m.seconds, "peak_bytes": m.peak_bytes}
                             for m in result.tiled}}
    return out


def bars(rows, direct) -> None:
    def get(n, m, key):
        return rows.get(n, {}).get(m, {}).get(key)

    print("\nThe bars (this run):")
    n = 8192
    naive_t, tiled_t = get(n, "naive numpy", "seconds"), get(n, "tiled numpy", "seconds")
    naive_m, tiled_m = get(n, "naive numpy", "peak_bytes"), get(n, "tiled numpy", "peak_bytes")
    if naive_t and tiled_t:
        print(f"  tiled ÷ naive time at N = 8192: {tiled_t / naive_t:.2f} (bar ≤ 1)  "
              f"{'met' if tiled_t <= naive_t else 'NOT met'}")
    if tiled_m is not None and naive_m is not None:
        print(f"  tiled peak at N = 8192: {tiled_m / MB:.1f} MB (bar < 32 MB), naive {naive_m / MB:.0f} MB "
              f"(≥ 256 MB)  {'met' if tiled_m < 32 * MB and naive_m >= 256 * MB else 'NOT met'}")
    tiled_16k = get(16384, "tiled numpy", "peak_bytes")
    if tiled_16k is not None:
        print(f"  tiled peak at N = 16384: {tiled_16k / MB:.1f} MB (bar < 64 MB)  "
              f"{'met' if tiled_16k < 64 * MB else 'NOT met'}")
    if direct:
        worst = max(x["ratio"] for x in direct.values())
        kernels = {x["kernel"] for x in direct.values()}
        print(f"  torch path ÷ direct SDPA: worst {worst:.2f} (bar ≤ 1.1), "
              f"kernel {', '.join(sorted(kernels))}  "
              f"{'met' if worst <= 1.1 and kernels == {'flash'} else 'NOT met'}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 2048 only")
    parser.add_argument("--blocks", action="store_true", help="only the block-size trade-off")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument("--threads", type=int, default=None,
                        help="time on this many threads (default: numpy's and torch's own)")
    args = parser.parse_args(argv)
    from lessons_lib.lab.cost import METHODS

    sizes = [512, 1024, 2048] if args.quick else [512, 1024, 2048, 4096, 8192, 16384]
    result: dict = {"d": D, "dtype": "float32", "memory_limit_mb": os.environ["LESSONS_MEMORY_LIMIT_MB"],
                    "threads": args.threads}
    if not args.blocks:
        seconds, torch_loaded = import_time()
        print(f"import lessons_lib: {seconds * 1000:.0f} ms (target ≤ 300 ms); imports torch: {torch_loaded}")
        import torch

        threads = args.threads or f"{torch.get_num_threads()} (torch), numpy's BLAS default"
        print(f"torch {torch.__version__}, threads: {threads}; d = {D}, float32, one head\n")
        result["scaling"] = scaling(sizes, METHODS, args.threads)
        print("\nlog-log slopes over the sizes above:")
        result["slopes"] = slopes(result["scaling"], METHODS)
        print("\nThe course's torch path (sdpa_attention, numpy in/out) vs torch SDPA called directly:")
        result["torch_path"] = torch_path_vs_direct([s for s in sizes if s <= 8192])
        bars(result["scaling"], result["torch_path"])
    print("\nBlock-size trade-off of the tiled method (flash_attention):")
    result["block_sizes"] = block_sizes([2048] if args.quick else [2048, 8192], args.threads)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
        print(f"wrote {args.json}")
    return result


if __name__ == "__main__":
    main()
