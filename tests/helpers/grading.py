"""What the grading tests share: the course folder as a teacher sets it up, the planted mistakes, how a
student's notebook is filled and handed in, nbgrader run as a teacher runs it, the mistake a check names
for a planted one, and the gaming assignment: every exercise of the course in one short notebook (which the
pipeline's mistaken student hands in too), and the ways of getting its points without the work
(:data:`STRATEGIES`).

``tests/grading/test_nbgrader_pipeline.py`` grades the lessons with these,
``tests/grading/test_gaming_scores_zero.py`` the gaming assignment, ``tests/grading/test_class_report.py``
and ``tests/hub/test_hub_grading.py`` hand in the same submissions; ``tests/exercises/test_graded_cells.py``
runs the graded cells in-process (:func:`graded_cell`, :func:`verdict_message`). :func:`graded_notebook`
makes an autograded notebook by hand, as nbgrader writes one, for the class report's fast tests.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat

from lessons_lib.course.lessons import LESSONS as REGISTRY
from tests.helpers import REPO, load_tool

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
    "my_decode_step": ("/ np.sqrt(q.shape[-1])", "/ q.shape[-1]", None),
    "my_rope_step": ("past + np.arange(len(q))", "np.arange(len(q))", "offset_bug"),
    "my_repeat_kv": ("axis=-3)", "axis=-2)", None),
    "my_linear_attention_step": ("(phi_q @ state) / (phi_q @ z)", "phi_q @ state", "no_normaliser"),
    "my_causal_linear_attention": ("np.tril(phi_q @ phi_k.T)", "phi_q @ phi_k.T", "future_leaks"),
    "my_delta_step": ("error = v - k @ state", "error = v", "not_corrected"),
    "my_absorbed_scores": ("(nope + rotated) /", "nope /", "rope_forgotten"),
    "my_topk_keys": ("np.argsort(-scores[i, :seen])", "np.argsort(scores[i, :seen])", "lowest_kept"),
}
#: The partial student: lesson -> {exercise: "right" | "mistake" | "untouched"}.
PARTIAL = {
    "04_step3_scale_softmax": {"my_softmax": "untouched", "my_scale": "right"},
    "06_multi_head": {"my_split_heads": "right", "my_merge_heads": "mistake",
                      "my_next_token_head": "untouched"},
}
LESSONS = sorted(POINTS)


def lessons_that_call_the_learners_functions(lessons: list[str] = LESSONS) -> list[str]:
    """The lessons with a code cell, other than an exercise, its check and its graded test, that calls a
    learner's function (lesson 07 attends with ``my_causal_weights``): a mistake planted there reaches
    the lesson's own cells, so the mistaken student hands in the whole lesson. In every other lesson
    nothing but the exercise's own cells sees the learner's function, and the short assignment of every
    exercise (:func:`gaming_source`) grades the same cells with the same mistakes."""
    conventions = load_tool("conventions")
    found = []
    for lesson in lessons:
        for cell in nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or meta.get("solution") or meta.get("grade") \
                    or conventions.check_cell(cell.source):
                continue
            if re.search(r"\b(" + "|".join(POINTS[lesson]) + r")\b", cell.source):
                found.append(lesson)
                break
    return found


def planted_mistake(name: str, solved: str) -> str:
    """Exercise ``name``'s worked solution ``solved`` with its mistake of :data:`PLANTED`."""
    old, new, _ = PLANTED[name]
    assert old in solved, f"the worked solution of {name} changed: update PLANTED"
    return solved.replace(old, new)


#: The test course's secret (its own file, as a teacher's ~/.lessons-secret; see make_course).
SECRET = "the grading test's secret, 3f9a1c0e7b"


