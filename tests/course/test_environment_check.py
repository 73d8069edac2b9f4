"""The environment check (lessons_lib.course.environment) and the setup files (Makefile, binder/)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import lessons_lib
from lessons_lib.core import backends
from lessons_lib.course import environment
from lessons_lib.course.environment import environment_report, widget_check
from tests.helpers import REPO, require


def _run_python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout


# ------------------------------------------------------------ the report

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


def test_report_has_accessible_html_and_text():
    report = environment_report()
    page = report._repr_html_()
    assert "<table>" in page and "<caption" in page and "scope='col'" in page
    # status is written in words, not carried by colour alone
    assert "OK" in page
    assert repr(report) == str(report)
    assert report.as_dict()["packages"]["numpy"]


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


def test_broken_torch_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(backends, "torch_available", lambda: True)

    def broken(**_):
        raise ImportError("libcudart.so.12: cannot open shared object file")

    monkeypatch.setattr(backends, "describe_torch", broken)
    report = environment_report()
    assert report.torch_error and "libcudart" in report.torch_error
    assert "failed to import" in report.torch_path
    assert "BROKEN" in str(report)


def test_missing_needed_package_makes_report_not_ready(monkeypatch):
    real = environment.installed_version
    monkeypatch.setattr(environment, "installed_version",
                        lambda dist: None if dist == "matplotlib" else real(dist))
    report = environment_report()
    assert not report.ok
    assert report.missing == ["matplotlib"]
    assert "matplotlib" in report.verdict and "make lab" in report.verdict
    assert "MISSING (needed)" in str(report)


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


def test_environment_report_is_exported_lazily():
    assert lessons_lib.environment_report is environment_report


# --------------------------------------------------------- the widget check

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


def test_report_displays_table_then_widget(monkeypatch):
    import ipywidgets as widgets
    from IPython import display as ipd

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append((obj, kw)))
    environment_report()._ipython_display_()
    assert len(shown) == 2
    bundle, kwargs = shown[0]
    assert kwargs.get("raw") and {"text/html", "text/plain"} <= set(bundle)
    assert isinstance(shown[1][0], widgets.VBox)


# ------------------------------------------------------- kernel and setup

def test_python3_kernel_runs_this_interpreter():
    """nbval and JupyterLab start the kernel named python3: it must be this environment's Python."""
    from jupyter_client.manager import KernelManager

    cmd = KernelManager(kernel_name="python3").format_kernel_cmd()
    assert Path(cmd[0]).resolve() == Path(sys.executable).resolve(), (
        f"the python3 kernel runs {cmd[0]}, not {sys.executable}: a user-level kernelspec shadows the "
        "environment's one (see `jupyter kernelspec list`)"
    )


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


def test_make_test_runs_every_layer():
    require(shutil.which("make") is not None, "GNU make is not installed")
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test: \$\(TEST_STAGES\)$", text, re.M), "make test runs the stages of TEST_STAGES"
    stages = re.search(r"^TEST_STAGES := (.*)$", text, re.M).group(1).split()
    assert stages == ["lint", "test-lib", "test-notebooks", "test-other-cpu", "test-browser", "test-binder",
                      "test-grading", "test-hub"]
    assert "pytest --nbval --nbval-kernel-name course-offline notebooks/" in text  # offline, memory recorded
    assert "--doctest-modules lessons_lib" in text
    assert "LESSONS_SCREENSHOTS=" in text


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
    runtime = (REPO / "binder" / "runtime.txt").read_text(encoding="utf-8").strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    assert tuple(map(int, runtime.split("-")[1].split("."))) >= (3, 11), "numpy 2.4 needs Python >= 3.11"


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
