"""Shared test helpers: the two loops, the CI rule for missing tools, one way to load a tool, and a
JupyterLab server started as `make lab` does.

**The two loops.** `make test` runs every test. `make check` (the edit loop, about two minutes) runs
``pytest --edit-loop``: it leaves out every test marked with one of :data:`NOT_IN_CHECK` (a test that
starts a kernel, a server, a browser or another process, or trains a model), and any test left in that
starts a process or a server anyway fails at once, saying which mark it needs (:func:`no_processes`).
Hypothesis runs the ``dev`` profile there (a fifth of the examples) and the ``ci`` profile everywhere else
(``HYPOTHESIS_PROFILE``); a test asks for ``examples(n)``, its number of examples in the ``ci`` profile.

`running_lab()` starts JupyterLab with the arguments `make lab` uses (``tools/course.py``), on a free
loopback port with a random token, in private Jupyter config/data/runtime/settings/workspace folders,
waits until it answers, and always shuts it down (kernels included), even when the test fails.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# No test reaches the internet: lesson 10 (lab/real_model.py) takes its offline path in every kernel
# the tests start, as `make test` and CI also say.
os.environ.setdefault("LESSONS_OFFLINE", "1")
NOTEBOOKS = REPO / "notebooks"


# ------------------------------------------------------------------ CI rule

def in_ci() -> bool:
    """True on the CI machine (``CI=true``), where nothing may be skipped for a missing dependency."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(condition: bool, reason: str) -> None:
    """Skip the test when ``condition`` is false, except in CI, where the test fails instead."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing dependency fails instead of skipping)", pytrace=False)
    pytest.skip(reason)


# ------------------------------------------------------------------ the two loops

#: marks of the tests `make check` leaves out (pyproject.toml says what each means); `make test` runs them
NOT_IN_CHECK = ("slow", "training", "kernel", "subprocess", "lab", "browser", "binder", "grading", "hub")


def pytest_addoption(parser):
    parser.addoption("--edit-loop", action="store_true",
                     help="make check: leave out the tests marked " + ", ".join(NOT_IN_CHECK)
                     + ", and fail a test left in that starts a process or a server")


class ProcessInEditLoop(RuntimeError):
    """A test that `make check` runs started a process or a server: it belongs to `make test` only."""


@contextlib.contextmanager
def no_processes(test: str = "this test"):
    """Within it, starting a program (subprocess, spawn, os.system, forkpty) or listening on a socket
    raises :class:`ProcessInEditLoop`, naming the marks that would move ``test`` out of `make check`.

    A bare ``os.fork`` is allowed: it copies this process in about a millisecond, starts no Python or
    server, and it is how the exercise checks run every learner function (``exercises/runner.py``, a
    child that can be killed when it runs away)."""
    import _posixsubprocess

    def refuse(what):
        def refused(*args, **kwargs):
            raise ProcessInEditLoop(
                f"{test} {what}, which `make check` (the two-minute edit loop) never does; mark it "
                f"@pytest.mark.subprocess (or kernel, lab, training, slow: see pyproject.toml) so that only "
                f"`make test` runs it")
        return refused

    patches = [(subprocess.Popen, "_execute_child", "starts a process"),
               (_posixsubprocess, "fork_exec", "starts a process"),
               (os, "forkpty", "forks a terminal"),
               (os, "posix_spawn", "spawns a process"), (os, "posix_spawnp", "spawns a process"),
               (os, "system", "runs a shell command"), (socket.socket, "listen", "starts a server")]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches if hasattr(owner, name)]
    try:
        for owner, name, what in patches:
            if hasattr(owner, name):
                setattr(owner, name, refuse(what))
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--edit-loop"):
        return
    left_out = [item for item in items if any(item.get_closest_marker(m) for m in NOT_IN_CHECK)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in set(left_out)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """In `make check`, each test (its fixtures included) runs where no process or server can start."""
    if not item.config.getoption("--edit-loop"):
        return (yield)
    with no_processes(item.nodeid):
        return (yield)


def _hypothesis_profiles() -> None:
    """``ci``: every example each test asks for; ``dev`` (make check): a fifth of them. Neither has a
    deadline: a loaded 2-core machine must not turn a slow example into a failure."""
    from hypothesis import settings

    settings.register_profile("ci", deadline=None, print_blob=True)
    settings.register_profile("dev", deadline=None, max_examples=20)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(n: int) -> int:
    """A property test's number of examples: ``n`` in the ``ci`` profile (whose default is hypothesis's
    100), scaled like the profile's default elsewhere (``dev``: a fifth, at least 5)."""
    from hypothesis import settings

    return max(5, round(n * settings().max_examples / 100))


