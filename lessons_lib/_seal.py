"""What the course's checks rely on, recorded when the library loads, so that a check in the learner's
kernel names what a notebook changed of it.

The seal explains; it guards no grade. nbgrader's grade comes from the course's judge, which runs a
submission's code in a sandbox (:mod:`lessons_lib.exercises.judge`, :mod:`lessons_lib.exercises.sandbox`).
In the learner's kernel a check compares an answer with the library's reference, using numpy, Python's
builtins and the exercise engine; a cell that rebinds one of them (``np.allclose = ...``,
``outcome._ATOL = 1e300``, ``ll.assert_passes = print``, another ``EXERCISES["my_softmax"]``) or swaps a
function's code in place would make the check's word meaningless, so the check says which names changed
instead (the ``tampered`` mistake).

One list of what is recorded, :data:`JUDGED`; one record, made by ``import lessons_lib`` (a lesson's first
cell) and completed by the exercises package as it loads: each module's names and the names of the classes
it defines, by identity, and each of its functions' code, defaults and closure; one way to compare,
:func:`changes`; and :func:`restore`, which puts the record back after a learner's call that ran in the
kernel's own process. What a cell changed before ``import lessons_lib`` is not named here (the judge's
grade does not depend on it, and the teacher's report notes a kernel that passed what the judge failed).
"""

from __future__ import annotations

import builtins
import sys
import types

# Python's own functions as they were when the library loaded: this module must name a rebound builtin,
# not run on it (``builtins.isinstance = lambda *a: True`` would otherwise blind it).
from builtins import (  # noqa: UP029  (captured on purpose)
    all,
    dict,
    frozenset,
    getattr,
    isinstance,
    len,
    list,
    map,
    object,
    setattr,
    tuple,
    type,
    vars,
    zip,
)
from itertools import repeat
from operator import attrgetter, is_, itemgetter

__all__ = ["JUDGED", "HOST_BUILTINS", "record_library", "record_exports", "record_object", "accept",
           "changes", "restore"]

#: What the checks rely on, by module name (a name ending in "." is a package's prefix): Python's
#: builtins, ``math``, ``copy`` and ``pickle``, the numpy namespaces a learner reaches by name, and the
#: library's modules the judge uses (``_checks``, ``core``, ``course.feedback``, ``lab.data``, the engine).
JUDGED = ("builtins", "math", "copy", "pickle",
          "numpy", "numpy.linalg", "numpy.random", "numpy.testing", "numpy.lib", "numpy._core.numeric",
          "numpy._core.fromnumeric",
          "lessons_lib", "lessons_lib._checks", "lessons_lib.core.", "lessons_lib.course.feedback",
          "lessons_lib.lab.data", "lessons_lib.exercises", "lessons_lib.exercises.")
#: builtins the host rebinds on its own between cells (ipykernel's ``input`` on every request, IPython's
#: ``exit``, ``quit``, ``get_ipython``, ``display``): not the checks' tools, never counted as changed
HOST_BUILTINS = frozenset({"input", "exit", "quit", "get_ipython", "display", "help", "copyright", "credits",
                           "license"})
_FUNCTION = types.FunctionType
_MISSING = object()

#: where -> (the namespace's owner: a module, a class, a dict or an object; its names then; names that
#: may change: a module's ``SETTINGS``, the host's builtins)
_SPACES: dict[str, tuple[object, dict, frozenset]] = {}
#: where -> (a function, its state then: code, defaults, keyword defaults, closure cells' contents)
_FUNCTIONS: dict[str, tuple[types.FunctionType, tuple]] = {}
#: module name -> the module recorded (the one ``sys.modules`` must still hold)
_MODULES: dict[str, types.ModuleType] = {}
#: an exported name of the flat namespace (``ll.X``) -> (the package, the module that defines it)
_EXPORTS: dict[str, tuple[types.ModuleType, str]] = {}


def _judged(name: str) -> bool:
    return any(name == j or (j.endswith(".") and name.startswith(j)) for j in JUDGED)


