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
  the SIS ids, else by name; an assignment by the id of a column headed ``Title (id)``
  (``Assignment.title_and_id``), else by its title, and a column matching none creates one). The same
  layout as
  Canvas's gradebook export (https://nemogb-dev.github.io/nemogb-r/articles/detailed-canvas-export-info.html)
  and institutional guides (https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/
  calculating-final-grades/import-csv-file-carmen-grades).
* ``moodle-grades.csv``, Moodle's CSV grade import (moodle/moodle, ``grade/import/csv``; its own tests,
  ``grade/import/csv/tests/load_data_test.php``, import the export's columns ``First name``, ``Surname``,
  ``ID number``, ``Email address``, then grade items): on import the teacher maps a user column ("Map
  from": *ID number* or *Email address*; "Map to": ``useridnumber`` or ``useremail``,
  https://docs.moodle.org/311/en/Grade_import) and each lesson's column to its grade item, which its
  mapping form does by itself for a column headed as Moodle's export heads one, ``Assignment: <name>
  (Real)`` (``grade/import/csv/classes/load_data.php``, ``grade_import_mapping_form``).

Each lesson's column names the platform's assignment (:func:`column`, ``--assignments``: a CSV of
``lesson,canvas,moodle``), in plain ASCII (:func:`plain`: the titles' ·, ᵀ, √ are lost by a spreadsheet
saved in another encoding).

A cell is the learner's score when they handed the lesson in (a time in the gradebook, or a notebook
autograde scored: Canvas's download gives no times); 0 when they did not and its due date (their
extension included) has passed; empty while it has not, or when the lesson has no due date. Moodle's
import reads an empty cell (or ``-``) as *no grade*: it clears a grade that learner already has on that
item, one entered by hand included (``grade/import/csv/classes/load_data.php``, ``update_grade_item``:
``''`` becomes ``null``, which ``grade_item::update_final_grade`` writes; only ``false`` means "do not
change"): a grade entered by hand in Moodle for a learner the file leaves empty is lost on import. What
Canvas's import does with an empty cell is not checked here. Learners of the gradebook missing from the
roster are named on the terminal: the files cannot carry them.

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
Each is stamped with the time the platform gives (nbgrader's ``timestamp.txt``): Moodle's worksheet's
*Last modified (submission)*, in the zone of ``--timezone`` or ``deadlines.toml``; Canvas's download has
none, only ``_LATE_`` in a late file's name, and Canvas applies its own late policy to the grade imported.
What the platform calls each upload is kept (``downloaded/<lesson>/uploads.csv``) for the way back.

``feedback LESSON`` zips each collected learner's feedback page (``nbgrader generate_feedback``) and graded
notebook under the names the platform's bulk feedback upload files under that learner (:func:`feedback_name`:
Canvas's *Re-upload Submissions*, Moodle's *Upload multiple feedback files in a zip*).

Usage: python tools/lms.py grades COURSE_DIR --roster roster.csv [--assignments assignments.csv]
                                 [--out build/grades]
       python tools/lms.py collect COURSE_DIR LESSON ARCHIVE.zip --roster roster.csv
                           [--lms canvas|moodle] [--worksheet grading-worksheet.csv] [--timezone ZONE]
       python tools/lms.py feedback COURSE_DIR LESSON [--out build/feedback/LESSON-PLATFORM.zip]
"""

from __future__ import annotations

import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from conventions import LESSONS, ROOT, ToolParser
from hub_grading import quiet_gradebook

PREFIX = "jupyter-"  # The Littlest JupyterHub's Unix account of hub user <name>
ROSTER_COLUMNS = ("hub user", "lms id", "first name", "last name", "email", "section")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("First name", "Surname", "ID number", "Email address")
QUIZ_RECORD = "concept-quiz.json"
#: Canvas's download name (lib/content_zipper.rb: get_filename, add_upload_submission)
CANVAS_FILE = re.compile(r"^(?P<name>.*?)_(?P<late>LATE_)?(?P<id>\d+)_(?P<attachment>\d+)_(?P<file>.+)$")
#: Moodle's download name, in a folder per learner or flat (mod/assign/locallib.php: download_submissions)
MOODLE_FILE = re.compile(r"^(?P<name>.*)_(?P<id>\d+)_assignsubmission_file[_/](?P<file>[^/]+)$")
#: the identifier column of Moodle's grading worksheet ("Participant 123456")
MOODLE_IDENTIFIER = "Identifier"
#: the worksheet's column of the last change to a submission (mod/assign: lastmodifiedsubmission)
MOODLE_SUBMITTED = "Last modified (submission)"
#: what the teacher names each lesson's assignment in the platform (``--assignments``)
ASSIGNMENT_COLUMNS = ("lesson", "canvas", "moodle")
#: Canvas's column of an existing assignment: title and id (gradebook_importer.rb, Assignment.title_and_id)
CANVAS_ASSIGNMENT = re.compile(r"^(?P<title>.*\S)\s\((?P<id>\d+)\)$")
#: each upload's platform record, beside the attribution, for the feedback archive (``feedback``)
UPLOADS = "uploads.csv"
UPLOAD_COLUMNS = ("hub user", "lms", "name", "account", "attachment", "late", "submitted")
#: characters of the lessons' titles that a spreadsheet's default encoding loses, in plain ASCII
ASCII = {"·": "-", "ᵀ": "^T", "√": "sqrt ", "×": "x", "–": "-", "—": "-", "→": "->", "≈": "~", "“": '"',
         "”": '"', "’": "'", "‘": "'", "…": "..."}


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


def plain(text: str) -> str:
    """``text`` in printable ASCII, which a spreadsheet opened and saved in any encoding keeps: the titles'
    ·, ᵀ and √ written out (:data:`ASCII`), other accents dropped."""
    import unicodedata

    text = "".join(ASCII.get(ch, ch) for ch in text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return " ".join(text.split())


def read_assignments(path: Path | None) -> dict[str, dict[str, str]]:
    """The platform's assignment of each lesson (lesson -> platform -> name), from the teacher's CSV of
    :data:`ASSIGNMENT_COLUMNS`: ``canvas`` is the column Canvas's own gradebook export gives the assignment,
    ``Title (id)``; ``moodle`` the assignment's name in Moodle. None: no file, every lesson by its title."""
    if path is None:
        return {}
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            header = [(h or "").strip().lower() for h in reader.fieldnames or []]
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"the assignments file {path} cannot be read ({exc})") from None
    if "lesson" not in header or not ({"canvas", "moodle"} & set(header)):
        raise RosterError(f"{path} is not an assignments file: its header is {','.join(ASSIGNMENT_COLUMNS)}")
    found = {}
    for number, row in enumerate(rows, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        if row["lesson"] not in GRADED:
            raise RosterError(f"{path}, line {number}: {row['lesson']!r} is not a graded lesson (those: "
                              f"{', '.join(GRADED)})")
        if row.get("canvas") and not CANVAS_ASSIGNMENT.match(row["canvas"]):
            raise RosterError(f"{path}, line {number}: the canvas column is the assignment's column in "
                              f"Canvas's gradebook export, title and id, such as 'Lesson 03 (48213)'; got "
                              f"{row['canvas']!r}")
        found[row["lesson"]] = {k: plain(row[k]) for k in ("canvas", "moodle") if row.get(k)}
    return found


def column(slug: str, lms: str, assignments: dict[str, dict[str, str]] | None = None) -> str:
    """A lesson's column in the platform's import file, in plain ASCII: Canvas, the assignment's
    ``Title (id)`` so that the grade lands on it (else the lesson's number and title, which makes a new
    assignment);
    Moodle, as Moodle's own export heads a grade item, ``Assignment: <name> (Real)``, which its import maps
    to the assignment of that name by itself."""
    named = (assignments or {}).get(slug, {}).get(lms)
    title = named or plain(f"{slug[:2]} - {GRADED[slug].title}")
    return title if lms == "canvas" else f"Assignment: {title} (Real)"


def _handed_in(submission) -> bool:
    """A submission that came in: it has a time, or autograde scored it (an upload whose time the platform
    keeps, or an extension's placeholder never does)."""
    if submission.timestamp is not None:
        return True
    return any(grade.auto_score is not None or grade.manual_score is not None
               for notebook in submission.notebooks for grade in notebook.grades)


def due_date(submission) -> datetime.datetime | None:
    """The submission's due date with its extension; None when its lesson has none (nbgrader's own
    ``duedate`` adds an extension to None and raises)."""
    due = submission.assignment.duedate
    if due is None:
        return None
    return due + submission.extension if submission.extension is not None else due


def _cell(submission, due: datetime.datetime | None, now: datetime.datetime) -> str:
    """The grade a platform gets for one learner and lesson (see the module docstring)."""
    if submission is not None and _handed_in(submission):
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
    with quiet_gradebook(), NbgraderGradebook(f"sqlite:///{db}") as gb:
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
                    row[slug] = _cell(submission, due_date(submission), now)
    return Gradebook(lessons, points, dues, grades, now)


def grades(course: Path, roster: Path, out: Path, now: datetime.datetime | None = None,
           assignments: Path | None = None) -> dict:
    """Write ``canvas-grades.csv`` and ``moodle-grades.csv``; return the files, the learners left out and
    the lessons whose column names no assignment of the platform (``--assignments``)."""
    learners = read_roster(roster)
    named = read_assignments(assignments)
    book = read_gradebook(course, now)
    if not book.lessons:
        raise RosterError(f"the gradebook of {course} has no graded lesson yet (lessons 00 and 10 carry no "
                          "points): generate, collect and autograde one first")
    missing = sorted(set(book.grades) - {hub_key(learner.hub_user) for learner in learners})
    out.mkdir(parents=True, exist_ok=True)
    canvas, moodle = out / "canvas-grades.csv", out / "moodle-grades.csv"
    with open(canvas, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*CANVAS_COLUMNS, *(column(slug, "canvas", named) for slug in book.lessons)])
        writer.writerow(["Points Possible", "", "", "", "", *(f"{book.points[s]:g}" for s in book.lessons)])
        for learner in learners:
            student = ", ".join(p for p in (learner.last_name, learner.first_name) if p) or learner.hub_user
            writer.writerow([student, learner.lms_id, "", "", learner.section, *book.cells(learner)])
    with open(moodle, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*MOODLE_COLUMNS, *(column(slug, "moodle", named) for slug in book.lessons)])
        for learner in learners:
            writer.writerow([learner.first_name, learner.last_name, learner.lms_id, learner.email,
                             *book.cells(learner)])
    unnamed = [slug for slug in book.lessons if "canvas" not in named.get(slug, {})]
    return {"files": [canvas, moodle], "lessons": book.lessons, "learners": len(learners), "missing": missing,
            "unnamed": unnamed}


