"""The unseen cases of the grade come from the course's secret, and the secret from the teacher's file only.

* :func:`course_seed` derives each exercise's seed from the secret (HMAC-SHA256): one secret gives the same
  cases every time, two secrets give different ones, no unseen case is a shown one, and no seed a learner
  could guess gives the course's.
* Nothing in a learner's kernel reads a secret: ``check_hidden`` there draws its cases at random and says
  so, whatever the environment holds (the old ``LESSONS_HIDDEN_SECRET`` included).
* :func:`read_secret` refuses a file that is missing, not a file, readable by others, empty, blank or too
  short, each with what to do.
* :func:`graded_calls` reads every graded cell of the course: the checks the judge runs again.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.exercises import grading
from tests.helpers import NOTEBOOKS, solutions

WITH_UNSEEN = sorted(name for name, e in exercises.EXERCISES.items() if e.hidden is not None)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x.label == y.label and all(np.array_equal(x.args[k], y.args[k])
                                                              for k in x.args) for x, y in zip(a, b))


@pytest.mark.parametrize("name", WITH_UNSEEN)
def test_one_secret_gives_the_same_unseen_cases_two_give_different_ones_never_a_shown_one(name):
    def drawn(secret):
        return grading.hidden_cases(name, seed=grading.course_seed(secret, name))

    first, again, other = drawn("teacher A's secret, 2026"), drawn("teacher A's secret, 2026"), drawn("B's")
    assert _same(first, again) and not _same(first, other)
    shown = exercises.EXERCISES[name].cases()
    assert not any(_same([h], [c]) for h in first for c in shown), "an unseen case is never a shown one"


def test_each_exercise_has_a_seed_of_its_own_and_no_guessable_seed_gives_the_courses_cases():
    secret = "a teacher's secret that no file of the course holds"
    seeds = {name: grading.course_seed(secret, name) for name in WITH_UNSEEN}
    assert len(set(seeds.values())) == len(seeds) and all(0 <= s < 2**63 for s in seeds.values())
    course = grading.hidden_cases("my_softmax", seed=seeds["my_softmax"])
    for guess in (0, 1, 7, 42, 2026):
        assert not _same(grading.hidden_cases("my_softmax", seed=guess), course)


def test_an_empty_secret_gives_no_seed():
    with pytest.raises(grading.SecretError):
        grading.course_seed("  ", "my_softmax")


def test_in_a_learners_kernel_the_unseen_cases_are_drawn_at_random_whatever_its_environment(monkeypatch):
    monkeypatch.setenv("LESSONS_HIDDEN_SECRET", "an old config's secret")   # read by nothing now
    a, b = (grading.hidden_cases("my_scores") for _ in range(2))
    assert not _same(a, b)
    feedback = grading.check_hidden("my_scores", solutions.my_scores)
    assert feedback.passed and "drawn at random for this run" in feedback.message
    assert "drawn with this course's secret" in grading.check_hidden("my_scores", solutions.my_scores,
                                                                      seed=12345).message


def test_the_library_reads_no_secret_from_the_environment():
    import inspect

    import lessons_lib.exercises.grading as module

    assert "os.environ.get(LEAKED" not in inspect.getsource(module)
    assert "LESSONS_HIDDEN_SECRET" not in inspect.getsource(module.check_hidden)
    assert "LESSONS_HIDDEN_SECRET" not in inspect.getsource(module.hidden_cases)


# ------------------------------------------------------------------ the teacher's file
def _file(tmp_path, text: str | None, mode: int = 0o600):
    path = tmp_path / "lessons-secret"
    if text is not None:
        path.write_text(text)
        os.chmod(path, mode)
    return path


def test_a_good_secret_file_is_read_stripped(tmp_path):
    assert grading.read_secret(_file(tmp_path, "  0123456789abcdef0123\n")) == "0123456789abcdef0123"


@pytest.mark.parametrize(("text", "mode", "words"), [
    (None, 0o600, "does not exist"),
    ("", 0o600, "is empty"),
    (" \n\t \n", 0o600, "is empty"),
    ("attention26", 0o600, "11 characters long, too short to be a secret (at least 16)"),
    ("0123456789abcdef0123", 0o644, "can be read or written by other users (mode 0644)"),
    ("0123456789abcdef0123", 0o640, "(mode 0640)"),
    ("0123456789abcdef0123", 0o606, "(mode 0606)"),
])
def test_a_secret_file_that_cannot_be_trusted_is_refused_with_what_to_do(tmp_path, text, mode, words):
    path = _file(tmp_path, text, mode)
    with pytest.raises(grading.SecretError) as info:
        grading.read_secret(path)
    assert words in str(info.value) and str(path) in str(info.value)
    if mode & 0o077:  # others may have read it: a fresh secret, the old one kept aside
        assert "hub_grading.py new-secret" in str(info.value) and "unseen cases change" in str(info.value)
    else:
        assert "chmod 600" in str(info.value) or "hub_grading.py teacher" in str(info.value)


def test_a_folder_where_the_secret_file_should_be_is_refused(tmp_path):
    with pytest.raises(grading.SecretError, match="is not a file"):
        grading.read_secret(tmp_path)


# ------------------------------------------------------------------ what the graded cells run
def _graded_cells():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade"):
                yield cell["metadata"]["nbgrader"]["grade_id"], "".join(cell["source"])


def test_every_graded_cell_of_the_course_is_read_as_the_checks_it_runs():
    from lessons_lib.course.lessons import LESSONS

    cells = dict(_graded_cells())
    assert set(cells) == {f"test_{name}" for lesson in LESSONS.values() for name in lesson.points}
    for grade_id, source in cells.items():
        name = grade_id.removeprefix("test_")
        calls = grading.graded_calls(source)
        assert calls and all(answer == name for _, _, answer in calls), (grade_id, calls)
        assert [c for c, _, _ in calls][1:] in ([], ["check_hidden"])
        if name in WITH_UNSEEN:
            assert calls[-1] == ("check_hidden", name, name)
