"""The live figures (anywidget): what crosses to the browser, and the checks on what is drawn.

The browser side is tested in tests/test_browser.py; here: the bytes are right (colours
exactly matplotlib's, masks bit-exact), one message per draw, unchanged labels are not
sent again, and bad input gets a clear error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lessons_lib as ll
from lessons_lib.figures import live as _LIVE
from lessons_lib.figures import style
from lessons_lib.figures.live import wire

PACKAGE = Path(wire.__file__).parent


class Wire:
    """Records what a widget sends to the browser (its comm messages), as the kernel would send them."""

    def __init__(self, widget):
        self.messages = []
        original = widget.comm.send

        def send(data=None, metadata=None, buffers=None):
            self.messages.append((data, [bytes(b) for b in (buffers or [])]))
            return original(data=data, metadata=metadata, buffers=buffers)

        widget.comm.send = send

    def states(self):
        """The traits each update message carries (binary ones travel as buffers, named in buffer_paths)."""
        return [{**m["state"], **{p[0]: None for p in m.get("buffer_paths", [])}}
                for m, _ in self.messages if m.get("method") == "update"]

    def nbytes(self) -> int:
        return sum(len(json.dumps(m)) + sum(map(len, b)) for m, b in self.messages)


# ------------------------------------------------------------------ encoding
@settings(max_examples=examples(60))
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 70), st.integers(1, 70)),
                  elements=st.floats(-50, 50, allow_nan=False)),
       st.floats(-60, 0), st.floats(0.01, 60))
def test_colour_indices_are_matplotlibs(m, lo, span):
    """Large matrices cross as 8-bit indices: each cell gets exactly matplotlib's colour."""
    hi = lo + span
    enc, payload = wire.encode_matrix(m, lo, hi)
    cmap = matplotlib.colormaps["viridis"]
    want = cmap(matplotlib.colors.Normalize(lo, hi)(m), bytes=True)[..., :3]
    lut = np.frombuffer(style.colormap_table("viridis"), np.uint8).reshape(256, 3)
    if enc == "f32":
        f = np.frombuffer(payload, "<f4").reshape(m.shape).astype(np.float64)
        np.testing.assert_allclose(f, m, rtol=1e-6, atol=1e-5)
        return
    import zlib

    idx = np.frombuffer(zlib.decompress(payload), np.uint8).reshape(m.shape)
    # float32 rounding can move a value sitting exactly on a bin edge; everything else is identical
    x = (m - lo) / (hi - lo) * 256
    near_edge = np.abs(x - np.round(x)) < 1e-6
    np.testing.assert_array_equal(lut[idx][~near_edge], want[~near_edge])


def test_small_matrices_cross_as_float32_large_as_compressed_bytes():
    small, large = np.random.default_rng(0).random((32, 32)), np.random.default_rng(0).random((128, 128))
    assert wire.encode_matrix(small, 0.0, 1.0)[0] == "f32"
    enc, payload = wire.encode_matrix(large, 0.0, 1.0)
    assert enc == "u8z" and len(payload) < 128 * 128 + 100
    back = wire.decode_matrix(enc, payload, large.shape, 0.0, 1.0)
    assert np.abs(back - large).max() <= 1 / 256


def test_mask_bits_round_trip():
    hidden = np.triu(np.ones((9, 9), bool), 1)
    bits = np.unpackbits(np.frombuffer(wire.pack_mask(hidden), np.uint8))[:81].reshape(9, 9).astype(bool)
    np.testing.assert_array_equal(bits, hidden)
    assert wire.pack_mask(np.zeros((3, 3), bool)) == b""


def test_colormap_table_is_matplotlibs():
    lut = np.frombuffer(style.colormap_table("cividis"), np.uint8).reshape(256, 3)
    np.testing.assert_array_equal(lut, matplotlib.colormaps["cividis"](np.arange(256), bytes=True)[:, :3])
    with pytest.raises(ValueError, match="cmap must be one of"):
        style.colormap_table("jet")


# ------------------------------------------------------------------ what crosses
def test_one_message_per_draw_and_labels_only_when_changed():
    hm = ll.Heatmap(title="w", colorbar_label="weight")
    wire = Wire(hm)
    tokens = list("abcdefg")
    w = np.random.default_rng(0).dirichlet(np.ones(7), size=7)
    hm.draw(w, tokens, tokens, vmin=0.0, vmax=1.0)
    hm.draw(w[::-1].copy(), tokens, tokens, vmin=0.0, vmax=1.0, highlight_row=3)
    states = wire.states()
    assert len(states) == 2                          # one message per draw (hold_sync)
    assert "row_labels" in states[0] and "lut" not in states[1]
    assert "row_labels" not in states[1] and "col_ticks" not in states[1]   # unchanged: not sent again
    assert set(states[1]) >= {"values", "highlight_row"}
    assert wire.nbytes() < 8 * 1024
    assert len(wire.messages[1][1][0]) == 7 * 7 * 4  # the matrix as a binary buffer of float32


