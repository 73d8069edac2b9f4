"""``tools/stamp_notebooks.py --nbgrader-source``: nbgrader's source folder holds every lesson, 00 and 10
(no points, but the concept quiz travels with them) as well as the lessons with exercises."""

from __future__ import annotations

import nbformat

from lessons_lib.course.lessons import LESSONS
from tests.helpers import load_tool

stamp = load_tool("stamp_notebooks")
learner_release = load_tool("learner_release")


def test_the_source_folder_gets_every_lesson_of_the_registry(tmp_path):
    written = stamp.write_nbgrader_source(tmp_path)
    assert written == [lesson.slug for lesson in LESSONS.values()]
    assert {"00_start_here", "10_review_and_paper"} <= set(written)
    for slug in written:
        assert (tmp_path / slug / f"{slug}.ipynb").is_file(), slug


def test_lessons_without_exercises_go_in_with_their_concept_quiz_and_folded_answers(tmp_path):
    stamp.write_nbgrader_source(tmp_path)
    for slug, phase in (("00_start_here", "pre"), ("10_review_and_paper", "post")):
        nb = nbformat.read(tmp_path / slug / f"{slug}.ipynb", as_version=4)
        assert not any(c.metadata.get("nbgrader", {}).get("grade") for c in nb.cells), "no points"
        assert any(f'concept_quiz("{phase}")' in c.source for c in nb.cells if c.cell_type == "code"), slug
        prose = [c.source for c in nb.cells if c.cell_type == "markdown"]
        source = nbformat.read(stamp.ROOT / "notebooks" / f"{slug}.ipynb", as_version=4)
        learner, _ = learner_release.learner_notebook(source)
        assert prose == [c.source for c in learner.cells if c.cell_type == "markdown"], slug
