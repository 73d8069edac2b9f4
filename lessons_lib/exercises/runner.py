"""Running a learner's function: on copies of a case's inputs, under a time limit, catching everything.

Part of the exercise engine (:mod:`.engine`): a :class:`Case` goes in, an :class:`Outcome`
comes out (the result or the exception, the source line it came from, the inputs it changed,
whether it ran out of time, whether it reached for the library's answer or changed the judge's
tools), and :func:`close` / :func:`behave_alike` compare answers.

Where the system has ``os.fork`` (Linux, macOS) a learner's function runs in a **forked child
process** (:data:`ISOLATION` ``"process"``): the child has the kernel's memory as it is, so a
function defined in a notebook cell runs unchanged, but

* a function that does not finish in time is **killed**, and so is every process it started, in its
  process group or out of it (a new session, a double fork: on Linux the child is their "subreaper" and
  the check stops each of them, :func:`_stop_left`), so nothing of it keeps a core busy after the check
  returns; a function that returns but leaves a process running is told so, and the process stopped;
* **time is the child's own**: what counts against :data:`TIME_LIMIT_S` is the time since the fork less
  the time the child waited for a processor (Linux: its run delay), so a correct function on a busy
  classroom server is not "late" because others kept the processors (:class:`_ChildClock`);
* ``input()``, ``breakpoint()``, a debugger or a read of standard input fails at once
  (:class:`InputRequested`): a check cannot type, and waiting would look like an endless loop;
* a child killed by the system (the out-of-memory killer of a server) and a ``MemoryError`` are said as
  memory; a function that recurses until Python's limit is said as such, never as reaching for the
  library (the watch below loses sight of calls that deep, and says so);
* whatever it changes while it runs (``np.allclose = ...``, the library, the engine) changes the
  child only; the child reports what it changed, and the check names it;
* its answer comes back through a pipe as data only (arrays, numbers, tuples, text), and only as much
  of it as a verdict needs: an answer far larger than its inputs comes back as its shape and dtype, not
  its numbers (:func:`_pack`), so a 100 MB wrong answer does not grow the kernel; nothing the learner's
  code defined runs in the kernel afterwards (:func:`_load` accepts no other class);
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
import functools
import inspect
import io
import os
import pickle
import re
import select
import signal
import struct
import sys
import textwrap
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _seal
from . import integrity

__all__ = ["TIME_LIMIT_S", "ISOLATION", "SETTINGS", "Case", "Refusal", "Outcome", "Watch", "InputRequested",
           "run", "close", "error_kind", "behave_alike", "is_placeholder", "refused_clearly", "learner_files",
           "keep_from_children", "absent_answers", "LibraryAnswerAbsent"]

#: Seconds one case may run before the check stops the learner's function: the child's own time, not
#: the time it waited for a processor (:class:`_ChildClock`). The inputs are tiny, so a right answer
#: takes a millisecond.
TIME_LIMIT_S = 3.0
_RTOL, _ATOL = 1e-6, 1e-9
#: How a learner's function runs under a time limit: "process" (a forked child, killed when late) where
#: ``os.fork`` exists, "thread" elsewhere.
ISOLATION = "process" if hasattr(os, "fork") else "thread"
_DUMPS = pickle.dumps  # captured: the child's own pickle module may be rebound by the code it runs
_MAX_OUTPUT = 20_000  # characters of a learner's print output shown back
#: An answer may hold this many numbers, or 64 times as many as its inputs, before only its shape and
#: dtype come back (:func:`_pack`): every exercise's right answer is the size of its inputs or smaller.
_ANSWER_ITEMS = 1 << 16
#: How a check runs, which a test (or a teacher) may set: not the judge's tools, so the seal ignores them.
SETTINGS = ("ISOLATION", "TIME_LIMIT_S", "_STOP_TRIES", "_STOP_WAIT_S")
#: File descriptors the learner's child must not hold (the grade's judge keeps its answer here).
_PRIVATE_FDS: set[int] = set()


def keep_from_children(fd: int) -> None:
    """Close ``fd`` in every child that runs a learner's function (the judge's channel to autograde)."""
    _PRIVATE_FDS.add(fd)


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


# --------------------------------------------------------------------------- the library's answer, absent
class LibraryAnswerAbsent(Exception):
    """Raised by the stand-in of one of the library's answers to an exercise, where the grade's judge runs a
    learner's answer: the answer is absent there, whichever thread, module path or reference calls it."""


