"""Auto-checked exercises: run the learner's function, say ✓ or name the likely mistake.

In a notebook the learner fills in a function and hands it to its check::

    def my_softmax(x):
        raise NotImplementedError("your code here")   # the placeholder as shipped

    check_softmax(my_softmax)      # -> a Feedback, shown as a coloured box

=====================  ===================================  ==========================
check                  learner writes                       notebook
=====================  ===================================  ==========================
``check_scores``       ``my_scores(Q, K) -> Q·Kᵀ``          03_step2_scores
``check_scaling``      ``my_scale(scores, d_k) -> /√d_k``   04_step3_scale_softmax
``check_softmax``      ``my_softmax(x)`` (rows, last axis)  04_step3_scale_softmax
``check_weighted_sum`` ``my_weighted_sum(weights, V)``      05_step4_weighted_values
=====================  ===================================  ==========================

How a check works: it calls the function on a few cases (small hand-made ones,
random ones, non-square ``L ≠ S`` ones so that a missing transpose or a wrong axis
shows, and for softmax logits near ±1000) and compares each answer with
:mod:`lessons_lib.attention`, the library's reference. When an answer is off, it
diagnoses by *experiment*: a small table of likely mistakes, each with a wrong
implementation (or a test) that behaves like that mistake. The mistake whose
implementation behaves like the learner's function on the most cases is named,
with a hint toward the fix. A check never raises, whatever the function does; the
"not attempted" state is shown, not raised, so a notebook runs top to bottom.
Teachers find the solutions in :mod:`lessons_lib.solutions`.
"""

from __future__ import annotations

import ast
import copy
import html
import inspect
import re
import textwrap
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import attention, solutions

__all__ = [
    "Feedback",
    "check_softmax",
    "check_scores",
    "check_scaling",
    "check_weighted_sum",
]

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"
_RTOL, _ATOL = 1e-6, 1e-9


# --------------------------------------------------------------------------- feedback


@dataclass(frozen=True)
class Feedback:
    """What a check says: shown as a coloured box in Jupyter and as plain text elsewhere.

    ``status`` is ``"passed"``, ``"failed"`` or ``"not attempted"``; ``passed`` is
    ``True``, ``False`` or ``None`` (not attempted). ``mistake`` is the short name of the
    diagnosed mistake (e.g. ``"wrong_axis"``), ``None`` when passed or not attempted.
    The words PASSED / NOT YET / NOT ATTEMPTED YET carry the meaning, not only the colour.
    """

    exercise: str
    status: str
    message: str
    hint: str = ""
    details: str = ""
    mistake: str | None = None

    @property
    def passed(self) -> bool | None:
        return {PASSED: True, FAILED: False}.get(self.status)

    @property
    def _badge(self) -> tuple[str, str, str, str]:
        """(symbol, label, border colour, background colour) for the status."""
        return {
            PASSED: ("✓", "PASSED", "#1a7f37", "#e6f4ea"),
            FAILED: ("✗", "NOT YET", "#b3261e", "#fdecea"),
        }.get(self.status, ("…", "NOT ATTEMPTED YET", "#5f6368", "#f1f3f4"))

    def __str__(self) -> str:
        symbol, label, _, _ = self._badge
        lines = [f"{symbol} {label}: {self.exercise}", self.message]
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        if self.details:
            lines.append(self.details)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        symbol, label, border, background = self._badge
        esc = html.escape
        parts = [
            f'<div role="status" class="lessons-feedback lessons-feedback-{self.status.replace(" ", "-")}" '
            f'style="border-left:6px solid {border};background:{background};color:#1f1f1f;'
            f'padding:0.6em 1em;margin:0.4em 0;font-family:sans-serif;line-height:1.45">',
            f'<div style="font-size:1.1em"><strong style="color:{border}">{symbol} {label}</strong>'
            f" &nbsp;<code>{esc(self.exercise)}</code></div>",
            f'<div style="margin-top:0.3em">{esc(self.message)}</div>',
        ]
        if self.hint:
            parts.append(f'<div style="margin-top:0.3em"><strong>Hint:</strong> {esc(self.hint)}</div>')
        if self.details:
            parts.append(
                '<details style="margin-top:0.3em"><summary>Show the case that failed</summary>'
                f'<pre style="white-space:pre-wrap;color:#1f1f1f">{esc(self.details)}</pre></details>'
            )
        parts.append("</div>")
        return "".join(parts)


# --------------------------------------------------------------------------- running the learner's code


@dataclass(frozen=True)
class Case:
    """One input for an exercise: ``args`` in call order (name -> value), a label to show."""

    label: str
    args: dict[str, Any]
    tag: str = ""


