"""The course's conventions that the tools share, each written once.

* where the course is: :data:`ROOT`, and :data:`LESSONS`, the registry of lessons (with its :data:`PARTS`,
  each lesson listed under its part's heading by :func:`lessons_by_part`)
  (``lessons_lib/course/lessons.py``) of this tree: the tree's root goes first on ``sys.path``, so that a
  tool run in a copy of the tree reads the copy's registry and library;
* how a file carries a generated block: between a begin and an end marker, rewritten by
  :func:`replace_block` (the README's launch block, the teacher's guide's tables and plan, lesson 00's
  course map, the export table of ``lessons_lib/__init__.py``);
* how a notebook marks things: the cell tags (:data:`COLAB_TAG`, :data:`GRADED_TAG`, :data:`SUBSLIDE_TAG`,
  :data:`CONTENTS_TAG`),
  nbgrader's solution markers, :data:`CHECK_CALL`, an exercise's check called on the
  learner's answer (``ll.check_softmax(my_softmax)``), and a prediction: a line that opens with
  ``**Predict`` (:data:`PREDICT`), answered further on in a fold whose summary opens with "Check your
  answer" (:data:`ANSWER_FOLD`).
* when a notebook's outputs are those of its code: :func:`code_digest`, which ``tools/run_notebooks.py``
  records under :data:`RAN_KEY` of the notebook's metadata each time it runs one, so that a release
  re-runs only the lessons whose code changed since (``run_notebooks.py --stale``).
* how a teacher's tool refuses misuse: exit status 2 and one line naming what to fix, no traceback
  (:class:`ToolParser`, the command line's refusals; a tool's own refusals the same way).

Every tool imports what it needs from here (``from conventions import ROOT, replace_block``), and the
tests load a tool one way, ``conftest.load_tool("stamp_notebooks")``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

from lessons_lib.course.lessons import (  # noqa: E402  (this tree's, set above)
    LESSONS,
    PARTS,
    Lesson,
    lessons_by_part,
    stated_minutes,
    torch_lessons,
)

#: the first code cell of every lesson: installs the library, only inside Google Colab (stamp_notebooks.py)
COLAB_TAG = "colab-setup"
#: nbgrader's graded test cell after an exercise's check (stamp_notebooks.py; the learner copy drops it)
GRADED_TAG = "graded-test"
#: a cell that starts a sub-slide and stays on screen (tools/split_tall_cells.py, a quiz of its own screen)
SUBSLIDE_TAG = "own-subslide"
#: the cell after a lesson's objectives that lists its sections, each a link to its heading
#: (stamp_notebooks.py)
CONTENTS_TAG = "lesson-contents"
#: nbgrader's markers of the worked solution, which the learner copy and nbgrader's release replace (the
#: graded cells need no hidden-test markers: their unseen cases come from the course's secret)
SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
#: an exercise's check called on the learner's answer: ``ll.check_softmax(my_softmax)`` -> (check, answer)
CHECK_CALL = re.compile(r"\b(check_\w+)\((my_\w+)\)")
#: a **Predict** prompt: a line (or a quoted line) that opens with ``**Predict``
#: ("**Predict:**", "> **Predict.**")
PREDICT = re.compile(r"^(?:>\s*)?\*\*\s*Predict\b", re.MULTILINE)
#: the summary that opens the fold holding a prediction's answer
ANSWER_SUMMARY = "Check your answer"
#: a fold holding a prediction's answer: ``<details><summary>Check your answer …</summary> … </details>``
ANSWER_FOLD = re.compile(r"<details>\s*<summary>\s*" + ANSWER_SUMMARY, re.IGNORECASE)

__all__ = ["ROOT", "LESSONS", "PARTS", "Lesson", "lessons_by_part", "stated_minutes", "torch_lessons",
           "COLAB_TAG", "GRADED_TAG", "SUBSLIDE_TAG", "CONTENTS_TAG", "SOLUTION_BEGIN", "SOLUTION_END",
           "CHECK_CALL", "PREDICT", "ANSWER_SUMMARY", "ANSWER_FOLD", "RAN_KEY", "check_cell", "code_digest",
           "replace_block", "lesson_of", "markdown_headings", "heading_anchor"]

#: the notebook metadata where tools/run_notebooks.py records the digest of the code it ran
RAN_KEY = "lessons_ran_code"


def code_digest(nb) -> str:
    """A digest of what a notebook's outputs come from: its code cells, in order, except the Colab cell.

    The Colab cell is left out because it is stamped (it names the release tag) and does nothing outside
    Colab: bumping the version changes it and not one output. Prose is left out because no output reads it.
    """
    digest = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code" and COLAB_TAG not in cell.metadata.get("tags", []):
            digest.update(cell.source.encode("utf-8") + b"\0")
    return digest.hexdigest()


def check_cell(source: str) -> tuple[str, str] | None:
    """``(check, answer)`` when the cell is only an exercise's check call (``ll.check_scores(my_scores)``)."""
    match = re.fullmatch(r"(?:ll\.)?" + CHECK_CALL.pattern.removeprefix(r"\b"), source.strip())
    return match.groups() if match else None


