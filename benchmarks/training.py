"""Training the tiny models of notebook 09 on this CPU: time and held-out accuracy per seed.

    python benchmarks/training.py [--seeds 0 1 2]

Trains ``models.train_coref_model`` with the notebook's settings (300 steps, one CPU
thread) for each seed and prints wall time, CPU time and held-out accuracy, then the
two attention-sink heads. Bars: ≥ 95% held-out accuracy in ≤ 20 s. On a shared
machine the wall time depends on the load; the CPU time is the fairer number.
"""

from __future__ import annotations

import argparse
import time

from lessons_lib.lab import models


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    args = parser.parse_args(argv)
    print(f"{'model':<28} {'wall s':>7} {'CPU s':>7} {'held-out accuracy':>18}")
    for seed in args.seeds:
        run = models.train_coref_model(seed=seed, progress=False)
        print(f"{f'coreference, seed {seed}':<28} {run.seconds:7.1f} {run.cpu_seconds:7.1f} "
              f"{run.test_accuracy:18.1%}")
    for off_slot in (False, True):
        start, cpu = time.perf_counter(), time.process_time()
        sink = models.train_sink_head(off_slot)
        name = "sink head, " + ("off slot" if off_slot else "softmax")
        print(f"{name:<28} {time.perf_counter() - start:7.1f} {time.process_time() - cpu:7.1f} "
              f"{'(referent ' + format(sink.summary['ref_referent'], '.2f') + ')':>18}")


if __name__ == "__main__":
    main()
