"""The text of a check's feedback: arrays shown small, exceptions explained in plain words.

Part of the exercise engine (:mod:`.engine`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

import numpy as np

from .outcome import Outcome, error_kind

__all__ = ["quoted_names", "shape_text", "show", "describe", "case_text",
           "error_entry", "explain_error", "kind_of",
           "dtype_words", "count", "said", "QUOTE_ERRORS", "SETTINGS"]

#: Whether feedback quotes the message of the learner's exception. The grade's judge turns it off: its
#: verdicts are in the course's words only (a learner's message can carry what their process could reach).
QUOTE_ERRORS = True
SETTINGS = ("QUOTE_ERRORS",)  # names the seal of the library lets change


def said(error: BaseException) -> str:
    """The message of a learner's exception, or, where feedback quotes none (:data:`QUOTE_ERRORS`), words
    saying so."""
    return str(error) if QUOTE_ERRORS else "its message is not quoted in the grade"


def quoted_names(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def shape_text(x) -> str:
    """``(3, 5)`` → ``'3×5'``."""
    return "×".join(str(n) for n in np.shape(x))


def show(x, prefix: str = "") -> str:
    """A small array as text, its later lines indented to follow ``prefix``."""
    if isinstance(x, np.ndarray) and x.size > 30:
        return f"array of shape {x.shape} (too big to print here)"
    if isinstance(x, np.ndarray):
        try:
            return np.array2string(x, precision=4, suppress_small=True, separator=", ", prefix=prefix)
        except (TypeError, ValueError):
            return repr(x)
    text = repr(x)
    return text if len(text) <= 200 else text[:200] + " …"


def case_text(case) -> str:
    """A case without its numbers: its label and each input's shape (``"random 3×5 scores (x: 3×5)"``)."""
    parts = []
    for name, value in case.args.items():
        if isinstance(value, np.ndarray):
            parts.append(f"{name}: {shape_text(value)}")
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            parts.append(f"{name} = {value}")
    return f"{case.label} ({', '.join(parts)})" if parts else case.label


def describe(outcome: Outcome, outputs: tuple[str, ...] = ()) -> str:
    """The failing case in text: inputs, expected answer, the learner's answer."""
    lines = [f"Case: {outcome.case.label}"]
    rows = list(outcome.case.args.items())

    def answer(label, value):
        if outputs and isinstance(value, (tuple, list)) and len(value) == len(outputs):
            return [(f"{label} {name}", part) for name, part in zip(outputs, value)]
        return [(label, value)]

    if outcome.expected is not None:
        rows += answer("expected", outcome.expected)
    if outcome.error is None and not outcome.timed_out:
        rows += answer("yours", outcome.result)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        prefix = f"  {name:<{width}} = "
        lines.append(prefix + show(value, prefix))
    if outcome.timed_out:
        lines.append("  yours: did not finish in time (stopped by the check)")
    elif outcome.error is not None:
        lines.append(f"  yours: {explain_error(outcome)}")
        lines.append(f"  (Python's own message: {type(outcome.error).__name__}: {said(outcome.error)})")
    return "\n".join(lines)


# Plain-word explanations of exceptions: (does it apply?, what happened, how to fix).
ERRORS: tuple[tuple[Callable[[BaseException], bool], Callable[[BaseException], str], str], ...] = (
    (
        lambda e: error_kind(e).startswith("matrix product shapes"),
        lambda e: "the two matrices of a product do not fit together"
        + (f" (inner sizes {m[1]} and {m[2]})" if (m := re.search(r"size (\d+) is different from (\d+)",
                                                                   said(e))) else f" ({said(e)})")
        + ": the first one's number of columns must equal the second one's number of rows.",
        "Print the shapes just before the product, e.g. print(A.shape, B.shape), and write down which two "
        "sizes must be equal.",
    ),
    (
        lambda e: error_kind(e).startswith("broadcast shapes"),
        lambda e: "numpy could not line up two arrays element by element"
        + (f" (shapes {m[1]} and {m[2]})" if (m := re.search(r"shapes (\(.*?\)) (\(.*?\))", said(e))) else "")
        + ". Element-wise operations (+, -, *, /) need matching sizes, or sizes of 1.",
        "Write the shape of each array on that line: numpy lines up their sizes from the right, and only "
        "equal sizes, or a size of 1, fit together.",
    ),
    (
        lambda e: isinstance(e, np.exceptions.AxisError),
        lambda e: f"it asked for an axis that does not exist ({said(e)}).",
        "Count the axes of the array you work on: print its .ndim, and compare it with the axis your "
        "line asks for.",
    ),
    (
        lambda e: isinstance(e, NotImplementedError),
        lambda e: "it still raises NotImplementedError for this input, although it runs on others "
        "(a branch, or a case such as this shape, still to be written).",
        "Make the function work for every input of the right shape, not only the first example.",
    ),
    (
        lambda e: isinstance(e, NameError),
        lambda e: f"it uses a name Python does not know ({said(e)}).",
        "Look for a typo, or run the cells above first (for example the one with `import numpy as np`).",
    ),
    (
        lambda e: isinstance(e, RecursionError),
        lambda e: "it calls itself again and again until Python gives up.",
        "Inside the function, compute with numpy instead of calling the function you are writing.",
    ),
    (
        lambda e: isinstance(e, (OverflowError, FloatingPointError)),
        lambda e: f"a number grew too large for a float ({said(e)}).",
        "A float holds numbers up to about 1.8e308 (lesson 04, section 3): print the intermediate arrays "
        "on the case below to find the line where one grows past that.",
    ),
    (
        lambda e: isinstance(e, AttributeError),
        lambda e: f"it used an attribute or method this kind of object does not have ({said(e)}).",
        "Check the spelling, and that you work with numpy arrays (np.array), not lists.",
    ),
    (
        lambda e: isinstance(e, TypeError),
        lambda e: f"an operation got a kind of value it cannot handle ({said(e)}).",
        "Check the number and order of the arguments, and that you work with numpy arrays.",
    ),
    (
        lambda e: True,
        lambda e: f"{said(e).rstrip('.') or 'no message'}.",
        "Read the message, then run your function by hand on a small array to see where it stops.",
    ),
)


def error_entry(outcome: Outcome):
    return next(entry for entry in ERRORS if entry[0](outcome.error))


def explain_error(outcome: Outcome) -> str:
    where = f" at {outcome.line}" if outcome.line else ""
    what = error_entry(outcome)[1](outcome.error)
    return f"Your function stopped with a {type(outcome.error).__name__}{where}: {what}"


def kind_of(value) -> str:
    """A learner-friendly name for the kind of a returned value."""
    module = type(value).__module__.split(".")[0]
    if module == "torch":
        return "a torch tensor"
    if inspect.isgenerator(value):
        return "a generator"
    return f"a {type(value).__name__}"



def dtype_words(dtype: np.dtype) -> str:
    if dtype.kind == "c":
        return (f"complex numbers (dtype {dtype}). Attention works with real numbers; a complex result "
                "usually comes from np.emath / np.lib.scimath or from mixing in a complex constant "
                "such as 1j.")
    if dtype.kind == "O":
        return (f"Python objects (dtype {dtype}), not floats: numpy falls back to objects when np.array is "
                "given rows of different lengths, torch tensors, or a mix of numbers and other things.")
    return f"dtype {dtype}, which is not a number type."




def count(n: int, one: str, many: str) -> str:
    """``count(1, 'key', 'keys')`` → ``'1 key'``; ``count(3, ...)`` → ``'3 keys'``."""
    return f"{n} {one if n == 1 else many}"