#: How a stand-in's call is told apart from a watched call on the wire from the child (``H`` messages).
_ABSENT = "absent:"
#: In a forked child (set by ``_child``): ``"report"``, how a watched call is sent to the check the moment it
#: happens. (A dict filled, never a name rebound: the seal of the library counts a rebound name of this
#: module as a change.)
_IN_CHILD: dict = {}


def absent_answers(answers: dict[Callable, str]) -> None:
    """In a child about to run a learner's code (:mod:`.judge`): each of the library's ``answers`` (the
    function -> the name shown for it, ``ll.rope``) becomes its own stand-in, in place. Its code is swapped
    for one that tells the check, through the child's pipe, that the answer was called, and raises
    :class:`LibraryAnswerAbsent` (:func:`_absent`); so every way the child holds the function runs the
    stand-in: a module's name for it, an exercise's ``reference`` or ``library_answers``, a
    ``functools.partial``, a closure, a lookup in ``gc``. Nothing in the child keeps the answer's own code
    (the seal's record of it is the stand-in's now, the namespaces scanned clean are forgotten), so it cannot
    be rebuilt from there either. The swap is the check's own, not counted as the learner's change."""
    if "report" not in _IN_CHILD:
        raise RuntimeError("the library's answers are made absent only in a child that runs a learner's code")
    for function, shown in answers.items():
        if type(function) is not types.FunctionType:
            raise TypeError(f"{shown} is not a Python function: the check cannot make it absent")
        function.__code__ = _stand_in_code(len(function.__code__.co_freevars))
        function.__defaults__ = None
        function.__kwdefaults__ = {"_answer": _absent(shown)}
        _seal.accept_state(function)
    integrity.forget_scans()


@functools.cache
def _stand_in_code(free: int) -> types.CodeType:
    """The code a stand-in runs: it calls its keyword default ``_answer`` (:func:`_absent`'s function) and
    nothing else. A function's code can only be swapped for code with as many free variables as its closure
    holds: this one has ``free`` of them, unused."""
    names = [f"_free{i}" for i in range(free)]
    source = (f"def outer({', '.join(names)}):\n"
              "    def library_answer(*args, _answer=None, **kwargs):\n"
              f"        {', '.join(names) or 'pass'}\n"
              "        return _answer()\n"
              "    return library_answer\n")
    namespace: dict = {}
    exec(compile(source, __file__, "exec"), namespace)
    return namespace["outer"](*names).__code__


def _absent(shown: str) -> Callable:
    """What a stand-in for the library's answer ``shown`` (``"ll.rope"``) calls: it tells the check at once,
    through the child's pipe, that the answer was called (from any thread, partial or module path), and
    raises :class:`LibraryAnswerAbsent`; it holds nothing of the answer itself."""
    report = _IN_CHILD.get("report")

    def library_answer(*args, **kwargs):
        if report is not None:
            report(_ABSENT + shown)
        raise LibraryAnswerAbsent(f"{shown} is the course's own answer: it is not there where the grade runs "
                                  "your function")

    library_answer.__qualname__ = library_answer.__name__ = shown.rsplit(".", 1)[-1]
    return library_answer


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

    def __init__(self, watch: Watch | None, report: Callable[[str], None] | None = None):
        self.watch, self.hits, self.report = watch, [], report
        self.too_deep = False  # a call so deep that the hook itself hit Python's recursion limit
        self.broken = ""  # the hook's own failure, if any: the check's problem, never the learner's

    def hit(self, name: str) -> None:
        """Record a watched call, and send it at once where the check reads it (a child's pipe): what is
        sent, the code watched cannot take back."""
        if name not in self.hits:
            self.hits.append(name)
            if self.report is not None:
                self.report(name)

    def __call__(self, frame, event, arg):
        if event == "c_call":
            if (arg is _SETPROFILE and self.watch is not None and frame.f_code.co_filename != _HERE
                    and id(frame.f_code) not in self.watch.trusted):  # not the check's own call
                self.hit(SWITCHED_OFF)
            return
        if event != "call" or self.watch is None:
            return
        try:
            self._look(frame)
        except RecursionError:  # the learner's recursion, not ours: the hook cannot look this deep
            self.too_deep = True
        except Exception as exc:  # a hook that raised would be switched off, its error in the learner's code
            self.broken = self.broken or f"{type(exc).__name__}: {exc}"

    def _look(self, frame) -> None:
        code, watch = frame.f_code, self.watch
        name = watch.codes.get(id(code))
        if name is None:
            if not (watch.folder and code.co_filename.startswith(watch.folder)) or code.co_filename == _HERE:
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
        self.hit(name)


