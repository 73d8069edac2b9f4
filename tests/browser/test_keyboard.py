"""Every explorer and quiz with the keyboard alone, and what a screen reader is told (WCAG 2.1 AA), in
JupyterLab, on the lessons' pages after Run All (``lesson``, tests/browser/conftest.py):

- Tab from a box's first control to its last and Shift+Tab back visits every stop in order, each with a
  visible focus ring (≥ 2 px, ≥ 3:1 against what is beside it);
- a key on each control (an arrow on a slider, Space on a checkbox, toggle or mask cell, Enter on a preset or
  button, End in a drop-down) changes the figures, and the live region says so; toggles say pressed, every
  control has a name and a value text;
- each live figure takes focus with key help; its cell cursor reaches every cell, its read-out is the
  hover's for the same cell and the live region says it; Enter does what a click does;
- a quiz's options are a named radio group, an arrow picks one, Tab reaches Check, Enter shows the feedback
  in a status region.

What the live regions said is recorded (test-artifacts/latency.json: ``keyboard``).
"""

from __future__ import annotations

import json
import re

import pytest

from lessons_lib.figures.style import MIN_MARK_CONTRAST, contrast_ratio
from tests.helpers.a11y import names_follow, spoken, wait_said
from tests.helpers.browser import PROBE, REDRAW_S, RUN_ALL_S, at_rest, step_key

FOCUS_MIN_PX = 2

# Tab stops of a box, in document order (what Tab must visit); radio buttons of one name are one stop.
TAB_STOPS = """
(box) => {
  const shown = (el) => { const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden'; };
  const focusable = 'button, input, select, textarea, a[href], [tabindex], [contenteditable="true"]';
  const all = [...box.querySelectorAll(focusable)]
    .filter((el) => (el.tabIndex >= 0 || el.isContentEditable) && !el.disabled && shown(el));
  const stops = [], groups = {};
  for (const el of all) {
    if (el.type === 'radio' && el.name) {
      if (el.name in groups) { el.dataset.walk = String(groups[el.name]); continue; }
      groups[el.name] = stops.length;
    }
    el.dataset.walk = String(stops.length);
    stops.push(el);
  }
  return stops.map((el) => ({ tag: el.tagName.toLowerCase(), cls: String(el.className || '').slice(0, 60),
    name: el.getAttribute('aria-label') || (el.textContent || '').trim().slice(0, 40) }));
}
"""

# The focused element: its stop, and its focus ring (outline) and the colour beside it.
FOCUSED = """
() => {
  const el = document.activeElement;
  if (!el || el.dataset.walk === undefined) { return { walk: null }; }
  const cs = getComputedStyle(el);
  let bg = 'rgb(255, 255, 255)';
  for (let e = el.parentElement; e; e = e.parentElement) {
    const c = getComputedStyle(e).backgroundColor;
    if (c && c !== 'transparent' && !/rgba\\(.*, 0\\)$/.test(c)) { bg = c; break; }
  }
  return { walk: Number(el.dataset.walk), style: cs.outlineStyle, width: parseFloat(cs.outlineWidth) || 0,
           color: cs.outlineColor, bg, tag: el.tagName.toLowerCase() };
}
"""

# The cursor walks every cell: panel by panel, row by row (Home, then ArrowRight to the row's end); events
# sent from the page (fast); the figure's data-cursor says where the cursor is after each key.
WALK_CELLS = """
(canvas) => {
  const root = canvas.closest('.lessons-figure-root');
  const cells = JSON.parse(root.dataset.cells || '[]');
  const key = (k) => canvas.dispatchEvent(
    new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  const seen = new Set();
  const up = (rows) => { for (let r = 0; r < rows; r++) key('ArrowUp'); };
  key('Home');
  for (let k = 0; k < cells.length; k++) key('PageUp');
  if (cells.length && cells[0][0] > 1) up(cells[0][0]);
  cells.forEach(([rows, cols], k) => {
    if (k > 0) { key('PageDown'); if (rows > 1) up(rows); }
    for (let r = 0; r < rows; r++) {
      if (r > 0) key('ArrowDown');
      key('Home'); seen.add(root.dataset.cursor);
      for (let c = 1; c < cols; c++) { key('ArrowRight'); seen.add(root.dataset.cursor); }
    }
  });
  key('Escape');
  return { reached: seen.size, cells: cells.reduce((t, [r, c]) => t + r * c, 0) };
}
"""


