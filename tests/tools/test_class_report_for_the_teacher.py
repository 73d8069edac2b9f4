"""The class report (tools/class_report.py) as a teacher reads it: who made which mistake in a copy for the
teacher alone, integrity verdicts apart from misconceptions, the concept quiz over one group of learners,
and a bad file skipped with a line naming the learner and the file while the report finishes.

Course folders made by hand, as nbgrader lays them out (``autograded/<learner>/<lesson>/``,
``submitted/<learner>/<lesson>/concept-quiz.json``); ``tests/grading/test_class_report.py`` runs the
report on a class autograded by the real nbgrader.
"""

from __future__ import annotations

import csv
import json
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.feedback import FAILED, Feedback
from lessons_lib.exercises import EXERCISES
from lessons_lib.exercises.catalogue import LIBRARY_ANSWER, TAMPERED
from lessons_lib.exercises.grading import JUDGE_NOTE, KERNEL_DISAGREES
from lessons_lib.quizzes import concepts
from tests.helpers import REPO, load_tool
from tests.helpers.grading import graded_notebook

class_report = load_tool("class_report")
LESSON = "04_step3_scale_softmax"


def failed(name: str, key: str) -> Feedback:
    return Feedback(name, FAILED, "Likely mistake.", mistake=key)


def hand_in(course: Path, learner: str, results: dict, lesson: str = LESSON) -> Path:
    folder = course / "autograded" / learner / lesson
    folder.mkdir(parents=True)
    nbformat.write(graded_notebook(results), folder / f"{lesson}.ipynb")
    return folder / f"{lesson}.ipynb"


def quiz(course: Path, learner: str, phase: str, right: int) -> None:
    lesson = "00_start_here" if phase == "pre" else "10_review_and_paper"
    folder = course / "submitted" / learner / lesson
    folder.mkdir(parents=True, exist_ok=True)
    for i, concept in enumerate(concepts.CONCEPTS):
        correct = concept.question.correct_index
        concepts.record_answer(phase, concept.key, correct if i < right else (correct + 1) % 4, folder)


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def course(tmp_path):
    """Four learners: a misconception, an integrity verdict of each kind, a pass."""
    course = tmp_path / "course"
    axis = EXERCISES["my_softmax"].mistakes[3].key
    hand_in(course, "ana", {"my_softmax": failed("my_softmax", axis), "my_scale": None})
    hand_in(course, "ben", {"my_softmax": failed("my_softmax", TAMPERED.key), "my_scale": None})
    hand_in(course, "cy", {"my_softmax": failed("my_softmax", LIBRARY_ANSWER.key),
                           "my_scale": failed("my_scale", EXERCISES["my_scale"].mistakes[0].key)})
    hand_in(course, "dee", {"my_softmax": None, "my_scale": None})
    return course, axis


def test_the_teachers_copy_names_who_made_which_mistake_integrity_first(course, tmp_path):
    course, axis = course
    class_report.report(course, tmp_path / "out")
    private = tmp_path / "out" / class_report.TEACHER_ONLY
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    who = [(r["learner"], r["exercise"], r["outcome"], r["kind"]) for r in rows(private / "who.csv")]
    scale = EXERCISES["my_scale"].mistakes[0].key
    beside = "(its notebook: {})".format
    assert sorted(who[:4]) == [("ben", "my_scale", f"passed {beside(TAMPERED.key)}", "integrity"),
                               ("ben", "my_softmax", TAMPERED.key, "integrity"),
                               ("cy", "my_scale", f"{scale} {beside(LIBRARY_ANSWER.key)}", "integrity"),
                               ("cy", "my_softmax", LIBRARY_ANSWER.key, "integrity")]
    assert ("ana", "my_softmax", axis, "misconception") in who
    assert "do not share it" in (private / "who.md").read_text()
    for shared in ("report.md", "mistakes.csv", "concept-quiz.csv"):  # the class's copy names nobody
        text = (tmp_path / "out" / shared).read_text()
        assert not any(name in text.split() or f",{name}," in text for name in ("ana", "ben", "cy", "dee"))


def test_integrity_verdicts_and_every_verdict_of_their_notebooks_are_for_the_teacher_alone(course, tmp_path):
    """ben tampered with my_softmax and passed my_scale, cy called the library for my_softmax and made a
    mistake in my_scale: neither notebook says what its learner understood, so the class's files count
    ana's and dee's alone; the teacher's copy lists all of them (above)."""
    course, axis = course
    class_report.report(course, tmp_path / "out")
    found = {(r["exercise"], r["outcome"]): (r["kind"], r["learners"])
             for r in rows(tmp_path / "out" / "mistakes.csv")}
    assert found == {("my_softmax", axis): ("misconception", "1"), ("my_softmax", "passed"): ("passed", "1"),
                     ("my_scale", "passed"): ("passed", "2")}
    text = (tmp_path / "out" / "report.md").read_text()
    assert TAMPERED.key not in text and LIBRARY_ANSWER.key not in text
    assert EXERCISES["my_scale"].mistakes[0].key not in text, "cy's mistake beside a library answer"
    assert "**4 graded cell(s) left out** of these counts, for the teacher alone" in text
    alt = text.split("![", 1)[1].split("](mistakes.png)")[0]
    assert axis in alt and TAMPERED.key not in alt, "the chart shows misconceptions only"


