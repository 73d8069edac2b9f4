"""Running a learner's function: on copies of a case's inputs, under a time limit, catching everything.

Part of the exercise engine (:mod:`.engine`): a :class:`Case` goes in, an :class:`Outcome`
comes out (the result or the exception, the source line it came from, the inputs it changed,
whether it ran out of time, whether it reached for the library's answer or changed the judge's
tools), and :func:`close` / :func:`behave_alike` compare answers.

Where the system has ``os.fork`` (Linux, macOS) a learner's function runs in a **forked child
process** (:data:`ISOLATION` ``"process"``): the child has the kernel's memory as it is, so a
function defined in a notebook cell runs unchanged, but

* a function that does not finish in time is **killed** with its whole process group (a loop with
  a bare ``except:`` inside it, ``time.sleep``, a C call that never returns), so nothing of it keeps
  a core busy after the check returns;
* whatever it changes while it runs (``np.allclose = ...``, the library, the engine) changes the
  child only; the child reports what it changed, and the check names it;
* its answer comes back through a pipe as data only (arrays, numbers, tuples, text): nothing the
  learner's code defined runs in the kernel afterwards (:func:`_load` accepts no other class);
* its ``print`` output is collected in the child and printed by the check.

Elsewhere (Windows) it runs in a worker thread, stopped by raising an exception in it
(``PyThreadState_SetAsyncExc``) again and again; a function that swallows every one of them (or
waits in one C call) keeps running, and the check then says so instead of claiming it stopped it.
In both, a profile hook watches which functions the learner's code calls (:class:`Watch`): the
library's own answer to the exercise counts as borrowed.
"""

from __future__ import annotations

import ast
import builtins
import copy
import ctypes
import inspect
import io
import os
import pickle
import re
import select
import signal
import sys
import textwrap
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import integrity

__all__ = ["TIME_LIMIT_S", "ISOLATION", "Case", "Refusal", "Outcome", "Watch", "run", "close", "error_kind",
           "behave_alike", "is_placeholder", "refused_clearly"]