_SETPROFILE, _GETPROFILE = sys.setprofile, sys.getprofile  # captured: the code watched may rebind sys's
#: What the watch says of code that switched it off (a change to the judge's tools, not a library answer).
SWITCHED_OFF = "the check's watch on the library (switched off with sys.setprofile)"


@dataclass
class _Traced:
    """What :func:`_traced` saw: the call's result or error, the watched functions it reached, whether the
    watch lost sight of it in a recursion as deep as Python allows, and the watch's own failure."""

    result: Any = None
    error: BaseException | None = None
    hits: list[str] = field(default_factory=list)
    too_deep: bool = False
    broken: str = ""


def _traced(fn: Callable, args: tuple, watch: Watch | None,
            report: Callable[[str], None] | None = None) -> _Traced:
    """``fn(*args)`` with the profile hook on, in this thread and in any thread it starts.

    A function that switches the hook off (it called ``sys.setprofile``) is reported as such. A recursion
    as deep as Python allows switches it off too, without that call: at the recursion limit the hook
    itself cannot be called, and Python drops it. That is ``too_deep``, the learner's own recursion (an
    error the check explains, or, caught, a function the check could not follow), never an accusation.
    """
    tracer, done = _Tracer(watch, report), _Traced()
    with np.errstate(all="ignore"):  # numpy's error state is per thread
        threading.setprofile(tracer)
        _SETPROFILE(tracer)
        try:
            done.result = fn(*args)
        except BaseException as exc:  # whatever the learner's code raises (even sys.exit)
            done.error = exc
        finally:
            hook = _GETPROFILE()
            _SETPROFILE(None)
            threading.setprofile(None)
    if hook is not tracer and watch is not None and SWITCHED_OFF not in tracer.hits:
        tracer.too_deep = True  # switched off without a call to sys.setprofile: a recursion did it
    done.hits, done.broken, done.too_deep = tracer.hits, tracer.broken, tracer.too_deep
    return done


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
    too_deep: bool = False
    left_running: tuple[str, ...] = ()
    broken: str = ""  # the check's own watch failed (not the learner's doing)


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
#: Before each message from the child: its kind (b"H" a watched call, b"R" the report) and its length, so
#: that the report's end needs no end of file, and a watched call is sent the moment it happens.
_HEADER = struct.Struct("!cQ")


