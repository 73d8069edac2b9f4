"""The live explorers, driven headlessly: every slider over its range, extremes included.

Each redraw must show exactly what lessons_lib.attention computes for the
settings (checked against the library here, not against the explorer's own
helpers), change the PNG, and report errors in .error_box.
"""

from __future__ import annotations

import base64
import io
import math

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from lessons_lib import attention, data, masks, widgets  # noqa: E402

D_MODEL, SEED = 16, 0
CAT = data.tokenize(data.SENTENCES["cat"])


def tokens_for_cat(n: int) -> list[str]:
    """The course's story starts with the cat sentence: the first n tokens of either."""
    return CAT[:n] if n <= len(CAT) else data.tokens_of_length(n)


def reference(tokens, d_k, d_model=D_MODEL):
    x = data.embed_tokens(tokens, d_model, SEED)
    w_q, w_k, w_v = data.projection_weights(d_model, d_k, SEED)
    q, k, v = attention.project_qkv(x, w_q, w_k, w_v)
    return x, (w_q, w_k, w_v), q, k, v, attention.attention_scores(q, k)


def png_size(png: bytes) -> tuple[int, int]:
    img = Image.open(io.BytesIO(png))
    img.load()  # decodes: a broken PNG raises here
    return img.size


def assert_valid_images(explorer):
    for name, fig in explorer.figures.items():
        png = bytes(explorer.images[name].value)
        assert png[:8] == b"\x89PNG\r\n\x1a\n", f"{name}: not a PNG"
        assert png_size(png) == (fig.width, fig.height)


def assert_no_error(explorer, where=""):
    assert explorer.error_box.value == "", f"{where}: {explorer.error_box.value}"
    assert explorer.last_error is None


def drawn(explorer, name) -> np.ndarray:
    return np.ma.getdata(explorer.figures[name].im.get_array())


# ------------------------------------------------------------------ controls, classes, display
@pytest.mark.parametrize("cls", [widgets.ScoresExplorer, widgets.ScaleSoftmaxExplorer,
                                 widgets.PipelineExplorer, widgets.ProjectionExplorer])
def test_controls_descriptions_and_css_classes(cls):
    ex = cls()
    d_k = ex.controls["d_k"]
    assert isinstance(d_k, ipywidgets.SelectionSlider)
    assert d_k.description == "d_k"
    assert list(d_k.options) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert "lessons-slider-d_k" in d_k._dom_classes
    if "seq_len" in ex.controls:
        s = ex.controls["seq_len"]
        assert isinstance(s, ipywidgets.IntSlider)
        assert (s.description, s.min, s.max) == ("seq_len", 2, 128)
        assert "lessons-slider-seq_len" in s._dom_classes
    for name, control in ex.controls.items():
        kind = "slider" if "Slider" in type(control).__name__ else None
        if kind:
            assert f"lessons-slider-{name}" in control._dom_classes
    heatmaps = [n for n, f in ex.figures.items() if isinstance(f, widgets.FastHeatmap)]
    assert heatmaps
    for name in heatmaps:
        assert "lessons-heatmap" in ex.images[name]._dom_classes
    for img in ex.images.values():
        assert isinstance(img, ipywidgets.Image) and img.format == "png"
    # the explorer displays as its widget, which holds the sliders, images and the error box
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    assert isinstance(ex.error_box, ipywidgets.HTML)
    assert_no_error(ex, "after build")
    assert_valid_images(ex)
    assert ex.last_update_ms > 0


def _descendants(w):
    yield w
    for child in getattr(w, "children", ()):
        yield from _descendants(child)


def test_widget_tree_contains_controls_images_error_box():
    ex = widgets.PipelineExplorer()
    inside = list(_descendants(ex.widget))
    for control in ex.controls.values():
        assert any(w is control for w in inside)
    for img in ex.images.values():
        assert any(w is img for w in inside)
    assert any(w is ex.error_box for w in inside)