def _boxes(lesson, selector: str, name: str):
    """Each box of the page matching ``selector``, scrolled into view, with its label ("quiz #1")."""
    boxes = lesson.page.locator(selector)
    if not boxes.count():
        pytest.skip(f"{lesson.source.stem} has no {name}")
    lesson.page.evaluate(PROBE)
    for i in range(boxes.count()):
        box = boxes.nth(i)
        box.scroll_into_view_if_needed()
        yield box, f"{name} #{i}"


def _said(lesson, kind: str, label: str) -> list[str]:
    """Where this box's live-region sentences are recorded: ``run["keyboard"][kind][label]``."""
    return lesson.run.setdefault("keyboard", {}).setdefault(kind, {}).setdefault(label, [])


def _rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(float(x)) for x in re.findall(r"[\d.]+", css)[:3])
    return r, g, b


def _ring_problem(focused: dict) -> str | None:
    """Why a focused element's ring is not visible enough (≥ 2 px, ≥ 3:1 against what is beside it)."""
    if focused["style"] in ("none", "hidden") or focused["width"] < FOCUS_MIN_PX:
        return f"no focus ring of ≥ {FOCUS_MIN_PX} px ({focused['style']} {focused['width']} px)"
    ratio = contrast_ratio(_rgb(focused["color"]), _rgb(focused["bg"]))
    if ratio < MIN_MARK_CONTRAST:
        return f"focus ring {focused['color']} on {focused['bg']}: {ratio:.2f}:1 < {MIN_MARK_CONTRAST:g}:1"
    return None


def _tab_through(page, box, label: str) -> tuple[int, list[str]]:
    """Tab from the box's first stop to its last, then Shift+Tab back: every stop in order, each with a
    visible focus ring. Returns the number of stops and the problems found."""
    stops = box.evaluate(TAB_STOPS)
    if not stops:
        return 0, [f"{label}: nothing in it can take focus"]
    problems, n = [], len(stops)
    page.keyboard.press("Shift")   # the last input is the keyboard: focus rings show (:focus-visible)
    box.locator('[data-walk="0"]').first.focus()
    forward = [page.evaluate(FOCUSED)]
    for _ in range(n - 1):
        page.keyboard.press("Tab")
        forward.append(page.evaluate(FOCUSED))
    backward = [forward[-1]]
    for _ in range(n - 1):
        page.keyboard.press("Shift+Tab")
        backward.append(page.evaluate(FOCUSED))
    if [f["walk"] for f in forward] != list(range(n)):
        problems.append(f"{label}: Tab visits {[f['walk'] for f in forward]}, not its {n} stops in order "
                        f"({[s['name'] or s['tag'] for s in stops]})")
    if [f["walk"] for f in backward] != list(range(n - 1, -1, -1)):
        problems.append(f"{label}: Shift+Tab visits {[f['walk'] for f in backward]}, not its {n} stops back")
    for f in forward:
        why = f["walk"] is not None and _ring_problem(f)
        if why:
            problems.append(f"{label}: stop {f['walk']} ({stops[f['walk']]['name'] or f['tag']}): {why}")
    return n, problems


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_tab_and_shift_tab_reach_every_control_in_order_with_a_focus_ring(lesson):
    """Every explorer and quiz: Tab from its first stop to its last and Shift+Tab back visit every stop in
    order, each with a focus ring of at least 2 px and 3:1."""
    if not lesson.page.locator(".lessons-explorer, .lessons-quiz").count():
        pytest.skip(f"{lesson.source.stem} has no explorer and no quiz")
    problems = []
    for selector, name in ((".lessons-explorer", "explorer"), (".lessons-quiz", "quiz")):
        if lesson.page.locator(selector).count():
            for box, label in _boxes(lesson, selector, name):
                stops, more = _tab_through(lesson.page, box, label)
                lesson.run.setdefault("keyboard", {}).setdefault("tab_stops", {})[label] = stops
                problems += more
    lesson.assert_no_problems(problems)


