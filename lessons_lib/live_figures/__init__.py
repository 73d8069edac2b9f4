"""Live figures drawn in the browser: a heatmap, a grid of heatmaps, bars, a line plot, X · W = Q.

Each class is an `anywidget <https://anywidget.dev>`_ widget: the kernel sends
numbers, the browser draws them on a ``<canvas>`` (``live_figures.js`` beside
this file, loaded as it is: no CDN, no build step). So a slider move costs a
few kB and one animation frame, hovering a cell shows its value, clicking a row
label selects that row, and a "⤓ PNG" button saves the picture, all without a
kernel round trip. The widgets run wherever anywidget runs: JupyterLab,
Notebook 7, VS Code, Colab.

* :class:`Heatmap`: one matrix with token labels (thinned past 32 tokens),
  a colorbar, masked cells hatched, an optional highlighted row, values written
  in the cells when they fit. ``draw(matrix, rows, cols, vmin=, vmax=, mask=, highlight_row=)``.
* :class:`HeatmapGrid`: several matrices with shared labels and colour range
  (one per attention head): thumbnails, hover read-out, click to select one
  (``selected``), the panel under the pointer in ``hovered``.
* :class:`Bars`: one query's weights, masked keys drawn as masked, not as 0.
* :class:`LinePlot`: lines and markers (log axes optional), one movable marker.
* :class:`MatrixProduct`: three matrices side by side, A · B = C, drawn to scale.

How data travels: a matrix crosses as float32 bytes (exact hover values) up to
:data:`F32_MAX_CELLS` cells, beyond that as zlib-compressed 8-bit colour
indices (the colour is still exact; the hover value is then the middle of its
1/256 colour bin and shown with "≈"). Masks cross as packed bits. Each widget
sends one message per ``draw`` (``hold_sync``) and only the traits that changed,
so token labels and colour tables cross once. The browser draws at most once per
animation frame, always the newest state.

Example::

    >>> from lessons_lib.live_figures import Heatmap
    >>> import numpy as np
    >>> hm = Heatmap(title="Attention weights", colorbar_label="weight", cmap="viridis", percent=True)
    >>> hm.draw(np.full((2, 2), 0.5), ["a", "b"], ["a", "b"], vmin=0.0, vmax=1.0, highlight_row=1)
    >>> hm.shape, hm.encoding, hm.highlight_row
    ([2, 2], 'f32', 1)
"""

from __future__ import annotations

import numbers
import zlib
from pathlib import Path
from typing import NamedTuple

import anywidget
import numpy as np
import traitlets as t

from .. import style
from .._checks import as_bool_mask, as_float_array

__all__ = ["Heatmap", "HeatmapGrid", "Bars", "LinePlot", "MatrixProduct", "ProductPanel", "LiveFigure"]

_HERE = Path(__file__).resolve().parent
_ESM = (_HERE / "live_figures.js").read_text(encoding="utf-8")
_CSS = (_HERE / "live_figures.css").read_text(encoding="utf-8")

F32_MAX_CELLS = 2048        # up to this many cells a matrix crosses as float32 (8 kB)
MAX_LIVE_CELLS = 512 * 512  # a live figure draws at most this many cells (all panels together)


# ------------------------------------------------------------------ encoding
def encode_matrix(m: np.ndarray, vmin: float, vmax: float) -> tuple[str, bytes]:
    """``("f32", float32 bytes)`` for small matrices, ``("u8z", zlib(8-bit colour indices))`` for large ones.

    The colour index of a value is matplotlib's: ``floor(256 · (v − vmin)/(vmax − vmin))``,
    clipped to 0..255 (so the 256-entry table gives exactly matplotlib's colour).

    >>> encode_matrix(np.zeros((2, 2)), 0.0, 1.0)[0]
    'f32'
    >>> encode_matrix(np.zeros((64, 64)), 0.0, 1.0)[0]
    'u8z'
    """
    finite = np.where(np.isfinite(m), m, vmin)
    if m.size <= F32_MAX_CELLS:
        return "f32", np.ascontiguousarray(finite, dtype="<f4").tobytes()
    x = (finite - vmin) * (256.0 / (vmax - vmin))
    idx = np.clip(np.floor(x), 0, 255).astype(np.uint8)
    return "u8z", zlib.compress(idx.tobytes(), 6)


