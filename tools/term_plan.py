"""A term of 8 sessions and a "cut if short on time" list per lesson (the plan in docs/teaching.md).

The minutes are never typed here: they are read from the per-lesson tables that
``tools/teaching_times.py`` writes into ``docs/teaching.md`` (between ``<!-- times:NN:begin -->``
and ``<!-- times:NN:end -->``). The teaching decisions are in each lesson's entry of the registry
(``lessons_lib/course/lessons.py``): which sections can go when a session runs short (``cuts``, named
by a piece of their heading, in the order to cut them), and which of the 8 sessions teaches it
(``session``). From both it writes, between
``<!-- plan:begin -->`` and ``<!-- plan:end -->`` of the guide, the cut lists with the minutes
each cut saves and the schedule with each session's measured minutes, cutting a session's
sections in list order only when the session runs over :data:`SESSION_MINUTES`.

Usage: python tools/term_plan.py [--write | --check]
"""

from __future__ import annotations

import argparse
import re
import sys

from conventions import LESSONS, ROOT, replace_block

GUIDE = ROOT / "docs" / "teaching.md"
BEGIN, END = "<!-- plan:begin -->", "<!-- plan:end -->"
SESSION_MINUTES = 75  # one class period (a 90-minute slot leaves room for questions and grading review)

N_SESSIONS = 8


def sessions() -> list[tuple[str, ...]]:
    """The term's sessions, in order: the lessons each one teaches (each lesson's ``session``)."""
    return [tuple(n for n, lesson in LESSONS.items() if lesson.session == number)
            for number in range(1, max(lesson.session for lesson in LESSONS.values()) + 1)]


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


def cut_minutes(tables: dict[str, dict[str, int]]) -> dict[str, list[tuple[str, str, int]]]:
    """lesson -> [(section heading, what instead, minutes saved)], each piece matched to one heading."""
    found = {}
    for lesson, entry in LESSONS.items():
        rows = []
        for piece, instead in entry.cuts:
            heads = [h for h in tables[lesson] if piece in h and h != "total"]
            if len(heads) != 1:
                raise ValueError(f"lesson {lesson}: {piece!r} matches {len(heads)} sections of its table "
                                 f"({list(tables[lesson])}); update its cuts in "
                                 f"lessons_lib/course/lessons.py")
            rows.append((heads[0], instead, tables[lesson][heads[0]]))
        found[lesson] = rows
    return found


def plan(text: str) -> str:
    """The Markdown between the plan markers: cut lists, then the 8-session schedule."""
    tables = lesson_tables(text)
    missing = sorted(set(LESSONS) - set(tables))
    if missing:
        raise ValueError(f"docs/teaching.md has no times table for lessons {missing}: add the lesson's entry "
                         f"with its markers, then run python tools/teaching_times.py --write")
    cuts = cut_minutes(tables)
    term = sessions()
    if len(term) != N_SESSIONS or not all(term):
        raise ValueError(f"the lessons' sessions must be 1 to {N_SESSIONS}, each teaching at least one "
                         f"lesson; got {term} (lessons_lib/course/lessons.py)")
    out = [BEGIN, "", "### Cut if short on time", "",
           "Never cut an exercise: it is what gets graded. Cut in this order; the minutes are each "
           "section's measured minutes from the lesson's table below.", "",
           "| lesson | measured | cut first → last (what to do instead, minutes saved) | after all cuts |",
           "|---|---:|---|---:|"]
    for lesson in sorted(tables):
        total = tables[lesson]["total"]
        items = "; ".join(f"{head} ({instead}, {m})" for head, instead, m in cuts.get(lesson, []))
        saved = sum(m for *_, m in cuts.get(lesson, []))
        out.append(f"| {lesson} · {LESSONS[lesson].short} | {total} | {items} | {total - saved} |")
    out += ["", f"### A term of 8 sessions of {SESSION_MINUTES} minutes", "",
            "| session | lessons | measured | cut (in list order, until it fits) | planned |",
            "|---:|---|---:|---|---:|"]
    for number, lessons in enumerate(term, start=1):
        measured = planned = sum(tables[lesson]["total"] for lesson in lessons)
        cut = []
        queue = [(lesson, head, m) for lesson in lessons for head, _, m in cuts.get(lesson, [])]
        while planned > SESSION_MINUTES and queue:
            lesson, head, m = queue.pop(0)
            cut.append(f"{lesson}: {head}")
            planned -= m
        if planned > SESSION_MINUTES:
            raise ValueError(f"session {number} ({', '.join(lessons)}) needs {planned} minutes even after "
                             f"every cut; give a lesson another session in lessons_lib/course/lessons.py")
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
    new = replace_block(text, BEGIN, END, block, where="docs/teaching.md", keep_markers=False)
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
