"""Forced colours (Windows' high contrast) and reduced motion over the explorers, in JupyterLab, on the
lessons' pages after Run All (``lesson``, tests/browser/conftest.py), with Chromium's emulation of
``forced-colors: active`` (dark and light) and ``prefers-reduced-motion: reduce``:

- a canvas is never recoloured by the browser, so each live figure paints its page and ink in the system's
  colours itself: its background is the system's Canvas colour and its labels its CanvasText;
- its focus ring (≥ 2 px) keeps ≥ 3:1 against the figure's background, the cell cursor's frame is drawn in
  black and white (one of them ≥ 3:1 against any cell), lesson 07's mask keeps its hatching and a pressed
  mask cell differs from one not pressed by ≥ 3:1;
- under reduced motion nothing in an explorer has a transition or an animation, and a figure paints only
  when something changed.
"""

from __future__ import annotations

import re

import pytest

from lessons_lib.figures.style import INK_DARK, INK_LIGHT, MASK_EDGE, MIN_MARK_CONTRAST, contrast_ratio
from tests.helpers.browser import REDRAW_S, at_rest

FIGURES = ".lessons-explorer canvas.lessons-figure-canvas"

# The colours a canvas painted (device pixels, quantised to the colours of a few rgb triples asked for):
# its corner, whether each asked colour occurs, and the colour its root asks the system for.
PAINTED = """
(canvas, wanted) => {
  const root = canvas.closest('.lessons-figure-root'), cs = getComputedStyle(root);
  const g = canvas.getContext('2d'), { width: w, height: h } = canvas;
  const data = g.getImageData(0, 0, w, h).data;
  const found = wanted.map(() => false);
  for (let i = 0; i < data.length; i += 4) {
    wanted.forEach(([r, gg, b], k) => {
      const near = Math.abs(data[i] - r) < 3 && Math.abs(data[i + 1] - gg) < 3
        && Math.abs(data[i + 2] - b) < 3;
      if (near) found[k] = true;
    });
  }
  return { corner: [data[0], data[1], data[2]], found, ink: cs.color, page: cs.backgroundColor,
           frame: Number(root.dataset.frame || 0) };
}
"""

FOCUS_RING = """(el) => { const cs = getComputedStyle(el);
  return { style: cs.outlineStyle, width: parseFloat(cs.outlineWidth) || 0, color: cs.outlineColor }; }"""

# Every element of the explorers that moves by itself: a transition or an animation.
MOVING = """
() => [...document.querySelectorAll('.lessons-explorer, .lessons-explorer *, .lessons-quiz *')]
  .map((el) => [el, getComputedStyle(el)])
  .filter(([, cs]) => cs.animationName !== 'none'
    || cs.transitionDuration.split(',').some((d) => parseFloat(d) > 0))
  .map(([el]) => `${el.tagName.toLowerCase()}.${String(el.className).split(' ').slice(0, 2).join('.')}`)
"""


def _rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(float(x)) for x in re.findall(r"[\d.]+", css)[:3])
    return r, g, b


def _hex(colour: str) -> list[int]:
    return [int(colour[i:i + 2], 16) for i in (1, 3, 5)]


def _repainted(page, canvas, before: int) -> None:
    page.wait_for_function("([c, n]) => Number(c.closest('.lessons-figure-root').dataset.frame) > n",
                           arg=[canvas.element_handle(), before], timeout=REDRAW_S * 1000)


