"""nbgrader's autograde with the course's judge: a graded cell scores only when the learner's kernel and a
judge outside it both pass it, and no learner's process ever holds the course's secret.

In the course's ``nbgrader_config.py`` (docs/classroom.md; ``tools/hub_grading.py teacher`` writes it)::

    from lessons_lib.exercises.autograde import autograde_preprocessors

    c.Autograde.autograde_preprocessors = autograde_preprocessors()
    c.JudgedExecute.secret_file = "~/.lessons-secret"

:class:`JudgedExecute` takes the place of nbgrader's ``Execute`` step (the rest of nbgrader's steps stay as
they are) and, for each submission:

1. reads the course's secret from the teacher's file (:func:`~.grading.read_secret`); a file that is
   missing, empty, blank, too short or readable by others stops grading with what to do, and so does a
   secret found in the environment, which every learner's kernel would inherit and could print;
2. runs the notebook in a fresh kernel, as nbgrader does, with :data:`~.grading.JUDGE_VARIABLE` set (a
   graded cell that runs under autograde without it says the judge is missing, instead of grading);
3. sends the submission's answer cells and graded cells, and for each exercise with unseen cases only its
   seed (:func:`~.grading.course_seed`, derived here from the secret), to the judge
   (:mod:`.judge`: a fresh Python that never runs the learner's code itself);
4. puts each graded cell the judge does not pass in the form nbgrader scores as 0: its error, the judge's
   one-line verdict (``my_scale: NOT YET (tampered): …``), which the feedback page and the class report read;
5. removes the secret from every output (:func:`redact`), and says so in the log: the kernel runs as the
   teacher, so a submission's code can read the secret's file; only another account for autograde keeps
   the file itself out of its reach (docs/classroom.md).

A graded cell the kernel failed keeps its own error: the grade is the kernel's *and* the judge's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Integer, Unicode

from .grading import (
    JUDGE_VARIABLE,
    LEAKED_VARIABLE,
    SECRET_FILE,
    SecretError,
    course_seed,
    graded_calls,
    read_secret,
)

__all__ = ["JudgedExecute", "autograde_preprocessors", "JudgeError", "run_judge", "redact", "REDACTED"]


class JudgeError(RuntimeError):
    """The judge itself could not give its verdicts (not the learner's doing): grading stops, saying why."""


class JudgedExecute(Execute):
    """nbgrader's ``Execute``, then the course's judge; the secret read here, never passed to a kernel."""

    secret_file = Unicode(SECRET_FILE, help="The teacher's file holding the course's secret for the "
                                            "exercises' unseen cases (readable by its owner only)."
                          ).tag(config=True)
    judge_timeout = Integer(900, help="Seconds the judge may take for one notebook (each case of each "
                                      "exercise has its own time limit besides).").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        secret = read_secret(self.secret_file)
        _refuse_secret_in_environment(secret)
        os.environ[JUDGE_VARIABLE] = "on"
        try:
            nb, resources = super().preprocess(nb, resources, km=km)
        finally:
            os.environ.pop(JUDGE_VARIABLE, None)
        folder = ((resources or {}).get("metadata") or {}).get("path") or None
        verdicts = run_judge(_judged_cells(nb), _seeds(nb, secret), folder, self.judge_timeout)
        failed = _apply(nb, verdicts)
        self.log.info("the course's judge: %d graded cell(s), %d not passed", len(verdicts), failed)
        if redact(nb, secret):
            self.log.warning("this submission's outputs held the course's secret (its code read %s, which "
                             "autograde's kernel can, running as you): removed from its outputs and "
                             "feedback; make a new secret before the next lesson is graded "
                             "(docs/classroom.md)",
                             self.secret_file)
        return nb, resources


def autograde_preprocessors() -> list:
    """nbgrader's own autograde steps, with :class:`JudgedExecute` in the place of ``Execute``."""
    from nbgrader.converters.autograde import Autograde

    steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    if Execute not in steps:
        raise JudgeError("this nbgrader's autograde has no Execute step for the course's judge to take the "
                         "place of: use the nbgrader of binder/requirements.txt")
    return [JudgedExecute if step is Execute else step for step in steps]


def _refuse_secret_in_environment(secret: str) -> None:
    """Every kernel autograde starts inherits this process's environment: the secret must not be in it."""
    named = [name for name, value in os.environ.items() if name == LEAKED_VARIABLE or secret in value]
    if named:
        raise SecretError(f"the environment holds the course's secret ({', '.join(sorted(named))}), where "
                          "every learner's kernel inherits it and a submission can print it: remove the "
                          "lines of nbgrader_config.py (or of your shell) that set it; the course's judge "
                          "reads the secret file itself (docs/classroom.md, Grading with nbgrader).")


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) if cell.get("cell_type") == "code" else {}


