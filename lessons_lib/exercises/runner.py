"""Running a learner's function: on copies of a case's inputs, under a time limit, catching everything.

Part of the exercise engine (:mod:`.engine`): :func:`run` takes a :class:`~.outcome.Case` and gives an
:class:`~.outcome.Outcome`. Where the system has ``os.fork`` (Linux, macOS) a learner's function runs in a
**forked child process** (:data:`ISOLATION` ``"process"``), from four parts, each a module:

* :mod:`.outcome`, what a call did and how answers compare (the verdict's raw material);
* :mod:`.child`, what runs in the child: the call under the watch, input refused, prints collected, the
  library's answers absent where the grade's judge runs it;
* :mod:`.processes`, the check's side: the fork, the child's own clock, the time limit, and stopping the
  child and every process it started;
* :mod:`.wire`, the pipe between them: data only, wire.bounded, nothing of the learner's rebuilt here;

and :mod:`.watch`, the profile hook that names the library's answers a call reached.

Elsewhere (Windows) it runs in a worker thread, stopped by raising an exception in it
(``PyThreadState_SetAsyncExc``) again and again; a function that swallows every one of them (or
waits in one C call) keeps running, and the check then says so instead of claiming it stopped it.
"""

from __future__ import annotations

import ast
import builtins
import copy
import ctypes
import inspect
import os
import sys
import textwrap
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _seal
from . import wire
from .child import NoInput, as_input_request, refuse_breakpoint, refuse_input
from .outcome import Case, Outcome, Ran, as_plain_array, learner_line, same_input
from .processes import call_in_child
from .watch import SWITCHED_OFF, Traced, Watch, traced

__all__ = ["TIME_LIMIT_S", "ISOLATION", "SETTINGS", "run", "is_placeholder"]

#: Seconds one case may run before the check stops the learner's function: the child's own time, not
#: the time it waited for a processor (:mod:`.processes`). The inputs are tiny, so a right answer
#: takes a millisecond.
TIME_LIMIT_S = 3.0
#: How a learner's function runs under a time limit: "process" (a forked child, killed when late) where
#: ``os.fork`` exists, "thread" elsewhere.
ISOLATION = "process" if hasattr(os, "fork") else "thread"
#: How a check runs, which a test (or a teacher) may set: not the judge's tools, so the seal ignores them.
SETTINGS = ("ISOLATION", "TIME_LIMIT_S", "_STOP_TRIES", "_STOP_WAIT_S")


def _call(fn: Callable, args: tuple, time_limit: float | None, watch: Watch | None = None) -> Ran:
    """``fn(*args)``: directly when there is no time limit (the check's own candidates), else isolated."""
    if time_limit is None:
        with np.errstate(all="ignore"):
            try:
                return Ran(fn(*args), args_after=args)
            except BaseException as exc:
                return Ran(error=exc, line=learner_line(exc, fn), args_after=args)
    if ISOLATION == "process":
        try:
            return call_in_child(fn, args, time_limit, watch)
        except OSError:  # fork refused (no memory, process limit): the thread below still works
            pass
    return _call_in_thread(fn, args, time_limit, watch)


# --------------------------------------------------------------------------- a worker thread (no fork)
class _TimeLimit(BaseException):
    """Raised inside a learner's function that ran past its time limit (a BaseException, so that
    a learner's ``except Exception`` cannot swallow it)."""


