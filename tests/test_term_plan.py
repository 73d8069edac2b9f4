"""The teacher's plan in docs/teaching.md: cut lists and an 8-session term, from the measured minutes."""

from __future__ import annotations

from pathlib import Path

from conftest import load_tool

ROOT = Path(__file__).resolve().parents[1]
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


def test_eight_sessions_cover_every_lesson_in_order_within_a_session():
    term = term_plan.sessions()
    lessons = [lesson for session in term for lesson in session]
    assert len(term) == term_plan.N_SESSIONS == 8 and lessons == sorted(lessons)
    block = term_plan.plan(term_plan.GUIDE.read_text(encoding="utf-8"))
    planned = [int(line.rsplit("|", 2)[1]) for line in block.split("### A term", 1)[1].splitlines()
               if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert len(planned) == 8 and max(planned) <= term_plan.SESSION_MINUTES
