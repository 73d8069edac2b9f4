"""The live line plot: lines and markers, log axes optional, one movable marker.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..._checks import as_float_array, check_label, check_number
from .. import style
from .base import LiveFigure


class LinePlot(LiveFigure):
    """Lines and markers, optionally on log₂ axes, with one movable marker (a dashed line and a ring).

    ``series``: a list of dicts ``{"label", "x", "y", "mode": "line" | "markers",
    "marker": "o" | "s", "color": "#rrggbb", "dash": bool}``; set once. A line's colour
    must stand out from the white background by 3:1 (WCAG 1.4.11); markers are outlined in black.
    :meth:`mark` moves the marker (cheap: a few numbers cross).

    Example::

        plot = LinePlot(title="var(q·k) against d_k", xlabel="d_k", ylabel="variance", log_x=True, log_y=True)
        plot.set_series([{"label": "var = d_k", "x": [1, 512], "y": [1, 512], "mode": "line"},
                         {"label": "measured", "x": d_ks, "y": variances, "mode": "markers"}])
        plot.mark(64, 63.4)
    """

    NAME = "Plot"
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
        super().__init__(title=title, width=width, height=height, xlabel=check_label(xlabel, "xlabel"),
                         ylabel=check_label(ylabel, "ylabel"), log_x=bool(log_x), log_y=bool(log_y),
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
            color = s.get("color", "#555555")
            if mode == "line":
                style.check_mark_colour(color, f"series[{k}]['color'] (a line)")
            out.append({"label": str(s.get("label", "")), "x": x.tolist(), "y": y.tolist(), "mode": mode,
                        "marker": s.get("marker", "o"), "color": color,
                        "dash": bool(s.get("dash", False))})
        self.series = out

    def mark(self, x, y=None, *, shape: str = "o", title: str | None = None, alt: str | None = None) -> None:
        """Move the marker to ``x`` (a dashed vertical line), with a ring (or square) at ``(x, y)``."""
        if shape not in ("o", "s"):
            raise ValueError(f"shape must be 'o' (a ring) or 's' (a square); got {shape!r}.")
        marker = {"x": check_number(x, "x"), "y": None if y is None else check_number(y, "y"),
                  "shape": shape}
        self.send({"marker": marker}, title=title, alt=alt, summary=f"marker at {x:g}")


def _numbers(values, name: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a list of numbers; got {values!r}.") from None
