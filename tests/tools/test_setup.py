"""A new learner's set-up (``tools/course.py``, run by `make lab` and `make test`) never trips, and the set-up
files agree with it.

* **One Python floor**, ``requires-python`` of ``pyproject.toml``: the set-up reads it, the library's
  environment check reads it (``lessons_lib.course.project``), ruff takes its target from it, and every
  sentence that states it states that one.
* **It speaks before it trips**: ``tools/course.py`` parses with Python 2.7's own grammar (typed_ast's
  ``ast27``, CPython 2.7's parser), and the version check runs before anything an old Python lacks is
  imported (pathlib, importlib.util); a Debian Python without ``venv``, a ``.venv`` whose python is a
  dangling link, a wrong ``TORCH``, a missing Chromium each get one clear line.
* torch's build is the CPU one on Linux without an NVIDIA GPU; `make lab` opens the learner's own
  workspace, which keeps their edits when the course is updated.
* The set-up files: Binder's pins are the course's, its Python is at the floor or above, CI fails instead
  of skipping, every requirement is an exact pin.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool, require

course = load_tool("course")
release = load_tool("learner_release")
COURSE = REPO / "tools" / "course.py"
FLOOR = course.required_python()
FLOOR_TEXT = "{}.{}".format(*FLOOR)
#: how a sentence states the floor: "Python ≥ 3.11", "Python >= 3.11", "Python 3.11 or newer"
STATES_A_FLOOR = re.compile(r"Python\s*(?:≥|>=)\s*(\d+\.\d+)|Python (\d+\.\d+) or newer")


# ------------------------------------------------------------------ one Python floor, pyproject.toml's
def test_the_python_floor_is_written_once_in_pyproject_and_read_from_there():
    with open(REPO / "pyproject.toml", "rb") as fh:
        pyproject = tomllib.load(fh)
    assert pyproject["project"]["requires-python"] == f">={FLOOR_TEXT}"
    assert FLOOR >= (3, 11), "numpy 2.4 (requirements.txt) needs Python 3.11"
    assert "target-version" not in pyproject["tool"]["ruff"], (
        "ruff takes its target from requires-python: a target-version would write the floor twice")
    from lessons_lib.course import project

    assert project.python_floor() == FLOOR, "the library reads another floor than the set-up"


@pytest.mark.subprocess
def test_ruff_targets_the_python_floor():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--show-settings", "lessons_lib"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"linter.unresolved_target_version = {FLOOR_TEXT}\n" in done.stdout


def _stated_floors() -> dict[str, set[str]]:
    """Where the course states a Python floor, in words: file -> the floors it states."""
    texts = {path.name: path.read_text(encoding="utf-8")
             for path in [REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").glob("*.md")]}
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        texts[path.name] = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                                     if c.cell_type == "markdown")
    texts["the learner copy's README"] = release.learner_readme()
    return {name: {a or b for a, b in STATES_A_FLOOR.findall(text)} for name, text in texts.items()}


def test_every_sentence_that_states_the_python_floor_states_pyprojects():
    stated = _stated_floors()
    wrong = {name: floors for name, floors in stated.items() if floors - {FLOOR_TEXT}}
    assert not wrong, f"these state another Python floor than pyproject.toml's {FLOOR_TEXT}: {wrong}"
    assert stated["README.md"] and stated["the learner copy's README"], "the READMEs state the floor"


def test_binder_runs_a_python_at_the_floor_or_above():
    runtime = (REPO / "binder" / "runtime.txt").read_text(encoding="utf-8").strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    assert tuple(map(int, runtime.removeprefix("python-").split("."))) >= FLOOR


def test_a_python_too_old_gets_one_line_naming_the_version_and_the_fix():
    with pytest.raises(course.SetupError) as error:
        course.check_python((3, 9))
    message = str(error.value)
    assert f"needs Python {FLOOR_TEXT} or newer" in message and "Python 3.9" in message
    assert f"make lab PYTHON=python{FLOOR_TEXT}" in message and "\n" not in message
    course.check_python(FLOOR)  # the floor itself passes


def test_another_course_folder_has_its_own_floor(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.42"\n', encoding="utf-8")
    assert course.required_python(tmp_path) == (3, 42)


# ------------------------------------------------------------------ an old Python hears why
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


# ------------------------------------------------------------------ the virtual environment
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


def test_this_environment_got_the_torch_build_its_machine_needs():
    """`make test` set this .venv up with tools/course.py: without an NVIDIA GPU, the CPU build."""
    torch = pytest.importorskip("torch")
    if course.torch_build("auto") == "cpu":
        assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build, and no GPU is here"
    assert torch.__version__.split("+")[0] == course.pinned("torch")


def test_reading_a_notebook_does_not_build_the_iri_grammar():
    """requirements.txt pins jsonschema below 4.25 (its comment says why): nbformat, imported above as every
    Jupyter server, nbconvert and nbgrader imports it, then never loads rfc3987-syntax, whose import builds
    some forty parsers (about 2 s of processor time in each of those processes)."""
    nbformat.validate(nbformat.v4.new_notebook())
    assert "rfc3987_syntax" not in sys.modules, "jsonschema loaded rfc3987-syntax: is it 4.25 or newer?"


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


# ------------------------------------------------------------------ make and the set-up files
@pytest.mark.subprocess
@pytest.mark.parametrize("target", ["lab", "teach"])
def test_make_lab_and_teach_run_the_course_tool(target):
    require(shutil.which("make") is not None, "GNU make is not installed")
    env = {**os.environ, "MAKEFLAGS": ""}
    out = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any("tools/course.py" in ln and ln.rstrip().endswith(f" {target}") for ln in lines), (
        f"`make {target}` should run tools/course.py {target}; it runs:\n{out.stdout}")


def test_make_test_runs_the_notebooks_offline_and_the_doctests():
    require(shutil.which("make") is not None, "GNU make is not installed")
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    runs_stages = re.compile(r"^test:\n(\t.*\n)*\tfor stage in \$\(TEST_STAGES\)", re.M)
    assert runs_stages.search(text), "make test runs the stages of TEST_STAGES"
    assert "--nbval --nbval-kernel-name course-offline notebooks/" in text  # offline, memory recorded
    assert "--doctest-modules lessons_lib" in text
    assert "LESSONS_SCREENSHOTS=" in text


def test_python3_kernel_runs_this_interpreter():
    """nbval and JupyterLab start the kernel named python3: it must be this environment's Python."""
    from jupyter_client.manager import KernelManager

    cmd = KernelManager(kernel_name="python3").format_kernel_cmd()
    assert Path(cmd[0]).resolve() == Path(sys.executable).resolve(), (
        f"the python3 kernel runs {cmd[0]}, not {sys.executable}: a user-level kernelspec shadows the "
        "environment's one (see `jupyter kernelspec list`)"
    )


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def test_binder_requirements_are_the_course_pins():
    """Binder installs the course's pins; torch, when listed there, is the CPU-only build of the same pin;
    beyond them only what a hub needs: the browser test's Notebook 7, nbgitpuller and nbgrader."""
    main = _pins(REPO / "requirements.txt")
    text = (REPO / "binder" / "requirements.txt").read_text(encoding="utf-8")
    shared = main if re.search(r"^-r\s+\.\./requirements\.txt", text, flags=re.MULTILINE) else {}
    binder = {**shared, **_pins(REPO / "binder" / "requirements.txt")}
    def without_torch(pins):
        return {k: v for k, v in pins.items() if k != "torch"}

    extra = {k: v for k, v in binder.items() if k not in main}
    assert without_torch({k: v for k, v in binder.items() if k in main}) == without_torch(main)
    assert set(extra) == {"notebook", "nbgitpuller", "nbgrader"}, extra
    dev = _pins(REPO / "requirements-dev.txt")
    assert extra["notebook"] == dev["notebook"], "Binder gets the browser test's Notebook 7"
    if "torch" in binder:
        assert binder["torch"] == main["torch"] + "+cpu", "Binder gets the CPU-only torch build"
        assert "download.pytorch.org/whl/cpu" in text


def test_binder_postbuild_installs_the_library():
    post = REPO / "binder" / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    text = post.read_text(encoding="utf-8")
    assert text.startswith("#!") and "pip install" in text
    # a regular install: the hub mounts each learner's home over the repository's copy in /home/jovyan
    assert "-e ." not in text and "--no-deps ." in text


def test_ci_script_fails_instead_of_skipping():
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    assert "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1" in text
    assert "make test" in text
    assert os.access(REPO / ".ci" / "run", os.X_OK)


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-dev.txt"])
def test_requirements_are_exact_pins(name):
    for line in (REPO / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-r"):
            # an exact pin, with at most a Python-version marker (a package without wheels past a version)
            pinned = re.fullmatch(r'[A-Za-z0-9_.\-\[\]]+==[\w.+]+(; python_version < "\d+\.\d+")?', line)
            assert pinned, f"{name}: {line!r} is not an exact pin"
