"""What runs in the forked child that calls a learner's function for a check (:mod:`.processes` forks it).

The child has the kernel's memory as it is, so a function defined in a notebook cell runs unchanged, and
:func:`serve` runs it once, under the watch (:mod:`.watch`), then sends back what it did (:mod:`.wire`):

* it closes what the check keeps from it (:func:`keep_from_children`: the judge's channel to autograde),
  leads a process group of its own, and is the "subreaper" of whatever the call starts, so that the check
  finds every such process, whatever session or group it made;
* ``input()``, ``breakpoint()``, a debugger or a read of standard input fails at once
  (:class:`~.outcome.InputRequested`): a check cannot type, and waiting would look like an endless loop;
* its ``print`` output is collected and sent back as text;
* whatever the call changes (``np.allclose = ...``, the library, the engine) changes the child only, which
  reports what it changed (:func:`lessons_lib._seal.changes`);
* where the grade's judge runs a learner's code, the exercise's answers are absent
  (:func:`absent_answers`): each is its own stand-in, which raises :class:`LibraryAnswerAbsent` and tells
  the check, however it was reached.
"""

from __future__ import annotations

import builtins
import ctypes
import functools
import io
import os
import sys
import types
from collections.abc import Callable

from .. import _seal
from . import wire
from .outcome import InputRequested, learner_line
from .watch import Watch, traced

__all__ = ["keep_from_children", "LibraryAnswerAbsent", "absent_answers", "serve", "NoInput",
           "refuse_input", "refuse_breakpoint", "no_input", "as_input_request"]

_MAX_OUTPUT = 20_000  # characters of a learner's print output sent back
#: File descriptors the learner's child must not hold (the grade's judge keeps its answer here).
_PRIVATE_FDS: set[int] = set()


def keep_from_children(fd: int) -> None:
    """Close ``fd`` in every child that runs a learner's function (the judge's channel to autograde)."""
    _PRIVATE_FDS.add(fd)


# --------------------------------------------------------------------------- the library's answer, absent
class LibraryAnswerAbsent(Exception):
    """Raised by the stand-in of one of the library's answers to an exercise, where the grade's judge runs a
    learner's answer: the answer is absent there, whichever thread, module path or reference calls it."""


#: In a forked child (set by ``serve``): ``"report"``, how a watched call is sent to the check the moment it
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
    (the seal's record of it is the stand-in's now), so it cannot be rebuilt from there either. The swap is
    the check's own, not counted as the learner's change."""
    if "report" not in _IN_CHILD:
        raise RuntimeError("the library's answers are made absent only in a child that runs a learner's code")
    for function, shown in answers.items():
        if type(function) is not types.FunctionType:
            raise TypeError(f"{shown} is not a Python function: the check cannot make it absent")
        function.__code__ = _stand_in_code(len(function.__code__.co_freevars))
        function.__defaults__ = None
        function.__kwdefaults__ = {"_answer": _absent(shown)}
        _seal.accept(function)


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
            report(wire.ABSENT + shown)
        raise LibraryAnswerAbsent(f"{shown} is the course's own answer: it is not there where the grade runs "
                                  "your function")

    library_answer.__qualname__ = library_answer.__name__ = shown.rsplit(".", 1)[-1]
    return library_answer


def serve(fn: Callable, args: tuple, watch: Watch | None, write_end: int, items: int) -> None:
    """In the child just forked: ``fn(*args)`` under the watch, its report sent through ``write_end`` (an
    answer of up to ``items`` numbers whole, :func:`.wire.pack`); whatever goes wrong, the report says."""
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
    no_input()
    out = io.StringIO()
    sys.stdout = sys.stderr = out  # the learner's prints come back as text
    _IN_CHILD.update(report=lambda name: wire.send(write_end, b"H", name.encode("utf-8", "replace")))
    try:
        done = traced(fn, args, watch, _IN_CHILD["report"])
        error = as_input_request(done.error)
        report = {"result": wire.pack(done.result, items),
                  "error": wire.pack_error(error) if error is not None else None,
                  "line": learner_line(error, fn) if error is not None else "",
                  "args": [wire.pack(a, items) for a in args], "borrowed": list(done.hits),
                  "tampered": _seal.changes(), "too_deep": done.too_deep, "broken_watch": done.broken,
                  "output": out.getvalue()[:_MAX_OUTPUT]}
        data = wire.dumps(report)
    except BaseException as exc:  # the report says what went wrong instead
        data = wire.dumps({"broken": f"the check could not pack its answer ({type(exc).__name__})"})
    wire.send(write_end, b"R", data)


# --------------------------------------------------------------------------- what the call started
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Linux: the processes the call starts stay this child's descendants even when their parent exits
    (a double fork, a daemon): orphans come to the nearest "subreaper" instead of to init, so that
    the check (:mod:`.processes`) finds every one of them, whatever session or group it made."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


# --------------------------------------------------------------------------- asking for input
class NoInput(io.TextIOBase):
    """Standard input for the code a check runs: any read asks for input, and fails at once."""

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        raise InputRequested("it reads standard input")

    def readline(self, size=-1):
        raise InputRequested("it reads standard input")


def refuse_input(prompt=""):
    raise InputRequested("it calls input()")


def refuse_breakpoint(*args, **kwargs):
    raise InputRequested("it calls breakpoint()")


def no_input() -> None:
    """In the child: ``input()``, ``breakpoint()``, ``pdb`` and standard input fail at once with
    :class:`InputRequested`, and so does the kernel's own way to ask the browser (ipykernel's
    ``raw_input``, which a function may have kept a name for). (``input`` is a builtin the host rebinds
    too: the seal does not count it.)"""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # a read of file descriptor 0 ends at once (end of file) instead of waiting
        os.close(null)
    except OSError:
        pass
    sys.stdin = NoInput()
    sys.breakpointhook = refuse_breakpoint
    builtins.input = refuse_input
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and hasattr(kernel, "_allow_stdin"):
        kernel._allow_stdin = False  # ipykernel's raw_input, getpass: StdinNotImplementedError


def as_input_request(error: BaseException | None) -> BaseException | None:
    """ipykernel's refusal to ask the browser (``StdinNotImplementedError``) is an input request too."""
    if error is not None and type(error).__name__ == "StdinNotImplementedError":
        return InputRequested("it asks the notebook for input")
    return error