@dataclass
class Outcome:
    """What one function did on one case: its result or its exception, and side effects."""

    case: Case
    result: Any = None
    error: BaseException | None = None
    line: str = ""  # the learner's source line where the error happened, when known
    mutated: tuple[str, ...] = ()
    expected: np.ndarray | None = None

    @property
    def is_array(self) -> bool:
        return self.error is None and isinstance(self.result, np.ndarray)

    @property
    def values_ok(self) -> bool:
        return self.is_array and _close(self.result, self.expected)

    @property
    def ok(self) -> bool:
        return self.values_ok and not self.mutated

    @property
    def not_attempted(self) -> bool:
        return isinstance(self.error, NotImplementedError) or self.result is Ellipsis


def _close(a, b, equal_nan: bool = False) -> bool:
    try:
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=_RTOL, atol=_ATOL, equal_nan=equal_nan))
    except (TypeError, ValueError, AttributeError):
        return False


def _same_input(before, after) -> bool:
    if isinstance(before, np.ndarray):
        return isinstance(after, np.ndarray) and before.shape == after.shape and bool(
            np.array_equal(before, after, equal_nan=True)
        )
    return before == after


def _run(fn: Callable, case: Case, expected: np.ndarray | None = None) -> Outcome:
    """Call ``fn`` on copies of the case's arguments, catching everything it may do."""
    args = {name: copy.deepcopy(value) for name, value in case.args.items()}
    outcome = Outcome(case, expected=expected)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            outcome.result = fn(*args.values())
        except KeyboardInterrupt:  # the learner pressed stop: let them
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the learner's code raises (even sys.exit)
            outcome.error = exc
            outcome.line = _learner_line(exc, fn)
    outcome.mutated = tuple(name for name in args if not _same_input(case.args[name], args[name]))
    return outcome


def _learner_line(exc: BaseException, fn: Callable) -> str:
    """'line 3: return Q @ K' for the deepest frame of the learner's own code, or ''."""
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if not frames or not frames[-1].line:
        return ""
    return f"line {frames[-1].lineno}: {frames[-1].line.strip()}"


def _error_kind(exc: BaseException) -> str:
    """What went wrong, coarse enough that ``Q @ K`` and ``np.dot(Q, K)`` fail 'the same way',
    fine enough that two different wrong products do not (the sizes that clash are kept)."""
    text = str(exc)
    if m := re.search(r"size (\d+) is different from (\d+)", text):  # matmul: operand 1's, operand 0's
        return f"matrix product shapes {m[2]}≠{m[1]}"
    if m := re.search(r"not aligned: (\d+) \(dim \d+\) != (\d+)", text):  # np.dot: operand 0's, 1's
        return f"matrix product shapes {m[1]}≠{m[2]}"
    if "broadcast" in text:
        return "broadcast shapes " + " ".join(sorted(re.findall(r"\([\d,]*\)", text)))
    return type(exc).__name__


def _behave_alike(mine: Outcome, theirs: Outcome) -> bool:
    if mine.error is not None or theirs.error is not None:
        return mine.error is not None and theirs.error is not None and (
            _error_kind(mine.error) == _error_kind(theirs.error)
        )
    return (
        isinstance(mine.result, np.ndarray)
        and isinstance(theirs.result, np.ndarray)
        and _close(mine.result, theirs.result, equal_nan=True)
    )


def _is_placeholder(fn: Callable) -> bool:
    """True when the function body is only a docstring, ``pass`` or ``...``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return False
    funcs = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not funcs:
        return False
    for statement in funcs[0].body:
        is_pass = isinstance(statement, ast.Pass)
        is_constant = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if not (is_pass or is_constant):  # a docstring or a bare `...` is a Constant
            return False
    return True


# --------------------------------------------------------------------------- mistakes


Text = str | Callable[[Outcome], str]


@dataclass(frozen=True)
class Mistake:
    """One likely mistake: how to recognise it on an outcome, what to tell, how to fix.

    ``test(outcome)`` is True when the learner's outcome looks like this mistake.
    ``explain`` and ``hint`` are text, or functions of the outcome that return text.
    """

    key: str
    title: str
    explain: Text
    hint: Text
    test: Callable[[Outcome], bool]

    def feedback(self, exercise: str, outcome: Outcome) -> Feedback:
        explain = self.explain(outcome) if callable(self.explain) else self.explain
        hint = self.hint(outcome) if callable(self.hint) else self.hint
        message = f"Likely mistake: {self.title}. {explain}"
        if outcome.mutated and self.key != "mutates_input":
            message += f" Also, your function changed its input {_names(outcome.mutated)} in place."
        return Feedback(exercise, FAILED, message, hint, _describe(outcome), self.key)


def like(*candidates: Callable) -> Callable[[Outcome], bool]:
    """A test: the learner's function behaves like one of these wrong implementations."""
    return lambda outcome: any(_behave_alike(outcome, _run(c, outcome.case)) for c in candidates)


def either(*tests: Callable[[Outcome], bool]) -> Callable[[Outcome], bool]:
    return lambda outcome: any(test(outcome) for test in tests)


