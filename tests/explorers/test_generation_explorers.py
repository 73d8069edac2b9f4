"""Lesson 12's explorers, driven headlessly: each shows what the library computes for its settings, opens on
the lesson's data, keeps its controls consistent (the key/value heads divide the query heads, a preset sets
every slider), names every control, says what changed, refuses values outside its controls and stays usable
after a refused value, and the calculator's read-out is the formula with the numbers the learner reads."""

from __future__ import annotations

import re

import ipywidgets
import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib._checks import VALUE_BYTES
from lessons_lib.explorers import lesson12_generation as explorers

ALL = [ll.KVCacheExplorer, ll.MemoryExplorer, ll.GroupedQueryExplorer, ll.WindowExplorer]


def _no_error(ex):
    assert ex.error_box.value == "" and ex.last_error is None, ex.error_box.value


# ------------------------------------------------------------------ the cache, step by step
def test_the_cache_explorer_opens_on_step_5_and_shows_the_trace():
    ex = ll.KVCacheExplorer()
    _no_error(ex)
    trace = ll.trace_generation()
    np.testing.assert_array_equal(ex.figures["weights"].matrix, trace.weights)
    assert ex.figures["weights"].highlight_row == 5 and ex.figures["cache"].row_labels[5] == "mat"
    assert (ex.figures["weights"].hidden[6:]).all() and not ex.figures["weights"].hidden[5, :6].any()
    assert "6 dot products (the other way: 21)" in ex.readout_line()
    assert "(largest difference below 1e-12)" in ex.readout_line()