def decode_matrix(encoding: str, payload: bytes, shape, vmin: float = 0.0, vmax: float = 1.0) -> np.ndarray:
    """The values a browser reads from ``encode_matrix``'s output (bin centres for 8-bit data); for tests."""
    if encoding == "f32":
        return np.frombuffer(payload, dtype="<f4").reshape(shape).astype(np.float64)
    idx = np.frombuffer(zlib.decompress(payload), dtype=np.uint8).reshape(shape)
    return vmin + (idx + 0.5) / 256 * (vmax - vmin)


def pack_mask(hidden: np.ndarray) -> bytes:
    """Hidden (masked) cells as packed bits, first cell in the highest bit; ``b""`` when none is hidden."""
    return np.packbits(hidden.ravel()).tobytes() if hidden.any() else b""


# ------------------------------------------------------------------ checks
def _check_text(value, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {value!r} ({type(value).__name__}).")
    return value


def _check_labels(labels, n: int, name: str, what: str) -> list[str]:
    if labels is None:
        return [str(i) for i in range(n)]
    if isinstance(labels, str):
        raise TypeError(f"{name} must be a list with one label per {what}, not the string {labels!r}; "
                        f"use tokenize(sentence) to split a sentence into tokens.")
    try:
        out = [str(x) for x in labels]
    except TypeError:
        raise TypeError(f"{name} must be a list of labels; got {type(labels).__name__}.") from None
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but there are {n} {what}s: "
                         f"give one label per {what}.")
    return out


def _check_cells(n_cells: int, shape: tuple, what: str) -> None:
    if n_cells > MAX_LIVE_CELLS:
        raise ValueError(
            f"{what} of shape {shape} has {n_cells:,} cells; a live figure draws at most "
            f"{MAX_LIVE_CELLS:,} (512 × 512). Show a slice (e.g. matrix[:128, :128]) or a pooled view "
            f"(e.g. the mean over blocks of 8 × 8 cells), or draw it as a still with lessons_lib.plots."
        )


def _check_number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise TypeError(f"{name} must be a finite number; got {value!r}.")
    return float(value)


def _color_range(shown: np.ndarray, vmin, vmax) -> tuple[float, float]:
    lo = _check_number(vmin, "vmin") if vmin is not None else (float(shown.min()) if shown.size else 0.0)
    hi = _check_number(vmax, "vmax") if vmax is not None else (float(shown.max()) if shown.size else 1.0)
    if lo > hi:
        raise ValueError(f"vmin={lo} is larger than vmax={hi}; the colour scale needs vmin < vmax.")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _hidden_cells(m: np.ndarray, mask, name: str = "mask") -> np.ndarray:
    """True where a cell is masked: ``mask`` False (True = may attend) or a non-finite value (−∞ score)."""
    hidden = ~np.isfinite(m)
    if mask is not None:
        allowed = as_bool_mask(mask, name)
        try:
            allowed = np.broadcast_to(allowed, m.shape)
        except ValueError:
            raise ValueError(f"{name} has shape {allowed.shape}, which does not fit the matrix's shape "
                             f"{m.shape}; give one True/False per cell (True = may attend).") from None
        hidden = hidden | ~allowed
    return hidden


def _int_or_none(value, name: str, n: int) -> int:
    """-1 for None, else an index 0..n-1."""
    if value is None:
        return -1
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number (a row index) or None; got {value!r}.")
    if not 0 <= value < n:
        raise ValueError(f"{name} must be from 0 to {n - 1}; got {value}.")
    return int(value)