# ------------------------------------------------------------------ notebook 03
SEQ_LENS = [2, 3, 7, 8, 31, 32, 33, 127, 128]


def test_scores_explorer_over_the_whole_range():
    ex = widgets.ScoresExplorer()
    last = None
    for n in SEQ_LENS:
        for d_k in widgets.D_K_OPTIONS:
            ex.set(seq_len=n, d_k=d_k)
            assert_no_error(ex, f"seq_len={n}, d_k={d_k}")
            tokens = tokens_for_cat(n)
            *_, scores = reference(tokens, d_k)
            np.testing.assert_allclose(drawn(ex, "scores"), scores, rtol=1e-12, atol=1e-12)
            fig = ex.figures["scores"]
            assert fig.labels == (tokens, tokens)
            lo, hi = fig.im.get_clim()
            assert lo == -hi and hi >= np.abs(scores).max()  # nothing clipped
            png = bytes(ex.images["scores"].value)
            assert png != last, f"image did not change at seq_len={n}, d_k={d_k}"
            last = png
    assert_valid_images(ex)


def test_scores_explorer_other_sentence_continues_with_the_story():
    ex = widgets.ScoresExplorer("tired")
    own = data.tokenize(data.SENTENCES["tired"])
    assert ex.controls["seq_len"].value == len(own)
    ex.set(seq_len=len(own) + 3)
    assert ex.figures["scores"].labels[0] == own + data.tokens_of_length(3)
    with pytest.raises(ValueError, match=r"sentence must be one of"):
        widgets.ScoresExplorer("nope")


def test_set_rejects_unknown_and_out_of_range_values():
    ex = widgets.ScoresExplorer()
    with pytest.raises(TypeError, match=r"no control heads; it has seq_len, d_k"):
        ex.set(heads=2)
    with pytest.raises(ValueError, match=r"d_k must be one of 1, 2, 4, .*512; got 3"):
        ex.set(d_k=3)
    with pytest.raises(ValueError, match=r"seq_len must be from 2 to 128; got 129"):
        ex.set(seq_len=129)
    with pytest.raises(TypeError, match=r"seq_len must be a whole number"):
        ex.set(seq_len=4.0)


# ------------------------------------------------------------------ notebook 04
def test_scale_softmax_explorer_over_the_whole_range():
    ex = widgets.ScaleSoftmaxExplorer()
    tokens = ex.tokens
    assert tokens == CAT
    last = {}
    for scaled in (True, False):
        for temperature in (0.1, 1.0, 10.0):
            for d_k in widgets.D_K_OPTIONS:
                ex.set(d_k=d_k, scaled=scaled, temperature=temperature)
                where = f"d_k={d_k}, scaled={scaled}, T={temperature}"
                assert_no_error(ex, where)
                *_, scores = reference(tokens, d_k)
                factor = (1 / math.sqrt(d_k) if scaled else 1.0) / temperature
                weights = attention.attention_weights(scores, scale=factor)
                np.testing.assert_allclose(drawn(ex, "weights"), weights, atol=1e-12)
                np.testing.assert_allclose(ex.figures["row"].values, weights[ex.controls["query"].value])
                assert ex.figures["weights"].im.get_clim() == (0.0, 1.0)
                for name in ("variance", "weights"):
                    png = bytes(ex.images[name].value)
                    assert png != last.get(name), f"{name} did not change at {where}"
                    last[name] = png
    for q in range(len(tokens)):
        ex.set(query=q)
        np.testing.assert_allclose(ex.figures["row"].values, drawn(ex, "weights")[q])
    assert_valid_images(ex)


def test_scale_softmax_shows_saturation_without_scaling():
    ex = widgets.ScaleSoftmaxExplorer()
    ex.set(d_k=512, scaled=False, temperature=1.0)
    assert drawn(ex, "weights").max(axis=1).mean() > 0.9   # (almost) one-hot rows
    assert "saturated" in ex.readout.value
    ex.set(scaled=True)
    assert drawn(ex, "weights").max(axis=1).mean() < 0.8   # spread again
    np.testing.assert_allclose(drawn(ex, "weights").sum(axis=1), 1.0)


