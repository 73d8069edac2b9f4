"""In the grade's judge (lessons_lib/exercises/judge.py) the child that runs a submission's answer cells holds
no way to the library's answer to the exercise: each answer function (its ``library_answers``, its
``reference``, its ``formula``) is its own stand-in there, in place, so that the exercise's own fields, a
``functools.partial``, a lookup in ``gc`` and a thread the watch does not see all reach the stand-in, which
names ``library_answer``; and nothing in the child keeps the answer's code to rebuild it from. The judge's own
process, which computes the expected answers with the reference, keeps it whole.

(my_topk_keys's reference is the library's ``top_k_selection`` itself: the exercise's ``reference`` field
was the way around the stand-ins, issue 53.) The real nbgrader: tests/grading/test_gaming_scores_zero.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lessons_lib import _seal
from lessons_lib.exercises import EXERCISES, child, judge, runner
from tests.helpers.grading import STRATEGIES, graded_cell, solution_source

pytestmark = [pytest.mark.skipif(runner.ISOLATION != "process", reason="the judge's children are forked"),
              pytest.mark.forked]

NAMES = sorted(EXERCISES)
TOPK = "my_topk_keys"


def _verdict(answer: str, name: str) -> dict:
    cells = [{"source": answer, "answer": True}, {"source": graded_cell(name), "grade_id": f"test_{name}"}]
    return judge.judge(cells, {name: 2026})[f"test_{name}"]


def _in_a_thread(name: str, reach: str) -> str:
    """``name`` computed by whatever ``reach`` names, called from a ``_thread`` thread (which the watch on
    the library does not follow: only the stand-in can tell)."""
    params = ", ".join(EXERCISES[name].params)
    return (f"import _thread\nfrom lessons_lib.exercises import EXERCISES as _E\n"
            f"def {name}({params}):\n    box, lock = [], _thread.allocate_lock()\n    lock.acquire()\n"
            f"    def work():\n        try:\n            box.append({reach}({params}))\n"
            f"        finally:\n            lock.release()\n"
            f"    _thread.start_new_thread(work, ())\n    lock.acquire()\n    return box[0]\n")


def _says_library_answer(verdict: dict, name: str) -> None:
    assert not verdict["passed"], verdict
    assert verdict["message"].startswith(f"{name}: NOT YET (library_answer)"), verdict["message"]


@pytest.mark.parametrize("name", NAMES)
def test_every_exercises_own_reference_field_reaches_the_stand_in(name):
    _says_library_answer(_verdict(_in_a_thread(name, f"_E[{name!r}].reference"), name), name)


@pytest.mark.parametrize("name", [name for name in NAMES if EXERCISES[name].library_answers])
def test_every_exercises_library_answers_field_reaches_the_stand_in(name):
    _says_library_answer(_verdict(_in_a_thread(name, f"_E[{name!r}].library_answers[0]"), name), name)


@pytest.mark.parametrize("name", [name for name in NAMES if STRATEGIES["table"][0](name) is not None])
def test_a_table_of_the_shown_answers_built_from_the_reference_finds_the_answer_absent(name):
    """The gaming test's table strategy (the reference called at the cell's top level), my_topk_keys's
    included."""
    _says_library_answer(_verdict(STRATEGIES["table"][0](name), name), name)


def test_a_partial_made_before_the_answer_cells_ran_reaches_the_stand_in():
    answer = ("import functools\nfrom lessons_lib.exercises import EXERCISES as _E\n"
              f"_kept = functools.partial(_E[{TOPK!r}].reference)\n"
              "def my_topk_keys(scores, top_k):\n    return _kept(scores, top_k)\n")
    _says_library_answer(_verdict(answer, TOPK), TOPK)


def test_the_answer_found_in_gc_by_its_name_is_the_stand_in():
    answer = ("import gc, types\n"
              "def my_topk_keys(scores, top_k):\n"
              "    found = [o for o in gc.get_objects() if isinstance(o, types.FunctionType)\n"
              "             and o.__name__ == 'top_k_selection' and 'lessons_lib' in o.__module__]\n"
              "    return found[0](scores, top_k)\n")
    _says_library_answer(_verdict(answer, TOPK), TOPK)


@pytest.mark.parametrize("name", [TOPK, "my_rope", "my_softmax"])
def test_nothing_in_the_child_keeps_the_answers_own_code(name):
    """Not a function's ``__code__``, not the seal's record of it: no object
    that ``gc`` tracks refers to the code of any of the exercise's answers, from which a learner could
    rebuild it (``types.FunctionType(code, globals)``)."""
    exercise = EXERCISES[name]
    answers = [f for f in (*exercise.library_answers, exercise.reference, exercise.formula) if f is not None]
    codes = {(f.__code__.co_filename, f.__code__.co_firstlineno, f.__code__.co_qualname) for f in answers}
    probe = (f"def {name}(*args):\n    import gc, types\n"   # every referent of every object, in one C call
             "    codes = [r for r in gc.get_referents(*gc.get_objects()) if type(r) is types.CodeType\n"
             f"             and (r.co_filename, r.co_firstlineno, r.co_qualname) in {codes!r}]\n"
             "    return np.array([f'{type(o).__name__} holds {c.co_qualname}' for c in codes\n"
             "                     for o in gc.get_referrers(c) if o is not codes], dtype=str)\n")
    assert not _seal.changes()
    case = exercise.cases()[0]
    outcome = runner.run(judge.AnswerCells([probe], name), case, time_limit=60.0)
    assert outcome.error is None, outcome.error
    assert list(outcome.result) == []
    assert runner.run(judge.AnswerCells([probe.replace(f"def {name}(", "def my_probe(")], "my_probe"), case,
                      time_limit=60.0).result.size, "the probe finds the code where it is not made absent"


def test_the_judges_own_process_keeps_the_reference_and_the_worked_solution_passes():
    _says_library_answer(_verdict(_in_a_thread(TOPK, f"_E[{TOPK!r}].reference"), TOPK), TOPK)
    assert EXERCISES[TOPK].reference.__code__.co_name == "top_k_selection"
    assert _verdict(solution_source(TOPK), TOPK) == {"passed": True, "message": ""}


def test_the_stand_ins_are_made_only_in_a_child_that_runs_a_learners_code():
    reference = EXERCISES[TOPK].reference
    with pytest.raises(RuntimeError, match="only in a child"):
        child.absent_answers({reference: "ll.top_k_selection"})
    assert reference.__code__.co_name == "top_k_selection"



@pytest.mark.subprocess
def test_no_case_s_child_holds_the_answer_to_an_earlier_case():
    """The judge computes the expected answers after every case has run: a child forked for the second case
    finds no Outcome with an answer in it (this learner's function spoils its answer if it finds one). The
    judge runs as autograde starts it, a fresh ``python -I``: this test process holds earlier tests'
    outcomes."""
    answer = ("import gc\n"
              "def my_scores(Q, K):\n"
              "    held = [o for o in gc.get_objects() if type(o).__name__ == 'Outcome'\n"
              "            and getattr(o, 'expected', None) is not None]\n"
              "    return 0 * (Q @ K.T) if held else Q @ K.T\n")
    cells = [{"source": answer, "answer": True},
             {"source": graded_cell("my_scores"), "grade_id": "test_my_scores"}]
    request = json.dumps({"cells": cells, "seeds": {"my_scores": 2026}})
    ran = subprocess.run([sys.executable, "-I", "-m", "lessons_lib.exercises.judge"], input=request,
                         capture_output=True, text=True, timeout=120)
    verdict = json.loads(ran.stdout)["verdicts"]["test_my_scores"]
    assert verdict["passed"], verdict["message"]
