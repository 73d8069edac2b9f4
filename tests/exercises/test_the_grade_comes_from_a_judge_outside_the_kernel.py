"""The grade's judge (lessons_lib/exercises/judge.py) checks a submission's answer cells where the notebook
cannot reach, and runs none of their code itself: each learner function is built from the cells inside the
forked child that runs one case. What a cell changed there (``ll.assert_passes``, ``ll`` itself, numpy)
changes that child only; the judge compares with its own untouched library, names the tampering the
child saw, and gives each graded cell the one-line verdict of its checks, the unseen ones from the seed
it was given. The real nbgrader pipeline: tests/grading/test_gaming_scores_zero.py.
"""

from __future__ import annotations

import os

import pytest

from lessons_lib.exercises import grading, judge, runner
from tests.helpers.grading import solution_source

pytestmark = [pytest.mark.skipif(runner.ISOLATION != "process", reason="the judge's children are forked"),
              pytest.mark.forked]

GRADED = {name: f"ll.assert_passes(ll.check_{check}({name}))\n"
                f"ll.assert_passes(ll.check_hidden({name!r}, {name}))"
          for name, check in (("my_softmax", "softmax"), ("my_scale", "scaling"))}
QUERY = "ll.assert_passes(ll.check_street_query(my_query))"


def _verdict(answer: str, name: str = "my_softmax", graded: str | None = None, seed: int = 2026) -> dict:
    cells = [{"source": answer, "answer": True},
             {"source": graded or GRADED[name], "grade_id": f"test_{name}"}]
    return judge.judge(cells, {name: seed})[f"test_{name}"]


def test_the_librarys_answer_is_absent_where_the_judge_runs_it_whichever_thread_calls_it():
    """A ``_thread`` thread escapes the watch on the library's answers (it watches ``threading``'s threads):
    in the judge's child the answer is not there to call, and the verdict names it."""
    answer = ("import _thread\ndef my_softmax(x):\n    box, lock = [], _thread.allocate_lock()\n"
              "    lock.acquire()\n    def work():\n        try:\n            box.append(ll.softmax(x))\n"
              "        finally:\n            lock.release()\n"
              "    _thread.start_new_thread(work, ())\n    lock.acquire()\n    return box[0]\n")
    verdict = _verdict(answer)
    assert verdict["message"].startswith("my_softmax: NOT YET (library_answer)"), verdict
    assert "`ll.softmax`" in verdict["message"]


def test_the_worked_solution_passes_the_shown_and_the_unseen_cases():
    assert _verdict(solution_source("my_softmax")) == {"passed": True, "message": ""}


def test_the_issues_one_line_and_an_identity_function_get_no_points_and_the_verdict_names_it():
    answer = "ll.assert_passes = lambda *a, **k: None\ndef my_scale(scores, d_k):\n    return scores\n"
    verdict = _verdict(answer, "my_scale")
    assert not verdict["passed"]
    assert verdict["message"].startswith("my_scale: NOT YET (tampered)")
    assert "lessons_lib.assert_passes" in verdict["message"]


def test_a_cell_that_replaces_ll_itself_changes_only_its_own_namespace():
    answer = ("class _Anything:\n    def __getattr__(self, name):\n        return lambda *a, **k: None\n"
              "ll = _Anything()\ndef my_softmax(x):\n    return x * 0\n")
    verdict = _verdict(answer)
    assert not verdict["passed"] and verdict["message"].startswith("my_softmax: NOT YET (")


def test_the_unseen_cases_are_those_of_the_seed_given():
    # (the table's answers computed in the cell: the library's own answer is absent where the judge runs it)
    table = ("from lessons_lib.exercises import EXERCISES as _E\n"
             "def _R(x):\n    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
             "    return e / e.sum(axis=-1, keepdims=True)\n"
             "_T = {c.args['x'].tobytes(): _R(c.args['x']) for c in _E['my_softmax'].cases()}\n"
             "def my_softmax(x):\n    return _T[x.tobytes()]\n")
    verdict = _verdict(table)
    assert "On unseen cases (drawn with this course's secret)" in verdict["message"]
    seed = grading.course_seed("a teacher's secret, 2026", "my_softmax")
    unseen = grading.hidden_cases("my_softmax", seed=seed)
    known = "".join(f"_T[{c.args['x'].tobytes()!r}] = _R(np.asarray({c.args['x'].tolist()}))\n"
                    for c in unseen)
    assert _verdict(table + known, seed=seed)["passed"], "a table of the very cases drawn: the seed decides"


def test_no_code_of_the_answer_cells_runs_in_the_judges_own_process(tmp_path):
    marker = tmp_path / "pids"
    answer = (f"import os\nopen({str(marker)!r}, 'a').write(str(os.getpid()) + '\\n')\n"
              + solution_source("my_softmax"))
    assert _verdict(answer)["passed"]
    ran_in = {int(pid) for pid in marker.read_text().split()}
    assert ran_in and os.getpid() not in ran_in


def test_a_helper_defined_outside_the_answer_cells_is_named_with_where_the_grade_looks():
    verdict = _verdict("def my_softmax(x):\n    return helper(x)\n")
    assert "NameError" in verdict["message"] and "answer cells on their own" in verdict["message"]


@pytest.mark.parametrize(("answer", "words"), [
    ("def my_softmax(x):\n    ...\n", "my_softmax: NOT ATTEMPTED YET"),
    ("def my_softmax(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n",
     "my_softmax: NOT ATTEMPTED YET"),
    ("def my_softmax(x)\n    return x\n", "my_softmax: NOT YET (raised)"),
])
def test_an_untouched_or_broken_answer_cell_is_named_as_such(answer, words):
    verdict = _verdict(answer)
    assert not verdict["passed"] and verdict["message"].startswith(words), verdict["message"]


@pytest.mark.parametrize(("answer", "passed", "words"), [
    ("my_query = np.array([0.0, 8.0, 0.0, 0.0])\n", True, ""),
    ("my_query = np.array([8.0, 0.0, 0.0, 0.0])\n", False, "my_query: NOT YET (wrong_features)"),
    ("# YOUR CODE HERE\nraise NotImplementedError()\n", False, "my_query: NOT ATTEMPTED YET"),
    ("ll.assert_passes = print\nmy_query = np.zeros(4)\n", False, "my_query: NOT YET (tampered)"),
])
def test_lesson_01s_value_is_computed_in_a_child_and_checked_by_the_judge(answer, passed, words):
    verdict = _verdict(answer, "my_query", QUERY)
    assert verdict["passed"] is passed and verdict["message"].startswith(words), verdict["message"]


def test_a_cell_that_the_course_did_not_write_is_not_judged():
    cells = [{"source": "x = 1", "answer": True}, {"source": "assert x == 1", "grade_id": "teachers_own"}]
    assert judge.judge(cells, {}) == {}