def _call_in_child(fn: Callable, args: tuple, time_limit: float, watch: Watch | None) -> _Ran:
    """Run the call in a forked child that reports through a pipe; stop it (and everything it started)
    when its own time passes ``time_limit`` seconds, when it has reported, or when the learner presses
    the stop button."""
    snapshot = integrity.Snapshot(focus=True)
    items = _answer_items(args)
    read_end, write_end = os.pipe()
    hold_read, hold_write = os.pipe()  # the child waits on it once it has reported: see _stop_left
    oom_kills = _oom_kills()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        try:
            os.close(read_end)
            os.close(hold_write)
            _child(fn, args, watch, snapshot, write_end, items)
            os.read(hold_read, 1)  # alive, as the subreaper of what the call started, until it is stopped
        finally:
            os._exit(0)
    os.close(write_end)
    os.close(hold_read)
    try:
        os.setpgid(pid, pid)  # its own process group (the child does the same: no race)
    except OSError:
        pass
    report, clock = _Reader(read_end, _MAX_REPORT + 128 * items), _ChildClock(pid)  # answer and inputs
    left: tuple[str, ...] = ()
    try:
        while not report.done:
            remaining = time_limit - clock.elapsed()
            if select.select([read_end], [], [], min(max(remaining, 0.0), _LOOK_S))[0]:
                report.read()  # what came while this process itself waited for a processor counts too
            elif remaining <= 0:
                break
    finally:  # KeyboardInterrupt (the stop button) included
        os.close(read_end)
        ended = report.complete is False and _ended(pid, grace=1.0)  # its pipe closed: did it end?
        left = () if ended else _stop_left(pid)
        os.close(hold_write)
        status = _end(pid)
    if not report.done:
        return _Ran(timed_out=True)
    return _received(report, status, _oom_kills() > oom_kills, left if report.data else ())


def _received(report: _Reader, status: int, oom_killed: bool, left: tuple[str, ...]) -> _Ran:
    """What the child's report says, or why there is none (it exited, crashed or was killed)."""
    if not report.data:
        if report.complete is False and _killed_by_system(status):
            return _Ran(error=MemoryError(_memory_words(oom_killed)))
        return _Ran(error=SystemExit(_exit_words(status)))
    try:
        sent = _load(report.data)
    except Exception as exc:  # nothing the child sent may break the check
        sent = {"broken": f"its answer could not be read back ({type(exc).__name__})"}
    if not isinstance(sent, dict) or "broken" in sent:
        why = sent.get("broken") if isinstance(sent, dict) else None
        return _Ran(error=SystemExit(why or _exit_words(status)))
    if sent.get("output"):
        print(sent["output"], end="" if sent["output"].endswith("\n") else "\n")
    error = _rebuild_error(sent["error"]) if sent.get("error") else None
    borrowed = [*report.hits, *(name for name in sent.get("borrowed", ()) if name not in report.hits)]
    return _Ran(_unpack(sent["result"]), error, sent.get("line", ""), tuple(_unpack(a) for a in sent["args"]),
                borrowed=tuple(borrowed), tampered=tuple(sent.get("tampered", ())),
                too_deep=bool(sent.get("too_deep")), left_running=left,
                broken=str(sent.get("broken_watch", "")))


#: The most a report may hold besides the answer's numbers (the prints, the error's text, the names).
_MAX_REPORT = 1 << 20


class _Reader:
    """What the child sends, read as it arrives: each watched call as it happens (``hits``), then the report.
    ``done`` once the report is all there, or once the pipe closed without it (``complete`` False: the
    child ended before reporting); ``data`` is the report, or empty."""

    def __init__(self, fd: int, most: int):
        self.fd, self.most, self.buffer = fd, most, bytearray()
        self.done, self.complete, self.data = False, None, b""
        self.hits: list[str] = []

    def read(self) -> None:
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:  # the pipe closed before the whole report came
            self.done, self.complete = True, False
            return
        self.buffer += chunk
        while not self.done and len(self.buffer) >= _HEADER.size:
            kind, size = _HEADER.unpack_from(self.buffer)
            if size > self.most:  # more than any honest message: refused, not read into memory
                self.done, self.complete, self.buffer = True, True, bytearray()
                self.data = _DUMPS({"broken": "its answer was too large to read back"}, 5)
                return
            if len(self.buffer) < _HEADER.size + size:
                return
            body = bytes(self.buffer[_HEADER.size:_HEADER.size + size])
            del self.buffer[:_HEADER.size + size]
            if kind == b"H":
                self.hits.append(body.decode("utf-8", "replace")[:500])
            else:
                self.done, self.complete, self.data = True, True, body


def _send(fd: int, kind: bytes, body: bytes) -> None:
    view = memoryview(_HEADER.pack(kind, len(body)) + body)
    while view:
        view = view[os.write(fd, view):]