def test_variance_panel_marks_current_d_k():
    ex = widgets.ScaleSoftmaxExplorer()
    fig = ex.figures["variance"]
    np.testing.assert_allclose(fig.raw / fig.d_ks, 1.0, rtol=0.3)   # var(q·k) ≈ d_k
    np.testing.assert_allclose(fig.scaled, 1.0, rtol=0.3)
    ex.set(d_k=128, scaled=False)
    assert list(fig.vline.get_xdata()) == [128, 128]
    i = list(fig.d_ks).index(128)
    assert fig.marker.get_ydata()[0] == fig.raw[i]
    ex.set(scaled=True)
    assert fig.marker.get_ydata()[0] == fig.scaled[i]


def test_temperature_range_is_enforced():
    ex = widgets.ScaleSoftmaxExplorer()
    with pytest.raises(ValueError, match=r"temperature must be a number from 0.1 to 10"):
        ex.set(temperature=0.0)
    with pytest.raises(TypeError, match=r"scaled must be True or False"):
        ex.set(scaled=1)


# ------------------------------------------------------------------ notebook 05
def test_pipeline_explorer_over_the_whole_range():
    ex = widgets.PipelineExplorer()
    last = {}
    for causal in (False, True):
        for n in SEQ_LENS:
            for d_k in (1, 2, 16, 64, 512):
                query = n - 1
                ex.set(seq_len=n, d_k=d_k, query=query, causal=causal)
                where = f"seq_len={n}, d_k={d_k}, causal={causal}"
                assert_no_error(ex, where)
                tokens = tokens_for_cat(n)
                *_, v, scores = reference(tokens, d_k)
                weights = attention.attention_weights(scores, d_k, causal=causal)
                out = attention.weighted_values(weights, v)
                scaled = attention.scale_scores(scores, d_k)
                np.testing.assert_allclose(drawn(ex, "scores"), scaled, atol=1e-12)
                np.testing.assert_allclose(drawn(ex, "weights"), weights, atol=1e-12)
                np.testing.assert_allclose(drawn(ex, "output"), out, atol=1e-12)
                np.testing.assert_allclose(ex.figures["row"].values, weights[query], atol=1e-12)
                assert ex.figures["weights"].labels == (tokens, tokens)
                hidden = np.ma.getmaskarray(ex.figures["weights"].im.get_array())
                expected_hidden = ~masks.causal_mask(n) if causal else np.zeros((n, n), bool)
                np.testing.assert_array_equal(hidden, expected_hidden)
                # (with 100+ bars of ~1/n each, two settings can give the same pixels)
                names = ("scores", "weights", "output") + (("row",) if n <= 32 else ())
                for name in names:
                    png = bytes(ex.images[name].value)
                    assert png != last.get(name), f"{name} did not change at {where}"
                    last[name] = png
    assert_valid_images(ex)


def test_pipeline_query_follows_seq_len():
    ex = widgets.PipelineExplorer()
    ex.set(seq_len=20, query=19)
    ex.set(seq_len=4)  # the query slider shrinks with the sequence, no error
    assert ex.controls["query"].max == 3 and ex.controls["query"].value == 3
    assert_no_error(ex)
    ex.controls["seq_len"].value = 2  # as a learner drags it
    assert ex.controls["query"].value == 1
    assert_no_error(ex)
    assert ex.figures["row"].values.shape == (2,)
    with pytest.raises(ValueError, match=r"query must be from 0 to 1; got 5"):
        ex.set(query=5)
    ex.set(seq_len=6, query=5)  # in one call: seq_len is applied first
    assert ex.controls["query"].value == 5


