"""The set-up script speaks before it trips: on an old Python, on a wrong TORCH, on a broken ``.venv``, and
``learner_release.py --workspace`` on a file.

* ``tools/course.py`` parses with Python 2.7's own grammar (typed_ast's ``ast27``, CPython 2.7's parser),
  so Python 2.7 reaches the version check; the check runs before anything an old Python lacks is imported
  (pathlib, importlib.util), which is shown by running the script with those modules taken away.
* ``TORCH=gpu`` is refused before ``.venv`` is touched.
* A ``.venv`` whose python is a dangling link (left by a Python upgrade) is said to be broken and rebuilt.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers import REPO, load_tool, require

course = load_tool("course")
COURSE = REPO / "tools" / "course.py"


def test_the_course_tool_parses_with_python_2_7s_grammar():
    require(importlib.util.find_spec("typed_ast") is not None,
            "typed_ast (CPython 2.7's parser) is not installed (requirements-dev.txt pins it)")
    from typed_ast import ast27

    source = COURSE.read_bytes()
    assert source.isascii(), "Python 2 refuses a source file with non-ASCII bytes and no coding line"
    ast27.parse(source.decode("ascii"), str(COURSE))
    with pytest.raises(SyntaxError):                  # the grammar is 2.7's: newer syntax fails there
        ast27.parse('x = f"{1}"\n')


def _fake_root(tmp_path, requires: str):
    """A copy of the course tool beside a pyproject.toml that asks for ``requires``."""
    (tmp_path / "tools").mkdir()
    shutil.copy(COURSE, tmp_path / "tools" / "course.py")
    (tmp_path / "pyproject.toml").write_text(f'[project]\nrequires-python = ">={requires}"\n',
                                             encoding="utf-8")
    return tmp_path / "tools" / "course.py"


@pytest.mark.subprocess
def test_a_python_too_old_hears_why_before_any_newer_module_is_imported(tmp_path):
    """As on Python 2.7: pathlib and importlib.util missing; the version line comes first, then exit 2."""
    script = _fake_root(tmp_path, "99.0")
    probe = ("import sys\n"
             f"source = open({str(script)!r}).read()\n"
             "sys.modules['pathlib'] = None\n"               # import pathlib now fails, as on Python 2
             "sys.modules['importlib.util'] = None\n"
             f"sys.argv = [{str(script)!r}, 'env']\n"
             f"exec(compile(source, {str(script)!r}, 'exec'),"
             f" {{'__name__': '__main__', '__file__': {str(script)!r}}})\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "needs Python 99.0 or newer" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_wrong_torch_choice_is_refused_before_the_venv_is_touched(monkeypatch, capsys):
    touched = []
    monkeypatch.setattr(course, "ensure_venv",
                        lambda *a, **k: touched.append(a) or pytest.fail(".venv touched"))
    assert course.main(["env", "--torch", "gpu"]) == 2
    assert "TORCH must be auto, cpu or cuda; got 'gpu'" in capsys.readouterr().err and not touched


@pytest.mark.subprocess
def test_make_refuses_torch_gpu_before_making_a_venv(tmp_path):
    """Through make, in a copy of the set-up files with no .venv: refused at once, no .venv made."""
    for name in ("Makefile", "pyproject.toml", "requirements.txt", "requirements-dev.txt"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "tools").mkdir()
    shutil.copy(COURSE, tmp_path / "tools" / "course.py")
    done = subprocess.run(["make", "lab", "TORCH=gpu", f"PYTHON={sys.executable}"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "TORCH must be auto, cpu or cuda" in done.stderr
    assert not (tmp_path / ".venv").exists()


def _dangling_venv(path):
    (path / "bin").mkdir(parents=True)
    os.symlink("/no/such/python3.10", path / "bin" / "python")
    (path / ".installed-runtime").write_text("old\n")


def test_a_venv_whose_python_is_a_dangling_link_is_called_broken(tmp_path):
    venv = tmp_path / "venv"
    _dangling_venv(venv)
    why = course.venv_broken(venv)
    assert "/no/such/python3.10" in why and "no longer exists" in why
    assert course.venv_broken(tmp_path / "none") == ""                      # absent is not broken


@pytest.mark.subprocess
def test_a_broken_venv_is_rebuilt_not_left_failed(tmp_path, monkeypatch, capsys):
    venv = tmp_path / "venv"
    _dangling_venv(venv)
    made = []

    def fake_venv(command, *args, **kwargs):          # python -m venv, without waiting for ensurepip
        made.append(command)
        assert not (venv / ".installed-runtime").exists(), "the broken venv was not cleared first"
        (venv / "bin").mkdir(parents=True)
        os.symlink(sys.executable, venv / "bin" / "python")
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(course.subprocess, "run", fake_venv)
    python = course.ensure_venv(venv)
    assert python == venv / "bin" / "python" and python.exists() and made
    assert "venv is broken" in capsys.readouterr().out
    assert course.venv_broken(venv) == ""


@pytest.mark.subprocess
def test_a_venv_that_works_is_kept(tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    os.symlink(sys.executable, venv / "bin" / "python")
    monkeypatch.setattr(course.subprocess, "run", lambda *a, **k: pytest.fail("a working venv was rebuilt"))
    assert course.ensure_venv(venv) == venv / "bin" / "python"


@pytest.mark.subprocess
@pytest.mark.parametrize("where", ["a file", "inside a file"])
def test_learner_release_workspace_on_a_file_says_so_without_a_traceback(tmp_path, where):
    target = tmp_path / "notes.txt"
    target.write_text("not a folder")
    workspace = target if where == "a file" else target / "workspace"
    done = subprocess.run([sys.executable, str(REPO / "tools" / "learner_release.py"), "--workspace",
                           str(workspace)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert str(workspace) in done.stderr and done.stderr.strip().count("\n") == 0
    assert target.read_text() == "not a folder"
