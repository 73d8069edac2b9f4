"""Grades into the learning platform (``tools/lms.py grades``, ``make grades``): Canvas's and Moodle's
import files from nbgrader's gradebook, read back with the column names each platform documents.

The gradebook is made with nbgrader's own API (the calls autograde makes: an assignment per lesson, its
graded cells, each learner's submission and scores); ``tests/grading/test_deadlines_and_late_work.py``
does the same with the real autograde and late penalties.

What the platforms read (see ``tools/lms.py``): Canvas's importer (instructure/canvas-lms,
``app/models/gradebook_importer.rb``) wants a header whose first cell holds ``Student`` and second ``ID``,
the student columns ending with ``Section``, a ``Points Possible`` row, and finds a learner by ``ID``;
Moodle's CSV import (``grade/import/csv``) maps a user column, ``ID number`` or ``Email address``, and
a column per grade item.
"""

from __future__ import annotations

import csv
import datetime
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import load_tool

lms = load_tool("lms")
NOW = datetime.datetime(2026, 12, 10, 12, 0)
PAST, FUTURE = NOW - datetime.timedelta(days=2), NOW + datetime.timedelta(days=2)
#: lesson -> (due date, points of its one graded cell)
LESSONS = {"00_start_here": (None, 0), "03_step2_scores": (PAST, 3), "04_step3_scale_softmax": (FUTURE, 5),
           "10_review_and_paper": (None, 0)}
#: learner -> lesson -> (score, late penalty)
HANDED_IN = {"jupyter-ada": {"03_step2_scores": (3, 0), "04_step3_scale_softmax": (5, 0)},
             "jupyter-ben": {"03_step2_scores": (3, 0.6)},
             "jupyter-zoe": {"03_step2_scores": (2, 0)}}
ROSTER = ("hub user,lms id,first name,last name,email,section\n"
          "ada,4001,Ada,Lovelace,ada@uni.example,Tue\n"
          "jupyter-ben,4002,Ben,Okafor,ben@uni.example,Tue\n"
          "cleo,4003,Cleo,Ng,cleo@uni.example,Wed\n")


def make_gradebook(course: Path) -> None:
    from nbgrader.api import Gradebook

    course.mkdir(parents=True, exist_ok=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention") as gb:
        for lesson, (due, points) in LESSONS.items():
            gb.add_assignment(lesson, duedate=due)
            gb.add_notebook(lesson, lesson)
            if points:
                gb.add_grade_cell("test_graded", lesson, lesson, max_score=points, cell_type="code")
                gb.add_solution_cell("answer", lesson, lesson)
        for student, lessons in HANDED_IN.items():
            gb.add_student(student)
            for lesson, (score, penalty) in lessons.items():
                gb.add_submission(lesson, student, timestamp=NOW - datetime.timedelta(days=3))
                grade = gb.find_grade("test_graded", lesson, lesson, student)
                grade.auto_score = score
                gb.find_submission_notebook(lesson, lesson, student).late_submission_penalty = penalty
                gb.db.commit()


@pytest.fixture
def written(tmp_path, monkeypatch):
    # a new gradebook runs `alembic` (nbgrader's migrations): the one beside this Python
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    course = tmp_path / "course"
    make_gradebook(course)
    (tmp_path / "roster.csv").write_text(ROSTER)
    done = lms.grades(course, tmp_path / "roster.csv", tmp_path / "out", now=NOW)
    return done, tmp_path / "out"


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.subprocess  # nbgrader makes a new gradebook with alembic
def test_the_canvas_file_reads_back_as_canvas_reads_an_import(written):
    done, out = written
    with open(out / "canvas-grades.csv", newline="", encoding="utf-8") as fh:
        header, points, *learners = list(csv.reader(fh))
    # gradebook_importer.rb: "Student" then "ID", the student columns ending with "Section"
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert "Student" in header[0] and "ID" in header[1] and "Section" in header[4]
    assert "Points Possible" in points[0] and points[5:] == ["3", "5"]
    # no assignment named (--assignments): the lessons' titles, in characters a spreadsheet keeps
    assert header[5:] == ["03 - Step 2: Scores = Q-K^T", "04 - Step 3: Weights = softmax(Scores / sqrt d_k)"]
    by_id = {row[1]: (row[0], row[4], row[5:]) for row in learners}
    assert by_id == {"4001": ("Lovelace, Ada", "Tue", ["3", "5"]),       # the jupyter- prefix matched
                     "4002": ("Okafor, Ben", "Tue", ["2.4", ""]),        # penalty off; 04 not due yet
                     "4003": ("Ng, Cleo", "Wed", ["0", ""])}             # nothing in, 03 past due
    assert done["missing"] == ["zoe"] and done["lessons"] == ["03_step2_scores", "04_step3_scale_softmax"]


@pytest.mark.subprocess  # nbgrader makes a new gradebook with alembic
def test_the_moodle_file_reads_back_with_moodles_user_columns(written):
    _, out = written
    found = rows(out / "moodle-grades.csv")
    assert list(found[0])[:4] == ["First name", "Surname", "ID number", "Email address"]
    column = "Assignment: 03 - Step 2: Scores = Q-K^T (Real)"  # as Moodle's export heads a grade item
    by_email = {row["Email address"]: (row["ID number"], row[column]) for row in found}
    assert by_email == {"ada@uni.example": ("4001", "3"), "ben@uni.example": ("4002", "2.4"),
                        "cleo@uni.example": ("4003", "0")}


@pytest.mark.subprocess  # nbgrader makes a new gradebook with alembic
def test_lessons_00_and_10_carry_no_points_and_are_left_out(written):
    _, out = written
    for name in ("canvas-grades.csv", "moodle-grades.csv"):
        header = (out / name).read_text(encoding="utf-8").splitlines()[0]
        assert "00 -" not in header and "10 -" not in header, header


@pytest.mark.parametrize("text, words", [
    ("lms id,email\n4001,a@b\n", "no column 'hub user'"),
    ("hub user,lms id,email\nada,,\n", "neither an lms id nor an email"),
    ("hub user,lms id\nada,1\njupyter-ada,2\n", "is on line 2 already"),
    ("hub user,lms id\n", "has no learners"),
])
def test_a_roster_that_cannot_be_used_is_refused_in_words(tmp_path, text, words):
    (tmp_path / "roster.csv").write_text(text)
    with pytest.raises(lms.RosterError, match=words):
        lms.read_roster(tmp_path / "roster.csv")


def test_a_spreadsheets_byte_order_mark_and_padded_headers_are_read(tmp_path):
    (tmp_path / "roster.csv").write_text("\ufeffHub User , LMS id\n jupyter-ada ,4001\n", encoding="utf-8")
    assert lms.read_roster(tmp_path / "roster.csv") == [lms.Learner("jupyter-ada", "4001")]