def test_slider_moves_redraw_once_and_time_it():
    ex = widgets.PipelineExplorer()
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
    ex = widgets.ProjectionExplorer()
    tokens = ex.tokens
    x_png = bytes(ex.images["x"].value)
    last = None
    for name in ("Q", "K", "V"):
        for d_k in widgets.D_K_OPTIONS:
            ex.set(d_k=d_k, projection=name)
            assert_no_error(ex, f"{name}, d_k={d_k}")
            x, ws, q, k, v, _ = reference(tokens, d_k, d_model=8)
            w = ws["QKV".index(name)]
            np.testing.assert_array_equal(drawn(ex, "x"), x)
            np.testing.assert_array_equal(drawn(ex, "w"), w)
            np.testing.assert_allclose(drawn(ex, "result"), {"Q": q, "K": k, "V": v}[name], atol=1e-12)
            assert drawn(ex, "result").shape == (len(tokens), d_k)
            png = bytes(ex.images["result"].value)
            assert png != last
            last = png
    assert bytes(ex.images["x"].value) == x_png  # X does not depend on d_k: drawn once
    assert_valid_images(ex)


# ------------------------------------------------------------------ errors reach the learner
@pytest.mark.parametrize("cls, func", [
    (widgets.ScoresExplorer, "attention_scores"),
    (widgets.ScaleSoftmaxExplorer, "attention_weights"),
    (widgets.PipelineExplorer, "weighted_values"),
    (widgets.ProjectionExplorer, "project_qkv"),
])
def test_callback_error_is_shown_in_error_box(monkeypatch, cls, func):
    ex = cls()

    def broken(*args, **kwargs):
        raise ValueError("something <odd> happened")

    monkeypatch.setattr(widgets.attention, func, broken)
    ex.controls["d_k"].value = 32  # a slider move runs the callback: it must not raise
    box = ex.error_box.value
    assert "ValueError" in box and "something &lt;odd&gt; happened" in box  # escaped HTML
    assert "color:#b00020" in box
    assert isinstance(ex.last_error, ValueError)
    monkeypatch.undo()
    ex.controls["d_k"].value = 64
    assert_no_error(ex, "after the fix")