# ----------------------------------------------------------------------------------- submissions in
def read_zone(course: Path, zone: str | None):
    """The time zone the platform's times are written in: ``zone``, else the course's ``deadlines.toml``'s,
    else UTC."""
    import tomllib
    import zoneinfo

    if zone is None:
        try:
            zone = tomllib.loads((course / "deadlines.toml").read_text(encoding="utf-8")).get("timezone")
        except (OSError, tomllib.TOMLDecodeError):
            zone = None
    try:
        return zoneinfo.ZoneInfo(zone or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
        raise RosterError(f"--timezone {zone!r} is not a time zone's name (such as Europe/Berlin)") from None


def moodle_time(text: str, zone, where: str) -> str:
    """A worksheet's *Last modified (submission)* ("Thursday, 3 December 2026, 10:15 AM", in the zone of the
    teacher who downloaded it) as nbgrader's timestamp in UTC; "" when there is none ("-")."""
    import dateutil.parser

    text = (text or "").strip()
    if text in ("", "-"):
        return ""
    try:
        when = dateutil.parser.parse(text)
    except (ValueError, OverflowError):
        raise RosterError(f"{where}: '{MOODLE_SUBMITTED}' is {text!r}, not a date and time") from None
    when = when if when.tzinfo else when.replace(tzinfo=zone)
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


@dataclass(frozen=True)
class Claim:
    """Whose upload a participant number or account is, and what the platform says of it."""

    learner: Learner
    submitted: str = ""  # nbgrader's timestamp, UTC; "" where the platform's download gives none


def worksheet_map(path: Path, learners: list[Learner], zone=None) -> dict[str, Claim]:
    """Moodle's grading worksheet of one assignment: participant number -> roster learner (by the
    worksheet's ``Email address`` or ``ID number`` column) and when they last changed their submission."""
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
    for line, row in enumerate(rows, start=2):
        number = re.search(r"(\d+)\s*$", row.get(MOODLE_IDENTIFIER, "") or "")
        learner = by_email.get((row.get("Email address") or "").strip().lower()) or by_id.get(
            (row.get("ID number") or "").strip())
        if number and learner:
            when = moodle_time(row.get(MOODLE_SUBMITTED, ""), zone or datetime.UTC, f"{path}, line {line}")
            found[number.group(1)] = Claim(learner, when)
    return found


def attribute(relative: str, lms: str, by_id: dict[str, Claim]) -> tuple[Claim | None, str, re.Match | None]:
    """Who uploaded the file at ``relative`` (its path in the platform's download), the file's own name and
    the platform's name for it; ``(None, why, None)`` when no roster row claims it."""
    pattern = CANVAS_FILE if lms == "canvas" else MOODLE_FILE
    parts = Path(relative).parts
    match = pattern.match(parts[-1]) or (pattern.match("/".join(parts[-2:])) if len(parts) > 1 else None)
    if not match:
        return None, f"not named as {lms.title()} names a learner's upload", None
    claim = by_id.get(match.group("id"))
    if claim is None:
        why = f"{lms.title()} account {match.group('id')} ({match.group('name')}) is not on the roster"
        return None, why, None
    return claim, match.group("file"), match


def filed_as(file: str, lesson: str) -> str | None:
    """What nbgrader gets the uploaded ``file`` as: the lesson's notebook, the concept-quiz record, or
    None (not part of a submission)."""
    if file.endswith(".ipynb"):
        return f"{lesson}.ipynb"
    if re.fullmatch(r"concept-quiz(?:[ _-]?\(?\d+\)?)?\.json", file):
        return QUIZ_RECORD
    return None


def open_archive(archive: Path):
    """The platform's download as a zip, or :class:`RosterError` saying what it is instead."""
    import zipfile

    if not archive.is_file():
        raise RosterError(f"no archive at {archive}")
    try:
        return zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError):
        raise RosterError(f"{archive} is not a zip file: give the platform's download of every upload "
                          "(Canvas: Download Submissions; Moodle: Download all submissions)") from None


