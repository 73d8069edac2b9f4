"""Lesson 00 warns when the course library is older than the lessons (lessons_lib/course/environment.py).

On a class hub the lessons arrive by the nbgitpuller link at once, while ``lessons_lib`` comes with the
hub's environment (its image) and changes only when the hub is rebuilt. Each lesson carries the version it
was released with in its metadata (``lessons_version``, stamped by tools/stamp_notebooks.py); the kernel
finds its notebook by ``JPY_SESSION_NAME``, which Jupyter Server sets for the kernels it starts.
"""

from __future__ import annotations

import json

import nbformat
import pytest

import lessons_lib
from lessons_lib.course import environment
from tests.helpers import NOTEBOOKS, load_tool


def lesson(tmp_path, version) -> str:
    nb = nbformat.v4.new_notebook()
    if version is not None:
        nb.metadata[environment.VERSION_KEY] = version
    path = tmp_path / "00_start_here.ipynb"
    nbformat.write(nb, path)
    return str(path)


def test_a_library_older_than_the_lessons_is_named_with_both_versions_and_what_to_do(tmp_path):
    said = environment.library_behind(lesson(tmp_path, "0.3.0"), library="0.2.0")
    assert said.startswith("Warning:") and "lessons_lib 0.2.0" in said and "(0.3.0)" in said
    assert "tell your teacher" in said and "git pull" in said


@pytest.mark.parametrize("library, lessons", [("0.3.0", "0.3.0"), ("0.3", "0.3.0"), ("0.4.0", "0.3.0"),
                                              ("0.10.0", "0.9.1"), ("0+unknown", "0.3.0")])
def test_a_library_as_new_as_the_lessons_or_of_unknown_version_says_nothing(tmp_path, library, lessons):
    assert environment.library_behind(lesson(tmp_path, lessons), library=library) is None


def test_numbers_are_compared_as_numbers_not_as_text(tmp_path):
    assert environment.library_behind(lesson(tmp_path, "0.10.0"), library="0.9.0") is not None


def test_without_a_notebook_or_its_version_there_is_nothing_to_compare(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert environment.library_behind(library="0.0.1") is None
    assert environment.library_behind(lesson(tmp_path, None), library="0.0.1") is None
    (tmp_path / "broken.ipynb").write_text("{ not json")
    assert environment.library_behind(str(tmp_path / "broken.ipynb"), library="0.0.1") is None


def test_the_kernel_finds_its_notebook_by_the_servers_session_name(tmp_path, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", lesson(tmp_path, "999.0.0"))
    said = environment.library_behind()
    assert said is not None and f"lessons_lib {lessons_lib.__version__}" in said


def test_every_lesson_carries_the_version_it_is_released_with():
    version = load_tool("learner_release").version()
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        stamped = json.loads(path.read_text(encoding="utf-8"))["metadata"].get(environment.VERSION_KEY)
        assert stamped == version, f"{path.name}: run python tools/stamp_notebooks.py"
