"""The export table of ``lessons_lib/__init__.py``: every module's ``__all__``, by layer.

``import lessons_lib as ll; ll.X`` loads the module of ``X`` on first use, so the package
must know, without importing anything heavy, which module holds each public name: that is
the table between the markers ``# exports:begin`` and ``# exports:end``. This tool imports
every module of the library (torch too), reads its ``__all__`` and prints the table;
``--write`` puts it in place. ``tests/tools/test_export_table.py`` fails when the table is stale.

Modules are listed layer by layer (``lessons_lib.LAYERS``), so a name that two modules export (the
``exercises`` package re-exports ``course.feedback.Feedback``) is taken from the lower layer.

Usage: python tools/export_table.py [--write]
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import textwrap

from conventions import ROOT, replace_block

INIT = ROOT / "lessons_lib" / "__init__.py"
BEGIN, END = "# exports:begin", "# exports:end"
#: modules whose ``__all__`` is for the library's own lesson modules, not for learners: the exercise
#: engine and its pieces (its ``run``, ``show`` and ``Case`` would shadow the quizzes' ``show``), and the
#: grade's judge, its nbgrader step, which autograde runs (the latter imports nbgrader), and the sandbox
#: both run a submission's code in
INTERNAL = ("exercises.engine", "exercises.runner", "exercises.outcome", "exercises.child",
            "exercises.processes", "exercises.wire", "exercises.watch", "exercises.mistakes",
            "exercises.messages", "exercises.catalogue", "exercises.judge",
            "exercises.autograde", "exercises.sandbox")


def public_modules() -> list[str]:
    """Every public module of lessons_lib ("core.attention", "figures.live", ...), layer by layer
    (``lessons_lib.LAYERS``, lowest first)."""
    import lessons_lib

    layers = [name for layer in lessons_lib.LAYERS for name in layer]
    names = [m.name.removeprefix("lessons_lib.")
             for m in pkgutil.walk_packages(lessons_lib.__path__, "lessons_lib.")]
    names = [n for n in names if not any(part.startswith("_") for part in n.split("."))]
    return sorted((n for n in names if n.split(".")[0] in layers and n not in INTERNAL),
                  key=lambda n: (layers.index(n.split(".")[0]), n))


def exports() -> dict[str, list[str]]:
    """module -> its ``__all__``, for every public module that has one."""
    table = {}
    for name in public_modules():
        module = importlib.import_module(f"lessons_lib.{name}")
        if hasattr(module, "__all__"):
            table[name] = list(module.__all__)
    return table


def table_text(table: dict[str, list[str]]) -> str:
    lines = [BEGIN, "EXPORTS: dict[str, tuple[str, ...]] = {"]
    for module, names in table.items():
        body = ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "")
        lines += textwrap.wrap(f'"{module}": ({body}),', width=106, initial_indent="    ",
                               subsequent_indent="        ")
    return "\n".join([*lines, "}", END])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the table into lessons_lib/__init__.py")
    args = parser.parse_args(argv)
    text = table_text(exports())
    if not args.write:
        print(text)
        return 0
    init = INIT.read_text(encoding="utf-8")
    init = replace_block(init, BEGIN, END, text, where=str(INIT.relative_to(ROOT)), keep_markers=False)
    INIT.write_text(init, encoding="utf-8")
    print(f"wrote the export table of {INIT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
