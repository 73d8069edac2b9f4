"""The upload route end to end, once per platform: the platform's download of every upload
(``tools/lms.py collect``), the real ``nbgrader autograde`` and ``generate_feedback``, the grade files
(``tools/lms.py grades``, what ``make grades`` runs) and the feedback archive (``tools/lms.py feedback``).

Lesson 03 was due three days ago (``deadlines.toml``). Each platform's class hands in three notebooks: one
right, one with the planted mistake, one right but late:

* **Canvas**: the download names the late upload ``<name>_LATE_<id>_<file id>_<file>`` and carries no times;
  Canvas keeps each submission's time and applies its own late policy to a grade entered for a late
  submission. So nothing is stamped, nbgrader takes no penalty, and every graded notebook counts: the cell is
  the gradebook's score. The column is the assignment's ``Title (id)``, so the grade lands on it.
* **Moodle**: the grading worksheet's *Last modified (submission)*, in the teacher's time zone, becomes
  nbgrader's ``timestamp.txt``; Moodle takes no late deduction of its own, so nbgrader's (10 % a day begun)
  is in the cell. The column is ``Assignment: <name> (Real)``, as Moodle's export heads it, which Moodle's
  import maps to that assignment by itself.

The feedback archive names each learner's page and graded notebook as the platform's bulk feedback upload
files them: Canvas's *Re-upload Submissions* (the user's and the uploaded file's ids), Moodle's *Upload
multiple feedback files in a zip* (``<Full name>_<participant>_assignfeedback_file/``).
"""

from __future__ import annotations

import csv
import datetime
import html
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.grading import fill, make_course, nbgrader

lms = load_tool("lms")
stamp = load_tool("stamp_notebooks")
hub_grading = load_tool("hub_grading")
LESSON = "03_step2_scores"
NOW = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, second=0, microsecond=0)  # Moodle: minutes
DUE = NOW - datetime.timedelta(days=3)  # the late learner handed in 30 h after it, in the past
ROSTER = ("hub user,lms id,first name,last name,email\n"
          "ada,4001,Ada,Lovelace,ada@uni.example\nben,4002,Ben,Okafor,ben@uni.example\n"
          "cleo,4003,Cleo,Ng,cleo@uni.example\ndan,4004,Dan,Ruiz,dan@uni.example\n"
          "eve,4005,Eve,Park,eve@uni.example\nfay,4006,Fay,Ito,fay@uni.example\n")
ASSIGNMENTS = f"lesson,canvas,moodle\n{LESSON},Lesson 3 · Scores = Q·Kᵀ (48213),Lesson 3 · Scores\n"
#: the class of each platform: hub user -> (how, hours after the due date the upload came in)
CLASSES = {"canvas": {"ada": ("right", -30), "ben": ("mistake", -2), "cleo": ("right", 30)},
           "moodle": {"dan": ("right", -30), "eve": ("mistake", -2), "fay": ("right", 30)}}
BERLIN = datetime.timezone(datetime.timedelta(hours=1))  # Europe/Berlin in winter, the worksheet's zone


