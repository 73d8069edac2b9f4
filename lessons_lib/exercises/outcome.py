"""What one call of a learner's function did, and how answers compare: the verdict's raw material.

Part of the exercise engine (:mod:`.engine`): a :class:`Case` goes into :func:`.runner.run`, an
:class:`Outcome` comes out (the result or the exception, the learner's source line it came from, the
inputs it changed, whether it ran out of time, whether it reached for the library's answer or changed the
judge's tools). :class:`Ran` is what a call did before it became an outcome, whichever way it ran;
:func:`close` and :func:`behave_alike` compare answers with :func:`allclose` and :func:`array_equal`,
which reach numpy only through ``ndarray``'s own methods (a C type's slots, which no cell can rebind),
never through numpy's module attributes, and compare an array subclass as a plain array (its own ``==``
does not vote).
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["InputRequested", "Case", "Refusal", "refused_clearly", "Outcome", "Ran", "close", "same_input",
           "learner_files", "learner_line", "error_kind", "behave_alike", "allclose", "array_equal",
           "as_plain_array"]

_RTOL, _ATOL = 1e-6, 1e-9
# Captured when the engine is imported: the comparisons reach numpy through ndarray's own type slots
_NDARRAY, _ERRSTATE = np.ndarray, np.errstate


class InputRequested(Exception):
    """Raised when a learner's function asks for input (``input()``, ``breakpoint()``, ``pdb``, a read of
    standard input): a check cannot type an answer, so it stops the function at once."""


# --------------------------------------------------------------------------- cases and outcomes
@dataclass(frozen=True)
class Case:
    """One input for an exercise: ``args`` in call order (name -> value), a label to show.

    ``tag`` marks cases a mistake's predicate looks for (e.g. ``"large"`` logits).
    """

    label: str
    args: dict[str, Any]
    tag: str = ""


@dataclass(frozen=True)
class Refusal:
    """The right answer to a case whose input cannot be honoured: stop with a ``ValueError`` that says why.

    An exercise's reference returns one for such a case (lesson 11: an odd d_head), with the library's own
    ``message``. A learner's function answers it right when it raises ``ValueError`` whose message names
    the problem: one of ``words`` (numpy's "operands could not be broadcast" does not tell the caller what
    was wrong).
    """

    message: str
    words: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"ValueError: {self.message}"


def refused_clearly(error: BaseException | None, refusal: Refusal) -> bool:
    """True when ``error`` is the refusal asked for: a ValueError whose message names the problem."""
    if not isinstance(error, ValueError):
        return False
    text = str(error).lower()
    return not refusal.words or any(word.lower() in text for word in refusal.words)


@dataclass
class Outcome:
    """What one function did on one case: its result or its exception, and side effects."""

    case: Case
    result: Any = None
    error: BaseException | None = None
    line: str = ""  # the learner's source line where the error happened, when known
    mutated: tuple[str, ...] = ()
    expected: Any = None  # an array, a tuple of arrays for exercises with several outputs, or a Refusal
    timed_out: bool = False
    answer_kind: str = "f"  # dtype kinds a right answer may have
    outputs: tuple[str, ...] = ()  # names of the outputs, for exercises that return several
    time_limit: float | None = None  # the limit this case ran under, in seconds
    still_running: bool = False  # timed out, and could not be stopped (thread mode only)
    borrowed: tuple[str, ...] = ()  # the library's answers the function called (e.g. "ll.softmax")
    absent: tuple[str, ...] = ()  # those it called where the grade's judge had put them out of reach
    tampered: tuple[str, ...] = ()  # what the call changed of the judge's tools (e.g. "numpy.allclose")
    too_deep: bool = False  # it went so deep (Python's recursion limit) that the watch lost sight of it
    left_running: tuple[str, ...] = ()  # processes it started and left running when it returned (stopped)

    @property
    def is_array(self) -> bool:
        return self.error is None and isinstance(self.result, np.ndarray)

    @property
    def values_ok(self) -> bool:
        if isinstance(self.expected, Refusal):
            return refused_clearly(self.error, self.expected)
        return self.error is None and _matches(self.result, self.expected, self.answer_kind)

    @property
    def ok(self) -> bool:
        return self.values_ok and not self.mutated and not self.left_running and not self.too_deep

    @property
    def not_attempted(self) -> bool:
        return isinstance(self.error, NotImplementedError) or (self.error is None and self.result is Ellipsis)


def _matches(result, expected, kinds: str = "f") -> bool:
    """A right answer: the same structure as ``expected``, arrays of an allowed dtype kind, close values."""
    if isinstance(expected, tuple):
        return (isinstance(result, (tuple, list)) and len(result) == len(expected)
                and all(_matches(r, e, kinds) for r, e in zip(result, expected)))
    return isinstance(result, np.ndarray) and result.dtype.kind in kinds and close(result, expected)


# --------------------------------------------------------------------------- comparisons
def as_plain_array(x):
    """``x`` as an exact ``numpy.ndarray`` (a subclass's overridden ``==`` or ``__array_ufunc__``
    would otherwise take part in the comparison), or ``x`` unchanged when it is not an array."""
    if isinstance(x, _NDARRAY) and type(x) is not _NDARRAY:
        return _NDARRAY.view(x, _NDARRAY)
    return x


def allclose(a, b, rtol: float, atol: float, equal_nan: bool = False) -> bool:
    """``np.allclose(a, b, rtol, atol, equal_nan)`` for two arrays of one shape, without numpy's
    module attributes: |a − b| ≤ atol + rtol·|b| entry by entry, equal infinities equal."""
    a, b = as_plain_array(a), as_plain_array(b)
    with _ERRSTATE(all="ignore"):
        ok = a == b
        ok |= _NDARRAY.__abs__(a - b) <= atol + rtol * _NDARRAY.__abs__(b)
        if equal_nan:
            ok |= (a != a) & (b != b)
        return True if _NDARRAY.all(ok) else False


def array_equal(a, b, equal_nan: bool = False) -> bool:
    """``np.array_equal`` without numpy's module attributes: same shape, every entry equal."""
    a, b = as_plain_array(a), as_plain_array(b)
    if a.shape != b.shape:
        return False
    with _ERRSTATE(all="ignore"):
        same = a == b
        if equal_nan and a.dtype.kind in "fc":
            same |= (a != a) & (b != b)
        return True if _NDARRAY.all(same) else False