# ------------------------------------------------------------------ the widgets
class LiveFigure(anywidget.AnyWidget):
    """Base of the live figures: the JavaScript, the size in CSS pixels, a title and an alt text.

    ``width``/``height`` are fixed, so a redraw never makes the page jump. ``alt``
    is the figure's description for screen readers (the canvas's aria-label); the
    explorers write their settings there ("d_k = 64"), which the browser test reads.
    """

    _esm = _ESM
    _css = _CSS
    _kind = t.Unicode("").tag(sync=True)
    title = t.Unicode("").tag(sync=True)
    alt = t.Unicode("").tag(sync=True)
    width = t.Int(480).tag(sync=True)
    height = t.Int(420).tag(sync=True)

    def __init__(self, *, width: int = 480, height: int = 420, title: str = "", **kwargs):
        for value, name in ((width, "width"), (height, "height")):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 80 <= value <= 4000:
                raise ValueError(f"{name} must be a whole number of pixels from 80 to 4000; got {value!r}.")
        super().__init__(width=int(width), height=int(height), title=_check_text(title, "title"), **kwargs)
        self.add_class("lessons-live")

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, tuple):
            data = data[0]
        data = dict(data or {})
        data["text/plain"] = (f"{type(self).__name__}: {self.alt or self.title or 'live figure'} "
                              f"(drawn in the browser; run the notebook in JupyterLab to see it)")
        return data


class _MatrixFigure(LiveFigure):
    """What heatmaps and heatmap grids share: binary values, mask bits, labels, ticks, colour table."""

    values = t.Bytes(b"").tag(sync=True)
    encoding = t.Unicode("f32").tag(sync=True)
    mask = t.Bytes(b"").tag(sync=True)
    row_labels = t.List(t.Unicode()).tag(sync=True)
    col_labels = t.List(t.Unicode()).tag(sync=True)
    row_ticks = t.List(t.Int()).tag(sync=True)
    col_ticks = t.List(t.Int()).tag(sync=True)
    vmin = t.Float(0.0).tag(sync=True)
    vmax = t.Float(1.0).tag(sync=True)
    cmap = t.Unicode(style.CMAP_WEIGHTS).tag(sync=True)
    lut = t.Bytes(b"").tag(sync=True)
    xlabel = t.Unicode(style.XLABEL).tag(sync=True)
    ylabel = t.Unicode(style.YLABEL).tag(sync=True)
    colorbar_label = t.Unicode("").tag(sync=True)
    decimals = t.Int(2).tag(sync=True)
    annotate_max = t.Int(12).tag(sync=True)
    percent = t.Bool(False).tag(sync=True)
    row_name = t.Unicode("query").tag(sync=True)
    col_name = t.Unicode("key").tag(sync=True)

    def __init__(self, *, cmap: str = style.CMAP_WEIGHTS, colorbar_label: str = "",
                 xlabel: str = style.XLABEL, ylabel: str = style.YLABEL, decimals: int = 2,
                 annotate_max: int = 12, percent: bool = False, row_name: str = "query",
                 col_name: str = "key", **kwargs):
        style.check_colormap(cmap)
        if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or not 0 <= decimals <= 6:
            raise ValueError(f"decimals (digits written in each cell) must be 0 to 6; got {decimals!r}.")
        if isinstance(annotate_max, bool) or not isinstance(annotate_max, numbers.Integral) \
                or annotate_max < 0:
            raise ValueError(f"annotate_max must be a whole number ≥ 0; got {annotate_max!r}.")
        if not isinstance(percent, bool):
            raise TypeError(f"percent must be True or False; got {percent!r}.")
        super().__init__(cmap=cmap, lut=style.colormap_table(cmap),
                         colorbar_label=_check_text(colorbar_label, "colorbar_label"),
                         xlabel=_check_text(xlabel, "xlabel"), ylabel=_check_text(ylabel, "ylabel"),
                         decimals=int(decimals), annotate_max=int(annotate_max), percent=percent,
                         row_name=_check_text(row_name, "row_name"),
                         col_name=_check_text(col_name, "col_name"),
                         **kwargs)
        self.matrix: np.ndarray | None = None
        self.hidden: np.ndarray | None = None

    @t.observe("cmap")
    def _cmap_changed(self, change):
        self.lut = style.colormap_table(style.check_colormap(change["new"]))

    def _labels_and_ticks(self, rows: list[str], cols: list[str]) -> dict:
        return {"row_labels": rows, "col_labels": cols,
                "row_ticks": style.tick_indices(len(rows)).tolist(),
                "col_ticks": style.tick_indices(len(cols)).tolist()}