def _breaks_on_large_logits(outcome: Outcome) -> bool:
    if outcome.case.tag != "large":
        return False
    if outcome.error is not None:
        return isinstance(outcome.error, (OverflowError, FloatingPointError))
    return outcome.is_array and not np.all(np.isfinite(outcome.result))


def _names(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _shape(x) -> str:
    return "×".join(str(n) for n in np.shape(x))


def _show(x, prefix: str = "") -> str:
    """A small array as text, its later lines indented to follow ``prefix``."""
    if isinstance(x, np.ndarray) and x.size > 30:
        return f"array of shape {x.shape} (too big to print here)"
    if isinstance(x, np.ndarray):
        return np.array2string(x, precision=4, suppress_small=True, separator=", ", prefix=prefix)
    return repr(x)


def _describe(outcome: Outcome) -> str:
    """The failing case in text: inputs, expected answer, the learner's answer."""
    lines = [f"Case: {outcome.case.label}"]
    rows = [(name, value) for name, value in outcome.case.args.items()]
    if outcome.expected is not None:
        rows.append(("expected", outcome.expected))
    if outcome.error is None:
        rows.append(("yours", outcome.result))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        prefix = f"  {name:<{width}} = "
        lines.append(prefix + _show(value, prefix))
    if outcome.error is not None:
        lines.append(f"  yours: {_explain_error(outcome)}")
        lines.append(f"  (Python's own message: {type(outcome.error).__name__}: {outcome.error})")
    return "\n".join(lines)


# Plain-word explanations of exceptions: (does it apply?, what happened, how to fix).
_ERRORS: tuple[tuple[Callable[[BaseException], bool], Callable[[BaseException], str], str], ...] = (
    (
        lambda e: _error_kind(e).startswith("matrix product shapes"),
        lambda e: "the two matrices of a product do not fit together"
        + (f" (inner sizes {m[1]} and {m[2]})" if (m := re.search(r"size (\d+) is different from (\d+)",
                                                                   str(e))) else f" ({e})")
        + ". In A @ B, the number of columns of A must equal the number of rows of B.",
        "Print the shapes just before the product, e.g. print(A.shape, B.shape); "
        "a missing or extra .T is the usual cause.",
    ),
    (
        lambda e: _error_kind(e).startswith("broadcast shapes"),
        lambda e: "numpy could not line up two arrays element by element"
        + (f" (shapes {m[1]} and {m[2]})" if (m := re.search(r"shapes (\(.*?\)) (\(.*?\))", str(e))) else "")
        + ". Element-wise operations (+, -, *, /) need matching sizes, or sizes of 1.",
        "A reduction such as .sum(axis=-1) or .max(axis=-1) drops that axis; add keepdims=True so "
        "the result keeps one column per row. If you meant a matrix product, use @ instead of *.",
    ),
    (
        lambda e: isinstance(e, np.exceptions.AxisError),
        lambda e: f"it asked for an axis that does not exist ({e}).",
        "A 2-D array has axis 0 (down the rows) and axis 1 (along each row); axis=-1 always means "
        "the last axis.",
    ),
    (
        lambda e: isinstance(e, NameError),
        lambda e: f"it uses a name Python does not know ({e}).",
        "Look for a typo, or run the cells above first (for example the one with `import numpy as np`).",
    ),
    (
        lambda e: isinstance(e, RecursionError),
        lambda e: "it calls itself again and again until Python gives up.",
        "Inside the function, use numpy (np.exp, @, .sum) instead of calling the function you are writing.",
    ),
    (
        lambda e: isinstance(e, (OverflowError, FloatingPointError)),
        lambda e: f"a number grew too large for a float ({e}).",
        "exp of a big number overflows; subtract each row's maximum before exponentiating.",
    ),
    (
        lambda e: isinstance(e, AttributeError),
        lambda e: f"it used an attribute or method this kind of object does not have ({e}).",
        "Check the spelling, and that you work with numpy arrays (np.array), not lists.",
    ),
    (
        lambda e: isinstance(e, TypeError),
        lambda e: f"an operation got a kind of value it cannot handle ({e}).",
        "Check the number and order of the arguments, and that you work with numpy arrays.",
    ),
    (
        lambda e: True,
        lambda e: f"{type(e).__name__}: {e}.",
        "Read the message, then run your function by hand on a small array to see where it stops.",
    ),
)


def _error_entry(outcome: Outcome):
    return next(entry for entry in _ERRORS if entry[0](outcome.error))


def _explain_error(outcome: Outcome) -> str:
    where = f" at {outcome.line}" if outcome.line else ""
    what = _error_entry(outcome)[1](outcome.error)
    return f"Your function stopped with a {type(outcome.error).__name__}{where}: {what}"


# Mistakes any exercise can make, checked in this order. TYPE first (before the
# exercise's own mistakes), FALLBACK when no exercise-specific mistake fits.
_TYPE_MISTAKES = (
    Mistake(
        "returned_none", "it returns None",
        "Your function returned None. A Python function returns None when it reaches its end "
        "without a `return` statement (computing a value in the last line is not enough).",
        "End the function with `return <your result>`.",
        lambda o: o.error is None and o.result is None,
    ),
    Mistake(
        "returned_list", "it returns a Python list",
        lambda o: f"Your function returned a {type(o.result).__name__}, not a numpy array. Lists do not "
        "support @, broadcasting or .shape, so the next step of attention could not use it.",
        "Work with numpy operations from start to end (np.exp, @, .sum(axis=-1, keepdims=True)), "
        "or convert at the end with np.array(...).",
        lambda o: o.error is None and isinstance(o.result, (list, tuple)),
    ),
    Mistake(
        "not_an_array", "it does not return a numpy array",
        lambda o: f"Your function returned {type(o.result).__name__} {_show(o.result)}, but the answer is "
        f"an array of shape {np.shape(o.expected)}."
        + (" A reduction without an axis (like .sum()) collapses a whole array into one number."
           if np.ndim(o.result) == 0 else ""),
        "Return the whole array; reduce only along one axis (axis=-1) and keep it (keepdims=True).",
        lambda o: o.error is None and not isinstance(o.result, np.ndarray),
    ),
    Mistake(
        "not_numeric", "it returns an array that does not hold numbers",
        lambda o: f"Your function returned an array of dtype {o.result.dtype}, not of floats.",
        "Keep the computation in numpy floats from start to end (np.exp, @, /).",
        lambda o: o.error is None and o.result.dtype.kind not in "fiub",
    ),
)

_FALLBACK_MISTAKES = (
    Mistake(
        "raised", "it raises an exception",
        _explain_error,
        lambda o: _error_entry(o)[2],
        lambda o: o.error is not None,
    ),
    Mistake(
        "wrong_shape", "the result has the wrong shape",
        lambda o: f"Expected shape {o.expected.shape}, got {o.result.shape}.",
        "Write the shapes next to each line, e.g. (L, d_k) @ (d_k, S) -> (L, S), and check each step.",
        lambda o: o.result.shape != o.expected.shape,
    ),
    Mistake(
        "not_finite", "the result contains NaN or infinity",
        "Some entries are NaN (not a number) or ±inf, usually from exp of a large number or from 0/0.",
        "Print the intermediate arrays on the case below to find where the first NaN or inf appears.",
        lambda o: not np.all(np.isfinite(o.result)),
    ),
    Mistake(
        "wrong_values", "the numbers are off",
        lambda o: "The shape is right but the values differ from the expected answer "
        f"(largest difference {np.max(np.abs(o.result - o.expected)):.3g}).",
        "Compare your answer with the expected one on the small case below, entry by entry.",
        lambda o: not o.values_ok,
    ),
    Mistake(
        "mutates_input", "it changes its input in place",
        lambda o: f"Your answer is right, but your function changed its input {_names(o.mutated)}. "
        "In-place operations (like x -= ..., x /= ..., x[...] = ...) overwrite the caller's array, "
        "so the scores or weights the notebook computed earlier are silently altered.",
        "Build a new array instead: y = x - m rather than x -= m.",
        lambda o: bool(o.mutated),
    ),
)


def _uses_global_instead(exercise: Exercise, fn: Callable) -> list[Mistake]:
    """Mistakes of reading a notebook variable instead of an argument (e.g. K instead of V).

    For each global array the learner's function reads, a candidate computes the
    correct formula with that array in place of one argument.
    """
    code, namespace = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    if code is None:
        return []
    arrays = {n: namespace[n] for n in code.co_names if isinstance(namespace.get(n), np.ndarray)}
    try:  # the learner's own parameter names, which the message should use
        params = [*inspect.signature(fn).parameters][: len(exercise.params)]
    except (TypeError, ValueError):
        params = []
    params += exercise.params[len(params):]
    mistakes = []
    for name, array in arrays.items():
        for position, param in enumerate(params):
            def candidate(*args, _pos=position, _array=array):
                return exercise.solution(*args[:_pos], _array, *args[_pos + 1:])

            if exercise.params[position] == "V" and name.lower().startswith("k"):
                mistakes.append(Mistake(
                    "weights_on_keys", "the weights are applied to K instead of V",
                    f"Your function multiplies the weights by the notebook variable `{name}` (the keys) "
                    "instead of its argument V (the values). Keys only decide where each query looks; "
                    "the values are the content that gets mixed into the output.",
                    "Use the argument: return weights @ V.",
                    like(candidate),
                ))
            else:
                mistakes.append(Mistake(
                    "uses_global", f"it reads the notebook variable `{name}` instead of its argument",
                    f"Your function computes with `{name}`, a variable defined elsewhere in the notebook, "
                    f"where it should use its own argument `{param}`. The check passes new inputs, "
                    "so the answer must depend only on the arguments.",
                    f"Inside the function, use `{param}` (the name in the `def` line), not `{name}`.",
                    like(candidate),
                ))
    return mistakes


# --------------------------------------------------------------------------- exercises


@dataclass(frozen=True)
class Exercise:
    """One exercise: the learner's function name and arguments, the reference, cases, mistakes."""

    name: str
    params: tuple[str, ...]
    task: str
    reference: Callable
    solution: Callable
    cases: Callable[[], list[Case]]
    mistakes: tuple[Mistake, ...]
    start_hint: str

    def check(self, fn) -> Feedback:
        try:
            return self._check(fn)
        except Exception as exc:  # noqa: BLE001 - a check never raises
            return Feedback(
                self.name, FAILED,
                f"The checker itself ran into a problem ({type(exc).__name__}: {exc}). This is not "
                "your fault; please tell your teacher, and check your function by hand meanwhile.",
                mistake="checker_error",
            )

    def _check(self, fn) -> Feedback:
        if not callable(fn):
            return self._not_callable(fn)
        if _is_placeholder(fn):
            return self._not_attempted()
        outcomes = []
        for case in self.cases():
            outcome = _run(fn, case, expected=self.reference(*case.args.values()))
            if outcome.not_attempted:
                return self._not_attempted()
            outcomes.append(outcome)
        failing = next((o for o in outcomes if not o.ok), None)
        if failing is None:
            labels = "; ".join(o.case.label for o in outcomes)
            return Feedback(
                self.name, PASSED,
                f"Well done: {self.name} {self.task} correctly on all {len(outcomes)} test cases ({labels}).",
            )
        return self._diagnose(fn, failing, outcomes).feedback(self.name, failing)

    def _diagnose(self, fn, failing: Outcome, outcomes: list[Outcome]) -> Mistake:
        typed = next((m for m in _TYPE_MISTAKES if m.test(failing)), None)
        if typed is not None:
            return typed
        if not failing.values_ok:
            specific = [m for m in (*self.mistakes, *_uses_global_instead(self, fn)) if m.test(failing)]
            if specific:  # the one that explains the most cases; ties go to the table's order
                return max(specific, key=lambda m: sum(map(m.test, outcomes)))
        return next(m for m in _FALLBACK_MISTAKES if m.test(failing))

    def _not_attempted(self) -> Feedback:
        return Feedback(
            self.name, NOT_ATTEMPTED,
            f"{self.name} is not written yet: it still holds the placeholder. Replace "
            f"`raise NotImplementedError(...)` (or `...`) with your code, run that cell, then run this "
            "check again.",
            self.start_hint,
        )

    def _not_callable(self, fn) -> Feedback:
        if fn is None:
            what = "None"
        elif isinstance(fn, np.ndarray):
            what = f"an array of shape {fn.shape} (probably the result of calling your function)"
        else:
            what = f"a {type(fn).__name__}"
        return Feedback(
            self.name, FAILED,
            f"The check needs your function itself, but it got {what}.",
            f"Pass the function without calling it: check(...)({self.name}), not {self.name}(...).",
            mistake="not_callable",
        )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _rng_cases(specs, seed: int, make) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [make(rng, *spec) for spec in specs]


# ---- softmax ---------------------------------------------------------------


def _naive_softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _global_max_softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_cases() -> list[Case]:
    def random_case(rng, rows, cols):
        return Case(f"random {rows}×{cols} scores (non-square)", {"x": rng.normal(0, 2, (rows, cols))})

    return [
        Case("hand-made 2×3 scores", {"x": np.array([[1.0, 2.0, 3.0], [2.0, 0.0, -1.0]])}),
        Case("hand-made 3×3 scores", {"x": np.array([[0.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [3.0, 3.0, -2.0]])}),
        *_rng_cases([(4, 6), (5, 2)], 11, random_case),
        Case("large logits near +1000", {"x": np.array([[1000.0, 1001.0, 1002.0], [1002.0, 1000.0, 990.0]])},
             "large"),
        Case("large logits, one row near +1000 and one near -1000",
             {"x": np.array([[1000.0, 999.0, 998.0], [-1000.0, -998.0, -999.0]])}, "large"),
    ]


def _rows_proportional(o: Outcome) -> bool:
    """Each row is the expected row times its own factor: right up to the division by the row sum."""
    if not (o.is_array and o.result.shape == o.expected.shape and o.result.dtype.kind == "f"):
        return False
    factors = o.result / o.expected
    return bool(np.all(np.isfinite(factors)) and np.allclose(factors, factors[..., :1], rtol=1e-6))


def _column_sums(o: Outcome) -> str:
    return (f"Your rows sum to {np.round(o.result.sum(axis=-1), 3).tolist()}, your columns to "
            f"{np.round(o.result.sum(axis=0), 3).tolist()}. ")


SOFTMAX = Exercise(
    name="my_softmax",
    params=("x",),
    task="computes a row-wise softmax",
    reference=lambda x: attention.softmax(x, axis=-1),
    solution=solutions.my_softmax,
    cases=_softmax_cases,
    start_hint="Exponentiate with np.exp, then divide each row by its own sum (.sum(axis=-1, "
               "keepdims=True)). Subtract each row's maximum first, so that exp cannot overflow.",
    mistakes=(
        Mistake(
            "no_max_subtraction", "no max-subtraction, so exp overflows at large logits",
            "On small scores your function is right, but on logits near ±1000 it returns NaN or inf "
            "(or stops with an overflow): np.exp(1000) is too large for a float and becomes inf "
            "(inf/inf is NaN), and np.exp(-1000) rounds to 0 (0/0 is NaN).",
            "Subtract each row's maximum before exponentiating: x - x.max(axis=-1, keepdims=True). "
            "Softmax does not change when one number is added to a whole row, and the largest "
            "exponent becomes exp(0) = 1.",
            either(like(_naive_softmax), _breaks_on_large_logits),
        ),
        Mistake(
            "global_max", "the maximum of the whole array is subtracted, not each row's",
            "A row whose scores lie far below the overall maximum (here a row near -1000 beside a row "
            "near +1000) underflows to all zeros, and 0/0 gives NaN.",
            "Take the maximum along the last axis: x - x.max(axis=-1, keepdims=True).",
            like(_global_max_softmax),
        ),
        Mistake(
            "wrong_axis", "softmax over the wrong axis (columns sum to 1 instead of rows)",
            lambda o: _column_sums(o) + "Row i holds query i's scores over all keys, so each row must "
            "become a probability distribution.",
            "Reduce along the last axis in both places: .max(axis=-1, keepdims=True) and "
            ".sum(axis=-1, keepdims=True).",
            like(lambda x: attention.softmax(x, axis=0), lambda x: _naive_softmax(x.T).T),
        ),
        Mistake(
            "missing_keepdims", "keepdims is missing, so the row sums line up with the columns",
            "x.sum(axis=-1) turns a (L, S) array into shape (L,), and numpy then divides column j by "
            "the sum of row j (or refuses when L ≠ S).",
            "Keep the reduced axis: e.sum(axis=-1, keepdims=True) has shape (L, 1), one total per row.",
            like(lambda x: np.exp(x) / np.exp(x).sum(axis=-1),
                 lambda x: np.exp(x - x.max(axis=-1)) / np.exp(x - x.max(axis=-1)).sum(axis=-1)),
        ),
        Mistake(
            "whole_sum", "divided by the sum of the whole array instead of each row's",
            "All entries together sum to 1, but each row on its own does not.",
            "Divide by the row sums: e / e.sum(axis=-1, keepdims=True).",
            lambda o: _rows_proportional(o) and bool(np.isclose(o.result.sum(), 1.0)),
        ),
        Mistake(
            "not_normalised", "the exponentials are not divided by their row sums",
            "Your rows do not sum to 1: after exponentiating, each row still has to be divided by its total.",
            "Finish with e / e.sum(axis=-1, keepdims=True).",
            _rows_proportional,
        ),
    ),
)


# ---- scores ------------------------------------------------------------------


def _scores_cases() -> list[Case]:
    def random_case(rng, n_queries, n_keys, d_k):
        return Case(
            f"random Q {n_queries}×{d_k} and K {n_keys}×{d_k} ({_count(n_queries, 'query', 'queries')}, "
            f"{_count(n_keys, 'key', 'keys')})",
            {"Q": rng.normal(size=(n_queries, d_k)), "K": rng.normal(size=(n_keys, d_k))},
        )

    return [
        Case("hand-made Q 2×2 and K 2×2",
             {"Q": np.array([[1.0, 2.0], [3.0, 4.0]]), "K": np.array([[1.0, 0.0], [2.0, 1.0]])}),
        *_rng_cases([(3, 5, 4), (4, 2, 3), (1, 6, 8)], 12, random_case),
    ]


SCORES = Exercise(
    name="my_scores",
    params=("Q", "K"),
    task="computes all query-key dot products Q·Kᵀ",
    reference=attention.attention_scores,
    solution=solutions.my_scores,
    cases=_scores_cases,
    start_hint="Entry (i, j) is the dot product of query row i with key row j. Q is (L, d_k) and K is "
               "(S, d_k): which one has to be transposed so that a matrix product gives (L, S)?",
    mistakes=(
        Mistake(
            "k_not_transposed", "K is not transposed",
            "Q @ K multiplies the rows of Q with the columns of K. Q is (L, d_k) and K is (S, d_k), so "
            "the sizes only fit by accident (when S = d_k), and even then the numbers are not query-key "
            "dot products.",
            "Transpose K to (d_k, S): return Q @ K.T, a (L, S) matrix with entry (i, j) = q_i · k_j.",
            like(lambda Q, K: Q @ K),
        ),
        Mistake(
            "q_transposed", "Q is transposed instead of K",
            lambda o: "Q.T @ K compares features with features and gives a (d_k, d_k) matrix"
            + (f" (here {_shape(o.result)})" if o.is_array else "")
            + ", not one score per (query, key) pair.",
            "Transpose K, not Q: return Q @ K.T.",
            like(lambda Q, K: Q.T @ K),
        ),
        Mistake(
            "swapped", "rows and columns are swapped (K·Qᵀ)",
            "K @ Q.T has one row per key and one column per query: the transpose of the scores. "
            "By convention each row belongs to a query, so the softmax later runs over the keys.",
            "Put Q first: return Q @ K.T.",
            like(lambda Q, K: K @ Q.T),
        ),
        Mistake(
            "elementwise", "* multiplies element by element instead of a matrix product",
            "Q * K multiplies matching entries and sums nothing, so there are no dot products.",
            "Use the matrix product operator @: return Q @ K.T.",
            like(lambda Q, K: Q * K, lambda Q, K: Q * K.T),
        ),
        Mistake(
            "scaled_too_early", "the scores are already divided by √d_k",
            "Scaling is the next step (my_scale); this function returns the raw scores Q·Kᵀ.",
            "Remove the division: return Q @ K.T.",
            like(lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]), lambda Q, K: Q @ K.T / Q.shape[-1]),
        ),
        Mistake(
            "softmax_too_early", "softmax is already applied",
            "Your rows sum to 1: that is the job of a later step. This one returns the raw scores Q·Kᵀ.",
            "Return Q @ K.T without the softmax.",
            like(lambda Q, K: attention.softmax(Q @ K.T), lambda Q, K: attention.softmax(Q @ K.T / np.sqrt(
                Q.shape[-1]))),
        ),
    ),
)


