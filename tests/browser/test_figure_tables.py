"""Every live figure's "Numbers as a table", with the keyboard alone, in JupyterLab after Run All (``lesson``,
tests/browser/conftest.py): for each figure of every explorer,

- Tab from the figure reaches its "Numbers as a table" button, a real ``<button>`` whose ``aria-expanded``
  says false and whose ``aria-controls`` names the hidden tables;
- Enter shows them (``aria-expanded`` true), and the explorer's live region says so; each table has a
  caption, column headers (``th scope="col"``) and one row header (``th scope="row"``) a row, and the cell
  under the figure's cell cursor holds what the cursor's read-out says (the figure's own data);
- a slider of the explorer moved by a key: the open tables change with the figures, and still hold what the
  cursor reads;
- axe-core finds no critical or serious violation in the explorer with its tables open;
- Enter on the button again hides them (``aria-expanded`` false, the tables gone).
"""

from __future__ import annotations

import pytest

from tests.helpers.a11y import blocking, format_violations, require_axe, run_axe, spoken, wait_said
from tests.helpers.browser import PROBE, REDRAW_S, step_key

# The figure's tables: how many, and what each holds (caption, headers, cells).
TABLES = """
(root) => [...root.querySelectorAll('.lessons-figure-tables table')].map((t) => ({
  caption: t.caption ? t.caption.textContent : '',
  cols: [...t.querySelectorAll('thead th')].filter((th) => th.scope === 'col').length,
  rows: t.tBodies[0] ? t.tBodies[0].rows.length : 0,
  rowHeads: [...t.querySelectorAll('tbody tr')].filter((tr) => tr.firstChild && tr.firstChild.tagName === 'TH'
    && tr.firstChild.scope === 'row').length,
  text: t.textContent,
}))
"""

# The table cell(s) under the figure's cell cursor, and the cursor's read-out (the figure's own text).
UNDER_CURSOR = """
(root) => {
  const cur = JSON.parse(root.dataset.cursor || 'null');
  const readout = root.querySelector('.lessons-figure-readout').textContent.trim();
  if (!cur) return { readout, cells: null, why: 'no cursor' };
  const tables = [...root.querySelectorAll('.lessons-figure-tables table')];
  const t = tables[cur.panel !== undefined ? cur.panel : cur.series !== undefined ? cur.series : 0];
  if (!t) return { readout, cells: null, why: 'no table for the cursor' };
  const row = cur.row !== undefined ? cur.row : cur.index;
  const tr = t.querySelector(`tbody tr[data-index="${row}"]`);
  if (!tr) return { readout, cells: null, why: `no row ${row} (a part of a large matrix)`, partial: true };
  const tds = [...tr.querySelectorAll('td')];
  if (cur.col === undefined || cur.col < 0) return { readout, cells: tds.map((td) => td.textContent) };
  const heads = [...t.querySelectorAll('thead th[data-index]')];
  const k = heads.findIndex((th) => th.dataset.index === String(cur.col));
  return k < 0 ? { readout, cells: null, why: `no column ${cur.col}`, partial: true }
    : { readout, cells: [tds[k].textContent] };
}
"""


def _cursor_matches_table(page, canvas, root, what: str) -> list[str]:
    """Move the figure's cell cursor (an arrow key) and compare its read-out with the table's cell there."""
    canvas.focus()
    page.keyboard.press("ArrowRight")
    under = root.evaluate(UNDER_CURSOR)
    page.keyboard.press("Escape")
    if under["cells"] is None:
        return [] if under.get("partial") else [f"{what}: {under['why']} (read-out {under['readout']!r})"]
    missing = [c for c in under["cells"] if c.replace("≈ ", "") not in under["readout"]]
    return [f"{what}: the table says {missing} where the cursor reads {under['readout']!r}"] * bool(missing)


