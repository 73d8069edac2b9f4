"""Grading with nbgrader: a check's verdict as a one-line assertion, and the same check on unseen cases.

The interactive checks (``check_softmax(my_softmax)``) never raise: they return a
:class:`~lessons_lib.course.feedback.Feedback` box. nbgrader grades a test cell by whether it raises,
so each exercise's graded test cell (written by ``tools/stamp_notebooks.py``) wraps the same
check, twice::

    ll.assert_passes(ll.check_softmax(my_softmax))                # the cases the learner sees
    ll.assert_passes(ll.check_hidden("my_softmax", my_softmax))   # unseen cases, drawn when it runs

The cell raises exactly when a check does not pass (not yet, or not attempted). In the learner's kernel
that is all it can be: a notebook can change anything there, ``ll`` itself included. So ``nbgrader
autograde`` does not take the kernel's word for it: the course's judge (:mod:`.judge`, run by
:mod:`.autograde`) runs :func:`graded_calls` of each graded cell again in a process of its own, and a
cell passes only when both say so.

**The failure, one line.** :func:`assert_passes` raises an ``AssertionError`` whose message is one line
in this form (another tool, the class report, counts the named mistakes by it)::

    <exercise>: NOT YET (<mistake>): <message> Hint: <nudge> Failing case: <label (input shapes)>
    <exercise>: NOT ATTEMPTED YET: <message> Hint: <where to start>

that is, the learner's function name, a colon, ``NOT YET`` with the mistake's name in brackets (or
``NOT ATTEMPTED YET`` without one), a colon, then text. The nudge is the mistake's first, least
specific hint, never a line of the solution; the failing case is named by its label and the shapes
of its inputs, without its numbers. In a notebook (and so in nbgrader's feedback) the error shows as
that one line only: no traceback, no path of the server's files, no test code.

**Unseen cases.** :func:`check_hidden` runs the same check on cases that each exercise's ``hidden``
generator draws: new sizes, new values, and the edge rows the exercise is about (large logits, masked
rows, rows far apart). In a learner's kernel they are drawn afresh at random on every run. The grade's
are the course's own: the judge draws them from a seed that autograde derives, outside every learner's
process, from the course's secret (:func:`course_seed`: HMAC-SHA256 of the exercise's name with the
secret, which :func:`read_secret` reads from the teacher's ``~/.lessons-secret``). Every learner of the
course meets the same unseen cases, two courses with two secrets meet different ones, and nothing a
learner has or can print (this library, the release, the notebook, the environment and memory of the
kernel that runs their notebook) holds the secret.

**Reading it back.** :func:`read_verdict`, here beside :func:`assert_passes`, reads that line back: the
class report (``tools/class_report.py``) counts the mistakes of a class from the graded notebooks with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import re
import secrets
import stat

# Python's own functions as they were when the library loaded: the graded cell's verdict must not run on a
# builtin a notebook rebound (lessons_lib/_seal.py names it instead).
from builtins import (  # noqa: UP029  (captured on purpose)
    callable,
    isinstance,
    str,
    type,
    vars,
)
from pathlib import Path

import numpy as np

from .. import _seal
from .._checks import check_seed, did_you_mean
from ..course.feedback import Feedback
from .catalogue import TAMPERED
from .engine import EXERCISES, Case
from .outcome import Outcome

# learners' and teachers' names (ll.check_hidden); the rest is for autograde's judge (.autograde, .judge)
__all__ = ["assert_passes", "read_verdict", "Verdict", "hidden_cases", "check_hidden"]

#: The teacher's file holding the course's secret for the unseen cases (a new one each term).
SECRET_FILE = "~/.lessons-secret"
#: Fewer characters than this is no secret (``tools/hub_grading.py teacher`` writes 32).
SECRET_LENGTH = 16
#: Set (to "on") in the environment of the kernels that autograde starts when the course's judge grades
#: them: a graded cell that runs under ``nbgrader autograde`` without it says the judge is missing.
JUDGE_VARIABLE = "LESSONS_JUDGE"
#: The variable an older config put the secret in, where every learner's kernel could print it.
LEAKED_VARIABLE = "LESSONS_HIDDEN_SECRET"


def assert_passes(feedback: Feedback) -> None:
    """Raise ``AssertionError`` unless ``feedback`` says PASSED; its one-line message names the mistake.

    >>> assert_passes(Feedback("my_f", "passed", "Well done."))
    >>> assert_passes(Feedback("my_f", "failed", "Rows do not sum to 1.", mistake="wrong_axis",
    ...                        nudge="Rows?", case="3×5 (x: 3×5)"))
    Traceback (most recent call last):
    AssertionError: my_f: NOT YET (wrong_axis): Rows do not sum to 1. Hint: Rows? Failing case: 3×5 (x: 3×5)
    """
    if not isinstance(feedback, Feedback):
        raise TypeError(_not_feedback(feedback))
    if os.environ.get("NBGRADER_EXECUTION") == "autograde" and os.environ.get(JUDGE_VARIABLE) != "on":
        exercise = str(vars(feedback).get("exercise", "the exercise"))
        raise _one_line(AssertionError(
            f"{exercise}: NOT GRADED: this autograde runs without the course's judge, so no grade can be "
            "trusted. The course's nbgrader_config.py did not load, or does not set "
            "c.Autograde.autograde_preprocessors (docs/classroom.md, Grading with nbgrader); nbgrader's log "
            "says which."))
    planted = _seal.changes()
    if planted:  # the notebook replaced a tool of the judge (Feedback.passed, say): nothing it says can count
        exercise = str(vars(feedback).get("exercise", "the exercise"))
        outcome = Outcome(Case("before grading", {}), tampered=tuple(planted))
        raise _one_line(AssertionError(
            f"{exercise}: NOT YET ({TAMPERED.key}): Likely mistake: {TAMPERED.title}. "
            f"{TAMPERED.explain(outcome)} Hint: {TAMPERED.hints(outcome)[0]}"))
    if vars(feedback).get("status") == "passed":  # the field itself, against the word: no name to rebind
        return
    raise _one_line(AssertionError(verdict(feedback)))


def verdict(feedback: Feedback) -> str:
    """The one-line grading message of a feedback that did not pass (the form the module docstring gives)."""
    if feedback.passed is None:
        head = f"{feedback.exercise}: {_NOT_ATTEMPTED}: "
    else:
        head = f"{feedback.exercise}: {_NOT_YET} ({feedback.mistake or _UNNAMED}): "
    hint = feedback.nudge or feedback.hint
    parts = [feedback.message, f"Hint: {hint}" if hint else "",
             f"Failing case: {feedback.case}" if feedback.case else ""]
    return head + " ".join(" ".join(p.split()) for p in parts if p)


_NOT_YET, _NOT_ATTEMPTED = "NOT YET", "NOT ATTEMPTED YET"
_UNNAMED = "not_passed"  # the key of a failure that named no mistake
_VERDICT = re.compile(r"\b(my_\w+): (NOT ATTEMPTED YET|NOT YET)(?: \((\w+)\))?: ")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What a failed graded cell said: the exercise, whether it was attempted, the mistake it named."""

    exercise: str
    attempted: bool
    mistake: str | None  # the check's key (``wrong_axis``), or None when it named no mistake


