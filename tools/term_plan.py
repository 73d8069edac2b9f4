"""A term of 8 sessions and a "cut if short on time" list per lesson (the plan in docs/teaching.md).

The minutes are never typed here: they are read from the per-lesson tables that
``tools/teaching_times.py`` writes into ``docs/teaching.md`` (between ``<!-- times:NN:begin -->``
and ``<!-- times:NN:end -->``). This file holds only the teaching decisions: which sections of
each lesson can go when a session runs short (named by a piece of their heading, in the order
to cut them), and which lessons each of the 8 sessions covers. From both it writes, between
``<!-- plan:begin -->`` and ``<!-- plan:end -->`` of the guide, the cut lists with the minutes
each cut saves and the schedule with each session's measured minutes, cutting a session's
sections in list order only when the session runs over :data:`SESSION_MINUTES`.

Usage: python tools/term_plan.py [--write | --check]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "teaching.md"
BEGIN, END = "<!-- plan:begin -->", "<!-- plan:end -->"
SESSION_MINUTES = 75  # one class period (a 90-minute slot leaves room for questions and grading review)

#: lesson -> sections to cut when short on time, first cut first: (a piece of the heading, what to do instead)
CUTS: dict[str, list[tuple[str, str]]] = {
    "00": [("The course map", "point at the README's map"), ("Quiz", "set it as homework")],
    "01": [("What attention is not", "read at home"), ("Quiz", "set it as homework"),
           ("A lookup you already know", "say it in one sentence: a dict raises KeyError, softmax blends")],
    "02": [("Quiz", "set it as homework"), ("Why three projections", "keep one discussion question")],
    "03": [("need not come from the same tokens", "mention L × S when the explorer shows it"),
           ("Quick quiz", "set it as homework")],
    "04": [("Quick quiz", "set it as homework"),
           ("What goes wrong without it", "show the explorer's unscaled panel instead")],
    "05": [("A context-aware vector", "read at home"), ("Quick quiz", "set it as homework")],
    "06": [("What does it cost", "read at home"), ("Quick quiz", "set it as homework"),
           ("One big $W_Q$", "state it; the exercise proves it")],
    "07": [("Edge cases", "read at home"), ("Other masks", "show the mask gallery only"),
           ("Quick quiz", "set it as homework")],
    "08": [("SDPA and its kernels", "read at home (GPU classes: demo it)"),
           ("Quick quiz", "set it as homework"),
           ("Measure: time and memory", "show the recorded figure instead of measuring")],
    "09": [("Watching the pattern form", "read at home"), ("Every head of every layer", "read at home"),
           ("Quiz", "set it as homework")],
    "10": [("What comes next", "read at home")],
}

#: The 8 sessions of a term: the lessons each one covers, in course order.
SESSIONS: list[tuple[str, ...]] = [
    ("00", "01"), ("02", "03"), ("04",), ("05",), ("06",), ("07",), ("08",), ("09", "10"),
]


def lesson_tables(text: str) -> dict[str, dict[str, int]]:
    """lesson -> {section heading: minutes} (and ``"total"``), read from teaching_times' tables."""
    tables = {}
    for match in re.finditer(r"<!-- times:(\d\d):begin -->(.*?)<!-- times:\1:end -->", text, re.S):
        rows = {}
        for line in match.group(2).strip().splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0].strip("*")] = int(cells[-1].strip("*"))
        tables[match.group(1)] = rows
    return tables


def lesson_titles(text: str) -> dict[str, str]:
    return dict(re.findall(r"^## (\d\d) · \[([^\]]+)\]", text, re.M))


def cut_minutes(tables: dict[str, dict[str, int]]) -> dict[str, list[tuple[str, str, int]]]:
    """lesson -> [(section heading, what instead, minutes saved)], each piece matched to one heading."""
    found = {}
    for lesson, cuts in CUTS.items():
        rows = []
        for piece, instead in cuts:
            heads = [h for h in tables[lesson] if piece in h and h != "total"]
            if len(heads) != 1:
                raise ValueError(f"lesson {lesson}: {piece!r} matches {len(heads)} sections of its table "
                                 f"({list(tables[lesson])}); update CUTS in tools/term_plan.py")
            rows.append((heads[0], instead, tables[lesson][heads[0]]))
        found[lesson] = rows
    return found


def plan(text: str) -> str:
    """The Markdown between the plan markers: cut lists, then the 8-session schedule."""
    tables, titles = lesson_tables(text), lesson_titles(text)
    cuts = cut_minutes(tables)
    if sorted(lesson for s in SESSIONS for lesson in s) != sorted(tables) or len(SESSIONS) != 8:
        raise ValueError("SESSIONS must cover every lesson once, in 8 sessions")
    out = [BEGIN, "", "### Cut if short on time", "",
           "Never cut an exercise: it is what gets graded. Cut in this order; the minutes are each "
           "section's measured minutes from the lesson's table below.", "",
           "| lesson | measured | cut first → last (what to do instead, minutes saved) | after all cuts |",
           "|---|---:|---|---:|"]
    for lesson in sorted(tables):
        total = tables[lesson]["total"]
        items = "; ".join(f"{head} ({instead}, {m})" for head, instead, m in cuts.get(lesson, []))
        saved = sum(m for *_, m in cuts.get(lesson, []))
        out.append(f"| {lesson} · {titles.get(lesson, '')} | {total} | {items} | {total - saved} |")
    out += ["", f"### A term of 8 sessions of {SESSION_MINUTES} minutes", "",
            "| session | lessons | measured | cut (in list order, until it fits) | planned |",
            "|---:|---|---:|---|---:|"]
    for number, lessons in enumerate(SESSIONS, start=1):
        measured = planned = sum(tables[lesson]["total"] for lesson in lessons)
        cut = []
        queue = [(lesson, head, m) for lesson in lessons for head, _, m in cuts.get(lesson, [])]
        while planned > SESSION_MINUTES and queue:
            lesson, head, m = queue.pop(0)
            cut.append(f"{lesson}: {head}")
            planned -= m
        if planned > SESSION_MINUTES:
            raise ValueError(f"session {number} ({', '.join(lessons)}) needs {planned} minutes even after "
                             f"every cut; move a lesson in SESSIONS")
        out.append(f"| {number} | {', '.join(lessons)} | {measured} | {'; '.join(cut) or 'nothing'} | "
                   f"{planned} |")
    out += ["", "A session with minutes to spare starts by going over the previous session's graded "
            "exercise (the feedback pages name each learner's mistake: see "
            "[classroom.md](classroom.md#grading-with-nbgrader)).", "", END]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write the plan into docs/teaching.md")
    group.add_argument("--check", action="store_true", help="exit 1 if docs/teaching.md's plan is stale")
    args = parser.parse_args(argv)
    text = GUIDE.read_text(encoding="utf-8")
    block = plan(text)
    if BEGIN not in text or END not in text:
        raise SystemExit(f"docs/teaching.md needs the markers {BEGIN} and {END}")
    head, rest = text.split(BEGIN, 1)
    new = head + block + rest.split(END, 1)[1]
    if args.check:
        if new != text:
            print("docs/teaching.md: the term plan is stale (run python tools/term_plan.py --write)")
            return 1
        return 0
    if args.write:
        GUIDE.write_text(new, encoding="utf-8")
    else:
        print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
