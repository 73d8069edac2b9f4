"""Short multiple-choice quizzes, one per lesson, with an explanation for every option.

In a notebook::

    import lessons_lib as ll
    ll.show("04")                    # the quiz of notebook 04, as widgets

Each question lists its options as A, B, C, ...; the learner picks a letter and
presses *Check*. A wrong pick gets the explanation of why that option is wrong
(and may try again); a right pick gets why it is right, plus why each other option
is wrong. Without a browser, the same feedback comes back as text::

    q = ll.Quiz("02")
    q.answer(0, "B")                 # question 1, option B -> feedback text

``ll.QUIZZES[lesson_id]`` holds the questions, from ``QUESTIONS`` of each lesson's
``quizzes/lessonNN_name.py``. A question is written once: a quiz that asks another lesson's
question imports it by name (the review of lesson 10 asks the seed's Q1, Q2 and Q3 as
``SEED_Q1`` from lesson 02, ``SEED_Q2`` from 05 and ``SEED_Q3`` from 08). Every question has
exactly one correct option; :class:`Question` refuses anything else.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

__all__ = ["Option", "Question"]

LETTERS = string.ascii_uppercase


@dataclass(frozen=True)
class Option:
    """One answer: its text, whether it is correct, and why (or why not)."""

    text: str
    correct: bool
    explanation: str


@dataclass(frozen=True)
class Question:
    """A question with its options; exactly one option is correct.

    ``source`` notes where the question comes from (e.g. the seed lesson's
    "Check Your Understanding" question it rephrases), for maintainers.
    """

    prompt: str
    options: tuple[Option, ...]
    source: str = ""

    def __post_init__(self):
        object.__setattr__(self, "options", tuple(self.options))
        if len(self.options) < 2:
            raise ValueError(f"A question needs at least 2 options; {self.prompt!r} has {len(self.options)}.")
        n_correct = sum(option.correct for option in self.options)
        if n_correct != 1:
            raise ValueError(f"A question needs exactly one correct option; {self.prompt!r} has {n_correct}.")
        for letter, option in zip(LETTERS, self.options):
            if not option.text.strip() or not option.explanation.strip():
                raise ValueError(f"Option {letter} of {self.prompt!r} needs both a text and an explanation.")
        if len({option.text for option in self.options}) != len(self.options):
            raise ValueError(f"Two options of {self.prompt!r} have the same text.")

    @property
    def correct_index(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)

    def index_of(self, choice) -> int:
        """The option index for ``choice``: an index (0, 1, ...), a letter ("A", "b") or the option's text."""
        if isinstance(choice, bool):
            raise TypeError(f"Choose an option by letter (A-{LETTERS[len(self.options) - 1]}) or index; "
                            f"got {choice!r}.")
        if isinstance(choice, int):
            if 0 <= choice < len(self.options):
                return choice
        elif isinstance(choice, str):
            text = choice.strip()
            if len(text) == 1 and text.upper() in LETTERS[: len(self.options)]:
                return LETTERS.index(text.upper())
            for i, option in enumerate(self.options):
                if option.text == text:
                    return i
        else:
            raise TypeError(f"Choose an option by letter or index; got {choice!r} ({type(choice).__name__}).")
        raise ValueError(
            f"{choice!r} is not one of the options: use a letter A-{LETTERS[len(self.options) - 1]} "
            f"or an index 0-{len(self.options) - 1}."
        )

    def feedback(self, choice) -> str:
        """The feedback text for picking ``choice`` (see :meth:`index_of`); None means nothing picked."""
        if choice is None:
            return "Pick an answer first, then press Check."
        index = self.index_of(choice)
        picked = self.options[index]
        letter = LETTERS[index]
        if not picked.correct:
            return f"✗ Not quite: {letter} is not the answer. {picked.explanation} Try another answer."
        others = [f"{LETTERS[i]}. {option.text} — {option.explanation}"
                  for i, option in enumerate(self.options) if i != index]
        return "\n".join([f"✓ Correct: {letter}. {picked.explanation}", "Why not the others:", *others])

    def text(self, number: int | None = None) -> str:
        """The question and its lettered options as plain text (no answers)."""
        head = f"Q{number}. {self.prompt}" if number is not None else self.prompt
        return "\n".join([head, *(f"  {LETTERS[i]}. {o.text}" for i, o in enumerate(self.options))])


def ask(prompt: str, *options: tuple[str, bool, str], source: str = "") -> Question:
    return Question(prompt, tuple(Option(*option) for option in options), source)


R, W = True, False  # right, wrong: keeps the tables below readable