# ------------------------------------------------------------------ the rendering core
def test_fast_heatmap_pixels_are_the_colour_of_their_values():
    hm = widgets.FastHeatmap(colorbar_label="v", ax_size=(200, 160), annotate_max=0)
    m = np.arange(12, dtype=float).reshape(3, 4) / 11
    allowed = np.ones((3, 4), bool)
    allowed[0, 3] = False
    hm.render(m, list("abc"), list("wxyz"), title="t", vmin=0.0, vmax=1.0, mask=allowed)
    buf = np.asarray(hm.canvas.buffer_rgba())
    for i in range(3):
        for j in range(4):
            y = hm.top + int((i + 0.5) * hm.ax_h / 3)
            x = hm.left + int((j + 0.5) * hm.ax_w / 4)
            px = buf[y, x, :3].astype(int)
            if allowed[i, j]:
                want = np.array(hm.cmap(m[i, j], bytes=True)[:3], dtype=int)
                assert np.abs(px - want).max() <= 1, (i, j, px, want)
    # the masked cell: grey or hatch, never the colour of its value or of 0
    y, x0 = hm.top + hm.ax_h // 6, hm.left + 3 * hm.ax_w // 4
    cell = buf[y - 5:y + 5, x0 + 2:x0 + hm.ax_w // 4 - 2, :3].reshape(-1, 3).astype(int)
    colours = {tuple(c) for c in cell}
    grey = tuple(int(round(c * 255)) for c in matplotlib.colors.to_rgb(widgets.plots.MASK_FACE))
    assert grey in colours and len(colours) >= 2  # grey plus hatch lines
    for v in (m[0, 3], 0.0):
        assert tuple(hm.cmap(v, bytes=True)[:3]) not in colours


def test_fast_heatmap_more_cells_than_pixels():
    hm = widgets.FastHeatmap(colorbar_label="v", ax_size=(100, 100))
    m = np.random.default_rng(0).standard_normal((128, 512))
    png = hm.render(m, [str(i) for i in range(128)], [str(i) for i in range(512)], title="big",
                    vmin=-4.0, vmax=4.0)
    assert png_size(png) == (hm.width, hm.height)
    np.testing.assert_array_equal(hm.im.get_array(), m)
    with pytest.raises(ValueError, match=r"one label per row"):
        hm.render(m, ["a"], [str(i) for i in range(512)], title="t", vmin=0.0, vmax=1.0)


def test_colour_range_change_redraws_no_static_parts():
    """The colorbar gradient is range-free: a new range only repaints the tick numbers beside it."""
    hm = widgets.FastHeatmap(colorbar_label="v", ax_size=(120, 120))
    m = np.eye(3)
    for bound in (1.0, 2.0, 5.0):
        hm.render(m, "abc", "abc", title="t", vmin=-bound, vmax=bound)
    assert len(hm._static) == 1
    assert hm.im.get_clim() == (-5.0, 5.0)
    strip = lambda: np.asarray(hm.canvas.buffer_rgba())[:, hm.cbar_x + 6:, :3].copy()  # noqa: E731
    five = strip()
    hm.render(m, "abc", "abc", title="t", vmin=-1.0, vmax=1.0)
    assert (strip() != five).any()        # other numbers beside the colorbar
    with pytest.raises(ValueError, match="vmin < vmax"):
        hm.render(m, "abc", "abc", title="t", vmin=1.0, vmax=1.0)


def test_colorbar_tick_positions_follow_the_range():
    hm = widgets.FastHeatmap(colorbar_label="v", ax_size=(120, 200))
    hm.render(np.eye(3), "abc", "abc", title="t", vmin=0.0, vmax=1.0)
    buf = np.asarray(hm.canvas.buffer_rgba())
    ticks = np.flatnonzero((buf[:, hm.cbar_x + 1, :3] == widgets.TICK_RGB).all(axis=1))
    expected = [round(hm.top + (1 - t) * (hm.ax_h - 1)) for t in np.linspace(0, 1, 6)]
    assert sorted(ticks.tolist()) == sorted(expected)   # 0, 0.2, ..., 1.0


def test_nice_bound():
    assert widgets._nice_bound(0.7) == 0.8
    assert widgets._nice_bound(41.0) == 50.0
    assert widgets._nice_bound(2.0) == 2.0
    assert widgets._nice_bound(0.0) == 1.0


def test_png_writer_round_trip():
    rng = np.random.default_rng(1)
    rgba = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)
    rgba[..., 3] = 255
    img = Image.open(io.BytesIO(widgets.encode_png(rgba)))
    np.testing.assert_array_equal(np.asarray(img.convert("RGBA")), rgba)
    with pytest.raises(ValueError, match=r"\(H, W, 4\) uint8"):
        widgets.encode_png(rgba[..., :3])


def test_snapshot_is_one_png_of_all_images():
    ex = widgets.PipelineExplorer()
    png = ex.snapshot()
    w, h = png_size(png)
    figs = ex.figures
    assert w == max(figs["scores"].width + figs["weights"].width, figs["output"].width + figs["row"].width)
    assert h == max(figs["scores"].height, figs["weights"].height) + max(figs["output"].height,
                                                                         figs["row"].height)


@pytest.mark.parametrize("cls", [widgets.ScoresExplorer, widgets.ScaleSoftmaxExplorer,
                                 widgets.PipelineExplorer, widgets.ProjectionExplorer])
def test_display_bundle_has_live_widget_still_picture_and_words(cls):
    """JupyterLab renders the widget; GitHub/nbviewer show the picture and the sentence, not 'VBox(...)'."""
    ex = cls()
    bundle = ex._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    assert bundle["text/plain"].startswith(cls.__name__) and "VBox" not in bundle["text/plain"]
    png = base64.b64decode(bundle["image/png"])
    assert png == ex.snapshot()
