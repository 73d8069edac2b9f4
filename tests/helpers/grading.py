"""What the grading tests share: the planted mistakes, how a student's notebook is filled and handed in,
nbgrader run as a teacher runs it, and the mistake a check names for a planted one.

``tests/grading/test_nbgrader_pipeline.py`` grades with these; ``tests/grading/test_class_report.py`` and
``tests/hub/test_hub_grading.py`` hand in the same submissions.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from lessons_lib.course.lessons import LESSONS as REGISTRY
from tests.helpers import REPO

# the points per lesson, in one place: the registry of lessons
POINTS = {lesson.slug: lesson.points for lesson in REGISTRY.values() if lesson.points}

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
    "my_rope": ('if convention == "half":', 'if convention == "interleaved":', "conventions_swapped"),
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


def nbgrader(course: Path, *args: str) -> str:
    """Run nbgrader in the course folder; its log (stderr)."""
    # nbgrader runs `alembic` (its database migrations) from PATH: the one beside this Python
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("LESSONS_HIDDEN_SECRET", None)  # the course's own config sets it, as a teacher's does
    result = subprocess.run([*NBGRADER, *args, f"--CourseDirectory.root={course}"],
                            capture_output=True, text=True, cwd=course, timeout=900, env=env)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    assert "[ERROR]" not in result.stderr, result.stderr
    return result.stderr


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


def solution_source(name: str) -> str:
    for lesson in LESSONS:
        for cell in nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            if "BEGIN SOLUTION" not in cell.source or not re.search(rf"^(def )?{name}\b", cell.source, re.M):
                continue
            if not cell.source.lstrip().startswith("def "):  # lesson 01: a value, with code after it
                return "\n".join(ln for ln in cell.source.splitlines() if ln.startswith(name))
            return next(f for f in functions(cell.source) if f.startswith(f"def {name}("))
    raise KeyError(name)