class Heatmap(_MatrixFigure):
    """A matrix as a heatmap drawn in the browser, with token labels, colorbar, mask and hover read-out.

    Build it once, then call :meth:`draw` on every change; only what changed
    crosses to the browser. Hovering a cell shows "query “sat” → key “cat”: 0.248
    (24.8%)" (the percentage with ``percent=True``); with ``selectable=True`` a click
    on a row (or its label) sets ``highlight_row``, and :meth:`on_select` callbacks run.

    Example::

        hm = Heatmap(title="Attention weights", colorbar_label="weight (rows sum to 1)",
                     cmap="viridis", percent=True, selectable=True)
        hm.draw(weights, tokens, tokens, vmin=0.0, vmax=1.0, mask=causal_mask(len(tokens)),
                highlight_row=2)
        hm.on_select(lambda row: print("query", row))
        hm                     # the last line of a cell shows it

    ``.matrix`` holds the matrix last drawn (float64), ``.hidden`` its masked cells.
    """

    _kind = t.Unicode("heatmap").tag(sync=True)
    shape = t.List(t.Int(), default_value=[0, 0]).tag(sync=True)
    highlight_row = t.Int(-1).tag(sync=True)
    selectable = t.Bool(False).tag(sync=True)

    def __init__(self, *, title: str = "", colorbar_label: str = "", cmap: str = style.CMAP_WEIGHTS,
                 xlabel: str = style.XLABEL, ylabel: str = style.YLABEL, width: int = 480, height: int = 440,
                 decimals: int = 2, annotate_max: int = 12, percent: bool = False, selectable: bool = False,
                 row_name: str = "query", col_name: str = "key"):
        super().__init__(title=title, colorbar_label=colorbar_label, cmap=cmap, xlabel=xlabel, ylabel=ylabel,
                         width=width, height=height, decimals=decimals, annotate_max=annotate_max,
                         percent=percent, row_name=row_name, col_name=col_name, selectable=bool(selectable))
        self._drawing = False
        self._on_select: list = []
        self.observe(self._selected_in_browser, names="highlight_row")

    def draw(self, matrix, row_labels=None, col_labels=None, *, vmin=None, vmax=None, mask=None,
             highlight_row=None, title: str | None = None, alt: str | None = None) -> None:
        """Show ``matrix`` (n_rows, n_cols); ``mask`` True = may attend (False cells and −∞ are hatched).

        ``vmin``/``vmax`` fix the colour range (default: the range of the shown
        cells). ``highlight_row`` frames one row. Labels default to 0, 1, 2, ...
        """
        m = as_float_array(matrix, "matrix", min_ndim=2, allow_neg_inf=True)
        if m.ndim != 2:
            raise ValueError(f"matrix must be 2-D (rows, columns); got shape {m.shape}. "
                             f"For several heads use HeatmapGrid, or draw one slice, e.g. matrix[0].")
        _check_cells(m.size, m.shape, "matrix")
        rows = _check_labels(row_labels, m.shape[0], "row_labels", "row")
        cols = _check_labels(col_labels, m.shape[1], "col_labels", "column")
        hidden = _hidden_cells(m, mask)
        lo, hi = _color_range(m[~hidden], vmin, vmax)
        enc, payload = encode_matrix(m, lo, hi)
        state = {"values": payload, "encoding": enc, "shape": list(m.shape), "mask": pack_mask(hidden),
                 "vmin": lo, "vmax": hi,
                 "highlight_row": _int_or_none(highlight_row, "highlight_row", m.shape[0]),
                 **self._labels_and_ticks(rows, cols)}
        if title is not None:
            state["title"] = _check_text(title, "title")
        state["alt"] = alt if alt is not None else (
            f"{(title or self.title).splitlines()[0] if (title or self.title) else 'Heatmap'}: "
            f"{m.shape[0]} × {m.shape[1]} values, colour range {lo:.3g} to {hi:.3g}")
        self._drawing = True
        try:
            with self.hold_sync():
                for name, value in state.items():
                    setattr(self, name, value)
        finally:
            self._drawing = False
        self.matrix, self.hidden = m.astype(np.float64, copy=True), hidden

    def on_select(self, callback) -> None:
        """Call ``callback(row)`` when the learner clicks a row in the browser (needs ``selectable=True``)."""
        if not callable(callback):
            raise TypeError(f"callback must be a function taking the row index; got {callback!r}.")
        self._on_select.append(callback)

    def _selected_in_browser(self, change) -> None:
        if self._drawing:
            return
        for callback in self._on_select:
            callback(change["new"])