def _raise_in_thread(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Ask Python to raise ``exc_type`` in ``thread`` at its next bytecode (PyThreadState_SetAsyncExc).

    A thread inside one long C call (a huge matrix product, ``time.sleep``) stops when that call
    returns, if it ever does.
    """
    if thread.ident is None or not thread.is_alive():
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type))


#: After the time limit, a thread is asked to stop this often for this long before the check gives up.
_STOP_TRIES, _STOP_WAIT_S = 40, 0.05


def _call_in_thread(fn: Callable, args: tuple, time_limit: float, watch: Watch | None) -> Ran:
    """The call in a worker thread (``KeyboardInterrupt``, the stop button, stops it too); what it
    changed of the checks' tools is named and put back (:mod:`lessons_lib._seal`)."""
    box: dict[str, Traced] = {}

    def target():
        box["done"] = traced(fn, args, watch)

    worker = threading.Thread(target=target, name="lessons-exercise-check", daemon=True)
    stdin, hook, ask = sys.stdin, sys.breakpointhook, builtins.input
    sys.stdin, sys.breakpointhook = NoInput(), refuse_breakpoint
    builtins.input = refuse_input  # the kernel's main thread waits meanwhile: it asks for nothing
    worker.start()
    try:
        worker.join(time_limit)
    except KeyboardInterrupt:
        _raise_in_thread(worker, _TimeLimit)
        raise
    finally:
        tampered = tuple(_seal.changes())
        _seal.restore()  # what the learner's call changed; the check's own replacements next
        sys.stdin, sys.breakpointhook, builtins.input = stdin, hook, ask
    if worker.is_alive():
        for _ in range(_STOP_TRIES):  # again and again: a bare `except:` inside a loop swallows one
            _raise_in_thread(worker, _TimeLimit)
            worker.join(_STOP_WAIT_S)
            if not worker.is_alive():
                break
        return Ran(timed_out=True, still_running=worker.is_alive(), tampered=tampered)
    done = box.get("done", Traced())
    error = as_input_request(done.error)
    if isinstance(error, _TimeLimit):  # finished just as it was stopped
        return Ran(timed_out=True, tampered=tampered)
    return Ran(wire.bounded(done.result, wire.answer_items(args)), error,
               learner_line(error, fn) if error is not None else "", args, borrowed=tuple(done.hits),
               tampered=tampered, too_deep=done.too_deep, broken=done.broken)


def run(fn: Callable, case: Case, expected: Any = None, time_limit: float | None = None,
        answer_kind: str = "f", outputs: tuple[str, ...] = (), watch: Watch | None = None) -> Outcome:
    """Call ``fn`` on copies of the case's arguments, catching everything it may do.

    ``time_limit`` (seconds, or None for the check's own trusted candidates) stops a function that
    runs too long, and runs it isolated (:data:`ISOLATION`); ``watch`` names the library's answers
    it must not call.
    """
    args = {name: copy.deepcopy(value) for name, value in case.args.items()}
    outcome = Outcome(case, expected=expected, answer_kind=answer_kind, outputs=outputs,
                      time_limit=time_limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ran = _call(fn, tuple(args.values()), time_limit, watch)
    outcome.result, outcome.error, outcome.line = _plain_answer(ran.result), ran.error, ran.line
    outcome.timed_out, outcome.still_running = ran.timed_out, ran.still_running
    absent = wire.ABSENT
    outcome.borrowed = tuple(name.removeprefix(absent) for name in ran.borrowed if name != SWITCHED_OFF)
    outcome.absent = tuple(name.removeprefix(absent) for name in ran.borrowed if name.startswith(absent))
    outcome.tampered = ran.tampered + ((SWITCHED_OFF,) if SWITCHED_OFF in ran.borrowed else ())
    outcome.too_deep, outcome.left_running = ran.too_deep, ran.left_running
    if ran.broken:  # the check's own watch failed: its problem, said as such by the engine
        raise RuntimeError(f"the check's watch on the library failed ({ran.broken})")
    if not outcome.timed_out:  # a stopped function may have left its inputs half-written: say nothing
        outcome.mutated = tuple(name for name, after in zip(args, ran.args_after)
                                if not same_input(case.args[name], after))
    return outcome


def _plain_answer(value):
    """An answer with every ndarray subclass in it turned into a plain ndarray (the judge compares those)."""
    if isinstance(value, tuple):
        return tuple(_plain_answer(v) for v in value)
    if isinstance(value, list):
        return [_plain_answer(v) for v in value]
    return as_plain_array(value)


def is_placeholder(fn: Callable) -> bool:
    """True when the function body is only a docstring, ``pass`` or ``...`` (its source from
    ``inspect``, or from an object that builds the learner's function where it runs: ``function_source``)."""
    try:
        source = fn.function_source() if hasattr(type(fn), "function_source") else inspect.getsource(fn)
        tree = ast.parse(textwrap.dedent(source or ""))
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
