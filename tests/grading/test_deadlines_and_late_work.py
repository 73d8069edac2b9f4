"""Deadlines, late work and extensions through the real nbgrader, as a teacher sets them up
(``tools/hub_grading.py``: the course's grading policy in its nbgrader config, ``deadlines.toml`` in the
course folder, ``hub_grading.py deadlines``), and what comes out of it: the feedback page and the LMS files.

Lesson 03 is released through nbgrader's exchange (a folder, as on a hub) with a due date 36 hours ago;
four learners fetch it and submit with ``nbgrader submit``:

* ``ada`` on time thanks to a two-day extension (written ``jupyter-ada``, as on The Littlest JupyterHub);
* ``ben`` a day and a half late: two days begun, 20 % of his 3 points;
* ``cleo`` first with a mistake, then right; a second ``collect`` keeps the first until ``--update``, which
  takes the last; a one-day extension leaves her half a day late: 10 %;
* ``dan`` with a mistake, an extension for every lesson: on time, 0 points, the mistake named.

Then autograde, feedback pages (a few tens of kB, no script, the lateness on top) and ``tools/lms.py
grades`` (Canvas's and Moodle's import files: the grade after the penalty, 0 for a learner on the roster
who handed nothing in after the due date).
"""

from __future__ import annotations

import csv
import datetime
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.grading import PLANTED, fill, named_mistake

hub_grading = load_tool("hub_grading")
stamp = load_tool("stamp_notebooks")
LESSON = "03_step2_scores"
COURSE_ID = "attention"
NOW = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
DUE = NOW - datetime.timedelta(hours=36)
PLAN = {"ada": "right", "ben": "right", "cleo": "right", "dan": "mistake"}


