"""A lesson walked through in a real browser, as a learner meets it: JupyterLab and Notebook 7, headless
Chromium (Debian's), playwright.

For each notebook in notebooks/ (whatever is there when the tests are collected), in each front end, the page
is opened in a fresh workspace and run with Run > Run All Cells (``lesson``, tests/browser/conftest.py: one
Run All serves every check of the page), then:

- every cell ran and no output is an error; every widget rendered (no "Error displaying widget", no widget
  shown as plain text, no "Loading widget..."); every explorer is a live widget (not its still picture) and
  every live figure drew;
- every explorer fits the 1280 × 800 window (controls and all panels visible together; a screenshot of each);
- every d_k / seq_len slider, moved with the arrow keys, redraws its explorer with the new value (the
  figures' alt text names it), keeps the explorer's height (the page never jumps), and a screen reader is
  told: the handle's value text, the live region and each figure's name follow. Recorded, not asserted:
  key press → picture (ms, in the page's clock) and the websocket's kB per move;
- in JupyterLab: 20 arrow presses within one second on a seq_len slider end on the final value's picture,
  and no older picture is drawn after it (recorded: when it came); hovering a heatmap's cell reads it out
  with no kernel round trip, clicking a row moves the query slider there, and the save button downloads a PNG;
- the set-up check of lesson 00 echoes its slider from Python;
- nothing is fetched from outside the server (the course runs offline).

Screenshots go to ``$LESSONS_SCREENSHOTS`` (make test: test-artifacts/screenshots). The accessibility
checks of the same pages are in test_keyboard.py, test_axe.py and test_reflow.py, the slides in
test_slides.py, the heaviest move in test_latency.py.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import nbformat
import pytest

from tests.helpers import in_ci
from tests.helpers.a11y import names_follow, spoken
from tests.helpers.browser import (
    FRONT_ENDS,
    PROBE,
    REDRAW_S,
    SCREENSHOTS,
    SLIDER_CLASSES,
    SOURCE_DIR,
    WIDGET_ERROR_TEXTS,
    at_rest,
    explorer_sliders,
    lesson_notebooks,
    press,
    press_and_wait,
    step_key,
)

PRESSES_PER_SLIDER = 4
DRAG_PRESSES, DRAG_SPACING_MS = 20, 45      # 20 presses within one second


def _widget_class_names() -> list[str]:
    import ipywidgets

    return sorted(
        name for name, obj in vars(ipywidgets).items()
        if isinstance(obj, type) and issubclass(obj, ipywidgets.DOMWidget)
    )


# A widget shown as text: the front end could not render it (e.g. no widget extension).
WIDGET_AS_TEXT = re.compile(
    r"^\s*(?:(?:" + "|".join(_widget_class_names()) + r")\(|<lessons_lib\.\w+\.\w+ object at 0x)"
)
# An exception in an output: a traceback, or a line such as "ValueError: ..." (SyntaxError has no traceback).
ERROR_TEXT = re.compile(r"Traceback \(most recent call last\)|^\w*(?:Error|Exception|Interrupt)\b.*:", re.M)

OUTPUTS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].flatMap((cell, index) =>
  [...cell.querySelectorAll('.jp-OutputArea-output')].map((el) => ({
    cell: index, mime: el.getAttribute('data-mime-type'), text: el.innerText.slice(0, 600),
    widget: !!el.querySelector('.jupyter-widgets') })))"""

# Which explorer a slider belongs to: its size and the alt texts of its live figures.
EXPLORER_OF = """
(slider) => {
  const box = slider.closest('.lessons-explorer');
  if (!box) { return null; }
  const r = box.getBoundingClientRect();
  return { height: r.height, width: r.width,
           alts: [...box.querySelectorAll('.lessons-figure-root')].map((el) => el.dataset.alt || '') };
}
"""


def _cells_with_tag(path: Path, tag: str) -> set[int]:
    nb = nbformat.read(path, as_version=4)
    return {i for i, cell in enumerate(nb.cells) if tag in cell.get("metadata", {}).get("tags", [])}