class _ChildClock:
    """The seconds a child has used of its time limit: its time on a processor, and the time it was not
    runnable (asleep in ``time.sleep``, blocked on a pipe or a lock, stopped), but never the time it was
    ready to run and waited for a processor. On a busy classroom server a correct function waits behind
    others, for seconds at times; that wait is not its doing. (Linux's run delay in ``/proc/PID/schedstat``
    is added only when a wait ends, so the clock reads the child's time on a processor there and its state
    in ``/proc/PID/stat`` each time it is asked: an interval over which the child was not runnable counts
    whole, any other only for its processor time.) Without ``/proc`` (macOS) it is the wall time since the
    fork."""

    def __init__(self, pid: int):
        self.pid, self.start = pid, time.monotonic()
        self.last, self.used, self.on_cpu, self.waiting = self.start, 0.0, 0.0, False
        self.proc = os.path.exists(f"/proc/{pid}/schedstat")

    def _sample(self) -> tuple[float, bool] | None:
        """(seconds on a processor, whether it is runnable now), or None once it is gone."""
        try:
            with open(f"/proc/{self.pid}/schedstat", "rb") as stats:
                on_cpu = int(stats.read().split()[0]) / 1e9
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                state = stat.read().rpartition(b") ")[2][:1]
        except (OSError, ValueError, IndexError):
            return None
        return on_cpu, state == b"R"

    def elapsed(self) -> float:
        now = time.monotonic()
        sample = self._sample() if self.proc else None
        if sample is None:
            return now - self.start
        on_cpu, runnable = sample
        if self.waiting and not runnable:  # not runnable from the last look to this one: its own time
            self.used += max(now - self.last, on_cpu - self.on_cpu)
        else:
            self.used += max(0.0, on_cpu - self.on_cpu)
        self.last, self.on_cpu, self.waiting = now, on_cpu, not runnable
        return self.used


#: How often a check looks at a child that has not reported yet (its clock counts sleep by looking).
_LOOK_S = 0.05


def _child(fn, args, watch, snapshot, write_end, items) -> None:
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    for fd in _PRIVATE_FDS:
        try:
            os.close(fd)
        except OSError:
            pass
    _become_subreaper()
    torch = sys.modules.get("torch")
    if torch is not None:  # torch's thread pool does not survive a fork: one thread, as in DataLoader workers
        try:
            torch.set_num_threads(1)
        except Exception:  # a torch too broken to set is the learner's code's problem, not the check's
            pass
    _no_input(snapshot)
    out = io.StringIO()
    sys.stdout = sys.stderr = out  # the learner's prints come back as text
    _IN_CHILD.update(report=lambda name: _send(write_end, b"H", name.encode("utf-8", "replace")))
    try:
        done = _traced(fn, args, watch, _IN_CHILD["report"])
        error = _as_input_request(done.error)
        report = {"result": _pack(done.result, items),
                  "error": _pack_error(error, fn) if error is not None else None,
                  "line": _learner_line(error, fn) if error is not None else "",
                  "args": [_pack(a, items) for a in args], "borrowed": list(done.hits),
                  "tampered": _tampered(snapshot), "too_deep": done.too_deep, "broken_watch": done.broken,
                  "output": out.getvalue()[:_MAX_OUTPUT]}
        data = _DUMPS(report, 5)
    except BaseException as exc:  # the report says what went wrong instead
        data = _DUMPS({"broken": f"the check could not pack its answer ({type(exc).__name__})"}, 5)
    _send(write_end, b"R", data)


def _tampered(snapshot: integrity.Snapshot) -> list[str]:
    """In the child, after the call: what it rebound of the watched namespaces, and what the seal of the
    library finds changed (a name of the flat ``ll.X`` namespace, a function's code)."""
    found = snapshot.changes()
    return found + [name for name in _seal.changes() if name not in found]