#: a mask cell's background when pressed and when not (its class set, then cleared, then as it was)
PRESSED_AND_NOT = """(el) => {
  const had = el.classList.contains('mod-active'), read = () => getComputedStyle(el).backgroundColor;
  el.classList.add('mod-active'); const on = read();
  el.classList.remove('mod-active'); const off = read();
  if (had) el.classList.add('mod-active');
  return [on, off];
}"""


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_explorers_stay_visible_in_forced_colours_and_still_under_reduced_motion(lesson):
    page, problems = lesson.page, []
    canvases = page.locator(FIGURES)
    if not canvases.count():
        pytest.skip(f"{lesson.source.stem} has no explorer")
    shown = [canvases.nth(i) for i in range(min(canvases.count(), 4))]
    masked = page.locator(".lessons-explorer .lessons-toggle-cell").count() > 0
    try:
        for scheme in ("dark", "light"):
            frames = [c.evaluate(PAINTED, [])["frame"] for c in shown]
            page.emulate_media(forced_colors="active", color_scheme=scheme)
            for k, canvas in enumerate(shown):
                what = f"{scheme} forced colours, figure #{k}"
                canvas.scroll_into_view_if_needed()
                try:
                    _repainted(page, canvas, frames[k])
                except Exception:
                    problems.append(f"{what}: not painted again when the colours were forced "
                                    f"(frame {canvas.evaluate(PAINTED, [])['frame']}, was {frames[k]})")
                    continue
                got = canvas.evaluate(PAINTED, [])
                ink, back = _rgb(got["ink"]), _rgb(got["page"])
                got = canvas.evaluate(PAINTED, [list(ink), _hex(MASK_EDGE)])
                if contrast_ratio(tuple(got["corner"]), back) > 1.05:
                    problems.append(f"{what}: its background {got['corner']} is not the system's {back}")
                if not got["found"][0]:
                    problems.append(f"{what}: no label drawn in the system's text colour {ink}")
                hatch = [_hex(MASK_EDGE)]
                if masked and k == 0 and not any(
                        c.evaluate(PAINTED, hatch)["found"][0] for c in shown):
                    problems.append(f"{what}: the mask's hatching ({MASK_EDGE}) is gone")
                page.keyboard.press("Shift")
                canvas.focus()
                ring = canvas.evaluate(FOCUS_RING)
                ratio = contrast_ratio(_rgb(ring["color"]), back)
                if ring["style"] in ("none", "hidden") or ring["width"] < 2 or ratio < MIN_MARK_CONTRAST:
                    problems.append(f"{what}: focus ring {ring} on {back}: {ratio:.2f}:1")
                page.keyboard.press("ArrowRight")
                overlay = canvas.locator("xpath=following-sibling::canvas[1]")
                ends = [_hex(INK_DARK), _hex(INK_LIGHT)]
                frame = overlay.evaluate(PAINTED, ends)
                if not all(frame["found"]):
                    problems.append(f"{what}: the cell cursor's black-and-white frame is not drawn")
                page.keyboard.press("Escape")
            cells = page.locator(".lessons-explorer .lessons-toggle-cell")
            if cells.count():
                # one cell's background pressed and not pressed, read with its class set and cleared (the
                # keys before may have left every cell in one state); the learner's mask is left as it was
                on, off = cells.first.evaluate(PRESSED_AND_NOT)
                ratio = contrast_ratio(_rgb(on), _rgb(off))
                if ratio < MIN_MARK_CONTRAST:
                    problems.append(f"{scheme} forced colours: a pressed mask cell and one not pressed "
                                    f"differ by {ratio:.2f}:1 only")
        page.emulate_media(forced_colors="none", color_scheme="light", reduced_motion="reduce")
        moving = page.evaluate(MOVING)
        if moving:
            problems.append(f"under reduced motion these still move: {sorted(set(moving))[:8]}")
        # the colours just changed back: each figure repaints once, a frame after the page hears of it (a
        # CI run caught that repaint when the frames were read at once); then ten frames with nothing new
        at_rest(page)
        frames = [c.evaluate(PAINTED, [])["frame"] for c in shown]
        page.evaluate("""() => new Promise((go) => {
          const step = (k) => (k ? requestAnimationFrame(() => step(k - 1)) : go());
          step(10);
        })""")
        again = [c.evaluate(PAINTED, [])["frame"] for c in shown]
        if again != frames:
            problems.append(f"figures painted with nothing changed: frames {frames} → {again}")
    finally:
        page.emulate_media(forced_colors="null", color_scheme="null", reduced_motion="null")
    lesson.assert_no_problems(problems)
