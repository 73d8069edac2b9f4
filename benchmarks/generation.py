"""Generation with and without the KV cache (lesson 12): time per token and its ratio, in one run; the memory
of real models' caches.

    python benchmarks/generation.py            # contexts 256 … 4096, d_model = 128, 4 heads, float32
    python benchmarks/generation.py --quick    # contexts 256 … 1024

With the cache: ``ll.cached_attention`` generating a few tokens after a prompt of ``context`` tokens already
cached (time per token). Recomputing: causal multi-head attention over all context + 1 tokens. Both in one
process, on one BLAS thread, interleaved per context, the best of several repeats (``ll.measure_decode``), so
the ratio compares like with like on whatever machine runs it; the log-log slopes say how each grows. Then
one prompt read at once against one generated token over the same cache (``ll.measure_prefill_decode``):
operations per second and bytes per second. Last, the KV cache of each preset of the calculator, at its
context, beside its weights (``ll.kv_cache_memory``), and the published numbers it is held to.

Target: recomputing grows faster with the context than a step with the cache (its slope at least 0.3
higher), and the cache is at least 10× faster at the longest context. Prints tables and, as the last line,
the results as JSON.
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    import lessons_lib as ll

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="contexts 256 … 1024 only")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    contexts = (256, 512, 1024) if args.quick else (256, 512, 1024, 2048, 4096)
    times = ll.measure_decode(contexts, d_model=128, n_heads=4, repeats=args.repeats)
    print("one generated token, numpy float32, d_model = 128, 4 heads; best of", args.repeats)
    print(times)
    print(times.verdicts())
    cached, recomputed = times.slopes()
    ok = recomputed > cached + 0.3 and times.ratio >= 10
    print(f"target: recomputing's slope 0.3 above the cache's and ≥ 10× at {contexts[-1]:,} tokens: "
          f"{'met' if ok else 'NOT met'} (ratio {times.ratio:.0f}×)")
    phases = ll.measure_prefill_decode(8192, chunk=256, repeats=args.repeats)
    print()
    print(phases.arithmetic())
    print(phases.verdict())
    print()
    print("KV cache of each preset at its context, beside its weights:")
    memory = {}
    for name in ll.PRESETS:
        m = ll.kv_cache_memory(name)
        memory[name] = {"tokens": m.tokens, "dtype": m.dtype, "kv_bytes": m.bytes, "per_token": m.per_token,
                        "weights_bytes": m.weights_bytes}
        print(f"  {m.formula()}")
        for line in ll.published_comparison(name):
            print(f"    {line}")
    print(json.dumps({
        "contexts": list(map(int, times.contexts)), "cached_ms": [1e3 * t for t in times.cached],
        "recomputed_ms": [1e3 * t for t in times.recomputed], "ratio": times.ratio,
        "slopes": {"cached": cached, "recomputed": recomputed}, "target_met": ok, "phases": phases.rates,
        "memory": memory,
    }))


if __name__ == "__main__":
    main()
