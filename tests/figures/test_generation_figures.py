"""Lesson 12's stills draw what the lab computed: the generated rows and the cache so far (the rest hatched,
as not computed yet, never as zeros), the cache against the context beside the weights, the heads titled with
the key/value head they share, a window's weights and its distance from full attention, the rolling cache's
slots; each names what it shows in its alt text, and refuses what is not the lab's result."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.figures import lesson12_generation as figures


def _texts(fig) -> str:
    labels = [t.get_text() for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    return " ".join(labels + [t.get_text() for t in fig.texts])


def test_a_generation_step_hatches_what_is_not_computed_yet():
    fig = ll.plot_generation_step(ll.trace_generation(), 3)
    text = _texts(fig) + fig.alt_text()
    assert "Step 3: “on” attends" in text and "K cache: 4 of 12 rows" in text and "V cache" in text
    assert "not computed yet" in fig.alt_text() and "Work per step" in text
    recomputed = ll.plot_generation_step(ll.trace_generation(), 3, cached=False)
    assert "all 4 rows again" in _texts(recomputed)
    with pytest.raises(ValueError, match="step must be from 0 to 11"):
        ll.plot_generation_step(ll.trace_generation(), 12)
    with pytest.raises(TypeError, match="trace_generation"):
        ll.plot_generation_step(np.zeros((3, 3)), 1)


@pytest.mark.parametrize("preset", list(ll.PRESETS))
def test_the_memory_plot_marks_the_setting_beside_the_weights(preset):
    memory = ll.kv_cache_memory(preset)
    fig = ll.plot_kv_memory(memory)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(label.startswith("the weights: ") for label in labels)
    assert f"{memory.tokens:,} tokens: {ll.size_text(memory.bytes)}" in labels
    assert (memory.shape.kind == "multi-head") == (not any("one per query head" in lb for lb in labels))
    assert ax.get_xscale() == "log" and preset.split(" ")[0] in ax.get_title()


def test_the_gqa_heads_are_titled_with_their_key_value_head():
    conv = ll.GroupedQueryExplorer(n_kv_heads=2).conversion
    fig = ll.plot_gqa_heads(conv.weights, ll.tokens_of_length(12), 2)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles[:8] == [f"head {h}: KV {h // 4}" for h in range(8)]
    assert "8 query heads sharing 2 key/value heads" in fig.alt_text()


def test_the_window_figure_shows_three_masks_and_the_distance():
    run = ll.window_experiment(48, 8, 2)
    fig = ll.plot_window_run(run)
    text = _texts(fig)
    assert "Full causal attention" in text and "Window of 8 + 2 sinks" in text
    assert "out of reach" in fig.alt_text() and "% of a value's length" in text
    with pytest.raises(TypeError, match="window_experiment"):
        ll.plot_window_run({"weights": {}})


def test_the_ring_buffer_hatches_the_empty_slots_and_writes_the_positions():
    fig = ll.plot_ring_buffer(ll.ring_buffer(10, 4, 2), sinks=2)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["sink 0", "sink 1", "slot 2"]
    written = {t.get_text() for t in ax.texts}
    assert {"0", "9"} <= written and "empty slot" in fig.alt_text()


def test_the_decode_times_plot_names_this_runs_slopes():
    from lessons_lib.lab import generation

    times = generation.DecodeTimes(np.array([256, 512, 1024]), np.array([1e-3, 1.2e-3, 1.5e-3]),
                                   np.array([1e-2, 4e-2, 1.6e-1]), 128, 4)
    fig = figures.plot_decode_times(times)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels[0].startswith("with the cache (∝ context^0.")
    assert labels[1] == "recomputing (∝ context^2.00)"
    assert "this run" in fig.axes[0].get_ylabel()


def test_the_window_explorers_still_is_its_view_with_the_rolling_cache():
    """The saved picture shows what the explorer's text describes: the weights, the rolling cache, the
    distance; the query's row framed in both heatmaps."""
    from lessons_lib.figures.tables import figure_tables

    fig = ll.WindowExplorer(window=8, sinks=2, query=40).still()
    text = _texts(fig)
    assert "Rolling cache: 10 slots" in text and "query 40 framed" in text and "Distance from full" in text
    tables = figure_tables(fig)
    ring = next(t for t in tables if t["caption"].startswith("Rolling cache"))
    row = {r[0]: r[1:] for r in ring["rows"]}                     # the rows around the framed one
    # token 40 sits in slot 2 + (40 − 2) mod 8 = 8
    assert row["40"] == ["0", "1", *(str(p) for p in (34, 35, 36, 37, 38, 39, 40, 33))]
    first = figure_tables(ll.plot_ring_buffer(ll.ring_buffer(3, 8, 2), sinks=2))[0]["rows"][0]
    assert first[1:4] == ["0", "empty slot", "empty slot"]          # step 0: one token held


def test_the_tables_say_what_the_pictures_say_empty_slot_and_not_computed_yet():
    from lessons_lib.figures.tables import figure_tables

    ring = figure_tables(ll.plot_ring_buffer(ll.ring_buffer(4, 2, 1), sinks=1))[0]
    assert "empty slot" in ring["rows"][0] and "masked" not in str(ring["rows"])
    step = figure_tables(ll.plot_generation_step(ll.trace_generation(), 3))
    k_cache = next(t for t in step if t["caption"].startswith("K cache"))
    assert k_cache["rows"][5][1:] == ["not computed yet"] * 4 and "masked" not in str(k_cache["rows"])


def test_the_memory_table_writes_contexts_whole_and_holds_the_weights_line():
    from lessons_lib.figures.tables import figure_tables

    table = figure_tables(ll.plot_kv_memory(ll.kv_cache_memory("Llama-3-8B", 8192)))[0]
    assert table["cols"][-1] == "the weights: 16.1 GB" and {r[-1] for r in table["rows"]} == {"16.1"}
    assert [r[0] for r in table["rows"]][:4] == ["128", "256", "512", "1,024"]
