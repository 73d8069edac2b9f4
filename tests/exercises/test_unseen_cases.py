"""The unseen cases of grading (``grading.check_hidden``): a lookup table of the shown answers fails them,
every solution passes them and no listed mistake does, whatever the course's secret; nothing a learner can
read holds the secret. How the secret gives the seeds:
tests/exercises/test_unseen_cases_come_from_the_course_seed.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.core import attention
from lessons_lib.exercises import check_softmax, grading
from tests.helpers import load_tool, solutions
from tests.helpers.wrong_answers import UNSTABLE_SOFTMAXES, table_candidates


def test_a_lookup_table_of_the_shown_answers_passes_the_shown_cases_and_fails_the_unseen_ones():
    table = {case.args["x"].tobytes(): attention.softmax(case.args["x"])
             for case in exercises.SOFTMAX.cases()}

    def my_softmax(x):
        return table[x.tobytes()]

    assert check_softmax(my_softmax).passed
    feedback = grading.check_hidden("my_softmax", my_softmax)
    assert feedback.passed is False and feedback.mistake == "raised" and "unseen" in feedback.message


SECRETS = [f"secret {i}" for i in range(12)]


@pytest.mark.slow  # 4-15 s per exercise: several secrets, every mistake on each
@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_every_solution_passes_and_every_listed_mistake_fails_on_unseen_cases_of_any_secret(name,
                                                                                            monkeypatch):
    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")  # the same judge, faster for 12 secrets
    wrong = [candidate for _, candidate in table_candidates(exercises.EXERCISES[name])]
    wrong += list(UNSTABLE_SOFTMAXES.values()) if name == "my_softmax" else []
    for secret in SECRETS:
        seed = grading.course_seed(secret, name)
        assert grading.check_hidden(name, getattr(solutions, name), seed=seed).passed, secret
        for candidate in wrong:
            assert grading.check_hidden(name, candidate, seed=seed).passed is False, (secret, candidate)


@pytest.mark.subprocess
def test_the_installed_package_and_the_learner_copy_hold_nothing_to_compute_the_unseen_cases_from(tmp_path):
    """The cases come from the secret, which only the teacher's environment holds: every place a learner
    can read (the package's files, the learner copy) lacks it, and any seed a file could hold gives other
    cases than the course's."""
    secret = "a teacher's secret that no file holds"
    course = grading.hidden_cases("my_softmax", seed=grading.course_seed(secret, "my_softmax"))
    package = Path(importlib.util.find_spec("lessons_lib").origin).parent
    learner_release = load_tool("learner_release")
    learner_release.release(tmp_path / "learner")
    for folder in (package, tmp_path / "learner"):
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix in (".py", ".ipynb", ".md", ".txt", ".toml", ".cfg", ".json"):
                assert secret not in path.read_text(encoding="utf-8", errors="replace"), path
    for seed in (0, 1, 2026, 42):  # seeds a learner might guess: none gives the course's cases
        guess = grading.hidden_cases("my_softmax", seed=seed)
        assert not all(np.array_equal(a.args["x"], b.args["x"]) for a, b in zip(guess, course))