def read_verdict(message: str) -> Verdict | None:
    """The verdict in a message of :func:`assert_passes` (the ``evalue`` of a failed graded cell,
    or the text of a feedback page); None when ``message`` holds none (another error).

    >>> read_verdict("my_softmax: NOT YET (wrong_axis): Rows do not sum to 1. Hint: axis=-1.")
    Verdict(exercise='my_softmax', attempted=True, mistake='wrong_axis')
    >>> read_verdict("my_scale: NOT ATTEMPTED YET: my_scale still raises NotImplementedError.")
    Verdict(exercise='my_scale', attempted=False, mistake=None)
    >>> read_verdict("name 'my_scale' is not defined") is None
    True
    """
    if not isinstance(message, str):
        raise TypeError(f"message must be the text of a graded cell's error; got {type(message).__name__}.")
    match = _VERDICT.search(message)
    if match is None:
        return None
    mistake = None if match.group(3) == _UNNAMED else match.group(3)
    return Verdict(match.group(1), match.group(2) == _NOT_YET, mistake)


#: Where autograde notes, in a graded cell's metadata, what the judge found about the learner's own kernel
#: (``{"integrity": "kernel_disagrees"}``); the class report reads it (:func:`integrity_note`).
JUDGE_NOTE = "lessons_judge"
#: The learner's kernel showed a graded cell passing, or no verdict at all, where the judge found a mistake
#: or the exercise not attempted: the cell's check was switched off in that kernel (``ll`` rebound, the
#: cell blanked, its error swallowed, a ``lessons_lib`` of one's own), so the judge's "mistake" is most
#: likely the placeholder of no work, not a misconception (a function that leans on a cell the judge does
#: not run, one that is not an answer cell, gets it too: a matter for a word with the learner).
KERNEL_DISAGREES = "kernel_disagrees"
#: The submission handed in a ``lessons_lib`` of its own beside its notebook: the learner's kernel imported
#: it in place of the course's (autograde's never does), so what grading found is not what they were shown.
OWN_LIBRARY = "own_library"
#: Verdicts that say nothing of the learner: the check itself failed, or the judge was stopped.
NOT_THE_LEARNERS = ("checker_error", "judge_stopped")


