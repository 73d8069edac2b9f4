"""The concept quiz: the same five questions before the course (lesson 00) and after it (lesson 10).

Ungraded, and there to measure what a class learned: ``ll.concept_quiz("pre")`` at the start of lesson 00
and ``ll.concept_quiz("post")`` at the end of lesson 10 show the same questions (the quiz widget of
:mod:`.widget`, a tab each). The **first** answer a learner checks to each question is recorded in
``concept-quiz.json`` beside the notebook (the kernel's working folder), one entry per phase::

    {"quiz": "concepts", "pre": {"shapes": {"answer": "B", "correct": false}, ...}, "post": {...}}

Later picks change nothing (a second try after feedback says nothing about what the learner knew). In
lesson 00 a check only records and says the answers come in lesson 10; in lesson 10 it records and
explains, as every quiz does, and says what the learner answered in lesson 00; in the quiz's last tab a table
(:func:`comparison`) sets each question's answer of lesson 00 beside the one of lesson 10, kept up to date
as the learner checks. On a hub that grades with nbgrader, the file is handed in with the
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
           "normalised_gain", "comparison", "comparison_text", "comparison_html"]

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
        "A sentence of 10 tokens enters attention with d_model = 16, d_k = 8 and d_v = 4. What shape is "
        "the output, softmax(Q·Kᵀ / √d_k)·V?",
        ("(10, 10)", W, "That is the shape of the weights, one row per query and one column per key. "
                        "Multiplying them by V (10 × 4) gives one 4-number row per token."),
        ("(10, 4)", R, "Yes: Q and K are 10 × 8, the weights 10 × 10, and the weights times V (10 × 4) give "
                       "one row per token, d_v = 4 numbers each."),
        ("(10, 16)", W, "That is the shape of the input X. Attention's output has d_v numbers per token; "
                        "only a last projection (W_O) would bring it back to d_model."),
        ("(8, 4)", W, "d_k = 8 disappears inside the dot products of Q·Kᵀ; the output keeps one row per "
                      "token, so 10 rows."),
        source="course outcome O1; lessons 02-05")),
    Concept("weights", "O2", ask(
        "Token i gives weight 0.5 to token a, whose value vector is (2, 0), weight 0.5 to token b, whose "
        "value vector is (0, 4), and 0 to every other token. What is token i's output?",
        ("(2, 4)", W, "That adds the two values up. The weights share out one unit: each value counts "
                      "half."),
        ("(2, 0)", W, "That is token a's value alone; token b gets the same weight and counts as much."),
        ("(1, 2)", R, "Right: 0.5·(2, 0) + 0.5·(0, 4) = (1, 2), the weighted average of the two values, "
                      "halfway between them."),
        ("(0.5, 0.5)", W, "Those are the weights. The output mixes the value vectors with them: "
                          "0.5·(2, 0) + 0.5·(0, 4)."),
        source="course outcome O2; lessons 01, 05")),
    Concept("scaling", "O3", ask(
        "The numbers in a query and in a key are independent, with mean 0 and variance 1, and d_k = 100. "
        "Before any scaling, about how big is a typical score q·k?",
        ("About 1", W,
         "Each product q_m·k_m has variance 1, like each number, but the dot product adds up 100 of "
         "them: their variances add up to 100."),
        ("About 100", W,
         "The products have mean 0: they cancel out in part. The variance is 100, so the typical size "
         "(the standard deviation) is √100 = 10."),
        ("About 10,000", W,
         "That would be the variance of a sum of 100 terms that all moved together. Independent terms "
         "give a variance of 100, a typical size of 10."),
        ("About 10", R,
         "Yes: the variance of q·k is d_k = 100, so a typical score is √100 = 10 in size. That is why "
         "the formula divides by √d_k: it brings a typical score back to about 1, whatever d_k is."),
        source="course outcome O3; lessons 03-04")),
    Concept("causal", "O5", ask(
        "A causal attention layer reads 5 tokens, numbered 0 to 4. You replace token 3 by another word "
        "and run the layer again. Which outputs can change?",
        ("Outputs 3 and 4: the changed token and the one after it.", R,
         "Right: output i may look at tokens 0 to i, so only the outputs of token 3 itself and of the "
         "token after it can see the change; outputs 0 to 2 stay exactly as they were."),
        ("Outputs 0, 1 and 2: the tokens before it read the new word.", W,
         "It is the other way round: a token may look back, not ahead. Tokens 0 to 2 never see token 3."),
        ("All five outputs, since every output is a mix of every value.", W,
         "That is attention without a mask. The causal mask gives every later key weight exactly 0, so "
         "the earlier outputs cannot move."),
        ("Output 3 only, since each output is made from its own token.", W,
         "Each output mixes every token it may see. Token 4 may see token 3, so output 4 changes too."),
        source="course outcome O5; lesson 07")),
    Concept("cost", "O6", ask(
        "A model's context grows from 4,096 to 8,192 tokens. About how many times as much memory does plain "
        "attention then need for its scores, and FlashAttention for its work?",
        ("Both grow about 4 times, since both compute the same N² scores.", W,
         "They compute the same scores, but FlashAttention never holds them all: one tile at a time, "
         "plus an output of N rows."),
        ("Plain attention about 4 times; FlashAttention about 2 times.", R,
         "Yes: the plain formula holds the whole N × N matrix, (8,192 / 4,096)² = 4 times as much; "
         "FlashAttention holds one tile and the N × d output, which grows like N."),
        ("Both grow about 2 times, since the text is twice as long.", W,
         "Plain attention holds one score per pair of tokens: twice the tokens, four times the pairs."),
        ("Plain attention about 4 times; FlashAttention's memory does not grow at all.", W,
         "Its tiles stay the same size, but it still holds the output, N × d numbers: that part grows "
         "with N."),
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


#: what the comparison says of a question, from (right before, right after); None: not answered
CHANGES = {(False, True): "learned", (True, True): "right both times",
           (True, False): "right in lesson 00, not at first in lesson 10", (False, False): "wrong both times"}


def comparison(record: dict, found=None) -> list[dict]:
    """Question by question, the first answer of lesson 00 (``"pre"``) beside that of lesson 10 (``"post"``).

    Each row: ``key``, ``number`` (Q1…), ``question`` (its prompt), ``before`` and ``after`` (``{"answer":
    "B", "correct": True}`` or None when not answered) and ``change`` (:data:`CHANGES`, or "not answered
    yet" / "not answered in lesson 00").

    ``found``: the keys of the questions whose right answer the learner has found in lesson 10 (the quiz
    passes them); a row whose first answer of lesson 10 was wrong says whether the answer of lesson 00 was
    right only once its key is in ``found``, so the table never gives an answer away. None: every row says
    everything (a teacher's view).
    """
    rows = []
    for number, concept in enumerate(CONCEPTS, start=1):
        before = (record.get("pre") or {}).get(concept.key)
        after = (record.get("post") or {}).get(concept.key)
        hidden = (found is not None and after is not None and not after["correct"]
                  and concept.key not in found)
        if after is None:
            change = "not answered yet"
        elif before is None:
            change = "not answered in lesson 00"
        elif hidden:
            change = "find the right answer above to compare"
        else:
            change = CHANGES[(bool(before["correct"]), bool(after["correct"]))]
        if (hidden or after is None) and before is not None:
            before = {"answer": before["answer"]}   # its letter only, until the answer is found
        rows.append({"key": concept.key, "number": number, "question": concept.question.prompt,
                     "before": before, "after": after, "change": change})
    return rows


def _answer_words(answer: dict | None) -> str:
    if answer is None:
        return "—"
    if "correct" not in answer:
        return answer["answer"]
    return f"{answer['answer']} ({'right' if answer['correct'] else 'wrong'})"


def _totals(rows: list[dict]) -> str:
    """The right answers of each lesson, once every question of lesson 10 is answered and compared."""
    if any(row["after"] is None or "correct" not in (row["before"] or {"correct": 0}) for row in rows):
        return ""
    right = {when: sum(bool((row[side] or {}).get("correct")) for row in rows)
             for when, side in (("lesson 00", "before"), ("lesson 10", "after"))}
    return "In all, " + "; ".join(f"{when}: {n} of {len(rows)} right" for when, n in right.items()) + "."


def comparison_text(record: dict, found=None) -> str:
    """:func:`comparison` as plain text: a line per question, then the totals."""
    rows = comparison(record, found)
    lines = ["Your answers, before the course (lesson 00) and after it (lesson 10):"]
    for row in rows:
        lines.append(f"  Q{row['number']}: lesson 00 {_answer_words(row['before'])}, lesson 10 "
                     f"{_answer_words(row['after'])}: {row['change']}")
    if _totals(rows):
        lines.append(f"  {_totals(rows)}")
    if not record.get("pre"):
        lines.append(f"  No answers of lesson 00 were found in {RECORD}: lesson 00 keeps them beside its "
                     "notebook, so they show here when both lessons are in the same folder.")
    return "\n".join(lines)


def comparison_html(record: dict, found=None) -> str:
    """:func:`comparison` as an HTML table (a caption, a header row, one row per question) and the totals;
    one line until the first question of lesson 10 is answered, so that the quiz stays one screen high."""
    import html

    rows = comparison(record, found)
    missing = ("" if record.get("pre") else
               f"<p>No answers of lesson 00 were found in <code>{RECORD}</code>: lesson 00 keeps them beside "
               "its notebook, so they show here when both lessons are in the same folder.</p>")
    if all(row["after"] is None for row in rows):  # one line until the first check, so the quiz stays short
        return (f"<div class='lessons-concept-comparison'><p>As you check your answers, a table here sets "
                f"each one beside your answer of lesson 00.</p>{missing}</div>")
    head = "".join(f"<th scope='col' style='text-align:left'>{h}</th>"
                   for h in ("question", "lesson 00 (before)", "lesson 10 (after)", "what changed"))
    body = "".join(
        f"<tr><th scope='row' style='text-align:left;font-weight:normal'>Q{row['number']} ({row['key']})</th>"
        f"<td>{_answer_words(row['before'])}</td>"
        f"<td>{_answer_words(row['after'])}</td><td>{html.escape(row['change'])}</td></tr>"
        for row in rows)
    caption = "<caption style='text-align:left'><b>Your answers, before the course and after it</b></caption>"
    totals = f"<p>{html.escape(_totals(rows))}</p>" if _totals(rows) else ""
    return (f"<div class='lessons-concept-comparison'><table>{caption}<thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{totals}{missing}</div>")


def _before_words(phase: str, key: str, folder: Path | str | None) -> str:
    """In lesson 10, once the right answer is found: what the learner answered to question ``key`` in
    lesson 00."""
    if phase != "post":
        return ""
    try:
        before = (read_record(_file(folder)).get("pre") or {}).get(key)
    except ValueError:
        before = None
    if before is None:
        return " In lesson 00 you did not answer this question."
    return (f" In lesson 00 you answered {before['answer']}, "
            f"{'right then too' if before['correct'] else 'not right then'}.")


def _respond(phase: str, folder: Path | str | None, on_record=None):
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
        right = view.question.options[view.question.index_of(choice)].correct
        if on_record is not None:
            on_record(key, right)
        before = _before_words(phase, key, folder) if right else ""
        return "\n".join([first + saved + before, *rest])
    return respond


def concept_quiz(phase: str, folder: Path | str | None = None):
    """The concept quiz of ``phase`` ("pre" in lesson 00, "post" in lesson 10) as a :class:`~.widget.Quiz`
    that records each question's first checked answer in ``folder``/concept-quiz.json (default: the
    kernel's working folder, which is the notebook's).

    In lesson 10 each check also says what the learner answered in lesson 00, and a table in the quiz's last
    tab, "Before and after" (``quiz.comparison``, :func:`comparison_html`), sets the two answers side by side,
    question by question, redrawn after every check."""
    from .widget import Quiz

    if phase not in PHASES:
        raise ValueError(f"phase must be \"pre\" (lesson 00) or \"post\" (lesson 10); got {phase!r}.")
    title = "Concept quiz, before the course" if phase == "pre" else "Concept quiz, after the course"
    if phase == "pre":
        return Quiz("concepts", questions=[c.question for c in CONCEPTS], title=title,
                    respond=_respond(phase, folder))
    import ipywidgets as widgets

    table = widgets.HTML()
    table.add_class("lessons-concept-comparison")
    found: set[str] = set()   # the questions whose right answer the learner has checked in this lesson

    def refresh(key: str | None = None, right: bool = False) -> None:
        if right:
            found.add(key)
        try:
            table.value = comparison_html(read_record(_file(folder)), found)
        except ValueError as exc:
            table.value = f"<p>{exc}</p>"

    quiz = Quiz("concepts", questions=[c.question for c in CONCEPTS], title=title,
                respond=_respond(phase, folder, on_record=refresh))
    refresh()
    quiz.comparison = table  # a tab of its own after the questions' tabs: the quiz stays one screen high
    quiz.tabs.children = (*quiz.tabs.children, table)
    quiz.tabs.set_title(len(quiz.tabs.children) - 1, "Before and after")
    return quiz