def _explorer_cells(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum(1 for c in nb.cells if c.cell_type == "code" and re.search(r"\w+Explorer\(", c.source))


def test_there_are_notebooks_to_check():
    if not lesson_notebooks():
        message = f"no notebooks in {SOURCE_DIR}: the browser tests have nothing to run"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_run_all_runs_every_cell_without_an_error(lesson):
    """Run All reached the last cell, and no output is an error (but in cells tagged raises-exception)."""
    allowed = _cells_with_tag(lesson.source, "raises-exception")
    problems = [f"cell {out['cell']}: error output:\n{out['text']}" for out in lesson.page.evaluate(OUTPUTS)
                if out["mime"] == "application/vnd.jupyter.stderr" and ERROR_TEXT.search(out["text"])
                and out["cell"] not in allowed]
    unrun = [i for i, p in enumerate(lesson.prompts) if not re.fullmatch(r"\[\d+\]:?", p)]
    if unrun:
        problems.append(f"Run All stopped early: {len(unrun)} of {len(lesson.prompts)} code cells did not "
                        f"run (the first is code cell #{unrun[0]}); see the error above")
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_every_widget_renders(lesson):
    """No "Error displaying widget", no widget shown as plain text, none left "Loading widget..."."""
    problems = []
    for out in lesson.page.evaluate(OUTPUTS):
        where, text = f"cell {out['cell']}", out["text"]
        if WIDGET_ERROR_TEXTS.search(text):
            problems.append(f"{where}: widget failed to render: {text[:200]!r}")
        elif out["mime"] in ("text/plain", None) and WIDGET_AS_TEXT.search(text) and not out["widget"]:
            problems.append(f"{where}: a widget is shown as plain text (not rendered): {text[:200]!r}")
        elif "Loading widget..." in text:
            problems.append(f"{where}: widget still 'Loading widget...'")
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_every_explorer_is_live_and_every_figure_drew(lesson):
    """Each explorer cell shows a live explorer (not its still), and each live figure has drawn."""
    problems, page = [], lesson.page
    expected, found = _explorer_cells(lesson.source), page.locator(".lessons-explorer").count()
    if found != expected:
        problems.append(f"{expected} explorer cell(s) but {found} live explorer(s) rendered "
                        f"(a still picture instead of the widget means the widget did not run)")
    undrawn = page.evaluate("() => [...document.querySelectorAll('.lessons-figure-root')]"
                            ".filter((el) => !el.dataset.frame).length")
    if undrawn:
        problems.append(f"{undrawn} live figure(s) never drew")
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_every_explorer_fits_the_window(lesson):
    """Every explorer, scrolled to the top of the notebook's view, fits in the 1280 × 800 window: its
    height in the notebook's area, its canvases and controls within the window's width (a screenshot of
    each explorer is saved)."""
    page, sizes, problems = lesson.page, [], []
    explorers = page.locator(".lessons-explorer")
    for i in range(explorers.count()):
        box = explorers.nth(i)
        box.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        at_rest(page)
        r = box.evaluate("""(el) => {
            const b = el.getBoundingClientRect();
            const area = (el.closest('.jp-WindowedPanel-outer') || el.closest('.jp-NotebookPanel')
                          || document.body).getBoundingClientRect();
            const right = Math.max(...[...el.querySelectorAll('canvas, .widget-slider, .widget-checkbox')]
                                     .map((c) => c.getBoundingClientRect().right));
            return { top: b.top, bottom: b.bottom, height: b.height, width: b.width, right,
                     areaH: area.height, viewH: window.innerHeight, viewW: window.innerWidth };
        }""")
        sizes.append({k: round(v) for k, v in r.items()})
        if r["height"] > r["areaH"]:
            problems.append(f"explorer #{i} is {r['height']:.0f} px tall: it does not fit in the notebook's "
                            f"{r['areaH']:.0f} px of the {r['viewW']} × {r['viewH']} window")
        if r["right"] > r["viewW"]:
            problems.append(f"explorer #{i} reaches x = {r['right']:.0f} px, beyond the {r['viewW']} px "
                            "window")
        box.screenshot(path=str(SCREENSHOTS / f"{lesson.shot}-explorer{i}.png"))
    lesson.run["explorer_sizes"] = sizes
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_every_slider_key_redraws_its_explorer_and_is_said(lesson):
    """Every d_k / seq_len slider, PRESSES_PER_SLIDER arrow keys: each redraws the explorer with the new
    value, the handle's value text, the live region and the figures' names follow, and the explorer keeps its
    height. Each move's key press → picture (ms) and websocket kB are recorded."""
    page, results, problems = lesson.page, [], []
    page.evaluate(PROBE)
    sliders = explorer_sliders(page)
    if not sliders.count():
        pytest.skip(f"{lesson.source.stem} has no d_k or seq_len slider")
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        cls = next(c for c in SLIDER_CLASSES if c in (slider.get_attribute("class") or "").split())
        label = f"slider #{i} ({cls})"
        handle = slider.locator(".noUi-handle").first
        if handle.count() == 0:
            problems.append(f"{label}: no slider handle (.noUi-handle) rendered")
            continue
        explorer = slider.evaluate(EXPLORER_OF)
        if explorer is None:
            problems.append(f"{label}: not inside a .lessons-explorer")
            continue
        handle.scroll_into_view_if_needed()
        box = slider.locator("xpath=ancestor::*[contains(@class, 'lessons-explorer')][1]")
        moves = []
        for n in range(PRESSES_PER_SLIDER):
            key, before = step_key(handle), spoken(box)
            try:
                moves.append(press_and_wait(page, slider, handle, key, lesson.wire))
            except Exception as exc:
                problems.append(f"{label}: press {n + 1} ({key}): the figures did not show the new value "
                                f"within {REDRAW_S} s ({type(exc).__name__})")
                break
            wanted = f"{cls.rsplit('-', 1)[1]} = {moves[-1]['value']}"
            if handle.get_attribute("aria-valuetext") != wanted:
                problems.append(f"{label}: the handle's value text is "
                                f"{handle.get_attribute('aria-valuetext')!r}, not {wanted!r}")
            started = time.perf_counter()
            moves[-1]["said"], more = names_follow(page, box, wanted, before, f"{label}, press {n + 1}")
            moves[-1]["said_wait_s"] = round(time.perf_counter() - started, 2)
            problems += more
        after = slider.evaluate(EXPLORER_OF)
        if abs(after["height"] - explorer["height"]) > 1:
            problems.append(f"{label}: the explorer's height changed from {explorer['height']:.0f} to "
                            f"{after['height']:.0f} px when the slider moved (the page jumps)")
        results.append({"slider": cls, "index": i, "moves": moves})
    lesson.run["sliders"] = results
    lesson.assert_no_problems(problems)


# Sent from inside the page on a fixed clock (playwright's own round trips would space the presses further
# apart than a learner's held-down arrow key): n presses, `gap` ms apart; resolves with the time it took.
DRAG = """(h, [n, gap]) => new Promise((done) => {
  const t0 = performance.now();
  let k = 0;
  const press = () => {
    for (const type of ['keydown', 'keyup']) {
      h.dispatchEvent(new KeyboardEvent(type, { key: 'ArrowRight', code: 'ArrowRight', keyCode: 39,
                                                bubbles: true }));
    }
    k += 1;  // press k is due at t0 + k·gap; a late one goes at once
    if (k < n) { setTimeout(press, Math.max(0, t0 + k * gap - performance.now())); }
    else { done(performance.now() - t0); }
  };
  press();
})"""


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_a_fast_drag_ends_on_its_final_value(lesson):
    """DRAG_PRESSES arrow presses within one second on a seq_len slider: the final value's picture is drawn,
    and once every move is answered every figure of the explorer shows it (no stale redraw left behind). When
    the final picture came after the last press is recorded, not asserted."""
    page, wire = lesson.page, lesson.wire
    seq = page.locator(".lessons-slider-seq_len")
    if seq.count() == 0:
        pytest.skip(f"{lesson.source.stem} has no seq_len slider")
    handle = seq.first.locator(".noUi-handle").first
    handle.focus()
    answered = wire.answered
    page.keyboard.press("Home")
    wire.wait_answered(answered, REDRAW_S)
    at_rest(page)
    page.evaluate(PROBE)
    n_draws, answered = page.evaluate("() => window.__lessonsProbe.draws.length"), wire.answered
    pressing_ms = handle.evaluate(DRAG, [DRAG_PRESSES, DRAG_SPACING_MS])
    last_key = page.evaluate("() => window.__lessonsProbe.keyAt")
    final = str(int(float(handle.get_attribute("aria-valuenow"))))
    wanted = f"seq_len = {final}"
    page.wait_for_function(
        "([n, w]) => window.__lessonsProbe.draws.slice(n).some((d) => d.alt.includes(w))",
        arg=[n_draws, wanted], timeout=REDRAW_S * 1000)
    wire.wait_answered(answered, REDRAW_S)   # every move answered: no draw still to come
    at_rest(page)
    draws = page.evaluate(f"() => window.__lessonsProbe.draws.slice({n_draws})")
    final_at = min(d["drawnAt"] for d in draws if wanted in d["alt"])
    values = {m.group(1) for d in draws if (m := re.search(r"seq_len = (\d+)", d["alt"]))}
    lesson.run["drag"] = {"presses": DRAG_PRESSES, "pressing_s": round(pressing_ms / 1000, 2),
                          "final_value": int(final), "distinct_values_drawn": len(values),
                          "final_shown_ms_after_last_press": round(final_at - last_key, 1)}
    box = seq.first.locator("xpath=ancestor::*[contains(@class, 'lessons-explorer')][1]")
    shown = box.locator(".lessons-figure-root").evaluate_all(
        "(roots) => roots.map((r) => r.dataset.alt || '')")
    stale = [alt[:80] for alt in shown if "seq_len = " in alt and wanted not in alt]
    lesson.assert_no_problems([f"drag test: once every move was answered, figures still show an older value "
                               f"than {wanted}: {stale}"] if stale else [])


# Where the pointer's moves went (the element each reached), kept for a failure's message.
POINTED = """
() => {
  window.__lessonsPointed = [];
  document.addEventListener('mousemove', (ev) => {
    const el = ev.target, kind = String(el.className).split(' ')[0];
    window.__lessonsPointed.push(`${el.tagName.toLowerCase()}.${kind} @ ${ev.clientX},${ev.clientY}`);
  }, { capture: true });
}
"""


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_hovering_reads_a_cell_and_a_click_selects_its_row(lesson):
    """Hover a cell of a selectable heatmap: the read-out names it (no kernel round trip); click a row: the
    query slider follows; the save button downloads the figure as a PNG."""
    page = lesson.page
    roots = page.locator(".lessons-explorer .lessons-figure-root[data-axes]")
    query = page.locator(".lessons-explorer .lessons-slider-query .noUi-handle")
    if roots.count() == 0 or query.count() == 0:
        pytest.skip(f"{lesson.source.stem} has no heatmap with a query slider")
    root = roots.nth(min(1, roots.count() - 1))  # the weights heatmap where there is one
    root.scroll_into_view_if_needed()
    at_rest(page)   # the scroll done, the cells it brought in drawn: the pointer lands where it is aimed
    axes = json.loads(root.get_attribute("data-axes"))
    canvas = root.locator("canvas.lessons-figure-overlay").first.bounding_box()
    row = min(3, axes["rows"] - 1)
    x = canvas["x"] + axes["x"] + (0.5 + 1) * axes["w"] / axes["cols"]
    y = canvas["y"] + axes["y"] + (row + 0.5) * axes["h"] / axes["rows"]
    page.evaluate(POINTED)
    page.mouse.move(x, y)
    readout = root.locator(".lessons-figure-readout")
    problems = []
    try:
        page.wait_for_function("(el) => el.textContent.includes('→')", arg=readout.element_handle(),
                               timeout=3000)
    except Exception:
        now = root.locator("canvas.lessons-figure-overlay").first.bounding_box()
        problems.append(f"hovering a heatmap cell ({x:.0f}, {y:.0f}) showed no read-out; the pointer reached "
                        f"{page.evaluate('window.__lessonsPointed')}, the overlay is now at {now}, was at "
                        f"{canvas}")
    text = readout.inner_text()
    page.mouse.click(x, y)
    try:
        page.wait_for_function("([h, r]) => parseFloat(h.getAttribute('aria-valuenow')) === r",
                               arg=[query.first.element_handle(), row], timeout=REDRAW_S * 1000)
    except Exception:
        problems.append(f"clicking row {row} of a heatmap did not move the query slider there (slider at "
                        f"{query.first.get_attribute('aria-valuenow')}; figure shows "
                        f"{root.get_attribute('data-alt')!r})")
    saved = None
    try:
        with page.expect_download(timeout=5000) as download:
            root.locator(".lessons-figure-save").click()
        path = download.value.path()
        head = Path(path).read_bytes()[:8] if path else b""
        saved = {"name": download.value.suggested_filename, "png": head == b"\x89PNG\r\n\x1a\n"}
        if not saved["png"]:
            problems.append("the save button downloaded something that is not a PNG")
    except Exception as exc:
        problems.append(f"the save button downloaded nothing ({type(exc).__name__})")
    lesson.run["hover_click"] = {"hover_readout": text, "clicked_row": row, "saved": saved,
                                 "query_slider": query.first.get_attribute("aria-valuenow")}
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_the_set_up_checks_slider_is_echoed_from_python(lesson):
    """The environment check (lesson 00): moving its slider updates the echo line from Python."""
    page, problems = lesson.page, []
    checks = page.locator(".lessons-widget-check")
    if not checks.count():
        pytest.skip(f"{lesson.source.stem} shows no set-up check")
    for i in range(checks.count()):
        box = checks.nth(i)
        handle = box.locator(".lessons-slider-check .noUi-handle").first
        echo = box.locator(".lessons-widget-echo").first
        if handle.count() == 0 or echo.count() == 0:
            problems.append(f"widget check #{i} has no slider handle or no echo line")
            continue
        handle.scroll_into_view_if_needed()
        press(page, handle, "ArrowRight")
        value = handle.get_attribute("aria-valuenow")
        try:
            page.wait_for_function(
                "([el, v]) => el.textContent.includes('received') && el.textContent.includes(v)",
                arg=[echo.element_handle(), str(int(float(value)))], timeout=REDRAW_S * 1000)
        except Exception:
            problems.append(f"widget check #{i}: the slider moved to {value} but the echo line still says "
                            f"{echo.inner_text()!r}")
    lesson.assert_no_problems(problems)


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_nothing_is_fetched_from_outside_the_server(lesson):
    """Over all the page's checks (this one runs last), no request left the server: the course runs
    offline."""
    lesson.assert_no_problems([f"fetched from outside the server (offline, this fails): {r}"
                               for r in sorted(set(lesson.outside))])
