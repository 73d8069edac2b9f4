"""The learner copy of one notebook: solutions replaced, answers to predict cleared, captions folded.

The notebooks in ``notebooks/`` are the *source*: each exercise cell holds its worked solution
between two marker lines, the convention of nbgrader::

    def my_softmax(x):
        ### BEGIN SOLUTION
        shifted = x - x.max(axis=-1, keepdims=True)
        ...
        ### END SOLUTION

The learner copy replaces every such region by ``raise NotImplementedError("your code here")``
(at the region's indentation), or by the line the marker names where a learner edits a value
rather than writes a function: ``### BEGIN SOLUTION; learner starts from: my_query = np.zeros(4)``.
It clears the outputs a learner should not see before they have
tried: the exercise cell itself, every cell that calls an exercise's check (its feedback in
the source says "passed"), every other cell whose code calls a function or reads a value the learner
writes (``my_causal_weights``: its output in the source is the worked solution's), and every code cell
between a **Predict** prompt and its answer, and the first code cell after that answer
(:func:`predicted_cells`).

A prediction is marked in the source, in the teacher's copy too (``tools/conventions.py``): the prompt is
a line that opens with ``**Predict``, and its answer is a fold further on, before the next prompt,
``<details><summary>Check your answer</summary> … </details>`` (the last such fold, when the prompt asks
several things answered in turn). The outputs between the two are what the learner is asked to predict, so
the learner copy holds none of them (:func:`prediction_spans`), nor the output of the first code cell
after the answer, which stands on the screen beside the closed fold (:func:`predicted_cells`); a prompt
with no answer fold is an error (:class:`PredictionError`), not a guess. The story between them stays as
it is; only a *caption* of a cleared output (the italic paragraph that opens the prose right after it,
"*Figure: …*") is folded into a closed ``<details>`` ("open it once you have run the cell above"), because
it describes what the learner has not run yet. Folds hide answers only. It drops nbgrader's graded test
cells (tag ``graded-test``, written by ``tools/stamp_notebooks.py``): they raise until the exercise is
solved, and a self-study learner has the interactive check instead; a graded class gets its copy from
``nbgrader generate_assignment`` (docs/classroom.md). Everything else (prose, figures, explorers, quizzes)
is kept, so the learner copy still shows its pictures on a static page.

These rules are shared, written once here: the learner release (``tools/learner_release.py``), the
static pages (``tools/export_html.py``) and nbgrader's source notebooks (``tools/stamp_notebooks.py``)
all take a notebook's learner version from :func:`learner_notebook`. Standard library, nbformat and
``conventions.py`` only: the learner copy ships this file (``make lab`` builds the workspace with it).
"""

from __future__ import annotations

import re

import nbformat
from conventions import ANSWER_FOLD, CHECK_CALL, GRADED_TAG, PREDICT
from conventions import SOLUTION_BEGIN as BEGIN
from conventions import SOLUTION_END as END

PLACEHOLDER = 'raise NotImplementedError("your code here")'
_STARTS_FROM = "; learner starts from:"


class SolutionMarkerError(ValueError):
    """A solution region is not closed, or closed without being opened."""


