"""The class report (tools/class_report.py): which mistakes a class made, from nbgrader's graded notebooks.

A failed graded cell says ``my_softmax: NOT YET (wrong_axis): …`` (``assert_passes``); ``read_verdict``,
beside it in lessons_lib/exercises/grading.py, reads it back (tests/exercises/test_graded_cells.py). The
report counts, per exercise, the learners who passed, made each named mistake or did not attempt it,
and compares the concept quiz before and after (normalised gain). First on a hand-made course folder
(exact counts, fast: `make check`); then (``make test-grading``, marked ``grading``) on submissions made the
way tests/grading/test_nbgrader_pipeline.py makes them, autograded by the real nbgrader.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.feedback import FAILED, NOT_ATTEMPTED, Feedback
from lessons_lib.exercises import EXERCISES
from lessons_lib.exercises.grading import KERNEL_DISAGREES, OWN_LIBRARY
from lessons_lib.quizzes import concepts
from tests.helpers import REPO, load_tool
from tests.helpers.grading import graded_notebook

class_report = load_tool("class_report")




def mistake_of(name: str, index: int = 0) -> Feedback:
    key = EXERCISES[name].mistakes[index].key
    return Feedback(name, FAILED, "Likely mistake.", mistake=key)


def _write(course: Path, learner: str, lesson: str, results: dict) -> None:
    folder = course / "autograded" / learner / lesson
    folder.mkdir(parents=True)
    nbformat.write(graded_notebook(results), folder / f"{lesson}.ipynb")


def _rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_report_counts_each_outcome_per_exercise_and_the_concept_quizs_gain(tmp_path):
    course, lesson = tmp_path / "course", "04_step3_scale_softmax"
    axis = EXERCISES["my_softmax"].mistakes[3].key
    _write(course, "ana", lesson, {"my_softmax": mistake_of("my_softmax", 3), "my_scale": None})
    _write(course, "ben", lesson, {"my_softmax": mistake_of("my_softmax", 3),
                                   "my_scale": mistake_of("my_scale")})
    _write(course, "eva", lesson, {"my_softmax": Feedback("my_softmax", NOT_ATTEMPTED, "still raises"),
                                   "my_scale": None})
    cell = graded_notebook({"my_scale": None})  # a learner who deleted the function: NameError, no verdict
    cell.cells[0].outputs = [nbformat.v4.new_output("error", ename="NameError", evalue="name 'my_scale' is "
                                                    "not defined", traceback=[])]
    (course / "autograded" / "kim" / "03_step2_scores").mkdir(parents=True)
    nbformat.write(cell, course / "autograded" / "kim" / "03_step2_scores" / "03_step2_scores.ipynb")
    keys = [c.key for c in concepts.CONCEPTS]
    for learner, pre_right, post_right in (("ana", 1, 4), ("ben", 2, 5), ("eva", 0, 0)):
        for phase, lesson_id, right in (("pre", "00_start_here", pre_right), ("post", "10_review_and_paper",
                                                                               post_right)):
            folder = course / "submitted" / learner / lesson_id
            folder.mkdir(parents=True, exist_ok=True)
            for i, concept in enumerate(concepts.CONCEPTS):
                correct = concept.question.correct_index
                pick = correct if i < right else (correct + 1) % len(concept.question.options)
                concepts.record_answer(phase, keys[i], pick, folder)

    done = class_report.report(course, tmp_path / "out")
    assert done["learners"] == 4
    rows = {(r["exercise"], r["outcome"]): r for r in _rows(tmp_path / "out" / "mistakes.csv")}
    assert rows[("my_softmax", axis)]["learners"] == "2" and rows[("my_softmax", axis)]["share"] == "0.67"
    assert rows[("my_softmax", axis)]["what the learner read"] == EXERCISES["my_softmax"].mistakes[3].title
    assert rows[("my_softmax", "not attempted")]["learners"] == "1"
    assert rows[("my_scale", "passed")]["learners"] == "2"
    assert rows[("my_scale", EXERCISES["my_scale"].mistakes[0].key)]["learners"] == "1"
    assert rows[("my_scale", "error")]["learners"] == "1" and rows[("my_scale", "error")]["share"] == "0.25"
    # before: (1 + 2 + 0) / 15 = 0.2; after: (4 + 5 + 0) / 15 = 0.6; gain (0.6 - 0.2) / 0.8 = 0.5
    summary = done["quiz"]
    assert summary == {"learners with both": 3, "class average before": "0.20", "class average after": "0.60",
                       "normalised gain": "0.50"}
    text = (tmp_path / "out" / "report.md").read_text()
    assert "normalised gain ⟨g⟩ = 0.50" in text and "![Bar chart of the misconceptions" in text
    assert f"my_softmax {axis}" in text.split("![", 1)[1].split("](mistakes.png)")[0], "alt text names it"
    assert (tmp_path / "out" / "mistakes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    quiz = {r["question"]: r for r in _rows(tmp_path / "out" / "concept-quiz.csv")}
    assert quiz["shapes"]["pre right"] == "0.67" and quiz["cost"]["post right"] == "0.33"


@pytest.mark.subprocess
def test_a_course_folder_not_yet_autograded_is_refused_in_words(tmp_path):
    result = subprocess.run([sys.executable, str(REPO / "tools" / "class_report.py"), str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "run nbgrader autograde first" in result.stderr


# ------------------------------------------------------------------ nbgrader's real pipeline


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class of four through nbgrader (generate, autograde), handed in as the students of
    tests/grading/test_nbgrader_pipeline.py are (``tests/helpers/grading.py``: its ``submit``, planted
    mistakes and partial student), on lessons 03 and 04; and each learner's concept quiz, before and
    after, recorded as the widget records it."""
    from tests.helpers import grading

    course = tmp_path_factory.mktemp("class")
    grading.make_course(course)  # the course's judge grades it, as a teacher's course (docs/classroom.md)
    lessons = ["03_step2_scores", "04_step3_scale_softmax"]
    for lesson in lessons:
        (course / "source" / lesson).mkdir(parents=True)
        (course / "source" / lesson / f"{lesson}.ipynb").write_bytes((REPO / "notebooks" / f"{lesson}.ipynb")
                                                                      .read_bytes())
    grading.nbgrader(course, "generate_assignment", "*", "--force")
    plan = {"right": {"my_scores": "right", "my_softmax": "right", "my_scale": "right"},
            "mistaken": {"my_scores": "mistake", "my_softmax": "mistake", "my_scale": "mistake"},
            "partial": {"my_scores": "right", **grading.PARTIAL["04_step3_scale_softmax"]},
            "second": {"my_scores": "mistake", "my_softmax": "right", "my_scale": "mistake"}}
    for student, wanted in plan.items():
        for lesson in lessons:
            grading.submit(course, student, lesson, {n: wanted[n] for n in grading.POINTS[lesson]})
        grading.nbgrader(course, "autograde", "*", f"--student={student}", "--create")
        for phase, lesson, right in (("pre", "00_start_here", 1), ("post", "10_review_and_paper", 4)):
            folder = course / "submitted" / student / lesson
            folder.mkdir(parents=True)
            for i, concept in enumerate(concepts.CONCEPTS):
                right_one = concept.question.correct_index
                pick = right_one if i < right else (right_one + 1) % 4
                concepts.record_answer(phase, concept.key, pick, folder)
    return course, plan, grading


