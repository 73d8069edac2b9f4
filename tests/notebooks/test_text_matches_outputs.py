"""The prose of each committed notebook agrees with the outputs beside it, and with the learner's own run.

A number the text quotes from an output must be the number that output shows: these tests read the
committed notebooks, so a re-run that changes an output without the sentence quoting it fails here. And a
sentence about something a learner measures (lesson 08's times and memory) must hold on any run: the test
runs lesson 08's measuring cells again on a busy machine and checks each such sentence against that run.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.load import busy_neighbours

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# A quoted reading: three or more decimals (0.413, 2.6080). Fewer decimals are rounded readings of a
# figure (0.28 of a bar); they are the captions' business (the stills' tests).
QUOTED = re.compile(r"(?<![\w.])[−-]?\d+\.\d{3,}(?![\d])")
ARXIV = re.compile(r"\d{4}\.\d{5}")  # a paper's arXiv number, not a reading


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _output_text(cells: list[dict]) -> str:
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            parts += ["".join(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_reading_the_text_quotes_is_in_the_outputs(path):
    cells = _cells(path)
    shown = _output_text(cells)
    missing = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        text = ARXIV.sub("", "".join(cell["source"]))
        for number in QUOTED.findall(text):
            plain = number.replace("−", "-")
            if float(plain) != 0 and plain not in shown and plain.lstrip("-") not in shown:
                missing.append(f"cell {index}: {number}")
    assert not missing, f"{path.name}: the text quotes numbers no output shows: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_sizes_are_in_decimal_units_only(path):
    cells = _cells(path)
    text = _output_text(cells) + "\n".join("".join(c["source"]) for c in cells)
    binary = re.findall(r"\d\s*(?:KiB|MiB|GiB|TiB)\b|2\s*\*\*\s*(?:20|30)\b", text)
    assert not binary, f"{path.name}: the course counts in decimal units (1 MB = 10⁶ bytes): {binary}"


# ------------------------------------------------------------ lesson 08: its measurements, on a busy machine
LESSON_08 = NOTEBOOKS[0].parent / "08_cost_and_flashattention.ipynb"
#: what lesson 08's prose states about its measurements, each with what a run must show for it to hold
#: (``run``: the measurements of the lesson's own cells, ``saved``: the numpy memory its saved table shows)
MEASURED_CLAIMS = {
    "it changes by less than 1% from one run to the next":   # beyond the rounding of the saved table
        lambda run, saved: all(abs(run["memory"][key] - value) < 0.01 * value + rounding
                               for key, (value, rounding) in saved.items()),
    "**Memory of naive numpy, slope about 2.**":
        lambda run, saved: 1.8 <= run["table"].slope("naive numpy", "memory") <= 2.2,
    "**Memory of the tiled method, slope below 1.**":
        lambda run, saved: run["table"].slope("tiled numpy", "memory") < 1,
    "the one tile is the whole matrix: there the tiled method saves no memory.":
        lambda run, saved: run["memory"][("tiled numpy", 256)] >= run["memory"][("naive numpy", 256)],
    "its memory grows far more slowly than $N^2$, with a slope of about 1 or less":
        lambda run, saved: ("torch SDPA" not in run["table"].methods
                            or run["table"].slope("torch SDPA", "memory") < 1.5),
}
#: a measured time stated as a fact: what no sentence of the lesson may say (the cell that measures prints it)
TIME_OUTCOME = re.compile(r"\b(?:is|was|runs|ran|takes|took|comes out|came out)\s+"
                          r"(?:at least |about |always |usually )?"
                          r"(?:as fast|faster|slower|the fastest|the slowest)\b|"
                          r"slope (?:about|of) 2 for|same on every run|also on a busy machine|"
                          r"(?:is|was) (?:highest|lowest) for|(?:falls|rises) as the blocks", re.I)
_KB = {"kB": 1e3, "MB": 1e6, "GB": 1e9}


def _saved_numpy_memory(cells) -> dict:
    """(method, N) -> (bytes, half a unit of the last digit shown), as the saved output of lesson 08's
    measuring cell shows them ("1.2 MB": 1.2e6 bytes, give or take 0.05e6)."""
    cell = next(c for c in cells
                if c["cell_type"] == "code" and "ll.measure_scaling(" in "".join(c["source"]))
    text = _output_text([cell])
    rows = re.findall(r"^((?:naive|tiled) numpy)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+([\d.]+) (kB|MB|GB)", text, re.M)
    return {(method, int(n)): (float(size) * _KB[unit],
                               0.5 * 10.0 ** -len(size.partition(".")[2]) * _KB[unit])
            for method, n, size, unit in rows}


def _run_measuring_cells(cells) -> tuple[dict, str]:
    """Run lesson 08's measuring cells (and those that print what they measured) as the lesson does; return
    their namespace and what they printed."""
    import lessons_lib as ll

    namespace = {"np": __import__("numpy"), "ll": ll}
    printed = io.StringIO()
    for cell in cells:
        source = "".join(cell["source"])
        measuring = re.search(r"\b(?:table|blocks)\b", source) and "Explorer(" not in source
        if cell["cell_type"] != "code" or not measuring:
            continue
        with contextlib.redirect_stdout(printed):
            exec(compile(source, "lesson 08", "exec"), namespace)
    return namespace, printed.getvalue()


@pytest.mark.slow
def test_lesson_08s_sentences_about_its_measurements_hold_on_a_busy_machine():
    """Lesson 08 measures time and memory on the learner's machine. Its measuring cells run here again, with a
    neighbour process burning a core; what the prose states must hold on that run too, and what those cells
    print without nbval-ignore-output must come out as saved."""
    cells = _cells(LESSON_08)
    prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for claim in MEASURED_CLAIMS:
        assert claim in " ".join(prose.split()), f"lesson 08 no longer says {claim!r}: update MEASURED_CLAIMS"
    stated = [m.group(0) for m in TIME_OUTCOME.finditer(" ".join(prose.split()))]
    assert not stated, (f"lesson 08 states a measured time as a fact: {stated}; "
                        "let the measuring cell print it")
    saved = _saved_numpy_memory(cells)
    assert len(saved) == 8, saved
    with busy_neighbours(1, seconds=240):
        namespace, printed = _run_measuring_cells(cells)
    table, blocks = namespace["table"], namespace["blocks"]
    run = {"table": table, "memory": {(m.method, m.n): m.peak_bytes for m in table.measurements}}
    broken = [claim for claim, holds in MEASURED_CLAIMS.items() if not holds(run, saved)]
    assert not broken, f"on a busy machine lesson 08's prose does not hold: {broken}\n{table}"
    # the verdicts are of this run: its slopes and ratios, not numbers written down before
    for method in table.methods:
        assert f"N^{table.slope(method, 'time'):.2f}" in printed, (method, printed)
    assert blocks.verdict() in printed and blocks.trend() in printed and table.fastest_verdict() in printed
    # what the lesson prints without nbval-ignore-output is what a busy machine prints too
    for cell in cells:
        source = "".join(cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        checked = "nbval-ignore-output" not in tags and re.search(r"\btable\b", source)
        if cell["cell_type"] == "code" and checked:
            assert _output_text([cell]).strip() in printed, (
                f"the saved output of {source[:60]!r} changed under load")
