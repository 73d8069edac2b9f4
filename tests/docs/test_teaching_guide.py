"""The teacher's guide (docs/teaching.md) states what the course does, not what it once did.

Its times are the registry's (tests/tools/test_lesson_times.py) and its term plan the tool's
(tests/tools/test_term_plan.py); here: it quotes no time measured on one run, each
lesson's mistake list is the mistakes its checks name (written by ``tools/teaching_times.py --stamp``),
the PyTorch lessons it lists are the registry's, whose ``torch`` the notebook kernels confirm
(``tools/offline_kernel.py report``), and its course outcomes name lessons and exercises that exist.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest

from lessons_lib.course.lessons import LESSONS
from lessons_lib.exercises import EXERCISES
from tests.helpers import NOTEBOOKS, REPO, load_tool

times = load_tool("teaching_times")
GUIDE = (REPO / "docs" / "teaching.md").read_text(encoding="utf-8")


def entry(number: str) -> str:
    """The guide's entry of one lesson: from its ``## NN ·`` heading to the next lesson's."""
    found = re.search(rf"^## {number} · .*?(?=^## \d\d · |\Z)", GUIDE, flags=re.M | re.S)
    assert found, f"docs/teaching.md has no entry headed '## {number} · '"
    return found.group(0)


def test_the_guide_quotes_no_time_or_slope_of_one_run():
    """A time or a time slope is the run's, not the course's: another machine, or the same one busy, gives
    another (tests/notebooks/test_text_matches_outputs.py holds the lessons to the same rule). The notebooks
    print each run's with its verdict; the guide says what holds on every machine."""
    quoted = re.findall(r"N\^\d\.\d\d|\(\d+(?:\.\d+)? s\b[^)]*\)|saved run", GUIDE)
    assert not quoted, f"the teacher's guide quotes one run's measurements: {quoted}"


CHECKED = [n for n, lesson in LESSONS.items() if set(lesson.points) & set(EXERCISES)]


@pytest.mark.parametrize("number", CHECKED)
def test_each_lessons_mistake_list_is_every_mistake_its_checks_name(number):
    block = entry(number).split(f"<!-- mistakes:{number}:begin -->", 1)[1]
    block = block.split(f"<!-- mistakes:{number}:end -->", 1)[0].strip()
    assert block == times.mistake_list(number), f"lesson {number}: run python tools/teaching_times.py --stamp"
    for name in LESSONS[number].points:
        for mistake in EXERCISES[name].mistakes if name in EXERCISES else ():
            assert f"(`{mistake.key}`)" in block, (number, mistake.key)


def test_lesson_09s_list_names_the_per_row_shift():
    assert "(`shift_not_per_row`)" in entry("09")


def _text(path) -> str:
    """What a reader reads: a document's text, a notebook's cells (a list may wrap across a line there)."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)


def test_every_list_of_the_pytorch_lessons_is_the_registrys():
    listed = {n for n, lesson in LESSONS.items() if lesson.torch}
    assert times.torch_list() == ", ".join(sorted(listed)) and listed >= {"08", "09"}
    for path in [REPO / "README.md", REPO / "docs" / "teaching.md", NOTEBOOKS / "00_start_here.ipynb"]:
        found = times.TORCH_LIST.findall(_text(path))
        assert found and set(found) == {times.torch_list()}, (path.name, found)


def test_a_list_of_the_pytorch_lessons_wrapped_across_lines_is_stamped_whole():
    """Stamped line by line, "(PyTorch lessons: 08,\\n  09, 10)" once became "07, 08, 09, 10,\\n  09, 10"."""
    wrapped = "the lessons that use it (PyTorch lessons: 08,\n  09, 10): the GPU path"
    assert times.TORCH_LIST.sub(times.torch_list(), wrapped) == (
        f"the lessons that use it (PyTorch lessons: {times.torch_list()}): the GPU path")
    assert not re.search(r"[Ll]essons? \d\d(?:,? (?:and )?\d\d)* (?:need|use) (?:PyTorch|torch)", GUIDE)


@pytest.mark.subprocess
def test_the_kernel_report_fails_when_a_lesson_uses_torch_against_its_registry_entry(tmp_path):
    """make test-notebooks records whether each lesson's kernel imported torch; the report holds the
    registry to it."""
    tool = REPO / "tools" / "offline_kernel.py"
    names = [f"{LESSONS[n].slug}.ipynb" for n in ("06", "07")]
    rows = {"06": {"notebook": names[0], "peak_mb": 130.0, "cells": 30, "torch": False},
            "07": {"notebook": names[1], "peak_mb": 314.0, "cells": 40, "torch": True}}
    for i, row in enumerate(rows.values()):
        (tmp_path / f"{i}.json").write_text(json.dumps(row))
    ok = subprocess.run([sys.executable, str(tool), "report", str(tmp_path), *names],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "(PyTorch)" in ok.stdout, ok.stdout + ok.stderr
    (tmp_path / "0.json").write_text(json.dumps({**rows["06"], "torch": True}))
    wrong = subprocess.run([sys.executable, str(tool), "report", str(tmp_path), *names],
                           capture_output=True, text=True)
    assert wrong.returncode == 1 and "imports torch, but its entry" in wrong.stdout
    # a numpy lesson's optional comparison with transformers brings torch where transformers is installed
    (tmp_path / "0.json").write_text(json.dumps({**rows["06"], "torch": True, "transformers": True}))
    compared = subprocess.run([sys.executable, str(tool), "report", str(tmp_path), *names],
                              capture_output=True, text=True)
    assert compared.returncode == 0 and "(PyTorch, through transformers)" in compared.stdout, compared.stdout


def _outcomes() -> list[dict[str, list[str] | str]]:
    block = GUIDE.split("<!-- outcomes:begin -->", 1)[1].split("<!-- outcomes:end -->", 1)[0]
    rows = []
    for line in block.strip().splitlines()[2:]:
        outcome, _what, lessons, exercises, quiz = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append({"outcome": outcome, "lessons": re.findall(r"\d\d", lessons),
                     "exercises": re.findall(r"`(my_\w+)`", exercises), "quiz": re.findall(r"`(\w+)`", quiz)})
    return rows


def test_every_outcome_names_lessons_exercises_and_questions_that_exist():
    from lessons_lib.quizzes.concepts import CONCEPTS

    rows = _outcomes()
    assert [r["outcome"] for r in rows] == [f"O{i}" for i in range(1, len(rows) + 1)] and len(rows) >= 6
    points = {name: number for number, lesson in LESSONS.items() for name in lesson.points}
    concepts = {c.key: c for c in CONCEPTS}
    for row in rows:
        assert row["lessons"] and set(row["lessons"]) <= set(LESSONS), row
        for name in row["exercises"]:
            assert name in points and points[name] in row["lessons"], (row["outcome"], name)
        for key in row["quiz"]:
            assert concepts[key].outcome == row["outcome"], (row["outcome"], key)
    assert set(points) == {n for r in rows for n in r["exercises"]}, "a graded exercise serves no outcome"
    assert set(concepts) == {k for r in rows for k in r["quiz"]}, "a concept question measures no outcome"
    assert set(LESSONS) == {n for r in rows for n in r["lessons"]}, "a lesson teaches no outcome"


def test_the_guide_says_where_to_report_a_problem_in_the_course():
    stamp = load_tool("stamp_notebooks")
    assert f"<https://github.com/{stamp.repository()}/issues>" in GUIDE