def test_a_cell_the_learners_kernel_passed_and_the_judge_failed_is_for_the_teacher_not_a_misconception(
        tmp_path):
    """eli's kernel showed my_softmax passing (its check switched off there) where the judge found the axis
    mistake, and autograde noted it in the cell (tests/exercises/test_kernel_disagreement_is_noted.py):
    his "mistakes" are the placeholders of no work, for the teacher alone; ana made the same mistake in
    her kernel and the judge's, and it counts."""
    course = tmp_path / "course"
    axis, zeros = EXERCISES["my_softmax"].mistakes[3].key, EXERCISES["my_scale"].mistakes[0].key
    hand_in(course, "ana", {"my_softmax": failed("my_softmax", axis), "my_scale": None})
    path = hand_in(course, "eli", {"my_softmax": failed("my_softmax", axis),
                                   "my_scale": failed("my_scale", zeros)})
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].metadata[JUDGE_NOTE] = {"integrity": KERNEL_DISAGREES}
    nbformat.write(nb, path)
    class_report.report(course, tmp_path / "out")
    found = {(r["exercise"], r["outcome"]): (r["kind"], r["learners"])
             for r in rows(tmp_path / "out" / "mistakes.csv")}
    assert found == {("my_softmax", axis): ("misconception", "1"), ("my_scale", "passed"): ("passed", "1")}
    who = {(r["learner"], r["exercise"], r["outcome"], r["kind"])
           for r in rows(tmp_path / "out" / class_report.TEACHER_ONLY / "who.csv")}
    assert {("eli", "my_softmax", f"{axis} (its notebook: {KERNEL_DISAGREES})", "integrity"),
            ("eli", "my_scale", f"{zeros} (its notebook: {KERNEL_DISAGREES})", "integrity"),
            ("ana", "my_softmax", axis, "misconception")} <= who
    text = (tmp_path / "out" / "report.md").read_text()
    assert zeros not in text and "eli" not in text and KERNEL_DISAGREES not in text
    assert "**2 graded cell(s) left out** of these counts" in text
    alt = text.split("![", 1)[1].split("](mistakes.png)")[0]
    assert f"my_softmax {axis} (" in alt and "1 learner" in alt and "2 learners" not in alt


def test_the_concept_quiz_counts_one_group_of_learners_before_and_after(course, tmp_path):
    course, _ = course
    quiz(course, "ana", "pre", 1), quiz(course, "ana", "post", 4)
    quiz(course, "ben", "pre", 2), quiz(course, "ben", "post", 5)
    quiz(course, "cy", "pre", 5)   # before only: all five right, and not counted
    quiz(course, "dee", "post", 0)  # after only: none right, and not counted
    done = class_report.report(course, tmp_path / "out")
    found = {r["question"]: r for r in rows(tmp_path / "out" / "concept-quiz.csv")}
    # ana and ben alone: shapes right before for both (1 and 2 right), cost right before for neither
    assert found["shapes"]["pre right"] == "1.00" and found["shapes"]["post right"] == "1.00"
    assert found["cost"]["pre right"] == "0.00" and found["cost"]["post right"] == "0.50"
    assert {found[c.key]["learners"] for c in concepts.CONCEPTS} == {"2"}
    assert {found[c.key]["counted"] for c in concepts.CONCEPTS} == {"before and after"}
    assert done["quiz"]["class average before"] == "0.30" and done["quiz"]["class average after"] == "0.90"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Not counted: 1 took it before only, 1 took it after only." in report


def test_while_nobody_took_both_the_quiz_counts_those_who_took_it_before(course, tmp_path):
    course, _ = course
    quiz(course, "ana", "pre", 1), quiz(course, "ben", "pre", 0)
    class_report.report(course, tmp_path / "out")
    found = {r["question"]: r for r in rows(tmp_path / "out" / "concept-quiz.csv")}
    assert found["shapes"]["pre right"] == "0.50" and found["shapes"]["post right"] == ""
    assert found["shapes"]["counted"] == "before only" and found["shapes"]["learners"] == "2"


