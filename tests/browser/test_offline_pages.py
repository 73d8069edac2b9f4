"""The static pages (``make html``) in Chromium with the network cut off: every formula typeset and
given to screen readers as MathML (MathJax's assistive MathML), every image loaded, nothing requested
from the network, and axe-core (WCAG 2.1 A and AA) finds no critical or serious violation on any page,
handout or the index (run by ``make test-browser``). MathJax's speech explorer, served as a course
website serves the pages, reads formulas with the rules shipped beside them, never from a CDN.

Each page's axe tally per impact goes to ``test-artifacts/axe-static-pages.json``."""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.a11y import blocking, format_violations, run_axe, tally
from tests.helpers.browser import offline_page as offline_page_of

export_html = load_tool("export_html")
static_notebook = export_html.static_notebook
stills = export_html.stills

pytestmark = pytest.mark.browser
ROOT = REPO
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TALLIES = ROOT / "test-artifacts" / "axe-static-pages.json"

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
  // MathJax's assistive MathML: each formula's MathML beside its picture, which screen readers skip
  const unspoken = scripts.filter(s => {
    const jax = MathJax.Hub.getJaxFor(s);
    const frame = jax && document.getElementById(jax.inputID + '-Frame');
    return !frame || !frame.querySelector('.MJX_Assistive_MathML math')
      || !frame.querySelector(':scope > [aria-hidden="true"]');
  }).map(s => s.textContent);
  const images = [...document.images];
  done({formulas: scripts.length, untypeset, raw, unspoken,
        errors: [...document.querySelectorAll('.MathJax_Error, .merror')].map(e => e.textContent),
        images: images.length,
        broken: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt.slice(0, 60)),
        title: document.title});
}))"""


@pytest.fixture(scope="module")
def pages(exported_site):
    return exported_site


@pytest.fixture(scope="module")
def axe_tallies():
    """Each page's axe tally (failing elements per impact), written when the module's tests are done."""
    tallies: dict[str, dict] = {}
    yield tallies
    TALLIES.parent.mkdir(parents=True, exist_ok=True)
    TALLIES.write_text(json.dumps(tallies, indent=1, sort_keys=True), encoding="utf-8")


def assert_accessible(page, name: str, tallies: dict) -> None:
    """axe-core over the whole page: no critical or serious violation, else each by rule and element."""
    violations = run_axe(page)
    tallies[name] = tally(violations)
    assert not blocking(violations), f"{name}: axe-core found\n{format_violations(blocking(violations))}"


@pytest.fixture(scope="module")
def offline_page(playwright):
    """A page of Debian's Chromium with the network cut off (the session's playwright, conftest.py)."""
    with offline_page_of(playwright) as page:
        yield page


@pytest.mark.parametrize("kind", ["lesson", "handout"])
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_page_shows_every_formula_and_image_offline_and_passes_axe(pages, offline_page, axe_tallies,
                                                                   notebook, kind):
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
    assert not state["unspoken"], f"{name}: formulas without assistive MathML: {state['unspoken'][:5]}"
    assert state["images"] == len(stills(learner)) and not state["broken"], f"{name}: images missing: {state}"
    assert state["title"].startswith(notebook.stem[:2] + " ·"), f"{name}: title {state['title']!r}"
    assert_accessible(page, name, axe_tallies)


def test_index_passes_axe(pages, offline_page, axe_tallies):
    offline_page.goto((pages / "index.html").as_uri(), wait_until="load")
    assert_accessible(offline_page, "index.html", axe_tallies)


@pytest.fixture(scope="module")
def served(pages):
    """The pages served over HTTP on loopback, as a course website (or ``python -m http.server``) serves
    them: MathJax's speech explorer loads its rules with XMLHttpRequest, which a file:// page may not."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(pages)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


# The formula's context menu, Accessibility > Explorer > Activate, as a reader turns it on.
EXPLORER_ON = """() => {
  const explorer = MathJax.Extension['accessibility-menu'].modules.find(m => m.option === 'explorer');
  MathJax.Hub.config.menuSettings.explorer = true;
  explorer.Load();
}"""


def test_speech_explorer_reads_formulas_with_rules_served_beside_the_pages(served, offline_page):
    page = offline_page
    page.blocked.clear()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{served}/03_step2_scores.html", wait_until="load")
    page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.isReady", timeout=60_000)
    page.evaluate("() => new Promise(done => MathJax.Hub.Queue(done))")
    page.evaluate(EXPLORER_ON)
    page.wait_for_function("() => document.querySelectorAll('.MathJax[haslabel]').length > 0", timeout=60_000)
    labels = page.evaluate("() => [...document.querySelectorAll('.MathJax[haslabel]')]"
                           ".map(e => e.getAttribute('aria-label'))")
    rules = [url for url in requested if "/a11y/mathmaps/" in url]
    assert not page.blocked, f"the speech explorer asked the network for {page.blocked}"
    assert rules and all(url.startswith(served + "/mathjax/") for url in rules), requested
    assert any("upper Q" in label and "upper K" in label for label in labels), labels[:5]
