"""The checking engine: run the learner's function, compare with the reference, name the mistake.

A lesson's exercise is *content*: an :class:`Exercise` built from a few
:class:`Case` inputs and a table of :class:`Mistake` entries. This module is the
machinery every exercise shares, so a lesson never writes checking code.

How a check works
-----------------
1. A function whose body is only ``...``, ``pass`` or a docstring, or that raises
   ``NotImplementedError`` on *every* case, is "not attempted" (shown, not raised,
   so a notebook still runs top to bottom).
2. The learner's function runs on each case, on copies of the inputs, in a worker
   thread with a time limit (:data:`TIME_LIMIT_S` per case). A function that does not
   finish is stopped and the check names the case it hung on. Whatever it raises,
   returns or changes in place is recorded; nothing escapes but ``KeyboardInterrupt``.
3. Each answer is compared with the library's own reference function (never a
   solutions file): same structure, floating-point dtype, values within
   ``rtol=1e-6, atol=1e-9``, and the inputs left untouched.
4. On the first failing case the mistake is diagnosed *by experiment*:

   * a wrong kind of answer (None, a tuple, a list, a torch tensor, a generator,
     complex or object arrays, a timeout) is named first;
   * then the lesson's candidate mistakes, in table order. A candidate built with
     :func:`like` (wrong implementations of the formula) is named only when it behaves
     like the learner's function on **every** case, so shapes where two mistakes look
     alike cannot name the wrong one; a plain predicate looks at the failing case only;
   * reading a notebook variable instead of an argument is tried automatically;
   * otherwise a generic message (an exception explained in plain words, wrong shape,
     NaN/inf, "the numbers are off"): never a guess.

Adding an exercise to a later lesson (content only)
---------------------------------------------------
Create ``lessons_lib/exercises/lessonNN_topic.py`` (it is found automatically:
every ``lesson*`` module's ``__all__`` becomes part of :mod:`lessons_lib.exercises`)::

    import numpy as np
    from ..core import masks  # the library's reference
    from .engine import Case, Exercise, Mistake, like, rng_cases

    __all__ = ["check_causal_mask"]

    def _cases():                              # shapes where the mistakes differ:
        return [Case("3 queries, 5 keys", {"n_queries": 3, "n_keys": 5}),   # L ≠ S, none 4 or 16
                Case("6 queries, 2 keys", {"n_queries": 6, "n_keys": 2})]

    CAUSAL_MASK = Exercise(
        name="my_causal_mask", params=("n_queries", "n_keys"),
        task="builds the causal mask (True = may attend)",
        reference=masks.causal_mask, cases=_cases,
        start_hint="np.tril of a (n_queries, n_keys) array of True.",
        mistakes=(
            Mistake("upper", "the upper triangle is kept instead of the lower",
                    "Query i may see keys 0..i, which lie on and below the diagonal.",
                    "Use np.tril, not np.triu.",
                    like(lambda n_queries, n_keys: np.triu(np.ones((n_queries, n_keys), bool)))),
        ),
        answer_kind="b",                        # a bool array is expected (default "f": floats)
    )

    def check_causal_mask(fn):
        \"\"\"Check the learner's ``my_causal_mask(n_queries, n_keys)``. Notebook 07. Never raises.\"\"\"
        return CAUSAL_MASK.check(fn)

Then add a test to ``tests/test_exercises.py``: the generic tests there run every
``like`` candidate of every exercise through its check and require that its own
mistake is named, so the cases must tell the mistakes apart. A learner function that
returns several arrays is declared with ``outputs=("Q", "K", "V")`` (see
``lesson02_qkv``).
"""

from __future__ import annotations

import ast
import copy
import ctypes
import inspect
import re
import textwrap
import threading
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..course.feedback import FAILED, NOT_ATTEMPTED, PASSED, Feedback

__all__ = [
    "TIME_LIMIT_S",
    "Case",
    "Outcome",
    "Mistake",
    "Exercise",
    "Feedback",
    "like",
    "either",
    "every_case",
    "run",
    "rng_cases",
    "count",
    "shape_text",
    "show",
]