@pytest.mark.grading
def test_the_report_of_a_class_graded_by_nbgrader_counts_each_learners_named_mistake(graded_class, tmp_path):
    course, plan, grading = graded_class
    done = subprocess.run([sys.executable, str(REPO / "tools" / "class_report.py"), str(course),
                           "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    counts = {(r["exercise"], r["outcome"]): int(r["learners"]) for r in _rows(tmp_path / "mistakes.csv")}
    for name in ("my_scores", "my_softmax", "my_scale"):
        planted = grading.PLANTED[name][2] or grading.named_mistake(name, EXERCISES)
        expected = {"passed": sum(w[name] == "right" for w in plan.values()),
                    planted: sum(w[name] == "mistake" for w in plan.values()),
                    "not attempted": sum(w[name] == "untouched" for w in plan.values())}
        got = {outcome: n for (exercise, outcome), n in counts.items() if exercise == name}
        assert got == {k: v for k, v in expected.items() if v}, (name, got)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["learners with both"] == 4 and summary["normalised gain"] == "0.75"  # 0.2 -> 0.8


#: The ways of no work of tests/grading/test_gaming_scores_zero.py that the judge scores 0 without naming
#: tampering: placeholder answers (zeros) behind graded cells switched off in the learner's own kernel
#: (``ll`` rebound, the cells blanked, their errors swallowed, a ``lessons_lib`` of one's own).
SWITCHED_OFF = ("rebind_ll", "blank_graded_cells", "swallow_errors", "fake_library")


@pytest.mark.grading
def test_no_work_behind_graded_cells_switched_off_in_the_kernel_is_the_teachers_not_a_misconception(tmp_path):
    """Lesson 04's exercises handed in through the real nbgrader by the learners of :data:`SWITCHED_OFF`,
    by one who hands in the same zeros in the open (their kernel fails them too) and by one with the
    planted mistakes: the class's files count the last two alone; the teacher's copy lists the others'
    verdicts as integrity (their kernel passed, or showed nothing in, what the judge failed)."""
    from tests.helpers import grading

    course, lesson, assignment = tmp_path / "course", "04_step3_scale_softmax", "lesson04"
    grading.make_course(course)
    (course / "source" / assignment).mkdir(parents=True)
    nbformat.write(grading.gaming_source([lesson]), course / "source" / assignment / f"{assignment}.ipynb")
    grading.nbgrader(course, "generate_assignment", assignment, "--force")
    teacher = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    zeros = grading.STRATEGIES["fake_library"][0]  # the fake library's answers: zeros of the right shape
    for strategy in SWITCHED_OFF:
        grading.submit_gaming(course, strategy, grading.STRATEGIES[strategy][0], assignment)
    fake = course / "submitted" / "fake_library" / assignment / "lessons_lib"
    fake.mkdir()
    (fake / "__init__.py").write_text(grading.FAKE_LIBRARY)
    grading.submit_gaming(course, "zeros", zeros, assignment)
    grading.submit_gaming(course, "mistaken", lambda name: grading.planted_mistake(
        name, grading.worked_solution(teacher, name)), assignment)
    grading.nbgrader(course, "autograde", assignment, "--create")

    class_report.report(course, tmp_path / "out")
    who = {(r["learner"], r["exercise"]): (r["outcome"], r["kind"])
           for r in _rows(tmp_path / "out" / class_report.TEACHER_ONLY / "who.csv")}
    names = list(grading.POINTS[lesson])
    for strategy in SWITCHED_OFF:
        note = OWN_LIBRARY if strategy == "fake_library" else KERNEL_DISAGREES
        for name in names:
            outcome, kind = who[(strategy, name)]
            assert kind == "integrity" and f"(its notebook: {note})" in outcome, (strategy, name, outcome)
    counts = {(r["exercise"], r["outcome"]): r["learners"] for r in _rows(tmp_path / "out" / "mistakes.csv")}
    expected = Counter()
    for learner in ("zeros", "mistaken"):
        for name in names:
            outcome, kind = who[(learner, name)]
            assert kind == "misconception", (learner, name, outcome)
            expected[(name, outcome)] += 1
    assert counts == {key: str(n) for key, n in expected.items()}
    planted = {name: grading.PLANTED[name][2] or grading.named_mistake(name, EXERCISES) for name in names}
    assert {name: who[("mistaken", name)][0] for name in names} == planted
