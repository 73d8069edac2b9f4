"""The course's deadlines file (``deadlines.toml``, read by ``tools/hub_grading.py deadlines``): due dates
in the teacher's time zone, extensions for every lesson or some, and clear words for what cannot be used.
``tests/grading/test_deadlines_and_late_work.py`` applies one through the real nbgrader."""

from __future__ import annotations

import datetime

import pytest

from tests.helpers import load_tool

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
])
def test_a_file_that_cannot_be_applied_is_refused_naming_the_entry(tmp_path, text, words):
    with pytest.raises(hub_grading.DeadlineError, match=words.replace("(", r"\(")):
        deadlines(tmp_path, text)
