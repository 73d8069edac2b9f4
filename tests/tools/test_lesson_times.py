"""Every time the course states comes from one source: each lesson's ``minutes`` in the registry.

``tools/teaching_times.py --write`` measures each lesson (reading, running, doing) and records its total
in ``lessons_lib/course/lessons.py``; ``--stamp`` writes it into each notebook's first line, lesson 00
(its range and its course map), the README and the teacher's guide. These tests hold that every place
agrees with the registry, and that no other time is stated.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.helpers import NOTEBOOKS, REPO, load_tool

times = load_tool("teaching_times")
MINUTES = times.read_minutes()
LESSONS = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_every_lesson_has_measured_minutes():
    assert sorted(MINUTES) == [p.stem[:2] for p in LESSONS]
    assert all(isinstance(m, int) and 5 <= m <= 120 for m in MINUTES.values()), MINUTES


def test_the_tool_rewrites_only_the_minutes_of_the_lessons_it_measured(tmp_path):
    registry = tmp_path / "lessons.py"
    source = times.REGISTRY.read_text(encoding="utf-8")
    registry.write_text(source, encoding="utf-8")
    times.write_minutes({"07": 99, "10": 7}, registry)
    changed = [(a, b) for a, b in zip(source.splitlines(), registry.read_text(encoding="utf-8").splitlines())
               if a != b]
    assert changed == [(f"        minutes={MINUTES['07']},", "        minutes=99,"),
                       (f"        minutes={MINUTES['10']},", "        minutes=7,")]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem[:2])
def test_each_lesson_states_its_measured_minutes_in_its_first_line(path):
    nb = nbformat.read(path, as_version=4)
    stated = re.findall(r"⏱ \*\*about (\d+) minutes\*\*", nb.cells[0].source)
    assert stated == [str(times.stated(MINUTES[path.stem[:2]]))], (
        f"{path.name} states {stated}; lessons_lib/course/lessons.py measured {MINUTES[path.stem[:2]]} "
        "(run: python tools/teaching_times.py --stamp)")


# ---------------------------------------------------------------- every time, in every place
#: a time the course states: "40 minutes", "~10 min", "about 8 h 00 min", "3 hours"
TIME = re.compile(r"\d+\s*h\s*\d+\s*min\b|\d+(?:½)?\s*(?:minutes?|min|hours?)\b")
#: blocks a tool writes (their own tests hold them equal to what the tool would write): the teacher's guide's
#: timing tables and term plan, lesson 00's course map
GENERATED = [("<!-- times:", "<!-- times:", ":end -->"),
             ("<!-- plan:begin -->", "<!-- plan:begin -->", "<!-- plan:end -->"),
             ("<!-- map:begin -->", "<!-- map:begin -->", "<!-- map:end -->")]
HEADER_LINE = re.compile(r"⏱ \*\*about (\d+) minutes\*\*")
RATE = re.compile(r"(\d+) minutes? per (explorer|quiz question|\*\*Predict\*\* prompt)")
RATES = {"explorer": times.MINUTES_PER_EXPLORER, "quiz question": times.MINUTES_PER_QUESTION,
         "**Predict** prompt": times.MINUTES_PER_PREDICT}
ROUNDING = re.compile(r"rounded to (\d+) minutes")
EXERCISE_NEAR = re.compile(r"(?:exercise|⭐|`my_\w+|easy|medium|hard)[^.;]{0,40}$", re.I)
#: "2.4 minutes on 4 cores": a benchmark's arithmetic, not a course time
RUNTIME = re.compile(r"^\s+on \d+ cores")


def _without_generated(text: str) -> str:
    for _, begin, end in GENERATED:
        text = re.sub(re.escape(begin) + r".*?" + re.escape(end), " ", text, flags=re.S)
    return text


def _exercise_minutes() -> dict[str, set[int]]:
    """Each lesson's exercise times, as its notebook states them: the source the timing tool reads."""
    found = {}
    for path in LESSONS:
        cells = nbformat.read(path, as_version=4).cells
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        found[path.stem[:2]] = {int(b or a) for a, b in times.STATED_EXERCISE.findall(text)}
    return found


def _places():
    """(where, lesson or None, text) for every place that states times: the lessons' prose, the README,
    CONTRIBUTING, every doc; the teacher's guide by the lesson of each of its sections."""
    for path in LESSONS:
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                yield f"{path.name}, cell {index}", path.stem[:2], cell.source
    for path in [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]:
        lesson = None
        for part in re.split(r"^(?=## )", path.read_text(encoding="utf-8"), flags=re.M):
            heading = re.match(r"## (\d\d) ·", part)
            lesson = heading.group(1) if heading else (None if part.startswith("## ") else lesson)
            yield path.name, lesson, part


