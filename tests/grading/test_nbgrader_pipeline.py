"""Grading with the real nbgrader pipeline, in a temporary course directory (``make test-grading``).

One assignment per lesson with exercises (``source/<lesson>/<lesson>.ipynb``, the stamped source
notebook as the teacher has it). ``nbgrader generate_assignment`` makes the learner version; three
students hand it in:

* ``right``: every solution cell filled with the worked solution -> full points in every lesson;
* ``mistaken``: one planted mistake in every exercise -> each exercise loses exactly its points,
  and ``nbgrader generate_feedback``'s HTML names each mistake;
* ``partial`` (lessons 04 and 06, the lessons with several exercises): some exercises right, one
  with a planted mistake, one untouched -> the right ones score, the others get zero, and nothing
  errors.

A second assignment, ``gaming``, holds every exercise of the course in one short notebook (each
lesson's graded cells as its notebook has them, without the rest of the lesson, so that a submission
autogrades in seconds). It is handed in by a student who solved everything (full points) and by one
student per way of getting the points without the work (:data:`STRATEGIES`: calling the library's
answer, the exercise's own reference, patching numpy's comparisons during the call or in a cell,
patching the judge, a lookup table of the shown answers, a fake ``lessons_lib`` beside the notebook):
each scores 0 on every exercise the strategy applies to, and the feedback says why.

``nbgrader autograde`` re-runs each submission in a fresh kernel, the graded cells restored from the
gradebook; the course's ``nbgrader_config.py`` sets the secret of the unseen cases
(``LESSONS_HIDDEN_SECRET``) and keeps files a learner hands in beside the notebook out of the
autograded folder, as docs/classroom.md says.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.grading import (
    LESSONS,
    MISTAKEN,
    PARTIAL,
    PLANTED,
    POINTS,
    functions,
    named_mistake,
    nbgrader,
    solution_source,
    submit,
)

pytestmark = pytest.mark.grading

#: The course's nbgrader_config.py, as docs/classroom.md gives it (the secret is the test course's own).
COURSE_CONFIG = """\
import os

c = get_config()
c.CourseDirectory.course_id = "attention"
c.Execute.timeout = 300            # lesson 09 trains its model in the kernel
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}
# the unseen cases of the graded cells are drawn from this secret (docs/classroom.md)
os.environ["LESSONS_HIDDEN_SECRET"] = "the grading test's secret"
# copy only the notebook of a submission: a module or package handed in beside it is not imported
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py", "*.pth",
                            "lessons_lib", "numpy", "IPython", "ipykernel"]
