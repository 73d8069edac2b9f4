"""The course and a learning platform (Canvas, Moodle): grades out of nbgrader, submissions into it.

Both directions go through a **roster**, a CSV file the teacher keeps (an export of the platform's class
list, with one column added), one row per learner::

    hub user,lms id,first name,last name,email,section
    jupyter-ada,40123,Ada,Lovelace,ada@uni.example,Tuesday
    ben,40124,Ben,Okafor,ben@uni.example,Tuesday

``hub user`` is the learner's name on the hub (nbgrader's student id: ``jupyter-ada`` on The Littlest
JupyterHub, the hub's user name on Zero to JupyterHub; either form may be written, the ``jupyter-`` prefix
is matched both ways); ``lms id`` is the learner's id in the platform (Canvas: the *ID* column of its
gradebook export, its user id; Moodle: the *ID number* of the profile); ``email`` is how Moodle can match
instead; names and section are optional.

``grades`` (``make grades COURSE_DIR=… ROSTER=…``) reads nbgrader's gradebook (``gradebook.db``) and
writes, to ``--out`` (default ``build/grades``), one import file per platform, a column per graded lesson
(lessons 00 and 10 carry no points and are left out), the score with nbgrader's late penalty taken off:

* ``canvas-grades.csv``, Canvas's gradebook import format as Canvas's own importer reads it
  (instructure/canvas-lms, ``app/models/gradebook_importer.rb``: a header whose first columns are
  ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment; a
  row whose first cell holds ``Points Possible`` gives the points; a learner is found by ``ID``, else by
  the SIS ids, else by name; a column matching no assignment's title creates one). The same layout as
  Canvas's gradebook export (https://nemogb-dev.github.io/nemogb-r/articles/detailed-canvas-export-info.html)
  and institutional guides (https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/
  calculating-final-grades/import-csv-file-carmen-grades).
* ``moodle-grades.csv``, Moodle's CSV grade import (moodle/moodle, ``grade/import/csv``; its own tests,
  ``grade/import/csv/tests/load_data_test.php``, import the export's columns ``First name``, ``Surname``,
  ``ID number``, ``Email address``, then grade items): on import the teacher maps a user column ("Map
  from": *ID number* or *Email address*; "Map to": ``useridnumber`` or ``useremail``,
  https://docs.moodle.org/311/en/Grade_import) and each lesson's column to its grade item.

A cell is the learner's score when they handed the lesson in; 0 when they did not and its due date (their
extension included) has passed; empty while it has not, or when the lesson has no due date (both
platforms leave an empty cell unchanged). Learners of the gradebook missing from the roster are named on
the terminal: the files cannot carry them.

``collect LESSON ARCHIVE`` takes the platform's download of every learner's upload for one lesson
(Canvas: *Download Submissions*; Moodle: *Download all submissions*) into nbgrader's ``submitted/`` folder
by ``nbgrader zip_collect``, each file under the hub user the roster gives for the account that uploaded
it. The platform names each file after that account (Canvas, instructure/canvas-lms
``lib/content_zipper.rb``: ``<name>[_LATE]_<user id>_<file id>_<file name>``; Moodle, ``mod/assign``:
``<Full Name>_<participant number>_assignsubmission_file[_/]<file name>``, the participant number of that
assignment, which Moodle's *grading worksheet* of the assignment maps to the learner's ``Email address``
or ``ID number``: ``--worksheet``). So the identity is the platform's login, not anything a learner's
server could claim: this is the submission route for Zero to JupyterHub, where every learner's server runs
as the same user (docs/classroom.md). A learner's notebook is filed as the lesson's notebook whatever its
uploaded name, their ``concept-quiz.json`` beside it; a file that no roster row claims is named and left out.

Usage: python tools/lms.py grades COURSE_DIR --roster roster.csv [--out build/grades]
       python tools/lms.py collect COURSE_DIR LESSON ARCHIVE.zip --roster roster.csv
                           [--lms canvas|moodle] [--worksheet grading-worksheet.csv]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from conventions import LESSONS, ROOT

PREFIX = "jupyter-"  # The Littlest JupyterHub's Unix account of hub user <name>
ROSTER_COLUMNS = ("hub user", "lms id", "first name", "last name", "email", "section")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("First name", "Surname", "ID number", "Email address")
QUIZ_RECORD = "concept-quiz.json"
#: Canvas's download name (lib/content_zipper.rb: get_filename, add_upload_submission)
CANVAS_FILE = re.compile(r"^(?P<name>.*?)_(?:LATE_)?(?P<id>\d+)_\d+_(?P<file>.+)$")
#: Moodle's download name, in a folder per learner or flat (mod/assign/locallib.php: download_submissions)
MOODLE_FILE = re.compile(r"^(?P<name>.*)_(?P<id>\d+)_assignsubmission_file[_/](?P<file>[^/]+)$")
#: the identifier column of Moodle's grading worksheet ("Participant 123456")
MOODLE_IDENTIFIER = "Identifier"


class RosterError(ValueError):
    """A roster, worksheet or archive the tool cannot use as it stands; the message says what to change."""


@dataclass(frozen=True)
class Learner:
    hub_user: str
    lms_id: str = ""
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    section: str = ""

    @property
    def name(self) -> str:
        return " ".join(p for p in (self.first_name, self.last_name) if p) or self.hub_user


def hub_key(name: str) -> str:
    """A hub user name without The Littlest JupyterHub's account prefix: ``jupyter-ada`` and ``ada`` match."""
    return name.strip().removeprefix(PREFIX)