def pytest_configure(config):
    """Turn SIGTERM (a CI timeout, `kill`) into KeyboardInterrupt, so that fixtures still shut
    JupyterLab, its kernels and Chromium down instead of leaving them running; load the hypothesis
    profile; in `make check`, build matplotlib's font cache first (it asks fc-list, a process, once)."""
    _hypothesis_profiles()
    if config.getoption("--edit-loop"):
        import matplotlib.font_manager  # noqa: F401

    def _interrupt(signum, frame):
        raise KeyboardInterrupt(f"received signal {signum}")

    with contextlib.suppress(ValueError):  # not in the main thread
        signal.signal(signal.SIGTERM, _interrupt)


# ------------------------------------------------------------ a fresh Python's imports

#: what one fresh Python does, step by step, in this order (each step keeps what the ones before loaded)
FRESH_STEPS = {
    "import lessons_lib": "import lessons_lib",
    "ll.environment_report": "lessons_lib.environment_report",
    "import lessons_lib.lab.adapters": "import lessons_lib.lab.adapters",
    "import lessons_lib.lab.coref": "import lessons_lib.lab.coref",
    "import lessons_lib.lab.cost": "import lessons_lib.lab.cost",
    "ll.plot_weights": "import numpy; lessons_lib.plot_weights(numpy.full((2, 2), 0.5), ['a', 'b'])",
}
#: the heavy modules it watches for
WATCHED = ("torch", "matplotlib", "matplotlib.pyplot", "ipywidgets", "anywidget")


@pytest.fixture(scope="session")
def fresh_imports() -> dict[str, set[str]]:
    """Step of :data:`FRESH_STEPS` -> the :data:`WATCHED` modules loaded once it ran: one Python for every
    check that importing the library stays light (a test using it is marked ``subprocess``)."""
    code = "\n".join([
        "import json, sys",
        f"watched, loaded = {WATCHED!r}, {{}}",
        *(f"{source}\nloaded[{step!r}] = [m for m in watched if m in sys.modules]"
          for step, source in FRESH_STEPS.items()),
        "print(json.dumps(loaded))",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return {step: set(found) for step, found in json.loads(out.stdout.splitlines()[-1]).items()}


# ------------------------------------------------------------ the exported site

def _site_digest() -> str:
    """What the exported pages are made from: the notebooks, the exporting tools and their template,
    the library's packaged files, and the versions of nbconvert and MathJax."""
    import hashlib
    from importlib.metadata import version

    digest = hashlib.sha256(f"{version('nbconvert')} {version('jupyter-server-mathjax')}".encode())
    files = [*NOTEBOOKS.glob("*.ipynb"), *(REPO / "tools").glob("*.py"),
             *(REPO / "tools" / "html_template").rglob("*"), *(REPO / "lessons_lib").rglob("*.*")]
    for path in sorted(f for f in files if f.is_file() and "__pycache__" not in f.parts):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="session")
def exported_site() -> Path:
    """The learner's static pages as `make html` writes them (``tools/export_html.py``), exported once per
    `make test`: into ``build/test-site``, kept while what they are made from is unchanged, so the library
    stage and the browser stage (two pytest processes) read the same export."""
    site, stamp = REPO / "build" / "test-site", REPO / "build" / "test-site.sha256"
    digest = _site_digest()
    if site.is_dir() and stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
        return site
    site.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix="test-site-", dir=site.parent))
    subprocess.run([sys.executable, str(REPO / "tools" / "export_html.py"), "--out", str(fresh)], check=True)
    shutil.rmtree(site, ignore_errors=True)
    fresh.rename(site)
    stamp.write_text(digest, encoding="utf-8")
    return site


# ------------------------------------------------------------ lab arguments

