"""The stills of lesson 08: the fitted slopes, the tiles FlashAttention visits in order, the block sizes."""

from __future__ import annotations

import pytest

import lessons_lib as ll
from lessons_lib.core import flash
from lessons_lib.figures import lesson08_cost_and_flashattention as cost_plots
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


# ------------------------------------------------------------------ stills
def test_scaling_figure_shows_the_fitted_slopes():
    fig = cost_plots.plot_scaling(_table(methods=("naive numpy", "tiled numpy", "torch SDPA")), mark_n=512)
    time_ax, memory_ax = fig.axes
    time_labels = [t.get_text() for t in time_ax.get_legend().get_texts()]
    memory_labels = [t.get_text() for t in memory_ax.get_legend().get_texts()]
    assert "naive numpy: slope 2.00" in time_labels and "tiled numpy: slope 2.00" in time_labels
    assert "naive numpy: slope 2.00" in memory_labels and "tiled numpy: slope 0.60" in memory_labels
    assert not any(label.startswith("torch SDPA") for label in memory_labels)   # memory not measured
    assert time_ax.get_xscale() == "log" and memory_ax.get_ylabel() == "peak extra memory (MB)"
    with pytest.raises(TypeError, match="CostTable"):
        cost_plots.plot_scaling([])


@pytest.mark.parametrize("L,S,b,causal,visited", [(12, 16, 4, True, 6), (12, 16, 4, False, 12),
                                                   (10, 10, 3, True, 10), (5, 9, 8, False, 2)])
def test_tile_order_matches_the_tiles_flash_attention_computes(monkeypatch, L, S, b, causal, visited):
    order = cost_plots.tile_order(L, S, b, causal)
    assert (order >= 0).sum() == visited and sorted(order[order >= 0]) == list(range(visited))
    seen = []
    from lessons_lib._checks import check_scores_finite as real

    monkeypatch.setattr(flash, "check_scores_finite", lambda tile: (seen.append(tile.shape), real(tile)))
    ll.flash_attention(*ll.random_qkv(L, 4, seed=0)[:1], *ll.random_qkv(S, 4, seed=1)[1:],
                       causal=causal, block_size=b)
    assert len(seen) == visited


def test_tile_grid_and_steps_figures():
    fig = cost_plots.plot_tile_grid(12, 16, 4, causal=True, follow_block=1)
    assert "6 of 12 tiles computed" in fig.axes[0].get_xlabel() and "skipped" in fig.axes[0].get_xlabel()
    with pytest.raises(ValueError, match="follow_block"):
        cost_plots.plot_tile_grid(12, 16, 4, follow_block=3)
    q, k, v = ll.random_qkv(12, 4, seed=3)
    steps = flash.flash_attention_steps(q, k, v, block_size=4, rows=range(4, 8))
    fig = cost_plots.plot_tile_steps(steps, upto=2, row_labels=[f"q{i}" for i in range(4, 8)])
    assert len(fig.axes) == 3 and [t.get_text() for t in fig.axes[0].get_legend().get_texts()][0] == "q4"
    with pytest.raises(TypeError, match="flash_attention_steps"):
        cost_plots.plot_tile_steps([1, 2])
    with pytest.raises(ValueError, match="feature"):
        cost_plots.plot_tile_steps(steps, feature=9)


def test_block_size_figure():
    result = cost.measure_block_sizes(256, (32, 64, 128), d=8, repeats=1, progress=False)
    fig = cost_plots.plot_block_sizes(result)
    assert len(fig.axes) == 2 and "256" in fig._suptitle.get_text()
    with pytest.raises(TypeError, match="measure_block_sizes"):
        cost_plots.plot_block_sizes(_table())