def collect(course: Path, lesson: str, archive: Path, roster: Path, lms: str = "canvas",
            worksheet: Path | None = None, zone: str | None = None) -> dict:
    """File a platform's download of one lesson's uploads into ``submitted/`` with ``nbgrader zip_collect``
    (see the module docstring), each with the time the platform gives; return who was collected and the
    files left out, with why."""
    learners = read_roster(roster)
    if lms == "canvas":
        by_id = {learner.lms_id: Claim(learner) for learner in learners if learner.lms_id}
    elif worksheet is None:
        raise RosterError("Moodle names each upload by a participant number of that assignment: give its "
                          "grading worksheet (--worksheet), which says whose number is whose")
    else:
        by_id = worksheet_map(worksheet, learners, read_zone(course, zone))
    mapping, left_out, uploads = {}, [], {}
    with open_archive(archive) as zf:
        names = [name for name in zf.namelist() if not name.endswith("/")]
    pattern = CANVAS_FILE if lms == "canvas" else MOODLE_FILE
    if not any(pattern.match(Path(n).name) or pattern.match("/".join(Path(n).parts[-2:])) for n in names):
        other = "moodle" if lms == "canvas" else "canvas"
        raise RosterError(f"{archive} is not {lms.title()}'s download of submissions: none of its "
                          f"{len(names)} file(s) is named as {lms.title()} names an upload (is it "
                          f"{other.title()}'s? --lms {other})")
    for name in names:
        claim, file, match = attribute(name, lms, by_id)
        target = filed_as(file, lesson) if claim else None
        if claim is None or target is None:
            why = file if claim is None else "not a notebook or concept-quiz.json"
            left_out.append(f"{name}: {why}")
            continue
        user = claim.learner.hub_user
        key = Path(name).name if lms == "canvas" else name
        twin = next((k for k, v in mapping.items() if v[:2] == (user, target)), None)
        if twin is not None:  # two notebooks from one learner: the one named for the lesson counts
            keep, drop = (key, twin) if Path(file).stem == lesson else (twin, key)
            mapping[keep] = mapping.pop(twin)
            left_out.append(f"{drop}: a second {target} from {user} (kept {keep})")
            if keep == twin:
                continue
        mapping[key] = (user, target, claim.submitted)
        if target == f"{lesson}.ipynb":
            found = match.groupdict()
            uploads[user] = (user, lms, found["name"], found["id"], found.get("attachment") or "",
                             "late" if found.get("late") else "", claim.submitted)
    staging = course / "downloaded" / lesson
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "archive").mkdir(parents=True)
    shutil.copy(archive, staging / "archive" / archive.name)
    plan = staging / "attribution.csv"
    with open(plan, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([(path, *claim) for path, claim in sorted(mapping.items())])
    with open(staging / UPLOADS, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([UPLOAD_COLUMNS, *(uploads[u] for u in sorted(uploads))])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "tools"),
                                                                     os.environ.get("PYTHONPATH")]))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    done = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", lesson, "--force",
                           f"--CourseDirectory.root={course}",
                           "--ZipCollectApp.collector_plugin=lms.UploadCollector",
                           f"--UploadCollector.attribution={plan}"],
                          capture_output=True, text=True, cwd=course, env=env)
    if done.returncode != 0:
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        raise RosterError(f"nbgrader zip_collect failed: {(lines or ['no output'])[-1].strip()}")
    return {"collected": sorted({user for user, _, _ in mapping.values()}), "left out": left_out,
            "late": sorted(u for u, row in uploads.items() if row[5]), "log": done.stderr}


