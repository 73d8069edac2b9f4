"""Capacity of one hub: learners dragging sliders at once, memory per learner per lesson, CPU per move.

Runs a real JupyterHub with configurable-http-proxy and the Binder environment as each learner's
server (tests/helpers/hub_classroom.py, the same set-up as ``make test-hub``; run that once first, it
installs the proxy and builds the environment). Not part of ``make test``.

1. Learners at once: N learners log in, click the nbgitpuller link and open lesson 02's explorer;
   once the machine has settled after their start-up (and a short warm-up drag, not recorded),
   all of them drag its d_k slider at once, two moves a second each, for ``--seconds``. For
   each N: the p50/p95/max time from the move (the widget's ``update`` sent into the proxy) to
   the figure's update coming back in answer to it, and the error count (a move without an
   answer in 10 s). The clients run on the same machine, so their own CPU is part of the load.
2. Memory per learner per lesson: one learner runs each lesson's code cells in order (an
   exercise cell of the learner copy raises NotImplementedError: it is skipped, as a learner who
   has not done it yet); the kernel's resident memory is sampled every 0.1 s (peak) and read
   after the lesson (steady), next to the single-user server's; and the kernel's CPU seconds for
   the whole lesson (start-up included): what a class costs when everyone runs a lesson at once.
3. CPU per slider move: the kernel's and the whole hub's (proxy, hub, servers) CPU seconds over
   the moves of step 1, divided by the moves.

Usage: .venv/bin/python benchmarks/classroom.py [--learners 10 20 30] [--seconds 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools")]
import binder_env  # noqa: E402
from course_remote import BRANCH, LESSON_00, NAME, learner_remote  # noqa: E402
from hub_classroom import Learner, code_cells, running_hub  # noqa: E402

EXPLORER_LESSON = "notebooks/02_step1_qkv.ipynb"


def link(bare: Path) -> str:
    import urllib.parse

    query = urllib.parse.urlencode({"repo": f"file://{bare}", "branch": BRANCH,
                                    "urlpath": f"lab/tree/{NAME}/{LESSON_00}"})
    return f"/hub/user-redirect/git-pull?{query}"


def open_explorer(learner: Learner, bare: Path):
    """The learner's kernel with lesson 02's explorer open, or None when setting it up failed."""
    try:
        return _open_explorer(learner, bare)
    except Exception as exc:
        print(f"{learner.name}: could not open the explorer: {type(exc).__name__}: {exc}", flush=True)
        return None


def _open_explorer(learner: Learner, bare: Path):
    learner.log_in()
    learner.follow_link(link(bare))
    kernel = learner.start_kernel(f"{NAME}/{EXPLORER_LESSON}")
    cells = code_cells(learner.hub.home(learner.name) / NAME / EXPLORER_LESSON)
    kernel.execute(next(c for c in cells if "import lessons_lib" in c))
    kernel.execute(next(c for c in cells if "ProjectionExplorer(" in c))
    return kernel


def drag(kernel, seconds: float, rate: float = 2.0) -> tuple[list[float], int]:
    """Move the first slider ``rate`` times a second for ``seconds``; (latencies, errors)."""
    sliders, times, errors = kernel.sliders(), [], 0
    if not sliders:  # the explorer's widgets never reached this learner
        print(f"{kernel.learner.name}: no slider", flush=True)
        return times, int(seconds * rate)
    slider = sliders[0]
    for i in range(int(seconds * rate)):
        started = time.monotonic()
        try:
            times.append(kernel.move(slider, 1 + 2 * (i % 2), timeout=10))
        except Exception as exc:
            if not errors:
                print(f"{kernel.learner.name}: first failed move: {type(exc).__name__}: {exc}", flush=True)
            errors += 1
        time.sleep(max(0.0, 1 / rate - (time.monotonic() - started)))
    return times, errors


def tree_cpu(hub) -> float:
    """CPU seconds of the proxy, the hub, the servers and the kernels (and their finished children)."""
    total = 0.0
    for proc in hub.processes():
        with contextlib.suppress(psutil.Error):
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def kernel_process(hub, name: str) -> psutil.Process | None:
    notebooks = str(hub.home(name) / NAME / "notebooks")
    for proc in hub.learner_processes(name):
        with contextlib.suppress(psutil.Error):
            if proc.cwd().startswith(notebooks) and "ipykernel" in " ".join(proc.cmdline()):
                return proc
    return None


def settle(hub, below: float = 0.2, longest: float = 120.0) -> float:
    """Wait until the hub's processes (proxy, hub, servers, kernels) use less than ``below`` of a core
    over two seconds, at most ``longest`` seconds: N servers starting at once keep both cores busy
    for a while, and a drag measured then measures the start-up. Returns the last share measured."""
    deadline, share = time.monotonic() + longest, 1.0
    while time.monotonic() < deadline:
        before = tree_cpu(hub)
        time.sleep(2.0)
        share = (tree_cpu(hub) - before) / 2.0
        if share < below:
            break
    return share


def at_once(hub, bare: Path, sizes: list[int], seconds: float) -> list[dict]:
    learners = [Learner(hub, f"drag{i:02d}") for i in range(max(sizes))]
    with ThreadPoolExecutor(max_workers=len(learners)) as pool:
        opened = list(pool.map(lambda lr: open_explorer(lr, bare), learners))
    kernels = [k for k in opened if k is not None]
    learners = [lr for lr, k in zip(learners, opened) if k is not None]
    settled = settle(hub)
    print(f"set-up done; the hub's processes settled to {settled:.0%} of a core", flush=True)
    for kernel in kernels:   # a warm-up drag, not recorded: every kernel has drawn once since set-up
        kernel.reconnect()
    with ThreadPoolExecutor(max_workers=len(kernels)) as pool:
        list(pool.map(lambda k: drag(k, 2.0), kernels))
    rows = []
    for n in sizes:
        cpu_before = tree_cpu(hub)
        kcpu = [kernel_process(hub, lr.name) for lr in learners[:n]]
        kcpu_before = sum(p.cpu_times().user + p.cpu_times().system for p in kcpu if p)
        for kernel in kernels[:n]:
            kernel.reconnect()  # idle while the others set up: the server has closed its socket
        with ThreadPoolExecutor(max_workers=n) as pool:
            runs = list(pool.map(lambda k: drag(k, seconds), kernels[:n]))
        moves = sorted(t for times, _ in runs for t in times)
        errors = sum(e for _, e in runs) + max(0, n - len(kernels))  # learners whose set-up failed
        kcpu_after = sum(p.cpu_times().user + p.cpu_times().system for p in kcpu if p)
        count = max(len(moves), 1)
        rows.append({"learners": n, "moves": len(moves), "errors": errors,
                     "p50_ms": round(statistics.median(moves) * 1000, 1) if moves else None,
                     "p95_ms": round(moves[int(0.95 * (len(moves) - 1))] * 1000, 1) if moves else None,
                     "max_ms": round(moves[-1] * 1000, 1) if moves else None,
                     "kernel_cpu_ms_per_move": round((kcpu_after - kcpu_before) / count * 1000, 1),
                     "hub_cpu_ms_per_move": round((tree_cpu(hub) - cpu_before) / count * 1000,
                                                  1)})
        print(json.dumps(rows[-1]), flush=True)
    for kernel in kernels:
        kernel.close()
    return rows


def memory_per_lesson(hub, bare: Path) -> list[dict]:
    rows = []
    home_copy = None
    for lesson in sorted((ROOT / "notebooks").glob("*.ipynb")):
        learner = Learner(hub, f"mem{lesson.stem[:2]}")
        learner.log_in()
        learner.follow_link(link(bare))
        home_copy = hub.home(learner.name) / NAME
        path = f"{NAME}/notebooks/{lesson.name}"
        kernel = learner.start_kernel(path)
        proc = kernel_process(hub, learner.name)
        peak, stop = [0], threading.Event()

        def sample(proc=proc, peak=peak, stop=stop):
            while not stop.is_set():
                with contextlib.suppress(psutil.Error):
                    peak[0] = max(peak[0], proc.memory_info().rss)
                time.sleep(0.1)

        sampler = threading.Thread(target=sample)
        sampler.start()
        skipped = 0
        for code in code_cells(home_copy / "notebooks" / lesson.name):
            try:
                kernel.execute(code, timeout=600)
            except AssertionError:
                skipped += 1   # an exercise of the learner copy, not done yet
        time.sleep(2)
        stop.set()
        sampler.join()
        steady = proc.memory_info().rss
        total = learner.memory_mb()
        cpu = proc.cpu_times()
        rows.append({"lesson": lesson.stem[:2], "kernel_peak_mb": round(peak[0] / 2**20),
                     "kernel_steady_mb": round(steady / 2**20),
                     "kernel_cpu_s": round(cpu.user + cpu.system, 1),
                     "server_mb": round(total - steady / 2**20), "cells_skipped": skipped})
        print(json.dumps(rows[-1]), flush=True)
        kernel.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, nargs="+", default=[10, 20, 30])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    singleuser = binder_env.build().parent / "jupyterhub-singleuser"
    with tempfile.TemporaryDirectory(prefix="classroom-bench-") as tmp:
        bare = learner_remote(Path(tmp))
        with running_hub(Path(tmp) / "hub", singleuser) as hub:
            result = {"cpus": psutil.cpu_count(), "load_avg_before": psutil.getloadavg(),
                      "at_once": at_once(hub, bare, sorted(args.learners), args.seconds)}
            if not args.skip_memory:
                result["memory"] = memory_per_lesson(hub, bare)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