class HeatmapGrid(_MatrixFigure):
    """Several matrices of one shape (e.g. one per attention head) as a grid of small heatmaps.

    Shared token labels and one colour range (one colorbar). Hover shows the
    panel, the cell and its value; a click on a panel toggles ``selected`` (its
    index, -1 for none; a frame marks it); the panel under the pointer is in
    ``hovered`` (-1 for none). Observe either with ``grid.observe(fn, "selected")``.

    Example::

        grid = HeatmapGrid(title="8 heads", colorbar_label="weight", columns=4, width=1000, height=560)
        grid.draw(weights, tokens, tokens, vmin=0.0, vmax=1.0,
                  panel_titles=[f"head {h}" for h in range(8)])        # weights (8, L, L)
    """

    _kind = t.Unicode("grid").tag(sync=True)
    shape = t.List(t.Int(), default_value=[0, 0, 0]).tag(sync=True)
    panel_titles = t.List(t.Unicode()).tag(sync=True)
    columns = t.Int(4).tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    hovered = t.Int(-1).tag(sync=True)

    def __init__(self, *, title: str = "", colorbar_label: str = "", cmap: str = style.CMAP_WEIGHTS,
                 columns: int = 4, xlabel: str = "", ylabel: str = "", width: int = 960, height: int = 520,
                 decimals: int = 2, annotate_max: int = 0, percent: bool = False,
                 row_name: str = "query", col_name: str = "key"):
        if isinstance(columns, bool) or not isinstance(columns, numbers.Integral) or columns < 1:
            raise ValueError(f"columns must be a whole number ≥ 1 (panels per row); got {columns!r}.")
        super().__init__(title=title, colorbar_label=colorbar_label, cmap=cmap, xlabel=xlabel, ylabel=ylabel,
                         width=width, height=height, decimals=decimals, annotate_max=annotate_max,
                         percent=percent, row_name=row_name, col_name=col_name, columns=int(columns))

    def draw(self, matrices, row_labels=None, col_labels=None, *, vmin=None, vmax=None, mask=None,
             panel_titles=None, title: str | None = None, alt: str | None = None) -> None:
        """Show ``matrices`` (n_panels, n_rows, n_cols), all on one colour range; ``mask`` as in Heatmap."""
        m = as_float_array(matrices, "matrices", min_ndim=3, allow_neg_inf=True)
        if m.ndim != 3:
            raise ValueError(f"matrices must be 3-D (n_panels, rows, columns), e.g. (n_heads, L, L); "
                             f"got shape {m.shape}.")
        _check_cells(m.size, m.shape, "matrices")
        n, r, c = m.shape
        rows = _check_labels(row_labels, r, "row_labels", "row")
        cols = _check_labels(col_labels, c, "col_labels", "column")
        titles = _check_labels(panel_titles if panel_titles is not None else [f"{k}" for k in range(n)],
                               n, "panel_titles", "panel")
        hidden = _hidden_cells(m, None)
        if mask is not None:
            hidden = hidden | _hidden_cells(np.zeros((r, c)), mask)[None]
        shared = hidden.all(axis=0)
        if (hidden != shared[None]).any():
            raise ValueError("every panel of a HeatmapGrid shares one mask; a non-finite value appears in "
                             "some panels only. Pass mask=... (True = may attend) instead of −∞ values.")
        lo, hi = _color_range(m[~hidden], vmin, vmax)
        enc, payload = encode_matrix(m, lo, hi)
        state = {"values": payload, "encoding": enc, "shape": [n, r, c], "mask": pack_mask(shared),
                 "vmin": lo, "vmax": hi, "panel_titles": titles, **self._labels_and_ticks(rows, cols)}
        if title is not None:
            state["title"] = _check_text(title, "title")
        state["alt"] = alt if alt is not None else (
            f"{(title or self.title).splitlines()[0] if (title or self.title) else 'Heatmaps'}: "
            f"{n} panels of {r} × {c} values, colour range {lo:.3g} to {hi:.3g}")
        with self.hold_sync():
            for name, value in state.items():
                setattr(self, name, value)
        self.matrix, self.hidden = m.astype(np.float64, copy=True), shared