def _key_on(page, target, key: str) -> None:
    target.focus()
    page.keyboard.press(key)


def _slider_keys(page, box, label: str, said: list[str]) -> list[str]:
    """An arrow key on each slider of the box: its value text changes and is what the slider shows, and the
    live region and the figures' names follow."""
    problems = []
    for h in range(box.locator(".noUi-handle").count()):
        handle = box.locator(".noUi-handle").nth(h)
        key, name = step_key(handle), (handle.get_attribute("aria-valuetext") or "").split(" = ")[0]
        if not name or not handle.get_attribute("aria-label"):
            named = (handle.get_attribute("aria-label"), handle.get_attribute("aria-valuetext"))
            problems.append(f"{label}: slider #{h} has no name or value text {named}")
            continue
        before, old = spoken(box), handle.get_attribute("aria-valuetext")
        _key_on(page, handle, key)
        try:
            page.wait_for_function("([h, old]) => h.getAttribute('aria-valuetext') !== old",
                                   arg=[handle.element_handle(), old], timeout=5000)
        except Exception:
            problems.append(f"{label}: slider {name}: {key} did not change its value text ({old!r})")
            continue
        wanted = handle.get_attribute("aria-valuetext")
        shown = handle.locator("xpath=ancestor::*[contains(@class,'widget-slider') or contains(@class,"
                               "'widget-hslider')][1]//*[contains(@class,'widget-readout')]").first
        if shown.count() and f"{name} = {shown.inner_text().strip()}" != wanted:
            problems.append(f"{label}: slider {name}'s value text {wanted!r} is not what it shows "
                            f"({shown.inner_text().strip()!r})")
        text, more = names_follow(page, box, wanted, before, f"{label}, slider {name}")
        problems.extend(more)
        said += [text] if text else []
    return problems


def _key_said(page, box, target, key: str, what: str,
              timeout_s: float = REDRAW_S) -> tuple[str | None, list[str]]:
    """``key`` on ``target``, a control of the box: the live region says something new, and what it says or
    the figures' names changed. Returns what it said and the problems found."""
    before = spoken(box)
    _key_on(page, target, key)
    try:
        after = wait_said(page, box, before, timeout_s)
    except Exception:
        return None, [f"{what}: the live region said nothing after {key}"]
    if after["names"] == before["names"] and after["text"] == before["text"]:
        return after["text"], [f"{what}: {key} changed neither the figures' names nor what is said"]
    return after["text"], []


