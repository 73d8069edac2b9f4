"""The checking engine: run the learner's function, compare with the reference, name the mistake.

A lesson's exercise is *content*: an :class:`Exercise` built from a few
:class:`Case` inputs and a table of :class:`Mistake` entries. This module is the
machinery every exercise shares, so a lesson never writes checking code.

How a check works
-----------------
1. A function whose body is only ``...``, ``pass`` or a docstring, or that raises
   ``NotImplementedError`` on *every* case, is "not attempted" (shown, not raised,
   so a notebook still runs top to bottom).
2. The learner's function runs on each case, on copies of the inputs, with a time limit
   (:data:`TIME_LIMIT_S` per case), in a forked child process where the system has one
   (:mod:`.runner`): a function that does not finish is killed, and the check names the case
   it hung on. Whatever it raises, returns or changes in place is recorded; nothing escapes but
   ``KeyboardInterrupt``.
3. Each answer is compared with the library's own reference function (never a
   solutions file), computed after the learner's function ran: same structure,
   floating-point dtype, values within ``rtol=1e-6, atol=1e-9``, and the inputs left
   untouched. The comparison reaches numpy through ``ndarray``'s own methods only
   (:func:`.outcome.allclose`), which no notebook cell can rebind.
4. The judge is not borrowed or patched: a function that calls the library's answer to the
   exercise (its ``reference``, its ``formula``, the ``library_answers``, any code of this
   folder) does not pass (``library_answer``), nor does one whose notebook or call replaced the
   tools the check relies on (``tampered``). Honest answers never meet either.
5. On the first failing case the mistake is diagnosed *by experiment*:

   * a wrong kind of answer (None, a tuple, a list, a torch tensor, a generator,
     complex or object arrays, a timeout) is named first;
   * then the lesson's candidate mistakes, in table order. A candidate built with
     :func:`like` (wrong implementations of the formula) is named only when it behaves
     like the learner's function on **every** case, so shapes where two mistakes look
     alike cannot name the wrong one; a plain predicate looks at the failing case only;
   * reading a notebook variable instead of an argument is tried automatically;
   * otherwise a generic message (an exception explained in plain words, wrong shape,
     NaN/inf, "the numbers are off"): never a guess.

   A case whose input cannot be honoured (an odd d_head for RoPE) has a :class:`Refusal` as its
   answer: the reference returns one, with the library's message and the words a clear message
   contains; the learner's function is right there when it raises ``ValueError`` with one of those
   words, and a failure there is named by the lesson's table or as ``not_refused``.

Adding an exercise to a later lesson (content only)
---------------------------------------------------
Create ``lessons_lib/exercises/lessonNN_name.py`` (it is found automatically:
every ``lesson*`` module's ``__all__`` becomes part of :mod:`lessons_lib.exercises`)::

    import numpy as np
    from ..core import masks  # the library's reference
    from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

    __all__ = ["check_causal_mask"]

    def _cases():                              # shapes where the mistakes differ:
        return [Case("3 queries, 5 keys", {"n_queries": 3, "n_keys": 5}),   # L ≠ S, none 4 or 16
                Case("6 queries, 2 keys", {"n_queries": 6, "n_keys": 2})]

    def _hidden(rng):                          # unseen cases of the same kind, sizes drawn
        return [Case(f"{q} queries, {k} keys", {"n_queries": q, "n_keys": k})
                for q, k in (distinct_sizes(rng, 2) for _ in range(3))]

    CAUSAL_MASK = Exercise(
        name="my_causal_mask", params=("n_queries", "n_keys"),
        task="builds the causal mask (True = may attend)",
        reference=masks.causal_mask, cases=_cases, hidden=_hidden,
        library_answers=(masks.causal_mask,),  # calling it does not count as an answer
        start_hint="np.tril of a (n_queries, n_keys) array of True.",
        mistakes=(
            Mistake("upper", "the upper triangle is kept instead of the lower",
                    "Query i may see keys 0..i, which lie on and below the diagonal.",
                    "Keep the keys on and below the diagonal: np.tril, not np.triu.",
                    like(lambda n_queries, n_keys: np.triu(np.ones((n_queries, n_keys), bool)))),
        ),
        answer_kind="b",                        # a bool array is expected (default "f": floats)
    )

    def check_causal_mask(fn):
        \"\"\"Check the learner's ``my_causal_mask(n_queries, n_keys)``. Notebook 07. Never raises.\"\"\"
        return CAUSAL_MASK.check(fn)

Then add a test: a learner's version of each mistake, with the words its feedback must say, to
``MISTAKES`` in ``tests/helpers/wrong_answers.py``. The generic tests of ``tests/exercises/`` run
every ``like`` candidate of every exercise through its check and require that its own mistake is
named, so the cases must tell the mistakes apart (``test_checks_pass_solutions_and_name_mistakes.py``);
run the solution and every candidate on the unseen cases of many secrets (the solution passes, no
candidate does: ``test_unseen_cases.py``); and hold every hint and message against every line of
the notebooks' worked solutions (a hint names the idea and where to look, never a solution line:
``test_hints_and_messages.py``). A learner function that
returns several arrays is declared with ``outputs=("Q", "K", "V")`` (see
``lesson02_step1_qkv``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _seal
from ..course.feedback import FAILED, NOT_ATTEMPTED, PASSED, Feedback
from .catalogue import (
    FALLBACK_MISTAKES,
    LIBRARY_ANSWER,
    NOT_REFUSED,
    TAMPERED,
    TYPE_MISTAKES,
    uses_global_instead,
)
from .messages import count, kind_of, shape_text, show
from .mistakes import Mistake, either, every_case, like
from .outcome import Case, Outcome, Refusal
from .runner import TIME_LIMIT_S, is_placeholder, run
from .watch import Watch

__all__ = [
    "TIME_LIMIT_S",
    "Case",
    "Refusal",
    "Outcome",
    "Mistake",
    "Exercise",
    "shown_name",
    "Feedback",
    "like",
    "either",
    "every_case",
    "run",
    "rng_cases",
    "distinct_sizes",
    "SIZES",
    "count",
    "shape_text",
    "show",
]


@dataclass(frozen=True)
class Exercise:
    """One exercise: the learner's function name and arguments, the reference, cases, mistakes.

    ``reference`` is the library's own function (the truth the answers are compared with).
    ``formula`` is the bare textbook expression without input checks (default: the
    reference), from which "a notebook variable instead of an argument" candidates are
    built. ``outputs`` names the arrays of a function that returns several, e.g.
    ``("Q", "K", "V")``; empty for one array. ``answer_kind`` lists the dtype kinds a
    right answer may have ("f": floating point). ``time_limit`` is in seconds per case.
    ``adapt`` turns the learner's function into what the cases compare, when that is not its
    return value (lesson 06: a function returning W_Q, W_K is judged by where its head looks).
    ``library_answers`` are the library functions that compute this exercise's answer (``softmax``
    for ``my_softmax``): a learner's function that calls one of them, the ``reference`` or the
    ``formula`` does not pass. ``hidden`` draws the cases of :func:`~.grading.check_hidden` from a
    random generator: new sizes and values, and the edge rows the exercise is about.
    """

    name: str
    params: tuple[str, ...]
    task: str
    reference: Callable
    cases: Callable[[], list[Case]]
    mistakes: tuple[Mistake, ...]
    start_hint: str
    formula: Callable | None = None
    outputs: tuple[str, ...] = ()
    answer_kind: str = "f"
    time_limit: float | None = None  # None: TIME_LIMIT_S
    adapt: Callable | None = None
    library_answers: tuple[Callable, ...] = ()
    hidden: Callable[[np.random.Generator], list[Case]] | None = None

    def check(self, fn) -> Feedback:
        """Run ``fn`` on every case and say PASSED, NOT YET (naming the mistake) or NOT ATTEMPTED YET.

        Never raises, except ``KeyboardInterrupt`` (the learner's stop button).
        """
        try:
            return self._check(fn)
        except Exception as exc:  # a check never raises
            return Feedback(
                self.name, FAILED,
                f"The checker itself ran into a problem ({type(exc).__name__}: {exc}). This is not "
                "your fault; please tell your teacher, and check your function by hand meanwhile.",
                mistake="checker_error",
            )

    def _check(self, fn) -> Feedback:
        if not callable(fn):
            return self._not_callable(fn)
        if is_placeholder(fn):
            return self._not_attempted()
        planted = _seal.changes()
        if planted:  # the notebook replaced a tool of the judge before the check: nothing it says could count
            before = Outcome(Case("before the check ran", {}), tampered=tuple(planted))
            return self._feedback(TAMPERED, before)
        watch, learner = self._watch(fn), fn
        if self.adapt is not None:
            fn = self.adapt(fn)
        limit = TIME_LIMIT_S if self.time_limit is None else self.time_limit
        outcomes = []
        for case in self.cases():
            outcomes.append(run(fn, case, None, limit, self.answer_kind, self.outputs, watch))
            if outcomes[-1].tampered or outcomes[-1].timed_out:  # do not wait for the next cases too
                break
        # the reference after every call: no call can reach it, and no case's child (forked from this
        # process) holds the answer to an earlier case
        for outcome in outcomes:
            outcome.expected = self.reference(*outcome.case.args.values())
        if outcomes and outcomes[-1].tampered:
            return self._feedback(TAMPERED, outcomes[-1], learner)
        if outcomes and outcomes[-1].timed_out:
            return self._feedback(TYPE_MISTAKES[0], outcomes[-1], learner)
        if all(o.not_attempted for o in outcomes):
            return self._not_attempted()
        failing = next((o for o in outcomes if not o.ok), None)
        absent = next((o for o in outcomes if o.absent), None)  # (the grade's judge: whatever else it did)
        borrowed = absent or next((o for o in outcomes if o.borrowed), None)
        if borrowed is not None:
            borrowed.borrowed = tuple(_public(name) for name in borrowed.borrowed)
        if (failing is None or absent is not None) and borrowed is not None:
            return self._feedback(LIBRARY_ANSWER, borrowed, learner)
        if failing is None:
            labels = "; ".join(o.case.label for o in outcomes)
            return Feedback(
                self.name, PASSED,
                f"Well done: {self.name} {self.task} correctly on all {len(outcomes)} test cases ({labels}).",
            )
        feedback = self._feedback(self._diagnose(fn, failing, outcomes), failing, learner)
        notable = [n for n in borrowed.borrowed if not n.startswith(_OWN)] if borrowed is not None else []
        if notable:  # the mistake first; and calling the library does not count either
            feedback = dataclasses.replace(
                feedback, message=f"{feedback.message} Also, your function calls the course library's own "
                f"answer ({', '.join(notable)}), which does not count as solving the exercise.")
        return feedback

    def _watch(self, fn) -> Watch:
        """What the learner's function must not call: the library's answers, the reference, the formula."""
        codes = {}
        for function in (*self.library_answers, self.reference, self.formula):
            code = getattr(function, "__code__", None)
            if code is not None:
                codes[id(code)] = shown_name(function, self.name)
        own = [*_own_codes(fn)]  # the grade's judge builds the learner's function where it runs
        if self.adapt is not None:  # the check's own wrapper calls the learner's function, and more
            wrapper = self.adapt(fn)
            own += [*_own_codes(wrapper), getattr(wrapper, "__code__", None) if wrapper is not fn else None]
        trusted = frozenset({id(c) for c in own if c is not None and c.co_filename.startswith(_FOLDER)})
        return Watch(codes, _FOLDER, trusted)

    def _feedback(self, mistake: Mistake, outcome: Outcome, learner=None) -> Feedback:
        """The mistake's feedback; the hint grows more specific each time a notebook's function (one
        defined in ``__main__``) makes the same mistake again in this kernel."""
        attempt = 0
        if getattr(learner, "__module__", None) == "__main__":
            key = (self.name, mistake.key)
            attempt = _ATTEMPTS.get(key, 0)
            _ATTEMPTS[key] = attempt + 1
        return mistake.feedback(self.name, outcome, self.outputs, attempt)

    def _diagnose(self, fn, failing: Outcome, outcomes: list[Outcome]) -> Mistake:
        if isinstance(failing.expected, Refusal):   # the input had to be refused: no answer's kind to judge
            return next((m for m in self.mistakes if m.matches(failing, outcomes)), NOT_REFUSED)
        typed = next((m for m in TYPE_MISTAKES if m.test(failing)), None)
        if typed is not None:
            return typed
        if not failing.values_ok:
            globals_read = uses_global_instead(fn, self.params, self.formula or self.reference)
            for mistake in (*self.mistakes, *globals_read):
                if mistake.matches(failing, outcomes):  # the first in the table's order
                    return mistake
        return next(m for m in FALLBACK_MISTAKES if m.test(failing))

    def _not_attempted(self) -> Feedback:
        return Feedback(
            self.name, NOT_ATTEMPTED,
            f"{self.name} is not written yet: it still holds the placeholder. Replace "
            f"`raise NotImplementedError(...)` (or `...`) with your code, run that cell, then run this "
            "check again.",
            self.start_hint,
        )

    def _not_callable(self, fn) -> Feedback:
        if fn is None:
            what = "None"
        elif isinstance(fn, np.ndarray):
            what = f"an array of shape {fn.shape} (probably the result of calling your function)"
        else:
            what = kind_of(fn)
        return Feedback(
            self.name, FAILED,
            f"The check needs your function itself, but it got {what}.",
            f"Pass the function without calling it: check(...)({self.name}), not {self.name}(...).",
            mistake="not_callable",
        )


#: The folder of the exercises: code here (references, formulas, candidates) is never a learner's answer.
_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: Names of this folder's own code: a wrong candidate of a table is reported by its mistake alone.
_OWN = "lessons_lib.exercises."
#: How often each (exercise, mistake) was named for a notebook's function in this kernel.
_ATTEMPTS: dict[tuple[str, str], int] = {}
#: Every exercise of the course by the learner's function name (``EXERCISES["my_softmax"]``), filled by the
#: package as it loads its lessons (``lessons_lib.exercises.EXERCISES``, the same dict).
EXERCISES: dict[str, Exercise] = {}


def _own_codes(wrapper) -> list:
    """The code of the methods of ``wrapper``'s class (an object of this folder that calls the learner's
    function for the check), which the watch must not count as the library's answer."""
    methods = vars(type(wrapper)).values() if not isinstance(wrapper, type) else ()
    return [getattr(m, "__code__", None) for m in methods if callable(m)]