def load_tool(name: str):
    """A script of ``tools/`` imported as a module: the one way the tests load a tool
    (``load_tool("course").lab_args``). ``tools/`` goes on ``sys.path`` as when the script runs, so the
    tools' own imports of each other (``from conventions import ...``) give the same modules."""
    tools = str(REPO / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    return importlib.import_module(name)


def lab_args(folder: str = "workspace") -> list[str]:
    """The arguments `make lab` (``folder="workspace"``) or `make teach` (``"notebooks"``) pass to
    `jupyter lab` (``tools/course.py``), plus ``--ServerApp.allow_root=True`` when running as root."""
    args = load_tool("course").lab_args(folder)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--ServerApp.allow_root=True")
    return args


def jupyter_command() -> list[str]:
    """`jupyter` of the interpreter running the tests (the .venv's, as `make lab` uses)."""
    exe = Path(sys.executable).parent / "jupyter"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "jupyter"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# JupyterLab user settings for unattended runs: no autosave (a test must never write a notebook),
# no news or update checks (no network, no pop-ups). Cells are windowed as a learner's JupyterLab and
# Notebook 7 do by default ("contentVisibility"): every cell stays in the DOM (so off-screen outputs can
# be inspected) and the browser skips drawing the off-screen ones. Said here so that a change of
# JupyterLab's default shows in a diff; "none" (the browser draws the whole notebook on every frame) is
# slower than what a learner gets.
QUIET_LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "contentVisibility"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


@dataclass
class LabServer:
    url: str            # http://127.0.0.1:PORT
    token: str
    root: Path          # what the server serves (its root_dir)
    process: subprocess.Popen
    home: Path          # private Jupyter config/data/runtime/settings folders
    log_path: Path

    def request(self, path: str, method: str = "GET", timeout: float = 10.0) -> tuple[int, bytes]:
        """HTTP request to the server with the token; returns (status, body), also for 4xx/5xx."""
        req = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def api(self, path: str, method: str = "GET"):
        status, body = self.request("/api/" + path.lstrip("/"), method=method)
        assert 200 <= status < 300, f"{method} /api/{path} -> {status}: {body[:300]!r}"
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Stop every running kernel (sessions first, so JupyterLab's tabs see them go)."""
        with contextlib.suppress(Exception):
            for session in self.api("sessions"):
                self.request(f"/api/sessions/{session['id']}", method="DELETE")
        with contextlib.suppress(Exception):
            for kernel in self.api("kernels"):
                self.request(f"/api/kernels/{kernel['id']}", method="DELETE")

    def log_tail(self, n: int = 60) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(no server log)"
        return "\n".join(lines[-n:])


def _descendants(process: subprocess.Popen) -> list:
    """The server's child processes (kernels run in sessions of their own, so killpg misses them)."""
    try:
        import psutil

        return psutil.Process(process.pid).children(recursive=True)
    except Exception:
        return []


def kill_tree(process: subprocess.Popen, descendants: list) -> None:
    """SIGTERM, then SIGKILL, the server's process group and the given descendants that still run."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        for child in descendants:
            with contextlib.suppress(Exception):
                if child.is_running():  # psutil checks that the pid was not reused
                    child.send_signal(sig)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
        if not any(_still_running(child) for child in descendants):
            break


def _still_running(child) -> bool:
    try:
        return child.is_running() and child.status() != "zombie"
    except Exception:
        return False


@contextlib.contextmanager
def running_lab(
    root: Path,
    lab_args: list[str],
    *,
    settings: dict | None = None,
    startup_timeout: float = 120.0,
    jupyter: list[str] | None = None,
    extra_env: dict | None = None,
) -> Iterator[LabServer]:
    """Start ``jupyter lab *lab_args`` in ``root`` (as `make lab` runs it from the repo root).

    ``jupyter`` is another environment's ``jupyter`` command (the Binder one); ``extra_env`` is
    added to the server's environment (a learner's ``HOME``)."""
    home = Path(tempfile.mkdtemp(prefix="lessons-lab-"))
    dirs = {name: home / name for name in ("config", "data", "runtime", "settings", "workspaces", "ipython")}
    for path in dirs.values():
        path.mkdir()
    for plugin, values in (settings or {}).items():
        package, _, name = plugin.rpartition("/")
        target = dirs["settings"] / package / f"{name}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")

    env = os.environ.copy()
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        IPYTHONDIR=str(dirs["ipython"]),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra_env or {})
    token = secrets.token_hex(16)
    port = free_port()
    cmd = [
        *(jupyter or jupyter_command()), "lab", *lab_args,
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
    ]
    log_path = home / "server.log"
    log = open(log_path, "wb")  # closed in finally
    process = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )
    server = LabServer(f"http://127.0.0.1:{port}", token, Path(root), process, home, log_path)
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {process.returncode} before answering.\n"
                    f"command: {shlex.join(cmd)}\n--- server log ---\n{server.log_tail()}"
                )
            with contextlib.suppress(OSError):
                if server.request("/api/status", timeout=2)[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"JupyterLab did not answer within {startup_timeout:.0f} s.\n"
                    f"--- server log ---\n{server.log_tail()}"
                )
            time.sleep(0.25)
        yield server
    finally:
        descendants = _descendants(process)
        if process.poll() is None:
            server.shutdown_kernels()
            with contextlib.suppress(Exception):
                server.request("/api/shutdown", method="POST", timeout=5)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        kill_tree(process, descendants)
        log.close()
        shutil.rmtree(home, ignore_errors=True)


def notebook_paths() -> list[Path]:
    """The course notebooks, in lesson order (whatever is in notebooks/ right now)."""
    return sorted(NOTEBOOKS.glob("*.ipynb"))


# ------------------------------------------------------------------ warnings

@pytest.fixture
def warnings_are_errors():
    """The test fails on any warning (a RuntimeWarning from numpy included): the library must not leak one."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
