"""What running a learner's function in a child process costs a check: fork against the worker thread.

    python benchmarks/exercise_checks.py            # every exercise's worked solution, 7 rounds
    python benchmarks/exercise_checks.py --rounds 3

Each check runs the learner's function once per case. Where the system has ``os.fork`` it runs in a forked
child process that is killed at the time limit (``lessons_lib/exercises/runner.py``, ``ISOLATION =
"process"``); without, in a worker thread that cannot always be stopped. Both ways run here on the same
worked solutions (read from the notebooks, as tests/helpers/solutions.py does), interleaved round by
round, and
the script prints the median time of one whole check (visible cases, and the unseen ones of
``check_hidden``) each way and their ratio. A case of these tiny inputs takes microseconds; what a check
costs is the fork, the child's report and its reaping, so the ratio is the price of a function that can
always be stopped. It is printed, not asserted (a shared machine's timings vary).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)

    import solutions  # tests/helpers/solutions.py: the worked solutions of the notebooks

    from lessons_lib.exercises import EXERCISES, grading, runner

    modes = ["process", "thread"] if hasattr(__import__("os"), "fork") else ["thread"]
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name, exercise in EXERCISES.items():
            for mode in modes:
                runner.ISOLATION = mode
                start = time.perf_counter()
                assert exercise.check(getattr(solutions, name)).passed
                assert grading.check_hidden(name, getattr(solutions, name)).passed
                times.setdefault((name, mode), []).append(time.perf_counter() - start)
    header = f"{'exercise':<20}" + "".join(f"{mode:>12}" for mode in modes)
    print(header + ("       ratio" if len(modes) > 1 else ""))
    ratios = []
    for name in EXERCISES:
        medians = [statistics.median(times[(name, mode)]) for mode in modes]
        line = f"{name:<20}" + "".join(f"{m * 1000:>10.0f}ms" for m in medians)
        if len(modes) > 1:
            ratios.append(medians[0] / medians[1])
            line += f"{ratios[-1]:>11.1f}x"
        print(line)
    if ratios:
        print(f"median ratio, process / thread: {statistics.median(ratios):.1f}x "
              f"(one check with visible and unseen cases; {args.rounds} rounds, interleaved)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
