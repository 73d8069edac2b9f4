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

``nbgrader autograde`` re-runs each submission in a fresh kernel with the hidden tests put back.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.lessons import LESSONS as REGISTRY

ROOT = Path(__file__).resolve().parents[1]
# the points per lesson, in one place: the registry of lessons
POINTS = {lesson.slug: lesson.points for lesson in REGISTRY.values() if lesson.points}

pytestmark = pytest.mark.grading
NBGRADER = [sys.executable, "-m", "nbgrader"]

#: name -> (text in the worked solution, the planted mistake's replacement, the mistake the check names)
PLANTED = {
    "my_query": ("np.array([0.0, 8.0, 0.0, 0.0])", "np.array([8.0, 0.0, 0.0, 0.0])", "wrong_features"),
    "my_projection": ("return x @ w_q, x @ w_k, x @ w_v", "return x @ w_q, x @ w_q, x @ w_q", "same_matrix"),
    "my_scores": ("return Q @ K.T", "return Q @ K", None),
    "my_softmax": ("exps.sum(axis=-1, keepdims=True)", "exps.sum(axis=0, keepdims=True)", None),
    "my_scale": ("scores / np.sqrt(d_k)", "scores / d_k", None),
    "my_weighted_sum": ("return weights @ V", "return weights.T @ V", None),
    "my_split_heads": ("x.reshape(L, n_heads, d_model // n_heads).transpose(1, 0, 2)",
                       "x.reshape(n_heads, L, d_model // n_heads)", None),
    "my_merge_heads": ("heads.transpose(1, 0, 2).reshape(L, n_heads * d_head)",
                       "heads.reshape(L, n_heads * d_head)", None),
    "my_next_token_head": ("np.eye(seq_len, k=1)", "np.eye(seq_len, k=-1)", None),
    "my_causal_weights": ("np.tril(", "np.triu(", None),
    "my_online_update": ("ell * np.exp(m - safe)", "ell", None),
    "my_softmax_off": ("np.exp(-m) + e.sum", "e.sum", None),
}
#: The partial student: lesson -> {exercise: "right" | "mistake" | "untouched"}.
PARTIAL = {
    "04_step3_scale_softmax": {"my_softmax": "untouched", "my_scale": "right"},
    "06_multi_head": {"my_split_heads": "right", "my_merge_heads": "mistake",
                      "my_next_token_head": "untouched"},
}
LESSONS = sorted(POINTS)
#: Lessons the mistaken student hands in. Autograding re-runs a whole lesson per submission, and
#: lessons 08 and 09 (timings, a model trained in the kernel) take the longest; their planted
#: mistakes go through the same graded cells in-process below. GRADING_ALL_LESSONS=1: every lesson.
MISTAKEN = LESSONS if os.environ.get("GRADING_ALL_LESSONS") == "1" else \
    [lesson for lesson in LESSONS if lesson not in ("08_cost_and_flashattention", "09_attention_in_action")]


def nbgrader(course: Path, *args: str) -> None:
    # nbgrader runs `alembic` (its database migrations) from PATH: the one beside this Python
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([*NBGRADER, *args, f"--CourseDirectory.root={course}"],
                            capture_output=True, text=True, cwd=course, timeout=900, env=env)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    assert "[ERROR]" not in result.stderr, result.stderr


def functions(source: str) -> list[str]:
    """A solution cell split into its top-level chunks (one per ``def``; the whole cell otherwise)."""
    return re.split(r"\n(?=def )", source)


def fill(cell_source: str, teacher_source: str, wanted: dict[str, str]) -> str:
    """The learner's cell with each exercise in it right, mistaken or left as released."""
    released, teacher = functions(cell_source), functions(teacher_source)
    assert len(released) == len(teacher)
    chunks = []
    for mine, solved in zip(released, teacher):
        name = next(n for n in PLANTED if re.search(rf"\b{n}\b", solved))
        how = wanted.get(name, "untouched")
        if how == "untouched":
            chunks.append(mine)
            continue
        if how == "mistake":
            old, new, _ = PLANTED[name]
            assert old in solved, f"the worked solution of {name} changed: update PLANTED"
            solved = solved.replace(old, new)
        chunks.append(solved)
    return "\n".join(chunks)


