"""Reflow and text spacing (WCAG 2.1 AA, 1.4.10 and 1.4.12) on the lessons' pages after Run All.

- At 640 × 400 CSS px (a 1280 × 800 window at 200 % zoom), in JupyterLab: no figure is squeezed beside another
  (rows wrap), nothing scrolls sideways and no control covers a figure. A screenshot of each explorer.
- At 320 CSS px wide, every lesson in JupyterLab and Notebook 7: a 1280 × 1024 window at 400 % zoom is a
  320 × 256 CSS px viewport, which is what the page's layout sees (media queries, wrapping, the room a figure
  gets): the viewport is set to that (``set_viewport_size`` on the page the other checks share), not a device
  scale factor, which changes only how finely a CSS pixel is rastered, not the layout. What zoom does to the
  size on screen is counted where it matters, the figures' labels: a live figure redraws at the width it is
  given with its fonts at their size in CSS px (its canvas is never scaled by CSS); a still picture is scaled
  down to the column, and at 400 % its labels stay at least as large on screen as at 100 % when it is shown
  at no less than a quarter of its width in the 1280 px window. No text of the course's content (markdown
  cells and outputs) is past the window or in a box that scrolls sideways (formulas, code, data tables and
  pictures may scroll, as WCAG allows), and every control (slider handle, button, checkbox, figure, fold) is
  in the window when scrolled to and is what a click at its centre hits. JupyterLab's own chrome (menus, side
  bars, toolbar) is JupyterLab's, not the course's: out of scope here, and left out of what is measured (at
  320 px JupyterLab keeps its side bars, so a cell gets about 240 px there and 320 px in Notebook 7).
- WCAG 1.4.12's text spacing (line height 1.5, paragraphs 2 em apart, letters 0.12 em, words 0.16 em),
  applied by a stylesheet, at the 1280 px window: no text of a box that cuts what overflows it is cut, and no
  label, button or read-out overlaps another.

Each lesson's result is printed as one line (and kept in ``test-artifacts/latency.json``, ``reflow_320``).

The probe that measures 320 px and text spacing is itself tested on a page of planted faults, two of them laid
out late (a frame after their cell or control is scrolled to), which it must find, and reach, once the layout
has settled.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.browser import FRONT_ENDS, SCREENSHOTS, VIEWPORT, at_rest

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


# ------------------------------------------------------------------ 320 CSS px and text spacing

ZOOM_400 = {"width": 320, "height": 256}   # a 1280 × 1024 window at 400 % zoom, in CSS px
ZOOM = 4

# WCAG 1.4.12's text spacing, as its understanding document's bookmarklet applies it
TEXT_SPACING = """
* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; }
p { margin-bottom: 2em !important; }
"""

CONTENT_PROBE = r"""
// What a lesson's page shows of the course's content (markdown cells and outputs; JupyterLab's own chrome and
// the code cells' editors left out): each cell is scrolled into view first and measured once its layout is
// settled (JupyterLab lays out off-screen cells late). Called with `spacing`: false measures reflow
// (WCAG 1.4.10), true the text spacing (1.4.12) the test's stylesheet applies.
async (spacing) => {
  const frames = (n) => new Promise((done) => {
    const step = (k) => (k ? requestAnimationFrame(() => step(k - 1)) : done());
    step(n);
  });
  // scrolled into view; measured where a reader who never scrolls sideways sees it (scrollIntoView may scroll
  // a box sideways, and the page around the notebook), unless `keep`: a control in a box that scrolls
  // sideways (lesson 07's grid of cells) is reached by scrolling that box. A cell is brought to the top of
  // the notebook, a control (`keep`) to its middle, where a learner scrolls it: flush with the top edge, a
  // control of lesson 12 lay under JupyterLab's toolbar at 320 px
  const settle = async (el, keep = false) => {
    let last = null;
    for (let i = 0; i < 8; i += 1) {
      el.scrollIntoView({ block: keep ? 'center' : 'start', inline: 'nearest' });
      const cell = el.closest('.jp-Cell') || el;
      const around = [];
      for (let a = scroller; a; a = a.parentElement) around.push(a);
      for (const box of [...around, ...(keep ? [] : [cell, ...cell.querySelectorAll('*')])]) {
        if (box.scrollLeft) box.scrollLeft = 0;
      }
      // the page around the notebook never scrolls under its toolbar: only the notebook's own scroller does
      for (const box of around.slice(1)) if (box.scrollTop) box.scrollTop = 0;
      if (scrollY) scrollTo(scrollX, 0);
      await frames(2);
      view = scroller.getBoundingClientRect();
      const top = Math.round(el.getBoundingClientRect().top);
      if (top === last) return;
      last = top;
    }
  };
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const scroller = panel.querySelector('.jp-WindowedPanel-outer') || panel.querySelector('.jp-Notebook');
  // the window was just resized: the notebook's frame (its header, menu and toolbar) is laid out again a
  // frame or more later (Notebook 7's header is 42 px lower at 320 px than at 1280 px), so the notebook's
  // box is read once it holds still, and again after every scroll
  const edges = () => JSON.stringify(scroller.getBoundingClientRect());
  for (let i = 0, was = null; i < 20 && edges() !== was; i += 1) { was = edges(); await frames(2); }
  let view = scroller.getBoundingClientRect();
  // and nothing of JupyterLab's chrome hangs over the notebook (zoomed_to_400 has waited for its toolbar to
  // fold; 5 s at most, after which what still covers the notebook is reported as such)
  const uncovered = () => [0.1, 0.5, 0.9].every((x) => [0.25, 0.5, 0.75].every((y) => {
    const hit = document.elementFromPoint(view.left + x * view.width, view.top + y * view.height);
    return !hit || scroller.contains(hit);
  }));
  for (const start = performance.now(); !uncovered() && performance.now() - start < 5000;) {
    await frames(2);
    view = scroller.getBoundingClientRect();
  }
  // content laid out in two dimensions, which may scroll sideways (WCAG 1.4.10's exception): code, data
  // tables, formulas, pictures
  const TWO_D = 'pre, code, table, .MathJax_Display, mjx-container, .MathJax, .MathJax_Preview, canvas, img, '
    + 'svg, .lessons-two-d';   // the last: a grid of cells the course lays out in two dimensions (lesson 07)
  const LABELS = 'button, label, .widget-label, .widget-readout, .lessons-figure-readout, summary';
  // not drawn, or JupyterLab's own (a heading's anchor link, shown on hover)
  const hidden = (el) => !!el.closest('.lessons-sr-only, .lessons-live-region, .jp-InternalAnchorLink');
  const shown = (r) => r.width > 0 && r.height > 0;
  const say = (el) => (el.innerText || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ')
    .slice(0, 60);
  const tag = (el) => el.tagName.toLowerCase() + [...el.classList].slice(0, 2).map((c) => `.${c}`).join('');
  const out = { view: Math.round(view.width), sideways: [], scrolls: [], wide: [], controls: 0,
                unreachable: [], figures: [], stills: [], clipped: [], overlaps: [], cells: 0 };
  // the notebook itself scrolls sideways: the widest of what the course put in it, and by how much
  out.notebook = 0;
  const areas = (cell) => [...cell.querySelectorAll('.jp-RenderedMarkdown, .jp-OutputArea-output')];
  for (const cell of panel.querySelectorAll('.jp-Notebook .jp-Cell')) {
    const content = areas(cell).filter((c) => shown(c.getBoundingClientRect()));
    if (!content.length) continue;
    out.cells += 1;
    await settle(cell);
    for (const area of content) {
      for (const img of area.querySelectorAll('img')) {
        const r = img.getBoundingClientRect();
        if (shown(r) && img.naturalWidth) {
          out.stills.push({ natural: img.naturalWidth, shown: Math.round(r.width),
                            right: Math.round(r.right - view.right) });
        }
      }
      const all = [area, ...area.querySelectorAll('*')].filter((el) => !el.closest(TWO_D) && !hidden(el));
      if (!spacing) {
        // each line of text (outside formulas, code, tables and pictures) where it is drawn: in the window,
        // and not past the edge of a box that scrolls sideways
        const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
        const range = document.createRange();
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const parent = node.parentElement;
          if (!node.textContent.trim() || !parent || parent.closest(TWO_D) || hidden(parent)) continue;
          range.selectNodeContents(node);
          const rects = [...range.getClientRects()].filter(shown);
          if (!rects.length) continue;
          const right = Math.max(...rects.map((r) => r.right)), left = Math.min(...rects.map((r) => r.left));
          if (right > view.right + 1 || left < view.left - 1) {
            const past = Math.round(Math.max(right - view.right, view.left - left));
            out.sideways.push(`${tag(parent)} ${past} px past the window: ${say(parent)}`);
            continue;
          }
          for (let box = parent; box && box !== area.parentElement; box = box.parentElement) {
            const s = getComputedStyle(box);
            if (!['auto', 'scroll'].includes(s.overflowX) || box.scrollWidth <= box.clientWidth + 1) continue;
            const edge = box.getBoundingClientRect().left + box.clientLeft + box.clientWidth + 1;
            if (right > edge || box.scrollLeft > 0) {
              out.scrolls.push(`${tag(box)} scrolls its text sideways: ${say(parent)}`);
              break;
            }
          }
        }
        for (const el of all) {   // what scrolls sideways for a formula, code, a table or a picture (allowed)
          const s = getComputedStyle(el);
          if (['auto', 'scroll'].includes(s.overflowX) && el.scrollWidth > el.clientWidth + 1) {
            out.wide.push(`${tag(el)}: ${say(el).slice(0, 40)}`);
          }
        }
        for (const fig of area.querySelectorAll('.lessons-figure')) {
          const canvas = fig.querySelector('canvas.lessons-figure-canvas');
          if (!canvas) continue;
          const r = canvas.getBoundingClientRect();
          out.figures.push({ drawn: parseFloat(canvas.style.width), shown: Math.round(r.width),
                             right: Math.round(r.right - view.right) });
        }
      } else {
        for (const el of all) {
          const s = getComputedStyle(el);
          const cuts = ['hidden', 'clip'].includes(s.overflowX) || ['hidden', 'clip'].includes(s.overflowY)
            || s.textOverflow === 'ellipsis';
          if (!cuts || !shown(el.getBoundingClientRect()) || !el.innerText.trim()) continue;
          const dx = el.scrollWidth - el.clientWidth, dy = el.scrollHeight - el.clientHeight;
          if (dx > 1 || dy > 1) out.clipped.push(`${tag(el)} cuts ${Math.max(dx, dy)} px: ${say(el)}`);
        }
        const labels = [...area.querySelectorAll(LABELS)].filter((el) => !hidden(el) && el.innerText.trim())
          .map((el) => ({ el, r: el.getBoundingClientRect() })).filter(({ r }) => shown(r));
        for (let i = 0; i < labels.length; i += 1) {
          for (let j = i + 1; j < labels.length; j += 1) {
            const [a, b] = [labels[i], labels[j]];
            if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
            const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
            const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
            if (x > 1 && y > 1) {
              out.overlaps.push(`${tag(a.el)} "${say(a.el)}" over ${tag(b.el)} "${say(b.el)}"`);
            }
          }
        }
      }
    }
    if (!spacing) out.notebook = Math.max(out.notebook, scroller.scrollWidth - scroller.clientWidth);
    if (spacing) continue;
    // every control reachable: in the window once scrolled to, and what a click at its centre hits is it
    const controls = content.flatMap((c) => [...c.querySelectorAll(
      'button, input, select, textarea, .noUi-handle, canvas[tabindex], summary')])
      .filter((el) => !hidden(el) && shown(el.getBoundingClientRect()));
    out.controls += controls.length;
    for (const el of controls) {
      await settle(el, true);
      // a click on what is in view of it (its middle, or a quarter from its top or bottom: in JupyterLab at
      // 256 px high a tall figure's middle may be under the status bar, which a learner scrolls past)
      const r = el.getBoundingClientRect();
      const top = Math.max(r.top, view.top), bottom = Math.min(r.bottom, view.bottom);
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const group = el.closest('.noUi-target, .lessons-figure-stage, label, .widget-checkbox') || el;
      const hits = [0.5, 0.25, 0.75].map((f) => document.elementFromPoint(
        x, Math.min(Math.max(top + f * (bottom - top), 0), innerHeight - 1)));
      const hit = hits.find((h) => h && (group.contains(h) || h.contains(el))) || hits[0];
      const inside = r.left >= view.left - 1 && r.right <= view.right + 1;
      if (!inside || !hit || !(group.contains(hit) || hit.contains(el))) {
        const where = inside ? '' : ' (past the window)';
        out.unreachable.push(`${tag(el)}${where} under ${hit ? tag(hit) : 'nothing'}: ${say(el)}`);
      }
    }
  }
  return out;
}
"""


def reflow_problems(r: dict, wide: dict) -> list[str]:
    """What fails reflow at 320 px in what :data:`CONTENT_PROBE` measured there (``r``) and in the 1280 px
    window (``wide``: the size each still has at 100 % zoom)."""
    problems = [f"the notebook scrolls {r['notebook']} px sideways"] if r["notebook"] > 1 else []
    problems += [f"text past the window: {s}" for s in r["sideways"]]
    problems += [f"text scrolled sideways: {s}" for s in r["scrolls"]]
    problems += [f"control out of reach: {s}" for s in r["unreachable"]]
    for k, f in enumerate(r["figures"]):
        if f["right"] > 1 or abs(f["shown"] - f["drawn"]) > 1:
            problems.append(f"live figure #{k} drawn {f['drawn']:.0f} px wide, shown {f['shown']} px "
                            f"({f['right']} px past the window's edge): scaled, not redrawn")
    if len(r["stills"]) != len(wide["stills"]):
        problems.append(f"{len(r['stills'])} stills at 320 px, {len(wide['stills'])} in the 1280 px window")
    for k, (s, w) in enumerate(zip(r["stills"], wide["stills"])):
        if ZOOM * s["shown"] < w["shown"]:   # past the window it scrolls in its output (a picture may)
            problems.append(f"still #{k} shown {s['shown']} px wide at 320 px, {w['shown']} px at 1280: at "
                            f"400 % its labels are {ZOOM * s['shown'] / w['shown']:.2f} of their 100 % size")
    return problems


def reflow_line(r: dict, wide: dict) -> str:
    stills = [s["shown"] / w["shown"] for s, w in zip(r["stills"], wide["stills"])]
    return (f"{r['cells']} cells, {len(r['sideways']) + len(r['scrolls'])} text sideways, "
            f"{r['controls'] - len(r['unreachable'])}/{r['controls']} controls reached, "
            f"{len(r['figures'])} live figures redrawn at "
            f"{min((f['shown'] for f in r['figures']), default='-')} px, "
            f"{len(stills)} stills at ≥ {min(stills, default=1) * ZOOM:.2f}× their size on screen, "
            f"{len(r['wide'])} wide formulas/code boxes scroll")


# The lessons whose content does not reflow yet at 320 px, (front end, lesson) -> what still fails there. Each
# is an expected failure, strict: once it passes, the test fails until its entry is taken off this list.
NOT_YET: dict[tuple[str, str], str] = {
}


# The notebook's toolbar holds all its items on one row, none hanging below it over the notebook
TOOLBAR_FOLDED = r"""
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const toolbar = panel && panel.querySelector(':scope > .jp-Toolbar');
  if (!toolbar) return true;
  const bottom = toolbar.getBoundingClientRect().bottom;
  return [...toolbar.children].map((item) => item.getBoundingClientRect())
    .every((r) => !(r.width > 0 && r.height > 0) || r.bottom <= bottom + 1);
}
"""
TOOLBAR_FOLDS_MS = 5_000


def zoomed_to_400(page) -> int:
    """The page at 320 CSS px wide, once the notebook's toolbar has folded into its menu what no longer fits.

    JupyterLab's responsive toolbar refits itself after a resize in an asynchronous step behind a leading-edge
    throttle, and a resize that comes while a refit is still running is dropped: after the 640 px check's
    quick 640 → 1280 → 320, the toolbar can keep its 1280 px layout at 320 px, its buttons wrapped onto rows
    that hang over the notebook (CI run of 2026-12-03: lessons 02 and 05 found every control "under" them),
    until the window's size changes again. That is JupyterLab's chrome, which this module leaves out of
    scope, and what a learner does then is what is done here: the window is made 8 px wider, the refit for
    that size waited for, and set back to 320 px (three times at most). What still covers the notebook after
    that, CONTENT_PROBE reports. Returns how many times the size was changed again.
    """
    wider = {**ZOOM_400, "width": ZOOM_400["width"] + 8}
    page.set_viewport_size(ZOOM_400)
    for nudges in range(4):
        if nudges:
            page.set_viewport_size(wider)
            toolbar_folds(page)
            page.set_viewport_size(ZOOM_400)
        if toolbar_folds(page):
            return nudges
    return nudges


def toolbar_folds(page) -> bool:
    """Whether the notebook's toolbar fits on its row within TOOLBAR_FOLDS_MS."""
    try:
        page.wait_for_function(TOOLBAR_FOLDED, timeout=TOOLBAR_FOLDS_MS, polling="raf")
    except PlaywrightTimeout:
        return False
    return True


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_every_lesson_reflows_at_320_css_px_and_keeps_its_text_with_wcag_spacing(lesson, capsys, request):
    """400 % zoom: no text sideways, every control reached, figures redrawn or legible; then 1.4.12's text
    spacing: nothing cut, no label over another (this module's docstring says how each is measured)."""
    known = NOT_YET.get((lesson.front, lesson.source.stem))
    if known:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"not reflowing yet at 320 px: {known}"))
    page = lesson.page
    try:
        nudges = zoomed_to_400(page)
        reflow = page.evaluate(CONTENT_PROBE, False)
        page.screenshot(path=str(SCREENSHOTS / f"{lesson.shot}-320px.png"))
    finally:
        page.set_viewport_size(VIEWPORT)
    style = page.add_style_tag(content=TEXT_SPACING)
    try:
        spaced = page.evaluate(CONTENT_PROBE, True)
    finally:
        style.evaluate("(el) => el.remove()")
        at_rest(page)
    problems = reflow_problems(reflow, spaced)
    problems += [f"text spacing: {s}" for s in spaced["clipped"]]
    problems += [f"text spacing: overlap of {s}" for s in spaced["overlaps"]]
    line = (f"{lesson.name}: 320 px: {reflow_line(reflow, spaced)}; "
            f"text spacing: {len(spaced['clipped'])} cut, "
            f"{len(spaced['overlaps'])} overlaps; toolbar refitted {nudges}× more; "
            f"{'PASS' if not problems else f'{len(problems)} problems'}")
    lesson.run["reflow_320"] = {"line": line, "reflow": reflow, "spacing": spaced}
    with capsys.disabled():
        print("\n" + line)
    lesson.assert_no_problems(problems)


