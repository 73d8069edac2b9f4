"""The concept quiz: the same five questions before the course (lesson 00) and after it (lesson 10).

Ungraded, and there to measure what a class learned: ``ll.concept_quiz("pre")`` at the start of lesson 00
and ``ll.concept_quiz("post")`` at the end of lesson 10 show the same questions (the quiz widget of
:mod:`.widget`, a tab each). The **first** answer a learner checks to each question is recorded in
``concept-quiz.json`` beside the notebook (the kernel's working folder), one entry per phase::

    {"quiz": "concepts", "pre": {"shapes": {"answer": "B", "correct": false}, ...}, "post": {...}}

Later picks change nothing (a second try after feedback says nothing about what the learner knew). In
lesson 00 a check only records and says the answers come in lesson 10; in lesson 10 it records and
explains, as every quiz does. On a hub that grades with nbgrader, the file is handed in with the
notebook (``nbgrader submit`` takes the assignment's folder), and ``tools/class_report.py`` reads the
collected files: each question's share of right answers before and after, and the class's normalised gain
⟨g⟩ = (post − pre) / (100% − pre), from the class averages (Hake, 1998). Each question tests one course
outcome of the teacher's guide (:data:`CONCEPTS`: the outcome beside each question).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .model import LETTERS, Question, R, W, ask

__all__ = ["Concept", "CONCEPTS", "concept_quiz", "record_answer", "read_record", "phase_score",
           "normalised_gain"]

#: the file beside the notebook that keeps a learner's answers
RECORD = "concept-quiz.json"
#: before the course (lesson 00) and after it (lesson 10)
PHASES = ("pre", "post")


@dataclass(frozen=True)
class Concept:
    """One question of the concept quiz: a stable key (what the record stores), the course outcome it tests
    (``O1``…, the teacher's guide), and the question."""

    key: str
    outcome: str
    question: Question


CONCEPTS: tuple[Concept, ...] = (
    Concept("shapes", "O1", ask(
        "Q has shape (6, 4) and K has shape (9, 4). What is the shape of the score matrix Q·Kᵀ?",
        ("(9, 6)", W, "That is K·Qᵀ. The scores have one row per query and one column per key: 6 × 9."),
        ("(6, 9)", R, "Yes: one row per query (6) and one column per key (9); the d_k = 4 numbers of each "
                      "query and key disappear into the dot product."),
        ("(4, 4)", W, "That would be Qᵀ·K, a product over the tokens. Attention compares tokens with "
                      "tokens, so the scores are queries × keys."),
        ("(6, 4)", W, "That is the shape of Q itself. The scores pair every query with every key."),
        source="course outcome O1; lessons 02-03")),
    Concept("weights", "O2", ask(
        "After the softmax, what is true of one row of the attention weights?",
        ("Its numbers are at least 0 and add up to 1, so the token's output is a weighted average of the "
         "value vectors.", R,
         "Right: each row is a probability distribution over the keys, and the output mixes the values "
         "with those shares, so it stays among them."),
        ("Its numbers are 0 or 1: each token picks exactly one other token.", W,
         "That is a hard lookup. Softmax gives every key a share; only very large score gaps make a row "
         "nearly one-hot."),
        ("Its numbers add up to d_k.", W,
         "d_k is the width of the queries and keys; softmax always makes a row add up to 1."),
        ("Its numbers can be negative when two tokens are unrelated.", W,
         "Scores can be negative, but exp turns every score into a positive number before the division."),
        source="course outcome O2; lessons 01, 05")),
    Concept("scaling", "O3", ask(
        "Why are the scores divided by √d_k before the softmax?",
        ("So that each row adds up to 1.", W, "The softmax does that, whatever the scale."),
        ("To make attention faster to compute.", W, "One division per score costs the same either way."),
        ("Because a dot product of d_k random numbers spreads like √d_k: without it, long queries give "
         "huge scores, the softmax puts almost everything on one key, and learning stalls.", R,
         "Yes: the variance of q·k grows with d_k; dividing by √d_k brings it back to about 1, so the "
         "softmax stays soft and its gradients do not vanish."),
        ("To keep the scores positive.", W, "Dividing by a positive number keeps every sign as it was."),
        source="course outcome O3; lesson 04")),
    Concept("causal", "O5", ask(
        "A language model must not let a token see the tokens after it. Where does the causal mask act?",
        ("It sets the weights above the diagonal to 0 after the softmax.", W,
         "Then the rows no longer add up to 1, and the future still shaped the normalisation: it leaks."),
        ("It sets the scores above the diagonal to −∞ before the softmax.", R,
         "Right: exp(−∞) = 0, so the future gets exactly no weight and the row's 1 is shared among the "
         "past and the token itself."),
        ("It removes the diagonal, so that no token looks at itself.", W,
         "A token may look at itself; the mask keeps the diagonal and removes what lies above it."),
        ("It sets the scores below the diagonal to −∞.", W,
         "Below the diagonal lie the earlier tokens, which a token may see. The future is above it."),
        source="course outcome O5; lesson 07")),
    Concept("cost", "O6", ask(
        "A text grows from 1,000 to 2,000 tokens. How does the work of plain attention grow, and what "
        "does FlashAttention change about it?",
        ("The work doubles; FlashAttention halves it again.", W,
         "Every token meets every other: the number of scores grows with N², and FlashAttention computes "
         "the same scores."),
        ("The work grows 4 times; FlashAttention computes the same result without ever storing the N × N "
         "matrix, so its memory grows with N, not N².", R,
         "Yes: 2,000² / 1,000² = 4. FlashAttention is exact and does the same work, tile by tile with an "
         "online softmax; what it saves is memory (and, on a GPU, time spent moving data)."),
        ("The work grows 4 times; FlashAttention makes it grow only 2 times by skipping small weights.", W,
         "FlashAttention skips nothing: it is exact. Only its memory grows linearly."),
        ("Nothing changes: attention costs the same for any length.", W,
         "Each of N queries meets each of N keys: N² scores."),
        source="course outcome O6; lesson 08")),
)


def _file(folder: Path | str | None) -> Path:
    return Path(folder if folder is not None else Path.cwd()) / RECORD


def read_record(path: Path | str) -> dict:
    """A learner's record (``concept-quiz.json``): ``{"pre": {key: {"answer", "correct"}}, "post": …}``.

    A missing file is an empty record; a file that is not a record raises ``ValueError`` naming it.
    """
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a concept-quiz record ({exc})") from None
    if not isinstance(data, dict) or data.get("quiz") != "concepts":
        raise ValueError(f"{path} is not a concept-quiz record (no \"quiz\": \"concepts\")")
    return {phase: data.get(phase, {}) for phase in PHASES if phase in data}


def record_answer(phase: str, key: str, choice, folder: Path | str | None = None) -> bool:
    """Record ``choice`` (a letter, an index or the option's text) to question ``key`` of ``phase``, unless
    that question has an answer recorded already; return whether this call recorded it."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}; got {phase!r}.")
    concept = next((c for c in CONCEPTS if c.key == key), None)
    if concept is None:
        raise ValueError(f"{key!r} is not a question of the concept quiz; its keys: "
                         f"{[c.key for c in CONCEPTS]}.")
    index = concept.question.index_of(choice)
    path = _file(folder)
    data = {"quiz": "concepts", **read_record(path)}
    answers = data.setdefault(phase, {})
    if key in answers:
        return False
    answers[key] = {"answer": LETTERS[index], "correct": concept.question.options[index].correct}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return True


def phase_score(record: dict, phase: str) -> float | None:
    """The share of the concept questions answered right in ``phase`` (unanswered count as wrong);
    None when the learner answered none of that phase."""
    answers = record.get(phase) or {}
    if not answers:
        return None
    return sum(bool(answers.get(c.key, {}).get("correct")) for c in CONCEPTS) / len(CONCEPTS)


def normalised_gain(pre: float, post: float) -> float | None:
    """⟨g⟩ = (post − pre) / (1 − pre) for class-average shares pre and post (0 to 1); None when pre = 1.

    >>> round(normalised_gain(0.4, 0.7), 2)
    0.5
    """
    for name, value in (("pre", pre), ("post", post)):
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must be a share between 0 and 1; got {value!r}.")
    return None if pre == 1 else (post - pre) / (1 - pre)


def _respond(phase: str, folder: Path | str | None):
    def respond(view, choice) -> str:
        if choice is None:
            return view.question.feedback(None)
        key = CONCEPTS[view.number - 1].key
        try:
            new = record_answer(phase, key, choice, folder)
        except OSError as exc:  # a read-only folder: the quiz still answers
            saved = f" (Your answer could not be saved: {exc.strerror or exc}.)"
        else:
            saved = " Your first answer is recorded." if new else " Your first answer was recorded already."
        if phase == "pre":
            letter = LETTERS[view.question.index_of(choice)]
            return (f"Answer {letter} noted.{saved} No answers yet: you meet these questions again at the "
                    "end of lesson 10, and then you see what you learned.")
        first, *rest = view.question.feedback(choice).split("\n")
        return "\n".join([first + saved, *rest])
    return respond


def concept_quiz(phase: str, folder: Path | str | None = None):
    """The concept quiz of ``phase`` ("pre" in lesson 00, "post" in lesson 10) as a :class:`~.widget.Quiz`
    that records each question's first checked answer in ``folder``/concept-quiz.json (default: the
    kernel's working folder, which is the notebook's)."""
    from .widget import Quiz

    if phase not in PHASES:
        raise ValueError(f"phase must be \"pre\" (lesson 00) or \"post\" (lesson 10); got {phase!r}.")
    title = "Concept quiz, before the course" if phase == "pre" else "Concept quiz, after the course"
    return Quiz("concepts", questions=[c.question for c in CONCEPTS], title=title,
                respond=_respond(phase, folder))