def test_every_kind_sends_one_message_with_its_title_and_alt_text():
    """The shared send: one message per draw; the alt text is the given one, else the title's first line (or
    the kind's NAME) and what is drawn."""
    one = np.array([[0.5, 0.5], [1.0, 0.0]])
    drawings = {
        "heatmap": lambda f, **kw: f.draw(one, ["a", "b"], ["a", "b"], **kw),
        "grid": lambda f, **kw: f.draw(one[None], ["a", "b"], ["a", "b"], **kw),
        "heads": lambda f, **kw: f.draw(one[None], ["a", "b"], **kw),
        "bars": lambda f, **kw: f.draw(one[0], ["a", "b"], **kw),
        "lines": lambda f, **kw: f.mark(2.0, **kw),
        "product": lambda f, **kw: f.draw(*[ll.ProductPanel(one)] * 3, **kw),
    }
    assert set(drawings) == set(_LIVE.LiveFigure.kinds())
    for kind, draw in drawings.items():
        figure = _LIVE.LiveFigure.kinds()[kind]()
        wire = Wire(figure)
        draw(figure)
        assert figure.alt.startswith(f"{figure.NAME}: "), (kind, figure.alt)
        draw(figure, title="Seen\nsecond line")
        assert figure.title == "Seen\nsecond line" and figure.alt.startswith("Seen: "), (kind, figure.alt)
        draw(figure, alt="said instead")
        assert figure.alt == "said instead", kind
        assert len(wire.states()) == 3, f"{kind}: one message per draw"


def test_heatmap_draw_keeps_what_it_shows():
    hm = ll.Heatmap(colorbar_label="score", cmap="cividis")
    m = np.array([[1.0, -np.inf], [0.5, 2.0]])
    hm.draw(m, ["a", "b"], ["x", "y"], mask=np.array([[True, True], [False, True]]))
    np.testing.assert_array_equal(hm.hidden, [[False, True], [True, False]])
    assert (hm.vmin, hm.vmax) == (1.0, 2.0)           # the range of the shown cells only
    assert hm.shape == [2, 2] and hm.row_ticks == [0, 1]
    hm.draw(np.zeros((40, 3)), [str(i) for i in range(40)], list("abc"))
    assert hm.row_ticks == style.tick_indices(40).tolist() and len(hm.row_ticks) < 40


def test_on_select_runs_for_clicks_in_the_browser_only():
    hm = ll.Heatmap(selectable=True)
    picked = []
    hm.on_select(picked.append)
    hm.draw(np.eye(3), highlight_row=1)             # the kernel drawing: no callback
    assert picked == []
    hm.highlight_row = 2                            # what a click in the browser does
    assert picked == [2]


@pytest.mark.parametrize("call, error, words", [
    (lambda: ll.Heatmap().draw(np.zeros((2, 2, 2))), ValueError, "matrix must be 2-D"),
    (lambda: ll.Heatmap().draw(np.eye(2), ["a"]), ValueError, "row_labels has 1 labels but there are 2 rows"),
    (lambda: ll.Heatmap().draw(np.eye(2), "ab"), TypeError, "not the string 'ab'"),
    (lambda: ll.Heatmap().draw(np.eye(2), vmin=2.0, vmax=1.0), ValueError,
     "vmin=2.0 is larger than vmax=1.0"),
    (lambda: ll.Heatmap().draw(np.eye(2), highlight_row=2), ValueError, "highlight_row must be from 0 to 1"),
    (lambda: ll.Heatmap().draw(np.eye(2), mask=np.ones(3, bool)), ValueError, "does not fit the matrix"),
    (lambda: ll.Heatmap().draw(np.eye(2, dtype=int)), TypeError, "floating-point"),
    (lambda: ll.Heatmap().draw(np.zeros((600, 600))), ValueError, "draws at most 262,144"),
    (lambda: ll.Heatmap(cmap="jet"), ValueError, "cmap must be one of"),
    (lambda: ll.Heatmap(width=10), ValueError, "width must be a whole number of pixels"),
    (lambda: ll.Heatmap(decimals=9), ValueError, "decimals"),
    (lambda: ll.Bars().draw(np.eye(2)), ValueError, "values must be one row"),
    (lambda: ll.HeatmapGrid().draw(np.eye(2)), ValueError, "matrices must be 3-D"),
    (lambda: ll.LinePlot(log_x=True).set_series([{"x": [0, 1], "y": [1, 2]}]), ValueError,
     "positive on a log"),
    (lambda: ll.LinePlot().set_series([{"x": ["a"], "y": [1]}]), TypeError, "must be a list of numbers"),
    (lambda: ll.LinePlot().mark(1, 1, shape="x"), ValueError, "shape must be 'o'"),
    (lambda: ll.MatrixProduct().draw(ll.ProductPanel(np.ones((2, 3))), ll.ProductPanel(np.ones((2, 3))),
                                     ll.ProductPanel(np.ones((2, 3)))), ValueError, "inner sizes must match"),
])
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


