"""Where a submission's code runs when the course grades it: a bubblewrap sandbox that can touch nothing but
its own run.

``nbgrader autograde`` with the course's config (:mod:`.autograde`) starts two kinds of process that run a
learner's code: the notebook's kernel, and the course's judge (:mod:`.judge`), whose forked children run
the answer cells. Both start through :func:`command`, which puts them in a sandbox made by ``bwrap``
(Debian's ``bubblewrap``) where:

* **the whole filesystem is read-only**, and the grader's home, ``/root``, the course folder (its gradebook,
  its sources, the other learners' work), ``/tmp``, ``/run`` and ``/dev/shm`` are hidden under empty
  throw-away folders; the Python that grades, the library and its packages are put back, read-only;
* **the course's secret file is hidden** (an empty file in its place), wherever it lies;
* the only writable folder is the run's **scratch**: a copy of the submission's folder (its working folder)
  and a home of its own, deleted when the run ends (:class:`Scratch`);
* **no network**, not even the grader's loopback (a network namespace of its own: the kernel talks to
  nbgrader over Unix sockets in the scratch);
* **nothing outlives the run**: the processes live in a PID namespace of their own, and every one of them,
  whatever session, group or fork it made, is killed when the run's first process ends, or when the
  grader does (``--die-with-parent``);
* **another identity**: run by root (CI, a VM's admin), the code runs as :data:`SANDBOX_USER` (``nobody``,
  with no capabilities); run by an ordinary account (a teacher on The Littlest JupyterHub), as that
  account inside a user namespace that owns nothing outside: it can write nothing the account owns;
* **Python starts isolated** (``python -I``: no user site-packages, no ``usercustomize``, no
  ``PYTHON*`` variables).

Where ``bwrap`` is missing, or the system forbids the namespaces it needs, grading stops with what to do
(:class:`SandboxError`): the course never grades a learner's code as the grader. docs/classroom.md ("What
grading isolates") says what each platform needs.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["SANDBOX_USER", "SandboxError", "Scratch", "command", "environment", "hidden_by_default",
           "require", "why_none"]

#: the account a learner's code runs as when root grades (a system account that owns no file)
SANDBOX_USER = "nobody"
BWRAP = "bwrap"
#: folders hidden under an empty, throw-away one (besides the grader's home and the course folder)
HIDDEN = ("/root", "/tmp", "/var/tmp", "/run", "/home")


class SandboxError(RuntimeError):
    """The sandbox cannot be made here: grading stops, saying why and what to do."""


def _as_root() -> bool:
    return os.geteuid() == 0


def _identity() -> tuple[int, int]:
    """The uid and gid a learner's code runs as: :data:`SANDBOX_USER`'s under root, the grader's otherwise."""
    if not _as_root():
        return os.getuid(), os.getgid()
    entry = pwd.getpwnam(SANDBOX_USER)
    return entry.pw_uid, entry.pw_gid


def hidden_by_default(course: str | os.PathLike | None = None) -> list[str]:
    """The folders a sandbox hides: :data:`HIDDEN`, the grader's home, and the course folder."""
    folders = [*HIDDEN, os.path.expanduser("~"), pwd.getpwuid(os.geteuid()).pw_dir]
    if course is not None:
        folders.append(os.fspath(course))
    return sorted({os.path.realpath(f) for f in folders if f and os.path.realpath(f) != "/"})


def _visible_again() -> list[str]:
    """What the sandboxed Python needs put back: its own prefix, its import path and the library."""
    import lessons_lib

    needed = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)),
              os.path.dirname(os.path.dirname(os.path.abspath(lessons_lib.__file__))),
              *(p for p in sys.path if p)]
    return sorted({os.path.realpath(p) for p in needed if os.path.isdir(p)})


def _under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


class Scratch:
    """A run's only writable folder: ``work`` (a copy of the submission's folder, where the code starts) and
    ``home``; owned by the identity the code runs as, removed by :meth:`close`."""

    def __init__(self, source: str | os.PathLike | None = None):
        self.root = Path(tempfile.mkdtemp(prefix="lessons-sandbox-"))
        self.work, self.home = self.root / "work", self.root / "home"
        if source is not None and os.path.isdir(source):
            shutil.copytree(source, self.work, symlinks=True, ignore=shutil.ignore_patterns("*.sock"))
        self.work.mkdir(exist_ok=True)
        self.home.mkdir()
        self.empty = self.root / "empty"  # what stands in a hidden file's place
        self.empty.touch(mode=0o444)
        uid, gid = _identity()
        if _as_root():
            for path in (self.root, *self.root.rglob("*")):
                os.lchown(path, uid, gid)
        os.chmod(self.root, 0o700)

    def give(self, path: str | os.PathLike) -> None:
        """Let the sandboxed code read a file made here (a kernel's connection file)."""
        uid, gid = _identity()
        if _as_root():
            os.chown(path, uid, gid)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def environment(scratch: Scratch, base: dict | None = None) -> dict[str, str]:
    """The sandboxed processes' environment: the grader's, with a home, temporary folder and Jupyter
    folders in the scratch."""
    env = dict(os.environ if base is None else base)
    home = str(scratch.home)
    env.update(HOME=home, TMPDIR=home, MPLCONFIGDIR=os.path.join(home, ".matplotlib"),
               JUPYTER_RUNTIME_DIR=os.path.join(home, ".jupyter-runtime"), PYTHONNOUSERSITE="1",
               USER=SANDBOX_USER if _as_root() else env.get("USER", ""))
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "XDG_RUNTIME_DIR"):
        env.pop(name, None)
    return env


