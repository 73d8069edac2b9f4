"""What the course's judge relies on, as it was before a notebook's cells could change it.

A check compares a learner's answer with the library's reference, using numpy, Python's builtins and the
exercise engine's own functions and constants. A notebook cell may rebind any of them, to anything: a
builtin (``outcome.close = all``), a numpy function (``np.sqrt = np.positive``, which changes the reference
of ``my_scale``), an object of the learner's own class, a plain value (``grading._RTOL = 1e9``), a module
(``sys.modules["lessons_lib.exercises.grading"] = ...``); or swap a function's code in place. So
``import lessons_lib``, a lesson's first cell, **records** them here: Python's builtins, ``math``, ``copy``
and ``pickle``, numpy's public namespaces, and the library's modules the judge relies on (``_checks``,
``core``, ``course.feedback``, ``lab.data``, loaded with it for this); the exercises package records its own
modules and ``EXERCISES`` when it loads, before a cell can reach them. :func:`changes` names everything
rebound since, whatever it is bound to now, every recorded function whose code, defaults or closure
changed, every exported name of the flat ``ll.X`` namespace that is no longer its module's, and every
recorded module that ``sys.modules`` no longer holds. :mod:`lessons_lib.exercises.integrity` adds what
a cell planted before the record (a function or class of the learner's own, wherever it sits).

What cannot be sealed in the learner's kernel (a cell that replaces ``ll`` itself, or rewrites the graded
cell before it runs) is why nbgrader's grade comes from a judge outside the kernel
(:mod:`lessons_lib.exercises.judge`).
"""

from __future__ import annotations

import builtins
import sys
import types

# Python's own functions as they were when the library loaded: this module must name a rebound builtin,
# not run on it (``builtins.isinstance = lambda *a: True`` would otherwise blind it).
from builtins import (  # noqa: UP029  (captured on purpose)
    all,
    any,
    dict,
    frozenset,
    getattr,
    isinstance,
    len,
    list,
    map,
    str,
    tuple,
    type,
    vars,
    zip,
)
from itertools import repeat
from operator import attrgetter, is_, itemgetter

__all__ = ["record_library", "record_module", "record_namespace", "record_object", "changes", "unchanged",
           "HOST_BUILTINS", "NUMPY_PUBLIC", "JUDGED"]

#: builtins the host rebinds on its own between cells (ipykernel's ``input`` on every request, IPython's
#: ``exit``, ``quit``, ``get_ipython``, ``display``): not the judge's tools, never counted as changed
HOST_BUILTINS = frozenset({"input", "exit", "quit", "get_ipython", "display", "help", "copyright", "credits",
                           "license"})
#: The numpy namespaces a learner reaches by name (np.allclose, np.testing, np.linalg ...).
NUMPY_PUBLIC = ("numpy", "numpy.linalg", "numpy.random", "numpy.testing", "numpy.lib", "numpy._core.numeric",
                "numpy._core.fromnumeric")
#: The library's modules the judge relies on (a name, or a package's prefix ending in "."): what is recorded.
JUDGED = ("lessons_lib", "lessons_lib._checks", "lessons_lib.core.", "lessons_lib.course.feedback",
          "lessons_lib.lab.data", "lessons_lib.exercises", "lessons_lib.exercises.")
_FUNCTION = types.FunctionType
_MISSING = object()

#: where -> (the namespace's owner, a copy of its namespace when recorded, names not to compare)
_SPACES: dict[str, tuple[object, dict, frozenset]] = {}
#: where -> (the function, its code, defaults, keyword defaults and closure cells' contents when recorded)
_FUNCTIONS: dict[str, tuple[types.FunctionType, tuple]] = {}
#: module name -> the module recorded
_MODULES: dict[str, types.ModuleType] = {}
#: exported name -> the module that defines it, for the package's flat namespace (``ll.X``)
_EXPORTS: dict[str, tuple[types.ModuleType, str]] = {}


#: a function's parts that a learner can swap in place, and where :func:`_state` keeps each
_PARTS = ((attrgetter("__code__"), 0), (attrgetter("__defaults__"), 1), (attrgetter("__kwdefaults__"), 2))


def unchanged(namespace, before: dict) -> bool:
    """Whether every name of ``before`` still holds, in ``namespace`` (a dict or a class's mapping), the
    very object it held then (by identity; names added since do not count): one pass in C, so that a
    check looks name by name only where something changed."""
    return all(map(is_, map(namespace.get, before, repeat(_MISSING)), before.values()))


def _state(function: types.FunctionType) -> tuple:
    cells = tuple(_cell(c) for c in (function.__closure__ or ()))
    return function.__code__, function.__defaults__, function.__kwdefaults__, cells


def _swapped(now: tuple, before: tuple) -> bool:
    """Whether a function's code, defaults, keyword defaults or closure are no longer those recorded (by
    identity: an array default is no truth value)."""
    same = all(a is b for a, b in zip(now[:3], before[:3]))
    return not (same and len(now[3]) == len(before[3]) and all(a is b for a, b in zip(now[3], before[3])))


