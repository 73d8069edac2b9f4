"""Slider move → message to the browser, Python side, for the explorers of notebooks 06 and 07.

For each explorer, each slider is moved the way a learner drags it (one step at a time,
back and forth); every move is one ``explorer.set(...)``. Reported per slider: the median
and the largest time the kernel spends (computing with the library and setting the live
figures' traits, ``last_update_ms``) and the bytes it sends per move (every comm message
of every figure: JSON state plus binary buffers). What the browser then draws is measured
by benchmarks/key_press.py (key press → picture) and recorded by the browser tests.

Budget: head grid, 8 heads × 32 tokens, ≤ 32 kB per move; key press → all heads
redrawn, median ≤ 60 ms in the browser (the kernel's part here should be a small share of it).

Run: ``.venv/bin/python benchmarks/explorers_06_07.py`` (a few seconds). Prints; asserts nothing.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer
from lessons_lib.explorers.lesson07_causal_masking import CausalMaskExplorer


def count_bytes(widgets_) -> list[int]:
    """Patch each widget's comm to add the size of every message it sends to a shared counter."""
    total = [0]
    for w in widgets_:
        real = w.comm.send

        def spy(data=None, metadata=None, buffers=None, _real=real):
            total[0] += len(json.dumps(data, default=str)) + sum(memoryview(b).nbytes for b in buffers or [])
            return _real(data=data, metadata=metadata, buffers=buffers)
        w.comm.send = spy
    return total


def sweep(explorer, name: str, values: list, figures: list) -> dict:
    total = count_bytes(figures)
    times, sizes = [], []
    for value in values:
        before = total[0]
        start = time.perf_counter()
        explorer.set(**{name: value})
        times.append((time.perf_counter() - start) * 1000)
        sizes.append(total[0] - before)
    return {"slider": name, "moves": len(values), "median_ms": statistics.median(times), "max_ms": max(times),
            "median_kB": statistics.median(sizes) / 1024, "max_kB": max(sizes) / 1024}


def main() -> None:
    rows = []
    heads = HeadGridExplorer(n_heads=8, d_model=64, seq_len=32)
    view = [heads.view]
    rows.append(("head grid, 8 × 32", sweep(heads, "n_heads", [4, 8, 16, 8, 4, 8] * 3, view)))
    heads.set(n_heads=8)
    rows.append(("head grid, 8 × 32", sweep(heads, "seq_len", [31, 32, 31, 30, 31, 32] * 3, view)))
    rows.append(("head grid, 8 × 32", sweep(heads, "d_model", [32, 64, 128, 64] * 3, view)))
    causal = CausalMaskExplorer(seq_len=16, query=8)
    figs = list(causal.figures.values()) + [causal.table]
    rows.append(("causal mask, 16 tokens", sweep(causal, "query", [7, 8, 9, 8] * 4, figs)))
    rows.append(("causal mask, 16 tokens", sweep(causal, "seq_len", [15, 16] * 6, figs)))
    head = ("explorer", "slider", "moves", "median ms", "max ms", "median kB", "max kB")
    print(f"{head[0]:24}{head[1]:10}" + "".join(f"{h:>{len(h) + 2}}" for h in head[2:]))
    for label, r in rows:
        print(f"{label:24}{r['slider']:10}{r['moves']:>7}{r['median_ms']:>11.1f}{r['max_ms']:>8.1f}"
              f"{r['median_kB']:>11.1f}{r['max_kB']:>8.1f}")


if __name__ == "__main__":
    main()
