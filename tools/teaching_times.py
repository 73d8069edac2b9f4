"""Minutes per section of each lesson, from a timed run-through (the tables in docs/teaching.md).

A section is what lies between two ``##`` headings. Its minutes are the sum of
* reading: the words of its prose at 150 words a minute (technical text, read aloud in class
  it is slower still), and its code at 10 lines a minute;
* running: the seconds its cells took in a run from a clean kernel, measured here;
* doing: the minutes an exercise states in its heading ("~10 minutes"), 2 minutes per explorer
  (a live widget to drag and discuss), 1 minute per quiz question, 1 minute per **Predict** prompt.

It prints, per lesson, a Markdown table that ``docs/teaching.md`` carries between the markers
``<!-- times:NN:begin -->`` and ``<!-- times:NN:end -->``; ``--write`` puts them there and records each
lesson's total in ``docs/lesson_minutes.json``.

That file is the one source of every time the course states. ``--stamp`` (run by ``make notebooks``, no
kernel needed) writes it into each place that states a time: the ``⏱ **about N minutes**`` line of every
notebook (rounded to 5 minutes), the range and total of the README and of lesson 00 ("between 25 and 60
minutes each, about 7 h 50 min in all"), and the teacher's guide overview. ``tests/test_lesson_times.py``
checks that they agree.

Usage: python tools/teaching_times.py [--write] [--stamp] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "teaching.md"
MINUTES = ROOT / "docs" / "lesson_minutes.json"
README = ROOT / "README.md"
# how a time is stated: the first line of a lesson, and the course's range and total
HEADER = re.compile(r"⏱ \*\*about \d+ minutes\*\*")
RANGE = re.compile(r"between \d+ and \d+ minutes each, about \d+ h \d+ min in all")
WORDS_PER_MIN, CODE_LINES_PER_MIN = 150, 10
# an exercise's stated difficulty and time: "*Easy, about 5 minutes.*", "(⭐⭐ · about 10 minutes)"
_STATED_EXERCISE = re.compile(
    r"(?:easy|medium|hard|⭐+)[^\n]{0,20}?about\s+(\d+)\s*(?:–|-|to)?\s*(\d+)?\s*min", re.IGNORECASE)
_EXPLORER = re.compile(r"\b[A-Z]\w*Explorer\(")  # an explorer built (and so shown) in this cell
_QUIZ = re.compile(r"\b(?:quiz|ll)\.show\(|Quiz\(")


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
                current["do"] += part.count("**Predict")
                for stated in _STATED_EXERCISE.finditer(part):  # "(Exercise, easy, about 5 minutes.)"
                    current["do"] += float(stated.group(2) or stated.group(1))
        elif cell.cell_type == "code":
            lines = [ln for ln in source.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            current["read"] += len(lines) / CODE_LINES_PER_MIN
            current["run"] += secs / 60
            current["do"] += 2 * len(_EXPLORER.findall(source))
            if _QUIZ.search(source):
                current["do"] += _quiz_questions(source)
    rows.append(current)
    return [r for r in rows if r["read"] + r["run"] + r["do"] > 0.05]


def _quiz_questions(source: str) -> int:
    """How many questions the quiz shown in this cell asks (lessons_lib.QUIZZES)."""
    import lessons_lib as ll

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


def stated(minutes: int) -> int:
    """A lesson's time as the course states it: the measured minutes rounded to 5."""
    return max(5, 5 * round(minutes / 5))


def course_range(totals: dict[str, int]) -> str:
    """'between 25 and 60 minutes each, about 7 h 50 min in all' (the total rounded to 10 minutes)."""
    each = [stated(m) for m in totals.values()]
    whole = 10 * round(sum(totals.values()) / 10)
    return (f"between {min(each)} and {max(each)} minutes each, "
            f"about {whole // 60} h {whole % 60:02d} min in all")


def read_minutes() -> dict[str, int]:
    """Each lesson's measured minutes, from ``docs/lesson_minutes.json`` (written by ``--write``)."""
    return json.loads(MINUTES.read_text(encoding="utf-8"))["minutes"]


def overview(notebooks: list[Path], totals: dict[str, int]) -> str:
    """The guide's table of all lessons: the time each notebook states, and the measured total."""
    lines = ["| lesson | stated in the notebook | measured total (minutes) |", "|---|---|---:|"]
    for path in sorted(notebooks):
        nb = nbformat.read(path, as_version=4)
        title = re.sub(r"^#+\s*", "", nb.cells[0].source.lstrip().split("\n", 1)[0]).strip()
        lines.append(f"| [{title}](../notebooks/{path.name}) | "
                     f"about {stated(totals[path.stem[:2]])} min | {totals[path.stem[:2]]} |")
    lines.append(f"| **whole course** | | **{sum(totals.values())}** ({course_range(totals)}) |")
    return "\n".join(lines)


def stamp(totals: dict[str, int]) -> list[str]:
    """Write the times of ``totals`` into every place that states one; return the files changed."""
    changed = []
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        before = [cell.source for cell in nb.cells]
        line = f"⏱ **about {stated(totals[path.stem[:2]])} minutes**"
        nb.cells[0].source = HEADER.sub(line, nb.cells[0].source)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = RANGE.sub(course_range(totals), cell.source)
        if [cell.source for cell in nb.cells] != before:
            nbformat.write(nb, path)
            changed.append(path.name)
    text = README.read_text(encoding="utf-8")
    if RANGE.sub(course_range(totals), text) != text:
        README.write_text(RANGE.sub(course_range(totals), text), encoding="utf-8")
        changed.append(README.name)
    guide = GUIDE.read_text(encoding="utf-8")
    write_guide({"overview": overview(notebooks, totals)})
    if GUIDE.read_text(encoding="utf-8") != guide:
        changed.append(GUIDE.name)
    return changed


def write_guide(tables: dict[str, str]) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for lesson, body in tables.items():
        begin, end = f"<!-- times:{lesson}:begin -->", f"<!-- times:{lesson}:end -->"
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            text = head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]
    GUIDE.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--write", action="store_true",
                        help=f"run the notebooks, write the tables into {GUIDE.name} and {MINUTES.name}")
    parser.add_argument("--stamp", action="store_true",
                        help=f"write the minutes of {MINUTES.name} wherever the course states a time")
    args = parser.parse_args(argv)
    if args.stamp and not args.write:
        print("stamped:", ", ".join(stamp(read_minutes())) or "nothing changed")
        return 0
    tables = {}
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        tables[path.stem[:2]] = table(sections(nb, timed_run(path)))
        print(f"### {path.stem}\n{tables[path.stem[:2]]}\n", flush=True)
    if args.write:
        write_guide(tables)
        totals = {**read_minutes(), **{k: int(v.rsplit("**", 2)[-2]) for k, v in tables.items()}}
        MINUTES.write_text(json.dumps({"measured_by": "tools/teaching_times.py --write", "minutes": totals},
                                      indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print("stamped:", ", ".join(stamp(totals)) or "nothing changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