#: Seconds one case may run before the check stops the learner's function. The inputs are tiny,
#: so a right answer takes a millisecond; a few seconds leave room for a loaded classroom server.
TIME_LIMIT_S = 3.0
_RTOL, _ATOL = 1e-6, 1e-9


# --------------------------------------------------------------------------- cases and outcomes


@dataclass(frozen=True)
class Case:
    """One input for an exercise: ``args`` in call order (name -> value), a label to show.

    ``tag`` marks cases a mistake's predicate looks for (e.g. ``"large"`` logits).
    """

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
    expected: Any = None  # an array, or a tuple of arrays for exercises with several outputs
    timed_out: bool = False
    answer_kind: str = "f"  # dtype kinds a right answer may have
    outputs: tuple[str, ...] = ()  # names of the outputs, for exercises that return several
    time_limit: float | None = None  # the limit this case ran under, in seconds

    @property
    def is_array(self) -> bool:
        return self.error is None and isinstance(self.result, np.ndarray)

    @property
    def values_ok(self) -> bool:
        return self.error is None and _matches(self.result, self.expected, self.answer_kind)

    @property
    def ok(self) -> bool:
        return self.values_ok and not self.mutated

    @property
    def not_attempted(self) -> bool:
        return isinstance(self.error, NotImplementedError) or (self.error is None and self.result is Ellipsis)


def _matches(result, expected, kinds: str = "f") -> bool:
    """A right answer: the same structure as ``expected``, arrays of an allowed dtype kind, close values."""
    if isinstance(expected, tuple):
        return (isinstance(result, (tuple, list)) and len(result) == len(expected)
                and all(_matches(r, e, kinds) for r, e in zip(result, expected)))
    return isinstance(result, np.ndarray) and result.dtype.kind in kinds and _close(result, expected)


def _close(a, b, equal_nan: bool = False) -> bool:
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(_close(x, y, equal_nan) for x, y in zip(a, b)))
    try:
        if a.shape != b.shape:
            return False
        if a.dtype.kind == "b" or b.dtype.kind == "b":
            return a.dtype == b.dtype and bool(np.array_equal(a, b))
        return bool(np.allclose(a, b, rtol=_RTOL, atol=_ATOL, equal_nan=equal_nan))
    except (TypeError, ValueError, AttributeError):
        return False


def _same_input(before, after) -> bool:
    if isinstance(before, np.ndarray):
        return isinstance(after, np.ndarray) and before.shape == after.shape and bool(
            np.array_equal(before, after, equal_nan=before.dtype.kind in "fc")
        )
    return before == after


# --------------------------------------------------------------------------- running code, with a time limit


class _TimeLimit(BaseException):
    """Raised inside a learner's function that ran past its time limit (a BaseException, so that
    a learner's ``except Exception`` cannot swallow it)."""