def strip_solutions(source: str, where: str = "cell") -> tuple[str, int]:
    """Replace each BEGIN/END SOLUTION region of ``source``; return the new source and the count."""
    out: list[str] = []
    inside, count = False, 0
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            if inside:
                raise SolutionMarkerError(f"{where}, line {number}: {BEGIN} inside another solution region")
            inside, count = True, count + 1
            indent = line[: len(line) - len(line.lstrip())]
            start = stripped[len(BEGIN):].strip()
            if start and not start.startswith(_STARTS_FROM):
                raise SolutionMarkerError(f"{where}, line {number}: after {BEGIN} write nothing, or "
                                          f"'{_STARTS_FROM} <code>'")
            out.append(f"{indent}{start[len(_STARTS_FROM):].strip() or PLACEHOLDER}\n")
        elif stripped == END:
            if not inside:
                raise SolutionMarkerError(f"{where}, line {number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise SolutionMarkerError(f"{where}: {BEGIN} is never closed by {END}")
    text = "".join(out)
    return (text.rstrip("\n") if not source.endswith("\n") else text), count


REVEAL = "What the cell above shows: open this once you have run it"
#: on a static page nothing runs: the outputs to predict are kept, folded, and so are their captions
REVEAL_ON_PAGE = "What the figure above shows: open this once you have made your prediction"
#: the tag of a code cell whose outputs a static page folds (tools/html_template/course/index.html.j2)
PREDICTED_TAG = "predicted-output"


class PredictionError(ValueError):
    """A **Predict** prompt whose answer is not marked: no "Check your answer" fold before the next prompt."""


def prediction_spans(cells, where: str = "notebook") -> list[tuple[int, int]]:
    """``(prompt, answer)``: the cell of every **Predict** prompt and the cell of the last answer fold
    ("Check your answer") after it and before the next prompt (both may be one cell: the fold after the
    prompt). The code cells strictly between them hold what the learner is asked to predict.
    """
    events = []  # (cell, offset, kind): every prompt line and every answer fold, in reading order
    for index, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            events += [(index, m.start(), "prompt") for m in PREDICT.finditer(cell.source)]
            events += [(index, m.start(), "answer") for m in ANSWER_FOLD.finditer(cell.source)]
    events.sort()
    spans = []
    for n, (index, _, kind) in enumerate(events):
        if kind != "prompt":
            continue
        answers = []
        for later, _, later_kind in events[n + 1:]:
            if later_kind == "prompt":
                break
            answers.append(later)
        if not answers:
            raise PredictionError(
                f"{where}, cell {index}: this **Predict** prompt has no answer. After the cells it asks "
                "about, put the answer in a fold: <details><summary>Check your answer</summary> … </details>")
        if not spans or spans[-1][0] != index:
            spans.append((index, answers[-1]))
    return spans


def predicted_cells(cells, where: str = "notebook") -> set[int]:
    """The code cells whose outputs a learner must not meet before predicting: every cell between a
    **Predict** prompt and its answer, and the first code cell after the answer.

    The answer is a closed fold, but the cell right under it is on the screen with it: its saved output
    (the check of the answer, the numbers the answer explains, the quiz after the last prompt) is read
    while the learner is still predicting. So its output goes too; the learner's own run shows it.
    """
    hidden = set()
    for prompt, answer in prediction_spans(cells, where):
        hidden |= {i for i in range(prompt + 1, answer) if cells[i].cell_type == "code"}
        hidden |= {next((i for i in range(answer + 1, len(cells)) if cells[i].cell_type == "code"), answer)}
    return hidden - {i for i, cell in enumerate(cells) if cell.cell_type != "code"}


def is_caption(paragraph: str) -> bool:
    """An italic paragraph ("*Figure: …*", "*The explorer: …*"): the caption of the output above it."""
    text = paragraph.strip()
    return bool(re.match(r"\*(?![*\s])", text)) and text.endswith(("*", "*)"))


def fold_caption(source: str, reveal: str = REVEAL) -> str:
    """Fold the caption that opens ``source`` (its leading italic paragraphs) into a closed ``<details>``
    whose summary is ``reveal``.

    In the learner copy the output it describes is not there until the learner runs the cell above.
    """
    paragraphs = re.split(r"\n\s*\n", source.strip("\n"))
    count = 0
    while count < len(paragraphs) and is_caption(paragraphs[count]):
        count += 1
    if not count:
        return source
    caption, rest = "\n\n".join(paragraphs[:count]), "\n\n".join(paragraphs[count:])
    return f"<details><summary>{reveal}</summary>\n\n{caption}\n\n</details>\n\n{rest}".rstrip("\n")


#: a name the learner defines or sets in an exercise cell: ``def my_softmax(…)``, ``my_query = …``
_LEARNERS_NAME = re.compile(r"^\s*(?:def\s+(my_\w+)\s*\(|(my_\w+)\s*=)", re.MULTILINE)


def learners_names(cells) -> set[str]:
    """The names the learner writes: those defined or set in a cell that holds a solution region."""
    names = set()
    for cell in cells:
        if cell.cell_type == "code" and BEGIN in cell.source:
            names |= {a or b for a, b in _LEARNERS_NAME.findall(cell.source)}
    return names


def learner_notebook(nb: nbformat.NotebookNode, name: str = "notebook",
                     page: bool = False) -> tuple[nbformat.NotebookNode, int]:
    """The learner version of ``nb`` (a copy) and how many solution regions it removed.

    With ``page`` (a static page, where no cell can be run) the outputs a learner predicts
    (:func:`predicted_cells`) are kept rather than cleared, in cells tagged :data:`PREDICTED_TAG`, which
    the page's template shows in a closed fold: the reader predicts, then opens it.
    """
    nb = nbformat.from_dict(nb)  # deep copy
    nb.cells = [c for c in nb.cells if GRADED_TAG not in c.metadata.get("tags", [])]
    hidden = predicted_cells(nb.cells, name)
    learners = learners_names(nb.cells)
    uses_learners = re.compile(rf"\b(?:{'|'.join(sorted(learners))})\b") if learners else None
    removed = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        source, count = strip_solutions(cell.source, f"{name}, cell {index}")
        calls_learners = bool(uses_learners and uses_learners.search(source))
        clear = (count > 0 or bool(CHECK_CALL.search(cell.source)) or calls_learners
                 or (index in hidden and not page))
        cell.source = source
        removed += count
        if page and index in hidden and not clear and cell.outputs:
            tags = cell.metadata.setdefault("tags", [])
            tags.append(PREDICTED_TAG)
        if clear:
            cell.outputs = []
            cell.execution_count = None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and index - 1 in hidden and nb.cells[index - 1].cell_type == "code":
            cell.source = fold_caption(cell.source, REVEAL_ON_PAGE if page else REVEAL)
    return nb, removed
