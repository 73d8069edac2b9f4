"""The live figures (anywidget): what crosses to the browser, and the checks on what is drawn.

The browser side is tested in tests/browser/ (the lesson walk, the keyboard); here: the bytes are right
(colours exactly matplotlib's, masks bit-exact), one message per draw, unchanged labels are not sent
again, and bad input gets a clear error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lessons_lib as ll
from lessons_lib.figures import live as _LIVE
from lessons_lib.figures import style
from lessons_lib.figures.live import wire
from tests.helpers import examples

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
        "rotations": lambda f, **kw: f.draw(one, one, [1, 0.5], [0.2, 0.3], [[0, 1], [2, 3]], m=1, n=0, **kw),
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
    access = (PACKAGE / "access.js").read_text(encoding="utf-8")
    # the JavaScript as it ships, after one line with the course's look from style.py
    style_line = f"const STYLE = {json.dumps(style.live_style(), ensure_ascii=False)};\n"
    assert ll.LiveFigure._esm == style_line + js and "export default" in js
    assert ll.Access._esm == access and "export default" in access and ll.Access._css == css
    for text in (js, css, access):
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
HEADS_NOT_REDRAWN = {"row_name", "col_name", "annotate_max", "ink"}  # a head view writes no values in cells


def test_every_kind_in_python_has_its_drawing_code_in_javascript_and_back():
    """The kinds are found, not listed: each LiveFigure subclass with a ``_kind`` has ``KINDS.<kind>``."""
    import re

    from lessons_lib.figures.live import LiveFigure

    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    in_js = set(re.findall(r"^KINDS\.(\w+) = \{", js, re.M))
    assert set(LiveFigure.kinds()) == in_js, (sorted(LiveFigure.kinds()), sorted(in_js))
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "base", "wire", "access"}
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
    assert base.ESM.startswith("const STYLE = {") and style.MASK_NOTE in base.ESM.splitlines()[0]
    assert js.count("function drawColorbar(") == 1 and "drawColorbarOnly" not in js


# ------------------------------------------------------------------ contrast (WCAG 2.1 AA), computed
def _lut(name: str) -> np.ndarray:
    return np.frombuffer(style.colormap_table(name), np.uint8).reshape(256, 3)


def test_the_contrast_ratio_is_wcags():
    assert style.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert style.contrast_ratio("#ffffff", "#000000") == pytest.approx(21.0)      # either order
    assert style.contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert style.contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the AA grey
    assert style.contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # just below it
    np.testing.assert_allclose(style.contrast_ratio(np.array([[0, 0, 0], [255, 255, 255]]), np.full(3, 255)),
                               [21.0, 1.0])
    with pytest.raises(ValueError, match="#rrggbb"):
        style.contrast_ratio("black", "#ffffff")


@pytest.mark.parametrize("cmap", style.COLORMAPS)
def test_numbers_written_in_cells_reach_4_5_to_1_on_every_colour_of_the_map(cmap):
    """The ink of a number in a cell (what the live heatmaps write) is the better of black and white by the
    WCAG contrast ratio, so every colour of every map gets at least 4.5:1."""
    lut = _lut(cmap)
    white = np.frombuffer(style.ink_table(cmap), np.uint8).astype(bool)
    ink = np.where(white[:, None], 255, 0) * np.ones(3, dtype=int)
    ratios = style.contrast_ratio(lut, ink)
    assert ratios.min() >= style.MIN_TEXT_CONTRAST, (cmap, int(np.argmin(ratios)), ratios.min())
    assert (ratios >= style.contrast_ratio(lut, 255 - ink) - 1e-12).all()   # never the worse of the two
    fig = ll.Heatmap(cmap=cmap)
    assert fig.ink == style.ink_table(cmap) and len(fig.ink) == 256          # what crosses to the browser


@pytest.mark.parametrize("cmap", style.COLORMAPS)
def test_the_cursor_and_hover_frame_stands_out_on_every_colour(cmap):
    """The frame is a black ring and a white one (live_figures.js, drawFrame): one of the two reaches 3:1
    against any cell colour, the two against each other too, each FRAME_WIDTH ≥ 2 px wide."""
    lut = _lut(cmap)
    best = np.maximum(style.contrast_ratio(lut, np.zeros(3)), style.contrast_ratio(lut, np.full(3, 255)))
    assert best.min() >= style.MIN_MARK_CONTRAST
    assert style.contrast_ratio(style.INK_DARK, style.INK_LIGHT) >= style.MIN_MARK_CONTRAST
    assert style.FRAME_WIDTH >= 2
    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    frame = js[js.index("function drawFrame("):js.index("\n}\n", js.index("function drawFrame("))]
    assert set(re.findall(r"strokeStyle = (\w+)", frame)) == {"INK_DARK", "INK_LIGHT"}


# Colours the JavaScript types that need no contrast: the page under the figures, and the grid lines (a
# decoration, WCAG 1.4.11's exception).
DECORATION = {"#ffffff": "the figures' background", "#e3e3e3": "grid lines behind the data"}


def _hex6(colour: str) -> str:
    c = colour.lower().lstrip("#")
    return "#" + ("".join(ch * 2 for ch in c) if len(c) == 3 else c)


def test_every_colour_the_javascript_draws_with_stands_out_from_white():
    """Text, marks, frames and lines the live figures draw in a typed colour: at least 4.5:1 on the white
    background (the stricter text rule for all of them)."""
    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    colours = {_hex6(c) for c in re.findall(r'"(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3})"', js)}
    for colour in sorted(colours - set(DECORATION)):
        assert style.contrast_ratio(colour, style.BACKGROUND) >= style.MIN_TEXT_CONTRAST, colour
    from lessons_lib.figures.live.bars import bar_colour

    assert style.contrast_ratio(bar_colour(), style.BACKGROUND) >= style.MIN_MARK_CONTRAST


def _author_colours(css: str) -> str:
    """The stylesheet without its forced-colours block: there the colours are the system's (CanvasText,
    Highlight), the theme the learner chose, which tests/browser/test_forced_colours.py checks in Chromium."""
    start = css.find("@media (forced-colors: active)")
    if start < 0:
        return css
    depth, opened = 0, css.index("{", start)
    for end in range(opened, len(css)):
        depth += {"{": 1, "}": -1}.get(css[end], 0)
        if depth == 0:
            break
    return css[:start] + css[end + 1:]


def _css_rules(css: str) -> list[tuple[str, dict]]:
    css = _author_colours(re.sub(r"/\*.*?\*/", "", css, flags=re.S))
    rules = []
    for selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", css):
        props = dict((k.strip(), v.strip().replace("!important", "").strip())
                     for k, v in (d.split(":", 1) for d in body.split(";") if ":" in d))
        rules.append((" ".join(selector.split()), props))
    return rules


def test_the_css_colours_and_focus_rings_meet_aa():
    """live_figures.css (the figures' read-out and save button, the focus rings of figures and controls,
    lesson 07's pressed mask cells): each text colour 4.5:1 on the background its rule sets, each focus
    ring at least 2 px and 3:1 on the white page, each border 3:1 on white."""
    rules = _css_rules((PACKAGE / "live_figures.css").read_text(encoding="utf-8"))
    rings = 0
    for selector, props in rules:
        if "color" in props:
            assert "background" in props, f"{selector}: a text colour without its background"
            ratio = style.contrast_ratio(props["color"], props["background"])
            assert ratio >= style.MIN_TEXT_CONTRAST, selector
        if props.get("outline", "none") != "none":
            width, kind, colour = props["outline"].split()
            assert int(width.removesuffix("px")) >= 2 and kind == "solid", selector
            assert style.contrast_ratio(colour, style.BACKGROUND) >= style.MIN_MARK_CONTRAST, selector
            rings += 1
        if "border" in props and "#" in props["border"]:
            colour = re.search(r"#[0-9a-fA-F]{6}", props["border"]).group(0)
            assert style.contrast_ratio(colour, style.BACKGROUND) >= style.MIN_MARK_CONTRAST, selector
    assert rings == 3   # the figures', the controls' and the figures' tables' (they scroll: a Tab stop)


def test_a_line_too_light_to_see_is_refused():
    with pytest.raises(ValueError, match=r"1\.7\d:1; lines and marks need at least 3:1"):
        ll.LinePlot().set_series([{"x": [1, 2], "y": [1, 2], "mode": "line", "color": "#9bd93c"}])
    ll.LinePlot().set_series([{"x": [1, 2], "y": [1, 2], "mode": "markers", "color": "#9bd93c"}])  # outlined


# ------------------------------------------------------------------ the live region and the controls' names
def test_access_checks_its_entries():
    from lessons_lib.figures.live.access import control_entry

    entry = control_entry("lessons-slider-d_k", "d_k: length of each query and key", value="d_k")
    assert entry == {"cls": "lessons-slider-d_k", "label": "d_k: length of each query and key",
                     "value": "d_k", "options": [], "status": False}
    with pytest.raises(ValueError, match="one CSS class name"):
        control_entry("two classes")
    with pytest.raises(ValueError, match="control entry has the keys"):
        ll.Access(controls=[{"cls": "x", "name": "y"}])
    with pytest.raises(ValueError, match="scope must be a CSS class selector"):
        ll.Access(scope="div")
    access = ll.Access(scope=".lessons-quiz", controls=[entry])
    wire_ = Wire(access)
    access.say("d_k = 16: the row of “sat” puts 0.62 on “mat”, its largest weight")
    assert wire_.states() == [{"text": "d_k = 16: the row of “sat” puts 0.62 on “mat”, its largest weight"}]


def test_every_figure_kind_takes_focus_and_walks_its_cells_by_keys():
    """Each KINDS entry of live_figures.js has the keyboard's parts: key help, a cursor, its cells."""
    js = (PACKAGE / "live_figures.js").read_text(encoding="utf-8")
    for kind in _LIVE.LiveFigure.kinds():
        block = js[js.index(f"KINDS.{kind} = {{"):]
        block = block[:block.index("\n};\n")]
        for part in ("keys", "cursor(", "cells(", "readout(", "cellRect("):
            assert re.search(rf"^  {re.escape(part)}", block, re.M), f"KINDS.{kind} has no {part}"


@pytest.mark.parametrize("cmap", ["viridis", "cividis"])
def test_the_one_ink_switch_gives_every_entry_4_5_to_1_in_the_browser_and_on_the_page(cmap):
    """Issue 55: the black/white switch sits at the luminance where the two contrast equally (≈ 0.179), and
    every one of the 256 entries of each map gets ≥ 4.5:1 from the ink chosen for it: in the live heatmaps'
    table (what the browser writes with), in the stills' numbers, and in lesson 08's numbered tiles (which
    switched on an RGB sum of 1.5 and left 8 % of its cividis range under 4.5:1, worst 3.87:1)."""
    from lessons_lib.figures.base import text_colour_on

    lut = _lut(cmap)
    switch = style.INK_SWITCH_LUMINANCE
    assert abs((switch + 0.05) / 0.05 - 1.05 / (switch + 0.05)) < 1e-12          # both contrast equally
    white = np.frombuffer(style.ink_table(cmap), np.uint8).astype(bool)
    stills = np.array([text_colour_on(rgb / 255) == "white" for rgb in lut])
    np.testing.assert_array_equal(white, stills)
    hexes = ["#" + bytes(rgb.astype(np.uint8)).hex() for rgb in lut]
    np.testing.assert_array_equal(white, [style.ink_for(h) == style.INK_LIGHT for h in hexes])
    ink = np.where(white[:, None], 255, 0) * np.ones(3, dtype=int)
    ratios = style.contrast_ratio(lut, ink)
    low = [(i, round(r, 2)) for i, r in enumerate(ratios) if r < style.MIN_TEXT_CONTRAST]
    assert not low, f"{cmap}: entries under 4.5:1 (entry, ratio): {low}"


def test_lesson_08s_numbered_tiles_reach_4_5_to_1_on_their_colours():
    from lessons_lib.figures import lesson08_cost_and_flashattention as cost_plots

    fig = cost_plots.plot_tile_grid(64, 64, 4)          # 256 tiles: the whole range of the tiles' colours
    ax = fig.axes[0]
    faces = {(round(p.get_x() + p.get_width() / 2, 6), round(p.get_y() + p.get_height() / 2, 6)):
             p.get_facecolor() for p in ax.patches if p.get_fill()}
    checked = 0
    for text in ax.texts:
        face = faces.get((round(text.get_position()[0], 6), round(text.get_position()[1], 6)))
        if face is None:
            continue
        ink = np.array(matplotlib.colors.to_rgb(text.get_color())) * 255
        assert style.contrast_ratio(np.array(face[:3]) * 255, ink) >= style.MIN_TEXT_CONTRAST, text.get_text()
        checked += 1
    assert checked >= 200