def test_every_time_the_course_states_comes_from_the_registry_or_the_exercise_it_times():
    """Each time in a lesson, the README, CONTRIBUTING or a doc is one of: a lesson's time (its first line),
    the course's range and total, an exercise's time (the notebook states it where the timing tool reads
    it; every other place repeats that number), a rate or rounding rule of the timing tool. Anything else is
    a time typed by hand, which the next measurement would leave behind."""
    exercises = _exercise_minutes()
    wrong = []
    for where, lesson, text in _places():
        text = RANGE_NOT_A_TIME.sub(" ", _without_generated(text))
        for match in TIME.finditer(text):
            before = " ".join(text[max(0, match.start() - 80):match.start()].split())
            after = " ".join(text[match.end():match.end() + 40].split(" "))
            line = " ".join(text[max(0, match.start() - 80):match.end() + 40].split())
            number = int(re.match(r"\d+", match.group(0)).group(0))
            header = HEADER_LINE.search(line)
            rate, rounding = RATE.search(line), ROUNDING.search(line)
            if header and where.endswith("cell 0"):
                ok = int(header.group(1)) == times.stated(MINUTES[lesson])
            elif rate:
                ok = int(rate.group(1)) == RATES[rate.group(2)]
            elif rounding:
                ok = (all(times.stated(m) % number == 0 for m in range(1, 200))
                      and times.stated(number + 3) == 2 * number)
            elif RUNTIME.match(after):
                ok = True
            elif EXERCISE_NEAR.search(before) or times.STATED_EXERCISE.search(line):
                if where.endswith(".ipynb") or ".ipynb," in where:
                    # the source: where the timing tool reads it
                    ok = bool(times.STATED_EXERCISE.search(line))
                else:
                    ok = lesson is not None and number in exercises[lesson]
            else:
                ok = False
            if not ok:
                wrong.append(f"{where}: {line.strip()!r}")
    assert not wrong, ("times typed by hand or out of date (a lesson's time comes from "
                       "lessons_lib/course/lessons.py via python tools/teaching_times.py --stamp; "
                       "an exercise's from its notebook's heading):\n" + "\n".join(wrong))


#: the course's range and total, checked on their own below
RANGE_NOT_A_TIME = times.RANGE


def test_the_course_total_is_the_sum_of_the_course_map():
    """Lesson 00's map lists each lesson's stated time; the total it states beside them is their sum."""
    nb = nbformat.read(NOTEBOOKS / "00_start_here.ipynb", as_version=4)
    cell = next(c.source for c in nb.cells if c.cell_type == "markdown" and "<!-- map:begin -->" in c.source)
    rows = [int(m) for m in re.findall(r"\| ~(\d+) min \|", cell)]
    assert len(rows) == len(MINUTES) and rows == [times.stated(m) for m in MINUTES.values()]
    hours, minutes = map(int, re.search(r"about (\d+) h (\d+) min in all", cell).groups())
    assert 60 * hours + minutes == sum(rows), (
        f"the map adds up to {sum(rows)} min, the text says {hours} h {minutes}")


RANGE_STATED_IN = [REPO / "README.md", NOTEBOOKS / "00_start_here.ipynb"]


@pytest.mark.parametrize("path", RANGE_STATED_IN, ids=lambda p: p.name)
def test_the_course_total_and_range_are_the_measured_ones(path):
    text = path.read_text(encoding="utf-8")
    found = times.RANGE.findall(text)
    assert found and set(found) == {times.course_range(MINUTES)}, (path.name, found)


def test_the_teachers_guide_carries_the_measured_totals():
    guide = (REPO / "docs" / "teaching.md").read_text(encoding="utf-8")
    for lesson, minutes in MINUTES.items():
        table = guide.split(f"<!-- times:{lesson}:begin -->", 1)[1]
        table = table.split(f"<!-- times:{lesson}:end -->", 1)[0]
        assert f"| **total** | | | | **{minutes}** |" in table, f"lesson {lesson}: not {minutes} min"
    overview = guide.split("<!-- times:overview:begin -->", 1)[1].split("<!-- times:overview:end -->", 1)[0]
    assert overview.strip() == times.overview(MINUTES)


def test_stamping_the_measured_minutes_changes_nothing(tmp_path, monkeypatch):
    """The committed files are exactly what --stamp writes (a copy is stamped, the tree is not touched)."""
    import shutil

    copy = tmp_path / "course"
    (copy / "docs").mkdir(parents=True)
    shutil.copytree(NOTEBOOKS, copy / "notebooks")
    for name in ("README.md", "docs/teaching.md"):
        shutil.copy2(REPO / name, copy / name)
    for name, value in {"ROOT": copy, "GUIDE": copy / "docs" / "teaching.md",
                        "README": copy / "README.md"}.items():
        monkeypatch.setattr(times, name, value)
    assert times.stamp(times.read_minutes()) == []
