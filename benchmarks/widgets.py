"""A slider move, Python side: milliseconds per redraw and bytes sent per move, per explorer (prints a table).

For every explorer, at its opening settings (the lesson's) and at seq_len 32 and 128 where it has a
seq_len slider, this moves the sliders the way a learner would: d_k up and down over all its values,
seq_len by ±1, the other controls over a few values. Each move is one ``explorer.set(...)``, timed by
the explorer itself (``last_update_ms``: computing and handing the numbers to the live figures).
Reported: median and 90th percentile over all moves, and the bytes the widgets hand to the kernel to
send per move (message contents plus binary buffers, without Jupyter's message envelope of about
0.5-0.8 kB per message, which the browser test measures on the real websocket).

Bars: Python side of one update ≤ 5 ms at 32 tokens; websocket bytes per move ≤ 8 kB at the
default settings and ≤ 24 kB at 128 tokens (the browser test records those in test-artifacts/latency.json).

Run: ``.venv/bin/python benchmarks/widgets.py`` (about half a minute).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import lessons_lib as ll
from lessons_lib.explorers.base import SEQ_LEN_MAX, SEQ_LEN_MIN

D_KS = list(ll.D_K_OPTIONS)


class Sent:
    """Counts what every live figure and control of an explorer hands to its comm (message + buffers)."""

    def __init__(self, explorer):
        self.bytes = 0
        self.messages = 0
        widgets = [*explorer.figures.values(), *explorer.controls.values()]
        for w in [*widgets, explorer.readout, explorer.error_box]:
            if w.comm is None:
                continue
            original = w.comm.send

            def send(data=None, metadata=None, buffers=None, _original=original):
                self.messages += 1
                self.bytes += len(json.dumps(data)) + sum(len(memoryview(b).cast("B")) for b in buffers or [])
                return _original(data=data, metadata=metadata, buffers=buffers)

            w.comm.send = send


def moves_for(explorer, seq_len: int | None) -> list[dict]:
    """The slider moves to time: each a dict for ``explorer.set``."""
    moves: list[dict] = []
    sweep = D_KS + D_KS[-2::-1]             # 1 → 512 → 1
    moves += [{"d_k": d} for d in sweep + sweep]
    controls = explorer.controls
    if "seq_len" in controls and seq_len is not None:
        moves += [{"seq_len": n} for n in (seq_len - 1, seq_len, seq_len + 1, seq_len) * 3
                  if SEQ_LEN_MIN <= n <= SEQ_LEN_MAX]
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
    if seq_len is not None:
        explorer.set(seq_len=seq_len)
    start = {name: c.value for name, c in explorer.controls.items()}
    explorer.set(d_k=64)  # warm: caches of embeddings and projections
    explorer.set(**{k: v for k, v in start.items() if k in ("d_k", "query")})
    sent = Sent(explorer)
    wall, cpu, sizes = [], [], []
    for move in moves_for(explorer, seq_len):
        before = sent.bytes
        c0 = time.process_time()
        explorer.set(**move)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append(explorer.last_update_ms)
        sizes.append((sent.bytes - before) / 1024)
        if explorer.error_box.value:
            raise RuntimeError(f"{cls.__name__} {move}: {explorer.error_box.value}")
    d_k_sizes = sizes[:len(D_KS) * 4 - 2]
    return {
        "moves": len(wall), "median": statistics.median(wall), "p90": statistics.quantiles(wall, n=10)[-1],
        "cpu_median": statistics.median(cpu), "kB_median": statistics.median(sizes),
        "kB_d_k_median": statistics.median(d_k_sizes), "figures": len(explorer.figures),
    }


def main() -> None:
    rows = []
    for cls in (ll.ProjectionExplorer, ll.ScoresExplorer, ll.ScaleSoftmaxExplorer,
                ll.PipelineExplorer):
        has_seq = "seq_len" in cls().controls
        for seq_len in ((None, 32, 128) if has_seq else (None,)):
            rows.append((cls.__name__, "lesson" if seq_len is None else str(seq_len), measure(cls, seq_len)))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Slider move → live figures updated, Python side (load average {load:.2f}, {os.cpu_count()} CPUs)")
    print(f"{'explorer':<22}{'seq_len':>8}{'figures':>8}{'moves':>7}{'median ms':>11}{'p90 ms':>9}"
          f"{'cpu med ms':>12}{'kB/move':>9}{'kB/d_k move':>13}")
    for name, seq, r in rows:
        print(f"{name:<22}{seq:>8}{r['figures']:>8}{r['moves']:>7}{r['median']:>11.2f}{r['p90']:>9.2f}"
              f"{r['cpu_median']:>12.2f}{r['kB_median']:>9.1f}{r['kB_d_k_median']:>13.1f}")
    print("bars: ≤ 5 ms per update at 32 tokens; websocket ≤ 8 kB per move at the lesson's settings, "
          "≤ 24 kB at 128 tokens (kB here exclude Jupyter's message envelopes; the browser test measures "
          "the websocket)")


if __name__ == "__main__":
    main()