#: Seconds one case may run before the check stops the learner's function. The inputs are tiny,
#: so a right answer takes a millisecond; a few seconds leave room for a loaded classroom server.
TIME_LIMIT_S = 3.0
_RTOL, _ATOL = 1e-6, 1e-9
#: How a learner's function runs under a time limit: "process" (a forked child, killed when late) where
#: ``os.fork`` exists, "thread" elsewhere.
ISOLATION = "process" if hasattr(os, "fork") else "thread"
_DUMPS = pickle.dumps  # captured: the child's own pickle module may be rebound by the code it runs
_MAX_OUTPUT = 20_000  # characters of a learner's print output shown back


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
    tampered: tuple[str, ...] = ()  # what the call changed of the judge's tools (e.g. "numpy.allclose")

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
    """Same structure and values within ``rtol=1e-6, atol=1e-9`` (bool arrays: equal), with the judge's
    own comparisons (:mod:`.integrity`), never numpy's module attributes."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(close(x, y, equal_nan) for x, y in zip(a, b)))
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    try:
        a, b = integrity.as_plain_array(a), integrity.as_plain_array(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind == "b" or b.dtype.kind == "b":
            return a.dtype == b.dtype and integrity.array_equal(a, b)
        return integrity.allclose(a, b, _RTOL, _ATOL, equal_nan)
    except (TypeError, ValueError, AttributeError):
        return False


def _same_input(before, after) -> bool:
    if isinstance(before, np.ndarray):
        return isinstance(after, np.ndarray) and integrity.array_equal(before, after,
                                                                       equal_nan=before.dtype.kind in "fc")
    return type(before) is type(after) and before == after


# --------------------------------------------------------------------------- what to watch for
@dataclass(frozen=True)
class Watch:
    """The library's answers to an exercise, which a learner's function must not call.

    ``codes`` maps the ``id`` of a code object to the name shown for it (``"ll.softmax"``);
    any code in ``folder`` (the exercises' own, e.g. ``EXERCISES["my_softmax"].reference``) counts
    too, except calls made by or to the check's own ``trusted`` code (an ``adapt`` wrapper).
    """

    codes: dict[int, str] = field(default_factory=dict)
    folder: str = ""
    trusted: frozenset[int] = frozenset()


_LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # lessons_lib/
_HERE = os.path.abspath(__file__)


def dotted(code) -> str:
    """``lessons_lib.core.attention.softmax`` for a code object of the library."""
    path = os.path.splitext(os.path.abspath(code.co_filename))[0]
    parts = os.path.relpath(path, os.path.dirname(_LIBRARY.rstrip(os.sep))).split(os.sep)
    return ".".join(p for p in parts if p != "__init__") + f".{code.co_qualname}"


class _Tracer:
    """A profile hook (``sys.setprofile``) that records the watched functions a call reaches, named by the
    library function the learner's code called to get there (``ll.attention_weights``, which runs the
    watched ``softmax_in_place``)."""

    def __init__(self, watch: Watch | None):
        self.watch, self.hits = watch, []

    def __call__(self, frame, event, arg):
        if event != "call" or self.watch is None:
            return
        try:
            self._look(frame)
        except Exception:  # a hook that raises would be switched off and its error land in the learner's code
            self.hits.append("the check's watch on the library (it failed: please tell your teacher)")

    def _look(self, frame) -> None:
        code, watch = frame.f_code, self.watch
        name = watch.codes.get(id(code))
        if name is None:
            if not (watch.folder and code.co_filename.startswith(watch.folder)):
                return
            name = dotted(code)
        caller = frame.f_back
        if id(code) in watch.trusted or (caller is not None and id(caller.f_code) in watch.trusted):
            return
        entry = frame
        while (entry.f_back is not None and entry.f_back.f_code.co_filename.startswith(_LIBRARY)
               and entry.f_back.f_code.co_filename != _HERE and id(entry.f_back.f_code) not in watch.trusted):
            entry = entry.f_back
        if entry is not frame:
            name = f"{dotted(entry.f_code)} (which runs {name})"
        if name not in self.hits:
            self.hits.append(name)


def _traced(fn: Callable, args: tuple, watch: Watch | None):
    """``fn(*args)`` with the profile hook on, in this thread and in any thread it starts.

    Returns ``(result, error, hits)``; a function that switches the hook off is reported as such.
    """
    tracer, result, error = _Tracer(watch), None, None
    with np.errstate(all="ignore"):  # numpy's error state is per thread
        threading.setprofile(tracer)
        sys.setprofile(tracer)
        try:
            result = fn(*args)
        except BaseException as exc:  # whatever the learner's code raises (even sys.exit)
            error = exc
        finally:
            hook = sys.getprofile()
            sys.setprofile(None)
            threading.setprofile(None)
    if watch is not None and hook is not tracer:
        tracer.hits.append("sys.setprofile (the check's watch on the library was switched off)")
    return result, error, tracer.hits


@dataclass
class _Ran:
    """What one call did, whichever way it ran."""

    result: Any = None
    error: BaseException | None = None
    line: str = ""
    args_after: tuple = ()
    timed_out: bool = False
    still_running: bool = False
    borrowed: tuple[str, ...] = ()
    tampered: tuple[str, ...] = ()


def _call(fn: Callable, args: tuple, time_limit: float | None, watch: Watch | None = None) -> _Ran:
    """``fn(*args)``: directly when there is no time limit (the check's own candidates), else isolated."""
    if time_limit is None:
        with np.errstate(all="ignore"):
            try:
                return _Ran(fn(*args), args_after=args)
            except BaseException as exc:
                return _Ran(error=exc, line=_learner_line(exc, fn), args_after=args)
    if ISOLATION == "process":
        try:
            return _call_in_child(fn, args, time_limit, watch)
        except OSError:  # fork refused (no memory, process limit): the thread below still works
            pass
    return _call_in_thread(fn, args, time_limit, watch)


# --------------------------------------------------------------------------- a forked child
def _call_in_child(fn: Callable, args: tuple, time_limit: float, watch: Watch | None) -> _Ran:
    """Run the call in a forked child that reports through a pipe; kill it (and anything it started)
    when it is not done within ``time_limit`` seconds, or when the learner presses the stop button."""
    snapshot = integrity.Snapshot(focus=True)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        try:
            os.close(read_end)
            _child(fn, args, watch, snapshot, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        os.setpgid(pid, pid)  # its own process group (the child does the same: no race)
    except OSError:
        pass
    chunks, finished = [], False
    deadline = time.monotonic() + time_limit
    try:
        while not finished:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([read_end], [], [], remaining)
            if ready:
                chunk = os.read(read_end, 1 << 20)
                chunks.append(chunk)
                finished = not chunk
    finally:  # KeyboardInterrupt (the stop button) included
        os.close(read_end)
        status = _end(pid)
    if not finished:
        return _Ran(timed_out=True)
    data = b"".join(chunks)
    try:
        report = _load(data) if data else {"broken": _exit_words(status)}
    except Exception as exc:  # nothing the child sent may break the check
        report = {"broken": f"its answer could not be read back ({type(exc).__name__})"}
    if not isinstance(report, dict) or "broken" in report:
        why = report.get("broken") if isinstance(report, dict) else None
        return _Ran(error=SystemExit(why or _exit_words(status)))
    if report.get("output"):
        print(report["output"], end="" if report["output"].endswith("\n") else "\n")
    error = _rebuild_error(report["error"]) if report.get("error") else None
    return _Ran(_unpack(report["result"]), error, report.get("line", ""),
                tuple(_unpack(a) for a in report["args"]), borrowed=tuple(report.get("borrowed", ())),
                tampered=tuple(report.get("tampered", ())))


def _child(fn, args, watch, snapshot, write_end) -> None:
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:  # torch's thread pool does not survive a fork: one thread, as in DataLoader workers
        try:
            torch.set_num_threads(1)
        except Exception:  # a torch too broken to set is the learner's code's problem, not the check's
            pass
    out = io.StringIO()
    sys.stdout = sys.stderr = out  # the learner's prints come back as text
    try:
        result, error, hits = _traced(fn, args, watch)
        report = {"result": _pack(result), "error": _pack_error(error, fn) if error is not None else None,
                  "line": _learner_line(error, fn) if error is not None else "",
                  "args": [_pack(a) for a in args], "borrowed": list(hits),
                  "tampered": snapshot.changes(),
                  "output": out.getvalue()[:_MAX_OUTPUT]}
        data = _DUMPS(report, 5)
    except BaseException as exc:  # the report says what went wrong instead
        data = _DUMPS({"broken": f"the check could not pack its answer ({type(exc).__name__})"}, 5)
    view = memoryview(data)
    while view:
        view = view[os.write(write_end, view):]


def _end(pid: int) -> int:
    """Kill the child's process group (whatever it started too) and reap the child; its wait status."""
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _exit_words(status: int) -> str:
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        return f"it crashed the Python process that ran it (signal {os.WTERMSIG(status)})"
    return "it ended the Python process that ran it (os._exit, or a crash) before returning"


# Packing an answer in the child: plain data only, tagged. Anything else travels as a description
# (its type's name and module, its repr), so that no class of the learner's is ever rebuilt here.
def _plain(value) -> bool:
    return type(value) in (bool, int, float, complex, str, bytes, type(None), type(Ellipsis)) or (
        isinstance(value, np.generic) and type(value).__module__ == "numpy")


def _pack(value, depth: int = 0):
    if _plain(value):
        return ("v", value)
    if isinstance(value, np.ndarray):
        array = np.ndarray.view(value, np.ndarray).copy()
        if array.dtype.kind == "O" and not all(_plain(v) for v in array.flat):
            array = np.array([repr(v)[:80] for v in array.flat], dtype=object).reshape(array.shape)
        return ("a", array)
    if isinstance(value, (tuple, list)) and depth < 3:
        return ("t" if isinstance(value, tuple) else "l", [_pack(v, depth + 1) for v in value])
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ is the learner's
        text = f"<{type(value).__name__} object>"
    return ("o", type(value).__name__, str(type(value).__module__), text[:200], inspect.isgenerator(value))


def _empty_generator():
    yield from ()


def _unpack(packed):
    tag = packed[0]
    if tag in ("v", "a"):
        return packed[1]
    if tag in ("t", "l"):
        items = [_unpack(p) for p in packed[1]]
        return tuple(items) if tag == "t" else items
    _, name, module, text, generator = packed
    if generator:
        return _empty_generator()
    stand_in = type(name, (), {"__module__": module, "__repr__": lambda self: text})
    return stand_in()


def _pack_error(exc: BaseException, fn: Callable) -> dict:
    try:
        text = str(exc)
    except Exception:
        text = ""
    return {"mro": [(c.__module__, c.__qualname__) for c in type(exc).__mro__
                    if issubclass(c, BaseException)], "text": text[:2000]}


def _rebuild_error(description: dict) -> BaseException:
    """An exception of the learner's exception's class (or of its nearest built-in or numpy base, named
    as the original), carrying its message."""
    mro = description["mro"]
    base = next(cls for cls in (_known_exception(m, q) for m, q in mro) if cls is not None)
    module, name = mro[0]
    text = description["text"]
    cls = type(name.rsplit(".", 1)[-1], (base,), {"__module__": module, "__str__": lambda self: text})
    error = cls.__new__(cls)
    error.args = (text,)
    return error


def _known_exception(module: str, qualname: str):
    if module == "builtins":
        cls = getattr(builtins, qualname, None)
    elif module.split(".")[0] == "numpy" and module in sys.modules and "." not in qualname:
        cls = getattr(sys.modules[module], qualname, None)
    else:
        return None
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


class _Unpickler(pickle.Unpickler):
    """Rebuilds numpy arrays and scalars, and nothing else that names a class."""

    ALLOWED = {("numpy", "dtype"), ("numpy", "ndarray"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy._core.multiarray", "scalar"), ("numpy._core.numeric", "_frombuffer"),
               ("numpy.core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
               ("numpy.core.numeric", "_frombuffer"), ("builtins", "Ellipsis"), ("builtins", "complex")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not data")


def _load(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()


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


def _call_in_thread(fn: Callable, args: tuple, time_limit: float, watch: Watch | None) -> _Ran:
    """The call in a worker thread (``KeyboardInterrupt``, the stop button, stops it too); what it
    changed of the judge's tools is named and put back."""
    snapshot = integrity.Snapshot()
    box: dict[str, Any] = {}

    def target():
        box["result"], box["error"], box["hits"] = _traced(fn, args, watch)

    worker = threading.Thread(target=target, name="lessons-exercise-check", daemon=True)
    worker.start()
    try:
        worker.join(time_limit)
    except KeyboardInterrupt:
        _raise_in_thread(worker, _TimeLimit)
        raise
    finally:
        tampered = tuple(sorted(set(snapshot.changes()) | set(integrity.planted())))
        snapshot.restore()
    if worker.is_alive():
        for _ in range(_STOP_TRIES):  # again and again: a bare `except:` inside a loop swallows one
            _raise_in_thread(worker, _TimeLimit)
            worker.join(_STOP_WAIT_S)
            if not worker.is_alive():
                break
        return _Ran(timed_out=True, still_running=worker.is_alive(), tampered=tampered)
    error = box.get("error")
    if isinstance(error, _TimeLimit):  # finished just as it was stopped
        return _Ran(timed_out=True, tampered=tampered)
    return _Ran(box.get("result"), error, _learner_line(error, fn) if error is not None else "", args,
                borrowed=tuple(box.get("hits", ())), tampered=tampered)


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
    outcome.borrowed, outcome.tampered = ran.borrowed, ran.tampered
    if not outcome.timed_out:  # a stopped function may have left its inputs half-written: say nothing
        outcome.mutated = tuple(name for name, after in zip(args, ran.args_after)
                                if not _same_input(case.args[name], after))
    return outcome


def _plain_answer(value):
    """An answer with every ndarray subclass in it turned into a plain ndarray (the judge compares those)."""
    if isinstance(value, tuple):
        return tuple(_plain_answer(v) for v in value)
    if isinstance(value, list):
        return [_plain_answer(v) for v in value]
    return integrity.as_plain_array(value)


def _learner_line(exc: BaseException | None, fn: Callable) -> str:
    """'line 3: return Q @ K' for the deepest frame of the learner's own code, or ''."""
    if exc is None:
        return ""
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
