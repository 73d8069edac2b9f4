"""An ordinary account that grades without root, as a teacher on The Littlest JupyterHub (or a Zero to
JupyterHub grading Job's ``jovyan``) does: made with ``useradd`` for a test, nbgrader run as it, and a way
to run it where the system forbids it user namespaces.

``tests/grading/conftest.py`` makes the account a fixture (``teacher_account``); the grading tests run
nbgrader as it with :func:`nbgrader_as`, or anything with :func:`run_as`. :func:`without_user_namespaces`
starts a command as the account in a user namespace of its own whose limit on further user namespaces is
0: what bubblewrap meets on a host with ``sysctl user.max_user_namespaces=0`` (this machine's own sysctl
is left alone). The launcher is ``tests/helpers/no_user_namespaces.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.grading import NBGRADER

#: where the workers that run such tests at once (pytest-xdist) count who needs the folders opened
OPENED = Path(tempfile.gettempdir()) / "lessons-teacher-account-opened.json"
#: starts a command with no user namespace left to make (see the module docstring)
LAUNCHER = Path(__file__).with_name("no_user_namespaces.py")


def _ways_to_python() -> set[Path]:
    paths = (os.path.realpath(sys.executable), sys.prefix, str(REPO))
    return {parent for path in paths for parent in Path(path).parents}


@contextlib.contextmanager
def _opened_to_others() -> Iterator[None]:
    """The folders on the way to this Python and the repository let others through while a test needs them
    (this machine's Python may lie in root's home: pyenv; a teacher's is TLJH's /opt/tljh/user). Each
    folder's own mode comes back when the last process using them (any worker; a dead one no longer
    counts) is done, under a lock."""
    with _shared_state() as state:
        if not state["pids"]:  # (modes a dead process recorded are kept: they come back at the end)
            for folder in _ways_to_python():
                mode = folder.stat().st_mode
                if not mode & stat.S_IXOTH:
                    state["modes"][str(folder)] = stat.S_IMODE(mode)
                    folder.chmod(mode | stat.S_IXOTH)
        state["pids"].append(os.getpid())
    try:
        yield
    finally:
        with _shared_state() as state:
            state["pids"].remove(os.getpid())
            if not state["pids"]:
                for folder, mode in state.pop("modes").items():
                    Path(folder).chmod(mode)


@contextlib.contextmanager
def _shared_state() -> Iterator[dict]:
    """:data:`OPENED`'s record (the processes using the opened folders, their modes), changed under a lock."""
    with open(f"{OPENED}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = json.loads(OPENED.read_text()) if OPENED.exists() else {"pids": [], "modes": {}}
        state["pids"] = [pid for pid in state["pids"] if os.path.exists(f"/proc/{pid}")]
        yield state
        if state["pids"]:
            OPENED.write_text(json.dumps(state))
        else:
            OPENED.unlink(missing_ok=True)


@contextlib.contextmanager
def teacher_account() -> Iterator[pwd.struct_passwd]:
    """A new account with a home of its own (one per worker: ``lessons-teacher-<pid>``), removed afterwards;
    skips where the test is not root."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("creating an account needs root and useradd (CI runs as root)")
    name = f"lessons-teacher-{os.getpid()}"
    made = subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], capture_output=True,
                          text=True)
    assert made.returncode in (0, 9), made.stderr  # 9: it exists (a run stopped before its clean-up)
    try:
        with _opened_to_others():
            yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


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
