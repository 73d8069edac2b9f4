"""The grade's own judge: a submission's answer cells checked in a process its notebook never touched.

nbgrader grades a test cell by whether it raised in the learner's kernel, and everything in that kernel is
the learner's to change: a cell before the graded one can rebind ``ll`` or ``ll.assert_passes``, swap the
judge's comparisons, or rewrite the graded cell before it runs. So autograde (:mod:`.autograde`) asks this
judge as well, and a graded cell passes only when both agree. The judge is a fresh Python::

    python -m lessons_lib.exercises.judge < request.json > verdicts.json

with an untouched library, in which **no learner code ever runs**: each learner function exists only
inside the forked child that runs one case (:class:`AnswerCells`: the submission's answer cells, the
ones nbgrader marks as solutions, executed there with ``np`` and ``ll`` as a lesson's first cell gives
them, never here), and comes back as data (:mod:`.runner`, :mod:`.wire`). The judge runs what each graded
cell runs (:func:`~.grading.graded_calls`): the check the cell names on the cases shown and, where the
cell has it, :func:`~.grading.check_hidden` on the unseen cases of the seed autograde derived for that
exercise from the course's secret (the secret itself never reaches this process), and answers with the
graded cell's one-line verdict.

The request: ``{"cells": [{"source": ..., "answer": bool, "grade_id": ...}, ...], "seeds": {name: int}}``
(the notebook's answer and graded cells, in order); the answer: ``{"verdicts": {grade_id: {"passed":
bool, "message": one line}}}`` for each graded cell whose checks are the course's.

Autograde starts the judge in the course's sandbox (:mod:`.sandbox`: read-only files, no secret file, no
network, nothing left running, not the grader's identity), so a learner's code in its children can touch
nothing but its own run. In each child the exercise's own answers are absent
(:func:`_put_answers_out_of_reach`), and the verdicts quote no learner's exception message. The judge keeps
its own output out of the children's reach and is not open to inspection (Linux: not dumpable).
"""

from __future__ import annotations

import ast
import ctypes
import json
import linecache
import os
import sys

__all__ = ["AnswerCells", "judge", "main"]

_SETPROFILE, _GETPROFILE = sys.setprofile, sys.getprofile  # captured: the cells may rebind sys's


class AnswerCells:
    """A learner's answer (a function, or lesson 01's value) defined by a submission's answer cells: built
    only where it is called, in the check's forked child, by executing the cells there (each as the
    kernel would: one that raises leaves the names the others define).

    Calling it runs ``name`` from those cells on the arguments; :meth:`value` is the value ``name`` holds.
    """

    def __init__(self, cells: list[str], name: str, value: bool = False):
        self.cells, self.name, self.is_value = tuple(cells), name, value

    @property
    def learner_files(self) -> tuple[str, ...]:
        """The names the cells' code is compiled under (tracebacks name the learner's line by them)."""
        return tuple(f"<answer cell {i + 1}>" for i in range(len(self.cells)))

    def define(self) -> dict:
        """Execute the cells, in order, in a namespace of their own with ``np`` and ``ll``; return it. Runs
        learner code: only ever in a child process of the check."""
        import numpy as np

        import lessons_lib as ll

        from .child import LibraryAnswerAbsent

        _put_answers_out_of_reach(self.name)
        namespace: dict = {"__name__": "__main__", "np": np, "ll": ll}
        self.failure: BaseException | None = None
        for filename, source in zip(self.learner_files, self.cells):
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            try:
                exec(compile(source, filename, "exec"), namespace)
            except BaseException as exc:  # a cell that raises: the kernel goes on to the next one too
                # (the library's answer reached for, absent here, explains more than an untouched cell)
                self.failure = exc if isinstance(exc, LibraryAnswerAbsent) else self.failure or exc
        return namespace

    def _answer(self):
        hook = _GETPROFILE()
        _SETPROFILE(None)  # the cells' own top-level code is not the function the check watches
        try:
            namespace = self.define()
        finally:
            _SETPROFILE(hook)
        if self.name not in namespace:
            raise self.failure or NameError(f"name '{self.name}' is not defined: no answer cell defines it")
        return namespace[self.name]

    def __call__(self, *args):
        """``name(*args)``; for a value (``value=True``, lesson 01's query), the value itself."""
        answer = self._answer()
        return answer if self.is_value else answer(*args)

    def function_source(self) -> str | None:
        """The source of the ``def`` of ``name`` in the cells (the last one), read without running them."""
        found = None
        for source in self.cells:
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == self.name:
                    found = ast.get_source_segment(source, node)
        return found