# --------------------------------------------------------------------------- what the call started
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Linux: the processes the call starts stay this child's descendants even when their parent exits
    (a double fork, a daemon): orphans come to the nearest "subreaper" instead of to init, so that
    :func:`_stop_left` finds every one of them, whatever session or group it made."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _process(pid: int) -> tuple[int, str, str, int] | None:
    """(pid, state, name, parent pid) of a process, from ``/proc/PID/stat``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("utf-8", "replace")
    except OSError:
        return None
    name, _, rest = text.partition(" (")[2].rpartition(") ")
    fields = rest.split()
    if len(fields) < 2 or not fields[1].isdigit():
        return None
    return pid, fields[0], name, int(fields[1])


def _children(pid: int, everyone: list[tuple[int, str, str, int]] | None) -> list[tuple[int, str, str, int]]:
    """The children of ``pid``: from its threads' ``children`` files (Linux with CONFIG_PROC_CHILDREN), or
    from ``everyone`` (every process's stat) where the system has no such files."""
    if everyone is not None:
        return [p for p in everyone if p[3] == pid]
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
            found += [info for child in children.read().split() if (info := _process(int(child)))]
    return found


def _descendants(pid: int) -> list[tuple[int, str, str, int]]:
    """The processes below ``pid`` (its children, theirs, ...), as (pid, state, name, parent pid)."""
    everyone = None
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        try:
            everyone = [info for entry in os.listdir("/proc")
                        if entry.isdigit() and (info := _process(int(entry)))]
        except OSError:
            return []
    out, todo = [], [pid]
    while todo:
        try:
            below = _children(todo.pop(), everyone)
        except OSError:
            continue
        out += below
        todo += [child[0] for child in below]
    return out


def _stop_left(pid: int) -> tuple[str, ...]:
    """Stop the child and every process below it, and return the names of those that were still running
    (not merely finished and not yet reaped). The child is frozen first, so that nothing forks meanwhile;
    while it lives, an orphan of the call comes back to it (its subreaper), so a process in a new session
    or group, or a double fork, is found too. Each round freezes what it finds, then kills it, until two
    rounds in a row find nothing: a process that ends while a round reads ``/proc`` hands its children to
    the child after the round read the child's, so only the next round sees them. Without ``/proc``
    (macOS) the child's process group is all there is to stop (:func:`_end`)."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        pass
    running: list[str] = []
    empty = 0
    for _ in range(20):
        found = [p for p in _descendants(pid) if p[1] not in "ZX"]
        running = running or [name for _, _, name, _ in found]
        empty = 0 if found else empty + 1
        if empty == 2:
            break
        for signal_number in (signal.SIGSTOP, signal.SIGKILL):
            for child, *_ in found:
                try:
                    os.kill(child, signal_number)
                except OSError:
                    pass
    return tuple(sorted(set(running)))


def _ended(pid: int, grace: float) -> bool:
    """Whether the child ends of its own accord within ``grace`` seconds (it is not reaped: its status
    still says how it ended)."""
    deadline = time.monotonic() + grace
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except (ChildProcessError, OSError, AttributeError):  # no waitid (some systems): do not wait
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


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


# --------------------------------------------------------------------------- memory
def _killed_by_system(status: int) -> bool:
    """The child died of SIGKILL before it reported, and the check had not killed it yet: on Linux the
    out-of-memory killer sends exactly that."""
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _memory_words(oom_killed: bool) -> str:
    if oom_killed:
        return "the system's out-of-memory killer stopped it, as it used more memory than this server allows"
    return ("the system stopped it before it returned (signal 9, which is how a server's out-of-memory "
            "killer stops a process that uses more memory than allowed)")


def _oom_kills() -> int:
    """How many processes the out-of-memory killer has stopped in this process's memory cgroup (Linux,
    cgroup v2 ``memory.events`` or v1 ``memory.oom_control``); 0 where the system does not say."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as groups:
            lines = groups.read().splitlines()
    except OSError:
        return 0
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for folder, name in ((f"/sys/fs/cgroup{path}", "memory.events"),
                             (f"/sys/fs/cgroup/memory{path}", "memory.oom_control")):
            if (controllers == "" and name == "memory.events") or "memory" in controllers.split(","):
                try:
                    with open(os.path.join(folder, name), encoding="utf-8") as events:
                        for row in events:
                            key, _, value = row.partition(" ")
                            if key == "oom_kill":
                                return int(value)
                except (OSError, ValueError):
                    continue
    return 0


