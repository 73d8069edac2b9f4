"""The sandbox a submission's code runs in while it is graded (lessons_lib/exercises/sandbox.py), on its own:
a Python started in it writes nothing outside its scratch, reads no hidden file, reaches no listener on the
grader's loopback, runs as nobody (under root) with ``-I``, and leaves no process behind, even one in a new
session; where bubblewrap is missing, grading refuses, saying what to install. The whole path through
nbgrader: tests/grading/test_learner_code_runs_sandboxed.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from lessons_lib.exercises import sandbox
from tests.helpers import REPO

pytestmark = [pytest.mark.subprocess,  # each test starts a sandboxed Python
              pytest.mark.skipif(shutil.which("bwrap") is None and not os.environ.get("CI"),
                                 reason="bubblewrap is not installed (CI installs it: .ci/run)")]

MARK = "lessons-sandbox-unit-test-left-running"


def _run(code: str, tmp_path: Path, hide=(), course=None) -> dict:
    """Run ``code`` in a sandbox whose submission folder is ``tmp_path/submission``; what it printed."""
    folder = tmp_path / "submission"
    folder.mkdir(exist_ok=True)
    (folder / "data.txt").write_text("the submission's own file")
    with sandbox.Scratch(folder) as scratch:
        argv = sandbox.command([sys.executable, "-c", textwrap.dedent(code)], scratch, hide, course)
        done = subprocess.run(argv, capture_output=True, text=True, env=sandbox.environment(scratch),
                              cwd=scratch.root, timeout=120)
        assert done.returncode == 0, done.stderr
        root = scratch.root
    assert not root.exists(), "the scratch is thrown away"
    return json.loads(done.stdout)


def test_code_in_the_sandbox_writes_only_its_scratch_and_reads_no_hidden_file(tmp_path):
    # a secret anyone could read, where nothing else hides it (pytest's /tmp is hidden as a whole)
    folder = REPO / "test-artifacts"
    folder.mkdir(exist_ok=True)
    secret = Path(tempfile.mkstemp(dir=folder, prefix="sandbox-secret-")[1])
    secret.write_text("the course's secret")
    secret.chmod(0o644)
    library = Path(sandbox.__file__)
    said = _run(f"""
        import json, os, sys
        def tried(action):
            try:
                action()
                return "done"
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps({{
            "library": tried(lambda: open({str(library)!r}, "a")),
            "home": tried(lambda: open(os.path.expanduser("~/.profile"), "w").write("x")),
            "here": tried(lambda: open("made-here.txt", "w").write("x")),
            "data": open("data.txt").read(),
            "secret": open({str(secret)!r}).read(),
            "isolated": sys.flags.isolated, "uid": os.getuid(),
        }}))
    """, tmp_path, hide=[secret])
    secret.unlink()
    assert said["library"] != "done" and said["here"] == "done"
    assert said["data"] == "the submission's own file"
    assert said["home"] == "done"  # its own home in the scratch, thrown away: not the grader's
    assert said["secret"] == "", "an empty file in the secret's place"
    assert said["isolated"] == 1
    if os.geteuid() == 0:
        assert said["uid"] == 65534, "root grades: the code runs as nobody"
    assert not (tmp_path / "submission" / "made-here.txt").exists(), "the submission's folder is a copy"


def test_code_in_the_sandbox_reaches_no_listener_on_the_graders_loopback(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        said = _run(f"""
            import json, socket
            try:
                socket.create_connection(("127.0.0.1", {listener.getsockname()[1]}), timeout=2).sendall(b"hi")
                print(json.dumps("connected"))
            except OSError as exc:
                print(json.dumps(type(exc).__name__))
        """, tmp_path)
        assert said != "connected"
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_nothing_the_code_starts_outlives_it_even_in_a_new_session(tmp_path):
    said = _run(f"""
        import json, subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", {MARK!r}],
                                 start_new_session=True)
        print(json.dumps(child.pid))
    """, tmp_path)
    assert isinstance(said, int)
    left = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and _marked(p)]
    assert left == []


def _marked(process: Path) -> bool:
    try:
        return MARK.encode() in (process / "cmdline").read_bytes()
    except OSError:
        return False


def test_without_bubblewrap_grading_refuses_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(sandbox, "BWRAP", "bwrap-that-is-not-installed")
    sandbox.why_none.cache_clear()
    try:
        with pytest.raises(sandbox.SandboxError, match="apt-get install bubblewrap"):
            sandbox.require()
    finally:
        sandbox.why_none.cache_clear()


def test_the_course_folder_and_the_graders_home_are_hidden_the_python_that_grades_is_not(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "gradebook.db").write_text("grades")
    said = _run(f"""
        import json, os, sys
        print(json.dumps({{"course": os.listdir({str(course)!r}) if os.path.isdir({str(course)!r}) else None,
                           "prefix": os.path.isdir(sys.prefix)}}))
    """, tmp_path, course=course)
    assert said == {"course": [], "prefix": True}


@pytest.mark.skipif(os.geteuid() != 0, reason="under root the sandboxed code runs as nobody")
def test_a_python_that_nobody_may_reach_stops_grading_saying_which_folders_to_open(monkeypatch):
    """A teacher's environment inside a folder of mode 700 (a home, a private folder): run as nobody, the
    grading Python cannot start, and grading refuses up front with what to change, not with a failure of
    every submission."""
    (REPO / "test-artifacts").mkdir(exist_ok=True)   # outside the folders the sandbox hides (/tmp is one)
    private = Path(tempfile.mkdtemp(prefix="lessons-private-", dir=REPO / "test-artifacts"))
    try:
        python = private / "python3"
        python.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
        python.chmod(0o755)
        private.chmod(0o700)
        monkeypatch.setattr(sys, "executable", str(python))
        sandbox.why_none.cache_clear()
        with pytest.raises(sandbox.SandboxError, match=r"cannot import the course library.*chmod o\+rx"):
            sandbox.require()
    finally:
        sandbox.why_none.cache_clear()
        shutil.rmtree(private)
