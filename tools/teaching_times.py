"""Minutes per section of each lesson, from a timed run-through (the tables in docs/teaching.md).

A section is what lies between two ``##`` headings. Its minutes are the sum of
* reading: the words of its prose at 150 words a minute (technical text, read aloud in class
  it is slower still), and its code at 10 lines a minute;
* running: the seconds its cells took in a run from a clean kernel, measured here;
* doing: the minutes an exercise states in its heading ("~10 minutes"), 2 minutes per explorer
  (a live widget to drag and discuss), 1 minute per quiz question, 1 minute per **Predict** prompt.

It prints, per lesson, a Markdown table that ``docs/teaching.md`` carries between the markers
``<!-- times:NN:begin -->`` and ``<!-- times:NN:end -->``; ``--write`` puts them there.

Usage: python tools/teaching_times.py [--write] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "teaching.md"
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


def overview(notebooks: list[Path], totals: dict[str, int]) -> str:
    """The guide's table of all lessons: the time each notebook states, and the measured total."""
    lines = ["| lesson | stated in the notebook | measured total (minutes) |", "|---|---|---:|"]
    for path in sorted(notebooks):
        nb = nbformat.read(path, as_version=4)
        title = re.sub(r"^#+\s*", "", nb.cells[0].source.lstrip().split("\n", 1)[0]).strip()
        stated = re.search(r"⏱\s*\*\*about (\d+) minutes\*\*", nb.cells[0].source)
        lines.append(f"| [{title}](../notebooks/{path.name}) | "
                     f"{'~' + stated.group(1) + ' min' if stated else '—'} | {totals[path.stem[:2]]} |")
    total = sum(totals.values())
    lines.append(f"| **whole course** | | **{total}** (about {total // 60} h {total % 60:02d} min) |")
    return "\n".join(lines)


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
    parser.add_argument("--write", action="store_true", help=f"write the tables into {GUIDE.name}")
    args = parser.parse_args(argv)
    tables = {}
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        tables[path.stem[:2]] = table(sections(nb, timed_run(path)))
        print(f"### {path.stem}\n{tables[path.stem[:2]]}\n", flush=True)
    if args.write:
        if len(notebooks) == len(list((ROOT / "notebooks").glob("*.ipynb"))):
            totals = {k: int(v.rsplit("**", 2)[-2]) for k, v in tables.items()}
            tables["overview"] = overview(notebooks, totals)
        write_guide(tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
