"""Minutes per section of each lesson, from a timed run-through (the tables in docs/teaching.md).

A section is what lies between two ``##`` headings. Its minutes are the sum of
* reading: the words of its prose at 150 words a minute (technical text, read aloud in class
  it is slower still), and its code at 10 lines a minute;
* running: the seconds its cells took in a run from a clean kernel, measured here;
* doing: the minutes an exercise states in its heading ("~10 minutes"), 2 minutes per explorer
  (a live widget to drag and discuss), 1 minute per quiz question, 1 minute per **Predict** prompt
  (:data:`MINUTES_PER_EXPLORER`, :data:`MINUTES_PER_QUESTION`, :data:`MINUTES_PER_PREDICT`).

It prints, per lesson, a Markdown table that ``docs/teaching.md`` carries between the markers
``<!-- times:NN:begin -->`` and ``<!-- times:NN:end -->``; ``--write`` puts them there and records each
lesson's total as the ``minutes`` of its entry in the registry of lessons, ``lessons_lib/course/lessons.py``.

That number is the one source of every time the course states. ``--stamp`` (run by ``make notebooks``, no
kernel needed) writes it into each place that states a time: the ``⏱ **about N minutes**`` line of every
notebook (rounded to 5 minutes), the range and total of the README and of lesson 00 ("between 30 and 60
minutes each, about 8 h 00 min in all": the total is the sum of the stated times, so that lesson 00's map adds
up to it), and the teacher's guide overview; ``tools/stamp_notebooks.py``
writes each lesson's stated minutes into lesson 00's course map. ``tests/tools/test_lesson_times.py`` checks
that they agree.

``--stamp`` also writes the other lists the guide takes from the course rather than from its author:
the PyTorch lessons (each lesson's ``torch`` in the registry, after "PyTorch lessons: " in the guide,
the README and lesson 00), and each lesson's **mistake list**, between ``<!-- mistakes:NN:begin -->``
and ``<!-- mistakes:NN:end -->``: every mistake its exercises' checks name, by the title a learner
reads and the key the graded feedback and the class report show (``tests/docs/test_teaching_guide.py``).

Usage: python tools/teaching_times.py [--write] [--stamp] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

import nbformat
from conventions import LESSONS, PREDICT, ROOT, lesson_of, lessons_by_part, replace_block, torch_lessons
from conventions import stated_minutes as stated
from nbclient import NotebookClient

GUIDE = ROOT / "docs" / "teaching.md"
REGISTRY = ROOT / "lessons_lib" / "course" / "lessons.py"
README = ROOT / "README.md"
# how a time is stated: the first line of a lesson, and the course's range and total
HEADER = re.compile(r"⏱ \*\*about \d+ minutes\*\*")
RANGE = re.compile(r"between \d+ and \d+ minutes each, about \d+ h \d+ min in all")
# where the course lists the lessons that need PyTorch
TORCH_LIST = re.compile(r"(?<=PyTorch lessons: )\d\d(?:,\s*\d\d)*")   # the whole list, wrapped or not
WORDS_PER_MIN, CODE_LINES_PER_MIN = 150, 10
MINUTES_PER_EXPLORER, MINUTES_PER_QUESTION, MINUTES_PER_PREDICT = 2, 1, 1
# an exercise's stated difficulty and time: "*Easy, about 5 minutes.*", "(⭐⭐ · about 10 minutes)"
STATED_EXERCISE = re.compile(
    r"(?:easy|medium|hard|⭐+)[^\n]{0,20}?about\s+(\d+)\s*(?:–|-|to)?\s*(\d+)?\s*min", re.IGNORECASE)
_EXPLORER = re.compile(r"\b[A-Z]\w*Explorer\(")  # an explorer built (and so shown) in this cell
_QUIZ = re.compile(r"\b(?:quiz|ll)\.show\(|Quiz\(|\bconcept_quiz\(")


def timed_run(path: Path) -> list[float]:
    """Run the notebook from a clean kernel; return each cell's seconds (0 for markdown)."""
    nb = nbformat.read(path, as_version=4)
    seconds = [0.0] * len(nb.cells)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                start = time.perf_counter()
                client.execute_cell(cell, index)
                seconds[index] = time.perf_counter() - start
    return seconds


