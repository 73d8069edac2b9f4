"""An ordinary account that grades without root, as a teacher on The Littlest JupyterHub (or a Zero to
JupyterHub grading Job's ``jovyan``) does: made with ``useradd`` for a test, nbgrader run as it, and a way
to run it where the system forbids it user namespaces.

``tests/grading/conftest.py`` makes the account a fixture (``teacher_account``); the grading tests run
nbgrader as it with :func:`run_as`. :func:`without_user_namespaces` starts a command as the account in a
user namespace of its own whose limit on further user namespaces is 0: what bubblewrap meets on a host
with ``sysctl user.max_user_namespaces=0`` (this machine's own sysctl is left alone). The launcher is
``tests/helpers/no_user_namespaces.py``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.grading import NBGRADER

#: the ordinary account the tests create (a teacher grading without root)
TEACHER = "lessons-sandbox-teacher"
#: starts a command with no user namespace left to make (see the module docstring)
LAUNCHER = Path(__file__).with_name("no_user_namespaces.py")


@contextlib.contextmanager
def teacher_account() -> Iterator[pwd.struct_passwd]:
    """A new account with a home of its own, removed afterwards; skips where the test is not root."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("creating an account needs root and useradd (CI runs as root)")
    made = subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", TEACHER], capture_output=True,
                          text=True)
    assert made.returncode in (0, 9), made.stderr  # 9: it exists (a run stopped before its clean-up)
    # The course's Python must be one the teacher can run (TLJH's /opt/tljh/user); this machine's may lie
    # in root's home (pyenv): the folders on its way let others through while the test runs.
    opened = {}
    for folder in {p for path in (os.path.realpath(sys.executable), sys.prefix, str(REPO))
                   for p in Path(path).parents}:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            opened[folder] = mode
            folder.chmod(mode | stat.S_IXOTH)
    try:
        yield pwd.getpwnam(TEACHER)
    finally:
        for folder, mode in opened.items():
            folder.chmod(stat.S_IMODE(mode))
        subprocess.run(["userdel", "--remove", TEACHER], capture_output=True)


def environment(account: pwd.struct_passwd) -> dict[str, str]:
    """The account's environment: its home and name, this Python's folder first on PATH (nbgrader runs
    ``alembic`` from there), no Jupyter config folder of root's."""
    env = {**os.environ, "HOME": account.pw_dir, "USER": account.pw_name,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("JUPYTER_CONFIG_DIR", None)
    return env


def own(account: pwd.struct_passwd, *paths: Path) -> None:
    """What the test wrote as root (a course, the learners' hand-ins, a secret) becomes the account's."""
    for path in paths:
        for each in (path, *(path.rglob("*") if path.is_dir() else ())):
            os.chown(each, account.pw_uid, account.pw_gid)


def run_as(account: pwd.struct_passwd, argv: list[str], cwd: Path, env: dict[str, str] | None = None,
           timeout: float = 1800) -> subprocess.CompletedProcess:
    """``argv`` run by the account (no supplementary group), in ``cwd``; the finished process."""
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=environment(account) if env is None else env,
                          user=account.pw_uid, group=account.pw_gid, extra_groups=[])


def nbgrader_as(account: pwd.struct_passwd, course: Path, *args: str) -> str:
    """nbgrader run by the account in ``course``, as a teacher runs it; its log, after checking that it
    succeeded without an error logged."""
    done = run_as(account, [*NBGRADER, *args, f"--CourseDirectory.root={course}"], course)
    assert done.returncode == 0 and "[ERROR]" not in done.stderr, done.stderr
    return done.stderr


def without_user_namespaces(argv: list[str]) -> list[str]:
    """``argv`` started in a user namespace where no further one can be made (run it as the account)."""
    return [sys.executable, "-I", str(LAUNCHER), *argv]
