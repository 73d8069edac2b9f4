"""The course's torch path against torch SDPA called directly, on the CPU.

    python benchmarks/backends.py            # N = 512 … 4096, d = 64, float32, 8 heads
    python benchmarks/backends.py --quick    # N = 512 … 1024

``lessons_lib.sdpa_attention`` checks its inputs (shapes, dtypes, NaN/inf, masks),
moves numpy arrays to torch, asks torch which kernel it will run, runs SDPA and
checks the output for overflow. This measures what that costs against
``torch.nn.functional.scaled_dot_product_attention`` on ready tensors, and which
kernel our path picks. Both run in one process, interleaved, median of several
repeats, so the ratio compares like with like on whatever machine runs it.

Target: our CPU path picks the flash kernel and is within 1.1× of SDPA
called directly. Prints a table and, as the last line, the results as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

D, HEADS = 64, 8


def measure(n: int, repeats: int) -> dict:
    import numpy as np
    import torch

    import lessons_lib as ll

    rng = np.random.default_rng(n)
    q, k, v = (rng.standard_normal((HEADS, n, D), dtype=np.float32) for _ in range(3))
    tq, tk, tv = (torch.from_numpy(a)[None] for a in (q, k, v))  # (1, heads, N, d): ready tensors

    def ours():
        return ll.sdpa_attention(q, k, v, device="cpu")

    def direct():
        return torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)

    kernel = ours().kernel
    np.testing.assert_allclose(ours().output, direct()[0].numpy(), rtol=1e-5, atol=1e-6)
    times = {"ours": [], "direct": []}
    for _ in range(repeats):  # interleaved, so both see the same machine load
        for name, fn in (("direct", direct), ("ours", ours)):
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    ours_s, direct_s = statistics.median(times["ours"]), statistics.median(times["direct"])
    return {"N": n, "kernel": kernel, "ours_ms": 1e3 * ours_s, "direct_ms": 1e3 * direct_s,
            "ratio": ours_s / direct_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 512 and 1024 only")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    sizes = (512, 1024) if args.quick else (512, 1024, 2048, 4096)
    rows = [measure(n, args.repeats) for n in sizes]
    print(f"sdpa_attention (numpy in, numpy out) vs torch SDPA on tensors, CPU, float32, "
          f"{HEADS} heads, d = {D}; median of {args.repeats}")
    print(f"{'N':>6} {'kernel':>8} {'ours ms':>9} {'direct ms':>10} {'ratio':>6}")
    for r in rows:
        print(f"{r['N']:>6} {r['kernel']:>8} {r['ours_ms']:>9.2f} {r['direct_ms']:>10.2f} {r['ratio']:>6.3f}")
    worst = max(r["ratio"] for r in rows)
    flash = all(r["kernel"] == "flash" for r in rows)
    print(f"target: flash kernel ({'yes' if flash else 'NO'}), ratio ≤ 1.1 (worst {worst:.3f})")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