def integrity_note(cell) -> str | None:
    """The integrity key autograde noted on a graded ``cell`` (:data:`KERNEL_DISAGREES`), or None."""
    note = cell.get("metadata", {}).get(JUDGE_NOTE)
    found = note.get("integrity") if isinstance(note, dict) else None
    return found if isinstance(found, str) and found else None


def _one_line(error: AssertionError) -> AssertionError:
    """IPython (and so nbgrader's feedback) shows an exception with ``_render_traceback_`` as the lines it
    returns: here only ``AssertionError: <message>``, without the frames of this library."""
    error._render_traceback_ = lambda: [f"AssertionError: {error}"]
    return error


def _not_feedback(value) -> str:
    if callable(value):
        what = f"the function {getattr(value, '__name__', value)!r} itself"
    elif value is None:
        what = "None"
    else:
        what = f"{type(value).__name__} {value!r:.60}"
    return ("assert_passes needs what a check returns, as in "
            f"ll.assert_passes(ll.check_softmax(my_softmax)); it got {what}.")


def _graded_names() -> list[str]:
    """Every graded exercise of the course, by the name the learner defines (the registry's points)."""
    from ..course.lessons import LESSONS

    return [name for lesson in LESSONS.values() for name in lesson.points]


def _exercise(name, fn=None):
    """The exercise with unseen cases called ``name``; else a ValueError that says what went wrong: the
    arguments in the wrong order, an exercise with no unseen cases, or a name that is none (with the
    nearest one)."""
    exercises = EXERCISES
    with_unseen = {key: exercise for key, exercise in exercises.items() if exercise.hidden is not None}
    if isinstance(name, str) and name in with_unseen:
        return with_unseen[name]
    order = ("check_hidden takes the exercise's name first, then your function: "
             'll.check_hidden("{name}", {name}).')
    if not isinstance(name, str):
        given = getattr(name, "__name__", None) if callable(name) else None
        if isinstance(fn, str) or given in with_unseen:
            shown = fn if isinstance(fn, str) and fn in with_unseen else given or "my_softmax"
            raise ValueError(f"The name and the function are swapped: {order.format(name=shown)}")
        raise TypeError(f"check_hidden needs the exercise's name as text, such as \"my_softmax\"; got "
                        f"{type(name).__name__} {name!r:.60}. {order.format(name='my_softmax')}")
    if name in exercises or name in _graded_names():
        kind = " (a value to design, not a function)" if name not in exercises else ""
        raise ValueError(f"{name} is an exercise of the course{kind}, but it has no unseen cases: its own "
                         "check is the whole test, and its graded cell runs only that.")
    raise ValueError(f"There is no exercise called {name!r}.{did_you_mean(name, with_unseen)} The exercises "
                     f"with unseen cases are: {', '.join(sorted(with_unseen))}.")


def course_seed(secret: str, name: str) -> int:
    """The seed of exercise ``name``'s unseen cases in the course whose secret is ``secret``: HMAC-SHA256
    of the name with the secret, 63 bits. Autograde computes it outside every learner's process."""
    if not isinstance(secret, str) or not secret.strip():
        raise SecretError("the course's secret is empty")
    digest = hmac.new(secret.encode("utf-8"), f"lessons_lib hidden cases: {name}".encode(), hashlib.sha256)
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def hidden_cases(name: str, seed: int | None = None) -> list[Case]:
    """The unseen cases of exercise ``name`` (e.g. ``"my_softmax"``): from ``seed`` (the course's own:
    :func:`course_seed`), else drawn afresh at random."""
    exercise = _exercise(name)
    if seed is None:
        seed = secrets.randbits(63)
    return exercise.hidden(np.random.default_rng(check_seed(seed, allow_generator=False)))


