"""The learner copy (tools/learner_release.py) is the learner's: no output of the worked solutions, and no
words written for the course's authors.

* Every cell whose code calls a function, or reads a value, that the learner writes in an exercise keeps no
  output: in the teacher's copy that output is the worked solution's ("largest change of rows 0-3 when token 4
  is replaced: 0.0"); the learner's run prints what their own code does.
* The words are the learner's. The course's source material, its tests and its maintainers' plans are not
  the learner's business: "source lesson", "the seed's questions", "test suite", "hypothesis", "a reference
  run" and the like fail. The rule for **seed**: in code (a code cell, or `code` in the text) it is the
  random seed, ``SEED = 0`` or ``seed=2``, and always fine; in prose and in printed output it must read as a
  random seed, "random seed" or a seed with its value ("seed 0", ``seed = 2``), never as the course's source
  ("the seed's pair", "seed lesson").
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.helpers import NOTEBOOKS, load_tool

lr = load_tool("learner_copy")
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))

#: words written for the course's authors, not its learners
AUTHORS_WORDS = re.compile(
    r"\bsource lessons?\b|\bseed lessons?\b|\btest suites?\b|\bhypothesis\b|\bpytest\b|\bnbval\b|"
    r"\b(?:course|library)'s (?:own )?tests\b|\bthe tests? (?:check|checks|repeat|repeats|cover|covers)\b|"
    r"\breference run\b|\bhas not (?:yet )?recorded\b|\bsets itself a target\b|\bmaintainers?\b|\bTODO\b|"
    r"\bFIXME\b|\bmake (?:check|test)\b", re.IGNORECASE)
#: "seed" as the random seed: "random seed", or a seed with its value ("seed 0", "seed = 2", "seed=1")
RANDOM_SEED = re.compile(r"\brandom seeds?\b|\bseeds?\s*=?\s*\d", re.IGNORECASE)
SEED = re.compile(r"\bseeds?\b|\bseed's\b", re.IGNORECASE)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _learner(path):
    source = nbformat.read(path, as_version=4)
    return source, lr.learner_notebook(source, path.name)[0]


def _output_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def _comments(code: str) -> str:
    return "\n".join(re.findall(r"#(.*)$", code, re.MULTILINE))


def authors_words(text: str) -> list[str]:
    return [m.group(0) for m in AUTHORS_WORDS.finditer(text)]


def seeds_not_random(prose: str) -> list[str]:
    """Each "seed" of ``prose`` (code spans left out) that does not read as a random seed."""
    prose = CODE_SPAN.sub(" ", prose)
    allowed = [m.span() for m in RANDOM_SEED.finditer(prose)]
    return [prose[max(0, m.start() - 30):m.end() + 20].replace("\n", " ") for m in SEED.finditer(prose)
            if not any(a <= m.start() < b for a, b in allowed)]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem[:2])
def test_no_output_of_code_that_uses_the_learners_own_function_is_kept(path):
    source, learner = _learner(path)
    names = lr.learners_names(source.cells)
    uses = re.compile(rf"\b(?:{'|'.join(sorted(names))})\b") if names else None
    kept = [i for i, cell in enumerate(learner.cells)
            if cell.cell_type == "code" and uses and uses.search(cell.source) and cell.get("outputs")]
    assert not kept, f"{path.name}: cells {kept} keep the output of the worked solution"


def test_the_leak_experiment_on_the_learners_weights_shows_no_answer_of_the_worked_solution():
    """Lesson 07 runs the leak experiment on the learner's my_causal_weights: the teacher's copy shows the
    worked solution's 0.0, which the learner copy must not (issue 40, item 2)."""
    path = NOTEBOOKS / "07_causal_masking.ipynb"
    source, learner = _learner(path)
    index = next(i for i, c in enumerate(learner.cells) if "attend_with_my_weights" in c.source)
    assert "largest change of rows 0-3" in _output_text(
        next(c for c in source.cells if "attend_with_my_weights" in c.source))
    assert not learner.cells[index].get("outputs")
    assert "Write my_causal_weights above first." in learner.cells[index].source


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem[:2])
def test_the_learner_copy_has_no_words_written_for_authors(path):
    _, learner = _learner(path)
    found = []
    for index, cell in enumerate(learner.cells):
        text = cell.source if cell.cell_type == "markdown" else _comments(cell.source)
        found += [f"cell {index}: {word!r}" for word in authors_words(text + "\n" + _output_text(cell))]
        if cell.cell_type == "markdown":
            found += [f"cell {index}: seed in {context!r}" for context in seeds_not_random(cell.source)]
        found += [f"cell {index} (output): seed in {context!r}"
                  for context in seeds_not_random(_output_text(cell))]
    assert not found, f"{path.name}: " + "; ".join(found)


@pytest.mark.parametrize("text, found", [
    ("the seed's three questions", True), ("the seed lesson's pair", True), ("its source lesson", True),
    ("The test suite repeats this (hypothesis).", True), ("The library's tests check this.", True),
    ("the course has not yet recorded a reference run", True),
    ("fixes the random seed", False), ("(seed 0, untrained)", False), ("Set `seed = 2` in the cell", False),
    ("with seed=1 each time", False), ("a hypothetical rate", False),
])
def test_the_rule_tells_authors_words_from_learners_words(text, found):
    assert bool(authors_words(text) or seeds_not_random(text)) is found
