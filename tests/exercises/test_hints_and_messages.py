"""Hints that teach, never a line of the solution: no hint or message of any exercise quotes a line of a
worked solution in the notebooks (under other names or spacing either), and a hint grows more specific when
a notebook's function makes the same mistake again."""

from __future__ import annotations

import functools
import inspect
import keyword
import re

import nbformat
import numpy as np
import pytest

from lessons_lib import exercises
from tests.helpers import REPO
from tests.helpers.wrong_answers import MISTAKES, table_candidates


def _code_tokens(text: str) -> list[str]:
    """Tokens with every name replaced by NAME (Python's keywords kept): spacing and names do not matter."""
    text = text.replace("−", "-").replace("·", "*").replace("×", "*")
    text = re.sub(r"\.(?=\s|$)", " ;", text)  # a full stop ends a sentence: it is not an attribute's dot
    tokens = re.findall(r"[A-Za-z_]\w*|\d+(?:\.\d*)?|\*\*|//|==|!=|<=|>=|\S", text)
    return [t.lower() if keyword.iskeyword(t.lower()) else ("NAME" if re.match(r"[A-Za-z_]", t) else t)
            for t in tokens]


_OPERATORS = {"@", "/", "//", "*", "-", "+"}
_COMPUTES = _OPERATORS | {"("}


def _formula(tokens: list[str]) -> list[str]:
    """What a ``return`` returns or an assignment assigns (its ``=`` outside any brackets)."""
    if tokens[:1] == ["return"]:
        return tokens[1:]
    depth = 0
    for i, token in enumerate(tokens):
        depth += token in "([{" and 1 or (token in ")]}" and -1 or 0)
        if token == "=" and depth == 0:
            return tokens[i + 1:]
    return []


def _solution_lines() -> dict[str, list[str]]:
    """Every line of every worked solution in the notebooks that computes something (code with an operator
    or a call, not a comment), as tokens; a line that returns or assigns a formula of more than three
    tokens counts by the formula alone too (``x - x.max(axis=-1, keepdims=True)``)."""
    lines = {}
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                stripped = line.strip()
                if stripped.startswith("### BEGIN SOLUTION"):
                    inside = True
                elif stripped.startswith("### END SOLUTION"):
                    inside = False
                elif inside and stripped and not stripped.startswith("#"):
                    code = stripped.split("  #")[0].strip()
                    tokens = _code_tokens(code)
                    if not set(tokens) & _COMPUTES:  # `return m_new, ell_new`, `L, d = x.shape`: no computing
                        continue
                    lines[code] = tokens
                    rest = _formula(tokens)
                    if set(rest) & _OPERATORS and len(rest) > 3:  # a formula, not `a @ b` alone (any product)
                        lines[f"{code} (its formula)"] = rest
    assert len(lines) > 20
    return lines


SOLUTION_LINES = _solution_lines()


@functools.cache  # the checks say the same text for many wrong answers: each is read once
def _quoted_line(text: str) -> str | None:
    tokens = _code_tokens(text)
    for line, line_tokens in SOLUTION_LINES.items():
        n = len(line_tokens)
        if any(tokens[i:i + n] == line_tokens for i in range(len(tokens) - n + 1)):
            return line
    return None


def _without_own_code(text: str, fn) -> str:
    """``text`` without the lines of ``fn``'s own source it quotes (feedback shows learners their line)."""
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return text
    for line in source.splitlines():
        if line.strip():
            text = text.replace(line.strip(), "<your line>")
    return text