class Bars(LiveFigure):
    """A bar chart of one query's weights over the keys; masked keys are grey hatched slots marked ✗.

    Values are written above the bars while there are at most 16; hover shows
    "key “cat” (1): 0.248 (24.8%)".

    Example::

        bars = Bars(title="Where “sat” looks", ylabel="attention weight")
        bars.draw(weights[2], tokens, mask=causal_mask(7)[2])
    """

    _kind = t.Unicode("bars").tag(sync=True)
    values = t.Bytes(b"").tag(sync=True)
    mask = t.Bytes(b"").tag(sync=True)
    labels = t.List(t.Unicode()).tag(sync=True)
    ticks = t.List(t.Int()).tag(sync=True)
    ymax = t.Float(1.0).tag(sync=True)
    xlabel = t.Unicode(style.XLABEL).tag(sync=True)
    ylabel = t.Unicode("attention weight").tag(sync=True)
    color = t.Unicode("").tag(sync=True)
    percent = t.Bool(True).tag(sync=True)
    bar_name = t.Unicode("key").tag(sync=True)
    decimals = t.Int(2).tag(sync=True)

    def __init__(self, *, title: str = "", xlabel: str = style.XLABEL, ylabel: str = "attention weight",
                 width: int = 480, height: int = 300, ymax: float = 1.0, percent: bool = True,
                 bar_name: str = "key", decimals: int = 2):
        super().__init__(title=title, width=width, height=height, xlabel=_check_text(xlabel, "xlabel"),
                         ylabel=_check_text(ylabel, "ylabel"), ymax=_check_number(ymax, "ymax"),
                         percent=bool(percent), bar_name=_check_text(bar_name, "bar_name"),
                         decimals=int(decimals), color=_bar_colour())
        self.bar_values: np.ndarray | None = None

    def draw(self, values, labels=None, *, mask=None, title: str | None = None,
             alt: str | None = None) -> None:
        """Show one bar per entry of ``values`` (n,); ``mask`` (n,) True = may attend (False: hatched ✗)."""
        v = as_float_array(values, "values")
        if v.ndim != 1:
            raise ValueError(f"values must be one row, shape (n,); got shape {v.shape}. "
                             f"Pick a row: weights[i].")
        _check_cells(v.size, v.shape, "values")
        names = _check_labels(labels, v.size, "labels", "bar")
        hidden = _hidden_cells(v, mask)
        state = {"values": np.ascontiguousarray(np.where(hidden, 0.0, v), dtype="<f4").tobytes(),
                 "mask": pack_mask(hidden), "labels": names, "ticks": style.tick_indices(v.size).tolist()}
        if title is not None:
            state["title"] = _check_text(title, "title")
        state["alt"] = alt if alt is not None else f"{title or self.title or 'Bars'}: {v.size} bars"
        with self.hold_sync():
            for name, value in state.items():
                setattr(self, name, value)
        self.bar_values = v.astype(np.float64, copy=True)


def _bar_colour() -> str:
    rgb = style.colormap_table(style.CMAP_WEIGHTS)[3 * 89:3 * 89 + 3]  # viridis at 0.35, as plots uses
    return "#" + bytes(rgb).hex()