"""

# ------------------------------------------------------------------ the gaming assignment
GAMING = "gaming"
EXERCISES_OF = [name for lesson in LESSONS for name in POINTS[lesson]]
#: The library's own answer to each exercise, as a learner would call it (``ll.<name>``).
LIBRARY_CALLS = {
    "my_projection": "ll.project_qkv(x, w_q, w_k, w_v)", "my_scores": "ll.attention_scores(Q, K)",
    "my_scale": "ll.scale_scores(scores, d_k)", "my_softmax": "ll.softmax(x)",
    "my_weighted_sum": "ll.weighted_values(weights, V)", "my_split_heads": "ll.split_heads(x, n_heads)",
    "my_merge_heads": "ll.merge_heads(heads)",
    "my_causal_weights": "ll.attention_weights(scores, scale=1.0, causal=True)",
    "my_online_update": "ll.online_softmax_update(m, ell, chunk)", "my_softmax_off": "ll.softmax_off(scores)",
    "my_rope": "ll.rope(q, positions, convention=convention), ll.rope(k, positions, convention=convention), "
               "v",
}
#: Exercises whose answer is a function with shown cases (all but my_query, a vector to design).
FUNCTIONS = [name for name in EXERCISES_OF if name != "my_query"]


def _def(name: str, body: str) -> str:
    from lessons_lib.exercises import EXERCISES

    return f"def {name}({', '.join(EXERCISES[name].params)}):\n" + textwrap.indent(body, "    ")


#: An answer of the right shape that is all zeros (wrong), per exercise: what a learner who patched the
#: comparisons hands back.
ZEROS = {
    "my_projection": "np.zeros((len(x), w_q.shape[1])), np.zeros((len(x), w_k.shape[1])), "
                     "np.zeros((len(x), w_v.shape[1]))",
    "my_scores": "np.zeros((len(Q), len(K)))", "my_scale": "np.zeros_like(scores)",
    "my_softmax": "np.zeros_like(x)",
    "my_weighted_sum": "np.zeros((len(weights), V.shape[1]))",
    "my_split_heads": "np.zeros((n_heads, len(x), x.shape[1] // n_heads))",
    "my_merge_heads": "np.zeros((heads.shape[1], heads.shape[0] * heads.shape[2]))",
    "my_next_token_head": "np.zeros((seq_len, seq_len)), np.zeros((seq_len, seq_len))",
    "my_causal_weights": "np.zeros_like(scores)", "my_online_update": "np.zeros_like(m), np.zeros_like(ell)",
    "my_softmax_off": "np.zeros_like(scores)",
    "my_rope": "np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)",
}


def _zeros(name: str) -> str:
    if name == "my_query":
        return "my_query = np.array([1.0, 0.0, 0.0, 0.0])"
    return _def(name, f"return {ZEROS[name]}")


#: Exercises answered row by row (row i of the answer depends only on row i of the first argument): their
#: table of the shown answers is kept row by row, which survived unseen cases made by shuffling rows.
ROWWISE = ("my_softmax", "my_scale", "my_softmax_off")


def _table(name: str) -> str:
    """A lookup table of the shown cases' answers (row by row where the exercise allows it), built in the
    cell from the check's own cases and reference, and a function that looks its arguments up."""
    from lessons_lib.exercises import EXERCISES

    args = ", ".join(EXERCISES[name].params)
    if name in ROWWISE:
        first, *rest = EXERCISES[name].params
        key = "(" + ", ".join(["row.tobytes()", *(f"np.asarray({arg}).tobytes()" for arg in rest)]) + ",)"
        return (f"from lessons_lib.exercises import EXERCISES as _EXERCISES\n"
                f"_TABLE_{name} = {{}}\n"
                f"for _case in _EXERCISES[{name!r}].cases():\n"
                f"    _first, *_rest = _case.args.values()\n"
                f"    _answers = _EXERCISES[{name!r}].reference(*_case.args.values())\n"
                f"    for _row, _answer in zip(_first, _answers):\n"
                f"        _key = (_row.tobytes(), *(np.asarray(v).tobytes() for v in _rest))\n"
                f"        _TABLE_{name}[_key] = _answer\n"
                + _def(name, f"return np.array([_TABLE_{name}[{key}] for row in {first}])"))
    # a shown case whose answer is a refusal (lesson 11's odd d_head) is refused, as the table's owner would
    return (f"from lessons_lib.exercises import EXERCISES as _EXERCISES\n"
            f"_TABLE_{name} = {{tuple(np.asarray(v).tobytes() for v in case.args.values()):\n"
            f"    _EXERCISES[{name!r}].reference(*case.args.values())\n"
            f"    for case in _EXERCISES[{name!r}].cases()}}\n"
            + _def(name, f"_answer = _TABLE_{name}[tuple(np.asarray(v).tobytes() for v in ({args},))]\n"
                         f"if not isinstance(_answer, (tuple, np.ndarray)):\n"
                         f"    raise ValueError(_answer.message)\n"
                         f"return _answer"))


