"""The prose of each committed notebook agrees with the outputs beside it.

A number the text quotes from an output must be the number that output shows: these tests read the
committed notebooks, so a re-run that changes an output without the sentence quoting it fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
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