def _all_kept(recorded: list) -> bool:
    """Whether no recorded function (``(function, state)`` pairs) has had its code, defaults or keyword
    defaults swapped, or its closure's contents changed: the functions without a closure in one pass in C."""
    plain = [pair for pair in recorded if not pair[1][3]]
    functions, states = [f for f, _ in plain], [state for _, state in plain]
    for part, index in _PARTS:
        if not all(map(is_, map(part, functions), map(itemgetter(index), states))):
            return False
    return not any(_swapped(_state(f), state) for f, state in recorded if state[3])


def _cell(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not filled yet
        return _MISSING


def _functions_of(where: str, namespace: dict, home: str) -> None:
    """Record the functions ``namespace`` defines (``home`` is their ``__module__``), methods included."""
    for attr, value in list(namespace.items()):
        inner = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if isinstance(value, property):
            for part, function in (("fget", value.fget), ("fset", value.fset), ("fdel", value.fdel)):
                if type(function) is _FUNCTION and function.__module__ == home:
                    _FUNCTIONS.setdefault(f"{where}.{attr}.{part}", (function, _state(function)))
        elif type(inner) is _FUNCTION and inner.__module__ == home:
            _FUNCTIONS.setdefault(f"{where}.{attr}", (inner, _state(inner)))


def record_namespace(where: str, owner, ignore: frozenset = frozenset()) -> None:
    """Record ``owner``'s namespace (a module, a class, a dict) as it is now, once; ``ignore``: names
    that may change (a test's settings, the host's builtins)."""
    if where not in _SPACES:
        namespace = owner if isinstance(owner, dict) else vars(owner)
        _SPACES[where] = (owner, dict(namespace), ignore)


def record_module(module: types.ModuleType) -> None:
    """Record a module of the library: its names, its classes' names, its functions' code, itself."""
    name = module.__name__
    if name in _MODULES:
        return
    _MODULES[name] = module
    settings = getattr(module, "SETTINGS", ())
    record_namespace(name, module, frozenset(settings if isinstance(settings, tuple) else ()))
    _functions_of(name, vars(module), name)
    for attr, value in list(vars(module).items()):
        if isinstance(value, type) and value.__module__ == name:
            record_namespace(f"{name}.{attr}", value)
            _functions_of(f"{name}.{attr}", dict(vars(value)), name)


def record_object(where: str, value) -> None:
    """Record an object's fields (an :class:`~lessons_lib.exercises.engine.Exercise`) and its functions."""
    record_namespace(where, value)
    for attr, field in list(vars(value).items()):
        if type(field) is _FUNCTION:
            _FUNCTIONS.setdefault(f"{where}.{attr}", (field, _state(field)))


def record_exports(package: types.ModuleType, where: dict[str, str]) -> None:
    """The flat namespace of ``package``: each exported name (``where``: name -> its module, relative to
    the package) must stay the object its module holds, once both are loaded."""
    for name, module in where.items():
        _EXPORTS.setdefault(name, (package, f"{package.__name__}.{module}"))


def accept_state(function: types.FunctionType) -> None:
    """Count ``function``'s code, defaults and closure as they are now as recorded, wherever it was recorded:
    a swap the check itself made (the grade's judge's stand-in for a library answer, in the child that runs
    a learner's code). The record no longer holds the code it had."""
    for where, (recorded, _) in list(_FUNCTIONS.items()):
        if recorded is function:
            _FUNCTIONS[where] = (function, _state(function))


def judged(name: str) -> bool:
    """Whether the module ``name`` is one the judge relies on (:data:`JUDGED`)."""
    return any(name == j or (j.endswith(".") and name.startswith(j)) for j in JUDGED)


def record_library() -> None:
    """Python's builtins, ``math``, ``copy``, ``pickle``, numpy's public namespaces and every loaded module
    of the library that the judge relies on, as they are now (each recorded once)."""
    import copy  # noqa: F401  (loaded, so that it is recorded as it is)
    import math  # noqa: F401
    import pickle  # noqa: F401

    record_namespace("builtins", builtins, HOST_BUILTINS)
    for name in ("math", "copy", "pickle", *NUMPY_PUBLIC):
        module = sys.modules.get(name)
        if module is not None:
            record_namespace(name, module)
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and judged(name):
            record_module(module)


def changes() -> list[str]:
    """Dotted names of what changed since it was recorded (rebound, deleted, code swapped, replaced in
    ``sys.modules``); names added since are not counted."""
    found = []
    for where, (owner, before, ignore) in list(_SPACES.items()):
        now = owner if isinstance(owner, dict) else vars(owner)
        if unchanged(now, before):
            continue
        for attr, value in before.items():
            if attr in ignore or (where == "builtins" and attr.startswith("_")):
                continue
            if now.get(attr, _MISSING) is not value:
                found.append(f"{where}[{attr!r}]" if isinstance(owner, dict) else f"{where}.{attr}")
    if not _all_kept(list(_FUNCTIONS.values())):
        for where, (function, state) in list(_FUNCTIONS.items()):
            if _swapped(_state(function), state):
                found.append(f"{where} (its code)")
    for name, module in list(_MODULES.items()):
        if sys.modules.get(name) is not module:
            found.append(f"sys.modules[{name!r}]")
    for name, (package, home) in list(_EXPORTS.items()):
        value, module = vars(package).get(name, _MISSING), sys.modules.get(home)
        if value is not _MISSING and module is not None and vars(module).get(name, _MISSING) is not value:
            found.append(f"{package.__name__}.{name}")
    return found