def lesson_of(path: Path | str) -> Lesson:
    """The registry's entry of a lesson notebook (``notebooks/07_causal_masking.ipynb``)."""
    slug = Path(path).stem
    lesson = LESSONS.get(slug[:2])
    if lesson is None or lesson.slug != slug:
        raise ValueError(f"{Path(path).name} is not a lesson of lessons_lib/course/lessons.py; add its entry "
                         f"there (CONTRIBUTING.md, 'Adding a lesson').")
    return lesson


def replace_block(text: str, begin: str, end: str, body: str, *, where: str = "the file",
                  keep_markers: bool = True) -> str:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``body``.

    ``keep_markers``: the markers stay and ``body`` goes between them on lines of its own; otherwise
    ``body`` replaces the markers too (it carries them itself). A missing marker is an error that names
    ``where`` and the markers to add.
    """
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"{where} needs the markers {begin} and {end}, once each, in that order")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return head + (f"{begin}\n{body}\n{end}" if keep_markers else body) + tail


def markdown_headings(source: str) -> list[tuple[int, str]]:
    """The ATX headings of a markdown text, ``(level, text)`` in order; lines inside code fences are not
    headings."""
    found, fence = [], None
    for line in source.split("\n"):
        opened = re.match(r"\s{0,3}(`{3,}|~{3,})", line)
        if opened:
            mark = opened.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        heading = re.match(r"\s{0,3}(#{1,6})\s+(.+?)(?:\s+#+)?\s*$", line)
        if fence is None and heading:
            found.append((len(heading.group(1)), heading.group(2)))
    return found


def heading_anchor(text: str) -> str:
    """The id JupyterLab gives a markdown heading (and a link ``#id`` reaches it): the heading as shown,
    before its formulas are typeset (their TeX kept), with every space a ``-``. Links, emphasis and code
    marks are dropped outside formulas and code: ``## 3 · One big $W_Q$`` -> ``3-·-One-big-$W_Q$``."""
    parts = re.split(r"(\$[^$]+\$|`[^`]+`)", text)
    shown = []
    for part in parts:
        if part.startswith("`"):
            shown.append(part.strip("`"))
        elif part.startswith("$"):
            shown.append(part)
        else:
            part = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", part)
            part = re.sub(r"<[^>]+>", "", part)
            shown.append(re.sub(r"\*+|(?<!\w)_+|_+(?!\w)", "", part))
    return "".join(shown).strip().replace(" ", "-")


class ToolParser(argparse.ArgumentParser):
    """argparse's parser refusing as the teacher's tools refuse: one line naming what to fix and where the
    help is, exit status 2 (its subcommands' parsers the same). ``prog`` is the tool's path, ``tools/lms.py``.
    """

    def error(self, message):
        tool = Path(self.prog.split()[0]).stem
        self.exit(2, f"{tool}: {message} (python {self.prog} --help)\n")

    def add_subparsers(self, **kwargs):
        kwargs.setdefault("parser_class", ToolParser)
        return super().add_subparsers(**kwargs)
