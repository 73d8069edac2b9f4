"""A balanced term of sessions and a "cut if short on time" list per lesson (the plan in docs/teaching.md).

The minutes are never typed here: they are read from the per-lesson tables that
``tools/teaching_times.py`` writes into ``docs/teaching.md`` (between ``<!-- times:NN:begin -->``
and ``<!-- times:NN:end -->``), one row per ``##`` section. From them it writes, between
``<!-- plan:begin -->`` and ``<!-- plan:end -->`` of the guide:

* the **cut lists**: which sections can go when a class runs short, first cut first, with the minutes
  each saves (each lesson's ``cuts`` in the registry, ``lessons_lib/course/lessons.py``: a piece of the
  section's heading and what to do instead; never an exercise);
* the **term**: the lessons, in order, shared out over :data:`SESSIONS` sessions of :data:`SESSION_MINUTES`
  minutes by :func:`balance`, no session spanning two parts of the course (the registry's ``PARTS``: Part I,
  attention step by step; Part II, attention in today's models; Part III, attention at the frontier).
  Every session leaves :data:`REVIEW_MINUTES` for going over the previous session's graded exercise (what
  the class report shows), so none plans more than ``SESSION_MINUTES - REVIEW_MINUTES``. A lesson may go
  on in the next session, always at one of its section headings: the plan splits as few lessons as that
  allows, then evens the sessions out (the least sum of squared minutes).

Both lists give each part's lessons under the part's heading.

Usage: python tools/term_plan.py [--write | --check] [--sessions N --minutes M]
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from itertools import combinations

from conventions import LESSONS, ROOT, ToolParser, lessons_by_part, replace_block

from lessons_lib.course.lessons import part_of

GUIDE = ROOT / "docs" / "teaching.md"
BEGIN, END = "<!-- plan:begin -->", "<!-- plan:end -->"
SESSIONS = 14  # eight for Part I, three for Part II (11, 12), three for Part III (13, 14); none spans two
SESSION_MINUTES = 75  # one class period (a 90-minute slot leaves room for questions)
REVIEW_MINUTES = 10   # each session opens by going over the previous one's graded exercise


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


@dataclass(frozen=True)
class Part:
    """The sections ``first`` to ``last`` (indices into the lesson's table) of one lesson, in one session."""

    lesson: str
    first: int
    last: int
    minutes: int


def balance(tables: dict[str, dict[str, int]], sessions: int = SESSIONS,
            most: int = SESSION_MINUTES - REVIEW_MINUTES, skip: frozenset = frozenset()) -> list[list[Part]]:
    """The lessons' sections, in course order, cut into ``sessions`` runs of at most ``most`` minutes each.

    Among the ways to do so, the one that splits the fewest lessons across two sessions, then the one whose
    sessions are most even (least sum of squared minutes). Raises when no way fits. ``skip``: the sections
    (lesson, heading) left out of the term (:func:`fitting_term`); a part's ``first``/``last`` index the
    lesson's whole table, so a part may span a skipped section.
    """
    sections = [(lesson, index, minutes) for lesson in sorted(tables)
                for index, (head, minutes) in enumerate(tables[lesson].items())
                if head != "total" and (lesson, head) not in skip]
    parts = [part_of(lesson).number for lesson, _, _ in sections]
    n = len(sections)
    check_sessions(sessions, n)
    check_planned_minutes(most)
    starts = [0]
    for _, _, minutes in sections:
        starts.append(starts[-1] + minutes)

    @cache
    def best(i: int, left: int) -> tuple[int, int, int] | None:
        """(lessons split, sum of squares, end of the first session) for sections i.. in ``left`` sessions."""
        if i == n:
            return (0, 0, n) if left == 0 else None
        if left == 0:
            return None
        found = None
        for j in range(i + 1, n + 1):
            minutes = starts[j] - starts[i]
            if minutes > most or parts[j - 1] != parts[i]:   # too long, or into the next part
                break
            rest = best(j, left - 1)
            if rest is None:
                continue
            split = int(j < n and sections[j - 1][0] == sections[j][0])
            candidate = (rest[0] + split, rest[1] + minutes * minutes, j)
            if found is None or candidate[:2] < found[:2]:
                found = candidate
        return found

    if best(0, sessions) is None:
        raise ValueError(f"the lessons ({starts[-1]} minutes) do not fit {sessions} sessions of at most "
                         f"{most} minutes each: plan more sessions, or longer ones")
    term, i = [], 0
    for left in range(sessions, 0, -1):
        j = best(i, left)[2]
        parts: list[Part] = []
        for lesson, index, minutes in sections[i:j]:
            if parts and parts[-1].lesson == lesson:
                parts[-1] = Part(lesson, parts[-1].first, index, parts[-1].minutes + minutes)
            else:
                parts.append(Part(lesson, index, index, minutes))
        term.append(parts)
        i = j
    return term


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_sessions(sessions, sections: int) -> None:
    """Refuse sessions that are not a positive whole number, or more of them than ``sections`` to teach."""
    if not _whole(sessions) or sessions < 1:
        raise ValueError(f"a term has a positive whole number of sessions; got {sessions!r}")
    if sessions > sections:
        raise ValueError(f"{sessions} sessions is more than the course's {sections} sections (every session "
                         f"teaches at least one): plan fewer sessions")


def check_session_minutes(minutes) -> None:
    """Refuse session minutes that leave no time to teach after the review that opens every session."""
    if not _whole(minutes) or minutes <= REVIEW_MINUTES:
        raise ValueError(f"a session must last a whole number of minutes above the {REVIEW_MINUTES} of "
                         f"review it opens with; got {minutes!r}")


def check_planned_minutes(most) -> None:
    if not _whole(most) or most <= 0:
        raise ValueError(f"a session must plan a positive whole number of minutes; got {most!r}")


#: up to this many cuts the term looks at every choice from the cut lists; beyond, it cuts in rounds
EXACT_CUTS = 3


Cut = list[tuple[str, str]]   # the sections a term leaves out: (lesson, heading)


def fitting_term(tables: dict[str, dict[str, int]], sessions: int = SESSIONS,
                 most: int = SESSION_MINUTES - REVIEW_MINUTES) -> tuple[list[list[Part]], Cut]:
    """The balanced term, and the sections it had to cut: ``(term, [(lesson, heading), ...])``.

    When the whole course does not fit, it cuts sections from the lessons' cut lists (the registry's
    ``cuts``; a lesson's second cut only with its first): up to :data:`EXACT_CUTS` cuts, the fewest that
    make it fit and, of those, the ones that leave out the fewest minutes; beyond that, every lesson's
    first cut, then every lesson's second, in course order, until it fits. Raises when even every cut
    does not make it fit.
    """
    check_sessions(sessions, sum(head != "total" for table in tables.values() for head in table))
    check_planned_minutes(most)
    listed = {lesson: [head for head, *_ in rows] for lesson, rows in cut_minutes(tables).items()}
    pieces = [(lesson, k) for lesson, heads in sorted(listed.items()) for k in range(len(heads))]

    def term_without(chosen) -> tuple[list[list[Part]], Cut] | None:
        cut = [(lesson, listed[lesson][k]) for lesson, k in chosen]
        try:
            return balance(tables, sessions, most, frozenset(cut)), cut
        except ValueError:
            return None

    def too_long() -> ValueError:
        left = sum(t["total"] for t in tables.values()) - sum(tables[lesson][listed[lesson][k]]
                                                               for lesson, k in pieces)
        return ValueError(f"the lessons do not fit {sessions} sessions of at most {most} minutes each, even "
                          f"with every section of the cut lists left out ({left} minutes left): plan more "
                          f"sessions, or longer ones")

    if term_without(()) is None and term_without(pieces) is None:
        raise too_long()
    for count in range(min(EXACT_CUTS, len(pieces)) + 1):
        fits = [fit for chosen in combinations(pieces, count)
                if all(k == 0 or (lesson, k - 1) in chosen for lesson, k in chosen)   # first cuts first
                and (fit := term_without(chosen)) is not None]
        if fits:
            return min(fits, key=lambda fit: sum(tables[lesson][head] for lesson, head in fit[1]))
    rounds = sorted(pieces, key=lambda piece: (piece[1], piece[0]))
    found = next((fit for taken in range(len(rounds) + 1) if (fit := term_without(rounds[:taken]))), None)
    if found is None:
        raise too_long()
    return found


def _cut_in(part: Part, cut: Cut, heads: list[str]) -> list[str]:
    """The cut sections that fall inside ``part``'s span of its lesson's table."""
    return [head for lesson, head in cut
            if lesson == part.lesson and part.first <= heads.index(head) <= part.last]


def _describe(part: Part, heads: list[str]) -> str:
    whole = part.first == 0 and part.last == len(heads) - 1
    name = f"{part.lesson} · {LESSONS[part.lesson].short}"
    if whole:
        return name
    if part.first == 0:
        return f"{name}, to the end of “{heads[part.last]}”"
    if part.last == len(heads) - 1:
        return f"{name}, from “{heads[part.first]}” on"
    return f"{name}, “{heads[part.first]}” to “{heads[part.last]}”"


def _table(heading: str, header: str, rows: list[str]) -> list[str]:
    """A part's table in the plan: a blank line, its heading, a blank line, the table."""
    return ["", f"#### {heading}", "", *header.split("\n"), *rows]


def _by_part(term: list[list[Part]]) -> list[tuple[str, list[tuple[int, list[Part]]]]]:
    """The sessions of ``term``, numbered from 1, under the heading of the part they teach."""
    grouped: dict[str, list[tuple[int, list[Part]]]] = {}
    for number, parts in enumerate(term, start=1):
        grouped.setdefault(part_of(parts[0].lesson).heading, []).append((number, parts))
    return list(grouped.items())


def term_table(tables: dict[str, dict[str, int]], sessions: int = SESSIONS,
               minutes: int = SESSION_MINUTES) -> list[str]:
    """The term as Markdown: a row per session, what it teaches, its planned and its spare minutes."""
    check_session_minutes(minutes)
    term, cut = fitting_term(tables, sessions, minutes - REVIEW_MINUTES)
    out = [f"### A term of {sessions} sessions of {minutes} minutes", "",
           f"Balanced from the measured minutes: no session plans more than {minutes - REVIEW_MINUTES}, so "
           f"each opens with at least {REVIEW_MINUTES} minutes to go over the previous session's graded "
           "exercise (the class report, [classroom.md](classroom.md#a-report-of-what-the-class-gets-wrong), "
           "names the mistakes the class made). A lesson that goes on in the next session stops at a "
           "section heading: open it again, *Run All Above* that section, and go on. No session spans two "
           "parts of the course."]
    for heading, sessions_of_part in _by_part(term):
        rows = []
        for number, parts in sessions_of_part:
            planned = sum(part.minutes for part in parts)
            heads = {p.lesson: [h for h in tables[p.lesson] if h != "total"] for p in parts}
            what = "; ".join(_describe(part, heads[part.lesson]) for part in parts)
            gone = [f"“{head}”" for part in parts for head in _cut_in(part, cut, heads[part.lesson])]
            if gone:
                what += f" (cut: {', '.join(gone)})"
            rows.append(f"| {number} | {what} | {planned} | {minutes - planned} |")
        out += _table(heading, "| session | teaches | planned | spare |\n|---:|---|---:|---:|", rows)
    if cut:
        sections = "one section" if len(cut) == 1 else f"{len(cut)} sections"
        whole = sum(t["total"] for t in tables.values())
        out += ["", f"The whole course is {whole} minutes, more than these sessions hold: this term cuts "
                f"{sections} from the lists above, first cuts first (each named in its session). Set them as "
                "reading at home."]
    return out


def plan(text: str) -> str:
    """The Markdown between the plan markers: cut lists, then the balanced term."""
    tables = lesson_tables(text)
    missing = sorted(set(LESSONS) - set(tables))
    if missing:
        raise ValueError(f"docs/teaching.md has no times table for lessons {missing}: add the lesson's entry "
                         f"with its markers, then run python tools/teaching_times.py --write")
    cuts = cut_minutes(tables)
    out = [BEGIN, "", "### Cut if short on time", "",
           "Never cut an exercise: it is what gets graded. Cut in this order; the minutes are each "
           "section's measured minutes from the lesson's table below."]
    header = ("| lesson | measured | cut first → last (what to do instead, minutes saved) "
              "| after all cuts |\n|---|---:|---|---:|")
    for part, lessons in lessons_by_part():
        rows = []
        for lesson in (entry.number for entry in lessons):
            total = tables[lesson]["total"]
            items = "; ".join(f"{head} ({instead}, {m})" for head, instead, m in cuts.get(lesson, []))
            saved = sum(m for *_, m in cuts.get(lesson, []))
            rows.append(f"| {lesson} · {LESSONS[lesson].short} | {total} | {items} | {total - saved} |")
        out += _table(part.heading, header, rows)
    out += ["", *term_table(tables), "",
            "Another term: `python tools/term_plan.py --sessions N --minutes M` prints its plan.", "", END]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="tools/term_plan.py", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write the plan into docs/teaching.md")
    group.add_argument("--check", action="store_true", help="exit 1 if docs/teaching.md's plan is stale")
    parser.add_argument("--sessions", type=int, default=SESSIONS, help=f"sessions (default {SESSIONS})")
    parser.add_argument("--minutes", type=int, default=SESSION_MINUTES,
                        help=f"minutes per session (default {SESSION_MINUTES})")
    args = parser.parse_args(argv)
    text = GUIDE.read_text(encoding="utf-8")
    if (args.sessions, args.minutes) != (SESSIONS, SESSION_MINUTES):
        if args.write or args.check:
            parser.error("--write and --check are for the guide's term; --sessions/--minutes only print")
        tables = lesson_tables(text)
        sections = sum(head != "total" for table in tables.values() for head in table)
        for option, check in (("--sessions", lambda: check_sessions(args.sessions, sections)),
                              ("--minutes", lambda: check_session_minutes(args.minutes)),
                              ("--sessions or --minutes",
                               lambda: print("\n".join(term_table(tables, args.sessions, args.minutes))))):
            try:
                check()
            except ValueError as exc:
                parser.error(f"{option}: {exc}")
        return 0
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