BAD_QUIZZES = {
    "not JSON": "{'quiz': 'concepts'",
    "empty": "",
    "answers of the wrong type": json.dumps({"quiz": "concepts", "pre": ["B", "A"]}),
    "an answer that is no record": json.dumps({"quiz": "concepts", "pre": {"shapes": "B"}}),
    "another file": json.dumps([1, 2, 3]),
}
BAD_NOTEBOOKS = {
    "not JSON": b"this is not a notebook",
    "not UTF-8": "{\"cells\": [], \"note\": \"caf\u00e9\"}".encode("latin-1"),
    "no cells": b'{"metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
}


@pytest.mark.parametrize("bad", sorted(BAD_QUIZZES))
def test_a_bad_quiz_record_is_skipped_with_a_line_naming_the_learner_and_the_file(course, tmp_path, bad):
    course, _ = course
    quiz(course, "ana", "pre", 3), quiz(course, "ben", "pre", 1)
    record = course / "submitted" / "ben" / "00_start_here" / concepts.RECORD
    record.write_text(BAD_QUIZZES[bad], encoding="utf-8")
    done = class_report.report(course, tmp_path / "out")
    assert len(done["skipped"]) == 1, done["skipped"]
    assert done["skipped"][0].startswith("skipped ben's submitted/ben/00_start_here/concept-quiz.json: ")
    found = {r["question"]: r for r in rows(tmp_path / "out" / "concept-quiz.csv")}
    assert found["shapes"]["learners"] == "1" and found["shapes"]["pre right"] == "1.00"  # ana still counted
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**1 file(s) skipped**" in report and "ben" not in report, "the class's report names no one"
    assert done["skipped"][0] in (tmp_path / "out" / class_report.TEACHER_ONLY / "who.md").read_text()


@pytest.mark.parametrize("bad", sorted(BAD_NOTEBOOKS))
def test_an_unreadable_graded_notebook_is_skipped_and_the_others_are_counted(course, tmp_path, bad):
    course, _ = course
    path = course / "autograded" / "dee" / LESSON / f"{LESSON}.ipynb"
    path.write_bytes(BAD_NOTEBOOKS[bad])
    done = class_report.report(course, tmp_path / "out")
    assert done["skipped"] == [done["skipped"][0]] and done["skipped"][0].startswith(
        f"skipped dee's autograded/dee/{LESSON}/{LESSON}.ipynb: ")
    assert done["learners"] == 3
    passed = {(r["exercise"], r["outcome"]): r["learners"] for r in rows(tmp_path / "out" / "mistakes.csv")}
    assert passed[("my_scale", "passed")] == "1"  # ana; ben's is beside his tampering, dee's file skipped


@pytest.mark.subprocess
def test_the_command_prints_each_skipped_file_and_finishes(course, tmp_path):
    course, _ = course
    (course / "autograded" / "dee" / LESSON / f"{LESSON}.ipynb").write_bytes(b"\xff\xfe not text")
    done = subprocess.run([sys.executable, str(REPO / "tools" / "class_report.py"), str(course), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"class_report: skipped dee's autograded/dee/{LESSON}/{LESSON}.ipynb: not UTF-8" in done.stderr
    assert "Traceback" not in done.stderr and (tmp_path / "out" / "report.md").is_file()


def test_checker_errors_and_a_stopped_judge_are_the_teachers_not_the_class_misconceptions(tmp_path):
    course = tmp_path / "course"
    hand_in(course, "ana", {"my_softmax": failed("my_softmax", "checker_error"), "my_scale": None})
    hand_in(course, "ben", {"my_softmax": failed("my_softmax", "judge_stopped"), "my_scale": None})
    class_report.report(course, tmp_path / "out")
    found = {(r["exercise"], r["outcome"]) for r in rows(tmp_path / "out" / "mistakes.csv")}
    assert found == {("my_scale", "passed")}
    private = tmp_path / "out" / class_report.TEACHER_ONLY
    who = {(r["learner"], r["outcome"], r["kind"]) for r in rows(private / "who.csv")}
    theirs = "not the learner's"
    assert {("ana", "checker_error", theirs), ("ben", "judge_stopped", theirs)} <= who
    assert "checker_error" not in (tmp_path / "out" / "report.md").read_text()


def test_the_quiz_report_scores_each_answer_against_the_quizs_key_not_the_records_own_flag(course, tmp_path):
    course, _ = course
    quiz(course, "ana", "pre", 1), quiz(course, "ana", "post", 1)
    record = course / "submitted" / "ana" / "10_review_and_paper" / concepts.RECORD
    data = json.loads(record.read_text())
    for answer in data["post"].values():  # every answer of lesson 10 claimed right, its letter unchanged
        answer["correct"] = True
    record.write_text(json.dumps(data))
    done = class_report.report(course, tmp_path / "out")
    assert done["quiz"]["class average after"] == done["quiz"]["class average before"] == "0.20"
