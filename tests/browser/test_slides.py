"""Every lesson presented as slides (jupyterlab-slideshow, inside JupyterLab's own page, where widgets work),
on the lessons' pages after Run All: the notebook toolbar's deck button presents it on a 1280 × 720 screen and
the presenter's key (Space) walks it from its first cell to its last. Every slide must lie within the screen,
no speaker note may show, the speaker notes hold the long prose, the projector preset applies, and on every
slide with an explorer a control moved as a presenter would (an arrow key on a slider, a click on a toggle,
another entry of a drop-down) must redraw it and leave the slide where it is.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.helpers import load_tool
from tests.helpers.browser import (
    PROBE,
    REDRAW_S,
    SCREENSHOTS,
    VIEWPORT,
    WIDGET_ERROR_TEXTS,
    at_rest,
    press,
    step_key,
)

stamp_notebooks = load_tool("stamp_notebooks")

DECK_BUTTON = '.jp-NotebookPanel-toolbar [data-command="deck:toggle"]'   # the notebook toolbar's deck icon
PRESENTING = "body[data-jp-deck-mode='presenting']"

# Where the presentation stands: jupyterlab-slideshow lays out the cells of the present slide (class
# jp-deck-mod-onscreen), shows those reached so far (jp-deck-mod-visible; Space reveals the next one, as
# fragments) and collapses every other cell (visibility hidden, height 0).
DECK_STATE = """
() => {
  const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
  const marked = (cls) => cells.map((c, i) => (c.classList.contains(cls) ? i : -1)).filter((i) => i >= 0);
  const shown = marked('jp-deck-mod-visible'), slide = marked('jp-deck-mod-onscreen');
  return { active: cells.findIndex((c) => c.classList.contains('jp-mod-active')), cells: cells.length,
           shown, slide,
           explorer: shown.some((i) => !!cells[i].querySelector('.lessons-explorer')),
           othersShown: cells.filter((c, i) => !slide.includes(i) && (getComputedStyle(c).visibility
             !== 'hidden' || c.getBoundingClientRect().height > 0)).length };
}
"""

# Where the onscreen cells of the present slide stand in the window (they must lie within it).
SLIDE_BOX = """
() => {
  const cells = [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-deck-mod-onscreen')];
  const boxes = cells.map((c) => c.getBoundingClientRect());
  return { top: Math.min(...boxes.map((b) => b.top)), bottom: Math.max(...boxes.map((b) => b.bottom)),
           window: window.innerHeight,
           first: (cells[0] && cells[0].innerText || '').trim().split('\\n')[0].slice(0, 60) };
}
"""


def _deck(page) -> dict:
    return page.evaluate(DECK_STATE)


def _nudge_and_wait(page, explorer) -> float | None:
    """Move the explorer's first control as a presenter would (an arrow key on a slider handle, else a
    click on a toggle, else the next entry of a drop-down); ms until one of its live figures drew again
    (None: it has no control)."""
    n_draws = page.evaluate("() => window.__lessonsProbe.draws.length")
    handle = explorer.locator(".noUi-handle").first
    # a toggle not pressed yet (clicking the pressed one of a set changes nothing: lesson 11's positions stand
    # at "none", its first, until a check before moves them), else the first
    toggle = explorer.locator(".widget-toggle-button:not(.mod-active)").first
    if not toggle.count():
        toggle = explorer.locator(".widget-toggle-button").first
    dropdown = explorer.locator(".widget-dropdown select").first
    stamp = "() => { window.__lessonsProbe.keyAt = performance.now(); }"
    if handle.count():
        press(page, handle, step_key(handle))
    elif toggle.count():
        page.evaluate(stamp)
        toggle.click()
    elif dropdown.count():
        # an entry that is neither the first (a placeholder such as "examples…") nor what the explorer
        # shows already: choosing that changes nothing, so nothing is drawn
        shown = explorer.locator(".widget-text input").first
        now = shown.input_value() if shown.count() else dropdown.input_value()
        options = dropdown.evaluate("(s) => [...s.options].map((o) => o.value)")  # (text has nbsp)
        page.evaluate(stamp)
        dropdown.select_option(index=next(i for i, o in enumerate(options) if i and o != now))
    else:
        return None
    page.wait_for_function(f"() => window.__lessonsProbe.draws.length > {n_draws}", timeout=REDRAW_S * 1000)
    draw = page.evaluate(f"() => window.__lessonsProbe.draws[{n_draws}]")
    return round(draw["drawnAt"] - draw["keyAt"], 1)


def _metadata_problems(nb, name: str) -> list[str]:
    """What the slide metadata lacks: slides, speaker notes holding the long prose, no hidden cells."""
    types = [c.metadata.get("slideshow", {}).get("slide_type") for c in nb.cells]
    problems = []
    if "-" in types:
        problems.append(f"{name}: cells marked slide_type '-' (jupyterlab-slideshow hides them)")
    long_prose = [c for c in nb.cells if c.cell_type == "markdown" and not c.metadata.get("slideshow")
                  and len(c.source.split()) > stamp_notebooks.NOTES_WORDS]
    if long_prose:
        problems.append(f"{name}: {len(long_prose)} long prose cell(s) on the slides, not in the speaker "
                        "notes (`make notebooks` stamps them)")
    if "notes" not in types:
        problems.append(f"{name}: no speaker notes (the long prose a teacher says goes there)")
    return problems


def _check_slide(lesson, slides: int, notes: set[int], deck: dict, redraws: list) -> list[str]:
    """The slide on screen: within the screen, no speaker note shown, its explorer redraws in place."""
    page, stem = lesson.page, lesson.source.stem
    problems, key = [], tuple(deck["slide"])
    # the kernel has answered every request it began (the slide before's move cannot land in this slide's
    # count of draws) and the slide's layout (figures, typeset formulas) settles
    lesson.wire.wait_quiet(REDRAW_S)
    at_rest(page)
    box = page.evaluate(SLIDE_BOX)
    if box["bottom"] > box["window"] + 2 or box["top"] < -2:
        page.screenshot(path=str(SCREENSHOTS / f"{stem}-slide{slides}-TOO-TALL.png"))
        problems.append(f"{stem}, slide {slides} ('{box['first']}'): spans "
                        f"{box['top']:.0f}..{box['bottom']:.0f} px of a {box['window']} px screen")
    if notes & set(deck["shown"]):
        problems.append(f"{stem}, slide {slides}: a speaker note is on screen")
    if deck["explorer"]:
        explorer = page.locator(".jp-Cell.jp-deck-mod-visible .lessons-explorer").first
        try:
            ms = _nudge_and_wait(page, explorer)
        except Exception as exc:
            problems.append(f"{stem}, slide {slides}: its explorer's control moved but the explorer did not "
                            f"redraw ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
        else:
            if ms is None:
                problems.append(f"{stem}, slide {slides}: its explorer has no control")
            else:
                redraws.append(ms)
        if tuple(_deck(page)["slide"]) != key:
            problems.append(f"{stem}, slide {slides}: moving the explorer's control turned the slide")
    return problems


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_the_lesson_presents_as_slides_on_a_1280_by_720_screen(lesson):
    page, source, stem = lesson.page, lesson.source, lesson.source.stem
    nb = nbformat.read(source, as_version=4)
    types = [c.metadata.get("slideshow", {}).get("slide_type") for c in nb.cells]
    if types.count("slide") < 2:
        lesson.assert_no_problems([f"{source.name} carries no slide metadata (`make notebooks` stamps it)"])
    problems = _metadata_problems(nb, source.name)
    notes = {i for i, t in enumerate(types) if t == "notes"}
    page.set_viewport_size(dict(zip(("width", "height"), stamp_notebooks.SLIDE_SIZE)))
    try:
        # as a teacher starts: the first cell selected (command mode), then the toolbar's deck button; the
        # click on the cell's prompt area, beside its text: a click at the cell's middle followed a link that
        # lay there (lesson 14's to lesson 12, which opened 12 in front, its own deck button hiding 14's)
        page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").first.click()
        page.keyboard.press("Escape")
        page.locator(DECK_BUTTON).first.click()
        page.wait_for_selector(PRESENTING, state="attached", timeout=10_000)
        start = _deck(page)
        if start["active"] != 0 or 0 not in start["shown"] or start["othersShown"]:
            problems.append(f"{source.name}: the presentation starts elsewhere or shows more: {start}")
        size = page.evaluate("() => getComputedStyle(document.querySelector("
                             "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')).getPropertyValue("
                             "'--jp-content-font-size1').trim()")
        if size != f"{stamp_notebooks.PROJECTOR_FONT_PX['--jp-content-font-size1']}px":
            problems.append(f"{source.name}: the projector preset is not applied while presenting ({size!r})")
        page.evaluate(PROBE)
        slides, redraws, measured = 0, [], set()
        for _ in range(len(nb.cells) + 2):
            deck = _deck(page)
            if tuple(deck["slide"]) not in measured:
                measured.add(tuple(deck["slide"]))
                slides += 1
                problems += _check_slide(lesson, slides, notes, deck, redraws)
            if deck["active"] >= deck["cells"] - 1:
                break
            page.keyboard.press("Space")
            page.wait_for_function(f"() => ({DECK_STATE.strip()})().active !== {deck['active']}",
                                   timeout=5000)
        else:
            problems.append(f"{stem}: Space did not reach the last cell")
        page.screenshot(path=str(SCREENSHOTS / f"{stem}-last-slide.png"))
        shown_text = page.locator(".jp-Notebook .jp-Cell.jp-deck-mod-visible").evaluate_all(
            "(cells) => cells.map((c) => c.innerText).join('\\n')")
        if WIDGET_ERROR_TEXTS.search(shown_text):
            problems.append(f"{stem}: a widget failed on the slides")
        lesson.run["slides"] = {"slides": slides, "notes": len(notes), "explorer_redraw_ms": redraws}
    finally:
        page.keyboard.press("Escape")  # the presenter's way out: JupyterLab keeps the deck mode otherwise
        page.wait_for_selector(PRESENTING, state="detached", timeout=10_000)
        page.set_viewport_size(VIEWPORT)
    lesson.assert_no_problems(problems)