# ---- scaling ------------------------------------------------------------------


def _scaling_cases() -> list[Case]:
    def random_case(rng, n_queries, n_keys, d_k):
        return Case(
            f"random {n_queries}×{n_keys} scores with d_k = {d_k}",
            {"scores": rng.normal(0, np.sqrt(d_k), (n_queries, n_keys)), "d_k": d_k},
        )

    return [
        Case("hand-made 2×2 scores with d_k = 4", {"scores": np.array([[4.0, -2.0], [8.0, 0.0]]), "d_k": 4}),
        *_rng_cases([(3, 5, 16), (4, 2, 64)], 13, random_case),
    ]


SCALING = Exercise(
    name="my_scale",
    params=("scores", "d_k"),
    task="scales the scores by 1/√d_k",
    reference=lambda scores, d_k: attention.scale_scores(scores, d_k=d_k),
    solution=solutions.my_scale,
    cases=_scaling_cases,
    start_hint="One line: divide the scores by the square root of d_k (np.sqrt).",
    mistakes=(
        Mistake(
            "forgot_scaling", "the scaling is missing",
            "Your function returns the scores unchanged.",
            "Divide by the square root of d_k: return scores / np.sqrt(d_k).",
            like(lambda scores, d_k: scores),
        ),
        Mistake(
            "divided_by_d_k", "divided by d_k instead of √d_k",
            "Dividing by d_k shrinks the scores too much (by 64 instead of 8 when d_k = 64), so softmax "
            "comes out nearly uniform and attention cannot focus. The spread of a dot product grows "
            "like √d_k, so √d_k is what brings it back to about 1.",
            "Use the square root: return scores / np.sqrt(d_k).",
            like(lambda scores, d_k: scores / d_k),
        ),
        Mistake(
            "multiplied", "multiplied instead of divided",
            "Multiplying makes large scores even larger, so softmax saturates even more (one weight near "
            "1, the rest near 0).",
            "Divide: return scores / np.sqrt(d_k).",
            like(lambda scores, d_k: scores * np.sqrt(d_k), lambda scores, d_k: scores * d_k),
        ),
        Mistake(
            "power_precedence", "`d_k ** 1/2` is d_k / 2, not √d_k",
            "Python applies ** before /, so d_k ** 1/2 means (d_k ** 1) / 2. It equals √d_k only when "
            "d_k = 4, which is why one case may pass.",
            "Write np.sqrt(d_k) or d_k ** 0.5.",
            like(lambda scores, d_k: scores / (d_k / 2), lambda scores, d_k: scores / d_k / 2),
        ),
        Mistake(
            "d_k_from_shape", "d_k is taken from the shape of the scores",
            "scores has shape (L, S): its sizes count queries and keys, not d_k, the length of each "
            "query and key vector. The two only agree by accident.",
            "Use the d_k argument: return scores / np.sqrt(d_k).",
            like(lambda scores, d_k: scores / np.sqrt(scores.shape[-1]),
                 lambda scores, d_k: scores / np.sqrt(scores.shape[0])),
        ),
        Mistake(
            "softmax_too_early", "softmax is applied as well",
            "This step only scales; the softmax comes next, in its own function.",
            "Return scores / np.sqrt(d_k) without the softmax.",
            like(lambda scores, d_k: attention.softmax(scores / np.sqrt(d_k))),
        ),
    ),
)


