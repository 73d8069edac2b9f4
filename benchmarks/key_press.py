"""Key press → picture: every explorer's sliders against a bare ipywidgets round trip, in JupyterLab and
Notebook 7, in one run (prints ratios; asserts nothing).

The question: what do the explorers (live figures drawn in the browser, accessible names, live regions, focus
handling) add to what any ipywidgets slider costs? Both sides are measured in the same server and the same
headless Chromium (Debian's, driven by playwright, with the helpers of ``tests/helpers/browser.py``):

- **the bare round trip**: an ``IntSlider`` echoed by a ``Label`` from Python, in a last cell appended to
  lesson 04's page, run to its end (every widget pays for the page it is in: its frames' style, layout and
  compositing grow with the page), pressed ``--bare-presses`` times; its time is the first animation frame
  after the label changed;
- **the explorers**: every lesson with an explorer, opened and run (Run All), every slider of every explorer
  (each control of class ``lessons-slider-<name>`` inside a ``lessons-explorer`` box, whatever its name)
  pressed ``--presses`` times; the time is the frame in which the first live figure painted the new value:
  the first drawing whose alt text names it (``m = 8``) where the explorer's figures name that slider,
  else the first drawing after the key press whose alt text changed (or, where none changed, the first
  drawing after it). The websocket's kB per move are counted, and the table says how many presses each way
  timed.

Every key is pressed as a learner presses it (``timed_press``): the handle takes focus first, the page is at
rest, at least 0.3 s after the last press, the presses sweep eight points of the 16.7 ms animation frame,
the key is held 0.1 s; an explorer's next press waits until its live region has spoken. The verdict is a
ratio of typical times: the mean of the middle 80 % of the presses (a picture appears only at an animation
frame, so a median jumps by a whole frame between runs). docs/measurements.md tells how the method came to
be and what each of its choices changed; docs/accessibility.md gives the current figure.

Run: ``.venv/bin/python benchmarks/key_press.py`` (`make bench` runs it; about ten minutes on a 2-core
machine). ``--front lab``, ``--lessons 04 07``, ``--presses 8``, ``--json out.json``. Needs the test tools
(``requirements-dev.txt``: playwright) and Debian's ``/usr/bin/chromium``; without them it says so and exits.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from tests.helpers import NOTEBOOKS  # noqa: E402
from tests.helpers.a11y import spoken, wait_said  # noqa: E402
from tests.helpers.browser import (  # noqa: E402
    CHROMIUM,
    FRONT_ENDS,
    PROBE,
    REDRAW_S,
    LessonPage,
    chromium_context,
    serving_course,
    step_key,
    timed_press,
)

NAMES = {"lab": "JupyterLab", "notebook7": "Notebook 7"}
BARE_PAGE = "04_step3_scale_softmax.ipynb"
BARE_NOTEBOOK = "echo_round_trip.ipynb"
BARE_SOURCE = """import ipywidgets as widgets
slider = widgets.IntSlider(value=0, min=0, max=100, description="n", continuous_update=True)
echo = widgets.Label("0")
echo.add_class("lessons-echo")
slider.observe(lambda change: setattr(echo, "value", str(change["new"])), names="value")
widgets.VBox([slider, echo])"""

# The echo's time: the first animation frame after Python's answer changed the label (as a live figure's
# time is the frame it painted in), after the key press the probe saw.
ARM_ECHO = """
(echo) => {
  const before = echo.textContent;
  window.__lessonsEcho = null;
  const watch = new MutationObserver(() => {
    if (echo.textContent === before) { return; }
    watch.disconnect();
    requestAnimationFrame(() => { window.__lessonsEcho = performance.now() - window.__lessonsProbe.keyAt; });
  });
  watch.observe(echo, { subtree: true, childList: true, characterData: true });
}
"""


def typical(times: list[float]) -> float:
    """The mean of the middle 80 % of the presses (a tenth, at least one when there are five or more, dropped
    at each end): the delay a learner meets on average, without a first press's or a garbage collection's
    stall. A median of a few presses jumps by a whole animation frame (16.7 ms) when half of them cross a
    frame's boundary."""
    ordered = sorted(times)
    cut = len(ordered) // 10 if len(ordered) >= 10 else (1 if len(ordered) >= 5 else 0)
    return statistics.fmean(ordered[cut:len(ordered) - cut])


def bare_round_trip(context, server, front: str, presses: int) -> list[float]:
    """ms per key press on the bare slider in the last cell of lesson 04's page (run to its end)."""
    nb = nbformat.read(NOTEBOOKS / BARE_PAGE, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(BARE_SOURCE))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source = server.root / "notebooks" / BARE_NOTEBOOK
    nbformat.write(nb, source)
    lesson = LessonPage.open(context, server, source, front)
    try:
        page, wire = lesson.page, lesson.wire
        echo = page.locator(".lessons-echo").first
        echo.wait_for(state="attached", timeout=30_000)
        box = echo.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")   # the last cell's
        handle = box.locator(".noUi-handle").first   # (lesson 04 has sliders of its own above it)
        handle.scroll_into_view_if_needed()
        page.evaluate(PROBE)
        times = []
        for _ in range(presses):
            echo.evaluate(ARM_ECHO)
            answered = wire.answered
            timed_press(page, handle, "ArrowRight")
            page.wait_for_function("() => window.__lessonsEcho !== null", timeout=REDRAW_S * 1000)
            times.append(page.evaluate("() => window.__lessonsEcho"))
            wire.wait_answered(answered, REDRAW_S)   # the rest of the move's messages arrive
        return times
    finally:
        lesson.close()


