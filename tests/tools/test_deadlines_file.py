"""The course's deadlines file (``deadlines.toml``, read by ``tools/hub_grading.py deadlines``): due dates
in the teacher's time zone, extensions for every lesson or some, and clear words for what cannot be used.
``tests/grading/test_deadlines_and_late_work.py`` applies one through the real nbgrader."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, load_tool

hub_grading = load_tool("hub_grading")


def deadlines(tmp_path, text: str):
    path = tmp_path / hub_grading.DEADLINES
    path.write_text(text)
    return hub_grading.read_deadlines(path)


def test_due_dates_are_read_in_the_files_time_zone_and_kept_in_utc(tmp_path):
    due, _ = deadlines(tmp_path, 'timezone = "Europe/Berlin"\n[due]\n'
                                 '"03_step2_scores" = 2026-12-08T09:00:00\n'
                                 '"04_step3_scale_softmax" = 2026-07-01T09:00:00+02:00\n')
    assert due == {"03_step2_scores": datetime.datetime(2026, 12, 8, 8, 0),       # winter: UTC+1
                   "04_step3_scale_softmax": datetime.datetime(2026, 7, 1, 7, 0)}  # an offset given: kept


def test_an_extension_is_days_for_every_lesson_or_a_table_for_some(tmp_path):
    _, extensions = deadlines(tmp_path, '[extensions]\n"jupyter-ada" = 3\n'
                                        '"ben" = { "03_step2_scores" = 1.5 }\n')
    assert extensions == {"jupyter-ada": {"*": datetime.timedelta(days=3)},
                          "ben": {"03_step2_scores": datetime.timedelta(days=1, hours=12)}}


def test_the_template_the_teacher_gets_reads_as_no_deadlines_yet(tmp_path):
    assert deadlines(tmp_path, hub_grading.DEADLINES_TEMPLATE) == ({}, {})


@pytest.mark.parametrize("text, words", [
    ('[due]\n"03_scores" = 2026-12-08T09:00:00\n',
     "no lesson called '03_scores'; did you mean '03_step2_scores'"),
    ('[due]\n"03_step2_scores" = 2026-12-08\n', "give a date and a time"),
    ('timezone = "Mars/Olympus"\n', "not a time zone"),
    ('[extensions]\n"ada" = 0\n', "a number of days above 0"),
    ('[extensions]\n"ada" = "two days"\n', "a number of days above 0"),
    ('[extensions]\n"ada" = { "99_nothing" = 2 }\n', "no lesson called '99_nothing'"),
    ("[due\n", "cannot be read"),
    ('[extensions]\n"ada" = inf\n', "at most 365"),
    ('[extensions]\n"ada" = nan\n', "at most 365"),
    ('[extensions]\n"ada" = 1e12\n', "at most 365"),
    ('[extensions]\n"ada" = { "03_step2_scores" = inf }\n', "extensions 'ada', '03_step2_scores'"),
    ("timezone = 5\n", "timezone 5 is not a time zone"),
    ("due = 5\n", "due: a table, such as \\[due\\]"),
    ('extensions = "ada"\n', "extensions: a table, such as \\[extensions\\]"),
    ('[dues]\n"03_step2_scores" = 2026-12-08T09:00:00\n', "dues is not part of a deadlines file"),
])
def test_a_file_that_cannot_be_applied_is_refused_naming_the_entry(tmp_path, text, words):
    with pytest.raises(hub_grading.DeadlineError, match=words.replace("(", r"\(")) as refused:
        deadlines(tmp_path, text)
    assert str(tmp_path / hub_grading.DEADLINES) in str(refused.value), "the message names the file"


def apply(course, text: str) -> subprocess.CompletedProcess:
    """``hub_grading.py deadlines`` on ``text``, as the teacher runs it."""
    (course / hub_grading.DEADLINES).write_text(text)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([sys.executable, str(REPO / "tools" / "hub_grading.py"), "deadlines", "--course",
                           str(course)], capture_output=True, text=True, env=env)


@pytest.mark.subprocess  # nbgrader makes a new gradebook with alembic
def test_an_extension_for_a_lesson_with_no_due_date_is_kept_and_applies_once_it_is_due(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    # a new gradebook runs `alembic` (nbgrader's migrations): the one beside this Python
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    course = tmp_path / "course"
    course.mkdir()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention") as gb:  # 04 generated, not yet due
        gb.add_assignment("04_step3_scale_softmax")
    first = apply(course, '[due]\n"03_step2_scores" = 2026-12-08T09:00:00\n[extensions]\n"ada" = 3\n'
                          '"ben" = { "04_step3_scale_softmax" = 2 }\n')
    assert first.returncode == 0 and first.stderr == "", first.stderr  # no library's warnings either
    assert "ben: 2 more day(s) for 04_step3_scale_softmax kept in the file, applied once it has a due date" \
        in first.stdout
    assert "ada: 3 more day(s) for 03_step2_scores" in first.stdout
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:  # no extension on a lesson not yet due
        assert gb.find_assignment("04_step3_scale_softmax").submissions == []
    later = apply(course, '[due]\n"03_step2_scores" = 2026-12-08T09:00:00\n'
                          '"04_step3_scale_softmax" = 2026-12-15T09:00:00\n'
                          '[extensions]\n"ada" = 3\n"ben" = { "04_step3_scale_softmax" = 2 }\n')
    assert later.returncode == 0 and later.stderr == "", later.stderr
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        ben = gb.find_submission("04_step3_scale_softmax", "ben")
        assert ben.duedate == datetime.datetime(2026, 12, 17, 9, 0)
        ada = gb.find_submission("04_step3_scale_softmax", "ada")
        assert ada.duedate == datetime.datetime(2026, 12, 18, 9, 0)


@pytest.mark.subprocess
def test_the_tool_refuses_a_file_in_one_line_with_exit_status_2(tmp_path):
    done = apply(tmp_path, "timezone = 5\n")
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
