"""A busy machine on demand: processes that keep processor cores busy, for the tests whose claim must hold
on a loaded classroom server (lesson 08's measured prose, the exercise checks' time limit)."""

from __future__ import annotations

import contextlib
import subprocess
import sys


@contextlib.contextmanager
def busy_neighbours(count: int, seconds: float):
    """``count`` other processes, each keeping one core busy for at most ``seconds``; all stopped when the
    block ends."""
    burn = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(count)]
    try:
        yield burners
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait(timeout=30)
