"""The two loops: what `make check` (``pytest --edit-loop``) leaves out, and the guard that fails a
test left in that starts a process or a server (``tests/conftest.py`` applies both)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess

#: marks of the tests `make check` leaves out (pyproject.toml says what each means); `make test` runs them
NOT_IN_CHECK = ("slow", "training", "kernel", "subprocess", "lab", "browser", "binder", "grading", "hub")


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
                f"{test} {what}, which `make check` (the edit loop) never does; mark it "
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
