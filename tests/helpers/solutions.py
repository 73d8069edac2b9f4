"""The exercises' worked solutions, read from the source notebooks: one source of truth.

Each exercise cell of ``notebooks/NN_*.ipynb`` holds its worked solution between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` (the learner copy, tools/learner_release.py,
replaces it). The tests import this module to prove that each check passes the very solution a
teacher shows, written the way a learner writes it (a few lines of numpy, not a call into the
library's answer): ``solutions.my_softmax`` is the function defined in notebook 04's exercise cell. The
cells run with ``np`` and ``ll`` as the notebook and nbgrader's judge give them: an exercise may ask for a
tool of an earlier lesson (lesson 12's ``my_rope_step`` turns with lesson 11's ``ll.rope``; its exercise
is the positions).

Nothing here is installed with ``lessons_lib``: the checks compare a learner's answer with the
library's reference functions, so a learner's copy works without any solutions.
"""

from __future__ import annotations

import math

import nbformat
import numpy as np

import lessons_lib as ll
from tests.helpers import NOTEBOOKS

BEGIN = "### BEGIN SOLUTION"


def _exercise_cells():
    """(notebook name, source) of every code cell that defines a function with a solution region."""
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and BEGIN in cell.source and cell.source.lstrip().startswith("def "):
                yield path.name, cell.source


def _load() -> dict:
    functions: dict = {}
    for notebook, source in _exercise_cells():
        namespace = {"np": np, "math": math, "ll": ll}     # as the grade's judge runs them
        exec(compile(source, f"{notebook} (exercise cell)", "exec"), namespace)
        for name, value in namespace.items():
            if name.startswith("my_") and callable(value):
                if name in functions:
                    raise RuntimeError(f"{name} is defined in two notebooks' exercise cells")
                value.__notebook__ = notebook
                functions[name] = value
    return functions


_FUNCTIONS = _load()
globals().update(_FUNCTIONS)
__all__ = sorted(_FUNCTIONS)