# ---- weighted sum -------------------------------------------------------------


def _weighted_sum_cases() -> list[Case]:
    def random_case(rng, n_queries, n_keys, d_v):
        weights = attention.softmax(rng.normal(size=(n_queries, n_keys)))
        return Case(
            f"random weights {n_queries}×{n_keys} (rows sum to 1) and V {n_keys}×{d_v}",
            {"weights": weights, "V": rng.normal(size=(n_keys, d_v))},
        )

    hand_weights = np.array([[1.0, 0.0, 0.0], [0.25, 0.25, 0.5], [0.0, 0.5, 0.5]])
    hand_values = np.array([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]])
    return [
        Case("hand-made weights 3×3 and V 3×2", {"weights": hand_weights, "V": hand_values}),
        *_rng_cases([(2, 5, 3), (4, 3, 6), (1, 4, 2)], 14, random_case),
    ]


WEIGHTED_SUM = Exercise(
    name="my_weighted_sum",
    params=("weights", "V"),
    task="mixes the value vectors with the weights (weights·V)",
    reference=attention.weighted_values,
    solution=solutions.my_weighted_sum,
    cases=_weighted_sum_cases,
    start_hint="Output row i is Σ_j weights[i, j] · V[j]: one matrix product. weights is (L, S) and V is "
               "(S, d_v); the answer is (L, d_v).",
    mistakes=(
        Mistake(
            "transposed_weights", "the weights are transposed",
            "weights.T @ V uses column i of the weights for output i, but row i holds query i's weights "
            "(the row that sums to 1).",
            "Do not transpose: return weights @ V.",
            like(lambda weights, V: weights.T @ V),
        ),
        Mistake(
            "reversed_order", "the product is in the wrong order",
            "A matrix product is not commutative. With V first, the rows of the result no longer "
            "belong to the queries.",
            "Weights on the left: return weights @ V, (L, S) @ (S, d_v) -> (L, d_v).",
            like(lambda weights, V: V @ weights, lambda weights, V: V.T @ weights.T,
                 lambda weights, V: V.T @ weights),
        ),
        Mistake(
            "v_transposed", "V is transposed",
            "V is already (S, d_v), one value vector per row, which is what the product needs.",
            "Use V as it is: return weights @ V.",
            like(lambda weights, V: weights @ V.T),
        ),
        Mistake(
            "elementwise", "* multiplies element by element instead of a matrix product",
            "weights * V pairs up matching entries and never sums over the keys.",
            "Use @, which sums weights[i, j] · V[j] over j: return weights @ V.",
            like(lambda weights, V: weights * V, lambda weights, V: weights * V.T),
        ),
        Mistake(
            "softmax_again", "softmax is applied to the weights again",
            "The weights are already probabilities (each row sums to 1). A second softmax flattens "
            "them toward uniform and changes which values get mixed in.",
            "Use the weights as they are: return weights @ V.",
            like(lambda weights, V: attention.softmax(weights) @ V),
        ),
    ),
)