def _texts_of_every_mistake():
    """Every text a learner can be shown: each mistake's title, explanation and hints (every tier) of all
    12 exercises and of the shared catalogue, the feedback of every candidate and learner's wrong answer,
    lesson 01's feedback, and the hints of a placeholder (where to start)."""
    from lessons_lib.exercises import catalogue, messages, runner
    from lessons_lib.exercises.outcome import Outcome

    texts, evaluated = [], set()
    tables = {name: ex.mistakes for name, ex in exercises.EXERCISES.items()}
    shared = (*catalogue.TYPE_MISTAKES, *catalogue.FALLBACK_MISTAKES, catalogue.TAMPERED,
              catalogue.LIBRARY_ANSWER)
    for exercise in exercises.EXERCISES.values():
        texts.append((exercise.name, "start hint", exercise.start_hint))
        pool = []
        wrong = [candidate for _, candidate in table_candidates(exercise)]
        wrong += [fn for name, fn, _, _ in MISTAKES if name == exercise.name]
        wrong += [lambda *a: None, lambda *a: [1.0], lambda *a: (np.ones(2),), lambda *a: 1 / 0]
        for fn in wrong:
            feedback = exercise.check(fn)
            texts.append((exercise.name, f"feedback {feedback.mistake}",
                          _without_own_code(f"{feedback.message} {feedback.hint}", fn)))
            for case in exercise.cases():
                outcome = runner.run(fn, case, exercise.reference(*case.args.values()),
                                     answer_kind=exercise.answer_kind, outputs=exercise.outputs)
                outcome.line = ""  # the feedback may quote the learner's own line back: that is theirs
                pool.append(outcome)
        case = exercise.cases()[0]
        pool += [Outcome(case, timed_out=True, time_limit=3.0, still_running=still)
                 for still in (False, True)]
        pool += [Outcome(case, tampered=("numpy.allclose",)),
                 Outcome(case, borrowed=("ll.softmax",))]
        for mistake in (*tables[exercise.name], *shared):
            texts.append((exercise.name, f"{mistake.key} title", mistake.title))
            parts = [("explain", mistake.explain),
                     *((f"hint {i}", h) for i, h in enumerate(mistake.hint if isinstance(mistake.hint, tuple)
                                                              else (mistake.hint,)))]
            for label, part in parts:
                if not callable(part):
                    texts.append((exercise.name, f"{mistake.key} {label}", part))
                    continue
                for outcome in pool:
                    try:
                        text = part(outcome)
                    except Exception:  # not this mistake's kind of outcome
                        continue
                    evaluated.add((mistake.key, label, id(part)))
                    texts.append((exercise.name, f"{mistake.key} {label}", text))
    for _, _, hint in messages.ERRORS:
        texts.append(("any", "error hint", hint))
    for query in ([0, 8, 0, 0], [0, 0, 0, 0], "place", [0, 8, 0], [8, 0, 0, 0], [3, 3, 0, 0], [0, 4, 0, 0]):
        feedback = exercises.check_street_query(query)
        texts.append(("my_query", f"feedback {feedback.mistake}", f"{feedback.message} {feedback.hint}"))
    return texts, evaluated


@pytest.mark.slow  # every mistake's feedback of every exercise: 14 s
def test_no_hint_or_message_of_any_exercise_contains_a_line_of_a_worked_solution(monkeypatch):
    from lessons_lib.exercises import catalogue

    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")  # the same feedback, faster
    texts, evaluated = _texts_of_every_mistake()
    shared = (*catalogue.TYPE_MISTAKES, *catalogue.FALLBACK_MISTAKES, catalogue.TAMPERED,
              catalogue.LIBRARY_ANSWER)
    for mistake in {m for ex in exercises.EXERCISES.values() for m in (*ex.mistakes, *shared)}:
        hints = mistake.hint if isinstance(mistake.hint, tuple) else (mistake.hint,)
        for label, part in (("explain", mistake.explain), *((f"hint {i}", h) for i, h in enumerate(hints))):
            assert not callable(part) or (mistake.key, label, id(part)) in evaluated, (mistake.key, label)
    quoting = [(name, label, line) for name, label, text in texts if (line := _quoted_line(text))]
    assert not quoting, "\n".join(f"{name} {label}: quotes `{line}`" for name, label, line in quoting)
    exercises_covered = {name for name, _, _ in texts}
    assert exercises_covered >= set(exercises.EXERCISES) | {"my_query"}  # all 12 exercises


def test_the_solution_line_test_would_catch_a_quoted_line_under_other_names_and_spacing():
    assert _quoted_line("Finish with:   return e/e.sum( axis = -1,keepdims=True )")  # spacing, names
    assert _quoted_line("Use the square root: Return s / np.sqrt(k).")
    assert _quoted_line("Use the fragment np.sqrt(d_k) and .sum(axis=-1, keepdims=True).") is None


def test_a_hint_grows_more_specific_when_a_notebooks_function_makes_the_same_mistake_again():
    namespace = {"np": np, "__name__": "__main__"}
    exec("def my_softmax(x):\n    e = np.exp(x - x.max())\n    return e / e.sum(axis=-1, keepdims=True)\n",
         namespace)
    exercises.engine._ATTEMPTS.pop(("my_softmax", "global_max"), None)
    first, second, third = (exercises.check_softmax(namespace["my_softmax"]) for _ in range(3))
    assert first.mistake == second.mistake == "global_max"
    assert first.hint == first.nudge and second.hint != first.hint
    assert third.hint not in (first.hint, second.hint)  # three tiers: concept, shape or property, a case
    assert second.nudge == first.nudge  # graded feedback always carries the nudge
    assert _quoted_line(second.hint) is None
