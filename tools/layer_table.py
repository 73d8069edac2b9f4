"""The table of the library's layers, written from one source wherever it is shown.

Each layer says what it holds in the first paragraph of its own docstring: ``lessons_lib/_checks.py``
and each package's ``__init__.py`` (``lessons_lib/core/__init__.py``: "The formulas in numpy, ...").
The order of the layers is ``lessons_lib.LAYERS``, lowest first. This tool writes that table, a row per
layer in that order, into the three places that show it:

* ``README.md`` and ``CONTRIBUTING.md``, as a Markdown table between ``<!-- layers:begin -->`` and
  ``<!-- layers:end -->``;
* the docstring of ``lessons_lib/__init__.py`` (``help(lessons_lib)``), between ``.. layers:begin`` and
  ``.. layers:end``.

A layer's description is changed in its docstring, then ``python tools/layer_table.py --write``;
``tests/docs/test_architecture.py`` fails while a copy differs, and while a description leaves out a
module of its folder.

Usage: python tools/layer_table.py [--write]
"""

from __future__ import annotations

import argparse
import ast
import re
import textwrap
from pathlib import Path

from conventions import ROOT, replace_block

PACKAGE = ROOT / "lessons_lib"
MARKDOWN = ("<!-- layers:begin -->", "<!-- layers:end -->")
DOCSTRING = (".. layers:begin", ".. layers:end")
#: the files that show the table, and the markers it goes between
SHOWN_IN = {"README.md": MARKDOWN, "CONTRIBUTING.md": MARKDOWN, "lessons_lib/__init__.py": DOCSTRING}
CODE = re.compile(r"``(.+?)``")  # reStructuredText's code, which Markdown writes in single backticks


def layers() -> list[str]:
    """The layers' folders and modules, lowest first: ``["_checks", "core", "lab", ...]``."""
    from lessons_lib import LAYERS

    return [name for layer in LAYERS for name in layer]


def layer_file(name: str, package: Path = PACKAGE) -> Path:
    """Where layer ``name`` describes itself: its package's ``__init__.py``, or the module itself."""
    folder = package / name
    return folder / "__init__.py" if folder.is_dir() else package / f"{name}.py"


def where(name: str, package: Path = PACKAGE) -> str:
    """``core/`` for a package, ``_checks.py`` for a module."""
    return f"{name}/" if (package / name).is_dir() else f"{name}.py"


def description(name: str, package: Path = PACKAGE) -> str:
    """The first paragraph of layer ``name``'s docstring, on one line."""
    doc = ast.get_docstring(ast.parse(layer_file(name, package).read_text(encoding="utf-8"))) or ""
    first = doc.strip().split("\n\n")[0]
    if not first:
        raise ValueError(f"{layer_file(name, package).relative_to(package.parent)} has no docstring: its "
                         f"first paragraph is the layer's row in the table of layers")
    return " ".join(first.split())


def rows(package: Path = PACKAGE) -> list[tuple[str, str]]:
    """``(where, what)`` for each layer, lowest first."""
    return [(where(name, package), description(name, package)) for name in layers()]


def as_markdown(text: str) -> str:
    """reStructuredText's ````code```` in Markdown's single backticks."""
    return CODE.sub(r"`\1`", text)


def markdown_table(package: Path = PACKAGE) -> str:
    """The table in Markdown, paths from the repository root, ``code`` in single backticks."""
    lines = ["| where | what |", "|---|---|"]
    lines += [f"| `lessons_lib/{place}` | {as_markdown(what)} |" for place, what in rows(package)]
    return "\n".join(lines)


def docstring_table(package: Path = PACKAGE) -> str:
    """The table as a reStructuredText definition list, for the package's docstring."""
    return "\n".join(f"``{place}``\n" + textwrap.fill(what, width=100, initial_indent="    ",
                                                      subsequent_indent="    ")
                     for place, what in rows(package))


def table_for(path: str, package: Path = PACKAGE) -> str:
    return docstring_table(package) if SHOWN_IN[path] == DOCSTRING else markdown_table(package)


def written(path: str, root: Path = ROOT) -> str:
    """What ``path`` shows between its markers now."""
    begin, end = SHOWN_IN[path]
    text = (root / path).read_text(encoding="utf-8")
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"{path} needs the markers {begin} and {end}, once each")
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def write(root: Path = ROOT) -> list[str]:
    """Write the table into every file that shows it; return the files changed."""
    changed = []
    for path, (begin, end) in SHOWN_IN.items():
        text = (root / path).read_text(encoding="utf-8")
        new = replace_block(text, begin, end, "\n" + table_for(path, root / "lessons_lib") + "\n", where=path)
        if new != text:
            (root / path).write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the table into " + ", ".join(SHOWN_IN))
    args = parser.parse_args(argv)
    if not args.write:
        print(markdown_table())
        return 0
    changed = write()
    print(f"wrote the table of layers into {', '.join(changed)}" if changed else "the table is current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