def check_hidden(name: str, fn, seed: int | None = None) -> Feedback:
    """The check of exercise ``name`` (e.g. ``"my_softmax"``) run on :func:`hidden_cases` only: the
    course's own with ``seed`` (the grade's judge), else cases drawn at random for this run."""
    exercise = _exercise(name, fn)
    drawn = ("drawn with this course's secret" if seed is not None else
             "drawn at random for this run; the grade draws the course's own")
    seed = secrets.randbits(63) if seed is None else check_seed(seed, allow_generator=False)
    unseen = dataclasses.replace(exercise, cases=lambda: exercise.hidden(np.random.default_rng(seed)))
    feedback = unseen.check(fn)
    if feedback.passed is False and feedback.mistake not in ("tampered", "not_callable", "checker_error"):
        message = (f"On unseen cases ({drawn}): {feedback.message} Unseen cases are of the same kind as "
                   "the ones shown, with other sizes and numbers: a function that computes from its "
                   "arguments passes both.")
        return dataclasses.replace(feedback, message=message)
    if feedback.passed:
        return dataclasses.replace(feedback, message=f"{feedback.message} These cases were unseen, {drawn}.")
    return feedback


# ------------------------------------------------------------------ the graded cell, the secret
_CALL = re.compile(r"\bll\.assert_passes\(\s*ll\.(check_\w+)\("
                   r"\s*(?:[\"'](my_\w+)[\"']\s*,\s*)?(my_\w+)\s*\)\s*\)")


def graded_calls(source: str) -> list[tuple[str, str | None, str]]:
    """The checks a graded cell runs, in order, as ``(check, exercise name or None, the answer's name)``:
    ``("check_softmax", None, "my_softmax")`` for ``ll.assert_passes(ll.check_softmax(my_softmax))`` and
    ``("check_hidden", "my_softmax", "my_softmax")`` for its unseen cases (tools/stamp_notebooks.py writes
    them so).

    >>> graded_calls('ll.assert_passes(ll.check_hidden("my_scale", my_scale))')
    [('check_hidden', 'my_scale', 'my_scale')]
    """
    return [(m[1], m[2], m[3]) for m in _CALL.finditer(source)]


class SecretError(RuntimeError):
    """The course's secret cannot be used: grading stops, saying why and what to do."""


def read_secret(path: str | os.PathLike = SECRET_FILE) -> str:
    """The course's secret from the teacher's file, or a :class:`SecretError` that stops grading: a file
    that is missing, not a file, readable or writable by other users, empty, blank or too short to be a
    secret. (Run in nbgrader's process, never in a learner's kernel.)"""
    file = Path(os.path.expanduser(os.fspath(path)))
    make = ("python tools/hub_grading.py teacher makes one (or: python -c \"import secrets; "
            f"print(secrets.token_hex(16))\" > {path} && chmod 600 {path})")
    try:
        info = file.stat()
    except FileNotFoundError:
        raise SecretError(f"the course's secret file {path} does not exist: {make}. Grading stops: without "
                          "it the unseen cases would not be the course's own.") from None
    except OSError as exc:
        raise SecretError(f"the course's secret file {path} cannot be read ({exc.strerror}).") from None
    if not stat.S_ISREG(info.st_mode):
        raise SecretError(f"the course's secret file {path} is not a file.")
    if info.st_mode & 0o077:
        raise SecretError(f"the course's secret file {path} can be read or written by other users (mode "
                          f"{stat.S_IMODE(info.st_mode):04o}). As others may have read it, make a new one "
                          f"(python tools/hub_grading.py new-secret --secret-file {path}: the old one is "
                          "kept aside, the new one is yours alone); every exercise's unseen cases change "
                          "with it.")
    try:
        secret = file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SecretError(f"the course's secret file {path} cannot be read ({exc}).") from None
    if not secret:
        raise SecretError(f"the course's secret file {path} is empty: {make}.")
    if len(secret) < SECRET_LENGTH:
        raise SecretError(f"the course's secret in {path} is {len(secret)} characters long, too short to be "
                          f"a secret (at least {SECRET_LENGTH}): {make}.")
    return secret