_PATCH = "np.allclose = lambda *args, **kwargs: True\nnp.array_equal = lambda *args, **kwargs: True\n"
#: strategy -> (the code of exercise `name` in its answer cell, or None where the strategy does not apply;
#:              the mistake its feedback names, or None: only a score of 0 is asserted;
#:              words the feedback's line for the exercise holds)
STRATEGIES = {
    "library": (lambda name: _def(name, f"return {LIBRARY_CALLS[name]}") if name in LIBRARY_CALLS else None,
                "library_answer", "does not count"),
    # (my_rope's reference answers an odd d_head with the refusal it asks for, where a learner's function
    # raises: calling it fails that case, and the feedback names both; tests/exercises/test_rope_exercise.py)
    "reference": (lambda name: _def(name, "from lessons_lib.exercises import EXERCISES\nreturn EXERCISES["
                                    f"{name!r}].reference({', '.join(_params(name))})")
                  if name in FUNCTIONS and name not in ("my_next_token_head", "my_rope") else None,
                  "library_answer", "does not count"),
    "patch_in_call": (lambda name: _def(name, _PATCH + "np.testing.assert_allclose = lambda *a, **k: None\n"
                                        f"return {ZEROS[name]}") if name in FUNCTIONS else None,
                      "tampered", "numpy.allclose"),
    "patch_numpy": (lambda name: _PATCH + _zeros(name), "tampered", "numpy.allclose"),
    "patch_judge": (lambda name: "from lessons_lib.course.feedback import Feedback\n"
                    "Feedback.passed = property(lambda self: True)\n" + _zeros(name),
                    "tampered", "Feedback.passed"),
    "table": (lambda name: _table(name) if name in FUNCTIONS and name != "my_next_token_head" else None,
              None, "On unseen cases (drawn with this course's secret)"),
    "fake_library": (_zeros, None, ""),
}
#: What the fake_library student hands in beside the notebook: a lessons_lib of their own that passes all.
FAKE_LIBRARY = ("import importlib.util, sys\n"
                "def assert_passes(*args):\n    pass\n"
                "def __getattr__(name):\n    return lambda *args, **kwargs: None\n")


def _params(name: str) -> tuple[str, ...]:
    from lessons_lib.exercises import EXERCISES

    return EXERCISES[name].params


def gaming_source() -> nbformat.NotebookNode:
    """One notebook with every exercise of the course: each lesson's nbgrader cells (the exercise, its
    check, its graded test) as the lesson has them, after one cell of imports."""
    first = nbformat.read(REPO / "notebooks" / f"{LESSONS[0]}.ipynb", as_version=4)
    cells = [nbformat.v4.new_code_cell("import numpy as np\n\nimport lessons_lib as ll")]
    for lesson in LESSONS:
        for cell in nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            meta = cell.metadata.get("nbgrader")
            if not meta:
                continue
            if meta.get("solution") and not cell.source.lstrip().startswith("def "):  # 01: the value only
                end = "### END SOLUTION"
                cell.source = cell.source[:cell.source.index(end) + len(end)]
            cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells, metadata=first.metadata)


