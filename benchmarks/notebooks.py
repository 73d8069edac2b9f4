"""How long each notebook takes to run top to bottom, kernel start included.

    python benchmarks/notebooks.py [notebooks/0*.ipynb ...]

Executes each notebook in a fresh kernel with nbclient (as Restart & Run All
does) without saving it, and prints one row per notebook plus the total.
Target: notebooks 00–05 together in ≤ 40 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_notebook(path: pathlib.Path) -> tuple[float, float]:
    """(seconds to start the kernel, seconds for start + all cells)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    with client.setup_kernel():
        started = time.perf_counter() - t0
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    return started, time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=pathlib.Path)
    args = parser.parse_args(argv)
    paths = args.paths or sorted((ROOT / "notebooks").glob("0[0-5]_*.ipynb"))
    print(f"{'notebook':<34} {'kernel start s':>14} {'total s':>8}")
    total = 0.0
    for path in paths:
        start, seconds = run_notebook(path)
        total += seconds
        print(f"{path.name:<34} {start:>14.2f} {seconds:>8.2f}", flush=True)
    print(f"{'all ' + str(len(paths)) + ' notebooks':<34} {'':>14} {total:>8.2f}   (target ≤ 40 s for 00–05)")


if __name__ == "__main__":
    main()
