"""Each explorer's still shows what its live view shows on first open, as the lesson's caption lists it.

The still (with the read-out line under it) is what GitHub, nbviewer and an exported page show instead
of the live widget, so the caption beside it must hold for it: the same panels, the selected row framed
where the live view frames it, the read-out line; its title and alt text have no empty or
contradictory part. Explorers are built with the arguments their notebooks use.
"""

from __future__ import annotations

import re

import pytest
from matplotlib.patches import Rectangle

import lessons_lib as ll
from lessons_lib.figures.base import plain_text


def _heatmaps(fig):
    return [ax for ax in fig.axes if ax.images and not hasattr(ax, "_colorbar")]


def _framed_rows(ax) -> set[int]:
    """Rows outlined across the whole width of the heatmap on ``ax``."""
    n_cols = ax.images[0].get_array().shape[1]
    return {round(p.get_y() + 0.5) for p in ax.patches
            if isinstance(p, Rectangle) and not p.get_fill() and p.get_width() >= n_cols - 0.5
            and abs(p.get_height() - 1) < 0.01}


def _texts(fig) -> str:
    parts = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        parts += [ax.get_title(), *(t.get_text() for t in ax.texts)]
    return " ".join(parts)


def _empty_or_contradictory(text: str) -> list[str]:
    problems = re.findall(r"\(\s*\)|\(\s*[,;:]|[,;:]\s*\)|:\s*[.;]|\.\s*\.", text)
    if re.search(r"≈ d_k\s*\n?\s*at d_k = \d+: [\d.]+ \(÷√d_k\)", text):
        problems.append("variance ≈ d_k beside a scaled value")
    return problems


def _check_static_view(explorer):
    still, alt = explorer.static_view()
    line = explorer.readout_line()
    assert line and line in " ".join(_texts(still).split()), "the read-out line is under the still"
    for text in (alt, explorer.text(), _texts(still)):
        assert not _empty_or_contradictory(text), (_empty_or_contradictory(text), text)
    return still


def test_scores_explorer_still_writes_the_scores_as_its_live_view_does():
    still = _check_static_view(ll.ScoresExplorer())
    (ax,) = _heatmaps(still)
    assert "2.47" in _texts(still), "lesson 03's caption quotes 2.47 in row 'sat', column 'cat'"


def test_scale_softmax_still_title_states_each_claim_once_and_frames_the_query():
    explorer = ll.ScaleSoftmaxExplorer()
    still = _check_static_view(explorer)
    text = _texts(still)
    assert "≈ d_k, or ≈ 1 after ÷√d_k" in text and "at d_k = 4 (÷√d_k): 0.997" in text
    (weights,) = _heatmaps(still)
    assert _framed_rows(weights) == {explorer.controls["query"].value}


def test_causal_mask_still_frames_the_query_row_in_each_stage():
    explorer = ll.CausalMaskExplorer(seq_len=4, query=2)
    still = _check_static_view(explorer)
    assert len(_heatmaps(still)) == 3 and all(_framed_rows(ax) == {2} for ax in _heatmaps(still))


def test_pipeline_still_has_four_panels_the_query_row_framed_and_the_readout():
    explorer = ll.PipelineExplorer()
    still = _check_static_view(explorer)
    heatmaps = _heatmaps(still)
    assert len(heatmaps) == 3 and len(still.axes) - len(heatmaps) >= 1 + 3   # bars, and three colorbars
    query = explorer.controls["query"].value
    assert all(_framed_rows(ax) == {query} for ax in heatmaps)
    assert "stays in their range" in plain_text(explorer.readout.value)


def test_head_grid_still_has_thumbnails_a_large_head_and_the_token_framed_everywhere():
    explorer = ll.HeadGridExplorer(n_heads=8, d_model=64, seq_len=12)
    still = _check_static_view(explorer)
    heatmaps = _heatmaps(still)
    assert len(heatmaps) == 8 + 1, "8 thumbnails and head 0 large"
    thumbs, large = heatmaps[:8], heatmaps[8]
    columns = len({round(ax.get_position().x0, 3) for ax in thumbs})
    assert columns == 3, "3 thumbnails per row, as the live view lays 8 heads out"
    assert large.get_position().width > 2 * thumbs[0].get_position().width
    assert "head 0" in large.get_title()
    token = explorer.controls["token"].value
    assert all(_framed_rows(ax) == {token} for ax in heatmaps)
    assert "16,384 parameters" in _texts(still)


def test_custom_mask_still_shows_the_mask_grid_the_weights_and_the_verdict():
    explorer = ll.CustomMaskExplorer(n=6, preset="causal")
    still = _check_static_view(explorer)
    assert len(_heatmaps(still)) == 2, "the ✓/✗ grid of the mask beside the weights"
    assert "This is the causal mask" in _texts(still)
    assert "(6 tokens, 21 of 36 cells allowed)" in explorer.text()


@pytest.fixture(scope="module")
def tiny_run():
    data = ll.make_coref_data(n_train=200, n_test=50, seed=0)
    return ll.train_coref_model(data, steps=3, seed=0)


def test_sentence_explorer_still_shows_the_bars_and_every_head(tiny_run):
    explorer = ll.SentenceExplorer(tiny_run, ll.SENTENCE_A)
    still = _check_static_view(explorer)
    n_layers, n_heads = explorer.reading.layers.shape[:2]
    assert len(_heatmaps(still)) == n_layers * n_heads
    bars = [ax for ax in still.axes if not ax.images and not hasattr(ax, "_colorbar")]
    assert len(bars) == 1 and bars[0].get_title().startswith("Referent head")


def test_scaling_explorer_still_writes_both_tables_under_the_plots():
    table = ll.measure_scaling([128, 256], methods=["naive numpy", "tiled numpy"], repeats=1, progress=False)
    explorer = ll.ScalingExplorer(table, n=256)
    still = _check_static_view(explorer)
    text = " ".join(_texts(still).split())
    assert "scores per head: 65,536" in text, "the count table (lesson 08's caption: scores, MB, FLOPs)"
    assert "naive numpy:" in text and "tiled numpy:" in text, "each method's time and memory"