# ------------------------------------------------------------------------------------- feedback back
def read_uploads(course: Path, lesson: str) -> list[dict[str, str]]:
    """What :func:`collect` kept of each learner's upload of ``lesson``: the platform's names for it."""
    path = course / "downloaded" / lesson / UPLOADS
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    except OSError:
        raise RosterError(f"{lesson} was not collected from a platform's download here ({path} is missing): "
                          f"run tools/lms.py collect {course} {lesson} ARCHIVE.zip first") from None


def feedback_name(upload: dict[str, str], file: str) -> str:
    """The name in the feedback archive that the platform files under the learner's submission.

    Canvas (*Re-upload Submissions*; Assignment#infer_comment_context_from_filename): the first two
    all-digit parts of the name are the user's id and the id of a file of their submission, so
    ``<name>_<user id>_<file id>_<file>``, attached as a comment. Moodle (*Upload multiple feedback files in
    a zip*; assignfeedback_file_zip_importer): a folder ``<Full name>_<participant>_assignfeedback_file``
    whose files become the learner's feedback files."""
    if upload["lms"] == "canvas":
        return f"{upload['name']}_{upload['account']}_{upload['attachment']}_{file}"
    return f"{upload['name']}_{upload['account']}_assignfeedback_file/{file}"


def returned(path: Path) -> bytes:
    """The file as the learner gets it back: a graded notebook without its widgets' saved state (the
    sliders' models, half of a lesson's file, which no kernel is there to drive), a page as it is."""
    import json

    if path.suffix != ".ipynb":
        return path.read_bytes()
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb.get("metadata", {}).pop("widgets", None)
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def feedback(course: Path, lesson: str, out: Path) -> dict:
    """Zip each collected learner's feedback page (``nbgrader generate_feedback``) and graded notebook
    (``autograded/``) under the names their platform files as that learner's feedback; return the archive,
    its names and the learners with no page yet."""
    import zipfile

    uploads = read_uploads(course, lesson)
    out.parent.mkdir(parents=True, exist_ok=True)
    names, missing = [], []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for upload in uploads:
            user = upload["hub user"]
            page = course / "feedback" / user / lesson / f"{lesson}.html"
            graded = course / "autograded" / user / lesson / f"{lesson}.ipynb"
            if not page.is_file():
                missing.append(user)
                continue
            for source in (page, graded):
                if source.is_file():
                    name = feedback_name(upload, source.name)
                    zf.writestr(name, returned(source))
                    names.append(name)
    if not names:
        out.unlink()
        raise RosterError(f"no feedback page for {lesson} yet: run nbgrader autograde {lesson} and nbgrader "
                          f"generate_feedback {lesson} in {course} first")
    return {"archive": out, "names": names, "missing": missing}


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
                    self._plan = {path: rest for path, *rest in csv.reader(fh)}
            parts = Path(submitted_file).parts
            for depth in range(1, len(parts) + 1):
                found = self._plan.get("/".join(parts[-depth:]))
                if found:
                    user, target, submitted = found
                    info = {"student_id": user, "file_id": Path(target).stem}
                    return {**info, "timestamp": submitted} if submitted else info
            self.log.warning("Left out (no roster row claims it): %s", submitted_file)
            return None

    return UploadCollector


