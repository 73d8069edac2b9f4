"""The browser tests' fixtures, and the order in which the checks of one lesson's page run.

Every check of a lesson in a front end takes the fixture ``lesson``: a
:class:`~tests.helpers.browser.LessonPage`, the notebook ``source`` opened in ``front`` and run to its end
(Run All). Each such test names its front ends
(``@pytest.mark.parametrize("front", FRONT_ENDS)``); ``source`` is added here, one per notebook.

**One Run All per notebook and front end.** The page stays open while the checks of the same (front end,
notebook) run, and :func:`pytest_collection_modifyitems` puts those checks together, in :data:`PAGE_ORDER`,
whatever file they are in; the page is closed when a check of another lesson comes. Each check is a test of
its own, so one that fails hides none of the others. A check that ends in an error rather than a failed
assertion (a timeout halfway through a key walk) may leave the page in any state: the next check of that
lesson gets it opened afresh. A page that cannot be opened fails each of its checks with that reason, tried
once.

What the checks measure on the way (ms and kB per slider move, the drag, axe's tallies) goes to
``test-artifacts/latency.json`` whenever a page closes, and is printed at the end; nothing of it is
asserted. The key press's ratio to a bare ipywidgets round trip is a benchmark: ``benchmarks/key_press.py``.
"""

from __future__ import annotations

import contextlib
import json
import statistics
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.browser import (
    FRONT_ENDS,
    SCREENSHOTS,
    VIEWPORT,
    LessonPage,
    chromium_context,
    lesson_notebooks,
    serving_course,
    started_playwright,
)

LATENCY_JSON = REPO / "test-artifacts" / "latency.json"

# The checks of one page, in the order they run: each leaves the page in a state the next expects (axe sees
# the lesson as Run All left it; the set-up check's echo and the keyboard come after the sliders moved, as a
# learner's would; presenting changes the page, so slides come last but for what the page fetched).
PAGE_ORDER = (
    "test_run_all_runs_every_cell_without_an_error",
    "test_every_widget_renders",
    "test_every_explorer_is_live_and_every_figure_drew",
    "test_axe_finds_no_critical_or_serious_violation_in_the_course_content",
    "test_every_explorer_fits_the_window",
    "test_hovering_reads_a_cell_and_a_click_selects_its_row",
    "test_every_slider_key_redraws_its_explorer_and_is_said",
    "test_a_d_k_move_at_128_tokens_redraws_the_explorer",
    "test_a_fast_drag_ends_on_its_final_value",
    "test_the_set_up_checks_slider_is_echoed_from_python",
    "test_tab_and_shift_tab_reach_every_control_in_order_with_a_focus_ring",
    "test_a_key_on_every_control_changes_the_figures_and_is_said",
    "test_every_figures_cell_cursor_reaches_every_cell_and_reads_as_the_hover",
    "test_every_figures_numbers_open_as_a_table_by_keys_and_follow_the_sliders",
    "test_a_quiz_is_answered_with_the_keyboard",
    "test_explorers_reflow_at_200_percent_zoom",
    "test_every_lesson_reflows_at_320_css_px_and_keeps_its_text_with_wcag_spacing",
    "test_the_lesson_presents_as_slides_on_a_1280_by_720_screen",
    "test_nothing_is_fetched_from_outside_the_server",
    # last: it forces the colours and motion, then lets them go, so no check after it sees their traces
    "test_explorers_stay_visible_in_forced_colours_and_still_under_reduced_motion",
)