def _control_keys(page, box, label: str) -> tuple[list[str], list[str]]:
    """One key on each control of an explorer but its sliders (Space on a checkbox, a toggle or a mask cell,
    Enter on a preset or a button, End in a drop-down): what the live region said, and the problems."""
    said, problems = [], []

    def key_said(target, key: str, what: str, timeout_s: float = REDRAW_S) -> None:
        text, more = _key_said(page, box, target, key, f"{label}, {what}", timeout_s)
        said.extend([text] if text else [])
        problems.extend(more)

    for c in range(box.locator("input[type=checkbox]").count()):
        key_said(box.locator("input[type=checkbox]").nth(c), "Space", f"checkbox #{c}")
    groups = box.locator(".widget-toggle-buttons")
    for g in range(groups.count()):
        group = groups.nth(g)
        if group.get_attribute("role") != "group" or not group.get_attribute("aria-label"):
            problems.append(f"{label}: toggle group #{g} is not a named group")
        if not group.locator('.widget-toggle-button[aria-pressed="false"]').count():
            problems.append(f"{label}: toggle group #{g}: no button says aria-pressed")
            continue
        button = group.locator('.widget-toggle-button[aria-pressed="false"]').first.element_handle()
        key_said(button, "Space", f"toggle group #{g}")
        if button.get_attribute("aria-pressed") != "true":
            problems.append(f"{label}: toggle group #{g}: the button pressed does not say aria-pressed=true")
    cells = box.locator(".lessons-toggle-cell")
    for c in range(min(cells.count(), 3)):
        cell = cells.nth(c)
        was = cell.get_attribute("aria-pressed")
        if was not in ("true", "false") or not cell.get_attribute("aria-label"):
            problems.append(f"{label}: mask cell #{c} has no name or no pressed state")
            continue
        key_said(cell, "Space", f"mask cell #{c}")
        if cell.get_attribute("aria-pressed") == was:
            problems.append(f"{label}: mask cell #{c}: Space did not change its pressed state")
    presets = box.locator(".lessons-mask-preset")
    if presets.count():
        key_said(presets.nth(1), "Enter", "a preset")
    for d in range(box.locator("select").count()):
        select = box.locator("select").nth(d)
        if not select.get_attribute("aria-label") and not select.evaluate("(s) => s.labels.length"):
            problems.append(f"{label}: drop-down #{d} has no name")
        key_said(select, "End", f"drop-down #{d}")   # its last entry: not the placeholder, not what is shown
    measure = box.locator(".lessons-button-measure")
    if measure.count():   # after the N slider moved to a size not measured yet: names take the new points
        key_said(measure.first, "Enter", "Measure up to N", timeout_s=RUN_ALL_S)
    return said, problems


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_a_key_on_every_control_changes_the_figures_and_is_said(lesson):
    """One key on each control of every explorer (an arrow on a slider, Space on a checkbox, toggle or mask
    cell, Enter on a preset or a button, End in a drop-down): the live region says what changed, the figures'
    names follow, a toggle says whether it is pressed, every control has a name."""
    problems = []
    for box, label in _boxes(lesson, ".lessons-explorer", "explorer"):
        said = _said(lesson, "explorers", label)
        problems += _slider_keys(lesson.page, box, label, said)
        text, more = _control_keys(lesson.page, box, label)
        said += text
        problems += more
    lesson.assert_no_problems(problems)


