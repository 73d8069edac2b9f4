"""The course's conventions that the tools share, each written once.

* where the course is: :data:`ROOT`, :data:`NOTEBOOKS`, and :data:`LESSONS`, the registry of lessons
  (``lessons_lib/course/lessons.py``) of this tree: the tree's root goes first on ``sys.path``, so that a
  tool run in a copy of the tree reads the copy's registry and library;
* how a file carries a generated block: between a begin and an end marker, rewritten by
  :func:`replace_block` (the README's launch block, the teacher's guide's tables and plan, lesson 00's
  course map, the export table of ``lessons_lib/__init__.py``);
* how a notebook marks things: the cell tags (:data:`COLAB_TAG`, :data:`GRADED_TAG`, :data:`SUBSLIDE_TAG`),
  nbgrader's solution markers, and :data:`CHECK_CALL`, an exercise's check called on the
  learner's answer (``ll.check_softmax(my_softmax)``).

Every tool imports what it needs from here (``from conventions import ROOT, replace_block``), and the
tests load a tool one way, ``conftest.load_tool("stamp_notebooks")``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

from lessons_lib.course.lessons import LESSONS, Lesson, stated_minutes  # noqa: E402  (this tree's, set above)

#: the first code cell of every lesson: installs the library, only inside Google Colab (stamp_notebooks.py)
COLAB_TAG = "colab-setup"
#: nbgrader's graded test cell after an exercise's check (stamp_notebooks.py; the learner copy drops it)
GRADED_TAG = "graded-test"
#: a cell that starts a sub-slide and stays on screen (tools/split_tall_cells.py, a quiz of its own screen)
SUBSLIDE_TAG = "own-subslide"
#: nbgrader's markers of the worked solution, which the learner copy and nbgrader's release replace (the
#: graded cells need no hidden-test markers: their unseen cases come from the course's secret)
SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
#: an exercise's check called on the learner's answer: ``ll.check_softmax(my_softmax)`` -> (check, answer)
CHECK_CALL = re.compile(r"\b(check_\w+)\((my_\w+)\)")

__all__ = ["ROOT", "NOTEBOOKS", "LESSONS", "Lesson", "stated_minutes", "COLAB_TAG", "GRADED_TAG",
           "SUBSLIDE_TAG", "SOLUTION_BEGIN", "SOLUTION_END", "CHECK_CALL",
           "check_cell", "replace_block", "read_block", "lesson_of"]


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


def read_block(text: str, begin: str, end: str) -> str | None:
    """What lies between the markers (stripped), or None when they are missing."""
    if begin not in text or end not in text.split(begin, 1)[1]:
        return None
    return text.split(begin, 1)[1].split(end, 1)[0].strip()