class LinePlot(LiveFigure):
    """Lines and markers, optionally on log₂ axes, with one movable marker (a dashed line and a ring).

    ``series``: a list of dicts ``{"label", "x", "y", "mode": "line" | "markers",
    "marker": "o" | "s", "color": "#rrggbb", "dash": bool}``; set once.
    :meth:`mark` moves the marker (cheap: a few numbers cross).

    Example::

        plot = LinePlot(title="var(q·k) against d_k", xlabel="d_k", ylabel="variance", log_x=True, log_y=True)
        plot.set_series([{"label": "var = d_k", "x": [1, 512], "y": [1, 512], "mode": "line"},
                         {"label": "measured", "x": d_ks, "y": variances, "mode": "markers"}])
        plot.mark(64, 63.4)
    """

    _kind = t.Unicode("lines").tag(sync=True)
    series = t.List(t.Dict()).tag(sync=True)
    marker = t.Dict().tag(sync=True)
    log_x = t.Bool(False).tag(sync=True)
    log_y = t.Bool(False).tag(sync=True)
    xlabel = t.Unicode("").tag(sync=True)
    ylabel = t.Unicode("").tag(sync=True)
    xticks = t.List(t.Float()).tag(sync=True)

    def __init__(self, *, title: str = "", xlabel: str = "", ylabel: str = "", log_x: bool = False,
                 log_y: bool = False, width: int = 520, height: int = 380, xticks=None):
        super().__init__(title=title, width=width, height=height, xlabel=_check_text(xlabel, "xlabel"),
                         ylabel=_check_text(ylabel, "ylabel"), log_x=bool(log_x), log_y=bool(log_y),
                         xticks=[float(x) for x in (xticks or [])])

    def set_series(self, series) -> None:
        """Replace the plotted series (see the class docstring for the keys)."""
        out = []
        for k, s in enumerate(series):
            if not isinstance(s, dict) or "x" not in s or "y" not in s:
                raise TypeError(f"series[{k}] must be a dict with 'x' and 'y' lists; got {s!r}.")
            x = as_float_array(_numbers(s["x"], f"series[{k}]['x']"), f"series[{k}]['x']")
            y = as_float_array(_numbers(s["y"], f"series[{k}]['y']"), f"series[{k}]['y']")
            if x.shape != y.shape or x.ndim != 1:
                raise ValueError(f"series[{k}]: x and y must be 1-D and of equal length; "
                                 f"got {x.shape}, {y.shape}.")
            for axis, vals, log in (("x", x, self.log_x), ("y", y, self.log_y)):
                if log and (vals <= 0).any():
                    raise ValueError(f"series[{k}]: {axis} must be positive on a log axis.")
            mode = s.get("mode", "markers")
            if mode not in ("line", "markers"):
                raise ValueError(f"series[{k}]['mode'] must be 'line' or 'markers'; got {mode!r}.")
            out.append({"label": str(s.get("label", "")), "x": x.tolist(), "y": y.tolist(), "mode": mode,
                        "marker": s.get("marker", "o"), "color": s.get("color", "#555555"),
                        "dash": bool(s.get("dash", False))})
        self.series = out

    def mark(self, x, y=None, *, shape: str = "o", title: str | None = None, alt: str | None = None) -> None:
        """Move the marker to ``x`` (a dashed vertical line), with a ring (or square) at ``(x, y)``."""
        if shape not in ("o", "s"):
            raise ValueError(f"shape must be 'o' (a ring) or 's' (a square); got {shape!r}.")
        marker = {"x": _check_number(x, "x"), "y": None if y is None else _check_number(y, "y"),
                  "shape": shape}
        with self.hold_sync():
            self.marker = marker
            if title is not None:
                self.title = _check_text(title, "title")
            self.alt = alt if alt is not None else f"{self.title or 'Plot'}: marker at {x:g}"


