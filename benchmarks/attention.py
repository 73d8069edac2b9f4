"""Time and memory of attention against sequence length N: numpy reference vs torch SDPA on the CPU.

    python benchmarks/attention.py            # N = 256 … 4096, d = 64, float32
    python benchmarks/attention.py --quick    # N = 256 … 1024

All timings are measured side by side in one run (interleaved, best of
several repeats) and reported as ratios, so they compare like with like on
whatever machine runs them. Peak extra memory is measured in a fresh
subprocess per cell (peak RSS minus the RSS after the inputs exist), in units
of N² × itemsize: the score matrix itself is 1.0.

Also prints how long ``import lessons_lib`` takes and whether it pulled in torch.
Targets (issue 2): numpy within 1.5× of torch's math kernel at N = 2048;
numpy's peak extra memory ≤ 1.5 N² × itemsize; import ≤ 0.3 s without torch.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

D = 64
METHODS = ("numpy", "torch-default", "torch-math")


def make_inputs(n: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, D), dtype=np.float32) for _ in range(3))


def runner(method: str):
    """A zero-argument-per-call function computing attention with ``method``."""
    if method == "numpy":
        import lessons_lib as ll

        return lambda q, k, v: ll.scaled_dot_product_attention(q, k, v)[0]
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def run(q, k, v, backends):
        with sdpa_kernel(backends):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    backends = [SDPBackend.MATH] if method == "torch-math" else [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]
    return lambda q, k, v: run(q, k, v, backends)


def as_inputs(method, arrays):
    if method == "numpy":
        return arrays
    import torch

    return tuple(torch.from_numpy(a)[None, None] for a in arrays)  # (1, 1, N, d): the fused kernels want 4-D


def time_all(sizes, repeats):
    """Best-of-``repeats`` seconds for every (method, N), methods interleaved per repeat."""
    import torch

    torch.set_num_threads(torch.get_num_threads())
    fns = {m: runner(m) for m in METHODS}
    table = {}
    for n in sizes:
        arrays = make_inputs(n)
        inputs = {m: as_inputs(m, arrays) for m in METHODS}
        for m in METHODS:  # warm up
            fns[m](*inputs[m])
        best = {m: float("inf") for m in METHODS}
        reps = max(3, repeats if n <= 1024 else repeats // 2)
        for _ in range(reps):
            for m in METHODS:
                t = time.perf_counter()
                fns[m](*inputs[m])
                best[m] = min(best[m], time.perf_counter() - t)
        table[n] = best
    return table


def peak_memory(method: str, n: int) -> float:
    """Peak extra resident memory of one attention call, in bytes (fresh process)."""
    code = f"""
import sys, json
sys.path.insert(0, {str(__file__.rsplit('/', 2)[0])!r})
from benchmarks.attention import make_inputs, runner, as_inputs
fn = runner({method!r})
small = as_inputs({method!r}, make_inputs(64))
fn(*small)                                    # load code paths, thread pools
inputs = as_inputs({method!r}, make_inputs({n}))
def status_kb(field):
    line = next(x for x in open('/proc/self/status') if x.startswith(field))
    return int(line.split()[1])
open('/proc/self/clear_refs', 'w').write('5')   # reset the peak-RSS counter (VmHWM)
before = status_kb('VmRSS')
fn(*inputs)
print(json.dumps((status_kb('VmHWM') - before) * 1024))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def import_time() -> tuple[float, bool]:
    code = ("import time, sys; t = time.perf_counter(); import lessons_lib; "
            "print(time.perf_counter() - t, 'torch' in sys.modules)")
    best, torch_loaded = float("inf"), False
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
        best, torch_loaded = min(best, float(out[0])), torch_loaded or out[1] == "True"
    return best, torch_loaded


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1024 only")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-memory", action="store_true", help="skip the (slower) memory measurement")
    args = parser.parse_args(argv)
    sizes = [256, 512, 1024] if args.quick else [256, 512, 1024, 2048, 4096]

    seconds, torch_loaded = import_time()
    print(f"import lessons_lib: {seconds * 1000:.0f} ms (target ≤ 300 ms); imports torch: {torch_loaded}")
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; d = {D}, float32, one head\n")
    table = time_all(sizes, args.repeats)
    head = (f"{'N':>6} {'scores N²':>11} {'numpy ms':>9} {'SDPA ms':>8} {'math ms':>8} "
            f"{'numpy/math':>10} {'numpy/SDPA':>10} {'math/SDPA':>9}")
    if not args.no_memory:
        head += f" {'mem numpy':>9} {'mem SDPA':>8} {'mem math':>8}  (× N²·4 B)"
    print(head)
    for n, t in table.items():
        row = (f"{n:>6} {n * n:>11,} {t['numpy'] * 1e3:>9.2f} {t['torch-default'] * 1e3:>8.2f} "
               f"{t['torch-math'] * 1e3:>8.2f} {t['numpy'] / t['torch-math']:>10.2f} "
               f"{t['numpy'] / t['torch-default']:>10.2f} {t['torch-math'] / t['torch-default']:>9.2f}")
        if not args.no_memory:
            unit = n * n * 4
            mem = [peak_memory(m, n) / unit for m in METHODS]
            row += "".join(f" {x:>8.2f}" for x in mem)
        print(row, flush=True)
    print("\nSDPA = torch's default CPU kernel choice (flash for 4-D float32); math = its reference kernel.")
    print("Memory: peak resident set (VmHWM, reset just before the call) minus resident set before it.")
    return json.dumps({str(n): t for n, t in table.items()})


if __name__ == "__main__":
    main()