#: every slider of every explorer on the page, in page order (an explorer's controls carry
#: ``lessons-slider-<name>``, explorers/base.py); the set-up check's test slider is in no explorer
EXPLORER_SLIDERS = ".lessons-explorer [class*='lessons-slider-']"
SLIDER_PREFIX = "lessons-slider-"

# Whether any live figure of the box names the slider in its alt text ("m = 7"): then its new value is
# waited for.
NAMES_SLIDER = """
([box, name]) => [...box.querySelectorAll('[data-alt]')]
  .some((r) => (r.dataset.alt || '').includes(name + ' = '))
"""


def slider_name(slider) -> str:
    """The name of an explorer's slider, from its class ``lessons-slider-<name>``."""
    return next(c for c in (slider.get_attribute("class") or "").split()
                if c.startswith(SLIDER_PREFIX))[len(SLIDER_PREFIX):]


def move_slider(page, slider, handle, box, wire, name: str, names_it: bool) -> dict:
    """One key press on any explorer slider; wait until a live figure drew the move and the kernel answered
    it. Returns the value, ``shown_ms`` (key press → picture), ``kB`` and ``timed`` (how the picture was
    recognised: "named", "changed" or "first")."""
    n_draws = page.evaluate("() => window.__lessonsProbe.draws.length")
    alts_before = box.evaluate("(b) => [...b.querySelectorAll('[data-alt]')].map((r) => r.dataset.alt)")
    bytes_before, answered = wire.received, wire.answered
    said = spoken(box)
    value_before = handle.get_attribute("aria-valuenow")
    timed_press(page, handle, step_key(handle))
    page.wait_for_function("(n) => window.__lessonsProbe.draws.length > n", arg=n_draws,
                           timeout=REDRAW_S * 1000)
    page.wait_for_function("([h, b]) => h.getAttribute('aria-valuenow') !== b",
                           arg=[handle.element_handle(), value_before], timeout=REDRAW_S * 1000)
    readout = slider.locator(".widget-readout")
    value = (readout.first.inner_text() if readout.count() else handle.get_attribute("aria-valuenow")).strip()
    wanted = f"{name} = {value}"
    if names_it:
        page.wait_for_function(
            """([n, w]) => window.__lessonsProbe.draws.slice(n).some((d) => (d.alt || '').includes(w))""",
            arg=[n_draws, wanted], timeout=REDRAW_S * 1000)
    wire.wait_answered(answered, REDRAW_S)   # the rest of the move's messages arrive (kB per move)
    draws = page.evaluate(f"() => window.__lessonsProbe.draws.slice({n_draws})")
    first, timed = next(((d, "named") for d in draws if names_it and wanted in (d["alt"] or "")), (None, ""))
    if first is None:
        changed = (d for d in draws if d["alt"] not in alts_before)
        first, timed = next(((d, "changed") for d in changed), (draws[0], "first"))
    with contextlib.suppress(Exception):   # an explorer whose live region says nothing of this slider
        wait_said(page, box, said, wanted=wanted if names_it else None)
    return {"slider": name, "value": value, "shown_ms": round(first["drawnAt"] - first["keyAt"], 1),
            "kB": round((wire.received - bytes_before) / 1024, 2), "timed": timed}


def explorer_moves(context, server, source: Path, front: str, presses: int) -> list[dict]:
    """Every slider of every explorer of the lesson, ``presses`` key presses each: ms and kB per move."""
    lesson = LessonPage.open(context, server, source, front)
    try:
        page, moves = lesson.page, []
        page.evaluate(PROBE)
        sliders = page.locator(EXPLORER_SLIDERS)
        for i in range(sliders.count()):
            slider = sliders.nth(i)
            handle = slider.locator(".noUi-handle").first
            box = slider.locator("xpath=ancestor::*[contains(@class, 'lessons-explorer')][1]")
            if not handle.count():
                continue
            handle.scroll_into_view_if_needed()
            name = slider_name(slider)
            names_it = bool(page.evaluate(NAMES_SLIDER, [box.element_handle(), name]))
            for _ in range(presses):
                moves.append(move_slider(page, slider, handle, box, lesson.wire, name, names_it))
        return moves
    finally:
        lesson.close()


