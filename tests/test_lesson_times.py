"""Every time the course states comes from one source: each lesson's ``minutes`` in the registry.

``tools/teaching_times.py --write`` measures each lesson (reading, running, doing) and records its total
in ``lessons_lib/course/lessons.py``; ``--stamp`` writes it into each notebook's first line, lesson 00
(its range and its course map), the README and the teacher's guide. These tests hold that every place
agrees with the registry, and that no other time is stated.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from conftest import NOTEBOOKS, REPO, load_tool

times = load_tool("teaching_times")
MINUTES = times.read_minutes()
LESSONS = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_every_lesson_has_measured_minutes():
    assert sorted(MINUTES) == [p.stem[:2] for p in LESSONS]
    assert all(isinstance(m, int) and 5 <= m <= 120 for m in MINUTES.values()), MINUTES


def test_the_tool_rewrites_only_the_minutes_of_the_lessons_it_measured(tmp_path):
    registry = tmp_path / "lessons.py"
    source = times.REGISTRY.read_text(encoding="utf-8")
    registry.write_text(source, encoding="utf-8")
    times.write_minutes({"07": 99, "10": 7}, registry)
    changed = [(a, b) for a, b in zip(source.splitlines(), registry.read_text(encoding="utf-8").splitlines())
               if a != b]
    assert changed == [(f"        minutes={MINUTES['07']},", "        minutes=99,"),
                       (f"        minutes={MINUTES['10']},", "        minutes=7,")]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem[:2])
def test_each_lesson_states_its_measured_minutes_in_its_first_line(path):
    nb = nbformat.read(path, as_version=4)
    stated = re.findall(r"⏱ \*\*about (\d+) minutes\*\*", nb.cells[0].source)
    assert stated == [str(times.stated(MINUTES[path.stem[:2]]))], (
        f"{path.name} states {stated}; lessons_lib/course/lessons.py measured {MINUTES[path.stem[:2]]} "
        "(run: python tools/teaching_times.py --stamp)")


def test_no_lesson_states_another_time_for_itself_or_the_course():
    for path in [*LESSONS, REPO / "README.md", REPO / "docs" / "teaching.md", REPO / "docs" / "classroom.md"]:
        text = path.read_text(encoding="utf-8")
        for claim in re.findall(r"(?:minutes per lesson|each lesson takes about \d+|lesson of about \d+|"
                                r"whole course about [^.\n]*|\d+(?:½)? hours)", text, flags=re.I):
            pytest.fail(f"{path.name} states a time by hand: {claim!r}")


RANGE_STATED_IN = [REPO / "README.md", NOTEBOOKS / "00_start_here.ipynb"]


@pytest.mark.parametrize("path", RANGE_STATED_IN, ids=lambda p: p.name)
def test_the_course_total_and_range_are_the_measured_ones(path):
    text = path.read_text(encoding="utf-8")
    found = times.RANGE.findall(text)
    assert found and set(found) == {times.course_range(MINUTES)}, (path.name, found)


def test_the_teachers_guide_carries_the_measured_totals():
    guide = (REPO / "docs" / "teaching.md").read_text(encoding="utf-8")
    for lesson, minutes in MINUTES.items():
        table = guide.split(f"<!-- times:{lesson}:begin -->", 1)[1]
        table = table.split(f"<!-- times:{lesson}:end -->", 1)[0]
        assert f"| **total** | | | | **{minutes}** |" in table, f"lesson {lesson}: not {minutes} min"
    overview = guide.split("<!-- times:overview:begin -->", 1)[1].split("<!-- times:overview:end -->", 1)[0]
    assert overview.strip() == times.overview(MINUTES)


def test_stamping_the_measured_minutes_changes_nothing(tmp_path, monkeypatch):
    """The committed files are exactly what --stamp writes (a copy is stamped, the tree is not touched)."""
    import shutil

    copy = tmp_path / "course"
    (copy / "docs").mkdir(parents=True)
    shutil.copytree(NOTEBOOKS, copy / "notebooks")
    for name in ("README.md", "docs/teaching.md"):
        shutil.copy2(REPO / name, copy / name)
    for name, value in {"ROOT": copy, "GUIDE": copy / "docs" / "teaching.md",
                        "README": copy / "README.md"}.items():
        monkeypatch.setattr(times, name, value)
    assert times.stamp(times.read_minutes()) == []