def _raise_in_thread(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Ask Python to raise ``exc_type`` in ``thread`` at its next bytecode (PyThreadState_SetAsyncExc).

    A thread inside one long C call (a huge matrix product, ``time.sleep``) stops when that call
    returns; the check has already moved on by then.
    """
    if thread.ident is None or not thread.is_alive():
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type))


def _call(fn: Callable, args: tuple, time_limit: float | None):
    """``fn(*args)`` under errstate(all="ignore"); with a time limit, in a worker thread.

    Returns ``(result, error, timed_out)``. A thread (not SIGALRM) works in any thread of any
    kernel, on every OS. ``KeyboardInterrupt`` (the kernel's stop button, delivered to the
    main thread) stops the worker too, then propagates.
    """
    box: dict[str, Any] = {}

    def target():
        with np.errstate(all="ignore"):  # numpy's error state is per thread
            try:
                box["result"] = fn(*args)
            except BaseException as exc:  # whatever the learner's code raises (even sys.exit)
                box["error"] = exc

    if time_limit is None:
        target()
        return box.get("result"), box.get("error"), False
    worker = threading.Thread(target=target, name="lessons-exercise-check", daemon=True)
    worker.start()
    try:
        worker.join(time_limit)
    except KeyboardInterrupt:
        _raise_in_thread(worker, _TimeLimit)
        raise
    if worker.is_alive():
        for _ in range(5):  # again, in case a bare `except:` inside a loop swallowed it
            _raise_in_thread(worker, _TimeLimit)
            worker.join(0.05)
            if not worker.is_alive():
                break
        return None, None, True
    error = box.get("error")
    if isinstance(error, _TimeLimit):  # finished just as it was stopped
        return None, None, True
    return box.get("result"), error, False


def run(fn: Callable, case: Case, expected: Any = None, time_limit: float | None = None,
        answer_kind: str = "f", outputs: tuple[str, ...] = ()) -> Outcome:
    """Call ``fn`` on copies of the case's arguments, catching everything it may do.

    ``time_limit`` (seconds, or None for none) stops a function that runs too long.
    """
    args = {name: copy.deepcopy(value) for name, value in case.args.items()}
    outcome = Outcome(case, expected=expected, answer_kind=answer_kind, outputs=outputs,
                      time_limit=time_limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome.result, outcome.error, outcome.timed_out = _call(fn, tuple(args.values()), time_limit)
    if outcome.error is not None:
        outcome.line = _learner_line(outcome.error, fn)
    if not outcome.timed_out:  # a stopped function may have left its inputs half-written: say nothing
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
    if mine.timed_out or theirs.timed_out:
        return False
    if mine.error is not None or theirs.error is not None:
        return mine.error is not None and theirs.error is not None and (
            _error_kind(mine.error) == _error_kind(theirs.error)
        )
    return _same_answer(mine.result, theirs.result)


def _same_answer(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_answer(x, y) for x, y in zip(a, b))
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and _close(a, b, equal_nan=True)


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


class _Like:
    """A test: the learner's function behaves like one of these wrong implementations on every case."""

    def __init__(self, candidates: tuple[Callable, ...]):
        self.candidates = candidates

    def _alike(self, outcome: Outcome, candidate: Callable) -> bool:
        return _behave_alike(outcome, run(candidate, outcome.case))

    def __call__(self, outcome: Outcome) -> bool:  # on one case
        return any(self._alike(outcome, c) for c in self.candidates)

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return any(all(self._alike(o, c) for o in outcomes) for c in self.candidates)


class _Either:
    def __init__(self, tests: tuple[Callable, ...]):
        self.tests = tests

    def __call__(self, outcome: Outcome) -> bool:
        return any(test(outcome) for test in self.tests)

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return any(_test_matches(test, failing, outcomes) for test in self.tests)


class _EveryCase:
    def __init__(self, predicate: Callable[[Outcome], bool]):
        self.predicate = predicate

    def __call__(self, outcome: Outcome) -> bool:
        return bool(self.predicate(outcome))

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return all(self.predicate(o) for o in outcomes)


def every_case(predicate: Callable[[Outcome], bool]) -> _EveryCase:
    """A test: ``predicate(outcome)`` holds on every case (e.g. "right on small scores, NaN on large")."""
    return _EveryCase(predicate)


def like(*candidates: Callable) -> _Like:
    """A test: the learner's function behaves like one of these wrong implementations.

    It counts as a match only when one candidate gives the same answers (or fails the same
    way) on *every* case of the exercise.
    """
    return _Like(candidates)


def either(*tests: Callable[[Outcome], bool]) -> _Either:
    """A test that matches when any of ``tests`` matches (each with its own scope)."""
    return _Either(tests)


def _test_matches(test, failing: Outcome, outcomes: list[Outcome]) -> bool:
    if hasattr(test, "matches"):
        return test.matches(failing, outcomes)
    return bool(test(failing))


@dataclass(frozen=True)
class Mistake:
    """One likely mistake: how to recognise it, what to tell, how to fix.

    ``test`` is :func:`like` (wrong implementations that must behave like the learner's
    function on every case), :func:`every_case` (a predicate that must hold on every
    case), :func:`either`, or a plain predicate ``test(outcome) -> bool`` on the
    failing case. ``explain`` and ``hint`` are text, or functions of the failing
    outcome that return text.
    """

    key: str
    title: str
    explain: Text
    hint: Text
    test: Callable[[Outcome], bool]

    def matches(self, failing: Outcome, outcomes: list[Outcome]) -> bool:
        return _test_matches(self.test, failing, outcomes)

    def feedback(self, exercise: str, outcome: Outcome, outputs: tuple[str, ...] = ()) -> Feedback:
        explain = self.explain(outcome) if callable(self.explain) else self.explain
        hint = self.hint(outcome) if callable(self.hint) else self.hint
        message = f"Likely mistake: {self.title}. {explain}"
        if outcome.mutated and self.key != "mutates_input":
            message += f" Also, your function changed its input {_names(outcome.mutated)} in place."
        return Feedback(exercise, FAILED, message, hint, _describe(outcome, outputs), self.key)


def _names(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def shape_text(x) -> str:
    """``(3, 5)`` → ``'3×5'``."""
    return "×".join(str(n) for n in np.shape(x))


def show(x, prefix: str = "") -> str:
    """A small array as text, its later lines indented to follow ``prefix``."""
    if isinstance(x, np.ndarray) and x.size > 30:
        return f"array of shape {x.shape} (too big to print here)"
    if isinstance(x, np.ndarray):
        try:
            return np.array2string(x, precision=4, suppress_small=True, separator=", ", prefix=prefix)
        except (TypeError, ValueError):
            return repr(x)
    text = repr(x)
    return text if len(text) <= 200 else text[:200] + " …"


def _describe(outcome: Outcome, outputs: tuple[str, ...] = ()) -> str:
    """The failing case in text: inputs, expected answer, the learner's answer."""
    lines = [f"Case: {outcome.case.label}"]
    rows = list(outcome.case.args.items())

    def answer(label, value):
        if outputs and isinstance(value, (tuple, list)) and len(value) == len(outputs):
            return [(f"{label} {name}", part) for name, part in zip(outputs, value)]
        return [(label, value)]

    if outcome.expected is not None:
        rows += answer("expected", outcome.expected)
    if outcome.error is None and not outcome.timed_out:
        rows += answer("yours", outcome.result)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        prefix = f"  {name:<{width}} = "
        lines.append(prefix + show(value, prefix))
    if outcome.timed_out:
        lines.append("  yours: did not finish in time (stopped by the check)")
    elif outcome.error is not None:
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
        lambda e: isinstance(e, NotImplementedError),
        lambda e: "it still raises NotImplementedError for this input, although it runs on others "
        "(a branch, or a case such as this shape, still to be written).",
        "Make the function work for every input of the right shape, not only the first example.",
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


def _kind_of(value) -> str:
    """A learner-friendly name for the kind of a returned value."""
    module = type(value).__module__.split(".")[0]
    if module == "torch":
        return "a torch tensor"
    if inspect.isgenerator(value):
        return "a generator"
    return f"a {type(value).__name__}"


def _is_torch(value) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _single(o: Outcome) -> bool:
    """The exercise expects one array (not a tuple of several)."""
    return not isinstance(o.expected, tuple)


def _returned(o: Outcome) -> bool:
    return o.error is None and not o.timed_out


def _bad_dtype(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "OSUVcMm"


def _first_bad_part(o: Outcome):
    """(index, value) of the first output that is not a numpy array of numbers, for tuple exercises."""
    for i, part in enumerate(o.result):
        if not isinstance(part, np.ndarray) or _bad_dtype(part):
            return i, part
    return None


def _dtype_words(dtype: np.dtype) -> str:
    if dtype.kind == "c":
        return (f"complex numbers (dtype {dtype}). Attention works with real numbers; a complex result "
                "usually comes from np.emath / np.lib.scimath or from mixing in a complex constant "
                "such as 1j.")
    if dtype.kind == "O":
        return (f"Python objects (dtype {dtype}), not floats: numpy falls back to objects when np.array is "
                "given rows of different lengths, torch tensors, or a mix of numbers and other things.")
    return f"dtype {dtype}, which is not a number type."


# Mistakes any exercise can make, checked in this order. TYPE first (before the
# exercise's own mistakes), FALLBACK when no exercise-specific mistake fits.
_TYPE_MISTAKES = (
    Mistake(
        "timed_out", "it did not finish in time",
        lambda o: f"On the case \"{o.case.label}\" your function was still running after "
        f"{o.time_limit:g} s, so the check stopped it. These inputs are tiny: a right "
        "answer takes about a millisecond. An endless loop is the usual cause (a `while` whose "
        "condition never becomes False, or a loop that changes a copy instead of its counter).",
        "Look at each loop: does something inside it move it toward its end? Numpy needs no loop "
        "here at all: whole-array operations (@, np.exp, .sum(axis=-1, keepdims=True)) do the work.",
        lambda o: o.timed_out,
    ),
    Mistake(
        "returned_none", "it returns None",
        "Your function returned None. A Python function returns None when it reaches its end "
        "without a `return` statement (computing a value in the last line is not enough).",
        "End the function with `return <your result>`.",
        lambda o: _returned(o) and o.result is None,
    ),
    Mistake(
        "returned_generator", "it returns a generator, not the numbers",
        "Your function returned a generator: `(... for ... in ...)` in round brackets describes a "
        "computation that has not run yet, so there are no numbers in it.",
        "Compute the whole array with numpy operations, or wrap a loop's rows in np.array([...]) "
        "with square brackets.",
        lambda o: _returned(o) and inspect.isgenerator(o.result),
    ),
    Mistake(
        "returned_tensor", "it returns a torch tensor, not a numpy array",
        "Your function returned a torch tensor. These exercises work in numpy, and the next step of "
        "the lesson expects a numpy array.",
        "Stay in numpy (np.exp, @, .sum(axis=-1, keepdims=True)); if you used torch on purpose, "
        "end with .numpy().",
        lambda o: _returned(o) and (_is_torch(o.result) or (
            isinstance(o.result, (tuple, list)) and any(_is_torch(p) for p in o.result))),
    ),
    Mistake(
        "returned_tuple", "it returns a tuple, not one array",
        lambda o: f"Your function returned a tuple of {len(o.result)} "
        f"item{'s' if len(o.result) != 1 else ''}, but the answer is one array of shape "
        f"{np.shape(o.expected)}. A comma makes a tuple: `return a, b` or a trailing comma in "
        "`return a,` returns a tuple.",
        "Return a single array: remove the extra comma, or the extra value.",
        lambda o: _single(o) and _returned(o) and isinstance(o.result, tuple),
    ),
    Mistake(
        "returned_list", "it returns a Python list",
        lambda o: f"Your function returned a {type(o.result).__name__}, not a numpy array. Lists do not "
        "support @, broadcasting or .shape, so the next step of attention could not use it.",
        "Work with numpy operations from start to end (np.exp, @, .sum(axis=-1, keepdims=True)), "
        "or convert at the end with np.array(...).",
        lambda o: _single(o) and _returned(o) and isinstance(o.result, list),
    ),
    Mistake(
        "not_a_tuple", "it does not return the outputs as a tuple",
        lambda o: f"Your function returned {_kind_of(o.result)}"
        + (f" of shape {o.result.shape}" if isinstance(o.result, np.ndarray) else "")
        + f", but this exercise returns {len(o.expected)} arrays at once.",
        lambda o: f"End with `return {', '.join(_output_names(o))}` "
        "(a tuple: the arrays separated by commas).",
        lambda o: not _single(o) and _returned(o) and not isinstance(o.result, (tuple, list)),
    ),
    Mistake(
        "wrong_count", "it returns the wrong number of outputs",
        lambda o: f"Your function returned {len(o.result)} item{'s' if len(o.result) != 1 else ''}, but "
        f"this exercise returns {len(o.expected)}: {', '.join(_output_names(o))}.",
        lambda o: f"End with `return {', '.join(_output_names(o))}`.",
        lambda o: not _single(o) and _returned(o) and isinstance(o.result, (tuple, list))
        and len(o.result) != len(o.expected),
    ),
    Mistake(
        "output_not_an_array", "one of the outputs is not a numpy array of numbers",
        lambda o: (lambda i, part: f"Output {i + 1} ({_output_names(o)[i]}) is {_kind_of(part)}"
                   + (f" holding {_dtype_words(part.dtype)}" if isinstance(part, np.ndarray) else "")
                   + ", not a numpy array of floats.")(*_first_bad_part(o)),
        "Compute each output with numpy (for example X @ W), and return the arrays themselves.",
        lambda o: not _single(o) and _returned(o) and isinstance(o.result, (tuple, list))
        and len(o.result) == len(o.expected) and _first_bad_part(o) is not None,
    ),
    Mistake(
        "not_an_array", "it does not return a numpy array",
        lambda o: f"Your function returned {_kind_of(o.result)} {show(o.result)}, but the answer is "
        f"an array of shape {np.shape(o.expected)}."
        + (" A reduction without an axis (like .sum()) collapses a whole array into one number."
           if np.ndim(o.result) == 0 else ""),
        "Return the whole array; reduce only along one axis (axis=-1) and keep it (keepdims=True).",
        lambda o: _single(o) and _returned(o) and not isinstance(o.result, np.ndarray),
    ),
    Mistake(
        "not_numeric", "it returns an array that does not hold real numbers",
        lambda o: f"Your function returned an array of {_dtype_words(o.result.dtype)}",
        "Keep the computation in numpy floats from start to end (np.exp, @, /).",
        lambda o: _single(o) and _returned(o) and _bad_dtype(o.result),
    ),
)


def _output_names(o: Outcome) -> list[str]:
    return list(o.outputs) if o.outputs else [f"output {i + 1}" for i in range(len(o.expected))]


def _differences(o: Outcome) -> str:
    """Which output differs, and by how much."""
    if not isinstance(o.expected, tuple):
        return f"largest difference {np.max(np.abs(o.result - o.expected)):.3g}"
    names = _output_names(o)
    parts = []
    for name, mine, right in zip(names, o.result, o.expected):
        if mine.shape != right.shape:
            parts.append(f"{name} has shape {mine.shape} instead of {right.shape}")
        elif not _close(mine, right):
            parts.append(f"{name} is off by up to {np.max(np.abs(mine - right)):.3g}")
    good = [n for n, mine, right in zip(names, o.result, o.expected) if _close(mine, right)]
    return "; ".join(parts) + (f" ({', '.join(good)} right)" if good else "")


_FALLBACK_MISTAKES = (
    Mistake(
        "raised", "it raises an exception",
        _explain_error,
        lambda o: _error_entry(o)[2],
        lambda o: o.error is not None,
    ),
    Mistake(
        "wrong_shape", "the result has the wrong shape",
        lambda o: (f"Expected shape {o.expected.shape}, got {o.result.shape}." if _single(o)
                   else f"The shapes differ: {_differences(o)}."),
        "Write the shapes next to each line, e.g. (L, d_k) @ (d_k, S) -> (L, S), and check each step.",
        lambda o: (o.result.shape != o.expected.shape if _single(o)
                   else any(r.shape != e.shape for r, e in zip(o.result, o.expected))),
    ),
    Mistake(
        "not_finite", "the result contains NaN or infinity",
        "Some entries are NaN (not a number) or ±inf, usually from exp of a large number or from 0/0.",
        "Print the intermediate arrays on the case below to find where the first NaN or inf appears.",
        lambda o: not all(np.all(np.isfinite(part)) for part in (o.result if not _single(o) else [o.result])),
    ),
    Mistake(
        "wrong_dtype", "the result has the wrong kind of numbers",
        lambda o: f"The values are right, but your answer has dtype {o.result.dtype}; the answer "
        f"is an array of {o.expected.dtype}.",
        "Keep the computation in floating point (np.float64), from start to end.",
        lambda o: _single(o) and o.result.dtype.kind not in o.answer_kind and _close(
            o.result.astype(o.expected.dtype, copy=False), o.expected),
    ),
    Mistake(
        "wrong_values", "the numbers are off",
        lambda o: "The shape is right but the values differ from the expected answer "
        f"({_differences(o)}).",
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
    exercise's formula with that array in place of one argument.
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
    formula = exercise.formula or exercise.reference
    mistakes = []
    for name, array in arrays.items():
        for position, param in enumerate(params):
            def candidate(*args, _pos=position, _array=array):
                return formula(*args[:_pos], _array, *args[_pos + 1:])

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
    """One exercise: the learner's function name and arguments, the reference, cases, mistakes.

    ``reference`` is the library's own function (the truth the answers are compared with).
    ``formula`` is the bare textbook expression without input checks (default: the
    reference), from which "a notebook variable instead of an argument" candidates are
    built. ``outputs`` names the arrays of a function that returns several, e.g.
    ``("Q", "K", "V")``; empty for one array. ``answer_kind`` lists the dtype kinds a
    right answer may have ("f": floating point). ``time_limit`` is in seconds per case.
    ``adapt`` turns the learner's function into what the cases compare, when that is not its
    return value (lesson 06: a function returning W_Q, W_K is judged by where its head looks).
    """

    name: str
    params: tuple[str, ...]
    task: str
    reference: Callable
    cases: Callable[[], list[Case]]
    mistakes: tuple[Mistake, ...]
    start_hint: str
    formula: Callable | None = None
    outputs: tuple[str, ...] = ()
    answer_kind: str = "f"
    time_limit: float | None = None  # None: TIME_LIMIT_S
    adapt: Callable | None = None

    def check(self, fn) -> Feedback:
        """Run ``fn`` on every case and say PASSED, NOT YET (naming the mistake) or NOT ATTEMPTED YET.

        Never raises, except ``KeyboardInterrupt`` (the learner's stop button).
        """
        try:
            return self._check(fn)
        except Exception as exc:  # a check never raises
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
        if self.adapt is not None:
            fn = self.adapt(fn)
        limit = TIME_LIMIT_S if self.time_limit is None else self.time_limit
        outcomes = []
        for case in self.cases():
            expected = self.reference(*case.args.values())
            outcome = run(fn, case, expected, limit, self.answer_kind, self.outputs)
            outcomes.append(outcome)
            if outcome.timed_out:  # do not wait for the next cases too
                return self._feedback(_TYPE_MISTAKES[0], outcome)
        if all(o.not_attempted for o in outcomes):
            return self._not_attempted()
        failing = next((o for o in outcomes if not o.ok), None)
        if failing is None:
            labels = "; ".join(o.case.label for o in outcomes)
            return Feedback(
                self.name, PASSED,
                f"Well done: {self.name} {self.task} correctly on all {len(outcomes)} test cases ({labels}).",
            )
        return self._feedback(self._diagnose(fn, failing, outcomes), failing)

    def _feedback(self, mistake: Mistake, outcome: Outcome) -> Feedback:
        return mistake.feedback(self.name, outcome, self.outputs)

    def _diagnose(self, fn, failing: Outcome, outcomes: list[Outcome]) -> Mistake:
        typed = next((m for m in _TYPE_MISTAKES if m.test(failing)), None)
        if typed is not None:
            return typed
        if not failing.values_ok:
            for mistake in (*self.mistakes, *_uses_global_instead(self, fn)):
                if mistake.matches(failing, outcomes):  # the first in the table's order
                    return mistake
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
            what = _kind_of(fn)
        return Feedback(
            self.name, FAILED,
            f"The check needs your function itself, but it got {what}.",
            f"Pass the function without calling it: check(...)({self.name}), not {self.name}(...).",
            mistake="not_callable",
        )


def count(n: int, one: str, many: str) -> str:
    """``count(1, 'key', 'keys')`` → ``'1 key'``; ``count(3, ...)`` → ``'3 keys'``."""
    return f"{n} {one if n == 1 else many}"


def rng_cases(specs, seed: int, make) -> list[Case]:
    """``[make(rng, *spec) for spec in specs]`` with one seeded generator: random cases, same every run."""
    rng = np.random.default_rng(seed)
    return [make(rng, *spec) for spec in specs]
