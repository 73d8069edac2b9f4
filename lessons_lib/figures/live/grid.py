"""The live heatmap grid: several matrices with shared labels and colour range (one per head).
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..._checks import as_float_array, check_cells, check_labels, color_range, is_whole_number
from .. import style
from .base import MatrixFigure, hidden_cells
from .wire import encode_matrix, pack_mask


class HeatmapGrid(MatrixFigure):
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

    NAME = "Heatmaps"
    _kind = t.Unicode("grid").tag(sync=True)
    shape = t.List(t.Int(), default_value=[0, 0, 0]).tag(sync=True)
    panel_titles = t.List(t.Unicode()).tag(sync=True)
    columns = t.Int(4).tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    hovered = t.Int(-1).tag(sync=True)

    def __init__(self, *, title: str = "", colorbar_label: str = "", cmap: str = style.CMAP_WEIGHTS,
                 columns: int = 4, xlabel: str = "", ylabel: str = "", width: int = 960, height: int = 520,
                 decimals: int = 2, annotate_max: int = 0, percent: bool = False,
                 row_name: str = "query", col_name: str = "key", hidden_text: str = ""):
        if not is_whole_number(columns) or columns < 1:
            raise ValueError(f"columns must be a whole number ≥ 1 (panels per row); got {columns!r}.")
        super().__init__(title=title, colorbar_label=colorbar_label, cmap=cmap, xlabel=xlabel, ylabel=ylabel,
                         width=width, height=height, decimals=decimals, annotate_max=annotate_max,
                         percent=percent, row_name=row_name, col_name=col_name,
                         hidden_text=hidden_text, columns=int(columns))

    def draw(self, matrices, row_labels=None, col_labels=None, *, vmin=None, vmax=None, mask=None,
             panel_titles=None, title: str | None = None, alt: str | None = None) -> None:
        """Show ``matrices`` (n_panels, n_rows, n_cols), all on one colour range; ``mask`` as in Heatmap."""
        if np.ndim(matrices) != 3:
            raise ValueError(f"matrices must be 3-D (n_panels, rows, columns), e.g. (n_heads, L, L); "
                             f"got shape {np.shape(matrices)}.")
        m = as_float_array(matrices, "matrices", min_ndim=3, allow_neg_inf=True)
        check_cells(m.size, m.shape, "matrices")
        n, r, c = m.shape
        rows = check_labels(row_labels, r, "row_labels", "row")
        cols = check_labels(col_labels, c, "col_labels", "column")
        titles = check_labels(panel_titles if panel_titles is not None else [f"{k}" for k in range(n)],
                               n, "panel_titles", "panel")
        hidden = hidden_cells(m, None)
        if mask is not None:
            hidden = hidden | hidden_cells(np.zeros((r, c)), mask)[None]
        shared = hidden.all(axis=0)
        if (hidden != shared[None]).any():
            raise ValueError("every panel of a HeatmapGrid shares one mask; a non-finite value appears in "
                             "some panels only. Pass mask=... (True = may attend) instead of −∞ values.")
        lo, hi = color_range(m[~hidden], vmin, vmax)
        enc, payload = encode_matrix(m, lo, hi)
        state = {"values": payload, "encoding": enc, "shape": [n, r, c], "mask": pack_mask(shared),
                 "vmin": lo, "vmax": hi, "panel_titles": titles, **self._labels_and_ticks(rows, cols)}
        self.send(state, title=title, alt=alt,
                  summary=f"{n} panels of {r} × {c} values, colour range {lo:.3g} to {hi:.3g}")
        self.matrix, self.hidden = m.astype(np.float64, copy=True), shared
