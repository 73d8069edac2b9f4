"""Slider move → message to the browser, Python side, for the StateRecallExplorer of notebook 13.

Each slider is moved the way a learner drags it, one step at a time, up and back, from a fresh explorer
(nothing computed yet but its first picture) in a fresh Python (nothing kept from an earlier sweep),
:data:`REPEATS` times; every move is one
``explorer.set(...)``. Reported per slider: the median, the mean and the largest time the kernel spends
on a move (computing the state and the recall curve, setting the live figures' traits). A ``d_state`` or
``decay`` move is the expensive one: it needs the recall curve of every rule at seven numbers of pairs; an
``n_pairs`` move reuses the curve drawn.

Run: ``.venv/bin/python benchmarks/explorer_13.py`` (a few seconds). Prints; asserts nothing.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lessons_lib.explorers.lesson13_cheaper_attention import STATE_SIZES, StateRecallExplorer

SWEEPS = {
    "d_state": [*STATE_SIZES[STATE_SIZES.index(16) + 1:], *reversed(STATE_SIZES[:-1])],
    "decay": [0.95, 0.9, 0.85, 0.8, 0.85, 0.9, 0.95, 1.0],
    "n_pairs": [9, 10, 11, 12, 11, 10, 9, 8],
}


REPEATS = 5  # each sweep from a fresh explorer in a fresh Python, this many times (the machine may be busy)


def sweep(name: str) -> list[float]:
    """The milliseconds of each move of ``name``'s sweep, in this Python."""
    explorer = StateRecallExplorer(n_pairs=8, d_state=16, decay=1.0, rule="delta", seed=0)
    times = []
    for value in SWEEPS[name]:
        start = time.perf_counter()
        explorer.set(**{name: value})
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    if sys.argv[1:2] == ["--once"]:
        print(json.dumps(sweep(sys.argv[2])))
        return
    print(f"{'slider':>8} {'moves':>5} {'median ms':>10} {'mean ms':>8} {'max ms':>8}")
    for name in SWEEPS:
        times = [t for _ in range(REPEATS) for t in json.loads(subprocess.run(
            [sys.executable, __file__, "--once", name], capture_output=True, text=True, check=True).stdout)]
        print(f"{name:>8} {len(times):>5} {statistics.median(times):>10.1f} {statistics.fmean(times):>8.1f} "
              f"{max(times):>8.1f}")


if __name__ == "__main__":
    main()
