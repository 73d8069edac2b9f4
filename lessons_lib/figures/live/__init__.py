"""Live figures drawn in the browser: a heatmap, a grid of heatmaps, bars, a line plot, X · W = Q, heads.

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
* :class:`HeadView`: every attention head as a thumbnail, one previewed large, one token
  followed in all (:mod:`.heads`).
* :class:`RotationDials`: rotary embeddings pair by pair, a query's and a key's 2-D pieces turning on
  one dial per pair (:mod:`.rotations`, notebook 11).
* :class:`Access` (:mod:`.access`, not a figure): a group's one polite live region, and the names,
  value texts and states ipywidgets does not give its controls.

For the keyboard and screen readers, every figure takes focus (Tab); the arrow keys move a
cell cursor whose read-out is what hovering shows, Enter does what a click does, and the
figure's name (``alt``, the canvas's aria-label) says what it shows.

Each kind is a subclass of :class:`LiveFigure` that names its drawing code (``_kind``, the
``KINDS.<kind>`` of ``live_figures.js``); ``LiveFigure.kinds()`` finds them all, so every kind this
package imports is checked against its JavaScript.

How data travels: a matrix crosses as float32 bytes (exact hover values) while
it has at most 32 rows and columns (every token labelled) and :data:`F32_MAX_CELLS`
cells, beyond that as zlib-compressed 8-bit colour indices (the colour is still
exact; the hover value is then the middle of its 1/256 colour bin, shown with "≈").
Masks cross as packed bits. Each widget sends one message per ``draw``
(``hold_sync``) and only the traits that changed, so token labels and colour
tables cross once. The browser draws at most once per
animation frame, always the newest state.

Example::

    >>> from lessons_lib.figures.live import Heatmap
    >>> import numpy as np
    >>> hm = Heatmap(title="Attention weights", colorbar_label="weight", cmap="viridis", percent=True)
    >>> hm.draw(np.full((2, 2), 0.5), ["a", "b"], ["a", "b"], vmin=0.0, vmax=1.0, highlight_row=1)
    >>> hm.shape, hm.encoding, hm.highlight_row
    ([2, 2], 'f32', 1)
"""

from __future__ import annotations

from .access import Access
from .bars import Bars
from .base import LiveFigure
from .grid import HeatmapGrid
from .heads import HeadView
from .heatmap import Heatmap
from .line import LinePlot
from .product import MatrixProduct, ProductPanel
from .rotations import RotationDials

__all__ = ["Heatmap", "HeatmapGrid", "Bars", "LinePlot", "MatrixProduct", "ProductPanel", "HeadView",
           "RotationDials", "LiveFigure", "Access"]