def close(a, b, equal_nan: bool = False) -> bool:
    """Same structure and values within ``rtol=1e-6, atol=1e-9`` (bool arrays: equal), with
    :func:`allclose` and :func:`array_equal`, never numpy's module attributes."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(close(x, y, equal_nan) for x, y in zip(a, b)))
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    try:
        a, b = as_plain_array(a), as_plain_array(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind == "b" or b.dtype.kind == "b":
            return a.dtype == b.dtype and array_equal(a, b)
        return allclose(a, b, _RTOL, _ATOL, equal_nan)
    except (TypeError, ValueError, AttributeError):
        return False


def same_input(before, after) -> bool:
    if isinstance(before, np.ndarray):
        return isinstance(after, np.ndarray) and array_equal(before, after,
                                                                       equal_nan=before.dtype.kind in "fc")
    return type(before) is type(after) and before == after


@dataclass
class Ran:
    """What one call did, whichever way it ran."""

    result: Any = None
    error: BaseException | None = None
    line: str = ""
    args_after: tuple = ()
    timed_out: bool = False
    still_running: bool = False
    borrowed: tuple[str, ...] = ()
    tampered: tuple[str, ...] = ()
    too_deep: bool = False
    left_running: tuple[str, ...] = ()
    broken: str = ""  # the check's own watch failed (not the learner's doing)


def learner_files(fn: Callable) -> frozenset[str]:
    """The files (notebook cells) a learner's code comes from: a function's own, or what an object that
    builds the learner's function where it runs says (``learner_files``, the grade's judge)."""
    named = getattr(type(fn), "learner_files", None)
    if named is not None:
        return frozenset(fn.learner_files)
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    return frozenset({filename}) if filename else frozenset()


def learner_line(exc: BaseException | None, fn: Callable) -> str:
    """'line 3: return Q @ K' for the deepest frame of the learner's own code, or ''."""
    if exc is None:
        return ""
    files = learner_files(fn)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in files]
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
    if isinstance(mine.expected, Refusal) and isinstance(mine.error, ValueError):
        return isinstance(theirs.error, ValueError)   # refusing the input, whatever the words, is alike
    if mine.error is not None or theirs.error is not None:
        return mine.error is not None and theirs.error is not None and (
            error_kind(mine.error) == error_kind(theirs.error)
        )
    return _same_answer(mine.result, theirs.result)


def _same_answer(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_answer(x, y) for x, y in zip(a, b))
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and close(a, b, equal_nan=True)


