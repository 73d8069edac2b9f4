"""A JupyterLab server started as `make lab` starts it, for the tests that need one.

`running_lab()` starts JupyterLab with the arguments `make lab` uses (``tools/course.py``), on a free
loopback port with a random token, in private Jupyter config/data/runtime/settings/workspace folders,
waits until it answers, and always shuts it down (kernels included), even when the test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import free_port, load_tool


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


#: A free port is asked for, then the server binds it a moment later: another process (a second pytest-xdist
#: worker's server) may take it in between. The server then stops at once, and is started on another port.
PORT_TRIES = 3


def _answers(server: LabServer, since: int, deadline: float, cmd: list[str]) -> bool:
    """Wait until ``server`` answers (True), or has stopped at its start because its port was taken
    meanwhile, as its log says after byte ``since`` (False: start it again); any other stop, or no answer by
    ``deadline``, raises and says why."""
    while server.process.poll() is None:
        with contextlib.suppress(OSError):
            if server.request("/api/status", timeout=2)[0] == 200:
                return True
        if time.monotonic() > deadline:
            raise RuntimeError(f"JupyterLab did not answer in time.\n--- server log ---\n{server.log_tail()}")
        time.sleep(0.25)
    if b"already in use" in server.log_path.read_bytes()[since:]:
        return False
    raise RuntimeError(f"JupyterLab exited with code {server.process.returncode} before answering.\n"
                       f"command: {shlex.join(cmd)}\n--- server log ---\n{server.log_tail()}")


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
    log_path = home / "server.log"
    log = open(log_path, "wb")  # closed in finally
    deadline = time.monotonic() + startup_timeout
    process = None
    try:
        for _attempt in range(PORT_TRIES):
            port = free_port()
            cmd = [
                *(jupyter or jupyter_command()), "lab", *lab_args,
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
            ]
            since = log_path.stat().st_size
            process = subprocess.Popen(
                cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
            server = LabServer(f"http://127.0.0.1:{port}", token, Path(root), process, home, log_path)
            if _answers(server, since, deadline, cmd):
                break
        else:
            raise RuntimeError(f"JupyterLab found its port taken {PORT_TRIES} times.\n{server.log_tail()}")
        yield server
    finally:
        descendants = _descendants(process) if process else []
        if process and process.poll() is None:
            server.shutdown_kernels()
            with contextlib.suppress(Exception):
                server.request("/api/shutdown", method="POST", timeout=5)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        if process:
            kill_tree(process, descendants)
        log.close()
        shutil.rmtree(home, ignore_errors=True)