def _open(page, box, canvas, root, button, what: str, said: list[str]) -> list[str]:
    """Tab from the figure to its button, Enter: the tables are shown, named, headed and said."""
    problems = []
    canvas.focus()
    page.keyboard.press("Tab")
    if not button.evaluate("(b) => document.activeElement === b"):
        problems.append(f"{what}: Tab from the figure does not reach its 'Numbers as a table' button")
        button.focus()
    region = root.locator(".lessons-figure-tables")
    if button.get_attribute("aria-expanded") != "false" or not region.is_hidden() \
            or button.get_attribute("aria-controls") != region.get_attribute("id"):
        problems.append(f"{what}: the button does not say that it controls the hidden tables")
    before = spoken(box)
    page.keyboard.press("Enter")
    if button.get_attribute("aria-expanded") != "true" or region.is_hidden():
        return problems + [f"{what}: Enter on the button does not show the tables"]
    try:
        said.append(wait_said(page, box, before, wanted="table")["text"])
    except Exception:
        problems.append(f"{what}: opening the tables is not said in the live region")
    tables = root.evaluate(TABLES)
    if not tables:
        problems.append(f"{what}: no table shown")
    for k, t in enumerate(tables):
        if not t["caption"].strip() or t["cols"] < 2 or not t["rows"] or t["rowHeads"] != t["rows"]:
            problems.append(f"{what}, table #{k}: caption, column headers or row headers missing: {t}")
    return problems


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_every_figures_numbers_open_as_a_table_by_keys_and_follow_the_sliders(lesson):
    page, problems = lesson.page, []
    boxes = page.locator(".lessons-explorer")
    if not boxes.count():
        pytest.skip(f"{lesson.source.stem} has no explorer")
    require_axe()   # before a table is opened: a skip halfway would leave them open for the next check
    page.evaluate(PROBE)
    for i in range(boxes.count()):
        box, label = boxes.nth(i), f"explorer #{i}"
        box.scroll_into_view_if_needed()
        said = lesson.run.setdefault("keyboard", {}).setdefault("tables", {}).setdefault(label, [])
        roots = box.locator(".lessons-figure-root")
        figures = []
        for k in range(roots.count()):
            root = roots.nth(k)
            canvas, button = root.locator("canvas.lessons-figure-canvas"), root.locator(
                "button.lessons-figure-table-toggle")
            what = f"{label}, figure #{k}"
            if button.count() != 1:
                problems.append(f"{what}: no 'Numbers as a table' button")
                continue
            problems += _open(page, box, canvas, root, button, what, said)
            problems += _cursor_matches_table(page, canvas, root, what)
            figures.append((root, canvas, button, what))
        # a slider moved: the open tables follow the figures
        handles = box.locator(".noUi-handle")
        if figures and handles.count():
            before = ["|".join(t["text"] for t in r.evaluate(TABLES)) for r, *_ in figures]
            handle = handles.first
            handle.focus()
            page.keyboard.press(step_key(handle))
            try:
                page.wait_for_function(
                    """([roots, before]) => roots.some((r, k) =>
                         [...r.querySelectorAll('.lessons-figure-tables table')].map((t) => t.textContent)
                           .join('|') !== before[k])""",
                    arg=[[r.element_handle() for r, *_ in figures], before],
                    timeout=REDRAW_S * 1000)
            except Exception:
                problems.append(f"{label}: a slider moved, but no open table changed")
            for root, canvas, _, what in figures:
                problems += [p + " (after the slider moved)"
                             for p in _cursor_matches_table(page, canvas, root, what)]
        # axe over the explorer with its tables open
        if figures:
            box.evaluate("(b) => b.setAttribute('data-tables-check', '')")
            found = blocking(run_axe(page, "[data-tables-check]"))
            box.evaluate("(b) => b.removeAttribute('data-tables-check')")
            if found:
                problems.append(f"{label}: axe, critical or serious, with the tables open:\n"
                                f"{format_violations(found)}")
        # Enter on each button again: hidden, and said so
        for root, _, button, what in figures:
            button.focus()
            page.keyboard.press("Enter")
            if button.get_attribute("aria-expanded") != "false" or root.locator("table").count():
                problems.append(f"{what}: Enter on the button again does not hide the tables")
    lesson.assert_no_problems(problems)