def _public(name: str) -> str:
    """``ll.attention_weights`` for ``lessons_lib.core.attention.attention_weights``, where that is the name
    a learner knows (also inside ``"… (which runs …)"``)."""
    import lessons_lib

    def short(match):
        module, _, attr = match.group(0).rpartition(".")
        function = getattr(sys.modules.get(module), attr, None)
        public = function is not None and getattr(lessons_lib, attr, None) is function
        return f"ll.{attr}" if public else match.group(0)

    return re.sub(r"lessons_lib(?:\.\w+)+", short, name)


def shown_name(function, exercise: str) -> str:
    """``ll.softmax`` for a public name of lessons_lib, else where the function lives."""
    import lessons_lib

    name = getattr(function, "__name__", "")
    if name and name != "<lambda>" and getattr(lessons_lib, name, None) is function:
        return f"ll.{name}"
    if getattr(function, "__code__", None) is not None and function.__code__.co_filename.startswith(_FOLDER):
        return f"EXERCISES[{exercise!r}]'s own reference"
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', name)}"


def rng_cases(specs, seed: int, make) -> list[Case]:
    """``[make(rng, *spec) for spec in specs]`` with one seeded generator: random cases, same every run."""
    rng = np.random.default_rng(seed)
    return [make(rng, *spec) for spec in specs]


#: Sizes an unseen case may take: none is 1 (a size that hides a transpose or a division), 4 (where
#: d/2 = √d) or 16 (where √16 = 4).
SIZES = (2, 3, 5, 6, 7, 8, 9)


def distinct_sizes(rng: np.random.Generator, n: int, sizes: tuple[int, ...] = SIZES) -> list[int]:
    """``n`` different sizes drawn from ``sizes``: within one case no two dimensions agree, so no shape
    makes two mistakes look alike (the rule the visible cases follow, for the unseen ones)."""
    return [int(v) for v in rng.choice(sizes, size=n, replace=False)]
