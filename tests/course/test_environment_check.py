"""The environment check of lesson 00 (lessons_lib.course.environment): ready or not, and why.

It reads the course's Python floor from ``pyproject.toml`` (the installed library's metadata where the
repository is not there), the lessons that need PyTorch from the registry, the packages' versions from
their metadata; torch's device in a separate Python, so that lesson 00's kernel stays light.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import replace
from importlib.metadata import metadata
from pathlib import Path

import pytest

import lessons_lib
from lessons_lib.core import backends
from lessons_lib.course import environment, project
from lessons_lib.course.environment import environment_report, widget_check
from lessons_lib.course.lessons import LESSONS, torch_lessons
from tests.helpers import REPO, require

FLOOR = project.python_floor()
BELOW = f"{FLOOR[0]}.{FLOOR[1] - 1}.14"      # a Python of the minor version below the floor


@pytest.fixture
def without_torch(monkeypatch):
    """The report without asking torch (a separate Python, seconds) where the test is about something else."""
    monkeypatch.setattr(backends, "torch_available", lambda: False)


# ------------------------------------------------------------------ the report
def test_report_lists_versions_of_the_course_packages():
    report = environment_report()
    names = {c.name: c for c in report.components}
    for name in ("numpy", "matplotlib", "Pillow", "ipywidgets", "JupyterLab"):
        assert name in names
    import numpy

    assert names["numpy"].version == numpy.__version__
    assert report.python == ".".join(map(str, sys.version_info[:3]))
    assert report.ok, report.verdict
    text = str(report)
    assert "numpy" in text and numpy.__version__ in text and "Ready" in text


def test_report_has_accessible_html_and_text(without_torch):
    report = environment_report()
    page = report._repr_html_()
    assert "<table>" in page and "<caption" in page and "scope='col'" in page
    # status is written in words, not carried by colour alone
    assert "OK" in page
    assert repr(report) == str(report)
    assert report.as_dict()["packages"]["numpy"]


def test_missing_needed_package_makes_report_not_ready(monkeypatch, without_torch):
    real = environment.installed_version
    monkeypatch.setattr(environment, "installed_version",
                        lambda dist: None if dist == "matplotlib" else real(dist))
    report = environment_report()
    assert not report.ok
    assert report.missing == ["matplotlib"]
    assert "matplotlib" in report.verdict and "make lab" in report.verdict
    assert "MISSING (needed)" in str(report)


def test_environment_report_is_exported_lazily():
    assert lessons_lib.environment_report is environment_report


# ------------------------------------------------------------------ the Python floor, pyproject.toml's
def test_the_floor_is_pyprojects_requires_python_and_the_installed_metadatas():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'requires-python = ">={FLOOR[0]}.{FLOOR[1]}"' in text
    assert metadata(project.DISTRIBUTION)["Requires-Python"] == f">={FLOOR[0]}.{FLOOR[1]}", (
        "the installed metadata is stale: make lab reinstalls the library when pyproject.toml changes")


def test_without_the_repository_the_floor_comes_from_the_installed_metadata(tmp_path):
    """Binder, a hub's image, Colab: the library is installed and no pyproject.toml is beside it."""
    assert project.source_pyproject(tmp_path / "pyproject.toml") is None
    assert project.python_floor(tmp_path / "pyproject.toml") == FLOOR
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "another"\nrequires-python = ">=3.9"\n')
    assert project.python_floor(tmp_path / "pyproject.toml") == FLOOR, "another project's file is not ours"


def test_a_source_trees_pyproject_wins_over_stale_metadata(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "{project.DISTRIBUTION}"\n'
                                             f'version = "9.9.9"\nrequires-python = ">=3.42"\n')
    assert project.python_floor(tmp_path / "pyproject.toml") == (3, 42)
    assert project.version(tmp_path / "pyproject.toml") == "9.9.9"


def test_on_a_python_below_the_floor_the_check_is_not_ready_and_names_the_floor(monkeypatch, without_torch):
    monkeypatch.setattr(environment.platform, "python_version", lambda: BELOW)
    report = environment_report()
    floor = f"{FLOOR[0]}.{FLOOR[1]}"
    assert report.python == BELOW and report.python_too_old and not report.ok
    assert report.verdict.startswith("Not ready") and "Ready:" not in str(report)
    assert f"needs Python {floor} or newer" in report.verdict and f"Python {BELOW}" in report.verdict
    assert f"make lab PYTHON=python{floor}" in report.verdict
    assert "TOO OLD" in str(report) and "&#9888; TOO OLD" in report._repr_html_()
    assert report.as_dict()["ok"] is False and report.as_dict()["python_floor"] == floor


@pytest.mark.parametrize("python", [f"{FLOOR[0]}.{FLOOR[1]}.0", f"{FLOOR[0]}.{FLOOR[1] + 1}.2",
                                    f"{FLOOR[0]}.{FLOOR[1] + 2}.0rc1"])
def test_a_python_at_the_floor_or_above_is_ready(python, without_torch):
    report = replace(environment_report(), python=python)
    assert not report.python_too_old and report.python_status == "OK"
    assert report.ok == (not report.missing) and "TOO OLD" not in str(report)