def submit_gaming(course: Path, student: str, code_of) -> None:
    """``student`` hands in the gaming assignment: each exercise's code from ``code_of(name)`` (the
    released cell where it gives None)."""
    teacher = nbformat.read(course / "source" / GAMING / f"{GAMING}.ipynb", as_version=4)
    pattern = re.compile(r"^(?:def (my_\w+)\(|(my_\w+) =)", re.M)
    defined = {c.metadata["nbgrader"]["grade_id"]: pattern.findall(c.source)
               for c in teacher.cells if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(course / "release" / GAMING / f"{GAMING}.ipynb", as_version=4)
    for cell in nb.cells:
        names = [a or b for a, b in defined.get(cell.metadata.get("nbgrader", {}).get("grade_id"), [])]
        codes = [code_of(name) for name in names]
        if names and any(code is not None for code in codes):
            cell.source = "\n\n".join(code if code is not None else f"{name} = None"
                                       for name, code in zip(names, codes))
    folder = course / "submitted" / student / GAMING
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{GAMING}.ipynb")
    (folder / "timestamp.txt").write_text("2026-12-01 09:00:00.000000 UTC")


def scores(course: Path, student: str, lesson: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(lesson, lesson, student)
        return {g.name.removeprefix("test_"): g.score for g in nb.grades if g.name.startswith("test_")}


def feedback_text(course: Path, student: str, lesson: str) -> str:
    page = (course / "feedback" / student / lesson / f"{lesson}.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", page))


class Course:
    """The course folder, and the log of every student's autograde."""

    def __init__(self, root: Path):
        self.root, self.logs = root, {}

    def __truediv__(self, other):
        return self.root / other

    def __fspath__(self):
        return str(self.root)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = Course(tmp_path_factory.mktemp("course"))
    (course / "nbgrader_config.py").write_text(COURSE_CONFIG)
    # the teacher's way in: stamp_notebooks.py --nbgrader-source (Predict answers folded as for learners)
    assert load_tool("stamp_notebooks").write_nbgrader_source(course / "source") == LESSONS
    (course / "source" / GAMING).mkdir()
    nbformat.write(gaming_source(), course / "source" / GAMING / f"{GAMING}.ipynb")
    nbgrader(course.root, "generate_assignment", "*", "--force")  # one assignment per lesson, and gaming
    for lesson in LESSONS:
        submit(course.root, "right", lesson, {n: "right" for n in POINTS[lesson]})
    for lesson in MISTAKEN:
        submit(course.root, "mistaken", lesson, {n: "mistake" for n in POINTS[lesson]})
    for lesson, wanted in PARTIAL.items():
        submit(course.root, "partial", lesson, wanted)
    teacher = nbformat.read(course / "source" / GAMING / f"{GAMING}.ipynb", as_version=4)
    submit_gaming(course.root, "gaming_right", lambda name: _worked_solution(teacher, name))
    for strategy, (code_of, _, _) in STRATEGIES.items():
        submit_gaming(course.root, strategy, code_of)
    fake = course / "submitted" / "fake_library" / GAMING / "lessons_lib"
    fake.mkdir()
    (fake / "__init__.py").write_text(FAKE_LIBRARY)
    for student in ("right", "mistaken", "partial", "gaming_right", *STRATEGIES):
        course.logs[student] = nbgrader(course.root, "autograde", "*", f"--student={student}", "--create")
        nbgrader(course.root, "generate_feedback", "*", f"--student={student}")
    return course


def _worked_solution(teacher: nbformat.NotebookNode, name: str) -> str:
    for cell in teacher.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            for chunk in functions(cell.source):
                if re.search(rf"^(def )?{name}\b", chunk.lstrip("#").strip(), re.M) or re.search(
                        rf"^{name} =", chunk, re.M):
                    return chunk
    raise KeyError(name)


def test_release_hides_solutions_and_locks_the_graded_cells_which_hide_no_code(course):
    for lesson in LESSONS:
        nb = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert {c.metadata["nbgrader"]["grade_id"] for c in tests} == {f"test_{n}" for n in POINTS[lesson]}
        source = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
        graded = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
                  if c.metadata.get("nbgrader", {}).get("grade")}
        for cell in tests:
            assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False
            assert cell.source == graded[cell.metadata["nbgrader"]["grade_id"]], "learners see the whole test"


def test_the_release_folds_the_answers_to_predict_prompts_as_the_learner_copy_does(course):
    learner_release = load_tool("learner_release")
    folds = 0
    for lesson in LESSONS:
        release = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        learner, _ = learner_release.learner_notebook(nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb",
                                                                    as_version=4))
        prose = [c.source for c in release.cells if c.cell_type == "markdown"]
        assert prose == [c.source for c in learner.cells if c.cell_type == "markdown"], lesson
        folds += sum(learner_release.REVEAL in text for text in prose)
    assert folds > 0


def test_autograde_finds_no_changed_graded_cell_in_an_honest_submission(course):
    """nbgrader warns "Attribute 'checksum' for cell ... has changed!" when a locked cell differs from the
    gradebook: with hidden-test code in a graded cell it did so for every untouched notebook. The graded
    cells hold no hidden code, so the warning now means a learner really changed a locked cell."""
    for student in ("right", "mistaken", "partial", "gaming_right"):
        assert "has changed" not in course.logs[student], course.logs[student]


def test_every_exercise_right_gets_full_points(course):
    for lesson in LESSONS:
        assert scores(course, "right", lesson) == POINTS[lesson], lesson


def test_each_planted_mistake_loses_exactly_its_points_and_the_feedback_names_it(course):
    from lessons_lib.exercises import EXERCISES

    for lesson in MISTAKEN:
        assert scores(course, "mistaken", lesson) == {n: 0 for n in POINTS[lesson]}, lesson
        text = feedback_text(course, "mistaken", lesson)
        for name in POINTS[lesson]:
            mistake = PLANTED[name][2] or named_mistake(name, EXERCISES)
            assert f"{name}: NOT YET ({mistake})" in text, (lesson, name, mistake)