# ------------------------------------------------------------------ the probe, on a page of known faults

# A notebook as CONTENT_PROBE sees one (JupyterLab's classes), with one fault of each kind it reports, and two
# that come late, as in a notebook whose cells are laid out after they are scrolled to: a frame after its
# cell is scrolled to the top, a line that never wraps is added to it (a probe that did not wait would miss
# it), and once a control has been scrolled to the middle of the notebook (where the probe brings a
# control), the cell above it grows by 600 px a frame later and pushes it out of the 256 px window (a probe
# that did not scroll to it again would find it out of reach, where a learner, who does, reaches it).
PLANTED = """<!doctype html><html lang="en"><head><title>planted faults</title><style>
body { margin: 0; font: 14px/1.2 sans-serif; }
.jp-NotebookPanel { height: 100vh; display: flex; flex-direction: column; }
.jp-WindowedPanel-outer { flex: 1; overflow: auto; }
.jp-Cell { padding: 4px; }
</style></head><body>
<div class="jp-NotebookPanel"><div class="jp-WindowedPanel-outer"><div class="jp-Notebook">
  <div class="jp-Cell"><div class="jp-RenderedMarkdown"><p>A paragraph that wraps, as it should, in a
    window of any width at all.</p></div></div>
  <div class="jp-Cell"><div class="jp-RenderedMarkdown"><p><span style="white-space: nowrap">planted:
    a line that never wraps and so runs past the narrow window</span></p></div></div>
  <div class="jp-Cell"><div class="jp-RenderedMarkdown" style="position: relative"><button>covered</button>
    <div style="position: absolute; inset: 0; background: #fff"></div></div></div>
  <div class="jp-Cell"><div class="jp-RenderedMarkdown"><div style="overflow: hidden; height: 1.3em">cut
    by its box once lines are 1.5 apart</div></div></div>
  <div class="jp-Cell" id="lazy"><div class="jp-RenderedMarkdown"><p id="words">Its last words come a
    frame after it is scrolled to.</p></div></div>
  <div class="jp-Cell"><div class="jp-RenderedMarkdown"><div id="grows"></div>
    <button id="late">laid out late</button></div></div>
  <div style="height: 800px"></div>
</div></div></div>
<script>
  const scroller = document.querySelector('.jp-WindowedPanel-outer');
  // `then`, a frame after a scroll brings `el` to `where` in the notebook (its top to the top, its middle to
  // the middle), once
  const after = (el, where, then) => {
    const there = () => {
      const box = scroller.getBoundingClientRect(), r = el.getBoundingClientRect();
      return where === 'top' ? Math.abs(r.top - box.top) < 2
        : Math.abs((r.top + r.bottom) / 2 - (box.top + box.bottom) / 2) < 2;
    };
    const listen = () => {
      if (!there()) return;
      scroller.removeEventListener('scroll', listen);
      requestAnimationFrame(then);
    };
    scroller.addEventListener('scroll', listen);
  };
  after(document.getElementById('lazy'), 'top', () => {
    const line = document.createElement('span');
    line.style.whiteSpace = 'nowrap';
    line.textContent = ' rendered late: a line that never wraps either';
    document.getElementById('words').append(line);
  });
  after(document.getElementById('late'), 'middle', () => {
    document.getElementById('grows').style.height = '600px';
  });
</script></body></html>"""


@pytest.mark.browser
def test_the_reflow_probe_finds_each_planted_fault_and_reaches_a_control_laid_out_late(browser_context):
    page = browser_context.new_page()
    try:
        page.set_viewport_size(ZOOM_400)
        page.set_content(PLANTED)
        reflow = page.evaluate(CONTENT_PROBE, False)
        page.set_viewport_size(VIEWPORT)
        page.add_style_tag(content=TEXT_SPACING)
        spaced = page.evaluate(CONTENT_PROBE, True)
        grown = page.evaluate("() => document.getElementById('grows').style.height")
    finally:
        page.close()
    assert grown == "600px", "the late layout never came: the page no longer tests the probe's wait"
    assert reflow["cells"] == 6 and reflow["controls"] == 2, reflow
    found = [line.split(": ", 1)[1][:13] for line in reflow["sideways"]]
    assert found == ["planted: a li", "rendered late"], reflow["sideways"]
    assert reflow["unreachable"] == ["button under div: covered"], reflow["unreachable"]
    assert len(spaced["clipped"]) == 1 and "cut by its box" in spaced["clipped"][0], spaced["clipped"]
    assert not reflow["scrolls"] and not spaced["overlaps"], (reflow, spaced)