def sections(nb, seconds: list[float]) -> list[dict]:
    """Split the lesson at every ``## `` heading line; add up reading, running and doing per section."""
    rows: list[dict] = []
    current = {"title": "Opening", "read": 0.0, "run": 0.0, "do": 0.0}
    for cell, secs in zip(nb.cells, seconds):
        source = cell.source
        if cell.cell_type == "markdown":
            for part in re.split(r"^(?=## )", source, flags=re.M):
                if part.startswith("## "):
                    rows.append(current)
                    title = part.split("\n", 1)[0][3:].strip()
                    current = {"title": title, "read": 0.0, "run": 0.0, "do": 0.0}
                words = len(re.sub(r"\$[^$]*\$|[#*>|`_-]", " ", part).split())
                current["read"] += words / WORDS_PER_MIN
                current["do"] += MINUTES_PER_PREDICT * len(PREDICT.findall(part))
                for stated in STATED_EXERCISE.finditer(part):  # "(Exercise, easy, about 5 minutes.)"
                    current["do"] += float(stated.group(2) or stated.group(1))
        elif cell.cell_type == "code":
            lines = [ln for ln in source.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            current["read"] += len(lines) / CODE_LINES_PER_MIN
            current["run"] += secs / 60
            current["do"] += MINUTES_PER_EXPLORER * len(_EXPLORER.findall(source))
            if _QUIZ.search(source):
                current["do"] += MINUTES_PER_QUESTION * _quiz_questions(source)
    rows.append(current)
    return [r for r in rows if r["read"] + r["run"] + r["do"] > 0.05]


def _quiz_questions(source: str) -> int:
    """How many questions the quiz shown in this cell asks (lessons_lib.QUIZZES)."""
    import lessons_lib as ll

    if "concept_quiz(" in source:
        return len(ll.CONCEPTS)
    match = re.search(r"\b(?:quiz|ll)\.show\(\s*['\"](\w+)['\"]", source)
    return len(ll.QUIZZES[match.group(1)]) if match and match.group(1) in ll.QUIZZES else 3


def table(rows: list[dict]) -> str:
    lines = ["| section | read | run | do | minutes |", "|---|---:|---:|---:|---:|"]
    total = 0
    for r in rows:
        minutes = max(1, math.ceil(r["read"] + r["run"] + r["do"]))
        total += minutes
        title = r["title"].replace("|", "/")
        lines.append(f"| {title} | {r['read']:.1f} | {r['run']:.1f} | {r['do']:.0f} | {minutes} |")
    lines.append(f"| **total** | | | | **{total}** |")
    return "\n".join(lines)


def course_range(totals: dict[str, int]) -> str:
    """'between 30 and 60 minutes each, about 8 h 00 min in all': the range of the stated times and their sum.

    The total adds up the times each lesson states (its measured minutes rounded to 5), so that it is the sum
    of the course map beside it, not a number of its own.
    """
    each = [stated(m) for m in totals.values()]
    whole = sum(each)
    return (f"between {min(each)} and {max(each)} minutes each, "
            f"about {whole // 60} h {whole % 60:02d} min in all")


def read_minutes() -> dict[str, int]:
    """Each lesson's measured minutes, from its entry in the registry (written by ``--write``)."""
    return {number: lesson.minutes for number, lesson in LESSONS.items()}


def write_minutes(totals: dict[str, int], registry: Path = REGISTRY) -> None:
    """Rewrite the ``minutes=`` of each lesson of ``totals`` in the registry's source, nothing else."""
    text = registry.read_text(encoding="utf-8")
    for number, minutes in totals.items():
        slug = re.escape(LESSONS[number].slug)
        entry = re.compile(r'(slug="' + slug + r'",(?:(?!Lesson\().)*?minutes=)\d+', re.S)
        text, found = entry.subn(rf"\g<1>{int(minutes)}", text)
        if found != 1:
            raise ValueError(f"{registry.name}: no minutes= in the entry of lesson {number}")
    registry.write_text(text, encoding="utf-8")


def overview(totals: dict[str, int]) -> str:
    """The guide's table of all lessons, under a row per part of the course: the time each notebook states,
    and the measured total."""
    lines = ["| lesson | stated in the notebook | measured total (minutes) |", "|---|---|---:|"]
    for part, lessons in lessons_by_part():
        lines.append(f"| **{part.heading}** | | |")
        for lesson in lessons:
            number = lesson.number
            lines.append(f"| [{number} · {lesson.title}](../{lesson.notebook}) | "
                         f"about {stated(totals[number])} min | {totals[number]} |")
    lines.append(f"| **whole course** | | **{sum(totals.values())}** ({course_range(totals)}) |")
    return "\n".join(lines)


def torch_list() -> str:
    """``07, 08, 09, 10``: the lessons whose kernels import PyTorch, as the course states them."""
    return ", ".join(torch_lessons())


def mistake_list(number: str) -> str | None:
    """The mistakes the checks of lesson ``number`` name (titles, keys), as Markdown; None without checks."""
    from lessons_lib.exercises import EXERCISES

    parts = []
    for name in LESSONS[number].points:
        if name in EXERCISES:
            exercise = EXERCISES[name]
            items = "\n".join(f"* {_markdown(m.title)} (`{m.key}`)" for m in exercise.mistakes)
            parts.append(f"`{name}`, which {exercise.task}:\n\n{items}")
    return "\n\n".join(parts) or None


def _markdown(text: str) -> str:
    """``text`` with a literal ``*`` (the product, as a learner reads it) escaped outside `code`."""
    pieces = text.split("`")
    return "`".join(p if i % 2 else p.replace("*", "\\*") for i, p in enumerate(pieces))


def _stamp_text(text: str, totals: dict[str, int]) -> str:
    return TORCH_LIST.sub(torch_list(), RANGE.sub(course_range(totals), text))


def stamp(totals: dict[str, int]) -> list[str]:
    """Write the times of ``totals`` into every place that states one, and the guide's lists (PyTorch
    lessons, mistakes); return the files changed."""
    import stamp_notebooks

    changed = []
    for number, lesson in LESSONS.items():
        path = ROOT / lesson.notebook
        nb = nbformat.read(path, as_version=4)
        before = [cell.source for cell in nb.cells]
        line = f"⏱ **about {stated(totals[number])} minutes**"
        nb.cells[0].source = HEADER.sub(line, nb.cells[0].source)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = _stamp_text(cell.source, totals)
        if number == "00":
            stamp_notebooks.stamp_course_map(nb, totals)
        if [cell.source for cell in nb.cells] != before:
            nbformat.write(nb, path)
            changed.append(path.name)
    text = README.read_text(encoding="utf-8")
    if _stamp_text(text, totals) != text:
        README.write_text(_stamp_text(text, totals), encoding="utf-8")
        changed.append(README.name)
    guide = GUIDE.read_text(encoding="utf-8")
    mistakes = {number: mistake_list(number) for number in LESSONS}
    write_guide({"overview": overview(totals)})
    write_guide({number: body for number, body in mistakes.items() if body}, kind="mistakes")
    GUIDE.write_text(TORCH_LIST.sub(torch_list(), GUIDE.read_text(encoding="utf-8")), encoding="utf-8")
    if GUIDE.read_text(encoding="utf-8") != guide:
        changed.append(GUIDE.name)
    return changed


def write_guide(tables: dict[str, str], kind: str = "times") -> None:
    """Each body between its markers ``<!-- KIND:NN:begin -->`` / ``<!-- KIND:NN:end -->`` of the guide."""
    text = GUIDE.read_text(encoding="utf-8")
    for lesson, body in tables.items():
        text = replace_block(text, f"<!-- {kind}:{lesson}:begin -->", f"<!-- {kind}:{lesson}:end -->", body,
                             where=f"docs/teaching.md (lesson {lesson}'s entry)")
    GUIDE.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--write", action="store_true",
                        help=f"run the notebooks, write the tables into {GUIDE.name} and the minutes into "
                             f"{REGISTRY.name}")
    parser.add_argument("--stamp", action="store_true",
                        help=f"write the minutes of {REGISTRY.name} wherever the course states a time")
    args = parser.parse_args(argv)
    if args.stamp and not args.write:
        print("stamped:", ", ".join(stamp(read_minutes())) or "nothing changed")
        return 0
    tables = {}
    notebooks = args.notebooks or [ROOT / lesson.notebook for lesson in LESSONS.values()]
    for path in notebooks:
        number = lesson_of(path).number
        nb = nbformat.read(path, as_version=4)
        tables[number] = table(sections(nb, timed_run(path)))
        print(f"### {path.stem}\n{tables[number]}\n", flush=True)
    if args.write:
        write_guide(tables)
        measured = {k: int(v.rsplit("**", 2)[-2]) for k, v in tables.items()}
        write_minutes(measured)
        print("stamped:", ", ".join(stamp({**read_minutes(), **measured})) or "nothing changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
