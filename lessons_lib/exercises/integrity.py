"""The judge's own tools, which a learner's code cannot replace: the comparisons and the seal.

Part of the exercise engine (:mod:`.engine`). A check compares a learner's answer with the
library's reference; a learner who wants the points without the work may try to change what
the check judges with instead (``np.allclose = lambda *a, **k: True``, ``Feedback.passed =
...``, ``ll.assert_passes = print``, another ``EXERCISES["my_softmax"]``). Four things stand in the way:

* **comparisons without module attributes**: :func:`allclose` and :func:`array_equal` use only
  the operators and methods of ``numpy.ndarray`` itself (a C type whose slots Python code cannot
  reassign), never ``np.allclose`` or ``np.array_equal``, which anyone can rebind;
* **the seal**: :func:`planted` names whatever a notebook changed of what a check relies on (numpy,
  ``builtins``, ``math``, ``copy``, ``pickle``, the course library's formulas, the engine and its
  constants, ``EXERCISES`` and each exercise's reference, the :class:`~lessons_lib.course.feedback.Feedback`
  class, the flat ``ll.X`` names), in two ways: everything rebound since ``import lessons_lib`` recorded
  it (:mod:`lessons_lib._seal`: to anything at all, a builtin, a numpy function, an object of the
  learner's class, a plain value, or a function's code swapped in place), and, wherever it sits, a
  function, class or callable object of the learner's own, even one planted before the record (a
  function counts as the learner's when its code was not loaded from Python's own library, an installed
  package or ``lessons_lib`` itself: a notebook cell's code comes from a temporary file of the kernel).
  :class:`Snapshot` records those namespaces before a learner's function runs, so that
  :meth:`Snapshot.changes` can name (and :meth:`Snapshot.restore` undo) whatever the call rebound;
* the learner's function runs in a forked child process where the system allows it
  (:mod:`.runner`, :mod:`.child`), so whatever it changes during the call stays in the child;
* **the grade does not trust the learner's kernel at all**: what no check inside that kernel can
  stop (a cell that rebinds ``ll`` itself, swallows the graded cell's error with IPython's
  ``set_custom_exc``, or rewrites the graded cell before it runs) is why nbgrader's autograde takes the
  verdict of a judge in a process of its own, which runs the learner's answer cells in forked children
  and never executes their code itself (:mod:`.judge`, :mod:`.autograde`; docs/classroom.md).
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
import types

# Python's own functions as they were when the library loaded (see lessons_lib/_seal.py).
from builtins import (  # noqa: UP029  (captured on purpose)
    all,
    any,
    bool,
    dict,
    getattr,
    id,
    isinstance,
    issubclass,
    len,
    list,
    map,
    set,
    sorted,
    str,
    type,
    vars,
)
from operator import attrgetter
from operator import is_ as _is
from pathlib import Path

import numpy as np

from .. import _seal

__all__ = ["allclose", "array_equal", "as_plain_array", "planted", "Snapshot", "watched_modules", "seal",
           "forget_scans"]

# Captured when the engine is imported: the operators below reach numpy only through ndarray's
# own type slots, and these few names are the only module attributes read afterwards.
_NDARRAY = np.ndarray
_ERRSTATE = np.errstate
_FUNCTION, _METHOD = types.FunctionType, types.MethodType
_ENGINE = "lessons_lib.exercises.engine"   # the module of Exercise, whose fields a check compares with


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


# --------------------------------------------------------------------------- what the checks rely on
_PLAIN_MODULES = ("builtins", "math", "copy", "pickle")
_LIBRARY = ("lessons_lib", "lessons_lib._checks", "lessons_lib.lab.data", "lessons_lib.course.feedback")
_LIBRARY_PACKAGES = ("numpy.", "lessons_lib.core.", "lessons_lib.exercises.")
#: The numpy namespaces a learner reaches by name (np.allclose, np.testing, np.linalg ...): what
#: :class:`Snapshot` watches while a function runs in a forked child, where looking at every module
#: would cost the child a copy of most of the kernel's memory pages.
_NUMPY_PUBLIC = _seal.NUMPY_PUBLIC


_WATCHED_NAMES = frozenset((*_PLAIN_MODULES, *_LIBRARY, "numpy"))


def watched_modules(focus: bool = False) -> dict[str, types.ModuleType]:
    """The loaded modules a check relies on, by name (``focus``: numpy's public namespaces only)."""
    out = {}
    for name, module in list(sys.modules.items()):
        if not (name in _WATCHED_NAMES or name.startswith(_LIBRARY_PACKAGES)):
            continue
        if focus and name.startswith("numpy") and name not in _NUMPY_PUBLIC:
            continue
        if isinstance(module, types.ModuleType):
            out[name] = module
    return out


def _own_classes(modules: dict[str, types.ModuleType]) -> dict[str, type]:
    """The course's classes a check relies on (the engine's and Feedback), by dotted name."""
    out = {}
    for name, module in modules.items():
        if not (name.startswith("lessons_lib.exercises") or name == "lessons_lib.course.feedback"):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and value.__module__ == name:
                out[f"{name}.{attr}"] = value
    return out


def _exercises() -> dict:
    module = sys.modules.get("lessons_lib.exercises")
    return getattr(module, "EXERCISES", {}) if module is not None else {}


# --------------------------------------------------------------------------- where trusted code lives
def _trusted_roots() -> tuple[str, ...]:
    roots = {str(Path(__file__).resolve().parents[1]), str(Path(np.__file__).resolve().parent)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(str(Path(path).resolve()))
    for path in [*getattr(site, "getsitepackages", lambda: [])(), site.getusersitepackages()]:
        roots.add(str(Path(path).resolve()))
    return tuple(sorted(root + os.sep for root in roots))


_ROOTS = _trusted_roots()


@functools.lru_cache(maxsize=4096)
def _trusted_file(filename: str) -> bool:
    if filename.startswith("<frozen "):
        return True
    if not filename or filename.startswith("<"):
        return False
    try:
        path = str(Path(filename).resolve())
    except (OSError, RuntimeError):
        return False
    return path.startswith(_ROOTS)


_TRUSTED_PACKAGES = ("lessons_lib", "numpy", "dataclasses", "functools", "typing", "enum")


def _trusted_code(function) -> bool:
    filename = function.__code__.co_filename
    if filename == "<string>":  # made by exec: dataclasses' __init__ and __eq__ carry their class's module
        return str(getattr(function, "__module__", "")).split(".")[0] in _TRUSTED_PACKAGES
    return _trusted_file(filename)


def _judge(value, depth: int = 0) -> bool:
    """True when ``value`` is (or wraps) a Python function or class that is not numpy's, Python's,
    an installed package's or the course library's own."""
    kind = type(value)
    if depth > 3:
        return False
    if kind is _FUNCTION:
        return not _trusted_code(value)
    if kind in (_METHOD, staticmethod, classmethod):
        return _judge(value.__func__, depth + 1)
    if kind is property:
        return any(_judge(f, depth + 1) for f in (value.fget, value.fset, value.fdel) if f is not None)
    if kind is functools.partial:
        return _judge(value.func, depth + 1)
    if issubclass(kind, type):
        name = getattr(value, "__module__", "") or ""
        if name == "__main__":
            return True
        file = getattr(sys.modules.get(name), "__file__", None)
        return bool(file) and not _trusted_file(file)
    if kind.__module__ == _ENGINE:  # an Exercise: what it compares with
        return any(_judge(field, depth + 1) for field in list(vars(value).values()))
    if issubclass(kind, _FUNCTION):  # a subclass cannot be made, but be safe
        return True
    return _foreign(kind)  # an object of the learner's own class (a callable one, say)


#: id -> (the class, kept alive so that its id stays its own; the verdict)
_VERDICTS: dict[int, tuple[object, bool]] = {}
_PLAIN = frozenset({int, float, str, bool, bytes, tuple, dict, list, frozenset, set, type(None),
                    types.ModuleType, types.BuiltinFunctionType, np.ufunc, np.float64, np.dtype})


def _foreign(value) -> bool:
    """:func:`_judge`, remembered per object: a check looks at the same thousands of names each time."""
    kind = type(value)
    if kind in _PLAIN:
        return False
    if kind is _FUNCTION:  # not remembered: a function's __code__ can be swapped in place
        return not _trusted_code(value)
    known = _VERDICTS.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    verdict = _judge(value)
    if issubclass(kind, type):  # classes are remembered; an Exercise's fields may change
        _VERDICTS[id(value)] = (value, verdict)
    return verdict


def seal(exercises: dict) -> None:
    """Record the exercises package's modules, ``EXERCISES`` and each exercise's fields as they are when the
    package has loaded, before a notebook cell can reach them (:mod:`lessons_lib._seal`)."""
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and _seal.judged(name):
            _seal.record_module(module)
    _seal.record_namespace("EXERCISES", exercises)
    for key, exercise in list(exercises.items()):
        _seal.record_object(f"EXERCISES[{key!r}]", exercise)


#: Values whose verdict can change while they stay bound to the same name: a function (its code can be
#: swapped in place), what wraps one, an Exercise (its fields can be replaced).
_WRAPPERS = frozenset({_FUNCTION, _METHOD, staticmethod, classmethod, property, functools.partial})

_CODE = attrgetter("__code__")


class _Clean:
    """A namespace as a scan found it: nothing foreign in it."""

    __slots__ = ("owner", "names", "steady", "kinds", "functions", "codes", "wrapped")

    def __init__(self, owner, items: list):
        self.owner, self.names = owner, dict(items)
        self.steady = [value for _, value in items if not _changeable(value)]
        self.kinds = list(map(type, self.steady))
        self.functions = [value for _, value in items if _plain_function(value)]
        self.codes = list(map(_CODE, self.functions))
        self.wrapped = [(attr, value) for attr, value in items
                        if _changeable(value) and not _plain_function(value)]

    def still(self, owner, namespace) -> bool:
        """Whether ``namespace`` holds what it held then, each object of the same class as then, each plain
        function with the same code: one pass in C each."""
        return (self.owner is owner and len(namespace) == len(self.names)
                and _seal.unchanged(namespace, self.names)
                and all(map(_is, map(type, self.steady), self.kinds))
                and all(map(_is, map(_CODE, self.functions), self.codes)))


#: where -> the namespace as the last scan found it, when it found nothing foreign there
_CLEAN: dict[str, _Clean] = {}


def forget_scans() -> None:
    """Forget the namespaces scanned clean (:func:`planted` scans them again): in the child where the judge
    made the library's answers absent, so that nothing there keeps their code."""
    _CLEAN.clear()


def _changeable(value) -> bool:
    """Whether ``value``'s verdict can change while it stays bound to the same name (:data:`_WRAPPERS`)."""
    kind = type(value)
    return kind in _WRAPPERS or kind.__module__ == _ENGINE or issubclass(kind, _FUNCTION)


def _plain_function(value) -> bool:
    """A function whose verdict its code alone gives (:func:`_trusted_code`)."""
    return type(value) is _FUNCTION and value.__code__.co_filename != "<string>"


def _foreign_in(where: str, owner) -> list[str]:
    """The names of ``owner``'s namespace (a module or a class) that hold something :func:`_foreign`.

    A namespace found clean is remembered. While it still holds the very objects it held then, each of the
    same class, each plain function with the same code, only what wraps a function (a method, a property,
    a partial ...) and Exercises are judged again: the verdict on a class, and so on an object of it, is
    remembered by :func:`_foreign`, and a plain function's verdict is its code's."""
    namespace = vars(owner)
    clean = _CLEAN.get(where)
    if clean is not None and clean.still(owner, namespace):
        return [f"{where}.{attr}" for attr, value in clean.wrapped if _foreign(value)]
    items = list(namespace.items())
    found = [f"{where}.{attr}" for attr, value in items if _foreign(value)]
    if not found:
        _CLEAN[where] = _Clean(owner, items)
    return found


def planted() -> list[str]:
    """Dotted names of what a notebook changed of the tools a check relies on: anything rebound since the
    library recorded it (:func:`lessons_lib._seal.changes`), and the learner's own functions, classes and
    callable objects sitting where a check looks for numpy's, Python's or the course library's (e.g.
    ``numpy.allclose``, ``lessons_lib.course.feedback.Feedback.passed``)."""
    found = list(_seal.changes())
    if found:  # enough to refuse; the scan below would run on what was changed (builtins.isinstance, say)
        return found
    modules = watched_modules()
    for name, module in modules.items():
        found += _foreign_in(name, module)
    for dotted, cls in _own_classes(modules).items():
        found += _foreign_in(dotted, cls)
    for key, exercise in list(_exercises().items()):
        if type(exercise).__module__ != _ENGINE:
            found.append(f"EXERCISES[{key!r}]")
            continue
        found += [f"EXERCISES[{key!r}].{field}" for field, value in list(vars(exercise).items())
                  if _foreign(value)]
    return found


class Snapshot:
    """What every watched namespace holds now (module dicts, the engine's classes, ``EXERCISES`` and
    each exercise's fields), so that a change made by a learner's call can be named and undone.

    ``focus``: numpy's public namespaces only (see :func:`watched_modules`).
    """

    def __init__(self, focus: bool = False):
        modules = watched_modules(focus)
        self._spaces: dict[str, tuple[object, dict]] = {}
        for name, module in modules.items():
            self._spaces[name] = (module, dict(vars(module)))
        for dotted, cls in _own_classes(modules).items():
            self._spaces[dotted] = (cls, dict(vars(cls)))
        exercises = _exercises()
        self._spaces["EXERCISES"] = (exercises, dict(exercises))
        for key, exercise in list(exercises.items()):
            self._spaces[f"EXERCISES[{key!r}]"] = (exercise, dict(vars(exercise)))

    def accept(self, where: str, attr: str, value) -> None:
        """Count ``value`` at ``where``'s ``attr`` as unchanged: the check's own replacement (the child's
        ``builtins.input``), not the learner's."""
        if where in self._spaces:
            self._spaces[where][1][attr] = value

    @staticmethod
    def _current(owner) -> dict:
        return owner if isinstance(owner, dict) else vars(owner)

    def changes(self) -> list[str]:
        """Dotted names rebound or deleted since the snapshot (names added since are not counted)."""
        missing = object()
        found = []
        for where, (owner, before) in self._spaces.items():
            now = self._current(owner)
            if _seal.unchanged(now, before):
                continue
            for attr, value in before.items():
                if now.get(attr, missing) is not value and not (where == "builtins" and attr.startswith("_")):
                    found.append(f"{where}[{attr!r}]" if isinstance(owner, dict) else f"{where}.{attr}")
        return found

    def restore(self) -> None:
        """Put back every rebound or deleted name."""
        for owner, before in self._spaces.values():
            now = self._current(owner)
            if _seal.unchanged(now, before):
                continue
            for attr, value in before.items():
                if now.get(attr, _MISSING) is value:
                    continue
                if isinstance(owner, dict):
                    owner[attr] = value
                elif isinstance(owner, type) or isinstance(owner, types.ModuleType):
                    setattr(owner, attr, value)
                else:  # a frozen dataclass (an Exercise)
                    object.__setattr__(owner, attr, value)


_MISSING = object()
