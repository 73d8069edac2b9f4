"""Where the learner's own kernel passed a graded cell (or showed nothing in it) that the course's judge
fails, autograde (lessons_lib/exercises/autograde.py, :func:`apply_verdicts`) notes it in the cell's
metadata before the judge's verdict replaces the cell's outputs: the check was switched off in that kernel
(``ll`` rebound, the cell blanked, its error swallowed), and the class report keeps such a notebook for the
teacher (tests/tools/test_class_report_for_the_teacher.py). A kernel that failed the cell too (the honest
learner's real mistake) is not noted, unless the kernel did not show that failure (its error swallowed:
nbgrader then writes the kernel's reply in the cell) or the submission brought a ``lessons_lib`` of its
own; nor is a verdict about the judge itself; a note the submission carried is removed.
"""

from __future__ import annotations

import nbformat
import pytest

from lessons_lib.course.feedback import FAILED, NOT_ATTEMPTED, Feedback
from lessons_lib.exercises import EXERCISES
from lessons_lib.exercises.autograde import apply_verdicts
from lessons_lib.exercises.grading import (
    JUDGE_NOTE,
    KERNEL_DISAGREES,
    OWN_LIBRARY,
    integrity_note,
    read_verdict,
)
from tests.helpers.grading import verdict_message

ZEROS = EXERCISES["my_scale"].mistakes[0].key
MISTAKE = verdict_message(Feedback("my_scale", FAILED, "Likely mistake.", mistake=ZEROS))
OTHER = verdict_message(Feedback("my_scale", FAILED, "Likely mistake.",
                                 mistake=EXERCISES["my_scale"].mistakes[1].key))
UNTOUCHED = verdict_message(Feedback("my_scale", NOT_ATTEMPTED, "still raises NotImplementedError"))


def _error(evalue: str):
    return nbformat.v4.new_output("error", ename="AssertionError", evalue=evalue, traceback=[evalue])


KERNEL = {
    "passed": [],
    "blanked (no output at all)": [],
    "printed something, no error": [nbformat.v4.new_output("stream", name="stdout", text="ok\n")],
    "the same mistake": [_error(MISTAKE)],
    "another mistake": [_error(OTHER)],
    "not attempted": [_error(UNTOUCHED)],
    "an error of its own (a function deleted)": [
        nbformat.v4.new_output("error", ename="NameError", evalue="name 'my_scale' is not defined",
                               traceback=[])],
}
DISAGREES = ("passed", "blanked (no output at all)", "printed something, no error")


def _graded(outputs, metadata=None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("ll.assert_passes(ll.check_scaling(my_scale))")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_my_scale", "points": 2, "solution": False,
                                 "locked": True, "schema_version": 3}
    cell.metadata.update(metadata or {})
    cell.outputs = list(outputs)
    return nbformat.v4.new_notebook(cells=[cell])


@pytest.mark.parametrize("kernel", sorted(KERNEL))
@pytest.mark.parametrize("judged", [MISTAKE, UNTOUCHED], ids=["a mistake", "not attempted"])
def test_a_cell_the_kernel_passed_and_the_judge_failed_is_noted(kernel, judged):
    nb = _graded(KERNEL[kernel])
    assert apply_verdicts(nb, {"test_my_scale": {"passed": False, "message": judged}}) == 1
    cell = nb.cells[0]
    assert read_verdict(cell.outputs[0]["evalue"]) == read_verdict(judged), "the judge's verdict is shown"
    assert integrity_note(cell) == (KERNEL_DISAGREES if kernel in DISAGREES else None), kernel


@pytest.mark.parametrize("about_the_judge", ["checker_error", "judge_stopped"])
def test_a_verdict_about_the_judge_itself_is_not_a_disagreement(about_the_judge):
    nb = _graded([])
    message = f"my_scale: NOT YET ({about_the_judge}): the check could not run."
    apply_verdicts(nb, {"test_my_scale": {"passed": False, "message": message}})
    assert integrity_note(nb.cells[0]) is None


def test_a_note_the_submission_carried_is_removed_only_the_judge_writes_it():
    planted = {JUDGE_NOTE: {"integrity": KERNEL_DISAGREES}}
    for verdict in ({"passed": True, "message": ""}, {"passed": False, "message": MISTAKE}):
        nb = _graded([_error(MISTAKE)] if not verdict["passed"] else [], planted)
        apply_verdicts(nb, {"test_my_scale": verdict})
        assert integrity_note(nb.cells[0]) is None and JUDGE_NOTE not in nb.cells[0].metadata


def test_a_cell_both_pass_keeps_its_outputs_and_no_note():
    nb = _graded([nbformat.v4.new_output("stream", name="stdout", text="Well done.\n")])
    assert apply_verdicts(nb, {"test_my_scale": {"passed": True, "message": "my_scale: PASSED"}}) == 0
    assert nb.cells[0].outputs[0]["text"] == "Well done.\n" and integrity_note(nb.cells[0]) is None


def test_a_failure_the_kernel_did_not_show_is_noted_though_nbgrader_wrote_its_error_in():
    """``set_custom_exc`` swallowed the kernel's error: nbgrader appends the reply's error to the cell (the
    same mistake), and autograde's own step noted that the kernel showed nothing (``unshown``)."""
    nb = _graded([_error(MISTAKE)])
    apply_verdicts(nb, {"test_my_scale": {"passed": False, "message": MISTAKE}}, unshown={"test_my_scale"})
    assert integrity_note(nb.cells[0]) == KERNEL_DISAGREES


def test_a_submission_with_a_library_of_its_own_is_noted_even_where_the_kernel_agreed():
    nb = _graded([_error(MISTAKE)])
    apply_verdicts(nb, {"test_my_scale": {"passed": False, "message": MISTAKE}}, own_library=True)
    assert integrity_note(nb.cells[0]) == OWN_LIBRARY
