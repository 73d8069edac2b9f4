"""What ``pyproject.toml`` says of the course, read where a learner's environment can read it.

``pyproject.toml`` writes the course's version and its Python floor (``requires-python``) once. Imported
from a source tree (a clone, an editable install) the library reads that file: an editable install's
metadata keeps what it was installed with until the next install (``make release`` bumps the version
without one, a ``git pull`` may raise the floor). Installed without the repository (Binder, a hub's image,
Colab) it reads the ``lessons-lib`` distribution's metadata, which pip wrote from the same file
(``Version``, ``Requires-Python``). Standard library only, and it parses on old Pythons too: the
environment check must run on a Python below the floor to say so.
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path

# no __all__: these are the library's own (lessons_lib.__version__, the environment check), not ll.X names

#: the distribution pip installs the library as (pyproject.toml's ``name``)
DISTRIBUTION = "lessons-lib"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
_FLOOR = re.compile(r">=\s*(\d+)\.(\d+)")


def source_pyproject(path: Path = PYPROJECT) -> str | None:
    """The text of the source tree's ``pyproject.toml`` when the library is imported from one, else None."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    return text if re.search(rf'^name = "{DISTRIBUTION}"', text, re.M) else None


def _installed(field: str) -> str | None:
    """A field of the installed distribution's metadata (``Version``, ``Requires-Python``), or None."""
    try:
        return metadata(DISTRIBUTION).get(field)
    except PackageNotFoundError:
        return None


def version(path: Path = PYPROJECT) -> str:
    """The course's version: ``pyproject.toml``'s ``version``, else the installed metadata's."""
    text = source_pyproject(path)
    match = re.search(r'^version = "([^"]+)"', text, re.M) if text else None
    return match.group(1) if match else _installed("Version") or "0+unknown"


def python_floor(path: Path = PYPROJECT) -> tuple[int, int] | None:
    """The lowest Python the course runs on, ``(3, 11)``: ``requires-python`` of ``pyproject.toml``, else
    the installed metadata's ``Requires-Python``; None where neither can be read.

    >>> python_floor() >= (3, 11)
    True
    """
    text = source_pyproject(path)
    line = re.search(r"^requires-python\s*=\s*\"([^\"]*)\"", text, re.M) if text else None
    spec = line.group(1) if line else _installed("Requires-Python")
    match = _FLOOR.search(spec or "")
    return (int(match.group(1)), int(match.group(2))) if match else None