def run(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``cwd``, as a user whose home is ``home`` (which holds the course's secret)."""
    env = {**os.environ, "HOME": str(home),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("LESSONS_HIDDEN_SECRET", None)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, f"nbgrader {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def learner_submits(root: Path, exchange: Path, name: str, how: str) -> None:
    """The learner's side: fetch (once), fill lesson 03's exercise (right or the planted mistake), submit."""
    home = root / "learners" / name
    home.mkdir(parents=True, exist_ok=True)
    common = [f"--Exchange.root={exchange}", f"--CourseDirectory.course_id={COURSE_ID}", f"--student={name}"]
    if not (home / LESSON).exists():
        run(home, home, "fetch_assignment", LESSON, *common)
    path = home / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(path, as_version=4)
    teacher = nbformat.read(root / "course" / "source" / LESSON / f"{LESSON}.ipynb", as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in teacher.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    released = nbformat.read(root / "course" / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    starts = {c.metadata["nbgrader"]["grade_id"]: c.source for c in released.cells
              if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = fill(starts[grade_id], solutions[grade_id], {"my_scores": how})
    nbformat.write(nb, path)
    run(home, home, "submit", LESSON, *common)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term")
    course, exchange, home = root / "course", root / "exchange", root / "teacher"
    home.mkdir()
    hub_grading.make_exchange(exchange)
    hub_grading.make_secret(home / ".lessons-secret")
    config = hub_grading.config_text(COURSE_ID, str(exchange), course)  # nbgrader runs with HOME=home
    (course / "source" / LESSON).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(config + hub_grading.POLICY.format(percent=10))
    nb = stamp.nbgrader_source_notebook(nbformat.read(REPO / "notebooks" / f"{LESSON}.ipynb", as_version=4))
    nbformat.write(nb, course / "source" / LESSON / f"{LESSON}.ipynb")
    run(course, home, "generate_assignment", LESSON, "--force")
    run(course, home, "release_assignment", LESSON)
    (course / hub_grading.DEADLINES).write_text(
        f'timezone = "UTC"\n[due]\n"{LESSON}" = {DUE:%Y-%m-%dT%H:%M:%S}\n'
        f'[extensions]\n"jupyter-ada" = 2\n"cleo" = {{ "{LESSON}" = 1 }}\n"dan" = 5\n')

    logs = {}
    learner_submits(root, exchange, "cleo", "mistake")
    logs["first collect"] = run(course, home, "collect", LESSON).stderr
    for name, how in PLAN.items():
        learner_submits(root, exchange, name, how)
    logs["collect"] = run(course, home, "collect", LESSON).stderr
    first = (course / "submitted" / "cleo" / LESSON / f"{LESSON}.ipynb").read_text()
    logs["update"] = run(course, home, "collect", "--update", LESSON).stderr
    logs["cleo before update"] = first
    tool = subprocess.run([sys.executable, str(REPO / "tools" / "hub_grading.py"), "deadlines", "--course",
                           str(course)], capture_output=True, text=True)
    assert tool.returncode == 0, tool.stdout + tool.stderr
    logs["deadlines"] = tool.stdout
    run(course, home, "autograde", LESSON, "--create")
    run(course, home, "generate_feedback", LESSON)
    return root, course, logs


def gradebook(course: Path):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / 'gradebook.db'}")


def page(course: Path, name: str) -> str:
    return (course / "feedback" / name / LESSON / f"{LESSON}.html").read_text(encoding="utf-8")


def text_of(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


@pytest.mark.grading
def test_a_second_collect_keeps_the_first_submission_and_collect_update_takes_the_last(term):
    _, course, logs = term
    assert "use --update" in logs["collect"], logs["collect"]
    old, new, _ = PLANTED["my_scores"]
    assert new in logs["cleo before update"], "the first collect took cleo's first submission"
    assert "Updating submission: cleo" in logs["update"]
    assert old in (course / "submitted" / "cleo" / LESSON / f"{LESSON}.ipynb").read_text()


@pytest.mark.grading
def test_due_dates_and_extensions_reach_the_gradebook_and_late_work_loses_its_share(term):
    _, course, logs = term
    assert f"{LESSON}: due {DUE:%Y-%m-%d %H:%M} UTC" in logs["deadlines"]
    with gradebook(course) as gb:
        assert gb.find_assignment(LESSON).duedate == DUE
        got = {}
        for name in PLAN:
            submission = gb.find_submission(LESSON, name)
            got[name] = (submission.score, round(submission.late_submission_penalty, 2),
                         submission.extension and submission.extension.days)
    assert got == {"ada": (3.0, 0.0, 2), "ben": (3.0, 0.6, None), "cleo": (3.0, 0.3, 1), "dan": (0.0, 0.0, 5)}


@pytest.mark.grading
def test_the_feedback_page_says_when_the_work_came_in_and_what_lateness_cost(term):
    _, course, _ = term
    ben, ada = text_of(page(course, "ben")), text_of(page(course, "ada"))
    assert "Handed in late:" in ben and "1 day 12 hours after the due date" in ben
    assert "Late penalty: −0.60 of your 3.00 points, so your grade is 2.40" in ben and "10 %" in ben
    assert "Late submission penalty (Score: -0.6)" in ben  # nbgrader's own line in its table of contents
    assert "Handed in on time:" in ada and "your extension included" in ada
    from lessons_lib.exercises import EXERCISES

    mistake = PLANTED["my_scores"][2] or named_mistake("my_scores", EXERCISES)
    assert f"my_scores: NOT YET ({mistake})" in text_of(page(course, "dan"))


@pytest.mark.grading
def test_the_feedback_page_is_a_few_tens_of_kb_and_loads_nothing(term):
    _, course, _ = term
    for name in PLAN:
        markup = page(course, name)
        assert len(markup.encode()) < 60_000, (name, len(markup.encode()))
        assert "<script" not in markup and "cdnjs" not in markup and "mathjax" not in markup.lower()
        assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", markup), name
        assert "data:image/png" not in markup  # the lesson's figures stay in the lesson
        assert "def my_scores" in text_of(markup), "the learner's own code is on the page"


@pytest.mark.grading
def test_the_lms_files_carry_the_grade_after_the_penalty_and_zero_for_work_not_handed_in(term, tmp_path):
    _, course, _ = term
    roster = tmp_path / "roster.csv"
    roster.write_text("hub user,lms id,first name,last name,email,section\n"
                      "jupyter-ada,101,Ada,Lovelace,ada@uni.example,A\nben,102,Ben,Okafor,ben@uni.example,A\n"
                      "cleo,103,Cleo,Ng,cleo@uni.example,B\ndan,104,Dan,Ruiz,dan@uni.example,B\n"
                      "eve,105,Eve,Park,eve@uni.example,B\n")
    done = subprocess.run([sys.executable, str(REPO / "tools" / "lms.py"), "grades", str(course), "--roster",
                           str(roster), "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    column = load_tool("lms").column
    with open(tmp_path / "out" / "canvas-grades.csv", newline="", encoding="utf-8") as fh:
        canvas = {row["ID"]: row[column(LESSON, "canvas")] for row in csv.DictReader(fh)}
    assert canvas == {"": "3", "101": "3", "102": "2.4", "103": "2.7", "104": "0", "105": "0"}, canvas
    with open(tmp_path / "out" / "moodle-grades.csv", newline="", encoding="utf-8") as fh:
        moodle = {row["Email address"]: row[column(LESSON, "moodle")] for row in csv.DictReader(fh)}
    assert moodle == {"ada@uni.example": "3", "ben@uni.example": "2.4", "cleo@uni.example": "2.7",
                      "dan@uni.example": "0", "eve@uni.example": "0"}
