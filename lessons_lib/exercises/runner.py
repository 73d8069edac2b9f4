"""Running a learner's function: on copies of a case's inputs, under a time limit, catching everything.

Part of the exercise engine (:mod:`.engine`): a :class:`Case` goes in, an :class:`Outcome`
comes out (the result or the exception, the source line it came from, the inputs it changed,
whether it ran out of time), and :func:`close` / :func:`behave_alike` compare answers.
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

__all__ = ["TIME_LIMIT_S", "Case", "Outcome", "run", "close", "error_kind", "behave_alike", "is_placeholder"]

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
    return isinstance(result, np.ndarray) and result.dtype.kind in kinds and close(result, expected)


def close(a, b, equal_nan: bool = False) -> bool:
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(close(x, y, equal_nan) for x, y in zip(a, b)))
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


def error_kind(exc: BaseException) -> str:
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


def behave_alike(mine: Outcome, theirs: Outcome) -> bool:
    if mine.timed_out or theirs.timed_out:
        return False
    if mine.error is not None or theirs.error is not None:
        return mine.error is not None and theirs.error is not None and (
            error_kind(mine.error) == error_kind(theirs.error)
        )
    return _same_answer(mine.result, theirs.result)


def _same_answer(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_answer(x, y) for x, y in zip(a, b))
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and close(a, b, equal_nan=True)


def is_placeholder(fn: Callable) -> bool:
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