def __getattr__(name: str):
    if name == "UploadCollector":  # only nbgrader asks for it, in its own process, with nbgrader installed
        return _collector_class()
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="tools/lms.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    out = sub.add_parser("grades", help="Canvas's and Moodle's gradebook import files, from nbgrader's")
    out.add_argument("course", type=Path, help="the nbgrader course folder (with gradebook.db)")
    out.add_argument("--roster", type=Path, required=True, help="hub user -> platform ids (see above)")
    out.add_argument("--assignments", type=Path, help="lesson,canvas,moodle: each lesson's assignment there")
    out.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    into = sub.add_parser("collect", help="a platform's download of one lesson's uploads into submitted/")
    into.add_argument("course", type=Path)
    into.add_argument("lesson", help="the lesson (nbgrader assignment), e.g. 03_step2_scores")
    into.add_argument("archive", type=Path, help="the platform's zip of every learner's upload")
    into.add_argument("--roster", type=Path, required=True)
    into.add_argument("--lms", choices=("canvas", "moodle"), default="canvas")
    into.add_argument("--worksheet", type=Path, help="Moodle: the assignment's grading worksheet (CSV)")
    into.add_argument("--timezone", help="Moodle: the worksheet's time zone (default: deadlines.toml's)")
    back = sub.add_parser("feedback", help="one lesson's feedback, zipped for the platform's bulk upload")
    back.add_argument("course", type=Path)
    back.add_argument("lesson")
    back.add_argument("--out", type=Path, help="the archive (default build/feedback/<lesson>-<lms>.zip)")
    args = parser.parse_args(argv)
    try:
        if args.command == "grades":
            done = grades(args.course, args.roster, args.out, assignments=args.assignments)
            print(f"grades of {done['learners']} learners, {len(done['lessons'])} lessons: "
                  + ", ".join(str(p) for p in done["files"]))
            if done["missing"]:
                print("not on the roster, so in neither file: " + ", ".join(done["missing"]), file=sys.stderr)
            if done["unnamed"]:
                print("no Canvas assignment named for " + ", ".join(done["unnamed"]) + ": Canvas makes a new "
                      "assignment of each such column (--assignments names yours)", file=sys.stderr)
            return 0
        if args.lesson not in {lesson.slug for lesson in LESSONS.values()}:
            raise RosterError(f"no lesson called {args.lesson!r}: the assignments are the lessons' notebook "
                              "names, e.g. 03_step2_scores")
        if args.command == "feedback":
            lms = next((u["lms"] for u in read_uploads(args.course, args.lesson)), "canvas")
            target = args.out or ROOT / "build" / "feedback" / f"{args.lesson}-{lms}.zip"
            done = feedback(args.course, args.lesson, target)
            print(f"{len(done['names'])} feedback file(s) for {lms.title()}'s bulk upload: {done['archive']}")
            if done["missing"]:
                print("no feedback page yet (run generate_feedback): " + ", ".join(done["missing"]),
                      file=sys.stderr)
            return 0
        done = collect(args.course, args.lesson, args.archive, args.roster, args.lms, args.worksheet,
                       args.timezone)
    except RosterError as exc:
        print(f"lms: {exc}", file=sys.stderr)
        return 2
    print(f"collected {len(done['collected'])} learner(s) into {args.course / 'submitted'}: "
          + ", ".join(done["collected"]))
    if done["late"]:
        print("late by the platform's mark (its late policy applies there): " + ", ".join(done["late"]))
    for line in done["left out"]:
        print(f"left out: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
