"""A live figure of attention heads: a thumbnail per head, one previewed large (notebook 06).

:class:`HeadView` draws ``weights (n_heads, L, L)`` in the browser like the other live
figures (binary values, one message per draw, one paint per animation frame), with
what a head viewer needs and nothing crossing to the kernel for it:

* hover a thumbnail: that head is previewed large, with token labels and a colorbar;
* click a thumbnail: the preview stays on it (``locked``); click it again to unlock;
* one token is followed in every head (``token``): its row, *where does it look*
  (``direction = 0``), or its column, *who looks at it* (``direction = 1``); a click on
  a token in the preview picks it;
* hover any cell: head, query, key and weight are read out under the figure.

The number of heads changes the thumbnails, not the figure's size: the preview keeps
its place, so nothing jumps. ``direction`` and ``token`` are plain traits, so
``ipywidgets.jslink`` can tie them to a toggle and a slider in the browser.

Example::

    view = HeadView(title="8 heads", width=1000, height=520)
    view.draw(weights, tokens, panel_titles=[f"head {h}" for h in range(8)], token=3)
    view
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..._checks import check_cells, check_head_weights, check_labels, color_range, int_or_none
from .. import style
from .base import MatrixFigure, hidden_cells
from .wire import encode_matrix, pack_mask

__all__ = ["HeadView", "ROW", "COLUMN"]

ROW, COLUMN = 0, 1   # values of ``direction``: follow the token's row or its column


class HeadView(MatrixFigure):
    """Attention weights of several heads: thumbnails, a large preview, one token followed in all.

    Traits set from the browser: ``locked`` (the head clicked, -1 for none), ``token``
    (the token followed), ``hovered`` (kept in the browser; the kernel is not told).
    ``.matrix`` holds the weights last drawn ``(n_heads, L, L)``.
    """

    NAME = "Attention heads"
    _kind = t.Unicode("heads").tag(sync=True)
    shape = t.List(t.Int(), default_value=[0, 0, 0]).tag(sync=True)
    panel_titles = t.List(t.Unicode()).tag(sync=True)
    locked = t.Int(-1).tag(sync=True)
    hovered = t.Int(-1).tag(sync=True)
    token = t.Int(0).tag(sync=True)
    direction = t.Int(ROW).tag(sync=True)

    def __init__(self, *, title: str = "", colorbar_label: str = "attention weight (each row sums to 1)",
                 cmap: str = style.CMAP_WEIGHTS, width: int = 1000, height: int = 540,
                 xlabel: str = style.XLABEL, ylabel: str = style.YLABEL, percent: bool = True):
        super().__init__(title=title, colorbar_label=colorbar_label, cmap=cmap, xlabel=xlabel, ylabel=ylabel,
                         width=width, height=height, percent=percent, annotate_max=0)

    def draw(self, weights, tokens=None, *, panel_titles=None, token: int | None = None, vmin=0.0, vmax=1.0,
             mask=None, title: str | None = None, alt: str | None = None) -> None:
        """Show ``weights (n_heads, L, L)`` (rows: queries, columns: keys) on one colour range.

        ``tokens`` label rows and columns; ``panel_titles`` name the heads (default
        "head 0", ...); ``token`` picks the token followed (kept, and clamped to the
        new length, when None). ``mask`` (True = may attend) hatches cells in every head.
        A ``locked`` head that no longer exists is unlocked.
        """
        w = check_head_weights(weights)
        check_cells(w.size, w.shape, "weights")
        n, L, _ = w.shape
        labels = check_labels(tokens, L, "tokens", "token")
        titles = check_labels(panel_titles if panel_titles is not None else [f"head {k}" for k in range(n)],
                               n, "panel_titles", "head")
        hidden = hidden_cells(w[0], mask)
        lo, hi = color_range(w, vmin, vmax)
        enc, payload = encode_matrix(w, lo, hi)
        chosen = min(self.token, L - 1) if token is None else int_or_none(token, "token", L)
        state = {"values": payload, "encoding": enc, "shape": [n, L, L], "mask": pack_mask(hidden),
                 "vmin": lo, "vmax": hi, "panel_titles": titles, "token": max(chosen, 0),
                 **self._labels_and_ticks(labels, labels)}
        if self.locked >= n:
            state["locked"] = -1
        self.send(state, title=title, alt=alt, summary=f"{n} heads of {L} × {L} weights")
        self.matrix, self.hidden = w.astype(np.float64, copy=True), hidden