def answered(course: Path, how: str) -> bytes:
    """The learner version of lesson 03 with its exercise right or with the planted mistake."""
    teacher = nbformat.read(course / "source" / LESSON / f"{LESSON}.ipynb", as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in teacher.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(course / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = fill(cell.source, solutions[grade_id], {"my_scores": how})
    return nbformat.writes(nb).encode()


def moodle_time(hours: int) -> str:
    """How the worksheet writes a time (userdate, strftimedatetime), in Berlin."""
    return (DUE + datetime.timedelta(hours=hours)).replace(tzinfo=datetime.UTC).astimezone(BERLIN).strftime(
        "%A, %d %B %Y, %I:%M %p")


def downloads(course: Path, root: Path) -> dict[str, Path]:
    """Each platform's download of the class's uploads (and Moodle's grading worksheet)."""
    canvas = root / "canvas-submissions.zip"
    with zipfile.ZipFile(canvas, "w") as zf:
        for number, (user, (how, hours)) in enumerate(CLASSES["canvas"].items()):
            late = "LATE_" if hours > 0 else ""
            name = f"{user}learner_{late}{4001 + number}_{71 + number}_{LESSON}.ipynb"
            zf.writestr(name, answered(course, how))
    moodle = root / "moodle-submissions.zip"
    rows = ["Identifier,Full name,Email address,Status,Grade,Last modified (submission)"]
    with zipfile.ZipFile(moodle, "w") as zf:
        for number, (user, (how, hours)) in enumerate(CLASSES["moodle"].items()):
            name = user.title() + " Learner"
            zf.writestr(f"{name}_{312 + number}_assignsubmission_file/{LESSON}.ipynb", answered(course, how))
            rows.append(f'Participant {312 + number},{name},{user}@uni.example,Submitted,,'
                        f'"{moodle_time(hours)}"')
    (root / "worksheet.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return {"canvas": canvas, "moodle": moodle}


def tool(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, str(REPO / "tools" / "lms.py"), *map(str, args)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def course_for(folder: Path) -> Path:
    """A course as the teacher sets it up (its config, the course's grading policy), lesson 03 generated and
    due three days ago."""
    make_course(folder)
    with open(folder / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write(hub_grading.POLICY.format(percent=10))
    (folder / "source" / LESSON).mkdir(parents=True)
    nb = stamp.nbgrader_source_notebook(nbformat.read(REPO / "notebooks" / f"{LESSON}.ipynb", as_version=4))
    nbformat.write(nb, folder / "source" / LESSON / f"{LESSON}.ipynb")
    nbgrader(folder, "generate_assignment", LESSON, "--force")
    (folder / "deadlines.toml").write_text(f'timezone = "Europe/Berlin"\n[due]\n'
                                           f'"{LESSON}" = {DUE:%Y-%m-%dT%H:%M:%S}Z\n')
    hub_grading.apply_deadlines(folder)
    return folder


@pytest.fixture(scope="module")
def route(tmp_path_factory):
    root = tmp_path_factory.mktemp("upload-route")
    (root / "roster.csv").write_text(ROSTER)
    (root / "assignments.csv").write_text(ASSIGNMENTS, encoding="utf-8")
    found = {}
    for platform in ("canvas", "moodle"):
        course = course_for(root / platform)
        archive = downloads(course, root)[platform]
        extra = ["--lms", "moodle", "--worksheet", root / "worksheet.csv"] if platform == "moodle" else []
        collected = tool("collect", course, LESSON, archive, "--roster", root / "roster.csv", *extra)
        nbgrader(course, "autograde", LESSON, "--create")
        nbgrader(course, "generate_feedback", LESSON)
        out = root / f"{platform}-grades"
        tool("grades", course, "--roster", root / "roster.csv", "--assignments", root / "assignments.csv",
             "--out", out)
        feedback = root / f"{platform}-feedback.zip"
        tool("feedback", course, LESSON, "--out", feedback)
        found[platform] = {"course": course, "collect": collected.stdout, "grades": out, "feedback": feedback}
    return found


def gradebook_grades(course: Path) -> dict[str, str]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: f"{s.score - (s.late_submission_penalty or 0):g}"
                for s in gb.find_assignment(LESSON).submissions}


def text_of(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


@pytest.mark.grading
def test_collect_stamps_each_notebook_with_the_time_its_platform_gives(route):
    for user, (_, hours) in CLASSES["moodle"].items():
        stamp_file = route["moodle"]["course"] / "submitted" / user / LESSON / "timestamp.txt"
        from nbgrader.utils import parse_utc

        assert parse_utc(stamp_file.read_text()) == DUE + datetime.timedelta(hours=hours), user
    for user in CLASSES["canvas"]:  # Canvas's download says only which uploads were late
        assert not (route["canvas"]["course"] / "submitted" / user / LESSON / "timestamp.txt").exists()
    assert "late by the platform's mark (its late policy applies there): cleo" in route["canvas"]["collect"]


@pytest.mark.grading
@pytest.mark.parametrize("platform", ["canvas", "moodle"])
def test_every_graded_learner_gets_the_gradebooks_score_in_the_column_of_the_platforms_assignment(route,
                                                                                                  platform):
    book = gradebook_grades(route[platform]["course"])
    names = list(CLASSES[platform])
    right, mistaken, late = names
    expected = {right: "3", mistaken: "0", late: "3" if platform == "canvas" else "2.4"}
    assert book == expected, book  # Moodle's late learner: 30 h late, two days begun, 20 %
    header, *rows = read(route[platform]["grades"] / f"{platform}-grades.csv")
    if platform == "canvas":
        assert header[5:] == ["Lesson 3 - Scores = Q-K^T (48213)"]
        assert rows[0][0] == "Points Possible" and rows[0][5:] == ["3"]
        cells = {row[1]: row[5] for row in rows[1:]}
        ids = {"ada": "4001", "ben": "4002", "cleo": "4003"}
    else:
        assert header[4:] == ["Assignment: Lesson 3 - Scores (Real)"]
        cells = {row[3]: row[4] for row in rows}
        ids = {user: f"{user}@uni.example" for user in names}
    assert {user: cells[ids[user]] for user in names} == book
    assert all(cell.isascii() for cell in header), header
    others = [cells[key] for key in cells if key not in ids.values()]
    assert others == ["0"] * 3, "the other platform's learners handed nothing in here, and 03 is past due"


@pytest.mark.grading
@pytest.mark.parametrize("platform", ["canvas", "moodle"])
def test_the_feedback_archive_files_each_page_and_graded_notebook_under_the_learners_upload(route, platform):
    with zipfile.ZipFile(route[platform]["feedback"]) as zf:
        names = sorted(zf.namelist())
        page = zf.read(names[0]).decode()
    if platform == "canvas":  # <name>_<user id>_<file id>_<file>: the first two all-digit parts
        assert names == [f"{u}learner_{4001 + i}_{71 + i}_{LESSON}.{ext}"
                         for i, u in enumerate(CLASSES["canvas"]) for ext in ("html", "ipynb")]
    else:
        assert names == [f"{u.title()} Learner_{312 + i}_assignfeedback_file/{LESSON}.{ext}"
                         for i, u in enumerate(CLASSES["moodle"]) for ext in ("html", "ipynb")]
    assert "<html" in page.lower() and "def my_scores" in text_of(page), "the learner's code is on the page"
    with zipfile.ZipFile(route[platform]["feedback"]) as zf:
        graded = nbformat.reads(zf.read(names[1]).decode(), as_version=4)
    assert any(c.metadata.get("nbgrader", {}).get("grade") for c in graded.cells)
    assert "widgets" not in graded.metadata, "the sliders' saved state, half the file, stays behind"


@pytest.mark.grading
def test_moodles_late_learner_reads_the_lateness_on_the_feedback_page(route):
    with zipfile.ZipFile(route["moodle"]["feedback"]) as zf:
        page = zf.read(f"Fay Learner_314_assignfeedback_file/{LESSON}.html").decode()
    text = text_of(page)
    assert "Handed in late:" in text and "1 day 6 hours after the due date" in text
