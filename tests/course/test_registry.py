"""The registry of lessons (lessons_lib/course/lessons.py) is the one place a lesson's identity is written.

The notebooks, the per-lesson modules, the teacher's guide and the course maps agree with it; the tools
read it (tests/tools/test_launch_links.py, test_lesson_times.py and test_term_plan.py hold what they write
from it).
"""

from __future__ import annotations

import re

import nbformat
import pytest

from lessons_lib.course.lessons import LESSONS, Lesson
from tests.helpers import NOTEBOOKS, REPO

PER_LESSON = ("figures", "explorers", "exercises", "quizzes")


def test_every_notebook_has_an_entry_and_every_entry_a_notebook():
    assert [p.stem for p in sorted(NOTEBOOKS.glob("*.ipynb"))] == [lesson.slug for lesson in LESSONS.values()]


@pytest.mark.parametrize("lesson", LESSONS.values(), ids=lambda lesson: lesson.number)
def test_a_notebooks_first_heading_is_its_registered_title(lesson):
    nb = nbformat.read(REPO / lesson.notebook, as_version=4)
    first = nb.cells[0].source.lstrip().split("\n", 1)[0]
    assert first == f"# {lesson.number} · {lesson.title}", (
        f"{lesson.notebook} opens with {first!r}; its entry in lessons_lib/course/lessons.py says "
        f"{lesson.title!r}: change one to match the other")


def test_every_lesson_module_belongs_to_a_registered_lesson():
    modules = {lesson.module for lesson in LESSONS.values()}
    strays = [f"{folder}/{path.name}" for folder in PER_LESSON
              for path in sorted((REPO / "lessons_lib" / folder).glob("lesson*.py"))
              if path.stem not in modules]
    assert not strays, f"modules of no registered lesson (lessons_lib/course/lessons.py): {strays}"


def test_the_teachers_guide_has_an_entry_per_lesson_under_its_short_title():
    guide = (REPO / "docs" / "teaching.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d\d · \[[^\]]+\]\([^)]+\))$", guide, re.M)
    assert headings == [f"{n} · [{lesson.short}](../{lesson.notebook})" for n, lesson in LESSONS.items()]


def test_the_quizzes_are_those_of_registered_lessons():
    import lessons_lib as ll

    assert set(ll.QUIZZES) <= set(LESSONS)


def test_a_lessons_parts_are_named_from_its_slug():
    lesson = LESSONS["07"]
    assert (lesson.number, lesson.notebook, lesson.module) == (
        "07", "notebooks/07_causal_masking.ipynb", "lesson07_causal_masking")
    assert [Lesson(**{**vars(lesson), "minutes": m}).stated_minutes for m in (2, 52, 53)] == [5, 50, 55]
