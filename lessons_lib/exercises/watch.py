"""The watch on the library's answers: a profile hook that records the watched functions a learner's
function calls, in its thread and in every ``threading`` thread it starts.

Part of the exercise engine (:mod:`.engine`): in the learner's kernel it is how a check tells that a
function borrowed the library's answer (``library_answer``). It explains; it does not guard the grade: a
``_thread`` thread escapes it, and code can switch it off (which it reports, :data:`SWITCHED_OFF`). Where
the grade's judge runs a learner's code the answers are absent instead (:func:`.child.absent_answers`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Watch", "dotted", "SWITCHED_OFF", "Traced", "traced"]

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
#: The files of the machinery that runs a learner's function: its own code (the child's main, its refusals
#: of input, the stand-ins of the library's answers) is never an answer the learner's code called.
_MACHINERY = frozenset(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
                       for name in ("runner", "child", "processes", "wire", "watch", "outcome"))


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
            if (arg is _SETPROFILE and self.watch is not None and frame.f_code.co_filename not in _MACHINERY
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
            own = code.co_filename in _MACHINERY
            if own or not (watch.folder and code.co_filename.startswith(watch.folder)):
                return
            name = dotted(code)
        caller = frame.f_back
        if id(code) in watch.trusted or (caller is not None and id(caller.f_code) in watch.trusted):
            return
        entry = frame
        while (entry.f_back is not None and entry.f_back.f_code.co_filename.startswith(_LIBRARY)
               and entry.f_back.f_code.co_filename not in _MACHINERY
               and id(entry.f_back.f_code) not in watch.trusted):
            entry = entry.f_back
        if entry is not frame:
            name = f"{dotted(entry.f_code)} (which runs {name})"
        self.hit(name)


_SETPROFILE, _GETPROFILE = sys.setprofile, sys.getprofile  # captured: the code watched may rebind sys's
#: What the watch says of code that switched it off (a change to the judge's tools, not a library answer).
SWITCHED_OFF = "the check's watch on the library (switched off with sys.setprofile)"


@dataclass
class Traced:
    """What :func:`traced` saw: the call's result or error, the watched functions it reached, whether the
    watch lost sight of it in a recursion as deep as Python allows, and the watch's own failure."""

    result: Any = None
    error: BaseException | None = None
    hits: list[str] = field(default_factory=list)
    too_deep: bool = False
    broken: str = ""


def traced(fn: Callable, args: tuple, watch: Watch | None,
            report: Callable[[str], None] | None = None) -> Traced:
    """``fn(*args)`` with the profile hook on, in this thread and in any thread it starts.

    A function that switches the hook off (it called ``sys.setprofile``) is reported as such. A recursion
    as deep as Python allows switches it off too, without that call: at the recursion limit the hook
    itself cannot be called, and Python drops it. That is ``too_deep``, the learner's own recursion (an
    error the check explains, or, caught, a function the check could not follow), never an accusation.
    """
    tracer, done = _Tracer(watch, report), Traced()
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

