"""The explorers, driven headlessly: every slider over its range, extremes included.

Each redraw must show exactly what lessons_lib.core.attention computes for the settings
(checked against the library here, not against the explorer's own helpers), open on
the lesson's numbers, refuse values outside its sliders, and report errors in .error_box.
"""

from __future__ import annotations

import base64
import math

import ipywidgets
import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.core import attention, masks
from lessons_lib.explorers.base import nice_bound
from lessons_lib.figures.base import read_still
from lessons_lib.figures.live import Bars, Heatmap, LinePlot, MatrixProduct
from lessons_lib.lab import data

D_MODEL, SEED = 8, 0
CAT = data.tokenize(data.SENTENCES["cat"])
SAT, CAT_I, MAT = CAT.index("sat"), CAT.index("cat"), CAT.index("mat")
ALL = [ll.ProjectionExplorer, ll.ScoresExplorer, ll.ScaleSoftmaxExplorer,
       ll.PipelineExplorer]


def tokens_for_cat(n: int) -> list[str]:
    """The course's story starts with the cat sentence: the first n tokens of either."""
    return CAT[:n] if n <= len(CAT) else data.tokens_of_length(n)


def reference(tokens, d_k, d_model=D_MODEL, d_v=None):
    x = data.embed_tokens(tokens, d_model, SEED)
    w_q, w_k, w_v = data.projection_weights(d_model, d_k, SEED, d_v=d_v)
    q, k, v = attention.project_qkv(x, w_q, w_k, w_v)
    return x, (w_q, w_k, w_v), q, k, v, attention.attention_scores(q, k)


def assert_no_error(explorer, where=""):
    assert explorer.error_box.value == "", f"{where}: {explorer.error_box.value}"
    assert explorer.last_error is None


def shown(explorer, name) -> np.ndarray:
    """What the live figure holds (and sent to the browser), in float64."""
    return explorer.figures[name].matrix


# ------------------------------------------------------------------ controls, classes, display
@pytest.mark.parametrize("cls", ALL)
def test_controls_figures_and_display(cls):
    ex = cls()
    d_k = ex.controls["d_k"]
    assert isinstance(d_k, ipywidgets.SelectionSlider) and d_k.description == "d_k"
    assert list(d_k.options) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert "lessons-slider-d_k" in d_k._dom_classes
    if "seq_len" in ex.controls:
        s = ex.controls["seq_len"]
        assert (s.description, s.min, s.max) == ("seq_len", 2, 128)
        assert "lessons-slider-seq_len" in s._dom_classes
    for fig in ex.figures.values():
        assert isinstance(fig, Heatmap | Bars | LinePlot | MatrixProduct)
        assert "d_k = " in fig.alt  # the settings drawn, for screen readers (and the browser test)
    assert_no_error(ex, "after build")
    assert 0 < ex.last_update_ms
    bundle = ex._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    png, alt = read_still(bundle)  # the still and its alt text, for pages without a kernel (make html)
    assert alt.startswith(f"Still picture of the {ex.title} explorer") and "d_k = " in alt
    assert bundle["text/plain"].startswith(cls.__name__) and "VBox" not in bundle["text/plain"]
    assert base64.b64decode(png)[:8] == b"\x89PNG\r\n\x1a\n" and "image/png" not in bundle


def _descendants(w):
    yield w
    for child in getattr(w, "children", ()):
        yield from _descendants(child)


def test_widget_tree_holds_controls_figures_error_box_in_order():
    ex = ll.PipelineExplorer()
    inside = list(_descendants(ex.widget))
    for w in [*ex.controls.values(), *ex.figures.values(), ex.error_box, ex.readout]:
        assert any(x is w for x in inside)
    # controls first (on top), then the figures: the caption in notebook 03 says so
    first_control = min(i for i, w in enumerate(inside) if any(w is c for c in ex.controls.values()))
    first_figure = min(i for i, w in enumerate(inside) if any(w is f for f in ex.figures.values()))
    assert first_control < first_figure