def make_course(root: Path, secret: str | None = SECRET) -> Path:
    """A course folder as ``tools/hub_grading.py teacher`` makes one: its ``nbgrader_config.py`` (the course's
    judge, the ignore list, the course id) and the file of its secret, readable by its owner only (beside
    the course, where a teacher's home would hold it; none when ``secret`` is None); return the file."""
    root.mkdir(parents=True, exist_ok=True)
    secret_file = root.parent / f"{root.name}-secret"
    config = load_tool("hub_grading").config_text("attention", str(root / "exchange"), root, secret_file)
    code_stub = 'c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}\n'
    (root / "nbgrader_config.py").write_text(config + code_stub, encoding="utf-8")
    if secret is not None:
        secret_file.write_text(secret + "\n", encoding="utf-8")
        secret_file.chmod(0o600)
    return secret_file


def guide_course(root: Path) -> Path:
    """A course whose config is the guide's (``tools/hub_grading.py teacher``): :func:`make_course`'s, and the
    course's grading policy (the late penalty, the light feedback page with no script of its own); return
    the file of its secret."""
    secret_file = make_course(root)
    with (root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write(load_tool("hub_grading").POLICY.format(percent=10))
    return secret_file


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess | str:
    """Run nbgrader in the course folder; its log (stderr), after checking that it succeeded without an
    error logged (``check=False``: the finished process, whatever happened)."""
    # nbgrader runs `alembic` (its database migrations) from PATH: the one beside this Python
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([*NBGRADER, *args, f"--CourseDirectory.root={course}"],
                            capture_output=True, text=True, cwd=course, timeout=1800, env=env)
    if not check:
        return result
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    assert "[ERROR]" not in result.stderr, result.stderr
    return result.stderr


def scores(course: Path, student: str, assignment: str) -> dict[str, float]:
    """Each graded cell's score (by exercise name) of ``student``'s ``assignment`` in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(assignment, assignment, student)
        return {g.name.removeprefix("test_"): g.score for g in nb.grades if g.name.startswith("test_")}


def feedback_text(course: Path, student: str, assignment: str) -> str:
    """The text of ``student``'s feedback page (nbgrader generate_feedback's HTML, without its tags)."""
    page = Path(course) / "feedback" / student / assignment / f"{assignment}.html"
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


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
        chunks.append(planted_mistake(name, solved) if how == "mistake" else solved)
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


def verdict_message(feedback) -> str:
    """The one-line message a graded cell raises for ``feedback`` (``assert_passes``)."""
    from lessons_lib.exercises.grading import assert_passes

    try:
        assert_passes(feedback)
    except AssertionError as raised:
        return str(raised)
    raise AssertionError(f"{feedback} passed: a graded cell raises nothing for it")


def graded_notebook(results: dict) -> nbformat.NotebookNode:
    """An autograded notebook as nbgrader writes it: a graded cell per exercise (``name -> Feedback``, or
    None for a pass), with the error it raised."""
    nb = nbformat.v4.new_notebook()
    for name, feedback in results.items():
        cell = nbformat.v4.new_code_cell(f"ll.assert_passes(ll.check_x({name}))")
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": f"test_{name}", "points": 2,
                                     "solution": False, "locked": True, "schema_version": 3}
        if feedback is not None:
            cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError",
                                                   evalue=verdict_message(feedback), traceback=["..."])]
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_code_cell("print('not graded')"))
    return nb


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


def graded_cell(name: str) -> str:
    """The source of exercise ``name``'s graded cell (``test_<name>``), as its lesson's notebook holds it."""
    for lesson in LESSONS:
        for cell in nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == f"test_{name}":
                return cell.source
    raise KeyError(name)


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
    "my_repeat_kv": "ll.repeat_kv(kv, n_heads)",
    "my_linear_attention_step": "ll.linear_attention_step(state, z, ll.feature_map(q), ll.feature_map(k), v)",
    "my_causal_linear_attention": "ll.linear_attention(Q, K, V)",
    "my_delta_step": "ll.delta_rule_step(state, k, k, v, beta)[0]",
    "my_topk_keys": "ll.top_k_selection(scores, top_k)",
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
    "my_decode_step": "np.zeros((len(q), v.shape[1])), np.zeros((len(k_cache) + len(k), k.shape[1])), "
                      "np.zeros((len(v_cache) + len(v), v.shape[1]))",
    "my_rope_step": "np.zeros_like(q), np.zeros_like(k)",
    "my_repeat_kv": "np.zeros((*kv.shape[:-3], n_heads, *kv.shape[-2:]))",
    "my_linear_attention_step": "np.zeros_like(state), np.zeros_like(z), np.zeros_like(v)",
    "my_causal_linear_attention": "np.zeros((len(Q), V.shape[1]))",
    "my_delta_step": "np.zeros_like(state)",
    "my_absorbed_scores": "np.zeros((len(q_nope), len(latent)))",
    "my_topk_keys": "np.zeros(scores.shape, dtype=bool)",
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
    # raises: calling it fails that case, and the feedback names both; tests/exercises/test_rope_exercise.py;
    # my_repeat_kv likewise, tests/exercises/test_generation_exercises.py)
    "reference": (lambda name: _def(name, "from lessons_lib.exercises import EXERCISES\nreturn EXERCISES["
                                    f"{name!r}].reference({', '.join(_params(name))})")
                  if name in FUNCTIONS and name not in ("my_next_token_head", "my_rope", "my_repeat_kv")
                  else None,
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
    # the grading cell's own names and the judge's module (issue 38: one line got the points)
    "assert_passes": (lambda name: "ll.assert_passes = lambda *a, **k: None\n" + _identity_or_zeros(name),
                      "tampered", "lessons_lib.assert_passes"),
    "judge_module": (lambda name: "import lessons_lib.exercises.grading as _grading\n"
                     "_grading.assert_passes = lambda *a, **k: None\n" + _zeros(name),
                     "tampered", "grading.assert_passes"),
    "every_check": (lambda name: "for _check in [n for n in dir(ll) if n.startswith('check_')]:\n"
                    "    setattr(ll, _check, lambda *a, **k: ll.Feedback('my_x', 'passed', 'Well done.'))\n"
                    + _zeros(name), "tampered", "lessons_lib.check_"),
    "rebind_ll": (lambda name: _ANYTHING + _zeros(name), None, "NOT YET ("),
    # the judge's names bound to what is not the learner's own function (issue 39: not seen before)
    "builtin_bound": (lambda name: "import builtins\nclass _Passed:\n    def __call__(self, *args):\n"
                      "        return {'status': 'passed', 'exercise': 'x'}\nbuiltins.vars = _Passed()\n"
                      + _zeros(name), "tampered", "builtins.vars"),
    "numpy_function": (lambda name: "np.sqrt = np.positive\n" + _def(name, "return scores / d_k")
                       if name == "my_scale" else None, "tampered", "numpy.sqrt"),
    "reference_swap": (lambda name: "from lessons_lib.exercises import EXERCISES as _EXERCISES\n"
                       f"object.__setattr__(_EXERCISES[{name!r}], 'reference', np.zeros_like)\n"
                       + _def(name, f"return np.zeros_like({_params(name)[0]})")
                       if name in ONE_ARGUMENT else None, "tampered", ".reference"),
    "verdict_constant": (lambda name: "import lessons_lib.exercises.mistakes as _mistakes\n"
                         "_mistakes.FAILED = 'passed'\n" + _zeros(name), "tampered", "mistakes.FAILED"),
    "tolerance": (lambda name: "import lessons_lib.exercises.outcome as _outcome\n"
                  "_outcome._RTOL = _outcome._ATOL = 1e300\n" + _zeros(name), "tampered", "_RTOL"),
    # the kernel itself: graded cells rewritten before they run, their errors swallowed
    "blank_graded_cells": (lambda name: _zeros(name) + "\nget_ipython().input_transformers_post.append(\n"
                           "    lambda lines: [] if any('assert_passes' in line for line in lines)\n"
                           "    else lines)\n",
                           None, "NOT YET ("),
    "swallow_errors": (lambda name: _zeros(name) + "\nget_ipython().set_custom_exc((AssertionError,), "
                       "lambda *args, **kwargs: None)\n", None, "NOT YET ("),
    # the check's watch on the library, taken back or switched off inside the function
    "clear_the_watch": (lambda name: _def(name, f"import sys\nanswer = {LIBRARY_CALLS[name]}\n"
                                                "sys.getprofile().hits.clear()\nreturn answer")
                        if name in LIBRARY_CALLS else None, "library_answer", "does not count"),
    "switch_off_the_watch": (lambda name: _def(name, f"import sys\nsys.setprofile(None)\n"
                                                     f"return {LIBRARY_CALLS[name]}")
                             if name in LIBRARY_CALLS else None, "tampered", "switched off"),
}
#: A stand-in for ``ll`` whose every name does nothing: the graded cells' ``ll.assert_passes(...)`` pass.
_ANYTHING = ("class _Anything:\n    def __getattr__(self, name):\n"
             "        return lambda *args, **kwargs: None\nll = _Anything()\n")
#: Exercises whose function takes one array and answers with an array of its shape.
ONE_ARGUMENT = ("my_softmax", "my_causal_weights", "my_softmax_off")


def _identity_or_zeros(name: str) -> str:
    """The issue's example for my_scale (it returns the scores unchanged), a wrong answer for the others."""
    return _def(name, "return scores") if name == "my_scale" else _zeros(name)


