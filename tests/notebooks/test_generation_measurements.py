"""Lesson 12's sentences about what the learner measures hold on a busy machine too.

The lesson times a generated token with the KV cache and recomputing (``measure_decode``), and a prompt read
at once against one generated token (``measure_prefill_decode``). Its prose states only what holds on every
machine, and each measuring cell prints its own run's numbers and verdict (tagged nbval-ignore-output). Here
the measuring cells run again beside a process burning a CPU core: what the prose says must hold on that run,
the verdicts printed must be that run's, and no sentence may state a measured time as a fact.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import nbformat
import pytest

from tests.helpers import NOTEBOOKS

LESSON = NOTEBOOKS / "12_generation.ipynb"
#: what the prose says about the measurements, each with what a run must show for it to hold
CLAIMS = {
    "the gap widens with the context":
        lambda run: run["times"].recomputed[-1] / run["times"].cached[-1]
        > run["times"].recomputed[0] / run["times"].cached[0],
    "a slope heading for 2":
        lambda run: run["times"].slopes()[1] > run["times"].slopes()[0] + 0.3,
    "Decode cannot use that arithmetic":
        lambda run: run["phases"].rates["prefill GFLOP/s"] > run["phases"].rates["decode GFLOP/s"],
    "it spends its step waiting for the cache":
        lambda run: run["phases"].rates["decode GB/s"] > 0.2 * run["phases"].rates["read GB/s"],
}
STATED_TIME = re.compile(r"\b(?:is|was|runs|ran|takes|took)\s+(?:about |always )?"
                         r"(?:\d+(?:\.\d+)?\s*(?:ms|s)\b|\d+× (?:faster|slower))", re.I)


@contextlib.contextmanager
def _busy_neighbour(seconds: float):
    burner = subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() + "
                               f"{seconds}\nwhile time.monotonic() < end:\n    pass"])
    try:
        yield burner
    finally:
        burner.kill()
        burner.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.subprocess
def test_lesson_12s_sentences_about_its_measurements_hold_on_a_busy_machine():
    import lessons_lib as ll

    cells = nbformat.read(LESSON, as_version=4).cells
    prose = " ".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")
    for claim in CLAIMS:
        assert claim in prose, f"lesson 12 no longer says {claim!r}: update CLAIMS"
    assert not STATED_TIME.findall(prose), STATED_TIME.findall(prose)
    measuring = [c for c in cells if c.cell_type == "code" and re.search(r"measure_(?:decode|prefill)|"
                                                                         r"\btimes\b|\bphases\b", c.source)]
    assert len(measuring) >= 3
    namespace, printed = {"np": __import__("numpy"), "ll": ll, "SEED": 0}, io.StringIO()
    with _busy_neighbour(seconds=300), contextlib.redirect_stdout(printed):
        for cell in measuring:
            exec(compile(cell.source, "lesson 12", "exec"), namespace)
    run = {"times": namespace["times"], "phases": namespace["phases"]}
    broken = [claim for claim, holds in CLAIMS.items() if not holds(run)]
    assert not broken, f"on a busy machine lesson 12's prose does not hold: {broken}\n{printed.getvalue()}"
    assert run["times"].verdicts() in printed.getvalue() and run["phases"].verdict() in printed.getvalue()
    for cell in measuring:                 # what is printed without nbval-ignore-output holds under load too
        if "nbval-ignore-output" not in cell.metadata.get("tags", []):
            saved = "".join(o.get("text", "") for o in cell.get("outputs", []))
            assert saved.strip() in printed.getvalue(), cell.source[:60]
