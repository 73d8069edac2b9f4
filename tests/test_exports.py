"""One source of truth for public names: each module's ``__all__``; ``lessons_lib`` re-exports them all.

``lessons_lib._EXPORTS`` lists every module's ``__all__`` so that a name can load its
module on first use; these tests hold the table in step with the modules (and print the
corrected table when a module gains a name), and check that ``import lessons_lib``
stays light.
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import textwrap

import lessons_lib


def _table_line(module: str, names) -> str:
    body = ", ".join(f'"{n}"' for n in names)
    return "\n".join(textwrap.wrap(f'"{module}": ({body}{"," if len(names) == 1 else ""}),', width=104,
                                   subsequent_indent="    "))


def test_every_public_module_is_exported():
    public = {m.name for m in pkgutil.iter_modules(lessons_lib.__path__) if not m.name.startswith("_")}
    missing = sorted(public - set(lessons_lib._EXPORTS))
    assert not missing, (f"modules {missing} are not in lessons_lib._EXPORTS: add each with its __all__ "
                         f"(lessons_lib/__init__.py)")


def test_export_table_matches_each_modules_all():
    wrong = []
    for module, names in lessons_lib._EXPORTS.items():
        real = importlib.import_module(f"lessons_lib.{module}")
        assert hasattr(real, "__all__"), f"lessons_lib.{module} has no __all__: list its public names there"
        if list(names) != list(real.__all__):
            wrong.append(_table_line(module, list(real.__all__)))
    assert not wrong, ("lessons_lib._EXPORTS is out of step with the modules' __all__; replace these entries "
                       "in lessons_lib/__init__.py:\n    " + "\n    ".join(wrong))


def test_every_name_resolves_to_its_module_object():
    for module, names in lessons_lib._EXPORTS.items():
        real = importlib.import_module(f"lessons_lib.{module}")
        for name in names:
            assert getattr(lessons_lib, name) is getattr(real, name), f"lessons_lib.{name} vs {module}.{name}"
    assert set(lessons_lib.__all__) == {n for names in lessons_lib._EXPORTS.values() for n in names}
    assert "plot_convex_combination" in dir(lessons_lib)
    assert lessons_lib.plots is importlib.import_module("lessons_lib.plots")


def test_unknown_name_is_an_attribute_error():
    try:
        lessons_lib.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_import_is_light():
    """``import lessons_lib`` loads neither torch nor matplotlib nor the widget stack."""
    code = ("import sys, lessons_lib; heavy = [m for m in ('torch', 'matplotlib', 'ipywidgets', 'anywidget') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import lessons_lib also imported {out.stdout.strip()}"
