"""``make html``: every lesson exports to a static page with all its figures, each with alt text."""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FALLBACK = "figure without a description"


class Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    subprocess.run([sys.executable, str(ROOT / "tools/export_html.py"), "--out", str(out)], check=True)
    return out


def png_outputs(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_lesson_page_has_its_figures_with_alt_text(pages, notebook):
    page = pages / f"{notebook.stem}.html"
    assert page.exists(), f"make html wrote no page for {notebook.name}"
    parser = Images()
    parser.feed(page.read_text(encoding="utf-8"))
    figures = [img for img in parser.images if img.get("src", "").startswith("data:image/png")]
    assert len(figures) == png_outputs(notebook), f"{notebook.name}: figures missing from its page"
    for img in parser.images:
        alt = (img.get("alt") or "").strip()
        assert alt and alt != FALLBACK and len(alt) >= 15, (
            f"{notebook.name}: an image has no real alt text ({alt!r}); figures from lessons_lib carry "
            f"their title and caption as image/png alt metadata")


def test_index_links_every_lesson(pages):
    index = (pages / "index.html").read_text(encoding="utf-8")
    for notebook in NOTEBOOKS:
        assert f'href="{notebook.stem}.html"' in index
