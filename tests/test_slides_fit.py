"""Every slide of every lesson fits a 1280 × 720 projector at the projector font (run by make test-browser).

The slides are cut by the metadata tools/stamp_notebooks.py stamps: a heading starts a slide, each
figure or explorer a sub-slide, long prose after a figure goes to the speaker notes. Here each
lesson's cells are laid out in Chromium as JupyterLab lays them out (nbconvert's lab template, with
the stored outputs: an explorer shows its still picture, the size of its live view), at the font
sizes of the projector preset, 1280 px wide; the cells of each slide must add up to no more than
720 px, so nothing scrolls (but for the single code cells of CODE_CELLS_TOO_TALL). A cell's own
presenting styles (a zoom, as jupyterlab-slideshow's design tools store it) apply as they do there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from conftest import require

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from export_html import exporter, static_notebook  # noqa: E402
from stamp_notebooks import FONTS_KEY, NOTES_WORDS, SLIDE_SIZE, projector_css  # noqa: E402

pytestmark = pytest.mark.browser
CHROMIUM = Path("/usr/bin/chromium")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDTH, HEIGHT = SLIDE_SIZE
PRESENTING = "body[data-jp-deck-mode='presenting'] &"
#: Single code cells whose own code and output stand taller than the screen even at the smallest
#: zoom the course allows a cell (75%, set with jupyterlab-slideshow's design tools and stored in
#: the cell's metadata): lesson 10's quiz shows its three questions at once, its equation table is
#: a page long. Slide metadata cannot cut them and nbval compares their source and outputs, so they
#: wait for a change to the lesson's code. Only these may overflow.
CODE_CELLS_TOO_TALL = {
    ("10_review_and_paper", 'll.show("10")'),
    ("10_review_and_paper", "Markdown(ll.equation_table())"),
}


def slides(nb) -> list[list[str]]:
    """Cell ids per slide or sub-slide, as presented (notes and skipped cells are not on screen)."""
    groups: list[list[str]] = []
    for cell in nb.cells:
        kind = cell.metadata.get("slideshow", {}).get("slide_type")
        if kind in ("skip", "notes"):
            continue
        if kind in ("slide", "subslide") or not groups:
            groups.append([])
        groups[-1].append(cell.id)
    return groups


def important(declarations: dict) -> str:
    return "".join(f"{k}: {v} !important;" for k, v in declarations.items())


def cell_styles(nb) -> str:
    """Each cell's own presenting styles (jupyterlab-slideshow's design tools store them, a zoom for a
    cell too tall for the screen, in the cell's jupyterlab-fonts metadata) as CSS for that cell."""
    rules = []
    for cell in nb.cells:
        styles = cell.metadata.get(FONTS_KEY, {}).get("styles", {}).get("", {})
        for selector, decl in styles.items():
            assert selector == PRESENTING, f"cell {cell.id}: unexpected style selector {selector!r}"
            rules.append(f'[id="cell-id={cell.id}"] {{{important(decl)}}}')
    return "".join(rules)


@pytest.fixture(scope="module")
def browser_page():
    require(CHROMIUM.exists(), f"Chromium is not installed at {CHROMIUM} (Debian package 'chromium')")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
                ("file:", "data:")) else route.abort())
            yield context.new_page()
        finally:
            browser.close()


MEASURE = """(groups) => groups.map(ids => {
  const cells = ids.map(id => document.getElementById('cell-id=' + id)).filter(Boolean);
  const height = cells.reduce((sum, c) => {
    const s = getComputedStyle(c);
    return sum + c.getBoundingClientRect().height + parseFloat(s.marginTop) + parseFloat(s.marginBottom);
  }, 0);
  const wide = cells.some(c => c.scrollWidth > c.clientWidth + 2);
  const title = (cells[0] && cells[0].innerText || '').trim().split('\\n')[0].slice(0, 60);
  return {height: Math.round(height), wide, title, found: cells.length, cells: ids.length};
})"""


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_slide_fits_the_projector(browser_page, notebook, tmp_path):
    source = nbformat.read(notebook, as_version=4)
    groups = slides(source)
    assert len(groups) >= 3, f"{notebook.name}: {len(groups)} slides (run `make notebooks` to stamp them)"
    notes = [c for c in source.cells if c.metadata.get("slideshow", {}).get("slide_type") == "notes"]
    long_prose = [c for c in source.cells if c.cell_type == "markdown" and len(c.source.split()) > NOTES_WORDS
                  and not c.metadata.get("slideshow")]
    assert notes or not long_prose, f"{notebook.name}: long prose on the slides but no speaker notes"
    assert all(len(c.source.split()) > NOTES_WORDS for c in notes)
    body, _ = exporter().from_notebook_node(static_notebook(source, teacher=True),
                                            resources={"metadata": {"name": notebook.stem}})
    preset = "".join(f"{sel} {{{important(decl)}}}" for sel, decl in projector_css().items())
    page_css = f"{preset}{cell_styles(source)} body {{margin: 0; padding: 0 16px;}}"
    body = body.replace("</head>", f"<style>{page_css}</style></head>")
    page_file = tmp_path / f"{notebook.stem}.html"
    page_file.write_text(body, encoding="utf-8")
    browser_page.goto(page_file.as_uri(), wait_until="load")
    measured = browser_page.evaluate(MEASURE, groups)
    assert all(m["found"] == m["cells"] for m in measured), f"{notebook.name}: cells missing from the page"
    too_tall = {m["title"]: f"{notebook.stem}, slide {i + 1} of {len(groups)}: '{m['title']}' "
                f"({m['cells']} cell{'s' if m['cells'] != 1 else ''}): {m['height']} px"
                for i, m in enumerate(measured) if m["height"] > HEIGHT}
    waived = {title for lesson, title in CODE_CELLS_TOO_TALL if lesson == notebook.stem}
    print(f"{notebook.stem}: {len(groups)} slides, {len(notes)} notes, {len(groups) - len(too_tall)} fit")
    fits_now = waived - set(too_tall)
    assert not fits_now, f"{notebook.name}: fits now, drop from CODE_CELLS_TOO_TALL: {fits_now}"
    overflow = [line for title, line in too_tall.items() if title not in waived]
    assert not overflow, (f"slides taller than the {WIDTH} × {HEIGHT} projector (split the cell: "
                          "run tools/split_tall_cells.py, then stamp_notebooks.py):\n" + "\n".join(overflow))