#: What the fake_library student hands in beside the notebook: a lessons_lib of their own that passes all.
FAKE_LIBRARY = ("import importlib.util, sys\n"
                "def assert_passes(*args):\n    pass\n"
                "def __getattr__(name):\n    return lambda *args, **kwargs: None\n")


def _params(name: str) -> tuple[str, ...]:
    from lessons_lib.exercises import EXERCISES

    return EXERCISES[name].params


def gaming_source(lessons: list[str] = LESSONS) -> nbformat.NotebookNode:
    """One notebook with every exercise of ``lessons`` (of the course): each lesson's nbgrader cells (the
    exercise, its check, its graded test) as the lesson has them, after one cell of imports."""
    first = nbformat.read(REPO / "notebooks" / f"{LESSONS[0]}.ipynb", as_version=4)
    cells = [nbformat.v4.new_code_cell("import numpy as np\n\nimport lessons_lib as ll")]
    for lesson in lessons:
        for cell in nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4).cells:
            meta = cell.metadata.get("nbgrader")
            if not meta:
                continue
            if meta.get("solution") and not cell.source.lstrip().startswith("def "):  # 01: the value only
                end = "### END SOLUTION"
                cell.source = cell.source[:cell.source.index(end) + len(end)]
            cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells, metadata=first.metadata)


