"""A new learner's set-up (``tools/course.py``, run by `make lab` and `make test`) never trips.

Each trap gives one clear line: a Python too old, a Debian Python without ``venv``, a missing Chromium;
torch's build is the CPU one on Linux without an NVIDIA GPU; `make lab` opens the learner's own workspace,
which keeps their edits when the course is updated.
"""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest

from tests.helpers import REPO, load_tool

course = load_tool("course")
release = load_tool("learner_release")


# ------------------------------------------------------------------ Python version: one truth

def test_the_python_version_is_written_once_and_everything_agrees_with_it():
    need = course.required_python()
    assert need >= (3, 11), "numpy 2.4 (requirements.txt) needs Python 3.11"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"Python ≥ (\d+)\.(\d+)", readme)
    assert stated and (int(stated.group(1)), int(stated.group(2))) == need, "README states another Python"
    runtime = (REPO / "binder" / "runtime.txt").read_text(encoding="utf-8").strip()
    assert tuple(map(int, runtime.removeprefix("python-").split("."))) >= need


def test_a_python_too_old_gets_one_line_naming_the_version_and_the_fix():
    with pytest.raises(course.SetupError) as error:
        course.check_python((3, 9))
    message = str(error.value)
    need = "{}.{}".format(*course.required_python())
    assert f"needs Python {need} or newer" in message and "Python 3.9" in message
    assert f"make lab PYTHON=python{need}" in message and "\n" not in message
    course.check_python(course.required_python())  # the required version itself passes


def test_the_course_tool_speaks_even_on_an_old_python():
    """It must parse on the Pythons it turns away, so that it can say why (no 3.10+ syntax)."""
    import ast

    ast.parse((REPO / "tools" / "course.py").read_text(encoding="utf-8"), feature_version=(3, 6))


@pytest.mark.subprocess
def test_a_debian_python_without_venv_gets_the_package_to_install(tmp_path):
    probe = (
        "import sys, importlib.util; sys.path.insert(0, {tools!r})\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'ensurepip' else real(name, *a)\n"
        "import course\n"
        "try:\n"
        "    course.ensure_venv(course.Path({venv!r}))\n"
        "except course.SetupError as exc:\n"
        "    print(exc)\n"
    ).format(tools=str(REPO / "tools"), venv=str(tmp_path / "venv"))
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    package = "python{}.{}-venv".format(*sys.version_info[:2])
    assert f"sudo apt install {package}" in out.stdout, out.stdout + out.stderr
    assert not (tmp_path / "venv").exists(), "a half-made venv was left behind"


# ------------------------------------------------------------------ torch: CPU or CUDA

@pytest.mark.parametrize(("choice", "system", "machine", "gpu", "build"), [
    ("auto", "Linux", "x86_64", False, "cpu"),
    ("auto", "Linux", "x86_64", True, "cuda"),
    ("cuda", "Linux", "x86_64", False, "cuda"),
    ("cpu", "Linux", "x86_64", True, "cpu"),
    ("auto", "Darwin", "arm64", False, "default"),
    ("auto", "Windows", "AMD64", False, "default"),
    ("auto", "Linux", "aarch64", False, "default"),
])
def test_torch_build_follows_the_machine_and_the_switch(choice, system, machine, gpu, build):
    assert course.torch_build(choice, system, machine, gpu=gpu) == build


def test_a_wrong_torch_switch_says_what_it_takes():
    with pytest.raises(course.SetupError, match="TORCH must be auto, cpu or cuda"):
        course.torch_build("gpu")


def test_this_environment_got_the_torch_build_its_machine_needs():
    """`make test` set this .venv up with tools/course.py: without an NVIDIA GPU, the CPU build."""
    torch = pytest.importorskip("torch")
    if course.torch_build("auto") == "cpu":
        assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build, and no GPU is here"
    assert torch.__version__.split("+")[0] == course.pinned("torch")


@pytest.mark.subprocess
def test_make_passes_the_torch_switch_to_the_course_tool():
    out = subprocess.run(["make", "-n", "lab", "TORCH=cuda"], cwd=REPO, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "tools/course.py --torch cuda lab" in out.stdout


# ------------------------------------------------------------------ Chromium

def test_a_missing_chromium_gets_one_line_on_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(course, "CHROMIUM", REPO / "no-such-chromium")
    assert course.main(["check-browser"]) == 1
    out = capsys.readouterr().out.strip()
    assert out.count("\n") == 0 and "sudo apt-get install chromium" in out


def test_make_test_skips_the_browser_stage_outside_ci_only():
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = text.split("\ntest-browser:", 1)[1].split("\n\n", 1)[0]
    assert "tools/course.py check-browser" in recipe and '[ -z "$$CI" ]' in recipe


# ------------------------------------------------------------------ the learner's workspace

def _solution_lines(path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum(c.source.count("### BEGIN SOLUTION") for c in nb.cells if c.cell_type == "code")


def test_the_workspace_holds_every_lesson_without_solutions(tmp_path):
    added, kept = release.update_workspace(tmp_path / "workspace")
    lessons = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    assert added == lessons and kept == []
    assert all(_solution_lines(tmp_path / "workspace" / name) == 0 for name in lessons)
    assert any(_solution_lines(REPO / "notebooks" / name) for name in lessons), "the source has solutions"


def test_the_workspace_keeps_a_learners_edits_and_adds_new_lessons(tmp_path):
    workspace = tmp_path / "workspace"
    release.update_workspace(workspace)
    mine = workspace / "03_step2_scores.ipynb"
    nb = nbformat.read(mine, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("my_answer = 42  # the learner's own work"))
    nbformat.write(nb, mine)
    (workspace / "10_review_and_paper.ipynb").unlink()      # as if lesson 10 came with a later git pull
    added, kept = release.update_workspace(workspace)
    assert added == ["10_review_and_paper.ipynb"]
    assert "03_step2_scores.ipynb" in kept
    assert "my_answer = 42" in mine.read_text(encoding="utf-8")


@pytest.mark.subprocess
def test_git_ignores_the_workspace():
    out = subprocess.run(["git", "check-ignore", "-q", "workspace/00_start_here.ipynb"], cwd=REPO)
    assert out.returncode == 0, "workspace/ must be in .gitignore, so a git pull never touches it"