def pytest_generate_tests(metafunc):
    """A check of a lesson's page runs for every notebook (``source``)."""
    if "lesson" in metafunc.fixturenames:
        metafunc.parametrize("source", lesson_notebooks(), ids=lambda path: path.stem)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The checks of one page together, front end by front end and notebook by notebook, in PAGE_ORDER
    (after any reordering by another plugin); every other test keeps its place before them."""
    here = Path(__file__).parent   # the hook sees every test of the session: only this folder's are moved
    checks = [item for item in items
              if Path(item.path).is_relative_to(here) and "lesson" in getattr(item, "fixturenames", ())]
    unknown = sorted({item.originalname for item in checks} - set(PAGE_ORDER))
    if unknown:
        raise pytest.UsageError(f"browser checks missing from PAGE_ORDER (tests/browser/conftest.py): "
                                f"{unknown}")

    def place(item):
        params = item.callspec.params
        return FRONT_ENDS.index(params["front"]), params["source"].name, PAGE_ORDER.index(item.originalname)

    ids = {id(item) for item in checks}
    items[:] = [item for item in items if id(item) not in ids] + sorted(checks, key=place)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A check that failed leaves a screenshot of its page; one that ended in an error (not a failed
    assertion) spoils the page for the next check (opened afresh)."""
    report = yield
    pages = item.funcargs.get("lesson_pages") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and pages is not None and pages.current is not None:
        with contextlib.suppress(Exception):
            pages.current.page.screenshot(path=str(SCREENSHOTS / f"{pages.current.shot}-{item.originalname}"
                                                                 "-FAILED.png"))
        if not isinstance(call.excinfo.value, AssertionError):
            pages.spoiled = True
    return report


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="session")
def playwright():
    """playwright's sync API, one for the session: the lessons' Chromium and the static pages' share it."""
    with started_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser_context(playwright):
    with chromium_context(playwright) as context:
        yield context


@pytest.fixture(scope="session")
def served_course():
    """JupyterLab serving a copy of the course (autosave off); Notebook 7 under /notebooks/."""
    with serving_course() as server:
        yield server


class LatencyRecord:
    """What the checks measured, by page (``runs``: a dict per "<notebook> (<front end>)"), summarised per
    front end and written to test-artifacts/latency.json."""

    def __init__(self, path: Path = LATENCY_JSON):
        self.path = path
        self.data: dict = {"viewport": VIEWPORT, "runs": {}}

    def run_of(self, name: str) -> dict:
        return self.data["runs"].setdefault(name, {})

    def _runs(self, front: str) -> list[dict]:
        return [run for run in self.data["runs"].values() if run.get("front_end") == front]

    def summary(self, front: str) -> dict:
        runs, out = self._runs(front), {}
        for label, moves in (
            ("moves", [m for run in runs for s in run.get("sliders", []) for m in s["moves"]]),
            ("moves_at_128_tokens",
             [m for run in runs for s in run.get("at_128_tokens", []) for m in s["moves"]]),
        ):
            if moves:
                out[label] = summarise(moves)
        drags = [run["drag"]["final_shown_ms_after_last_press"] for run in runs if run.get("drag")]
        if drags:
            out["drag_final_shown_ms_median"] = round(statistics.median(drags), 1)
        if any(run.get("axe") for run in runs):
            tallies: dict[str, int] = {}
            for run in runs:
                for impact, n in run.get("axe", {}).get("tally", {}).items():
                    tallies[impact] = tallies.get(impact, 0) + n
            out["axe_course_content"] = tallies
        return out

    def write(self) -> None:
        self.data["summary"] = {front: s for front in FRONT_ENDS if (s := self.summary(front))}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=2), encoding="utf-8")

    def lines(self) -> list[str]:
        """One line per front end: what a move costs, the drag, axe's tally."""
        lines = []
        for front, s in self.data.get("summary", {}).items():
            parts = []
            for label, what in (("moves", "a slider move"), ("moves_at_128_tokens", "at 128 tokens")):
                if label in s and "median_shown_ms" in s[label]:
                    parts.append(f"{what}: key press → picture {s[label]['median_shown_ms']} ms, "
                                 f"{s[label].get('median_kB')} kB (medians of {s[label]['n_moves']})")
            if "drag_final_shown_ms_median" in s:
                parts.append(f"a drag's last picture {s['drag_final_shown_ms_median']} ms after its last "
                             "press (median)")
            if "axe_course_content" in s:
                parts.append(f"axe over the course's content: {s['axe_course_content'] or 'no violation'}")
            if parts:
                lines.append(f"browser test ({front}): " + "; ".join(parts))
        return lines


def summarise(moves: list[dict]) -> dict:
    """Medians and maxima of a list of moves (``shown_ms``, ``kB``)."""
    shown = [m["shown_ms"] for m in moves if m.get("shown_ms") is not None]
    kb = [m["kB"] for m in moves if m.get("kB") is not None]
    out = {"n_moves": len(moves)}
    if shown:
        out.update(median_shown_ms=round(statistics.median(shown), 1), max_shown_ms=round(max(shown), 1))
    if kb:
        out.update(median_kB=round(statistics.median(kb), 2), max_kB=round(max(kb), 2))
    return out


