"""How long a slider move takes to redraw each explorer, Python side (no assertions; prints a table).

For every explorer and seq_len 32 and 128 (where the explorer has a seq_len slider;
the others show their own fixed sentence), this moves each slider the way a learner
would: d_k up and down over all its values, seq_len by ±1 around the size, the other
controls over a few values. Each move is one ``explorer.set(...)`` and is timed by
the explorer itself (``last_update_ms``: computing, drawing, PNG encoding, setting
the ``Image`` widgets). Reported: median and 90th percentile over all moves, cache
misses included (a new colour range or a new set of labels costs one full draw).
Also the CPU time of the process per move, which is steadier than wall time on a
busy machine.

Budget (COURSE.md): median ≤ 80 ms at seq_len 32, ≤ 150 ms at seq_len 128.

Run: ``.venv/bin/python benchmarks/widgets.py`` (about a minute).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lessons_lib import widgets  # noqa: E402

D_KS = list(widgets.D_K_OPTIONS)


def moves_for(explorer, seq_len: int | None) -> list[dict]:
    """The slider moves to time: each a dict for ``explorer.set``."""
    moves: list[dict] = []
    sweep = D_KS + D_KS[-2::-1]             # 1 → 512 → 1
    moves += [{"d_k": d} for d in sweep + sweep]
    controls = explorer.controls
    if "seq_len" in controls and seq_len is not None:
        moves += [{"seq_len": n} for n in (seq_len - 1, seq_len, seq_len + 1, seq_len) * 3
                  if widgets.SEQ_LEN_MIN <= n <= widgets.SEQ_LEN_MAX]
    if "query" in controls:
        top = controls["query"].max
        moves += [{"query": q} for q in (0, top // 2, top, top // 3, 1) * 2]
    if "scaled" in controls:
        moves += [{"scaled": b} for b in (False, True) * 4]
    if "temperature" in controls:
        moves += [{"temperature": t} for t in (0.1, 0.5, 2.0, 10.0, 1.0) * 2]
    if "causal" in controls:
        moves += [{"causal": b} for b in (True, False) * 4]
    if "projection" in controls:
        moves += [{"projection": p} for p in ("K", "V", "Q") * 3]
    return moves


def measure(cls, seq_len: int | None) -> dict:
    explorer = cls()
    if seq_len is not None and "seq_len" in explorer.controls:
        explorer.set(seq_len=seq_len)
    explorer.set(d_k=64)  # warm: fonts, first static drawings
    wall, cpu = [], []
    for move in moves_for(explorer, seq_len):
        c0 = time.process_time()
        explorer.set(**move)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append(explorer.last_update_ms)
        if explorer.error_box.value:
            raise RuntimeError(f"{cls.__name__} {move}: {explorer.error_box.value}")
    return {
        "moves": len(wall),
        "median": statistics.median(wall),
        "p90": statistics.quantiles(wall, n=10)[-1],
        "cpu_median": statistics.median(cpu),
        "png_kb": sum(len(img.value) for img in explorer.images.values()) / 1024,
        "images": len(explorer.images),
    }


def main() -> None:
    rows = []
    for cls in (widgets.ScoresExplorer, widgets.ScaleSoftmaxExplorer, widgets.PipelineExplorer,
                widgets.ProjectionExplorer):
        has_seq = "seq_len" in cls().controls
        for seq_len in ((32, 128) if has_seq else (None,)):
            r = measure(cls, seq_len)
            rows.append((cls.__name__, "fixed" if seq_len is None else str(seq_len), r))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Slider move → redrawn images, Python side (load average {load:.2f}, {os.cpu_count()} CPUs)")
    print(f"{'explorer':<22}{'seq_len':>8}{'images':>7}{'moves':>7}{'median ms':>11}{'p90 ms':>9}"
          f"{'cpu med ms':>12}{'PNG kB':>9}")
    for name, seq, r in rows:
        print(f"{name:<22}{seq:>8}{r['images']:>7}{r['moves']:>7}{r['median']:>11.1f}{r['p90']:>9.1f}"
              f"{r['cpu_median']:>12.1f}{r['png_kb']:>9.0f}")
    print("budget: median ≤ 80 ms at seq_len 32, ≤ 150 ms at seq_len 128 (COURSE.md)")


if __name__ == "__main__":
    main()
