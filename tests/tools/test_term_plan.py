"""The teacher's plan in docs/teaching.md: cut lists and a balanced term, from the measured minutes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO, load_tool

term_plan = load_tool("term_plan")


def test_the_guide_carries_the_plan_the_tool_writes(capsys):
    assert term_plan.main(["--check"]) == 0, capsys.readouterr().out


def test_every_lesson_has_cuts_that_name_one_section_each_and_no_exercise():
    text = term_plan.GUIDE.read_text(encoding="utf-8")
    tables = term_plan.lesson_tables(text)
    cuts = term_plan.cut_minutes(tables)  # raises when a piece names no section, or two
    assert set(cuts) == set(tables)
    for lesson, rows in cuts.items():
        assert rows, lesson
        assert not any("exercise" in head.lower() for head, *_ in rows), lesson


def test_minutes_are_read_from_the_times_tables_not_typed():
    text = "<!-- times:03:begin -->\n| section | minutes |\n|---|---:|\n| 8 · Quick quiz | 9 |\n" \
           "| **total** | **40** |\n<!-- times:03:end -->"
    assert term_plan.lesson_tables(text) == {"03": {"8 · Quick quiz": 9, "total": 40}}


def test_the_term_teaches_every_section_once_in_order_and_leaves_every_session_time_to_review():
    tables = term_plan.lesson_tables(term_plan.GUIDE.read_text(encoding="utf-8"))
    term, cut = term_plan.fitting_term(tables)
    assert len(term) == term_plan.SESSIONS == 14   # eight for Part I, three for Part II, three for Part III
    heads = {lesson: [h for h in table if h != "total"] for lesson, table in tables.items()}
    taught = [(p.lesson, i) for parts in term for p in parts for i in range(p.first, p.last + 1)
              if (p.lesson, heads[p.lesson][i]) not in cut]
    assert taught == [(lesson, i) for lesson in sorted(tables) for i, head in enumerate(heads[lesson])
                      if (lesson, head) not in cut]
    planned = [sum(p.minutes for p in parts) for parts in term]
    assert max(planned) <= term_plan.SESSION_MINUTES - term_plan.REVIEW_MINUTES, planned
    left_out = sum(tables[lesson][head] for lesson, head in cut)
    assert sum(planned) == sum(t["total"] for t in tables.values()) - left_out
    listed = {lesson: [head for head, *_ in rows] for lesson, rows in term_plan.cut_minutes(tables).items()}
    for lesson, head in cut:    # only what the cut lists offer, first cuts first
        assert all((lesson, earlier) in cut for earlier in listed[lesson][:listed[lesson].index(head)])


def test_a_term_too_short_for_the_course_cuts_the_fewest_listed_sections(monkeypatch):
    tables = _tables(l00=(12, 10, 10), l01=(10, 10, 10))       # 62 minutes; 2 sessions hold 44
    monkeypatch.setattr(term_plan, "cut_minutes", lambda t: {"00": [("s0", "home", 12)],
                                                             "01": [("s2", "home", 10), ("s1", "home", 10)]})
    term, cut = term_plan.fitting_term(tables, sessions=2, most=22)
    # no single cut fits; of the pairs that do ({00 s0, 01 s2}: 22 min, {01 s2, 01 s1}: 20 min), the one
    # that leaves out fewer minutes; 01's s1 never without its first cut, s2
    assert cut == [("01", "s2"), ("01", "s1")]
    assert [sum(p.minutes for p in parts) for parts in term] == [22, 20]
    with pytest.raises(ValueError, match="do not fit"):
        term_plan.fitting_term(tables, sessions=1, most=22)


def _tables(**lessons: tuple[int, ...]) -> dict[str, dict[str, int]]:
    return {number[1:]: {**{f"s{i}": m for i, m in enumerate(minutes)}, "total": sum(minutes)}
            for number, minutes in lessons.items()}


def test_the_term_keeps_lessons_whole_when_they_fit_and_else_splits_the_fewest_then_evens_out():
    # whole lessons fit: 40 | 30 | 50, although 2 sessions of 45 + 1 of 30 would be more even
    tables = _tables(l00=(20, 20), l01=(30,), l02=(10, 40))
    term = term_plan.balance(tables, sessions=3, most=50)
    assert [[(p.lesson, p.first, p.last) for p in parts] for parts in term] == [
        [("00", 0, 1)], [("01", 0, 0)], [("02", 0, 1)]]
    # 6 × 20 minutes in 3 sessions of at most 45: both lessons must be split, into 40 | 40 | 40
    term = term_plan.balance(_tables(l00=(20, 20, 20), l01=(20, 20, 20)), sessions=3, most=45)
    assert [sum(p.minutes for p in parts) for parts in term] == [40, 40, 40]
    assert [[(p.lesson, p.first, p.last) for p in parts] for parts in term] == [
        [("00", 0, 1)], [("00", 2, 2), ("01", 0, 0)], [("01", 1, 2)]]
    with pytest.raises(ValueError, match="do not fit 2 sessions"):
        term_plan.balance(tables, sessions=2, most=65)


@pytest.mark.subprocess
def test_another_term_is_printed_for_the_sessions_and_minutes_asked():
    tool = [sys.executable, str(REPO / "tools/term_plan.py")]
    result = subprocess.run([*tool, "--sessions", "16", "--minutes", "60"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 16 and all(int(row.rsplit("|", 3)[1]) <= 50 for row in rows)
    short = subprocess.run([*tool, "--sessions", "4", "--minutes", "60"], capture_output=True, text=True)
    assert short.returncode == 2 and "--sessions or --minutes: the lessons" in short.stderr
    assert "do not fit 4 sessions" in short.stderr
