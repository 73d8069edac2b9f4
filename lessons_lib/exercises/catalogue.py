"""The mistakes any exercise can make: a wrong kind of answer, the generic fallbacks, a notebook variable.

Part of the exercise engine (:mod:`.engine`), which tries :data:`TYPE_MISTAKES` before a
lesson's own mistakes, then :func:`uses_global_instead`, then :data:`FALLBACK_MISTAKES`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from .messages import dtype_words, error_entry, explain_error, kind_of, quoted_names, show
from .mistakes import Mistake, like
from .outcome import InputRequested, Outcome, Refusal, close

__all__ = ["TYPE_MISTAKES", "FALLBACK_MISTAKES", "TAMPERED", "LIBRARY_ANSWER", "NOT_REFUSED",
           "uses_global_instead"]


def _is_torch(value) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _single(o: Outcome) -> bool:
    """The exercise expects one array (not a tuple of several)."""
    return not isinstance(o.expected, tuple)


def _returned(o: Outcome) -> bool:
    return o.error is None and not o.timed_out


def _bad_dtype(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "OSUVcMm"


def _first_bad_part(o: Outcome):
    """(index, value) of the first output that is not a numpy array of numbers, for tuple exercises."""
    for i, part in enumerate(o.result):
        if not isinstance(part, np.ndarray) or _bad_dtype(part):
            return i, part
    return None



# Mistakes any exercise can make, checked in this order. TYPE first (before the
# exercise's own mistakes), FALLBACK when no exercise-specific mistake fits.
TYPE_MISTAKES = (
    Mistake(
        "timed_out", "it did not finish in time",
        lambda o: f"On the case \"{o.case.label}\" your function was still running after "
        f"{o.time_limit:g} s, " + (
            "and the check could not stop it: it is still running in the background and keeps a "
            "processor core busy until you restart the kernel (Kernel → Restart Kernel). "
            if o.still_running else "so the check stopped it. ")
        + "These inputs are tiny: a right answer takes about a millisecond. An endless loop is the usual "
        "cause (a `while` whose condition never becomes False, or a loop that changes a copy instead of "
        "its counter).",
        "Look at each loop: does something inside it move it toward its end? This exercise needs no loop "
        "at all: numpy works on whole arrays at once.",
        lambda o: o.timed_out,
    ),
    Mistake(
        "waits_for_input", "it waits for input",
        lambda o: f"On the case named below your function asked for input: {_input_words(o)}. A check "
        "cannot type an answer, so it stopped the function at once instead of waiting for one. input(), "
        "breakpoint() and a debugger are for trying things by hand; the function itself must compute its "
        "answer from its arguments alone.",
        "Remove the line that asks for input (left in from debugging?), run its cell again, then this check.",
        lambda o: isinstance(o.error, InputRequested),
    ),
    Mistake(
        "out_of_memory", "it runs out of memory",
        lambda o: f"On the case named below your function needed more memory than there is: "
        f"{_memory_words(o)}. These inputs are tiny, and the answer is an array about their size. An array "
        "far larger usually comes from a shape made of values instead of sizes, or from sizes combined into "
        "a far larger one.",
        "Print the shape of each array your function makes, on the case named here: which one is far "
        "larger than the inputs?",
        lambda o: isinstance(o.error, MemoryError),
    ),
    Mistake(
        "too_deep", "it calls itself too deeply",
        "Your function calls itself (or functions that call each other) so deeply that it reached Python's "
        "limit on nested calls, and went on. That deep, the check cannot follow what your function calls, "
        "so it cannot pass it. These exercises need no recursion at all.",
        "Work on whole arrays at once, with numpy's array operations as the lesson does, instead of a "
        "function that calls itself.",
        lambda o: o.too_deep and o.error is None and not o.timed_out,
    ),
    Mistake(
        "returned_none", "it returns None",
        "Your function returned None. A Python function returns None when it reaches its end "
        "without a `return` statement (computing a value in the last line is not enough).",
        "End the function with `return <your result>`.",
        lambda o: _returned(o) and o.result is None,
    ),
    Mistake(
        "returned_generator", "it returns a generator, not the numbers",
        "Your function returned a generator: `(... for ... in ...)` in round brackets describes a "
        "computation that has not run yet, so there are no numbers in it.",
        "Compute the whole array with numpy operations, or wrap a loop's rows in np.array([...]) "
        "with square brackets.",
        lambda o: _returned(o) and inspect.isgenerator(o.result),
    ),
    Mistake(
        "returned_tensor", "it returns a torch tensor, not a numpy array",
        "Your function returned a torch tensor. These exercises work in numpy, and the next step of "
        "the lesson expects a numpy array.",
        "Stay in numpy from start to end; if you used torch on purpose, end with .numpy().",
        lambda o: _returned(o) and (_is_torch(o.result) or (
            isinstance(o.result, (tuple, list)) and any(_is_torch(p) for p in o.result))),
    ),
    Mistake(
        "returned_tuple", "it returns a tuple, not one array",
        lambda o: f"Your function returned a tuple of {len(o.result)} "
        f"item{'s' if len(o.result) != 1 else ''}, but the answer is one array of shape "
        f"{np.shape(o.expected)}. A comma makes a tuple: `return a, b` or a trailing comma in "
        "`return a,` returns a tuple.",
        "Return a single array: remove the extra comma, or the extra value.",
        lambda o: _single(o) and _returned(o) and isinstance(o.result, tuple),
    ),
    Mistake(
        "returned_list", "it returns a Python list",
        lambda o: f"Your function returned a {type(o.result).__name__}, not a numpy array. Lists do not "
        "support numpy's whole-array arithmetic, broadcasting or .shape, so the next step of attention "
        "could not use it.",
        "Work with numpy arrays from start to end, or convert the result at the end with np.array(...).",
        lambda o: _single(o) and _returned(o) and isinstance(o.result, list),
    ),
    Mistake(
        "not_a_tuple", "it does not return the outputs as a tuple",
        lambda o: f"Your function returned {kind_of(o.result)}"
        + (f" of shape {o.result.shape}" if isinstance(o.result, np.ndarray) else "")
        + f", but this exercise returns {len(o.expected)} arrays at once.",
        lambda o: f"End with `return {', '.join(_output_names(o))}` "
        "(a tuple: the arrays separated by commas).",
        lambda o: not _single(o) and _returned(o) and not isinstance(o.result, (tuple, list)),
    ),
    Mistake(
        "wrong_count", "it returns the wrong number of outputs",
        lambda o: f"Your function returned {len(o.result)} item{'s' if len(o.result) != 1 else ''}, but "
        f"this exercise returns {len(o.expected)}: {', '.join(_output_names(o))}.",
        lambda o: f"End with `return {', '.join(_output_names(o))}`.",
        lambda o: not _single(o) and _returned(o) and isinstance(o.result, (tuple, list))
        and len(o.result) != len(o.expected),
    ),
    Mistake(
        "output_not_an_array", "one of the outputs is not a numpy array of numbers",
        lambda o: (lambda i, part: f"Output {i + 1} ({_output_names(o)[i]}) is {kind_of(part)}"
                   + (f" holding {dtype_words(part.dtype)}" if isinstance(part, np.ndarray) else "")
                   + ", not a numpy array of floats.")(*_first_bad_part(o)),
        "Compute each output as a numpy array of floats, and return the arrays themselves.",
        lambda o: not _single(o) and _returned(o) and isinstance(o.result, (tuple, list))
        and len(o.result) == len(o.expected) and _first_bad_part(o) is not None,
    ),
    Mistake(
        "not_an_array", "it does not return a numpy array",
        lambda o: f"Your function returned {kind_of(o.result)} {show(o.result)}, but the answer is "
        f"an array of shape {np.shape(o.expected)}."
        + (" A reduction applied to the whole array, with no axis given, collapses it into one number."
           if np.ndim(o.result) == 0 else ""),
        "Return an array of the shape the exercise asks for: write the shape of each intermediate result "
        "next to its line, and find the line where it becomes a single number.",
        lambda o: _single(o) and _returned(o) and not isinstance(o.result, np.ndarray),
    ),
    Mistake(
        "not_numeric", "it returns an array that does not hold real numbers",
        lambda o: f"Your function returned an array of {dtype_words(o.result.dtype)}",
        "Keep the computation in numpy floats from start to end.",
        lambda o: _single(o) and _returned(o) and _bad_dtype(o.result),
    ),
)


def _input_words(o: Outcome) -> str:
    """What the function did to ask for input, from its :class:`InputRequested` ("it calls input()")."""
    text = str(o.error) if isinstance(o.error, InputRequested) else ""
    return text or "it calls input(), breakpoint() or reads standard input"


def _memory_words(o: Outcome) -> str:
    """The memory error in words: numpy's "Unable to allocate 7.28 TiB for an array with shape ...", or the
    system's killing of the process (the runner's words)."""
    text = str(o.error) if isinstance(o.error, MemoryError) else ""
    return text.rstrip(".") if text else "it asked for more memory than the system could give"


def _names(names) -> str:
    names = list(names)
    shown = ", ".join(f"`{n}`" for n in names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


#: The function (or the notebook) changed the tools the check judges with; ``o.tampered`` names them.
TAMPERED = Mistake(
    "tampered", "the check's own tools were changed",
    lambda o: f"Your code replaced {_names(o.tampered)}, which the check uses to judge the answer. "
    "Changing the judge does not count as solving the exercise, so the check does not pass it; what "
    "changed while your function ran was put back.",
    "Leave numpy, Python's builtins and lessons_lib as they are, and compute the answer from the "
    "function's arguments. If a cell of your notebook changed them, remove that cell and restart the "
    "kernel (Kernel → Restart Kernel), then run your cells again.",
    lambda o: bool(o.tampered),
)

#: The function called the library's own answer to the exercise; ``o.borrowed`` names what it called.
LIBRARY_ANSWER = Mistake(
    "library_answer", "it calls the course library's own answer",
    lambda o: f"Your function calls {_names(o.borrowed)}: the course library's answer to this exercise, "
    "the very thing the check compares with. Calling the library's answer does not count: the exercise "
    "is to compute it yourself.",
    "Write the computation with numpy operations, step by step as the lesson above shows; the library "
    "is for looking at results, not for the exercise's answer.",
    lambda o: bool(o.borrowed),
)


def _what_it_did(o: Outcome) -> str:
    if o.error is None:
        return "your function returned an answer instead"
    if isinstance(o.error, ValueError):
        return f"your function stops with “{o.error}”, which does not say what was wrong"
    return f"your function raised {type(o.error).__name__} (“{o.error}”), not a ValueError"


#: A case whose right answer is to refuse the input (its expected answer is a ``Refusal``) was not refused
#: with a ValueError that says why; a lesson's own table may name the case more precisely first.
NOT_REFUSED = Mistake(
    "not_refused", "it does not refuse an input it cannot handle",
    lambda o: f"On the case “{o.case.label}” the right answer is to stop with a ValueError that says what "
    f"is wrong, as the course library does (“{o.expected.message}”); {_what_it_did(o)}.",
    ("Before computing, ask whether this input makes sense for your function; when it does not, stop "
     "with an error that tells the caller why.",
     "The message is for a person: it names the argument and what is wrong with it.",
     "Run your function on the case below and read the message it gives."),
    lambda o: isinstance(o.expected, Refusal),
)


def _output_names(o: Outcome) -> list[str]:
    return list(o.outputs) if o.outputs else [f"output {i + 1}" for i in range(len(o.expected))]


def _differences(o: Outcome) -> str:
    """Which output differs, and by how much."""
    if not isinstance(o.expected, tuple):
        return f"largest difference {np.max(np.abs(o.result - o.expected)):.3g}"
    names = _output_names(o)
    parts = []
    for name, mine, right in zip(names, o.result, o.expected):
        if mine.shape != right.shape:
            parts.append(f"{name} has shape {mine.shape} instead of {right.shape}")
        elif not close(mine, right):
            parts.append(f"{name} is off by up to {np.max(np.abs(mine - right)):.3g}")
    good = [n for n, mine, right in zip(names, o.result, o.expected) if close(mine, right)]
    return "; ".join(parts) + (f" ({', '.join(good)} right)" if good else "")


FALLBACK_MISTAKES = (
    Mistake(
        "raised", "it raises an exception",
        explain_error,
        lambda o: error_entry(o)[2],
        lambda o: o.error is not None,
    ),
    Mistake(
        "wrong_shape", "the result has the wrong shape",
        lambda o: (f"Expected shape {o.expected.shape}, got {o.result.shape}." if _single(o)
                   else f"The shapes differ: {_differences(o)}."),
        "Write the shape next to each line of your function, and compare the last one with the shape the "
        "exercise asks for: the first line whose shape differs from your plan is the one to fix.",
        lambda o: (o.result.shape != o.expected.shape if _single(o)
                   else any(r.shape != e.shape for r, e in zip(o.result, o.expected))),
    ),
    Mistake(
        "not_finite", "the result contains NaN or infinity",
        "Some entries are NaN (not a number) or ±inf: somewhere a number grew too large for a float, or a "
        "0/0 happened.",
        "Print the intermediate arrays on the case below to find where the first NaN or inf appears.",
        lambda o: not all(np.all(np.isfinite(part)) for part in (o.result if not _single(o) else [o.result])),
    ),
    Mistake(
        "wrong_dtype", "the result has the wrong kind of numbers",
        lambda o: f"The values are right, but your answer has dtype {o.result.dtype}; the answer "
        f"is an array of {o.expected.dtype}.",
        "Keep the computation in floating point (np.float64), from start to end.",
        lambda o: _single(o) and o.result.dtype.kind not in o.answer_kind and close(
            o.result.astype(o.expected.dtype, copy=False), o.expected),
    ),
    Mistake(
        "wrong_values", "the numbers are off",
        lambda o: "The shape is right but the values differ from the expected answer "
        f"({_differences(o)}).",
        "Compare your answer with the expected one on the small case below, entry by entry.",
        lambda o: not o.values_ok,
    ),
    Mistake(
        "mutates_input", "it changes its input in place",
        lambda o: f"Your answer is right, but your function changed its input {quoted_names(o.mutated)}. "
        "In-place operations (like x -= ..., x /= ..., x[...] = ...) overwrite the caller's array, "
        "so the scores or weights the notebook computed earlier are silently altered.",
        "Build a new array instead of changing the one you were given: give each result a new name, "
        "and never write into an argument (no x[...] = or x -= on it).",
        lambda o: bool(o.mutated),
    ),
    Mistake(
        "left_running", "it leaves a process running",
        lambda o: f"Your answer is right, but your function started {_processes(o)} and returned while it "
        "was still running; the check stopped it. A function that starts a process and does not wait for it "
        "leaves it using the server's processors and memory after the function is done.",
        "Compute the answer inside the function itself; a process it starts (multiprocessing, subprocess) "
        "must be waited for (.join(), .wait()) before the function returns.",
        lambda o: bool(o.left_running),
    ),
)


def _processes(o: Outcome) -> str:
    names = sorted(set(o.left_running))
    if not names:
        return "a process"
    return (f"a process ({names[0]})" if len(names) == 1 and o.left_running.count(names[0]) == 1
            else f"processes ({', '.join(names)})")


def uses_global_instead(fn: Callable, params: tuple[str, ...], formula: Callable) -> list[Mistake]:
    """Mistakes of reading a notebook variable instead of an argument (e.g. K instead of V).

    ``params``: the exercise's parameter names (``("weights", "V")``); ``formula``: what it computes. For
    each global array the learner's function ``fn`` reads, a candidate computes ``formula`` with that array
    in place of one argument.
    """
    code, namespace = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    if code is None:
        return []
    arrays = {n: namespace[n] for n in code.co_names if isinstance(namespace.get(n), np.ndarray)}
    try:  # the learner's own parameter names, which the message should use
        names = [*inspect.signature(fn).parameters][: len(params)]
    except (TypeError, ValueError):
        names = []
    names += params[len(names):]
    mistakes = []
    for name, array in arrays.items():
        for position, param in enumerate(names):
            def candidate(*args, _pos=position, _array=array):
                return formula(*args[:_pos], _array, *args[_pos + 1:])

            if params[position] == "V" and name.lower().startswith("k"):
                mistakes.append(Mistake(
                    "weights_on_keys", "the weights are applied to K instead of V",
                    f"Your function multiplies the weights by the notebook variable `{name}` (the keys) "
                    "instead of its argument V (the values). Keys only decide where each query looks; "
                    "the values are the content that gets mixed into the output.",
                    "Use the function's own argument V (the values), not the notebook's keys.",
                    like(candidate),
                ))
            else:
                mistakes.append(Mistake(
                    "uses_global", f"it reads the notebook variable `{name}` instead of its argument",
                    f"Your function computes with `{name}`, a variable defined elsewhere in the notebook, "
                    f"where it should use its own argument `{param}`. The check passes new inputs, "
                    "so the answer must depend only on the arguments.",
                    f"Inside the function, use `{param}` (the name in the `def` line), not `{name}`.",
                    like(candidate),
                ))
    return mistakes