# --------------------------------------------------------------------------- the record
def _cell(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not filled yet
        return _MISSING


def _state(function: types.FunctionType) -> tuple:
    cells = tuple(_cell(c) for c in (function.__closure__ or ()))
    return function.__code__, function.__defaults__, function.__kwdefaults__, cells


def _namespace(owner) -> dict:
    return owner if isinstance(owner, dict) else vars(owner)


def _record_space(where: str, owner, ignore: frozenset = frozenset()) -> None:
    if where not in _SPACES:
        _SPACES[where] = (owner, dict(_namespace(owner)), ignore)


def _record_functions(where: str, namespace: dict, home: str | None) -> None:
    """The functions ``namespace`` holds (``home``: only those whose ``__module__`` it is), methods and
    properties' accessors included."""
    for attr, value in list(namespace.items()):
        inner = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if type(value).__name__ == "_ArrayFunctionDispatcher":  # numpy's C wrapper of its Python function
            inner = value.__wrapped__
        parts = ((f"{attr}.fget", value.fget), (f"{attr}.fset", value.fset), (f"{attr}.fdel", value.fdel)) \
            if isinstance(value, property) else ((attr, inner),)
        for name, function in parts:
            if type(function) is _FUNCTION and (home is None or function.__module__ == home):
                _FUNCTIONS.setdefault(f"{where}.{name}", (function, _state(function)))


def _record_module(module: types.ModuleType) -> None:
    """A module's names, its functions, and the names and methods of the classes it defines."""
    name = module.__name__
    if name in _MODULES:
        return
    _MODULES[name] = module
    settings = getattr(module, "SETTINGS", ())
    settings = settings if isinstance(settings, tuple) else ()
    ignore = HOST_BUILTINS if module is builtins else frozenset(settings)
    _record_space(name, module, ignore)
    _record_functions(name, vars(module), name)
    for attr, value in list(vars(module).items()):
        if isinstance(value, type) and value.__module__ == name:
            _record_space(f"{name}.{attr}", value)
            _record_functions(f"{name}.{attr}", dict(vars(value)), name)


def record_library() -> None:
    """Record every loaded module of :data:`JUDGED` as it is now (each once): ``import lessons_lib``, and
    the exercises package once it has loaded."""
    import copy  # noqa: F401  (loaded, so that it is recorded as it is)
    import math  # noqa: F401
    import pickle  # noqa: F401

    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and _judged(name):
            _record_module(module)


def record_exports(package: types.ModuleType, where: dict[str, str]) -> None:
    """The flat namespace of ``package``: each exported name (``where``: name -> its module, relative to
    the package) must stay the object its module holds, once both are loaded."""
    for name, module in where.items():
        _EXPORTS.setdefault(name, (package, f"{package.__name__}.{module}"))


def record_object(where: str, owner) -> None:
    """Record an object's fields and functions (an :class:`~lessons_lib.exercises.engine.Exercise`: its
    reference, its cases), or a dict and each object in it (``EXERCISES``)."""
    _record_space(where, owner)
    if isinstance(owner, dict):
        for key, value in list(owner.items()):
            record_object(f"{where}[{key!r}]", value)
    else:
        _record_functions(where, dict(vars(owner)), None)


def accept(function: types.FunctionType) -> None:
    """Count ``function``'s code, defaults and closure as they are now as recorded: a swap the check made
    itself (the judge's stand-in for a library answer, in the child that runs a learner's code)."""
    for where, (recorded, _) in list(_FUNCTIONS.items()):
        if recorded is function:
            _FUNCTIONS[where] = (function, _state(function))


# --------------------------------------------------------------------------- what changed since
def _unchanged(namespace, before: dict) -> bool:
    """Whether every name of ``before`` still holds the very object it held then, in one pass in C."""
    return all(map(is_, map(namespace.get, before, repeat(_MISSING)), before.values()))


def _rebound(owner, before: dict, ignore: frozenset) -> list[str]:
    """The names of ``before`` that ``owner`` no longer holds as they were (``ignore``'s apart)."""
    now = _namespace(owner)
    if _unchanged(now, before):
        return []
    return [attr for attr, value in before.items()
            if now.get(attr, _MISSING) is not value and attr not in ignore
            and not (owner is builtins and attr.startswith("_"))]


def _swapped(function: types.FunctionType, before: tuple) -> bool:
    now = _state(function)
    return not (all(a is b for a, b in zip(now[:3], before[:3]))
                and len(now[3]) == len(before[3]) and all(a is b for a, b in zip(now[3], before[3])))


#: a function's parts a cell can swap in place, and where :func:`_state` keeps each
_PARTS = ((attrgetter("__code__"), 0), (attrgetter("__defaults__"), 1), (attrgetter("__kwdefaults__"), 2))


def _all_kept(recorded: list) -> bool:
    """Whether no recorded ``(function, state)`` was swapped: the functions without a closure in one pass in
    C per part, the others one by one."""
    plain = [pair for pair in recorded if not pair[1][3]]
    functions, states = [f for f, _ in plain], [state for _, state in plain]
    for part, index in _PARTS:
        if not all(map(is_, map(part, functions), map(itemgetter(index), states))):
            return False
    return not any(_swapped(f, state) for f, state in recorded if state[3])


def changes() -> list[str]:
    """Dotted names of what changed since it was recorded: rebound or deleted (to anything at all), a
    function's code, defaults or closure swapped in place, a module replaced in ``sys.modules``, an
    ``ll.X`` name no longer its module's. Names added since do not count."""
    found = []
    for where, (owner, before, ignore) in list(_SPACES.items()):
        dict_like = isinstance(owner, dict)
        found += [f"{where}[{attr!r}]" if dict_like else f"{where}.{attr}"
                  for attr in _rebound(owner, before, ignore)]
    if not _all_kept(list(_FUNCTIONS.values())):
        found += [f"{where} (its code)" for where, (function, state) in list(_FUNCTIONS.items())
                  if _swapped(function, state)]
    found += [f"sys.modules[{name!r}]" for name, module in list(_MODULES.items())
              if sys.modules.get(name) is not module]
    found += [f"{package.__name__}.{name}" for package, name, _ in _moved_exports()]
    return found


def _moved_exports() -> list[tuple[types.ModuleType, str, object]]:
    """``(package, name, its module's object)`` for each exported ``ll.X`` name that no longer holds its
    module's object (that object is ``_MISSING`` where the module lost it too)."""
    moved = []
    for name, (package, home) in list(_EXPORTS.items()):
        value, module = vars(package).get(name, _MISSING), sys.modules.get(home)
        if value is not _MISSING and module is not None:
            original = vars(module).get(name, _MISSING)
            if original is not value:
                moved.append((package, name, original))
    return moved


def restore() -> None:
    """Put the record back: every rebound or deleted name, every swapped function's code, defaults and
    closure, every replaced module (after a learner's call that ran in the kernel's own process)."""
    for owner, before, ignore in list(_SPACES.values()):
        for attr in _rebound(owner, before, ignore):
            if isinstance(owner, dict):
                owner[attr] = before[attr]
            elif isinstance(owner, (type, types.ModuleType)):
                setattr(owner, attr, before[attr])
            else:  # a frozen dataclass (an Exercise)
                object.__setattr__(owner, attr, before[attr])
    for function, state in list(_FUNCTIONS.values()):
        if _swapped(function, state):
            code, defaults, kwdefaults, cells = state
            function.__code__, function.__defaults__, function.__kwdefaults__ = code, defaults, kwdefaults
            for cell, content in zip(function.__closure__ or (), cells):
                if content is not _MISSING:
                    cell.cell_contents = content
    for name, module in list(_MODULES.items()):
        if sys.modules.get(name) is not module:
            sys.modules[name] = module
    for package, name, original in _moved_exports():
        if original is not _MISSING:
            setattr(package, name, original)
