"""The live heatmap: one matrix with token labels, a colorbar, masked cells hatched.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..._checks import as_float_array, check_cells, check_labels, color_range, int_or_none
from .. import style
from .base import MatrixFigure, hidden_cells
from .wire import encode_matrix, pack_mask


class Heatmap(MatrixFigure):
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

    NAME = "Heatmap"
    _kind = t.Unicode("heatmap").tag(sync=True)
    shape = t.List(t.Int(), default_value=[0, 0]).tag(sync=True)
    highlight_row = t.Int(-1).tag(sync=True)
    selectable = t.Bool(False).tag(sync=True)

    def __init__(self, *, title: str = "", colorbar_label: str = "", cmap: str = style.CMAP_WEIGHTS,
                 xlabel: str = style.XLABEL, ylabel: str = style.YLABEL, width: int = 480, height: int = 440,
                 decimals: int = 2, annotate_max: int = 12, percent: bool = False, selectable: bool = False,
                 row_name: str = "query", col_name: str = "key", hidden_text: str = ""):
        super().__init__(title=title, colorbar_label=colorbar_label, cmap=cmap, xlabel=xlabel, ylabel=ylabel,
                         width=width, height=height, decimals=decimals, annotate_max=annotate_max,
                         percent=percent, row_name=row_name, col_name=col_name,
                         hidden_text=hidden_text, selectable=bool(selectable))
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
        check_cells(m.size, m.shape, "matrix")
        rows = check_labels(row_labels, m.shape[0], "row_labels", "row")
        cols = check_labels(col_labels, m.shape[1], "col_labels", "column")
        hidden = hidden_cells(m, mask)
        lo, hi = color_range(m[~hidden], vmin, vmax)
        enc, payload = encode_matrix(m, lo, hi)
        state = {"values": payload, "encoding": enc, "shape": list(m.shape), "mask": pack_mask(hidden),
                 "vmin": lo, "vmax": hi,
                 "highlight_row": int_or_none(highlight_row, "highlight_row", m.shape[0]),
                 **self._labels_and_ticks(rows, cols)}
        self._drawing = True
        try:
            self.send(state, title=title, alt=alt,
                      summary=f"{m.shape[0]} × {m.shape[1]} values, colour range {lo:.3g} to {hi:.3g}")
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
