"""A Predict prompt's answer is not given away before it is asked.

A prompt cell may carry its answer's key phrases in its metadata, ``{"lessons": {"predict": {"answer_phrases":
[...]}}}`` (lessons 11 and 12 do, for every prompt). Each phrase must be in the prompt's answer fold, and in
nothing the learner meets before the prompt: no earlier cell of the lesson (its prose, its code, its outputs,
the title and the objectives included) and no earlier lesson's prose. The comparison ignores case and spacing.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.helpers import NOTEBOOKS, load_tool

conventions = load_tool("conventions")
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))


def _phrases(cell) -> list[str]:
    return cell.metadata.get("lessons", {}).get("predict", {}).get("answer_phrases", [])


def _text(cell) -> str:
    parts = [cell.source]
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        parts += ["".join(v) if isinstance(v, list) else str(v) for k, v in out.get("data", {}).items()
                  if k.startswith("text/")]
    return _plain(" ".join(parts))


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("*", "")).lower()


WITH_PHRASES = [p for p in PATHS if any(_phrases(c) for c in nbformat.read(p, as_version=4).cells)]


def test_the_lessons_of_part_ii_name_their_answers():
    assert {p.stem[:2] for p in WITH_PHRASES} >= {"11", "12"}
    for path in WITH_PHRASES:
        cells = nbformat.read(path, as_version=4).cells
        prompts = [c for c in cells if c.cell_type == "markdown" and conventions.PREDICT.search(c.source)]
        assert prompts and all(_phrases(c) for c in prompts), f"{path.name}: a prompt without answer_phrases"


@pytest.mark.parametrize("path", WITH_PHRASES, ids=lambda p: p.stem)
def test_no_answer_phrase_appears_before_its_prompt(path):
    cells = nbformat.read(path, as_version=4).cells
    earlier_lessons = " ".join(_plain(c.source) for p in PATHS if p.stem < path.stem
                               for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown")
    for index, cell in enumerate(cells):
        for phrase in _phrases(cell):
            wanted = _plain(phrase)
            before = [i for i in range(index) if wanted in _text(cells[i])]
            assert not before, f"{path.name}: “{phrase}” (prompt in cell {index}) already in cells {before}"
            assert wanted not in earlier_lessons, f"{path.name}: “{phrase}” is in an earlier lesson"
            fold = next((c for c in cells[index + 1:] if conventions.ANSWER_FOLD.search(c.source)), None)
            assert fold is not None and wanted in _plain(fold.source.split("</details>")[0]), (
                f"{path.name}: “{phrase}” is not in the answer fold after cell {index}")
