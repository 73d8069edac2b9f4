"""The static pages (``make html``) in Chromium with the network cut off: every formula typeset,
every image loaded, nothing requested from the network (run by ``make test-browser``)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from conftest import load_tool, require

export_html = load_tool("export_html")
static_notebook = export_html.static_notebook

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# What the page holds once MathJax has finished its first pass (MathJax 2: each formula becomes a
# <script type="math/tex"> whose rendered frame sits beside it).
STATE = """() => new Promise(done => MathJax.Hub.Queue(() => {
  const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
  const untypeset = scripts.filter(s => {
    const jax = MathJax.Hub.getJaxFor(s);
    const frame = jax && document.getElementById(jax.inputID + '-Frame');
    return !frame || frame.getBoundingClientRect().width === 0;
  }).map(s => s.textContent);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('pre, code, script, style, .jp-OutputArea-output')) continue;
    const m = n.textContent.match(/\\$[^$\\s][^$]*\\$/);
    if (m) raw.push(m[0]);
  }
  const images = [...document.images];
  done({formulas: scripts.length, untypeset, raw,
        errors: [...document.querySelectorAll('.MathJax_Error, .merror')].map(e => e.textContent),
        images: images.length,
        broken: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt.slice(0, 60)),
        title: document.title});
}))"""


@pytest.fixture(scope="module")
def pages(exported_site):
    return exported_site


@pytest.fixture(scope="module")
def offline_page():
    require(CHROMIUM.exists(), f"Chromium is not installed at {CHROMIUM} (Debian package 'chromium')")
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []

    def cut_network(route):
        url = route.request.url
        if url.startswith(("file:", "data:", "http://127.0.0.1", "http://localhost")):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.route("**/*", cut_network)
            page = context.new_page()
            page.blocked = blocked
            yield page
        finally:
            browser.close()


@pytest.mark.parametrize("kind", ["lesson", "handout"])
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_page_shows_every_formula_and_image_offline(pages, offline_page, notebook, kind):
    page = offline_page
    name = f"{notebook.stem}.html" if kind == "lesson" else f"{notebook.stem}.handout.html"
    page.blocked.clear()
    page.goto((pages / name).as_uri(), wait_until="load")
    page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.isReady", timeout=60_000)
    state = page.evaluate(STATE)
    assert not page.blocked, f"{name} asked the network for {page.blocked}"
    learner = static_notebook(nbformat.read(notebook, as_version=4))
    source = ("\n".join(c.source for c in learner.cells if c.cell_type == "markdown") if kind == "lesson"
              else (pages / name).read_text(encoding="utf-8").split("<body>", 1)[1])
    if re.search(r"\$[^$\s][^$]*\$", source):
        assert state["formulas"] > 0, f"{name}: no formula found (MathJax did not run?)"
    assert not state["untypeset"] and not state["errors"], f"{name}: formulas not typeset: {state}"
    assert not state["raw"], f"{name}: raw TeX left on the page: {state['raw'][:5]}"
    figures = sum("image/png" in o.get("data", {}) for c in learner.cells for o in c.get("outputs", []))
    assert state["images"] == figures and not state["broken"], f"{name}: images missing: {state}"
    assert state["title"].startswith(notebook.stem[:2] + " ·"), f"{name}: title {state['title']!r}"