def submit(course: Path, student: str, lesson: str, wanted: dict[str, str]) -> None:
    teacher = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in teacher.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = fill(cell.source, solutions[grade_id], wanted)
    folder = course / "submitted" / student / lesson
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{lesson}.ipynb")
    (folder / "timestamp.txt").write_text("2026-12-01 09:00:00.000000 UTC")


def scores(course: Path, student: str, lesson: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(lesson, lesson, student)
        return {g.name.removeprefix("test_"): g.score for g in nb.grades if g.name.startswith("test_")}


def feedback_text(course: Path, student: str, lesson: str) -> str:
    page = (course / "feedback" / student / lesson / f"{lesson}.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'attention'\n"
        "c.Execute.timeout = 300\n"            # lesson 09 trains its model in the kernel
        "c.ClearSolutions.code_stub = {'python': '# YOUR CODE HERE\\nraise NotImplementedError()'}\n"
    )
    for lesson in LESSONS:
        folder = course / "source" / lesson
        folder.mkdir(parents=True)
        shutil.copy(ROOT / "notebooks" / f"{lesson}.ipynb", folder)
    nbgrader(course, "generate_assignment", "*", "--force")  # one assignment per lesson
    for lesson in LESSONS:
        submit(course, "right", lesson, {n: "right" for n in POINTS[lesson]})
    for lesson in MISTAKEN:
        submit(course, "mistaken", lesson, {n: "mistake" for n in POINTS[lesson]})
    for lesson, wanted in PARTIAL.items():
        submit(course, "partial", lesson, wanted)
    for student in ("right", "mistaken", "partial"):
        nbgrader(course, "autograde", "*", f"--student={student}", "--create")
        nbgrader(course, "generate_feedback", "*", f"--student={student}")
    return course


def test_release_hides_solutions_and_hidden_tests_and_locks_the_tests(course):
    for lesson in LESSONS:
        nb = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "check_hidden" not in text
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert {c.metadata["nbgrader"]["grade_id"] for c in tests} == {f"test_{n}" for n in POINTS[lesson]}
        for cell in tests:
            assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False


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


def named_mistake(name: str, exercises: dict) -> str:
    """The mistake the check names for the planted mistake of ``name`` (not a generic message)."""
    import numpy as np

    solved = solution_source(name)
    old, new, _ = PLANTED[name]
    namespace = {"np": np}
    exec(solved.replace(old, new), namespace)
    feedback = exercises[name].check(namespace[name])
    assert feedback.passed is False and feedback.mistake, (name, feedback)
    return feedback.mistake


def graded_cell(name: str) -> str:
    for lesson in LESSONS:
        for cell in nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
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


def solution_source(name: str) -> str:
    for lesson in LESSONS:
        for cell in nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            if "BEGIN SOLUTION" not in cell.source or not re.search(rf"^(def )?{name}\b", cell.source, re.M):
                continue
            if not cell.source.lstrip().startswith("def "):  # lesson 01: a value, with code after it
                return "\n".join(ln for ln in cell.source.splitlines() if ln.startswith(name))
            return next(f for f in functions(cell.source) if f.startswith(f"def {name}("))
    raise KeyError(name)


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
        nb = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
        graded = [c["metadata"]["nbgrader"] for c in nb["cells"]
                  if c["metadata"].get("nbgrader", {}).get("grade")]
        stamped = {g["grade_id"].removeprefix("test_"): g["points"] for g in graded}
        assert stamped == points, lesson


def test_the_classroom_guide_lists_the_points_of_the_table():
    guide = (ROOT / "docs" / "classroom.md").read_text(encoding="utf-8")
    for lesson, points in POINTS.items():
        items = ", ".join(f"`{name}` ({p})" for name, p in points.items())
        assert f"| {lesson[:2]} | {items} | {sum(points.values())} |" in guide, lesson
    total = sum(sum(p.values()) for p in POINTS.values())
    assert f"| **course** | {sum(len(p) for p in POINTS.values())} exercises | **{total}** |" in guide