def has_explorer(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    return any(c.cell_type == "code" and re.search(r"\w+Explorer\(", c.source) for c in nb.cells)


def measure(fronts: list[str], lessons: list[Path], presses: int, bare_presses: int) -> dict:
    from playwright.sync_api import sync_playwright

    results: dict = {}
    with serving_course(NOTEBOOKS) as server, sync_playwright() as pw, chromium_context(pw) as context:
        for front in fronts:
            started = time.perf_counter()
            bare = bare_round_trip(context, server, front, bare_presses)
            by_lesson = {path.stem: explorer_moves(context, server, path, front, presses) for path in lessons}
            results[front] = {"bare_ms": bare, "lessons": by_lesson,
                              "seconds": round(time.perf_counter() - started)}
            print(f"  {NAMES[front]} measured in {results[front]['seconds']} s", flush=True)
    return results


def summary(results: dict) -> dict:
    """Per front end: the bare round trip and, per lesson and over all, the explorers' typical and median
    ms, presses, median kB per move and the ratio of typical times."""
    out = {}
    for front, r in results.items():
        bare = typical(r["bare_ms"])
        rows = {"bare slider (lesson 04's page)": {"presses": len(r["bare_ms"]), "typical_ms": round(bare, 1),
                                                   "median_ms": round(statistics.median(r["bare_ms"]), 1)}}
        every = []
        for stem, moves in [*r["lessons"].items(), ("every lesson", None)]:
            moves = every if moves is None else moves
            shown = [m["shown_ms"] for m in moves]
            if stem != "every lesson":
                every += moves
            if shown:
                rows[stem] = {"presses": len(shown), "typical_ms": round(typical(shown), 1),
                              "median_ms": round(statistics.median(shown), 1),
                              "median_kB": round(statistics.median(m["kB"] for m in moves), 1),
                              "ratio": round(typical(shown) / bare, 2),
                              "sliders": sorted({m["slider"] for m in moves}),
                              "timed": {how: sum(m["timed"] == how for m in moves)
                                        for how in ("named", "changed", "first")}}
        out[front] = rows
    return out


def report(table: dict) -> None:
    """The summary as a table, then one line per front end: the explorers against the bare round trip."""
    print(f"\n{'front end':<11} {'what':<34} {'presses':>7} {'typical ms':>10} {'median ms':>9} "
          f"{'kB/move':>7} {'ratio':>6}")
    for front, rows in table.items():
        for what, row in rows.items():
            kb = f"{row['median_kB']:.1f}" if "median_kB" in row else ""
            ratio = f"{row['ratio']:.2f}" if "ratio" in row else ""
            print(f"{NAMES[front]:<11} {what:<34} {row['presses']:>7} {row['typical_ms']:>10.1f} "
                  f"{row['median_ms']:>9.1f} {kb:>7} {ratio:>6}")
    for front, rows in table.items():
        for what, row in rows.items():
            if "sliders" in row and what != "every lesson":
                timed = ", ".join(f"{n} {how}" for how, n in row["timed"].items() if n)
                print(f"{NAMES[front]}, {what}: sliders {', '.join(row['sliders'])} "
                      f"(pictures timed: {timed})")
    for front, rows in table.items():
        if "every lesson" in rows:
            r, bare = rows["every lesson"], rows["bare slider (lesson 04's page)"]
            print(f"{NAMES[front]}: the explorers {r['typical_ms']:.1f} ms, a bare ipywidgets round trip "
                  f"{bare['typical_ms']:.1f} ms (typical times): {r['ratio']:.2f}×")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--front", choices=FRONT_ENDS, action="append", help="a front end (default: both)")
    parser.add_argument("--lessons", nargs="*", default=[], help="lesson numbers, e.g. 04 07 (default: all)")
    parser.add_argument("--presses", type=int, default=4, help="key presses per explorer slider (4)")
    parser.add_argument("--bare-presses", type=int, default=32, help="key presses on the bare slider (32)")
    parser.add_argument("--json", type=Path, help="also write the presses and the summary here")
    args = parser.parse_args(argv)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print("key_press: needs playwright (requirements-dev.txt; make bench installs it): not measured")
        return 0
    if not CHROMIUM.exists():
        print(f"key_press: needs Debian's Chromium at {CHROMIUM} (apt install chromium): not measured")
        return 0
    lessons = [p for p in sorted(NOTEBOOKS.glob("*.ipynb"))
               if has_explorer(p) and (not args.lessons or p.stem[:2] in args.lessons)]
    fronts = args.front or list(FRONT_ENDS)
    print(f"key press → picture in {', '.join(NAMES[f] for f in fronts)}, lessons "
          f"{', '.join(p.stem[:2] for p in lessons)}: {args.presses} presses per slider, "
          f"{args.bare_presses} on the bare slider", flush=True)
    results = measure(fronts, lessons, args.presses, args.bare_presses)
    table = summary(results)
    report(table)
    without = sorted({stem for r in results.values() for stem, moves in r["lessons"].items() if not moves})
    if without:
        print(f"no explorer slider (opened, not measured): {', '.join(without)}")
    if args.json:
        args.json.write_text(json.dumps({"presses": results, "summary": table}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