def _numbers(values, name: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a list of numbers; got {values!r}.") from None


class ProductPanel(NamedTuple):
    """One matrix of a :class:`MatrixProduct`: values, row and column labels, title, axis labels, range."""

    matrix: object
    rows: object = None
    cols: object = None
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    vmin: float | None = None
    vmax: float | None = None


class MatrixProduct(LiveFigure):
    """A · B = C drawn to scale: three heatmaps with "·" and "=", cells of one size, so C widens with B.

    Each panel has its own colour range (written under it). Column ticks are
    thinned to round steps (0, 8, 16, ...) so they stay readable at any width;
    hover shows the panel, the row, the column and the value.

    Example::

        fig = MatrixProduct(title="Step 1: X · W_Q = Q", width=1100, height=330)
        fig.draw(ProductPanel(x, tokens, None, "X\\n7 × 8", "feature (d_model)", "token"),
                 ProductPanel(w_q, None, None, "W_Q\\n8 × 4", "column (d_k)", "row (d_model)"),
                 ProductPanel(q, tokens, None, "Q = X·W_Q\\n7 × 4", "feature (d_k)", "token"))
    """

    _kind = t.Unicode("product").tag(sync=True)
    lut = t.Bytes(b"").tag(sync=True)
    max_cell = t.Int(22).tag(sync=True)
    colorbar_label = t.Unicode("").tag(sync=True)
    a, b, c = (t.Bytes(b"").tag(sync=True) for _ in range(3))
    a_shape, b_shape, c_shape = (t.List(t.Int(), default_value=[0, 0]).tag(sync=True) for _ in range(3))
    a_range, b_range, c_range = (t.List(t.Float(), default_value=[0.0, 1.0]).tag(sync=True) for _ in range(3))
    a_rows, b_rows, c_rows = (t.List(t.Unicode()).tag(sync=True) for _ in range(3))
    a_cols, b_cols, c_cols = (t.List(t.Unicode()).tag(sync=True) for _ in range(3))
    a_title, b_title, c_title = (t.Unicode("").tag(sync=True) for _ in range(3))
    a_xlabel, b_xlabel, c_xlabel = (t.Unicode("").tag(sync=True) for _ in range(3))
    a_ylabel, b_ylabel, c_ylabel = (t.Unicode("").tag(sync=True) for _ in range(3))

    def __init__(self, *, title: str = "", cmap: str = style.CMAP_VALUES, width: int = 1100,
                 height: int = 330, max_cell: int = 22):
        super().__init__(title=title, width=width, height=height,
                         lut=style.colormap_table(style.check_colormap(cmap)), max_cell=int(max_cell))
        self.matrices: dict[str, np.ndarray] = {}

    def draw(self, a: ProductPanel, b: ProductPanel, c: ProductPanel, *, title: str | None = None,
             alt: str | None = None) -> None:
        """Show the three panels; a panel whose numbers did not change costs nothing to send."""
        mats = {}
        state: dict = {}
        for key, panel in (("a", a), ("b", b), ("c", c)):
            if not isinstance(panel, ProductPanel):
                panel = ProductPanel(*panel) if isinstance(panel, tuple) else ProductPanel(panel)
            m = as_float_array(panel.matrix, f"panel {key}", min_ndim=2)
            if m.ndim != 2:
                raise ValueError(f"panel {key} must be a 2-D matrix; got shape {m.shape}.")
            _check_cells(m.size, m.shape, f"panel {key}")
            lo, hi = _color_range(m, panel.vmin, panel.vmax)
            mats[key] = m
            state.update({
                key: np.ascontiguousarray(m, dtype="<f4").tobytes(), f"{key}_shape": list(m.shape),
                f"{key}_range": [lo, hi],
                f"{key}_rows": _check_labels(panel.rows, m.shape[0], f"panel {key} rows", "row"),
                f"{key}_cols": _check_labels(panel.cols, m.shape[1], f"panel {key} cols", "column"),
                f"{key}_title": _check_text(panel.title, "title"),
                f"{key}_xlabel": _check_text(panel.xlabel, "xlabel"),
                f"{key}_ylabel": _check_text(panel.ylabel, "ylabel"),
            })
        if mats["a"].shape[1] != mats["b"].shape[0]:
            raise ValueError(f"A has {mats['a'].shape[1]} columns but B has {mats['b'].shape[0]} rows; "
                             f"in A·B the inner sizes must match "
                             f"(A is {mats['a'].shape}, B is {mats['b'].shape}).")
        if mats["c"].shape != (mats["a"].shape[0], mats["b"].shape[1]):
            raise ValueError(f"C has shape {mats['c'].shape}, but A·B has shape "
                             f"({mats['a'].shape[0]}, {mats['b'].shape[1]}).")
        if title is not None:
            state["title"] = _check_text(title, "title")
        state["alt"] = alt if alt is not None else (
            f"{mats['a'].shape} · {mats['b'].shape} = {mats['c'].shape}")
        with self.hold_sync():
            for name, value in state.items():
                setattr(self, name, value)
        self.matrices = {k: v.astype(np.float64, copy=True) for k, v in mats.items()}