def test_a_python_below_the_floor_and_a_missing_package_are_both_named(monkeypatch, without_torch):
    monkeypatch.setattr(environment.platform, "python_version", lambda: BELOW)
    real = environment.installed_version
    monkeypatch.setattr(environment, "installed_version",
                        lambda dist: None if dist == "numpy" else real(dist))
    verdict = environment_report().verdict
    assert "course needs Python" in verdict and "missing numpy" in verdict


def test_where_the_floor_cannot_be_read_the_python_is_not_checked_nor_blamed(without_torch):
    report = replace(environment_report(), python=BELOW, python_floor=None)
    assert report.python_status == "not checked" and not report.python_too_old and report.ok
    assert "floor could not be read" in str(report)


@pytest.mark.subprocess
def test_the_modules_of_the_check_parse_on_the_python_below_the_floor():
    """So that on that Python the check can run and say it is too old, rather than fail on syntax."""
    code = ("import json, sys, lessons_lib as ll\n"
            "ll.environment_report\n"
            "from lessons_lib.course.environment import widget_check\n"
            "print(json.dumps(sorted(m.__file__ for n, m in list(sys.modules.items())\n"
            "                        if n.split('.')[0] == 'lessons_lib' and getattr(m, '__file__', None))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)
    assert any(f.endswith("environment.py") for f in files) and any(f.endswith("project.py") for f in files)
    for file in files:
        ast.parse(Path(file).read_text(encoding="utf-8"), file, feature_version=(FLOOR[0], FLOOR[1] - 1))


# ------------------------------------------------------------------ torch
def test_torch_path_when_torch_is_installed():
    require(backends.torch_available(), "torch is not installed")
    import torch

    report = environment_report()
    assert report.torch_version == torch.__version__
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert report.device == expected
    assert ("GPU path" if expected == "cuda" else "CPU path") in report.torch_path
    if expected == "cuda":
        assert report.gpu_name == torch.cuda.get_device_name(0)


def test_torch_missing_is_explained_and_not_imported(monkeypatch):
    monkeypatch.setattr(backends, "torch_available", lambda: False)

    def must_not_run(**_):
        raise AssertionError("describe_torch() imports torch; it must not run when torch is missing")

    monkeypatch.setattr(backends, "describe_torch", must_not_run)
    report = environment_report()
    assert report.torch_version is None and report.device is None
    assert report.ok, "torch is optional: its absence must not make the environment 'not ready'"
    assert "not installed" in report.torch_path and "numpy lessons work" in report.torch_path
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in report.torch_path
    assert "not installed (optional)" in str(report)


def test_without_torch_the_check_names_the_registrys_pytorch_lessons(without_torch):
    path = environment_report().torch_path
    listed = [number for number, lesson in LESSONS.items() if lesson.torch]
    assert torch_lessons() == listed and listed
    assert f"the PyTorch lessons ({', '.join(listed)}) need it" in path
    assert "and later" not in path


def test_broken_torch_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(backends, "torch_available", lambda: True)

    def broken(**_):
        raise ImportError("libcudart.so.12: cannot open shared object file")

    monkeypatch.setattr(backends, "describe_torch", broken)
    report = environment_report()
    assert report.torch_error and "libcudart" in report.torch_error
    assert "failed to import" in report.torch_path
    assert "BROKEN" in str(report)


def _run_python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.subprocess
def test_environment_check_finds_torch_without_importing_it():
    require_torch = pytest.importorskip("torch")
    out = _run_python(
        "import sys, lessons_lib as ll; report = ll.environment_report(); "
        "print('torch' in sys.modules, report.torch_version)"
    )
    assert out.split() == ["False", require_torch.__version__], (
        "the environment check must read torch's version and device in a separate Python, so that "
        "lesson 00's kernel does not hold torch's memory")


@pytest.mark.subprocess
def test_import_lessons_lib_stays_light(fresh_imports):
    assert not {"torch", "matplotlib"} & fresh_imports["ll.environment_report"], (
        "import lessons_lib (and reaching ll.environment_report) must not import torch or matplotlib")


# ------------------------------------------------------------------ the widget check
def test_widget_check_echoes_the_slider_value():
    import ipywidgets as widgets

    box = widget_check(value=3)
    assert isinstance(box, widgets.VBox)
    slider = next(w for w in box.children if isinstance(w, widgets.IntSlider))
    echo = next(w for w in box.children if "lessons-widget-echo" in w._dom_classes)
    assert "lessons-slider-check" in slider._dom_classes
    assert "<b>3</b>" in echo.value
    slider.value = 7
    assert "<b>7</b>" in echo.value and "49" in echo.value


def test_report_displays_table_then_widget(monkeypatch, without_torch):
    import ipywidgets as widgets
    from IPython import display as ipd

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append((obj, kw)))
    environment_report()._ipython_display_()
    assert len(shown) == 2
    bundle, kwargs = shown[0]
    assert kwargs.get("raw") and {"text/html", "text/plain"} <= set(bundle)
    assert isinstance(shown[1][0], widgets.VBox)