def submit_gaming(course: Path, student: str, code_of, assignment: str = GAMING) -> None:
    """``student`` hands in the gaming assignment (or another made by :func:`gaming_source`): each
    exercise's code from ``code_of(name)`` (the released cell where it gives None)."""
    teacher = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    pattern = re.compile(r"^(?:def (my_\w+)\(|(my_\w+) =)", re.M)
    defined = {c.metadata["nbgrader"]["grade_id"]: pattern.findall(c.source)
               for c in teacher.cells if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    for cell in nb.cells:
        names = [a or b for a, b in defined.get(cell.metadata.get("nbgrader", {}).get("grade_id"), [])]
        codes = [code_of(name) for name in names]
        if names and any(code is not None for code in codes):
            cell.source = "\n\n".join(code if code is not None else f"{name} = None"
                                       for name, code in zip(names, codes))
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")
    (folder / "timestamp.txt").write_text("2026-12-01 09:00:00.000000 UTC")




def worked_solution(teacher: nbformat.NotebookNode, name: str) -> str:
    """The worked solution of exercise ``name`` in a teacher's notebook (its chunk of a solution cell)."""
    for cell in teacher.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            for chunk in functions(cell.source):
                if re.search(rf"^(def )?{name}\b", chunk.lstrip("#").strip(), re.M) or re.search(
                        rf"^{name} =", chunk, re.M):
                    return chunk
    raise KeyError(name)
