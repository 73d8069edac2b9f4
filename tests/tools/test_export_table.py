"""One source of truth for public names: each module's ``__all__``; ``lessons_lib`` re-exports them all.

``lessons_lib.EXPORTS`` lists every module's ``__all__`` so that a name can load its module
on first use; tools/export_table.py writes it, these tests hold it in step with the modules
and check that ``import lessons_lib`` stays light and that the version is written once.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import lessons_lib
from tests.helpers import REPO, load_tool

export_table = load_tool("export_table")


def test_export_table_is_the_one_the_tool_writes():
    """Every public module with an ``__all__`` is in the table, with exactly its ``__all__``."""
    real = export_table.exports()
    written = {module: list(names) for module, names in lessons_lib.EXPORTS.items()}
    assert written == real, ("lessons_lib.EXPORTS is out of step with the modules' __all__: run "
                             "python tools/export_table.py --write")


def test_every_name_resolves_to_its_module_object():
    for module, names in lessons_lib.EXPORTS.items():
        real = importlib.import_module(f"lessons_lib.{module}")
        for name in names:
            assert getattr(lessons_lib, name) is getattr(real, name), f"lessons_lib.{name} vs {module}.{name}"
    assert set(lessons_lib.__all__) == {n for names in lessons_lib.EXPORTS.values() for n in names}
    assert "plot_convex_combination" in dir(lessons_lib)
    assert lessons_lib.figures is importlib.import_module("lessons_lib.figures")


def test_a_name_two_modules_export_comes_from_the_lower_layer():
    from lessons_lib.course import feedback
    from lessons_lib.quizzes import widget

    assert lessons_lib.Feedback is feedback.Feedback
    assert lessons_lib.show is widget.show  # the quiz's show, not the exercise engine's


def test_unknown_name_is_an_attribute_error():
    try:
        lessons_lib.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("no AttributeError")


@pytest.mark.subprocess
def test_import_is_light(fresh_imports):
    """``import lessons_lib`` loads neither torch nor matplotlib nor the widget stack."""
    heavy = fresh_imports["import lessons_lib"]
    assert not heavy, f"import lessons_lib also imported {sorted(heavy)}"


def test_the_version_is_written_once_in_pyproject():
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert lessons_lib.__version__ == version
    source = Path(lessons_lib.__file__).read_text(encoding="utf-8")
    written = re.findall(r"^__version__ = (.*)$", source, re.M)
    assert written == ["project.version()"], "lessons_lib must read its version, not write it"