def read_roster(path: Path) -> list[Learner]:
    """The roster's learners; :class:`RosterError` naming the row and the problem when it cannot be used."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:  # -sig: a spreadsheet's byte-order mark
            reader = csv.DictReader(fh)
            rows = list(reader)
            header = [(h or "").strip().lower() for h in reader.fieldnames or []]
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"the roster {path} cannot be read ({exc})") from None
    if not rows:
        raise RosterError(f"the roster {path} has no learners: a header line {','.join(ROSTER_COLUMNS)} "
                          "and a row per learner")
    if "hub user" not in header:
        raise RosterError(f"the roster {path} has no column 'hub user' (its columns: {', '.join(header)}); "
                          f"expected {', '.join(ROSTER_COLUMNS)}")
    learners, seen = [], {}
    for number, row in enumerate(rows, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        learner = Learner(row.get("hub user", ""), row.get("lms id", ""), row.get("first name", ""),
                          row.get("last name", ""), row.get("email", ""), row.get("section", ""))
        if not learner.hub_user:
            raise RosterError(f"{path}, line {number}: no hub user")
        if not (learner.lms_id or learner.email):
            raise RosterError(f"{path}, line {number} ({learner.hub_user}): neither an lms id nor an email, "
                              "so the platform could not find this learner")
        key = hub_key(learner.hub_user)
        if key in seen:
            raise RosterError(f"{path}, line {number}: {learner.hub_user} is on line {seen[key]} already")
        seen[key] = number
        learners.append(learner)
    return learners


# ------------------------------------------------------------------------------------- grades out
GRADED = {lesson.slug: lesson for lesson in LESSONS.values() if lesson.points}


def column(slug: str) -> str:
    """A lesson's column in both platforms: its number and title, as the notebook's heading has it."""
    lesson = GRADED[slug]
    return f"{slug[:2]} · {lesson.title}"


def _cell(submission, due: datetime.datetime | None, now: datetime.datetime) -> str:
    """The grade a platform gets for one learner and lesson (see the module docstring)."""
    if submission is not None and submission.timestamp is not None:
        return f"{max(0.0, submission.score - (submission.late_submission_penalty or 0.0)):g}"
    if due is not None and due < now:
        return "0"
    return ""


@dataclass
class Gradebook:
    """What the platforms' files take from nbgrader's gradebook: the graded lessons in it (registry order),
    their points and due dates, and hub key -> lesson -> grade."""

    lessons: list[str]
    points: dict[str, float]
    dues: dict[str, datetime.datetime | None]
    grades: dict[str, dict[str, str]]
    now: datetime.datetime

    def cells(self, learner: Learner) -> list[str]:
        """The learner's grades, lesson by lesson; one the gradebook has never seen handed nothing in."""
        mine = self.grades.get(hub_key(learner.hub_user))
        if mine is None:
            return [_cell(None, self.dues[slug], self.now) for slug in self.lessons]
        return [mine[slug] for slug in self.lessons]


def read_gradebook(course: Path, now: datetime.datetime | None = None) -> Gradebook:
    """The graded lessons and every learner's grades in ``course/gradebook.db`` (nbgrader's own API)."""
    from nbgrader.api import Gradebook as NbgraderGradebook
    from nbgrader.api import MissingEntry

    now = now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)  # nbgrader keeps UTC
    db = course / "gradebook.db"
    if not db.is_file():
        raise RosterError(f"{course} has no gradebook.db: run nbgrader generate_assignment and autograde "
                          "there first")
    with NbgraderGradebook(f"sqlite:///{db}") as gb:
        names = {a.name for a in gb.assignments}
        lessons = [slug for slug in GRADED if slug in names]
        points = {slug: gb.find_assignment(slug).max_score for slug in lessons}
        dues = {slug: gb.find_assignment(slug).duedate for slug in lessons}
        grades: dict[str, dict[str, str]] = {}
        for student in gb.students:
            row = grades.setdefault(hub_key(student.id), {})
            for slug in lessons:
                try:
                    submission = gb.find_submission(slug, student.id)
                except MissingEntry:
                    row[slug] = _cell(None, dues[slug], now)
                else:
                    row[slug] = _cell(submission, submission.duedate, now)
    return Gradebook(lessons, points, dues, grades, now)