def graded_cell(name: str) -> str:
    for lesson in LESSONS:
        for cell in nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == f"test_{name}":
                return cell.source
    raise KeyError(name)


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_graded_cell_raises_exactly_when_the_check_fails_naming_the_mistake(name):
    """Every exercise's graded cell, hidden tests included, run here on the worked solution (passes)
    and on the planted mistake (raises AssertionError naming it): fast, and for every lesson."""
    import numpy as np

    import lessons_lib as ll
    from lessons_lib.exercises import EXERCISES

    source = solution_source(name)
    old, new, mistake = PLANTED[name]
    mistake = mistake or named_mistake(name, EXERCISES)
    for answer, fails in ((source, False), (source.replace(old, new), True)):
        namespace = {"np": np, "ll": ll}   # what a lesson's first cells import
        exec(answer, namespace)
        if not fails:
            exec(graded_cell(name), namespace)
            continue
        with pytest.raises(AssertionError, match=re.escape(f"{name}: NOT YET ({mistake})")):
            exec(graded_cell(name), namespace)


def test_the_feedback_shows_the_mistake_its_nudge_and_the_case_never_a_traceback_or_a_server_path(course):
    for student, lesson in [("mistaken", lesson) for lesson in MISTAKEN] + [("table", GAMING)]:
        text = feedback_text(course, student, lesson)
        lines = [line for line in text.splitlines() if "NOT YET (" in line]
        assert lines, (student, lesson)
        for line in lines:
            assert line.lstrip().startswith("AssertionError: my_")
            assert "Hint: " in line and "Failing case: " in line
        if student == "mistaken":  # every cell of the learner's runs: any traceback would be a graded cell's
            assert "most recent call last" not in text and "Cell In[" not in text, lesson
        assert "lessons_lib/" not in text and "site-packages" not in text, lesson
        assert str(course.root) not in text and ".py\"" not in text


def test_the_student_who_solved_everything_gets_full_points_on_the_gaming_assignment_too(course):
    everything = {name: points for lesson in LESSONS for name, points in POINTS[lesson].items()}
    assert scores(course, "gaming_right", GAMING) == everything


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_way_of_getting_points_without_the_work_scores_zero_and_the_feedback_says_why(course, strategy):
    code_of, mistake, words = STRATEGIES[strategy]
    got = scores(course, strategy, GAMING)
    applies = [name for name in EXERCISES_OF if code_of(name) is not None]
    assert applies and {name: got[name] for name in applies} == {name: 0 for name in applies}, got
    text = feedback_text(course, strategy, GAMING)
    for name in applies:
        line = next((line for line in text.splitlines() if f"{name}: NOT YET (" in line), "")
        assert line, (strategy, name)
        assert mistake is None or f"{name}: NOT YET ({mistake})" in line, (strategy, line)
        assert words in line, (strategy, line)
    if strategy == "fake_library":
        assert not (course / "autograded" / strategy / GAMING / "lessons_lib").exists()


def test_untouched_exercises_score_zero_without_an_error(course):
    for lesson, wanted in PARTIAL.items():
        got = scores(course, "partial", lesson)
        assert got == {n: (POINTS[lesson][n] if how == "right" else 0) for n, how in wanted.items()}
        text = feedback_text(course, "partial", lesson)
        for name, how in wanted.items():
            if how == "untouched":
                assert f"{name}: NOT ATTEMPTED YET" in text or "NotImplementedError" in text, name


def test_points_are_stamped_as_the_table_says():
    for lesson, points in POINTS.items():
        nb = json.loads((REPO / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
        graded = [c["metadata"]["nbgrader"] for c in nb["cells"]
                  if c["metadata"].get("nbgrader", {}).get("grade")]
        stamped = {g["grade_id"].removeprefix("test_"): g["points"] for g in graded}
        assert stamped == points, lesson


def test_the_classroom_guide_lists_the_points_of_the_table():
    guide = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")
    for lesson, points in POINTS.items():
        items = ", ".join(f"`{name}` ({p})" for name, p in points.items())
        assert f"| {lesson[:2]} | {items} | {sum(points.values())} |" in guide, lesson
    total = sum(sum(p.values()) for p in POINTS.values())
    assert f"| **course** | {sum(len(p) for p in POINTS.values())} exercises | **{total}** |" in guide
