"""A teacher's course remote for the tests: a local bare git repository holding the learner release.

The learner copy is made by tools/learner_release.py and committed to the branch ``learner`` of a
bare repository named like the public one (``…/attention-step-by-step``, no ``.git``: nbgitpuller's
page names the folder after the URL's last part), so that an nbgitpuller link to it clones into
``attention-step-by-step/`` exactly as the link in docs/classroom.md does.
``teacher_update`` is the mid-term update: the teacher edits the learner copy and pushes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.helpers import load_tool

learner_release = load_tool("learner_release")

NAME = "attention-step-by-step"
BRANCH = "learner"
LESSON_00 = "notebooks/00_start_here.ipynb"
GIT_ID = ["-c", "user.name=Teacher", "-c", "user.email=teacher@example.edu"]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()


def learner_remote(where: Path) -> Path:
    """Create the bare ``where/remote/attention-step-by-step`` holding the learner release on ``learner``."""
    work, bare = where / "teacher-learner-copy", where / "remote" / NAME
    learner_release.release(work)
    git("init", "-q", "-b", BRANCH, str(work), cwd=where)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "Learner release", cwd=work)
    bare.parent.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "--bare", "-b", BRANCH, str(bare), cwd=where)
    git("push", "-q", str(bare), BRANCH, cwd=work)
    return bare


def teacher_update(bare: Path, edit: Callable[[Path], None], message: str) -> str:
    """Clone ``bare``, let ``edit`` change the checkout, commit and push; return the new commit."""
    work = bare.parents[1] / "teacher-update"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    git("clone", "-q", "--branch", BRANCH, str(bare), str(work), cwd=bare.parent)
    edit(work)
    git("commit", "-q", "-am", message, cwd=work)
    git("push", "-q", "origin", BRANCH, cwd=work)
    return git("rev-parse", "HEAD", cwd=work)
