"""``tools/term_plan.py`` plans only terms that can exist: a positive whole number of sessions, no more than
the course has sections, each longer than the review it opens with. Anything else is refused with what was
wrong, from the command line and from Python, never printed as sessions of zero or negative length."""

from __future__ import annotations

import pytest

from tests.helpers import load_tool

term_plan = load_tool("term_plan")


def _tables():
    return term_plan.lesson_tables(term_plan.GUIDE.read_text(encoding="utf-8"))


def _sections() -> int:
    return sum(head != "total" for table in _tables().values() for head in table)


def refused(args: list[str], capsys) -> str:
    """The one line ``term_plan`` refuses ``args`` with (exit status 2, nothing printed)."""
    with pytest.raises(SystemExit) as exit_:
        term_plan.main(args)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == "" and err.count("\n") == 1, (exit_.value.code, out, err)
    return err


@pytest.mark.parametrize(("args", "words"), [
    (["--sessions", "0"], "--sessions: a term has a positive whole number of sessions; got 0"),
    (["--sessions", "-3"], "--sessions: a term has a positive whole number of sessions; got -3"),
    (["--minutes", "0"], f"--minutes: a session must last a whole number of minutes above the "
                         f"{term_plan.REVIEW_MINUTES} of review it opens with; got 0"),
    (["--minutes", "-45"], "--minutes: a session must last a whole number of minutes above"),
    (["--minutes", str(term_plan.REVIEW_MINUTES)], f"--minutes: a session must last a whole number of "
                                                   f"minutes above the {term_plan.REVIEW_MINUTES}"),
    (["--sessions", "4", "--minutes", "-75"], "--minutes: "),
    (["--sessions", "2", "--minutes", "40"], "--sessions or --minutes: the lessons"),
    (["--sessions", "two"], "argument --sessions: invalid int value: 'two'"),
])
def test_zero_or_negative_sessions_or_minutes_are_refused_by_the_command(args, words, capsys):
    assert words in refused(args, capsys)


def test_more_sessions_than_sections_is_refused_naming_the_count(capsys):
    too_many = _sections() + 1
    assert f"--sessions: {too_many} sessions is more than the course's {_sections()} sections" in refused(
        ["--sessions", str(too_many)], capsys)


def test_many_sessions_that_fit_without_cuts_are_planned_not_refused(capsys):
    """More sessions than sections are left once every cut is made, but not more than the whole course has:
    the plan cuts nothing and fits, rather than telling the teacher to plan more sessions."""
    sessions = _sections() - 5
    assert term_plan.main(["--sessions", str(sessions)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == sessions and all(int(row.rsplit("|", 3)[1]) > 0 for row in rows)


@pytest.mark.parametrize(("call", "words"), [
    (lambda t: term_plan.term_table(t, 0), "positive whole number of sessions"),
    (lambda t: term_plan.term_table(t, 8, -20), "got -20"),
    (lambda t: term_plan.term_table(t, 2.5), "got 2.5"),
    (lambda t: term_plan.term_table(t, True), "got True"),
    (lambda t: term_plan.term_table(t, 8, 60.5), "got 60.5"),
    (lambda t: term_plan.balance(t, 8, 0), "positive whole number of minutes; got 0"),
    (lambda t: term_plan.fitting_term(t, -1), "got -1"),
])
def test_the_functions_refuse_the_same_nonsense(call, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        call(_tables())
