"""The unseen cases of grading (``grading.check_hidden``): drawn from the course's secret, the same for one
secret and different for two, never a shown case, fresh without a secret; a lookup table of the shown
answers fails them, every solution passes them and no listed mistake does; nothing a learner can read holds
the secret."""

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


@pytest.mark.parametrize("name", sorted(exercises.EXERCISES))
def test_two_secrets_give_different_unseen_cases_and_one_secret_the_same(name, monkeypatch):
    def drawn(secret):
        monkeypatch.setenv(grading.SECRET_VARIABLE, secret)
        return grading.hidden_cases(name)

    def same(a, b):
        return len(a) == len(b) and all(x.label == y.label and all(np.array_equal(x.args[k], y.args[k])
                                                                 for k in x.args) for x, y in zip(a, b))

    first, again = drawn("teacher A's secret"), drawn("teacher A's secret")
    other = drawn("teacher B's secret")
    assert same(first, again) and not same(first, other)
    shown = exercises.EXERCISES[name].cases()
    assert not any(same([h], [c]) for h in first for c in shown), "an unseen case is never a shown one"


def test_without_a_secret_the_unseen_cases_are_fresh_each_time_and_the_feedback_says_so(monkeypatch):
    monkeypatch.delenv(grading.SECRET_VARIABLE, raising=False)
    a, b = (grading.hidden_cases("my_scores") for _ in range(2))
    assert any(not np.array_equal(x.args["Q"], y.args["Q"]) or x.args["Q"].shape != y.args["Q"].shape
               for x, y in zip(a, b))
    feedback = grading.check_hidden("my_scores", solutions.my_scores)
    assert feedback.passed and "no course secret is set" in feedback.message
    monkeypatch.setenv(grading.SECRET_VARIABLE, "s3cret")
    assert "drawn with this course's secret" in grading.check_hidden("my_scores", solutions.my_scores).message


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
        monkeypatch.setenv(grading.SECRET_VARIABLE, secret)
        assert grading.check_hidden(name, getattr(solutions, name)).passed, secret
        for candidate in wrong:
            assert grading.check_hidden(name, candidate).passed is False, (secret, candidate)


@pytest.mark.subprocess
def test_the_installed_package_and_the_learner_copy_hold_nothing_to_compute_the_unseen_cases_from(tmp_path,
                                                                                                   monkeypatch):
    """The cases come from the secret, which only the teacher's environment holds: every place a learner
    can read (the package's files, the learner copy) lacks it, and any seed a file could hold gives other
    cases than the course's."""
    secret = "a teacher's secret that no file holds"
    monkeypatch.setenv(grading.SECRET_VARIABLE, secret)
    course = grading.hidden_cases("my_softmax")
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
