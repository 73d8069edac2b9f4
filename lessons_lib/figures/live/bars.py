"""The live bars: one query's weights, masked keys drawn as masked.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..._checks import as_float_array, check_cells, check_label, check_labels, check_number
from .. import style
from .base import LiveFigure, hidden_cells
from .wire import pack_mask


class Bars(LiveFigure):
    """A bar chart of one query's weights over the keys; masked keys are grey hatched slots marked ✗.

    Values are written above the bars while there are at most 16; hover shows
    "key “cat” (1): 0.248 (24.8%)".

    Example::

        bars = Bars(title="Where “sat” looks", ylabel="attention weight")
        bars.draw(weights[2], tokens, mask=causal_mask(7)[2])
    """

    NAME = "Bars"
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
        super().__init__(title=title, width=width, height=height, xlabel=check_label(xlabel, "xlabel"),
                         ylabel=check_label(ylabel, "ylabel"), ymax=check_number(ymax, "ymax"),
                         percent=bool(percent), bar_name=check_label(bar_name, "bar_name"),
                         decimals=int(decimals), color=bar_colour())
        self.bar_values: np.ndarray | None = None

    def draw(self, values, labels=None, *, mask=None, title: str | None = None,
             alt: str | None = None) -> None:
        """Show one bar per entry of ``values`` (n,); ``mask`` (n,) True = may attend (False: hatched ✗)."""
        v = as_float_array(values, "values")
        if v.ndim != 1:
            raise ValueError(f"values must be one row, shape (n,); got shape {v.shape}. "
                             f"Pick a row: weights[i].")
        check_cells(v.size, v.shape, "values")
        names = check_labels(labels, v.size, "labels", "bar")
        hidden = hidden_cells(v, mask)
        state = {"values": np.ascontiguousarray(np.where(hidden, 0.0, v), dtype="<f4").tobytes(),
                 "mask": pack_mask(hidden), "labels": names, "ticks": style.tick_indices(v.size).tolist()}
        self.send(state, title=title, alt=alt, summary=f"{v.size} bars")
        self.bar_values = v.astype(np.float64, copy=True)


def bar_colour() -> str:
    rgb = style.colormap_table(style.CMAP_WEIGHTS)[3 * 89:3 * 89 + 3]  # viridis at 0.35, as plots uses
    return "#" + bytes(rgb).hex()
