"""The pipe between a check and the child that runs a learner's function: what travels, and how.

The child (:mod:`.child`) sends two kinds of message, each a kind byte and a length before its body, so
that the report's end needs no end of file: ``H``, a watched call (or a stand-in's, :data:`ABSENT`), sent
the moment it happens, so that what the code watched does afterwards cannot take it back; and ``R``, the
report. The answer in it is data only (arrays, numbers, tuples, text), and only as much as a verdict
needs: an answer far larger than its inputs travels as its shape and dtype (:func:`pack`), so a 100 MB
wrong answer does not grow the kernel; the check's side (:mod:`.processes`) rebuilds nothing the
learner's code defined (:func:`load` accepts no other class) and reads no message larger than an honest
one (:class:`Reader`).
"""

from __future__ import annotations

import builtins
import inspect
import io
import os
import pickle
import struct
import sys

import numpy as np

from .outcome import InputRequested

__all__ = ["ABSENT", "MAX_REPORT", "Reader", "send", "dumps", "answer_items", "pack", "unpack", "bounded",
           "pack_error", "rebuild_error", "load"]

#: How a stand-in's call is told apart from a watched call on the wire (``H`` messages).
ABSENT = "absent:"
_DUMPS = pickle.dumps  # captured: the child's own pickle module may be rebound by the code it runs
#: An answer may hold this many numbers, or 64 times as many as its inputs, before only its shape and
#: dtype come back (:func:`pack`): every exercise's right answer is the size of its inputs or smaller.
_ANSWER_ITEMS = 1 << 16


def dumps(report: dict) -> bytes:
    """A report as the wire carries it (plain data: :func:`pack`'s)."""
    return _DUMPS(report, 5)


# --------------------------------------------------------------------------- the messages
#: Before each message from the child: its kind (b"H" a watched call, b"R" the report) and its length, so
#: that the report's end needs no end of file, and a watched call is sent the moment it happens.
_HEADER = struct.Struct("!cQ")


#: The most a report may hold besides the answer's numbers (the prints, the error's text, the names).
MAX_REPORT = 1 << 20


class Reader:
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
                self.data = dumps({"broken": "its answer was too large to read back"})
                return
            if len(self.buffer) < _HEADER.size + size:
                return
            body = bytes(self.buffer[_HEADER.size:_HEADER.size + size])
            del self.buffer[:_HEADER.size + size]
            if kind == b"H":
                self.hits.append(body.decode("utf-8", "replace")[:500])
            else:
                self.done, self.complete, self.data = True, True, body


def send(fd: int, kind: bytes, body: bytes) -> None:
    view = memoryview(_HEADER.pack(kind, len(body)) + body)
    while view:
        view = view[os.write(fd, view):]


def answer_items(args: tuple) -> int:
    """How many numbers an answer may hold and still come back whole: :data:`_ANSWER_ITEMS`, or 64 times
    the numbers of the inputs."""
    given = sum(int(np.size(a)) for a in args if isinstance(a, np.ndarray))
    return max(_ANSWER_ITEMS, 64 * given)


# Packing an answer in the child: plain data only, tagged. Anything else travels as a description
# (its type's name and module, its repr), so that no class of the learner's is ever rebuilt here.
def _plain(value) -> bool:
    return type(value) in (bool, int, float, complex, str, bytes, type(None), type(Ellipsis)) or (
        isinstance(value, np.generic) and type(value).__module__ == "numpy")


def pack(value, items: int = _ANSWER_ITEMS, depth: int = 0):
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
        return ("t" if isinstance(value, tuple) else "l", [pack(v, items, depth + 1) for v in value])
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


def bounded(value, items: int):
    """``value`` with any array of more than ``items`` numbers replaced by its :func:`_stand_in` (the thread
    mode's answer, kept in this process: the same bound as a child's)."""
    if isinstance(value, np.ndarray) and value.size > items:
        return _stand_in(value.shape, _dtype_text(value.dtype))
    if isinstance(value, tuple):
        return tuple(bounded(v, items) for v in value)
    if isinstance(value, list):
        return [bounded(v, items) for v in value]
    return value


def _empty_generator():
    yield from ()


def unpack(packed):
    tag = packed[0]
    if tag in ("v", "a"):
        return packed[1]
    if tag == "big":
        return _stand_in(*packed[1:])
    if tag in ("t", "l"):
        items = [unpack(p) for p in packed[1]]
        return tuple(items) if tag == "t" else items
    _, name, module, text, generator = packed
    if generator:
        return _empty_generator()
    stand_in = type(name, (), {"__module__": module, "__repr__": lambda self: text})
    return stand_in()


def pack_error(exc: BaseException) -> dict:
    try:
        text = str(exc)
    except Exception:
        text = ""
    return {"mro": [(c.__module__, c.__qualname__) for c in type(exc).__mro__
                    if issubclass(c, BaseException)], "text": text[:2000]}


def rebuild_error(description: dict) -> BaseException:
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
    if module == InputRequested.__module__ and qualname == InputRequested.__qualname__:
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


def load(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()

