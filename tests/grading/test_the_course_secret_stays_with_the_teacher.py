"""The course's secret, through the real ``nbgrader autograde`` (``make test-grading``): no learner's process
holds it, and a secret file that cannot be trusted stops grading with what to do.

* A submission that prints its environment, ``/proc/self/environ``, its parent's environment, the course's
  ``nbgrader_config.py`` and the file the config names gets its points and a feedback page without the
  secret: it is in no environment and in no config (autograde reads the file itself, outside every
  sandbox, and gives the judge only each exercise's seed); the kernel's sandbox (lessons_lib/exercises/
  sandbox.py) has no course folder to read the config from, no parent of nbgrader's to read, and an empty
  file where the secret's file is.
* A secret file that is missing, empty, blank, too short or readable by others stops ``autograde`` with
  a message that says so and what to do; nothing is graded. Before, a missing file broke the config's
  loading, and nbgrader went on without any of it (no ignore list, no course id, no secret).
* A config of the old kind, that puts the secret in the environment where every kernel inherits it, stops
  grading too.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from lessons_lib.exercises.autograde import REDACTED
from tests.helpers.grading import (
    SECRET,
    feedback_text,
    gaming_source,
    make_course,
    nbgrader,
    scores,
    submit_gaming,
    worked_solution,
)

ASSIGNMENT, LESSON = "scores", "03_step2_scores"
#: What a curious learner prints, each on a line of its own, from their answer cell.
PRINTS = """\
import os, pathlib
def _read(path):
    try:
        return pathlib.Path(path).read_bytes()
    except OSError as exc:
        return f"unreadable ({type(exc).__name__})"
print("ENVIRONMENT", dict(os.environ))
print("PROC ENVIRON", _read("/proc/self/environ"))
print("PARENT ENVIRON", _read(f"/proc/{os.getppid()}/environ"))
print("CONFIG", _read("../../../nbgrader_config.py"), _read(COURSE + "/nbgrader_config.py"))
print("SECRET FILE", repr(_read(SECRET_FILE)))
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course with lesson 03's exercise as an assignment, generated once."""
    root = tmp_path_factory.mktemp("secret") / "course"
    make_course(root)
    (root / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(gaming_source([LESSON]), root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    return root


def _hand_in(course: Path, student: str, extra: str = "") -> None:
    extra = extra.replace("COURSE", repr(str(course))).replace("SECRET_FILE", repr(str(_secret_file(course))))
    teacher = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    submit_gaming(course, student, lambda name: extra + worked_solution(teacher, name), ASSIGNMENT)


def _secret_file(course: Path) -> Path:
    return Path(re.search(r"secret_file = '([^']+)'", (course / "nbgrader_config.py").read_text())[1])


@pytest.mark.grading
def test_a_submission_that_prints_everything_it_can_reach_shows_no_secret_in_its_feedback(course):
    _hand_in(course, "curious", PRINTS)
    log = nbgrader(course, "autograde", ASSIGNMENT, "--create", "--student=curious")
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--student=curious")
    assert scores(course, "curious", ASSIGNMENT) == {"my_scores": 3}
    page = course / "feedback" / "curious" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    graded = course / "autograded" / "curious" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert SECRET not in page.read_text(encoding="utf-8") and SECRET not in graded.read_text(encoding="utf-8")
    lines = feedback_text(course, "curious", ASSIGNMENT).splitlines()
    printed = {what: next((line for line in lines if line.startswith(what + " ")), None) for what in
               ("ENVIRONMENT", "PROC ENVIRON", "PARENT ENVIRON", "CONFIG", "SECRET FILE")}
    assert all(printed.values()), printed   # every print ran, in the kernel that autograde started
    for where in ("ENVIRONMENT", "PROC ENVIRON", "PARENT ENVIRON", "CONFIG"):
        assert REDACTED not in printed[where], f"the secret was in {where}: no kernel may hold it there"
    assert "PATH" in printed["ENVIRONMENT"] and "LESSONS_HIDDEN_SECRET" not in printed["ENVIRONMENT"]
    assert printed["CONFIG"].count("unreadable (") == 2, printed["CONFIG"]  # the course folder is hidden
    # an empty file in its place, behind folders the sandbox's account cannot enter (here: pytest's /tmp)
    assert printed["SECRET FILE"] in ("SECRET FILE b''", "SECRET FILE 'unreadable (PermissionError)'"), \
        printed
    assert "held the course's secret" not in log


#: What a secret file holds in each state that cannot be trusted (the others keep the course's secret).
BROKEN = {"empty": "", "blank": "  \n\t\n", "too short": "attention26\n"}


@pytest.mark.grading
@pytest.mark.parametrize(("state", "words"), [
    ("missing", "does not exist"),
    ("empty", "is empty"),
    ("blank", "is empty"),
    ("too short", "too short to be a secret"),
    ("readable by others", "can be read or written by other users (mode 0644)"),
])
def test_a_secret_file_that_cannot_be_trusted_stops_grading_saying_what_to_do(course, state, words):
    secret_file, student = _secret_file(course), state.replace(" ", "_")
    kept = secret_file.read_text()
    try:
        if state == "missing":
            secret_file.unlink()
        else:
            secret_file.write_text(BROKEN.get(state, kept))
            secret_file.chmod(0o644 if state == "readable by others" else 0o600)
        _hand_in(course, student)
        done = nbgrader(course, "autograde", ASSIGNMENT, "--create", f"--student={student}", check=False)
    finally:
        secret_file.write_text(kept)
        secret_file.chmod(0o600)
    assert done.returncode != 0
    assert words in done.stderr and str(secret_file) in done.stderr, done.stderr[-3000:]
    assert "loading config" not in done.stderr.lower(), "the course's config itself must always load"
    assert not (course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()


@pytest.mark.grading
def test_a_config_that_puts_the_secret_in_the_environment_stops_grading(course):
    config = course / "nbgrader_config.py"
    kept = config.read_text()
    try:
        config.write_text(kept + f"import os\nos.environ['LESSONS_HIDDEN_SECRET'] = {SECRET!r}\n")
        _hand_in(course, "old_config")
        done = nbgrader(course, "autograde", ASSIGNMENT, "--create", "--student=old_config", check=False)
    finally:
        config.write_text(kept)
    assert done.returncode != 0
    assert "the environment holds the course's secret (LESSONS_HIDDEN_SECRET)" in done.stderr, done.stderr
    assert not (course / "autograded" / "old_config" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()
