"""The course's parts (Part I, attention step by step; Part II, attention in today's models; Part III,
attention at the frontier): every lesson
falls into one, and every place that lists the lessons lists them under their part's visible heading: lesson
00's course map, the README and the learner copy's README, the teacher's guide and its term plan."""

from __future__ import annotations

import re

import nbformat

from lessons_lib.course.lessons import LESSONS, PARTS, lessons_by_part, part_of
from tests.helpers import NOTEBOOKS, REPO, load_tool

stamp = load_tool("stamp_notebooks")
term_plan = load_tool("term_plan")
release = load_tool("learner_release")
PART_II = "Part II · attention in today's models"
PART_III = "Part III · attention at the frontier"


def test_every_lesson_falls_into_one_part_in_order_and_parts_ii_and_iii_start_at_lessons_11_and_13():
    assert [p.heading for p in PARTS] == ["Part I · attention, step by step", PART_II, PART_III]
    grouped = lessons_by_part()
    assert [lesson.number for _, lessons in grouped for lesson in lessons] == list(LESSONS)
    assert [lesson.number for lesson in grouped[1][1]][0] == "11"
    assert [lesson.number for lesson in grouped[2][1]][0] == "13"
    assert part_of("10").number == "I" and part_of("11").number == "II" and part_of("12").number == "II"
    assert part_of("13").number == "III" and part_of("99").number == "III"
    assert part_of(LESSONS["11"]) is PARTS[1] and part_of(LESSONS["13"]) is PARTS[2]


def _listed_under(text: str, heading: str) -> list[str]:
    """The lesson numbers linked after ``heading`` and before the next part's heading."""
    after = text.split(heading, 1)[1]
    following = [p.heading for p in PARTS if p.heading != heading and p.heading in after]
    block = after.split(following[0], 1)[0] if following else after
    return re.findall(r"\((?:\.\./)?(?:notebooks/)?(\d\d)_\w+\.ipynb\)", block)


def test_lesson_00s_map_lists_the_lessons_under_each_parts_heading():
    nb = nbformat.read(NOTEBOOKS / "00_start_here.ipynb", as_version=4)
    cell = next(c.source for c in nb.cells if c.cell_type == "markdown" and "<!-- map:begin -->" in c.source)
    for part, lessons in lessons_by_part():
        assert f"### {part.heading}" in cell
        assert _listed_under(cell, part.heading) == [lesson.number for lesson in lessons]


def test_the_readme_and_the_learner_copys_readme_list_parts_ii_and_iii_under_their_headings():
    for readme in ((REPO / "README.md").read_text(encoding="utf-8"), release.learner_readme()):
        text = readme.split("<!-- launch:begin -->", 1)[1].split("<!-- launch:end -->", 1)[0]
        assert f"### {PART_II}" in text and f"### {PART_III}" in text
        assert "11" in _listed_under(text, PART_II) and "10" not in _listed_under(text, PART_II)
        assert "13" in _listed_under(text, PART_III) and "12" not in _listed_under(text, PART_III)


def test_the_teachers_guide_heads_part_ii_in_its_entries_its_times_and_its_term():
    guide = (REPO / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert f"## {PART_II}" in guide and guide.index(f"## {PART_II}") < guide.index("## 11 · ")
    overview = guide.split("<!-- times:overview:begin -->", 1)[1].split("<!-- times:overview:end -->", 1)[0]
    assert f"| **{PART_II}** | | |" in overview and f"| **{PART_III}** | | |" in overview
    assert f"## {PART_III}" in guide and guide.index(f"## {PART_III}") < guide.index("## 13 · ")
    plan = guide.split("<!-- plan:begin -->", 1)[1]
    assert plan.count(f"#### {PART_II}") == 2            # the cut lists, then the term
    assert plan.count(f"#### {PART_III}") == 2


def test_no_session_of_the_term_spans_two_parts():
    tables = term_plan.lesson_tables((REPO / "docs" / "teaching.md").read_text(encoding="utf-8"))
    for sessions in (term_plan.SESSIONS, 13):
        term, _ = term_plan.fitting_term(tables, sessions=sessions)
        for parts in term:
            assert len({part_of(p.lesson).number for p in parts}) == 1, parts