def _cursor_reads_as_the_hover(page, canvas, root, readout, text: str, rect: str) -> tuple[str, str] | None:
    """The pointer on the cursor's cell reads the same as the keys (``text``); where two points of a plot lie
    on one pixel the pointer gets one of them, so up to three cells are tried. Returns (hover, keys) where
    they differ."""
    mismatch = None
    for attempt in range(3):
        cell, where = json.loads(rect), canvas.bounding_box()
        page.mouse.move(where["x"] + cell["x"] + cell["w"] / 2, where["y"] + cell["y"] + cell["h"] / 2)
        try:
            page.wait_for_function("([el, t]) => el.textContent.trim() === t",
                                   arg=[readout.element_handle(), text], timeout=3000)
            mismatch = None
            break
        except Exception:
            mismatch = mismatch or (readout.text_content().strip(), text)
        page.mouse.move(0, 0)
        _key_on(page, canvas, "ArrowRight")             # the cursor again, at its start ...
        for _ in range(attempt + 1):
            page.keyboard.press("ArrowRight")           # ... and one cell further each time
        text, rect = readout.text_content().strip(), root.get_attribute("data-cursor-rect")
    page.mouse.move(0, 0)
    return mismatch


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_every_figures_cell_cursor_reaches_every_cell_and_reads_as_the_hover(lesson):
    """Each live figure of every explorer takes focus with a name and key help; an arrow key shows the
    cursor's read-out (said in the live region for an explorer's first figure), which is the hover's text for
    the same cell; Enter does what a click does; the cursor reaches every cell."""
    page, problems = lesson.page, []
    for box, label in _boxes(lesson, ".lessons-explorer", "explorer"):
        said = _said(lesson, "explorers", label)
        # what the checks before asked of the kernel is in and drawn: its words in the live region would
        # otherwise come after the cursor's (a CI run on a busy machine heard lesson 07's seq_len there)
        lesson.wire.wait_quiet(REDRAW_S)
        at_rest(page)
        canvases = box.locator("canvas.lessons-figure-canvas")
        for k in range(canvases.count()):
            canvas = canvases.nth(k)
            root = canvas.locator("xpath=..").locator("xpath=..")
            what = f"{label}, figure #{k}"
            if canvas.get_attribute("tabindex") != "0" or not canvas.get_attribute("aria-describedby"):
                problems.append(f"{what}: it cannot take focus or has no key help")
                continue
            readout = root.locator(".lessons-figure-readout")
            before = spoken(box)
            canvas.scroll_into_view_if_needed()
            _key_on(page, canvas, "ArrowRight")
            page.keyboard.press("ArrowDown")
            text, rect = readout.text_content().strip(), root.get_attribute("data-cursor-rect")
            if not text or not rect:
                problems.append(f"{what}: arrow keys moved no cursor")
                continue
            if k == 0:
                try:
                    after = wait_said(page, box, before)
                    if after["text"] != text:
                        problems.append(f"{what}: the live region says {after['text']!r}, not the read-out "
                                        f"{text!r}")
                    said.append(after["text"])
                except Exception:
                    problems.append(f"{what}: the cursor's read-out was not said")
            mismatch = _cursor_reads_as_the_hover(page, canvas, root, readout, text, rect)
            if mismatch:
                problems.append(f"{what}: hovering the cursor's cell reads {mismatch[0]!r}, the keys read "
                                f"{mismatch[1]!r}")
            keys = canvas.evaluate(
                "(c) => document.getElementById(c.getAttribute('aria-describedby')).textContent")
            if "Enter" in keys:   # what a click does: select the row, the panel; lock the head
                before = spoken(box)
                _key_on(page, canvas, "ArrowLeft")
                page.keyboard.press("Enter")
                try:
                    after = wait_said(page, box, before)
                    while after["text"] == readout.text_content().strip():   # the cursor's read-out first
                        after = wait_said(page, box, after)
                    said.append(after["text"])
                except Exception:
                    problems.append(f"{what}: Enter (as a click) changed nothing the live region says")
            walk = canvas.evaluate(WALK_CELLS)
            if walk["reached"] != walk["cells"]:
                problems.append(f"{what}: the cursor reached {walk['reached']} of its {walk['cells']} cells")
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_a_quiz_is_answered_with_the_keyboard(lesson):
    """Every quiz: its options are a named radio group, each named by its full text; an arrow picks one, Tab
    reaches Check, Enter shows the feedback in a status region."""
    page, problems = lesson.page, []
    for quiz, label in _boxes(lesson, ".lessons-quiz", "quiz"):
        group = quiz.locator('[role="radiogroup"]').first
        if not group.count() or not group.get_attribute("aria-label"):
            problems.append(f"{label}: its options are not a named radio group")
            continue
        radios = group.locator("input[type=radio]")
        names = [radios.nth(i).get_attribute("aria-label") or "" for i in range(radios.count())]
        if not all(re.match(r"^[A-Z]\. \S", n) for n in names):
            problems.append(f"{label}: options are not named by their full text: {names}")
        radios.first.focus()
        page.keyboard.press("ArrowRight")   # one pick (two quick ones could reach the kernel after the Check)
        if not radios.nth(1).is_checked():
            problems.append(f"{label}: the arrow key did not pick the next option")
        feedback = quiz.locator(".lessons-quiz-feedback").first
        if feedback.get_attribute("role") != "status" or feedback.get_attribute("aria-live") != "polite":
            problems.append(f"{label}: the feedback area is not a status region")
        check = quiz.locator(".lessons-quiz-check").first
        while page.evaluate("() => document.activeElement && document.activeElement.type") == "radio":
            page.keyboard.press("Tab")
        if not check.evaluate("(b) => b === document.activeElement"):
            problems.append(f"{label}: Tab from the options does not reach Check")
            check.focus()
        page.keyboard.press("Enter")
        try:
            # ✓ or ✗; lesson 00's concept quiz (before the course) says only which answer it noted
            page.wait_for_function("(el) => /[✓✗]|^\\s*Answer [A-D] noted\\./.test(el.textContent)",
                                   arg=feedback.element_handle(), timeout=4 * REDRAW_S * 1000)
        except Exception:
            problems.append(f"{label}: Enter on Check showed no feedback")
            continue
        _said(lesson, "quizzes", label).append(feedback.inner_text().strip().splitlines()[0])
    lesson.assert_no_problems(problems)
