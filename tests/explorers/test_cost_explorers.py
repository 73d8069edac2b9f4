"""Lesson 08's live explorers: the scaling explorer counts, predicts, measures and guards; the tile explorer
follows its slider."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.explorers import lesson08_cost_and_flashattention as cost_explorers
from lessons_lib.figures.base import read_still
from lessons_lib.lab import cost


def _table(sizes=(256, 512, 1024), methods=("naive numpy", "tiled numpy")):
    """A CostTable of exact power laws (no timing involved)."""
    laws = {"naive numpy": (1e-8, 2, 4.0, 2), "tiled numpy": (2e-8, 2, 3000.0, 0.6),
            "torch SDPA": (5e-9, 2, None, 1)}
    rows = []
    for n in sizes:
        for m in methods:
            f, p, g, q = laws[m]
            rows.append(cost.Measurement(m, n, 64, "float32", f * n**p, None if g is None else int(g * n**q),
                                         3 * n * 64 * 4, "tracemalloc"))
    return cost.CostTable(rows)


# ------------------------------------------------------------------ live explorers
def test_scaling_explorer_counts_and_predicts_on_a_slider_move():
    explorer = cost_explorers.ScalingExplorer(_table(), n=1024)
    assert "lessons-slider-seq_len" in explorer.slider._dom_classes
    assert "<td>1,048,576</td>" in explorer.readout.value and "(predicted)" not in explorer.methods_box.value
    explorer.slider.value = 4096                           # not measured: the fitted line predicts
    assert "<td>16,777,216</td>" in explorer.readout.value and "(predicted)" in explorer.methods_box.value
    assert explorer.time_plot.marker["x"] == 4096 and "seq_len = 4096" in explorer.time_plot.alt
    naive_ms = 1e-8 * 4096**2 * 1e3
    assert f"{naive_ms:,.1f} ms (predicted)" in explorer.methods_box.value
    labels = [s["label"] for s in explorer.memory_plot.series if s["label"]]
    assert labels == ["naive numpy: slope 2.00", "tiled numpy: slope 0.60"]


def test_scaling_explorer_measures_and_shows_the_guard(monkeypatch):
    table = cost.measure_scaling([128], ["naive numpy", "tiled numpy"], d=8, repeats=1, progress=False,
                                 block_size=64)
    explorer = cost_explorers.ScalingExplorer(table, n=384)
    explorer.measure()                                     # measures N = 256 and 384, shows their markers
    assert sorted({m.n for m in explorer.table.measurements}) == [128, 256, 384]
    assert "(predicted)" not in explorer.methods_box.value and explorer.error_box.value == ""
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "10")   # naive at 2048 (16 MB of scores) no longer fits
    explorer.slider.value = 2048
    explorer.measure()
    assert "SizeLimitError" in explorer.error_box.value
    assert "naive numpy attention at N = 2,048" in explorer.error_box.value
    assert [m.method for m in explorer.table.measurements if m.n == 1024] == ["naive numpy", "tiled numpy"]
    assert [m.method for m in explorer.table.measurements if m.n == 2048] == ["tiled numpy"]
    assert {m.block_size for m in explorer.table.measurements if m.block_size} == {64}  # as in the table


def test_scaling_explorer_refuses_bad_arguments():
    with pytest.raises(TypeError, match="CostTable"):
        cost_explorers.ScalingExplorer(None)
    with pytest.raises(ValueError, match="n must be a multiple of 128"):
        cost_explorers.ScalingExplorer(_table(), n=1000)


def test_tile_explorer_t_follows_the_slider():
    q, k, v = ll.random_qkv(12, 4, seed=5)
    explorer_t = cost_explorers.TileExplorer(q, k, v, block_size=4, rows=range(4, 8), tile=1)
    assert explorer_t.slider.max == 3 and "lessons-slider-tile" in explorer_t.slider._dom_classes
    assert "Tile 1 of 3" in explorer_t.readout.value and "-inf → " in explorer_t.readout.value
    explorer_t.slider.value = 3
    assert "Tile 3 of 3" in explorer_t.readout.value and all(p.marker["x"] == 3 for p in explorer_t.plots)
    assert "tile = 3 of 3" in explorer_t.plots[0].alt
    exact = ll.scaled_dot_product_attention(q, k, v)[0][4:8, 0]
    np.testing.assert_allclose(explorer_t.steps[-1].output[:, 0], exact, atol=1e-14)
    bundle = explorer_t._repr_mimebundle_()
    assert "TileExplorer" in bundle["text/plain"]
    assert "tile = 3 of 3" in read_still(bundle)[1]   # the still's alt text names the tile shown
    with pytest.raises(ValueError, match="tile must be from 1 to 3"):
        cost_explorers.TileExplorer(q, k, v, block_size=4, tile=4)
    with pytest.raises(ValueError, match="feature"):
        cost_explorers.TileExplorer(q, k, v, feature=7)
