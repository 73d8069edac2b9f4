"""The checking engine: run the learner's function, compare with the reference, name the mistake.

A lesson's exercise is *content*: an :class:`Exercise` built from a few
:class:`Case` inputs and a table of :class:`Mistake` entries. This module is the
machinery every exercise shares, so a lesson never writes checking code.

How a check works
-----------------
1. A function whose body is only ``...``, ``pass`` or a docstring, or that raises
   ``NotImplementedError`` on *every* case, is "not attempted" (shown, not raised,
   so a notebook still runs top to bottom).
2. The learner's function runs on each case, on copies of the inputs, in a worker
   thread with a time limit (:data:`TIME_LIMIT_S` per case). A function that does not
   finish is stopped and the check names the case it hung on. Whatever it raises,
   returns or changes in place is recorded; nothing escapes but ``KeyboardInterrupt``.
3. Each answer is compared with the library's own reference function (never a
   solutions file): same structure, floating-point dtype, values within
   ``rtol=1e-6, atol=1e-9``, and the inputs left untouched.
4. On the first failing case the mistake is diagnosed *by experiment*:

   * a wrong kind of answer (None, a tuple, a list, a torch tensor, a generator,
     complex or object arrays, a timeout) is named first;
   * then the lesson's candidate mistakes, in table order. A candidate built with
     :func:`like` (wrong implementations of the formula) is named only when it behaves
     like the learner's function on **every** case, so shapes where two mistakes look
     alike cannot name the wrong one; a plain predicate looks at the failing case only;
   * reading a notebook variable instead of an argument is tried automatically;
   * otherwise a generic message (an exception explained in plain words, wrong shape,
     NaN/inf, "the numbers are off"): never a guess.

Adding an exercise to a later lesson (content only)
---------------------------------------------------
Create ``lessons_lib/exercises/lessonNN_name.py`` (it is found automatically:
every ``lesson*`` module's ``__all__`` becomes part of :mod:`lessons_lib.exercises`)::

    import numpy as np
    from ..core import masks  # the library's reference
    from .engine import Case, Exercise, Mistake, like, rng_cases

    __all__ = ["check_causal_mask"]

    def _cases():                              # shapes where the mistakes differ:
        return [Case("3 queries, 5 keys", {"n_queries": 3, "n_keys": 5}),   # L ≠ S, none 4 or 16
                Case("6 queries, 2 keys", {"n_queries": 6, "n_keys": 2})]

    CAUSAL_MASK = Exercise(
        name="my_causal_mask", params=("n_queries", "n_keys"),
        task="builds the causal mask (True = may attend)",
        reference=masks.causal_mask, cases=_cases,
        start_hint="np.tril of a (n_queries, n_keys) array of True.",
        mistakes=(
            Mistake("upper", "the upper triangle is kept instead of the lower",
                    "Query i may see keys 0..i, which lie on and below the diagonal.",
                    "Use np.tril, not np.triu.",
                    like(lambda n_queries, n_keys: np.triu(np.ones((n_queries, n_keys), bool)))),
        ),
        answer_kind="b",                        # a bool array is expected (default "f": floats)
    )

    def check_causal_mask(fn):
        \"\"\"Check the learner's ``my_causal_mask(n_queries, n_keys)``. Notebook 07. Never raises.\"\"\"
        return CAUSAL_MASK.check(fn)

Then add a test to ``tests/test_exercises.py``: the generic tests there run every
``like`` candidate of every exercise through its check and require that its own
mistake is named, so the cases must tell the mistakes apart. A learner function that
returns several arrays is declared with ``outputs=("Q", "K", "V")`` (see
``lesson02_step1_qkv``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..course.feedback import FAILED, NOT_ATTEMPTED, PASSED, Feedback
from .catalogue import FALLBACK_MISTAKES, TYPE_MISTAKES, uses_global_instead
from .messages import count, kind_of, shape_text, show
from .mistakes import Mistake, either, every_case, like
from .runner import TIME_LIMIT_S, Case, Outcome, is_placeholder, run

__all__ = [
    "TIME_LIMIT_S",
    "Case",
    "Outcome",
    "Mistake",
    "Exercise",
    "Feedback",
    "like",
    "either",
    "every_case",
    "run",
    "rng_cases",
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
        if self.adapt is not None:
            fn = self.adapt(fn)
        limit = TIME_LIMIT_S if self.time_limit is None else self.time_limit
        outcomes = []
        for case in self.cases():
            expected = self.reference(*case.args.values())
            outcome = run(fn, case, expected, limit, self.answer_kind, self.outputs)
            outcomes.append(outcome)
            if outcome.timed_out:  # do not wait for the next cases too
                return self._feedback(TYPE_MISTAKES[0], outcome)
        if all(o.not_attempted for o in outcomes):
            return self._not_attempted()
        failing = next((o for o in outcomes if not o.ok), None)
        if failing is None:
            labels = "; ".join(o.case.label for o in outcomes)
            return Feedback(
                self.name, PASSED,
                f"Well done: {self.name} {self.task} correctly on all {len(outcomes)} test cases ({labels}).",
            )
        return self._feedback(self._diagnose(fn, failing, outcomes), failing)

    def _feedback(self, mistake: Mistake, outcome: Outcome) -> Feedback:
        return mistake.feedback(self.name, outcome, self.outputs)

    def _diagnose(self, fn, failing: Outcome, outcomes: list[Outcome]) -> Mistake:
        typed = next((m for m in TYPE_MISTAKES if m.test(failing)), None)
        if typed is not None:
            return typed
        if not failing.values_ok:
            for mistake in (*self.mistakes, *uses_global_instead(self, fn)):
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


def rng_cases(specs, seed: int, make) -> list[Case]:
    """``[make(rng, *spec) for spec in specs]`` with one seeded generator: random cases, same every run."""
    rng = np.random.default_rng(seed)
    return [make(rng, *spec) for spec in specs]