@pytest.mark.parametrize("step", [0, 1, 5, 11])
def test_each_step_and_mode_counts_the_work_and_shows_the_same_numbers(step):
    ex = ll.KVCacheExplorer()
    for mode, dots in (("cache", step + 1), ("recompute", (step + 1) * (step + 2) // 2)):
        ex.set(step=step, mode=mode)
        _no_error(ex)
        assert ex.figures["work"].marker["x"] == step and ex.figures["work"].marker["y"] == dots
        assert f"computes {dots} dot product" in ex.summary
        hidden = ex.figures["cache"].hidden
        assert not hidden[:step + 1].any() and hidden[step + 1:].all()
    assert ex.access.text.startswith("step = " + str(step)) or ex.access.text.startswith("recomputing")


def test_clicking_a_row_of_the_weights_moves_the_step_there():
    ex = ll.KVCacheExplorer()
    ex.figures["weights"].highlight_row = 9        # what a click on row 9 in the browser sends
    _no_error(ex)
    assert ex.controls["step"].value == 9 and "“didn't” is token 9" in ex.summary
    assert ex.figures["weights"].highlight_row == 9 and not ex.figures["cache"].hidden[9].any()


# ------------------------------------------------------------------ memory
def _reads(ex) -> str:
    return ex.readout_line()


@pytest.mark.parametrize("preset", list(ll.PRESETS))
def test_a_preset_sets_every_slider_from_its_config(preset):
    ex = ll.MemoryExplorer()
    ex.set(preset=preset)
    shape = ll.PRESETS[preset]
    c = ex.controls
    assert (c["layers"].value, c["n_heads"].value, c["n_kv_heads"].value, c["d_head"].value) == (
        shape.layers, shape.n_heads, shape.n_kv_heads, shape.d_head)
    assert c["dtype"].value == shape.dtype and list(c["n_kv_heads"].options) == [
        g for g in range(1, shape.n_heads + 1) if shape.n_heads % g == 0]
    _no_error(ex)


@pytest.mark.parametrize("setting", [
    {}, {"context": 131072, "batch": 16}, {"dtype": "float32"}, {"preset": "Mistral-7B", "context": 65536},
    {"preset": "Falcon-7B (multi-query)", "context": 2048, "dtype": "float8"},
    {"preset": "GPT-2 small", "n_heads": 12, "n_kv_heads": 3, "layers": 24, "d_head": 128},
])
def test_the_numbers_the_learner_reads_are_the_formula(setting):
    ex = ll.MemoryExplorer()
    ex.set(**setting)
    c = {name: control.value for name, control in ex.controls.items()}
    window = ll.PRESETS[c["preset"]].window
    kept = c["context"] if window is None else min(c["context"], window)
    expected = 2 * c["layers"] * c["n_kv_heads"] * c["d_head"] * kept * c["batch"] * VALUE_BYTES[c["dtype"]]
    assert ex.memory.bytes == expected == ll.kv_cache_bytes(
        c["layers"], c["n_kv_heads"], c["d_head"], c["context"], c["batch"], c["dtype"], window=window)
    text = _reads(ex)
    assert (f"2 × {c['layers']} layers × {c['n_kv_heads']} KV heads × {c['d_head']} × {kept:,} tokens"
            in text)
    assert f"batch {c['batch']} × {VALUE_BYTES[c['dtype']]} bytes = {ll.size_text(expected)}" in text
    assert ex.figures["memory"].marker["x"] == c["context"]
    assert ex.figures["memory"].marker["y"] == pytest.approx(expected / 1e9)
    line = ex.figures["memory"].series[0]
    assert line["y"][explorers.CONTEXTS.index(c["context"])] == pytest.approx(expected / 1e9)


def test_the_key_value_heads_always_divide_the_query_heads():
    ex = ll.MemoryExplorer()
    for n_heads in (12, 7, 32, 48, 1):
        ex.set(n_heads=n_heads)
        assert n_heads % ex.controls["n_kv_heads"].value == 0
        _no_error(ex)
    with pytest.raises(ValueError, match="n_kv_heads must be one of 1"):
        ex.set(n_kv_heads=5)


@pytest.mark.parametrize("bad, words", [
    ({"dtype": "bfloat61"}, "dtype must be one of float32, bfloat16, float16, float8; got 'bfloat61'"),
    ({"layers": -3}, "layers must be from 1 to 128; got -3"),
    ({"batch": 0}, "batch must be one of 1, 2, 4"),
    ({"context": 5000}, "context must be one of 128, 256"),
    ({"preset": "Llama 3"}, "preset must be one of GPT-2 small, Llama-3-8B"),
])
def test_a_refused_value_leaves_the_calculator_usable(bad, words):
    ex = ll.MemoryExplorer()
    before = ex.readout_line()
    with pytest.raises(ValueError, match=re.escape(words)):
        ex.set(**bad)
    assert ex.readout_line() == before
    ex.set(context=16384)
    _no_error(ex)
    assert "16,384 tokens" in ex.readout_line()


# ------------------------------------------------------------------ grouped-query attention
@pytest.mark.parametrize("n_kv", explorers.KV_HEAD_OPTIONS)
def test_the_head_grid_shows_the_pooled_heads(n_kv):
    ex = ll.GroupedQueryExplorer(n_kv_heads=n_kv)
    _no_error(ex)
    conv = ll.gqa_conversion(ex.x, ex.layer, n_kv)
    np.testing.assert_allclose(ex.view.matrix, conv.weights)
    owner = ll.kv_head_of(8, n_kv)
    assert ex.view.panel_titles == [f"head {h} · KV {owner[h]}" for h in range(8)]
    assert f"2 × {n_kv} × 8 = {16 * n_kv} numbers" in ex.readout_line()
    if n_kv == 8:
        assert "close: the converted layer gives nearly the original outputs" in ex.readout_line()


def test_lesson_06s_head_grid_is_where_the_pooling_starts():
    ex = ll.GroupedQueryExplorer(n_kv_heads=8)
    grid = ll.HeadGridExplorer(n_heads=8, d_model=64, seq_len=12)
    np.testing.assert_allclose(ex.view.matrix, grid.weights, atol=1e-12)


# ------------------------------------------------------------------ windows
def test_the_window_explorer_follows_its_sliders():
    ex = ll.WindowExplorer()
    _no_error(ex)
    assert ex.figures["weights"].highlight_row == 40 and ex.figures["ring"].highlight_row == 40
    for window, sinks, query in ((2, 0, 0), (24, 4, 47), (8, 1, 20)):
        ex.set(window=window, sinks=sinks, query=query)
        _no_error(ex)
        np.testing.assert_array_equal(~ex.figures["weights"].hidden, ll.sink_window_mask(48, window, sinks))
        held = ll.ring_buffer(48, window, sinks)
        assert ex.figures["ring"].matrix.shape == (48, window + sinks)
        kept = sorted(int(p) for p in held[query] if p >= 0)
        recent = set(range(max(query - window + 1, 0), query + 1))
        assert set(kept) == set(range(min(sinks, query + 1))) | recent
        assert f"query {query} sees positions" in ex.summary


def test_clicking_a_row_of_the_window_weights_moves_the_query_there():
    ex = ll.WindowExplorer()
    ex.figures["weights"].highlight_row = 3        # what a click on row 3 in the browser sends
    _no_error(ex)
    assert ex.controls["query"].value == 3 and ex.figures["ring"].highlight_row == 3
    assert "query 3 sees positions" in ex.summary


# ------------------------------------------------------------------ every explorer
@pytest.mark.parametrize("cls", ALL)
def test_every_control_has_a_name_that_says_what_it_sets_and_a_value_text(cls):
    ex = cls()
    entries = {e["cls"]: e for e in ex.access.controls}
    for name, control in ex.controls.items():
        mine = [entries[c] for c in control._dom_classes if c in entries]
        assert len(mine) == 1, name
        label = mine[0]["label"]
        assert control.description in label and len(label) > len(control.description), label
        if isinstance(control, ipywidgets.SelectionSlider | ipywidgets.IntSlider):
            assert mine[0]["value"] == name and ex.setting(name).startswith(f"{name} = ")


@pytest.mark.parametrize("cls, name, value", [
    (ll.KVCacheExplorer, "step", 8), (ll.MemoryExplorer, "context", 65536),
    (ll.GroupedQueryExplorer, "n_kv_heads", 1), (ll.WindowExplorer, "sinks", 0),
])
def test_a_moved_control_is_said_with_what_the_figures_show_now(cls, name, value):
    ex = cls()
    ex.controls[name].value = value
    _no_error(ex)
    said = ex.access.text
    assert said.startswith(ex.setting(name)) and ex.summary in said
    figures = list(ex.figures.values()) or [ex.view]
    assert all(ex.settings() in fig.alt or ex.settings().split(":")[0] in fig.alt for fig in figures)


@pytest.mark.parametrize("make, words", [
    (lambda: ll.KVCacheExplorer(step=12), "step must be from 0 to 11"),
    (lambda: ll.KVCacheExplorer(mode="cached"), "mode must be one of cache, recompute"),
    (lambda: ll.MemoryExplorer("Llama"), "preset must be one of GPT-2 small"),
    (lambda: ll.MemoryExplorer(context=1000), "context must be one of 128"),
    (lambda: ll.MemoryExplorer(dtype="fp16"), "dtype must be one of float32"),
    (lambda: ll.GroupedQueryExplorer(n_kv_heads=3), "n_kv_heads must be one of 8, 4, 2, 1"),
    (lambda: ll.WindowExplorer(window=1), "window must be from 2 to 24"),
    (lambda: ll.WindowExplorer(query=48), "query must be from 0 to 47"),
    (lambda: ll.WindowExplorer().set(sinks=5), "sinks must be from 0 to 4"),
])
def test_values_outside_the_controls_are_refused(make, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        make()


def test_an_error_in_a_redraw_reaches_the_error_box(monkeypatch):
    ex = ll.WindowExplorer()

    def broken(*args, **kwargs):
        raise ValueError("the <ring> broke")

    monkeypatch.setattr(explorers.lab, "ring_buffer", broken)
    ex.controls["query"].value = 9
    assert "the &lt;ring&gt; broke" in ex.error_box.value and isinstance(ex.last_error, ValueError)
    monkeypatch.undo()
    ex.controls["query"].value = 10
    _no_error(ex)


@pytest.mark.parametrize("cls", ALL)
def test_the_still_shows_the_same_view_with_its_read_out(cls):
    ex = cls()
    still, alt = ex.static_view()
    assert still.axes and ex.readout_line() and alt.endswith(ex.readout_line())
    assert ex.title in alt


@pytest.mark.parametrize("cls", ALL)
def test_a_move_redraws_in_milliseconds_and_sends_little(cls):
    ex = cls()
    name, control = next((n, c) for n, c in ex.controls.items()
                         if isinstance(c, ipywidgets.IntSlider | ipywidgets.SelectionSlider))
    options = list(getattr(control, "options", [])) or [control.min, control.max]
    control.value = options[-1] if control.value != options[-1] else options[0]
    _no_error(ex)
    assert ex.last_update_ms == ex.last_update_ms        # measured (a number), not bounded: no benchmark here
