"""Each sentence a lesson says about an explorer or a figure is what that explorer's own code computes at the
settings the sentence names: one test per claim, which reads the sentence in the notebook and computes it.
"""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest

import lessons_lib as ll
from tests.helpers import NOTEBOOKS


def _prose(slug: str) -> str:
    cells = nbformat.read(NOTEBOOKS / f"{slug}.ipynb", as_version=4).cells
    return " ".join(" ".join(c.source for c in cells if c.cell_type == "markdown").split())


def _says(slug: str, sentence: str) -> None:
    assert " ".join(sentence.split()) in _prose(slug), f"{slug} no longer says {sentence!r}: update this test"


# ------------------------------------------------------------------------------ lesson 03: the colour scale
def _scores_bound(d_k: int) -> float:
    explorer = ll.ScoresExplorer()
    explorer.controls["d_k"].value = d_k
    return explorer._view()[3]


def test_lesson_03_the_colour_scale_grows_overall_but_not_at_every_step():
    """Issue 40, item 3: it does not "keep widening" (7 tokens, the explorer's first view)."""
    _says("03_step2_scores", "from $d_k = 4$ to $d_k = 256$ it goes from ±5 to ±30")
    _says("03_step2_scores", "from $d_k = 8$ to $16$ it shrinks from ±6 to ±4, and from $32$ to $64$ from "
                             "±20 to ±15")
    bounds = {d_k: _scores_bound(d_k) for d_k in (4, 8, 16, 32, 64, 256)}
    assert (bounds[4], bounds[256]) == (5, 30)
    assert (bounds[8], bounds[16]) == (6, 4) and (bounds[32], bounds[64]) == (20, 15)


# ------------------------------------------------------------------------------ lesson 04: unscaled rows
def _weights(d_k: int, scaled: bool) -> np.ndarray:
    return ll.ScaleSoftmaxExplorer().compute(d_k, scaled, 1.0)["weights"]


def test_lesson_04_unscaled_rows_go_one_hot_but_not_in_a_straight_line():
    """Issue 40, item 4: the bars of "sat" do not simply "collapse onto one key" as d_k grows."""
    _says("04_step3_scale_softmax", "at `d_k` = 128 all seven rows put 95% or more of their weight on one "
                                    "key, at 512 four of them")
    _says("04_step3_scale_softmax", "their top bar is 0.93 at `d_k` = 64, 1.00 at 128, 0.61 at 256 and 0.71 "
                                    "at 512")
    confident = {d_k: int((_weights(d_k, False).max(axis=1) >= 0.95).sum()) for d_k in (128, 512)}
    assert confident == {128: 7, 512: 4}
    sat = ll.tokenize(ll.SENTENCES["cat"]).index("sat")
    tops = [f"{_weights(d_k, False)[sat].max():.2f}" for d_k in (64, 128, 256, 512)]
    assert tops == ["0.93", "1.00", "0.61", "0.71"]


def test_lesson_04_the_explorers_caption_counts_its_rows():
    _says("04_step3_scale_softmax", "Unscaled at $d_k = 512$, four of the seven rows put 95% or more of "
                                    "their weight on one key; scaled, no row gives any key more than 0.58.")
    assert int((_weights(512, False).max(axis=1) >= 0.95).sum()) == 4
    assert f"{_weights(512, True).max():.2f}" == "0.58"


# ------------------------------------------------------------------------------ lesson 05: the read-out
def test_lesson_05_the_pipeline_read_out_gives_the_range_of_the_row_it_names():
    """Issue 40, item 5: "Row 2 … output from −0.66 to 1.12" mixed row 2 with the row of "on"."""
    explorer = ll.PipelineExplorer()
    qi = explorer.controls["query"].value
    out = explorer._view()[4]["output"]
    readout = explorer.readout.value
    row = re.search(r"this row from (\S+) to (\S+) \(", readout)
    every = re.search(r"\(all \d+ rows: (\S+) to (\S+?)\)\.$", readout)
    assert row and every, readout
    assert [float(x) for x in row.groups()] == pytest.approx([out[qi].min(), out[qi].max()], abs=0.005)
    assert [float(x) for x in every.groups()] == pytest.approx([out.min(), out.max()], abs=0.005)
    assert f"Output row {qi} (“sat”)" in readout


# ---------------------------------------------------------------------------- lesson 05: the hull's alt text
def test_lesson_05_the_convex_hull_figure_names_every_point_in_its_alt_text():
    """Issue 40, item 10: its alt text named two of its six points (the first two labels it met)."""
    story = ll.tokens_of_length(6)
    q, k, v = ll.random_qkv(seq_len=6, d_k=4, d_v=2, seed=16)
    out, w = ll.scaled_dot_product_attention(q, k, v)
    alt = ll.plot_convex_combination(v, out, story, weights=w, query="the").alt_text()
    assert all(f"“{token}” {weight:.2f}" in alt for token, weight in zip(story, w[story.index("the")]))
    assert "corners are “The”, “cat”, “sat”, “on”, “mat”; “the” lies inside it" in alt
    _says("05_step4_weighted_values", "five of the dots are its corners; \"the\" lies inside")
