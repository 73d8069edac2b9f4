"""The teacher's tools refuse misuse the same way (``conventions.ToolParser``): exit status 2, nothing on
standard output, and one line on standard error naming what to fix, no traceback. ``term_plan``'s own
refusals, which name ``--sessions`` or ``--minutes``: tests/tools/test_term_plan_refuses_nonsense.py."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from tests.helpers import REPO

ROSTER = "hub user,lms id,first name,last name,email\nada,4001,Ada,Lovelace,ada@uni.example\n"
LESSON = "03_step2_scores"


@pytest.fixture
def files(tmp_path):
    """A course folder with nothing graded yet, a roster, a Moodle download, a file that is not a zip."""
    (tmp_path / "course").mkdir()
    (tmp_path / "roster.csv").write_text(ROSTER)
    with zipfile.ZipFile(tmp_path / "moodle.zip", "w") as zf:
        zf.writestr(f"Ada Lovelace_312_assignsubmission_file/{LESSON}.ipynb", "{}")
    (tmp_path / "grades.pdf").write_bytes(b"%PDF-1.4 not a zip")
    return tmp_path


def refusal(tmp_path, tool: str, *args: str) -> str:
    command = [sys.executable, str(REPO / "tools" / tool), *(a.format(tmp=tmp_path) for a in args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "" and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"{tool.removesuffix('.py')}: "), done.stderr
    return done.stderr


COLLECT = ("lms.py", "collect", "{tmp}/course", LESSON)
LMS = {
    "not a zip": ((*COLLECT, "{tmp}/grades.pdf", "--roster", "{tmp}/roster.csv"),
                  "grades.pdf is not a zip file: give the platform's download"),
    "another platform's archive": ((*COLLECT, "{tmp}/moodle.zip", "--roster", "{tmp}/roster.csv"),
                                   "is not Canvas's download of submissions: none of its 1 file(s) is named "
                                   "as Canvas names an upload (is it Moodle's? --lms moodle)"),
    "no worksheet": ((*COLLECT, "{tmp}/moodle.zip", "--roster", "{tmp}/roster.csv", "--lms", "moodle"),
                     "give its grading worksheet (--worksheet)"),
    "a missing worksheet": ((*COLLECT, "{tmp}/moodle.zip", "--roster", "{tmp}/roster.csv", "--lms",
                             "moodle", "--worksheet", "{tmp}/nothing.csv"),
                            "the grading worksheet {tmp}/nothing.csv cannot"),
    "a missing roster": ((*COLLECT, "{tmp}/moodle.zip", "--roster", "{tmp}/nobody.csv"),
                         "the roster {tmp}/nobody.csv cannot be read"),
    "no roster given": ((*COLLECT, "{tmp}/moodle.zip"), "the following arguments are required: --roster"),
    "an unknown lesson": (("lms.py", "collect", "{tmp}/course", "03_scores", "{tmp}/moodle.zip", "--roster",
                           "{tmp}/roster.csv"), "no lesson called '03_scores'"),
    "no gradebook": (("lms.py", "grades", "{tmp}/course", "--roster", "{tmp}/roster.csv"),
                     "has no gradebook.db: run nbgrader generate_assignment and autograde"),
    "an assignments file that is not one": (("lms.py", "grades", "{tmp}/course", "--roster",
                                             "{tmp}/roster.csv", "--assignments", "{tmp}/roster.csv"),
                                            "is not an assignments file"),
    "feedback before collect": (("lms.py", "feedback", "{tmp}/course", LESSON),
                                f"{LESSON} was not collected from a platform's download here"),
    "an unknown command": (("lms.py", "upload"), "argument command: invalid choice: 'upload'"),
}


@pytest.mark.subprocess
@pytest.mark.parametrize("case", sorted(LMS))
def test_lms_refuses_misuse_in_one_line(files, case):
    args, words = LMS[case]
    assert words.format(tmp=files) in refusal(files, *args)


@pytest.mark.subprocess
@pytest.mark.parametrize(("args", "words"), [
    (("{tmp}/nowhere",), "no course folder at {tmp}/nowhere"),
    (("{tmp}/course",), "{tmp}/course/autograded holds no graded notebooks it can read: run nbgrader"),
    ((), "the following arguments are required: course"),
])
def test_the_class_report_refuses_misuse_in_one_line(files, args, words):
    assert words.format(tmp=files) in refusal(files, "class_report.py", *args)


@pytest.mark.subprocess
@pytest.mark.parametrize(("args", "words"), [
    (("deadlines", "--course", "{tmp}/course"), "{tmp}/course/deadlines.toml cannot be read"),
    (("deadline",), "invalid choice: 'deadline'"),
])
def test_hub_grading_refuses_misuse_in_one_line(files, args, words):
    assert words.format(tmp=files) in refusal(files, "hub_grading.py", *args)


@pytest.mark.subprocess
def test_term_plan_refuses_misuse_in_one_line(files):
    assert "--minutes: a session must last" in refusal(files, "term_plan.py", "--minutes", "5")
