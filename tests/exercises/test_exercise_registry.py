"""The exercises as a package: each registered, exported and graded; no solutions installed with it; and the
engine's recipe for a new exercise works as its docstring writes it."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np

from lessons_lib import exercises


def test_every_exercise_is_registered_exported_and_graded():
    """One check per graded exercise of the registry (lessons_lib/course/lessons.py), each exported; every
    exercise of the engine is one of them (my_query, a value to design, has a check of its own)."""
    from lessons_lib.course.lessons import LESSONS

    graded = {name for lesson in LESSONS.values() for name in lesson.points}
    assert set(exercises.EXERCISES) <= graded, "an exercise with no points in lessons_lib/course/lessons.py"
    checks = [name for name in exercises.__all__ if name.startswith("check_")]
    assert len(checks) == len(set(checks)) == len(graded), (checks, sorted(graded))
    assert all(callable(getattr(exercises, name)) for name in checks)
    assert set(exercises.__all__) == {"Feedback", "EXERCISES", *checks}


def test_the_solutions_are_not_part_of_the_package():
    assert importlib.util.find_spec("lessons_lib.solutions") is None


def test_the_engine_recipe_for_a_new_exercise_works_as_written():
    """The example in the engine's docstring (how a later lesson adds an exercise) runs and checks."""
    doc = exercises.engine.__doc__
    block = doc[doc.index("    import numpy as np"):doc.index("Then add a test")]
    code = textwrap.dedent(block).replace("from ..core import masks", "from lessons_lib.core import masks")
    code = code.replace("from .engine import", "from lessons_lib.exercises.engine import").replace('\\"', '"')
    namespace: dict = {}
    exec(compile(code, "recipe", "exec"), namespace)
    check = namespace["check_causal_mask"]
    assert check(lambda n_queries, n_keys: np.tril(np.ones((n_queries, n_keys), bool))).passed
    assert check(lambda n_queries, n_keys: np.triu(np.ones((n_queries, n_keys), bool))).mistake == "upper"