def _answer_items(args: tuple) -> int:
    """How many numbers an answer may hold and still come back whole: :data:`_ANSWER_ITEMS`, or 64 times
    the numbers of the inputs."""
    given = sum(int(np.size(a)) for a in args if isinstance(a, np.ndarray))
    return max(_ANSWER_ITEMS, 64 * given)


# --------------------------------------------------------------------------- asking for input
class _NoInput(io.TextIOBase):
    """Standard input for the code a check runs: any read asks for input, and fails at once."""

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        raise InputRequested("it reads standard input")

    def readline(self, size=-1):
        raise InputRequested("it reads standard input")


def _refuse_input(prompt=""):
    raise InputRequested("it calls input()")


def _refuse_breakpoint(*args, **kwargs):
    raise InputRequested("it calls breakpoint()")


def _no_input(snapshot: integrity.Snapshot | None = None) -> None:
    """In the child: ``input()``, ``breakpoint()``, ``pdb`` and standard input fail at once with
    :class:`InputRequested`, and so does the kernel's own way to ask the browser (ipykernel's
    ``raw_input``, which a function may have kept a name for); ``snapshot`` is told these are the
    check's own, not the learner's."""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # a read of file descriptor 0 ends at once (end of file) instead of waiting
        os.close(null)
    except OSError:
        pass
    sys.stdin = _NoInput()
    sys.breakpointhook = _refuse_breakpoint
    builtins.input = _refuse_input
    if snapshot is not None:
        snapshot.accept("builtins", "input", _refuse_input)
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and hasattr(kernel, "_allow_stdin"):
        kernel._allow_stdin = False  # ipykernel's raw_input, getpass: StdinNotImplementedError


def _as_input_request(error: BaseException | None) -> BaseException | None:
    """ipykernel's refusal to ask the browser (``StdinNotImplementedError``) is an input request too."""
    if error is not None and type(error).__name__ == "StdinNotImplementedError":
        return InputRequested("it asks the notebook for input")
    return error


# Packing an answer in the child: plain data only, tagged. Anything else travels as a description
# (its type's name and module, its repr), so that no class of the learner's is ever rebuilt here.
def _plain(value) -> bool:
    return type(value) in (bool, int, float, complex, str, bytes, type(None), type(Ellipsis)) or (
        isinstance(value, np.generic) and type(value).__module__ == "numpy")


def _pack(value, items: int = _ANSWER_ITEMS, depth: int = 0):
    """``value`` as tagged plain data; an array of more than ``items`` numbers (or a tuple or list that
    long) as its shape and dtype only: a verdict on an answer that size needs no more."""
    if _plain(value):
        return ("v", value)
    if isinstance(value, np.ndarray):
        if value.size > items:
            return ("big", tuple(int(n) for n in value.shape), _dtype_text(value.dtype))
        array = np.ndarray.view(value, np.ndarray).copy()
        if array.dtype.kind == "O" and not all(_plain(v) for v in array.flat):
            array = np.array([repr(v)[:80] for v in array.flat], dtype=object).reshape(array.shape)
        return ("a", array)
    if isinstance(value, (tuple, list)) and depth < 3 and len(value) <= items:
        return ("t" if isinstance(value, tuple) else "l", [_pack(v, items, depth + 1) for v in value])
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ is the learner's
        text = f"<{type(value).__name__} object>"
    return ("o", type(value).__name__, str(type(value).__module__), text[:200], inspect.isgenerator(value))


def _dtype_text(dtype: np.dtype) -> str:
    """A dtype as text that :func:`_stand_in` can read back (an object or structured dtype: object)."""
    return dtype.str if dtype.kind not in "OV" else "O"