RECORD = pytest.StashKey[LatencyRecord]()


@pytest.fixture(scope="session")
def latency_record(request):
    """The session's :class:`LatencyRecord`, written when the session ends and printed in pytest's summary
    (recorded, never asserted: timing is ``make bench``'s). A pytest-xdist worker writes its own file
    (``latency-gw0.json``) and hands its runs to the controller, which writes latency.json and prints."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    path = LATENCY_JSON.with_name(f"latency-{worker}.json") if worker else LATENCY_JSON
    record = request.config.stash[RECORD] = LatencyRecord(path)
    yield record
    record.write()
    if worker:
        request.config.workeroutput["latency_runs"] = json.dumps(record.data["runs"])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the controller of a pytest-xdist run: a worker's runs join the session's record (latency.json)."""
    runs = getattr(node, "workeroutput", {}).get("latency_runs")
    if runs:
        record, runs = node.config.stash.setdefault(RECORD, LatencyRecord()), json.loads(runs)
        node.config.stash.setdefault(SPLIT, set()).update(set(runs) & set(record.data["runs"]))
        record.data["runs"].update(runs)
        record.write()
        LATENCY_JSON.with_name(f"latency-{node.workerinput['workerid']}.json").unlink(missing_ok=True)


SPLIT = pytest.StashKey[set]()


def pytest_sessionfinish(session, exitstatus):
    """A page opened on two workers (its checks split between them) fails the run: each worker ran it again,
    and each check's record of the page holds only its own worker's part."""
    split = session.config.stash.get(SPLIT, set())
    if split:
        session.config.get_terminal_writer().line(f"\npages run on two workers: {sorted(split)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config):
    """What the checks measured, one line per front end (output captured during the tests would hide it)."""
    record = config.stash.get(RECORD, None)
    reflow = [run["reflow_320"]["line"] for run in record.data["runs"].values() if "reflow_320" in run] \
        if record else []
    if reflow:
        terminalreporter.section("reflow at 320 CSS px (400 % zoom) and WCAG text spacing, per lesson")
        for line in reflow:
            terminalreporter.write_line(line)
    lines = record.lines() if record else []
    if lines:
        terminalreporter.section("what the browser tests measured (test-artifacts/latency.json)")
        lines.append("the ratio to a bare ipywidgets round trip: make bench (benchmarks/key_press.py)")
        for line in lines:
            terminalreporter.write_line(line)


class LessonPages:
    """The page of the (front end, notebook) whose checks run now: opened at its first check, kept for the
    next, closed when another lesson's check comes or the session ends."""

    def __init__(self, context, server, record: LatencyRecord):
        self.context, self.server, self.record = context, server, record
        self.current: LessonPage | None = None
        self.spoiled = False
        self.unopened: dict[tuple[str, str], str] = {}

    def page_for(self, source, front: str) -> LessonPage:
        key = (front, source.name)
        if key in self.unopened:
            pytest.fail(f"{source.name} ({front}) could not be opened and run: {self.unopened[key]}",
                        pytrace=False)
        now = self.current and (self.current.front, self.current.source.name)
        if self.current is not None and (now != key or self.spoiled):
            self.close()
        if self.current is None:
            run = self.record.run_of(f"{source.name} ({front})")
            try:
                self.current = LessonPage.open(self.context, self.server, source, front, run)
            except Exception as exc:
                self.unopened[key] = f"{type(exc).__name__}: {str(exc)[:2000]}"
                raise
            self.spoiled = False
        return self.current

    def close(self) -> None:
        if self.current is not None:
            try:
                self.current.close()
            finally:
                self.current = None
                self.record.write()


@pytest.fixture(scope="session")
def lesson_pages(browser_context, served_course, latency_record):
    pages = LessonPages(browser_context, served_course, latency_record)
    yield pages
    pages.close()


@pytest.fixture
def lesson(lesson_pages, source, front) -> LessonPage:
    """The notebook ``source`` open in ``front`` and run to its end, shared by the checks of that page."""
    return lesson_pages.page_for(source, front)
