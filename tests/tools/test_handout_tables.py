"""A printed handout keeps each still's numbers: the collapsed table under the picture, outside its
``<figure>`` (whose ``<figcaption>`` stays its last child, as HTML asks)."""

from __future__ import annotations

import re

import nbformat

from tests.helpers import NOTEBOOKS, load_tool

export_html = load_tool("export_html")


def test_a_handout_has_each_stills_numbers_beside_its_figure():
    nb = nbformat.read(NOTEBOOKS / "04_step3_scale_softmax.ipynb", as_version=4)
    page = export_html.handout(nb, "Step 3")
    stills = re.findall(r'<div class="still">(.*?)</div>(?=<div class="still">|</div>)', page, re.S)
    assert len(stills) == len(export_html.stills(nb)) > 0
    for still in stills:
        figure = re.search(r"<figure>(.*?)</figure>", still, re.S).group(1)
        assert figure.startswith("<img") and figure.endswith("</figcaption>"), "figcaption last in figure"
        assert '<details class="lessons-still-numbers"><summary>Numbers as a table</summary>' in still
        assert "<caption>" in still and 'scope="row"' in still