def _stand_in(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` that takes no memory (every entry the same zero, read-only): what
    comes back of an answer too large to send whole. Its shape, far from the right one, is the verdict."""
    return np.broadcast_to(np.zeros((), dtype=np.dtype(dtype)), shape)


def _bounded(value, items: int):
    """``value`` with any array of more than ``items`` numbers replaced by its :func:`_stand_in` (the thread
    mode's answer, kept in this process: the same bound as a child's)."""
    if isinstance(value, np.ndarray) and value.size > items:
        return _stand_in(value.shape, _dtype_text(value.dtype))
    if isinstance(value, tuple):
        return tuple(_bounded(v, items) for v in value)
    if isinstance(value, list):
        return [_bounded(v, items) for v in value]
    return value


def _empty_generator():
    yield from ()


def _unpack(packed):
    tag = packed[0]
    if tag in ("v", "a"):
        return packed[1]
    if tag == "big":
        return _stand_in(*packed[1:])
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
    if base is InputRequested:
        return InputRequested(text)
    cls = type(name.rsplit(".", 1)[-1], (base,), {"__module__": module, "__str__": lambda self: text})
    error = cls.__new__(cls)
    error.args = (text,)
    return error


def _known_exception(module: str, qualname: str):
    if module == __name__ and qualname == InputRequested.__qualname__:
        return InputRequested
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
    box: dict[str, _Traced] = {}

    def target():
        box["done"] = _traced(fn, args, watch)

    worker = threading.Thread(target=target, name="lessons-exercise-check", daemon=True)
    stdin, hook, ask = sys.stdin, sys.breakpointhook, builtins.input
    sys.stdin, sys.breakpointhook = _NoInput(), _refuse_breakpoint
    builtins.input = _refuse_input  # the kernel's main thread waits meanwhile: it asks for nothing
    snapshot.accept("builtins", "input", _refuse_input)   # the check's own: not a change of the learner's
    worker.start()
    try:
        worker.join(time_limit)
    except KeyboardInterrupt:
        _raise_in_thread(worker, _TimeLimit)
        raise
    finally:
        tampered = tuple(sorted(set(snapshot.changes()) | set(integrity.planted())))
        snapshot.restore()  # what the learner's call rebound; the check's own replacements next
        sys.stdin, sys.breakpointhook, builtins.input = stdin, hook, ask
    if worker.is_alive():
        for _ in range(_STOP_TRIES):  # again and again: a bare `except:` inside a loop swallows one
            _raise_in_thread(worker, _TimeLimit)
            worker.join(_STOP_WAIT_S)
            if not worker.is_alive():
                break
        return _Ran(timed_out=True, still_running=worker.is_alive(), tampered=tampered)
    done = box.get("done", _Traced())
    error = _as_input_request(done.error)
    if isinstance(error, _TimeLimit):  # finished just as it was stopped
        return _Ran(timed_out=True, tampered=tampered)
    return _Ran(_bounded(done.result, _answer_items(args)), error,
                _learner_line(error, fn) if error is not None else "", args, borrowed=tuple(done.hits),
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
    outcome.borrowed = tuple(name.removeprefix(_ABSENT) for name in ran.borrowed if name != SWITCHED_OFF)
    outcome.absent = tuple(name.removeprefix(_ABSENT) for name in ran.borrowed if name.startswith(_ABSENT))
    outcome.tampered = ran.tampered + ((SWITCHED_OFF,) if SWITCHED_OFF in ran.borrowed else ())
    outcome.too_deep, outcome.left_running = ran.too_deep, ran.left_running
    if ran.broken:  # the check's own watch failed: its problem, said as such by the engine
        raise RuntimeError(f"the check's watch on the library failed ({ran.broken})")
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


def learner_files(fn: Callable) -> frozenset[str]:
    """The files (notebook cells) a learner's code comes from: a function's own, or what an object that
    builds the learner's function where it runs says (``learner_files``, the grade's judge)."""
    named = getattr(type(fn), "learner_files", None)
    if named is not None:
        return frozenset(fn.learner_files)
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    return frozenset({filename}) if filename else frozenset()


def _learner_line(exc: BaseException | None, fn: Callable) -> str:
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