# --------------------------------------------------------------------------- public checks


def check_softmax(fn) -> Feedback:
    """Check the learner's ``my_softmax(x)``: softmax over the last axis, each row sums to 1.

    Notebook 04_step3_scale_softmax. ``x`` is ``(L, S)``; the answer is compared with
    ``lessons_lib.attention.softmax(x, axis=-1)`` on hand-made, random non-square and
    large-logit (±1000) cases. Returns a :class:`Feedback`; never raises.
    """
    return SOFTMAX.check(fn)


def check_scores(fn) -> Feedback:
    """Check the learner's ``my_scores(Q, K)`` = ``Q·Kᵀ``, shape ``(L, S)``.

    Notebook 03_step2_scores. ``Q`` is ``(L, d_k)``, ``K`` is ``(S, d_k)``; cases with
    ``L ≠ S`` and ``S ≠ d_k`` expose a missing transpose. Returns a :class:`Feedback`; never raises.
    """
    return SCORES.check(fn)


def check_scaling(fn) -> Feedback:
    """Check the learner's ``my_scale(scores, d_k)`` = ``scores / √d_k``.

    Notebook 04_step3_scale_softmax. Cases use ``d_k`` = 4, 16, 64 with scores whose
    shape never equals ``d_k``. Returns a :class:`Feedback`; never raises.
    """
    return SCALING.check(fn)


def check_weighted_sum(fn) -> Feedback:
    """Check the learner's ``my_weighted_sum(weights, V)`` = ``weights·V``, shape ``(L, d_v)``.

    Notebook 05_step4_weighted_values. ``weights`` is ``(L, S)`` with rows summing to 1,
    ``V`` is ``(S, d_v)``. Returns a :class:`Feedback`; never raises.
    """
    return WEIGHTED_SUM.check(fn)