def _judged_cells(nb) -> list[dict]:
    """The answer cells (nbgrader's solution cells) and the graded cells, in order, for the judge."""
    cells = []
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if meta.get("solution") and not meta.get("grade"):
            cells.append({"source": cell.source, "answer": True})
        elif meta.get("grade") and meta.get("grade_id") and graded_calls(cell.source):
            cells.append({"source": cell.source, "grade_id": meta["grade_id"]})
    return cells


def _seeds(nb, secret: str) -> dict[str, int]:
    """The seed of the unseen cases of each exercise a graded cell checks on them (the secret stays here)."""
    names = {unseen for cell in nb.cells if _nbgrader(cell).get("grade")
             for _, unseen, _ in graded_calls(cell.source) if unseen}
    return {name: course_seed(secret, name) for name in sorted(names)}


def run_judge(cells: list[dict], seeds: dict[str, int], folder: str | None = None,
              timeout: float = 900) -> dict[str, dict]:
    """The judge's verdicts (:func:`~.judge.judge`) from a fresh Python in ``folder`` (the submission's, as
    its kernel had): ``grade_id -> {"passed", "message"}``. A judge stopped by a signal (what a learner's
    code could do to it) fails every cell it was to judge; a judge that fails otherwise stops grading."""
    if not any("grade_id" in cell for cell in cells):
        return {}
    env = {name: value for name, value in os.environ.items() if name != JUDGE_VARIABLE}
    try:
        done = subprocess.run([sys.executable, "-P", "-m", "lessons_lib.exercises.judge"], input=json.dumps(
            {"cells": cells, "seeds": seeds}), capture_output=True, text=True, cwd=folder, env=env,
            timeout=timeout)
    except subprocess.TimeoutExpired:
        raise JudgeError(f"the course's judge took more than {timeout:g} s for one notebook "
                         "(c.JudgedExecute.judge_timeout)") from None
    if done.returncode < 0:
        return {cell["grade_id"]: {"passed": False, "message": _stopped(cell, -done.returncode)}
                for cell in cells if "grade_id" in cell}
    try:
        if done.returncode != 0:
            raise ValueError(done.stderr[-2000:])
        return json.loads(done.stdout)["verdicts"]
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"the course's judge failed ({exc})") from None


def _stopped(cell: dict, signal_number: int) -> str:
    name = next((answer for _, _, answer in graded_calls(cell["source"])), "the exercise")
    return (f"{name}: NOT YET (judge_stopped): the grade's judge was stopped (signal {signal_number}) while "
            "it ran this notebook's answer cells, so none of them could be graded: code in an answer cell "
            "must not stop other processes.")


#: What stands in a submission's outputs where the course's secret was.
REDACTED = "[the course's secret, removed by the judge]"


def redact(nb, secret: str) -> int:
    """Replace the course's secret in every output of ``nb`` (text, data, tracebacks, the judge's verdicts);
    how many outputs held it. The learner's kernel runs as the teacher and can read the secret's file: what
    it printed must not reach the feedback page."""
    def clean(value):
        if isinstance(value, str):
            return value.replace(secret, REDACTED)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return type(value)({k: clean(v) for k, v in value.items()})
        return value

    found = 0
    for cell in nb.cells:
        for i, output in enumerate(cell.get("outputs", [])):
            if secret in json.dumps(output):
                cell.outputs[i] = clean(output)
                found += 1
    return found


def _apply(nb, verdicts: dict[str, dict]) -> int:
    """Give each graded cell the judge did not pass the judge's verdict as its error (nbgrader scores a
    graded cell with an error 0, and its feedback page shows the one line); how many."""
    failed = 0
    for cell in nb.cells:
        verdict = verdicts.get(_nbgrader(cell).get("grade_id"))
        if verdict is None or verdict.get("passed"):
            continue
        message = " ".join(str(verdict.get("message", "")).split())
        cell.outputs = [new_output("error", ename="AssertionError", evalue=message,
                                   traceback=[f"AssertionError: {message}"])]
        failed += 1
    return failed