def test_grid_bars_lines_product_hold_what_they_show():
    grid = ll.HeatmapGrid(columns=2)
    heads = np.random.default_rng(1).dirichlet(np.ones(5), size=(4, 5))
    grid.draw(heads, list("abcde"), list("abcde"), vmin=0.0, vmax=1.0, mask=np.tril(np.ones((5, 5), bool)))
    assert grid.shape == [4, 5, 5] and grid.panel_titles == ["0", "1", "2", "3"]
    np.testing.assert_array_equal(grid.hidden, ~np.tril(np.ones((5, 5), bool)))
    bars = ll.Bars()
    bars.draw(np.array([0.2, 0.8, 0.0]), list("abc"), mask=np.array([True, True, False]))
    assert bars.mask != b"" and bars.ticks == [0, 1, 2]
    plot = ll.LinePlot(log_x=True)
    plot.set_series([{"x": [1, 2], "y": [3, 4], "label": "s"}])
    plot.mark(2, 4)
    assert plot.marker == {"x": 2.0, "y": 4.0, "shape": "o"}
    prod = ll.MatrixProduct()
    x, w = np.ones((3, 4)), np.ones((4, 2))
    prod.draw(ll.ProductPanel(x), ll.ProductPanel(w), ll.ProductPanel(x @ w))
    assert prod.c_shape == [3, 2] and prod.a_rows == ["0", "1", "2"]


def test_the_javascript_ships_inside_the_package_and_fetches_nothing():
    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    css = (PACKAGE / "live_figures.css").read_text(encoding="utf-8")
    # the JavaScript as it ships, after one line with the course's look from style.py
    style_line = f"const STYLE = {json.dumps(style.live_style(), ensure_ascii=False)};\n"
    assert ll.LiveFigure._esm == style_line + js and "export default" in js
    for text in (js, css):
        assert not re.search(r"https?://|import\s.*from\s+['\"]", text), "no CDN, no imports: nothing fetched"
    assert "devicePixelRatio" in js and "requestAnimationFrame" in js
    # no text below 12 px
    sizes = [int(s) for s in re.findall(r"font\((\d+)", js)]
    sizes += [int(s) for s in re.findall(r"font-size: (\d+)px", css)]
    sizes += [v for k, v in style.live_style().items() if k.endswith("_px")]
    assert min(s for s in sizes if s > 0) >= 12


# Synced traits a kind's JavaScript does not redraw from, each with its reason.
NOT_REDRAWN = {
    "cmap": "the colour map's name; the JavaScript draws its table, lut",
    "selectable": "read when a row is clicked, not drawn",
}
HEADS_NOT_REDRAWN = {"row_name", "col_name", "annotate_max"}  # a head view writes no values in its cells


def test_every_kind_in_python_has_its_drawing_code_in_javascript_and_back():
    """The kinds are found, not listed: each LiveFigure subclass with a ``_kind`` has ``KINDS.<kind>``."""
    import re

    from lessons_lib.figures.live import LiveFigure

    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    in_js = set(re.findall(r"^KINDS\.(\w+) = \{", js, re.M))
    assert set(LiveFigure.kinds()) == in_js, (sorted(LiveFigure.kinds()), sorted(in_js))
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "base", "wire"}
    assert {cls.__module__.rsplit(".", 1)[1] for cls in LiveFigure.kinds().values()} == modules, (
        "every module of figures/live/ holds a kind, imported by figures/live/__init__.py")


@pytest.mark.parametrize("kind", sorted(_LIVE.LiveFigure.kinds()))
def test_every_kinds_traits_are_the_same_in_python_and_javascript(kind):
    """Each kind's `traits` in live_figures.js are exactly the widget's synced traits, less NOT_REDRAWN."""
    import re

    import anywidget

    widget = _LIVE.LiveFigure.kinds()[kind]
    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    block = js[js.index(f"KINDS.{kind} = {{"):]
    listed = set(re.findall(r'"(\w+)"', block[:block.index("]")]))
    base = set(anywidget.AnyWidget.class_traits(sync=True))
    synced = {n for n in widget.class_traits(sync=True) if n not in base and not n.startswith("_")}
    synced -= set(NOT_REDRAWN) | (HEADS_NOT_REDRAWN if kind == "heads" else set())
    assert listed == synced, (f"{widget.__name__} (kind {kind!r}): only in JavaScript "
                              f"{sorted(listed - synced)}, only in Python {sorted(synced - listed)}")


def test_the_javascript_draws_with_the_style_of_style_py():
    """The mask colours and font sizes reach the JavaScript from style.py, typed nowhere else."""
    from lessons_lib.figures.live import base

    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    for value in (style.MASK_FACE, style.MASK_EDGE, style.MASK_NOTE):
        assert value not in js, f"{value!r} is typed in live_figures.js; it comes from style.py"
    assert base._ESM.startswith("const STYLE = {") and style.MASK_NOTE in base._ESM.splitlines()[0]
    assert js.count("function drawColorbar(") == 1 and "drawColorbarOnly" not in js
