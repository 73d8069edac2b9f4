"""Where the system forbids the grading account user namespaces, ``nbgrader autograde`` with the course's
config grades nothing: it stops before any submission's code runs, with a non-zero exit status and a
message that says user namespaces are forbidden here and what the admin sets (issue 53: "what happens
where the system forbids them").

The account is an ordinary one the test creates (a teacher on The Littlest JupyterHub, grading without
root); its nbgrader starts in a user namespace where no further one may be made
(tests/helpers/no_user_namespaces.py): what bubblewrap meets on a host with
``sysctl user.max_user_namespaces=0``, without changing this machine's sysctl. The same course, graded by
the same account where user namespaces are allowed, gets its points: the refusal is the namespaces' alone.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

from tests.helpers.grading import (
    NBGRADER,
    POINTS,
    gaming_source,
    guide_course,
    scores,
    submit_gaming,
    worked_solution,
)
from tests.helpers.teacher_account import nbgrader_as, own, run_as, without_user_namespaces

ASSIGNMENT = "forbidden"
LESSON = "04_step3_scale_softmax"
FULL = POINTS[LESSON]


def _hand_in(course: Path, account, marker: Path) -> None:
    """The lesson's exercises, released; one honest student, and one whose answer cell, if it ever ran
    outside a sandbox, would leave ``marker`` in the teacher's home (and would score full points)."""
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(gaming_source([LESSON]), course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    own(account, course)
    nbgrader_as(account, course, "generate_assignment", ASSIGNMENT, "--force")
    teacher = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    right = {name: worked_solution(teacher, name) for name in FULL}
    submit_gaming(course, "honest", right.get, ASSIGNMENT)
    leaves_a_mark = f"open({str(marker)!r}, 'w').write('a submission ran as the teacher')\n"
    submit_gaming(course, "marks", lambda name: leaves_a_mark + right[name] if name == "my_scale"
                  else right[name], ASSIGNMENT)
    own(account, course)


def _graded(course: Path, student: str) -> bool:
    """Whether the gradebook holds a score for any of ``student``'s graded cells (nbgrader's ``score`` reads
    0 where none was given: its autograded and manual scores are None)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            notebook = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        except MissingEntry:
            return False
        return any(g.auto_score is not None or g.manual_score is not None for g in notebook.grades)


@pytest.mark.grading
def test_where_user_namespaces_are_forbidden_autograde_grades_nothing_and_says_what_to_allow(
        teacher_account):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (CI installs it: .ci/run)")
    home = Path(teacher_account.pw_dir)
    # bwrap, started where this account may make no user namespace, fails as on such a host
    tried = run_as(teacher_account, without_user_namespaces(["bwrap", "--ro-bind", "/", "/", "--unshare-user",
                                                             "--", "true"]), home)
    assert tried.returncode != 0 and "max_*_namespaces exceeded (ENOSPC)" in tried.stderr, tried.stderr

    course = Path(tempfile.mkdtemp(prefix="course-", dir=home))
    secret_file = guide_course(course)
    own(teacher_account, course, secret_file)
    marker = home / "a-submission-ran-here"
    _hand_in(course, teacher_account, marker)

    autograde = [*NBGRADER, "autograde", ASSIGNMENT, "--create", f"--CourseDirectory.root={course}"]
    done = run_as(teacher_account, without_user_namespaces(autograde), course)
    said = re.sub(r"\s+", " ", done.stderr)
    assert done.returncode != 0, said
    assert f"forbids user namespaces to the account that grades ({teacher_account.pw_name})" in said, said
    assert "sysctl -w user.max_user_namespaces=" in said and "apparmor_restrict_unprivileged_userns=0" in said
    assert "docs/classroom.md" in said
    assert not marker.exists(), "a submission's code ran outside the sandbox"
    assert not _graded(course, "honest") and not _graded(course, "marks")
    assert not list((course / "autograded").glob("*/*/*.ipynb"))

    # the same course and account, where user namespaces are allowed: graded, in the sandbox
    nbgrader_as(teacher_account, course, "autograde", ASSIGNMENT, "--create")
    assert scores(course, "honest", ASSIGNMENT) == FULL
    assert scores(course, "marks", ASSIGNMENT) == FULL
    assert not marker.exists(), "the answer cell ran in the sandbox, whose only writable folder is a scratch"