# ------------------------------------------------------------------ the first picture repeats the lesson
def test_every_explorer_opens_on_the_lessons_data():
    scores = ll.ScoresExplorer()
    assert (scores.controls["seq_len"].value, scores.controls["d_k"].value) == (7, 4)
    assert round(shown(scores, "scores")[SAT, CAT_I], 2) == 2.47            # notebook 03: q_sat·k_cat = 2.47
    softmax = ll.ScaleSoftmaxExplorer()
    w = shown(softmax, "weights")
    assert softmax.controls["query"].value == SAT and softmax.controls["d_k"].value == 4
    assert round(w[SAT, MAT], 3) == 0.008 and round(w[SAT, CAT_I], 3) == 0.248   # notebook 04: "about 1%"
    assert "0.8% to “mat”" in softmax.readout.value
    pipeline = ll.PipelineExplorer()
    _, _, q, k, v, s = reference(CAT, 4)
    np.testing.assert_allclose(shown(pipeline, "weights"), attention.attention_weights(s, 4))
    projection = ll.ProjectionExplorer()
    np.testing.assert_allclose(projection.figures["product"].matrices["c"], q)


# ------------------------------------------------------ constructor arguments: sizes and flags are checked
@pytest.mark.parametrize("make, error, words", [
    (lambda: ll.ScoresExplorer(d_k=3), ValueError, "d_k must be one of"),
    (lambda: ll.ScoresExplorer(d_k=True), ValueError, "d_k must be one of"),
    (lambda: ll.PipelineExplorer(seq_len=20000), ValueError,
     "seq_len must be from 2 to 128; got 20000"),
    (lambda: ll.PipelineExplorer(seq_len=4, query=5), ValueError, "query must be from 0 to 3"),
    (lambda: ll.PipelineExplorer(causal="no"), TypeError, "causal must be True or False"),
    (lambda: ll.ScoresExplorer(d_model=0), ValueError, "d_model must be from 1 to 512; got 0"),
    (lambda: ll.ScoresExplorer(seed="x"), TypeError, "seed must be a whole number"),
    (lambda: ll.ScoresExplorer(seed=-1), ValueError, "seed must be from 0"),
    (lambda: ll.ScoresExplorer("nope"), ValueError, "sentence must be one of"),
    (lambda: ll.ScaleSoftmaxExplorer(temperature=0.0), ValueError, "temperature must be a number"),
    (lambda: ll.ScaleSoftmaxExplorer(scaled=1), TypeError, "scaled must be True or False"),
    (lambda: ll.ProjectionExplorer(projection="W"), ValueError, 'projection must be "Q", "K" or "V"'),
])
def test_constructor_refuses_values_outside_its_sliders(make, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_set_rejects_unknown_and_out_of_range_values():
    ex = ll.ScoresExplorer()
    with pytest.raises(TypeError, match=r"no control heads; it has seq_len, d_k"):
        ex.set(heads=2)
    with pytest.raises(ValueError, match=r"d_k must be one of 1, 2, 4, .*512; got 3"):
        ex.set(d_k=3)
    with pytest.raises(ValueError, match=r"seq_len must be from 2 to 128; got 129"):
        ex.set(seq_len=129)
    with pytest.raises(TypeError, match=r"seq_len must be a whole number"):
        ex.set(seq_len=4.0)


# ------------------------------------------------------------------ notebook 03
SEQ_LENS = [2, 7, 31, 32, 33, 128]


def test_scores_explorer_over_the_whole_range():
    ex = ll.ScoresExplorer()
    for n in SEQ_LENS:
        for d_k in ll.D_K_OPTIONS:
            ex.set(seq_len=n, d_k=d_k)
            assert_no_error(ex, f"seq_len={n}, d_k={d_k}")
            tokens = tokens_for_cat(n)
            *_, scores = reference(tokens, d_k)
            fig = ex.figures["scores"]
            np.testing.assert_allclose(shown(ex, "scores"), scores, rtol=1e-12, atol=1e-12)
            assert fig.row_labels == tokens and fig.col_labels == tokens
            assert fig.vmin == -fig.vmax and fig.vmax >= np.abs(scores).max()  # nothing clipped
            assert f"seq_len = {n}, d_k = {d_k}" in fig.alt
            assert fig.encoding == ("f32" if n <= 32 else "u8z")


# ------------------------------------------------------------------ notebook 04
def test_scale_softmax_explorer_over_the_whole_range():
    ex = ll.ScaleSoftmaxExplorer()
    for scaled in (True, False):
        for temperature in (0.1, 1.0, 10.0):
            for d_k in ll.D_K_OPTIONS:
                ex.set(d_k=d_k, scaled=scaled, temperature=temperature)
                assert_no_error(ex, f"d_k={d_k}, scaled={scaled}, T={temperature}")
                *_, scores = reference(CAT, d_k)
                factor = (1 / math.sqrt(d_k) if scaled else 1.0) / temperature
                weights = attention.attention_weights(scores, scale=factor)
                np.testing.assert_allclose(shown(ex, "weights"), weights, atol=1e-12)
                np.testing.assert_allclose(ex.figures["row"].bar_values, weights[ex.controls["query"].value])
                assert (ex.figures["weights"].vmin, ex.figures["weights"].vmax) == (0.0, 1.0)
                marker = ex.figures["variance"].marker
                i = list(ex.variance["d_ks"]).index(d_k)
                assert marker["x"] == d_k
                assert marker["y"] == (ex.variance["scaled"] if scaled else ex.variance["raw"])[i]
    for q in range(len(CAT)):
        ex.set(query=q)
        np.testing.assert_allclose(ex.figures["row"].bar_values, shown(ex, "weights")[q])
        assert ex.figures["weights"].highlight_row == q


def test_scale_softmax_shows_saturation_without_scaling():
    ex = ll.ScaleSoftmaxExplorer()
    ex.set(d_k=512, scaled=False, temperature=1.0)
    assert shown(ex, "weights").max(axis=1).mean() > 0.8   # (nearly) one-hot rows
    assert "saturated" in ex.readout.value
    ex.set(scaled=True)
    assert shown(ex, "weights").max(axis=1).mean() < 0.8   # spread again


def test_variance_data_is_the_measured_one():
    ex = ll.ScaleSoftmaxExplorer()
    v = ex.variance
    np.testing.assert_allclose(v["raw"] / v["d_ks"], 1.0, rtol=0.3)   # var(q·k) ≈ d_k
    np.testing.assert_allclose(v["scaled"], 1.0, rtol=0.3)
    series = ex.figures["variance"].series
    assert [s["label"] for s in series][2:] == ["measured, unscaled", "measured, scaled"]
    assert series[2]["y"] == v["raw"].tolist()


# ------------------------------------------------------------------ notebook 05
def test_pipeline_explorer_over_the_whole_range():
    ex = ll.PipelineExplorer()
    for causal in (False, True):
        for n in SEQ_LENS:
            for d_k in (1, 4, 64, 512):
                query = n - 1
                ex.set(seq_len=n, d_k=d_k, query=query, causal=causal)
                assert_no_error(ex, f"seq_len={n}, d_k={d_k}, causal={causal}")
                tokens = tokens_for_cat(n)
                *_, v, scores = reference(tokens, d_k, d_v=4)   # the values keep d_v = 4
                weights = attention.attention_weights(scores, d_k, causal=causal)
                np.testing.assert_allclose(shown(ex, "scores"), attention.scale_scores(scores, d_k),
                                           atol=1e-12)
                np.testing.assert_allclose(shown(ex, "weights"), weights, atol=1e-12)
                np.testing.assert_allclose(shown(ex, "output"), attention.weighted_values(weights, v),
                                           atol=1e-12)
                np.testing.assert_allclose(ex.figures["row"].bar_values, weights[query], atol=1e-12)
                expected_hidden = ~masks.causal_mask(n) if causal else np.zeros((n, n), bool)
                np.testing.assert_array_equal(ex.figures["weights"].hidden, expected_hidden)
                assert (ex.figures["weights"].mask != b"") == causal
                assert all(ex.figures[f].highlight_row == query for f in ("scores", "weights", "output"))


def test_pipeline_query_follows_seq_len_and_clicks():
    ex = ll.PipelineExplorer()
    ex.set(seq_len=20, query=19)
    ex.set(seq_len=4)  # the query slider shrinks with the sequence, no error
    assert ex.controls["query"].max == 3 and ex.controls["query"].value == 3
    assert_no_error(ex)
    ex.controls["seq_len"].value = 2  # as a learner drags it
    assert ex.controls["query"].value == 1
    with pytest.raises(ValueError, match=r"query must be from 0 to 1; got 5"):
        ex.set(query=5)
    ex.set(seq_len=6, query=5)  # in one call: seq_len is applied first
    assert ex.controls["query"].value == 5
    # a click on row 2 of the weights heatmap in the browser: the query slider follows
    ex.figures["weights"].highlight_row = 2
    assert ex.controls["query"].value == 2
    assert all(ex.figures[f].highlight_row == 2 for f in ("scores", "weights", "output"))
    np.testing.assert_allclose(ex.figures["row"].bar_values, shown(ex, "weights")[2])


def _sent_by(widgets: dict) -> list[str]:
    """The names of ``widgets`` in the order their messages leave for the browser (recorded from now on)."""
    sent = []
    for name, widget in widgets.items():
        def send(data=None, metadata=None, buffers=None, _name=name, _send=widget.comm.send):
            sent.append(_name)
            return _send(data=data, metadata=metadata, buffers=buffers)
        widget.comm.send = send
    return sent


def test_the_figures_leave_before_the_controls_that_follow_a_moved_slider():
    """A learner shortens the sequence while the query is its last token: the query slider's new range and
    value reach the browser in one message after the figures', so the picture the learner waits for is
    drawn first (the browser handles the messages in order)."""
    ex = ll.CausalMaskExplorer()
    ex.set(seq_len=8, query=7)
    sent = _sent_by({**ex.controls, **ex.figures})
    ex.controls["seq_len"].value = 6  # as a learner's key press sets it
    assert ex.controls["query"].max == 5 and ex.controls["query"].value == 5
    figures = [i for i, name in enumerate(sent) if name in ex.figures]
    assert sorted(sent[i] for i in figures) == sorted(ex.figures), sent
    assert sent.count("query") == 1 and sent.index("query") > max(figures), sent


def test_slider_moves_redraw_once_and_time_it():
    ex = ll.PipelineExplorer()
    count = {"n": 0}
    original = ex._redraw

    def counting():
        count["n"] += 1
        original()

    ex._redraw = counting
    ex.set(seq_len=16, d_k=32, query=3, causal=True)
    assert count["n"] == 1
    ex.controls["d_k"].value = 64  # a learner's move
    assert count["n"] == 2
    assert 0 < ex.last_update_ms < 10_000


# ------------------------------------------------------------------ notebook 02
def test_projection_explorer_over_the_whole_range():
    ex = ll.ProjectionExplorer()
    for name in ("Q", "K", "V"):
        for d_k in ll.D_K_OPTIONS:
            ex.set(d_k=d_k, projection=name)
            assert_no_error(ex, f"{name}, d_k={d_k}")
            x, ws, q, k, v, _ = reference(CAT, d_k)
            m = ex.figures["product"].matrices
            np.testing.assert_array_equal(m["a"], x)
            np.testing.assert_array_equal(m["b"], ws["QKV".index(name)])
            np.testing.assert_allclose(m["c"], {"Q": q, "K": k, "V": v}[name], atol=1e-12)
            assert ex.figures["product"].c_shape == [len(CAT), d_k]


# ------------------------------------------------------------------ errors reach the learner
@pytest.mark.parametrize("cls, func", [
    (ll.ScoresExplorer, "attention_scores"),
    (ll.ScaleSoftmaxExplorer, "attention_weights"),
    (ll.PipelineExplorer, "weighted_values"),
    (ll.ProjectionExplorer, "project_qkv"),
])
def test_callback_error_is_shown_in_error_box(monkeypatch, cls, func):
    ex = cls()

    def broken(*args, **kwargs):
        raise ValueError("something <odd> happened")

    monkeypatch.setattr(attention, func, broken)
    ex.controls["d_k"].value = 32  # a slider move runs the callback: it must not raise
    box = ex.error_box.value
    assert "ValueError" in box and "something &lt;odd&gt; happened" in box  # escaped HTML
    assert isinstance(ex.last_error, ValueError)
    monkeypatch.undo()
    ex.controls["d_k"].value = 64
    assert_no_error(ex, "after the fix")


# ------------------------------------------------------------------ stills for static pages
@pytest.mark.parametrize("cls, n_axes", [
    (ll.ProjectionExplorer, 5), (ll.ScoresExplorer, 2),
    (ll.ScaleSoftmaxExplorer, 4), (ll.PipelineExplorer, 7)])
def test_still_is_a_matplotlib_figure_of_the_same_view(cls, n_axes):
    ex = cls()
    fig = ex.still()
    assert len(fig.axes) >= n_axes - 1
    titles = " ".join(ax.get_title() for ax in fig.axes) + (fig._suptitle.get_text() if fig._suptitle else "")
    assert titles.strip()


def test_nice_bound():
    assert nice_bound(0.7) == 0.8
    assert nice_bound(41.0) == 50.0


# ------------------------------------------------------------------ what a screen reader is given
def _classes(widget) -> set[str]:
    return set(widget._dom_classes)


@pytest.mark.parametrize("cls", [*ALL, ll.HeadGridExplorer, ll.CausalMaskExplorer, ll.CustomMaskExplorer])
def test_every_control_has_a_name_that_says_what_it_sets_and_a_value_text(cls):
    """Each control has an entry in the explorer's Access: its CSS class, a name that contains what the
    front end shows beside it (WCAG 2.5.3) and, for a slider, the value text "<name> = <read-out>"."""
    ex = cls()
    entries = {e["cls"]: e for e in ex.access.controls}
    assert any(w is ex.access for w in _descendants(ex.widget))            # inside the explorer's box
    for name, control in ex.controls.items():
        mine = [entries[c] for c in _classes(control) if c in entries]
        assert len(mine) == 1, f"{name}: {sorted(_classes(control))}"
        entry = mine[0]
        assert control.description in entry["label"] and len(entry["label"]) > len(control.description) or \
            isinstance(control, ipywidgets.Checkbox), entry
        if isinstance(control, ipywidgets.SelectionSlider | ipywidgets.IntSlider | ipywidgets.FloatLogSlider):
            assert entry["value"] == name
            assert ex.setting(name).startswith(f"{name} = ")


def test_the_live_region_says_what_changed_and_what_the_weights_do():
    ex = ll.ScaleSoftmaxExplorer()
    ex.controls["d_k"].value = 16            # as a learner moves it
    w = shown(ex, "weights")[SAT]
    j = int(np.argmax(w))
    said = f"d_k = 16: the row of “sat” puts {w[j]:.2f} on “{CAT[j]}”, its largest weight"
    assert ex.access.text == said
    for fig in ex.figures.values():          # the figures' names follow, with the data
        assert "d_k = 16" in fig.alt and (f"{w[j]:.2f}" in fig.alt or "variance" in fig.alt)
    ex.set(scaled=False, temperature=0.5)
    assert ex.access.text.startswith("scale by 1/√d_k off; temperature = 0.5: the row of “sat”")


def test_figure_names_follow_the_data_not_only_the_settings():
    ex = ll.ScoresExplorer()
    before = ex.figures["scores"].alt
    ex.set(d_k=64)
    s = shown(ex, "scores")
    i, j = np.unravel_index(int(np.argmax(s)), s.shape)
    alt = ex.figures["scores"].alt
    assert alt != before and "d_k = 64" in alt
    assert f"the largest, {s[i, j]:.2f}, is “{CAT[i]}” → “{CAT[j]}”" in alt


def test_drawing_a_mask_is_said_cell_by_cell():
    ex = ll.CustomMaskExplorer(4)
    entries = {e["cls"]: e["label"] for e in ex.access.controls}
    assert entries["lessons-cell-0-1"] == f"query “{ex.tokens[0]}” (0) may attend to key “{ex.tokens[1]}” (1)"
    ex.cells[0][1].value = True              # a learner presses the toggle
    assert ex.access.text.startswith(f"query “{ex.tokens[0]}” (0) → key “{ex.tokens[1]}” (1) now allowed: "
                                     "11 of 16 cells allowed.")
    assert "11 of 16 cells allowed" in ex.heatmap.alt
    ex.cells[0][1].value = False
    assert "now blocked: 10 of 16 cells allowed. This is the causal mask" in ex.access.text


def test_the_tile_explorer_says_what_the_tile_did():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((8, 4)) for _ in range(3))
    ex = ll.TileExplorer(q, k, v, block_size=4)
    ex.set(tile=2)
    assert ex.access.text.startswith("tile = 2: keys 4…7 processed; query 0: maximum ")
    for plot in ex.plots:
        assert "tile = 2 of 2: after tile 2, query 0 at" in plot.alt


def test_the_cost_explorers_names_follow_a_measurement():
    """Lesson 08: after "Measure up to N" the plots' names say what is measured now (they did not change)."""
    from lessons_lib.lab import cost

    table = cost.measure_scaling([128], ["naive numpy"], d=8, repeats=1, progress=False)
    ex = ll.ScalingExplorer(table, n=256)
    before = ex.time_plot.alt
    assert "measured at N = 128 only; at N = 256, nothing measured" in before
    ex.measure()
    assert ex.time_plot.alt != before
    assert "seq_len = 256: measured at 2 sizes, N = 128 to 256; at N = 256, naive numpy " in ex.time_plot.alt
    assert ex.access.text.startswith("Measured up to N = 256: 65,536 scores per head, ")
