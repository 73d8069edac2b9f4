"""Nothing before a **Predict** prompt gives its answer: not the cells above it in its lesson (prose, code,
outputs, objectives, headings), not an earlier lesson, not a quiz the learner has taken, not the concept quiz
of lesson 00.

Each prompt's cell carries its answer's key phrases in its metadata::

    {"lessons": {"predict": {"answer_phrases": ["about ×4 for 2,000 tokens", "weigh 40 GB"]}}}

and the test walks the learner's path, lesson by lesson in the order of the registry, through the learner
copy (tools/learner_release.py): what stands before the prompt is every earlier cell's text, source and
outputs (the outputs of the teacher's run, which a learner's run shows too), the text of the prompt's own cell
above the prompt, every quiz shown earlier (its questions, options and explanations; the concept quiz of
lesson 00 without explanations, which it does not show), and every earlier lesson. A phrase counts whatever
its case, punctuation and spacing. Each phrase must be found in the prompt's answer (its folds, or the
outputs between the prompt and its last fold), so a phrase cannot be one that no answer says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat
import pytest

from lessons_lib.course.lessons import LESSONS
from lessons_lib.exercises import EXERCISES
from lessons_lib.quizzes import concepts
from lessons_lib.quizzes.widget import QUIZZES
from tests.helpers import NOTEBOOKS, load_tool

lr = load_tool("learner_copy")
conventions = load_tool("conventions")

PATHS = [NOTEBOOKS / f"{lesson.slug}.ipynb" for _, lesson in sorted(LESSONS.items())]
QUIZ_CALL = re.compile(r"""\bshow\(\s*["'](\d\d)["']\s*\)""")
CONCEPT_CALL = re.compile(r"""\bconcept_quiz\(\s*["'](pre|post)["']""")


def words(text: str) -> list[str]:
    """A text as the tokens a phrase is matched on: case, punctuation and spacing do not count; numbers keep
    their sign and decimals, and ×, ·, √, ∞, ² stay."""
    text = text.lower().replace("−", "-").replace("–", "-").replace("’", "'")
    text = text.replace("\\sqrt", "√").replace("\\times", "×").replace("\\cdot", "·")
    text = re.sub(r"<[^>]+>|\$|\\(?:text|mathrm|operatorname)\b|[{}\\]", " ", text)  # markup, LaTeX
    return re.findall(r"-?\d+(?:[.,]\d+)*|[a-z_]+(?:'[a-z]+)?|[×·√∞²]", text)


def contains(haystack: list[str], phrase: str) -> bool:
    needle = words(phrase)
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _outputs_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append("".join(output["text"]))
        data = output.get("data", {})
        parts.append("".join(data.get("text/plain", "")))
    return "\n".join(parts)


def _quiz_text(questions, explanations: bool = True) -> str:
    parts = []
    for question in questions:
        parts.append(question.prompt)
        for option in question.options:
            parts.append(option.text)
            if explanations:
                parts.append(option.explanation)
    return "\n".join(parts)


def _cell_text(source_cell, learner_cell) -> str:
    """What the learner meets in a cell: its text or code, the outputs a run shows, and the quiz it shows."""
    text = [learner_cell.source]
    if learner_cell.cell_type == "code":
        check = conventions.check_cell(learner_cell.source)
        if check is not None:  # an exercise's check: what it says of the learner's code, not the teacher's
            text.append(EXERCISES[check[1]].start_hint if check[1] in EXERCISES else "")
        else:
            text.append(_outputs_text(source_cell))
        if quiz := QUIZ_CALL.search(learner_cell.source):
            text.append(_quiz_text(QUIZZES[quiz.group(1)]))
        if phase := CONCEPT_CALL.search(learner_cell.source):
            explained = phase.group(1) == "post"
            text.append(_quiz_text([c.question for c in concepts.CONCEPTS], explanations=explained))
    return "\n".join(text)


@dataclass
class Prompt:
    lesson: str
    cell: int
    phrases: list[str]
    before: list[str]   # the words the learner has met before the prompt
    prompt: str          # the prompt's own paragraph
    answer: list[str]    # the words of its answer: the outputs it hides and its folds "Check your answer"


def _prompts() -> list[Prompt]:
    found, met = [], []
    for path in PATHS:
        source = nbformat.read(path, as_version=4)
        learner, _ = lr.learner_notebook(source, path.name)
        source_cells = [c for c in source.cells if conventions.GRADED_TAG not in c.metadata.get("tags", [])]
        spans = dict(lr.prediction_spans(learner.cells, path.name))
        for index, cell in enumerate(learner.cells):
            if index in spans:
                start = conventions.PREDICT.search(cell.source).start()
                answer_end = spans[index]
                hidden = [_outputs_text(source_cells[i]) for i in range(index + 1, answer_end)]
                folds = [cell.source[start:], *(c.source for c in learner.cells[index + 1:answer_end + 1])]
                answered = [f for text in folds for f in re.findall(r"<details>.*?</details>", text, re.S)
                            if conventions.ANSWER_FOLD.search(f)]
                answer = words("\n".join([*hidden, *answered]))
                paragraph = cell.source[start:].split("\n\n")[0]
                phrases = cell.metadata.get("lessons", {}).get("predict", {}).get("answer_phrases")
                found.append(Prompt(path.stem[:2], index, phrases, met + words(cell.source[:start]),
                                    paragraph, answer))
            met = met + words(_cell_text(source_cells[index], cell))
    return found


PROMPTS = _prompts()
IDS = [f"{p.lesson}-cell{p.cell}" for p in PROMPTS]


def test_every_lesson_but_the_review_asks_for_predictions():
    assert {p.lesson for p in PROMPTS} >= {f"{n:02d}" for n in range(10)}


@pytest.mark.parametrize("prompt", PROMPTS, ids=IDS)
def test_each_prompt_names_its_answers_key_phrases_and_its_answer_says_them(prompt):
    assert isinstance(prompt.phrases, list) and prompt.phrases and all(
        isinstance(p, str) and words(p) for p in prompt.phrases), (
        f"lesson {prompt.lesson}, cell {prompt.cell}: give the prompt's cell the metadata "
        '{"lessons": {"predict": {"answer_phrases": ["…", …]}}}')
    unsaid = [p for p in prompt.phrases if not contains(prompt.answer, p)]
    assert not unsaid, f"lesson {prompt.lesson}, cell {prompt.cell}: its answer does not say {unsaid}"
    in_prompt = [p for p in prompt.phrases if contains(words(prompt.prompt), p)]
    assert not in_prompt, f"lesson {prompt.lesson}, cell {prompt.cell}: the prompt itself says {in_prompt}"


@pytest.mark.parametrize("prompt", PROMPTS, ids=IDS)
def test_nothing_before_a_prompt_gives_its_answer(prompt):
    given = [p for p in prompt.phrases or [] if contains(prompt.before, p)]
    assert not given, (f"lesson {prompt.lesson}, cell {prompt.cell}: {given} stands before the prompt, in "
                       "this lesson, an earlier one or a quiz already taken")


def test_the_phrases_are_matched_whatever_their_case_punctuation_and_spacing():
    assert contains(words("The answer: About  ×4, for 2,000 tokens!"), "about ×4 for 2,000 tokens")
    assert contains(words('"sat" should draw heavily on "cat"'), "draw heavily on cat")
    assert contains(words("a·b = −0.5: slightly negative"), "-0.5: slightly negative")
    assert not contains(words("about ×40 for 2,000 tokens"), "about ×4 for 2,000 tokens")
    assert not contains(words("anything"), "")


@pytest.mark.parametrize("given, phrase", [
    # what issue 40 found standing before its prompt, against the phrases those prompts now carry
    ('For the sentence to make sense, "sat" should draw heavily on "cat", and hardly on "The".',
     "draw heavily on cat"),
    ('a fixed random vector per word (the same for "The" and "the"), plus a small signal',
     'the same for "The" and "the"'),
    ("That is why attention handles sentences of any length with the same weights.",
     "of any length with the same weights"),
    ("C. Because a dot product of d_k random numbers spreads like √d_k: without it, long queries give",
     "like $\\sqrt{d_k}$"),
    ("3. show by measurement that the variance of $q \\cdot k$ grows like $d_k$, and derive why;",
     "the variance of $q \\cdot k$ grows like $d_k$"),
    ("4. show what goes wrong without the $\\sqrt{d_k}$: a saturated, nearly one-hot softmax",
     "saturated"),
    ("## 4 · Why the output stays in the ballpark", "in the ballpark"),
])
def test_the_give_aways_issue_40_found_would_be_caught(given, phrase):
    assert contains(words(given), phrase)