def grades(course: Path, roster: Path, out: Path, now: datetime.datetime | None = None) -> dict:
    """Write ``canvas-grades.csv`` and ``moodle-grades.csv``; return the files and the learners left out."""
    learners = read_roster(roster)
    book = read_gradebook(course, now)
    if not book.lessons:
        raise RosterError(f"the gradebook of {course} has no graded lesson yet (lessons 00 and 10 carry no "
                          "points): generate, collect and autograde one first")
    missing = sorted(set(book.grades) - {hub_key(learner.hub_user) for learner in learners})
    out.mkdir(parents=True, exist_ok=True)
    canvas, moodle = out / "canvas-grades.csv", out / "moodle-grades.csv"
    with open(canvas, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*CANVAS_COLUMNS, *map(column, book.lessons)])
        writer.writerow(["Points Possible", "", "", "", "", *(f"{book.points[s]:g}" for s in book.lessons)])
        for learner in learners:
            student = ", ".join(p for p in (learner.last_name, learner.first_name) if p) or learner.hub_user
            writer.writerow([student, learner.lms_id, "", "", learner.section, *book.cells(learner)])
    with open(moodle, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*MOODLE_COLUMNS, *map(column, book.lessons)])
        for learner in learners:
            writer.writerow([learner.first_name, learner.last_name, learner.lms_id, learner.email,
                             *book.cells(learner)])
    return {"files": [canvas, moodle], "lessons": book.lessons, "learners": len(learners), "missing": missing}


# ----------------------------------------------------------------------------------- submissions in
def worksheet_map(path: Path, learners: list[Learner]) -> dict[str, Learner]:
    """Moodle's grading worksheet of one assignment: participant number -> roster learner, by the
    worksheet's ``Email address`` or ``ID number`` column."""
    by_email = {learner.email.lower(): learner for learner in learners if learner.email}
    by_id = {learner.lms_id: learner for learner in learners if learner.lms_id}
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"the grading worksheet {path} cannot be read ({exc})") from None
    if not rows or MOODLE_IDENTIFIER not in rows[0]:
        raise RosterError(f"{path} is not a Moodle grading worksheet: it has no '{MOODLE_IDENTIFIER}' column")
    found = {}
    for row in rows:
        number = re.search(r"(\d+)\s*$", row.get(MOODLE_IDENTIFIER, "") or "")
        learner = by_email.get((row.get("Email address") or "").strip().lower()) or by_id.get(
            (row.get("ID number") or "").strip())
        if number and learner:
            found[number.group(1)] = learner
    return found


def attribute(relative: str, lms: str, by_id: dict[str, Learner]) -> tuple[Learner | None, str]:
    """The learner who uploaded the file at ``relative`` (its path in the platform's download) and the file's
    own name; ``(None, why)`` when no roster row claims it."""
    pattern = CANVAS_FILE if lms == "canvas" else MOODLE_FILE
    parts = Path(relative).parts
    match = pattern.match(parts[-1]) or (pattern.match("/".join(parts[-2:])) if len(parts) > 1 else None)
    if not match:
        return None, f"not named as {lms.title()} names a learner's upload"
    learner = by_id.get(match.group("id"))
    if learner is None:
        return None, f"{lms.title()} account {match.group('id')} ({match.group('name')}) is not on the roster"
    return learner, match.group("file")


def filed_as(file: str, lesson: str) -> str | None:
    """What nbgrader gets the uploaded ``file`` as: the lesson's notebook, the concept-quiz record, or
    None (not part of a submission)."""
    if file.endswith(".ipynb"):
        return f"{lesson}.ipynb"
    if re.fullmatch(r"concept-quiz(?:[ _-]?\(?\d+\)?)?\.json", file):
        return QUIZ_RECORD
    return None