def _isolated(argv: list[str]) -> list[str]:
    """``argv`` with ``-I`` after the interpreter, when it starts a Python."""
    if argv and os.path.basename(argv[0]).startswith("python") and "-I" not in argv[1:2]:
        return [argv[0], "-I", *[a for a in argv[1:] if a != "-P"]]
    return list(argv)


def command(argv: list[str], scratch: Scratch, hide: list[str] | tuple[str, ...] = (),
            course: str | os.PathLike | None = None) -> list[str]:
    """``argv`` run in a sandbox (see the module docstring) whose only writable folder is ``scratch`` and
    whose working folder is its copy of the submission; ``hide`` are files replaced by an empty one (the
    course's secret)."""
    folders = hidden_by_default(course)
    args = [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session",
            # a kernel's parent is the sandbox's first process, PID 1 (not the end of its parent: ipykernel)
            "--setenv", "JPY_PARENT_PID", "1"]
    for folder in folders:
        if os.path.isdir(folder):
            args += ["--perms", "0755", "--tmpfs", folder]
    made: list[str] = []
    for folder in _visible_again():
        if folder in folders or not _under(folder, folders) or _under(folder, [str(scratch.root), *made]):
            continue
        for parent in map(str, reversed(Path(folder).parents)):  # on its way, traversable (bwrap: 0700)
            if _under(parent, folders) and parent not in folders and parent not in made:
                made.append(parent)
                args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", folder, folder]
        made.append(folder)
    args += ["--bind", str(scratch.root), str(scratch.root), "--chdir", str(scratch.work)]
    for path in hide:
        path = os.path.realpath(os.path.expanduser(os.fspath(path)))
        if os.path.isfile(path):
            args += ["--ro-bind", str(scratch.empty), path]
    if _as_root():
        uid, gid = _identity()
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                 "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all"]
    else:
        args += ["--unshare-user", "--"]
    return args + _isolated(argv)


@functools.cache
def why_none() -> str:
    """Why a sandbox cannot start here ("" when it can): tried once per process."""
    if shutil.which(BWRAP) is None:
        return ("bubblewrap is not installed: as root, `apt-get install bubblewrap` (Debian, Ubuntu) or "
                "`dnf install bubblewrap` (Fedora)")
    if _as_root() and shutil.which("setpriv") is None:
        return "setpriv is missing (Debian's util-linux package has it)"
    with Scratch() as scratch:
        try:
            done = subprocess.run(command(["true"], scratch), capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not start ({exc})"
    if done.returncode != 0:
        return f"{_refused(done.stderr)} (bwrap said: {done.stderr.strip()[-400:]})"
    with Scratch() as scratch:
        try:
            done = subprocess.run(command([sys.executable, "-c", "import lessons_lib"], scratch),
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            done = subprocess.CompletedProcess([], 1, "", str(exc))
    if done.returncode != 0:
        who = f"`{SANDBOX_USER}`" if _as_root() else "the grading account"
        return (f"the Python that grades ({sys.executable}) cannot import the course library in the sandbox, "
                f"where a submission's code runs as {who}: {done.stderr.strip()[-300:]}. Every folder on the "
                "way to that Python, its packages and the library must be readable and searchable by that "
                "account (`chmod o+rx` on each; a course or environment inside a folder of mode 700, such as "
                "a home, cannot be graded from there)")
    return ""


#: bwrap's words where the kernel refuses this account a user namespace: its limit is 0 (ENOSPC), or
#: unprivileged ones are off (EPERM)
_NO_USER_NAMESPACES = ("max_*_namespaces exceeded", "No space left on device", "No permissions to create new "
                       "namespace")
_HOW_TO_ALLOW = ("the admin allows them: `sysctl -w user.max_user_namespaces=15000` (kept in a file of "
                 "/etc/sysctl.d/; 0 forbids them), on older Debian kernels also "
                 "`sysctl -w kernel.unprivileged_userns_clone=1`, on Ubuntu 23.10 and later "
                 "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile for "
                 "/usr/bin/bwrap with `userns,`; in a container (a Zero to JupyterHub pod), grade in a Job "
                 "whose seccomp and AppArmor profiles let it make namespaces (docs/grading-job.yaml). "
                 "docs/classroom.md, What grading isolates, says what each platform needs")


def _refused(stderr: str) -> str:
    """What stopped bwrap, in plain words, and what the admin sets."""
    if "Can't mount proc" in stderr:  # the kernel's rule: no new proc where parts of the old one are hidden
        return ("this container hides parts of /proc (its runtime's default), and the kernel then refuses "
                "the sandbox a /proc of its own: grade in a pod with an unmasked /proc (Kubernetes: "
                "`procMount: Unmasked` with `hostUsers: false`, as docs/grading-job.yaml has it)")
    if not _as_root() and any(words in stderr for words in _NO_USER_NAMESPACES):
        try:
            who = pwd.getpwuid(os.getuid()).pw_name
        except KeyError:  # a container's uid without a name
            who = f"uid {os.getuid()}"
        return (f"this system forbids user namespaces to the account that grades ({who}), and bubblewrap "
                f"makes its sandbox in one: {_HOW_TO_ALLOW}")
    return f"bwrap could not make the sandbox (the grading account needs user namespaces): {_HOW_TO_ALLOW}"


def require() -> None:
    """Stop, saying what to do, where no sandbox can be made (never grade a learner's code unsandboxed)."""
    why = why_none()
    if why:
        raise SandboxError(f"the course grades a submission's code only in a sandbox, and none can be made "
                           f"here: {why}.")
