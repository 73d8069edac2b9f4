"""The live matrix product: A · B = C drawn to scale.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import traitlets as t

from ..._checks import as_float_array, check_cells, check_label, check_labels, color_range
from .. import style
from .base import LiveFigure


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

    NAME = "Matrix product"
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
            check_cells(m.size, m.shape, f"panel {key}")
            lo, hi = color_range(m, panel.vmin, panel.vmax)
            mats[key] = m
            state.update({
                key: np.ascontiguousarray(m, dtype="<f4").tobytes(), f"{key}_shape": list(m.shape),
                f"{key}_range": [lo, hi],
                f"{key}_rows": check_labels(panel.rows, m.shape[0], f"panel {key} rows", "row"),
                f"{key}_cols": check_labels(panel.cols, m.shape[1], f"panel {key} cols", "column"),
                f"{key}_title": check_label(panel.title, "title"),
                f"{key}_xlabel": check_label(panel.xlabel, "xlabel"),
                f"{key}_ylabel": check_label(panel.ylabel, "ylabel"),
            })
        if mats["a"].shape[1] != mats["b"].shape[0]:
            raise ValueError(f"A has {mats['a'].shape[1]} columns but B has {mats['b'].shape[0]} rows; "
                             f"in A·B the inner sizes must match "
                             f"(A is {mats['a'].shape}, B is {mats['b'].shape}).")
        if mats["c"].shape != (mats["a"].shape[0], mats["b"].shape[1]):
            raise ValueError(f"C has shape {mats['c'].shape}, but A·B has shape "
                             f"({mats['a'].shape[0]}, {mats['b'].shape[1]}).")
        self.send(state, title=title, alt=alt,
                  summary=f"{mats['a'].shape} · {mats['b'].shape} = {mats['c'].shape}")
        self.matrices = {k: v.astype(np.float64, copy=True) for k, v in mats.items()}