def collect(course: Path, lesson: str, archive: Path, roster: Path, lms: str = "canvas",
            worksheet: Path | None = None) -> dict:
    """File a platform's download of one lesson's uploads into ``submitted/`` with ``nbgrader zip_collect``
    (see the module docstring); return who was collected and the files left out, with why."""
    learners = read_roster(roster)
    if lms == "canvas":
        by_id = {learner.lms_id: learner for learner in learners if learner.lms_id}
    elif worksheet is None:
        raise RosterError("Moodle names each upload by a participant number of that assignment: give its "
                          "grading worksheet (--worksheet), which says whose number is whose")
    else:
        by_id = worksheet_map(worksheet, learners)
    if not archive.is_file():
        raise RosterError(f"no archive at {archive}")
    staging = course / "downloaded" / lesson
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "archive").mkdir(parents=True)
    shutil.copy(archive, staging / "archive" / archive.name)
    mapping, left_out, collected = {}, [], set()
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            if name.endswith("/"):
                continue
            learner, file = attribute(name, lms, by_id)
            target = filed_as(file, lesson) if learner else None
            if learner is None or target is None:
                why = file if learner is None else "not a notebook or concept-quiz.json"
                left_out.append(f"{name}: {why}")
                continue
            key = Path(name).name if lms == "canvas" else name
            twin = next((k for k, v in mapping.items() if v == (learner.hub_user, target)), None)
            if twin is not None:  # two notebooks from one learner: the one named for the lesson counts
                keep, drop = (key, twin) if Path(file).stem == lesson else (twin, key)
                mapping.pop(twin)
                mapping[keep] = (learner.hub_user, target)
                left_out.append(f"{drop}: a second {target} from {learner.hub_user} (kept {keep})")
                continue
            mapping[key] = (learner.hub_user, target)
            collected.add(learner.hub_user)
    plan = staging / "attribution.csv"
    with open(plan, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([(path, user, target) for path, (user, target) in sorted(mapping.items())])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "tools"),
                                                                     os.environ.get("PYTHONPATH")]))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    done = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", lesson, "--force",
                           f"--CourseDirectory.root={course}",
                           "--ZipCollectApp.collector_plugin=lms.UploadCollector",
                           f"--UploadCollector.attribution={plan}"],
                          capture_output=True, text=True, cwd=course, env=env)
    if done.returncode != 0:
        raise RosterError(f"nbgrader zip_collect failed:\n{done.stdout}{done.stderr}")
    return {"collected": sorted(collected), "left out": left_out, "log": done.stderr}


def _collector_class():
    """nbgrader's filename collector, reading the attribution that :func:`collect` wrote (loaded by nbgrader
    from this module: ``--ZipCollectApp.collector_plugin=lms.UploadCollector``)."""
    from nbgrader.plugins import FileNameCollectorPlugin
    from traitlets import List, Unicode

    class UploadCollector(FileNameCollectorPlugin):
        attribution = Unicode(help="The CSV of upload path, hub user, file name that tools/lms.py wrote"
                              ).tag(config=True)
        valid_ext = List([".ipynb", ".json"]).tag(config=True)

        def collect(self, submitted_file: str):
            if not hasattr(self, "_plan"):
                with open(self.attribution, newline="", encoding="utf-8") as fh:
                    self._plan = {path: (user, target) for path, user, target in csv.reader(fh)}
            parts = Path(submitted_file).parts
            for depth in range(1, len(parts) + 1):
                found = self._plan.get("/".join(parts[-depth:]))
                if found:
                    user, target = found
                    return {"student_id": user, "file_id": Path(target).stem}
            self.log.warning("Left out (no roster row claims it): %s", submitted_file)
            return None

    return UploadCollector


def __getattr__(name: str):
    if name == "UploadCollector":  # only nbgrader asks for it, in its own process, with nbgrader installed
        return _collector_class()
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    out = sub.add_parser("grades", help="Canvas's and Moodle's gradebook import files, from nbgrader's")
    out.add_argument("course", type=Path, help="the nbgrader course folder (with gradebook.db)")
    out.add_argument("--roster", type=Path, required=True, help="hub user -> platform ids (see above)")
    out.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    into = sub.add_parser("collect", help="a platform's download of one lesson's uploads into submitted/")
    into.add_argument("course", type=Path)
    into.add_argument("lesson", help="the lesson (nbgrader assignment), e.g. 03_step2_scores")
    into.add_argument("archive", type=Path, help="the platform's zip of every learner's upload")
    into.add_argument("--roster", type=Path, required=True)
    into.add_argument("--lms", choices=("canvas", "moodle"), default="canvas")
    into.add_argument("--worksheet", type=Path, help="Moodle: the assignment's grading worksheet (CSV)")
    args = parser.parse_args(argv)
    try:
        if args.command == "grades":
            done = grades(args.course, args.roster, args.out)
            print(f"grades of {done['learners']} learners, {len(done['lessons'])} lessons: "
                  + ", ".join(str(p) for p in done["files"]))
            if done["missing"]:
                print("not on the roster, so in neither file: " + ", ".join(done["missing"]), file=sys.stderr)
            return 0
        if args.lesson not in {lesson.slug for lesson in LESSONS.values()}:
            raise RosterError(f"no lesson called {args.lesson!r}: the assignments are the lessons' notebook "
                              "names, e.g. 03_step2_scores")
        done = collect(args.course, args.lesson, args.archive, args.roster, args.lms, args.worksheet)
    except RosterError as exc:
        print(f"lms: {exc}", file=sys.stderr)
        return 2
    print(f"collected {len(done['collected'])} learner(s) into {args.course / 'submitted'}: "
          + ", ".join(done["collected"]))
    for line in done["left out"]:
        print(f"left out: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