def _put_answers_out_of_reach(name: str) -> None:
    """In the child about to run a learner's code: exercise ``name``'s answers (its ``library_answers``,
    ``reference`` and ``formula``: ``ll.rope``, ``lessons_lib.core.position.rope``) are absent, each function
    its own stand-in that names ``library_answer`` however it is reached (a module's name, the exercise's own
    fields, a thread of any kind, a ``functools.partial``, ``map``, ``gc``): :func:`~.child.absent_answers`.
    The judge's own process, which computes the expected answers with the reference, keeps them whole."""
    from lessons_lib.exercises import EXERCISES

    from .child import absent_answers
    from .engine import shown_name

    exercise = EXERCISES.get(name)
    if exercise is not None:
        answers = (*exercise.library_answers, exercise.reference, exercise.formula)
        absent_answers({f: shown_name(f, name) for f in answers if f is not None})


def _check_of(name: str):
    """The check a graded cell names (``check_softmax``), from the library itself."""
    from lessons_lib import exercises

    if not (name.startswith("check_") and name in exercises.__all__):
        raise KeyError(name)
    return getattr(exercises, name)


def _value_of(answers: AnswerCells):
    """What a child computing the value ``answers`` defines did (with the runner's time limit): its
    :class:`~.outcome.Outcome`, the value as data in its ``result``."""
    from .outcome import Case
    from .runner import TIME_LIMIT_S, run

    return run(AnswerCells(answers.cells, answers.name, value=True), Case("your answer cell", {}),
               time_limit=TIME_LIMIT_S)


def _verdict_of_value(name: str, outcome, grading) -> str | None:
    """The one-line verdict of an answer cell that did not give its value cleanly (it changed the judge's
    tools, raised, or ran too long); None when it did."""
    from .catalogue import TAMPERED
    from .messages import explain_error

    if outcome.tampered:
        return grading.verdict(TAMPERED.feedback(name, outcome, (), 0))
    if isinstance(outcome.error, NotImplementedError):
        return (f"{name}: NOT ATTEMPTED YET: {name} still holds the placeholder. Hint: write your answer "
                "where the cell says so, run the cell, then its check.")
    if outcome.error is None and not outcome.timed_out:
        return None
    why = ("it did not finish in time" if outcome.timed_out else explain_error(outcome))
    return f"{name}: NOT YET (raised): Your answer cell did not give {name} a value: {why}"


def judge(cells: list[dict], seeds: dict[str, int]) -> dict[str, dict]:
    """``grade_id -> {"passed", "message"}`` for each graded cell of ``cells`` whose checks are the
    course's (see the module docstring); nothing of the learner's runs in this process."""
    from lessons_lib import exercises

    from . import grading

    verdicts: dict[str, dict] = {}
    answers: list[str] = []
    for cell in cells:
        if cell.get("answer"):
            answers.append(str(cell["source"]))
            continue
        calls = grading.graded_calls(str(cell.get("source", "")))
        if not cell.get("grade_id") or not calls:
            continue
        verdicts[cell["grade_id"]] = _judge_cell(calls, list(answers), seeds, exercises.EXERCISES, grading)
    return verdicts


def _judge_cell(calls, answers: list[str], seeds: dict[str, int], registry: dict, grading) -> dict:
    """The verdict of one graded cell: its checks in order, the first that does not pass named."""
    for check, unseen, answer in calls:
        cells = AnswerCells(answers, answer)
        if check == "check_hidden":
            seed = seeds.get(unseen)
            if seed is None:
                return {"passed": False, "message": f"{answer}: NOT GRADED: autograde gave the judge no seed "
                                                    f"for {unseen}'s unseen cases."}
            feedback = grading.check_hidden(unseen, cells, seed=seed)
        elif answer in registry:
            feedback = _check_of(check)(cells)
        else:  # a value to design (lesson 01's query), checked here once the child has computed it
            outcome = _value_of(cells)
            failed = _verdict_of_value(answer, outcome, grading)
            if failed is not None:
                return {"passed": False, "message": failed}
            feedback = _check_of(check)(outcome.result)
        if feedback.passed is not True:
            return {"passed": False, "message": _with_answer_cells(grading.verdict(feedback))}
    return {"passed": True, "message": ""}


def _with_answer_cells(message: str) -> str:
    """A verdict that a name is missing says where the grade looks for it: the answer cells alone."""
    if "NameError" not in message:
        return message
    return (f"{message} (The grade runs your answer cells on their own, with np and ll: a helper your "
            "function uses must be defined in an answer cell too.)")


_PR_SET_DUMPABLE = 4


def _not_inspectable() -> None:
    """Linux: other processes of the same user (a learner's child included) cannot open this process's
    files through ``/proc/PID/fd`` or attach to it."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        except (OSError, AttributeError):
            pass


def main() -> int:
    """Read the request on standard input, write the verdicts on standard output (only there: everything
    else this process or its children print goes nowhere)."""
    from . import child, messages

    request = json.loads(sys.stdin.read())
    messages.QUOTE_ERRORS = False  # the verdicts in the course's words: no learner's message quoted
    _not_inspectable()
    answer = os.dup(1)
    child.keep_from_children(answer)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    verdicts = judge(request["cells"], {str(k): int(v) for k, v in request.get("seeds", {}).items()})
    with os.fdopen(answer, "w", encoding="utf-8") as out:
        json.dump({"verdicts": verdicts}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
