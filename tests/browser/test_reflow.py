"""Reflow (WCAG 2.1 AA, 1.4.10), in JupyterLab on the lessons' pages after Run All: at 640 × 400 CSS px (a
1280 × 800 window at 200 % zoom) no figure is squeezed beside another (rows wrap), nothing scrolls sideways
and no control covers a figure. A screenshot of each explorer at that width is saved.
"""

from __future__ import annotations

import pytest

from tests.helpers.browser import SCREENSHOTS, VIEWPORT, at_rest

REFLOW_VIEWPORT = {"width": 640, "height": 400}   # 200 % zoom of a 1280 × 800 window, in CSS px

REFLOW_STATE = """
(box) => {
  const area = box.getBoundingClientRect();
  const canvases = [...box.querySelectorAll('canvas.lessons-figure-canvas')]
    .map((c) => c.getBoundingClientRect());
  const controls = [...box.querySelectorAll('button, input, select, .noUi-handle, .widget-readout')]
    .map((c) => c.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
  const overlaps = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
    && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  return {
    width: area.width, scroll: box.scrollWidth - box.clientWidth, right: area.right, view: innerWidth,
    figures: [...box.querySelectorAll('.lessons-figure')].map((el) => ({
      want: Number(el.dataset.width || 0), got: el.getBoundingClientRect().width,
      room: el.parentElement.getBoundingClientRect().width })),
    covered: controls.filter((r) => canvases.some((c) => overlaps(r, c))).length,
  };
}
"""


@pytest.mark.browser
@pytest.mark.parametrize("front", ["lab"])
def test_explorers_reflow_at_200_percent_zoom(lesson):
    """Each figure as wide as it asks or as its row allows, no sideways scroll, no control over a figure."""
    page, stem, problems, sizes = lesson.page, lesson.source.stem, [], []
    explorers = page.locator(".lessons-explorer")
    if not explorers.count():
        pytest.skip(f"{stem} has no explorer")
    page.set_viewport_size(REFLOW_VIEWPORT)
    try:
        for i in range(explorers.count()):
            box = explorers.nth(i)
            box.evaluate("(el) => el.scrollIntoView({block: 'start'})")
            at_rest(page)   # the figures repaint at their new width (ResizeObserver, a frame)
            r = box.evaluate(REFLOW_STATE)
            sizes.append({"width": round(r["width"]), "figures": [round(f["got"]) for f in r["figures"]]})
            page.screenshot(path=str(SCREENSHOTS / f"{stem}-explorer{i}-640px.png"))
            for k, f in enumerate(r["figures"]):
                if f["want"] and f["got"] < 0.95 * min(f["want"], f["room"]):
                    problems.append(f"explorer #{i}, figure #{k} squeezed to {f['got']:.0f} px at 640 px "
                                    f"(asks {f['want']}, its row has {f['room']:.0f})")
            if r["scroll"] > 1 or r["right"] > r["view"] + 1:
                problems.append(f"explorer #{i} scrolls sideways at 640 px ({r['scroll']:.0f} px)")
            if r["covered"]:
                problems.append(f"explorer #{i}: {r['covered']} control(s) cover a figure at 640 px")
    finally:
        page.set_viewport_size(VIEWPORT)
    lesson.run["reflow_640"] = sizes
    lesson.assert_no_problems(problems)
