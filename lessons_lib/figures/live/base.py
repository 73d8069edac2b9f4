"""What every live figure shares: the JavaScript and CSS, size, title and alt text, one way to send a
drawing (:meth:`LiveFigure.send`), the list of kinds (:meth:`LiveFigure.kinds`); the matrix traits.
"""

from __future__ import annotations

import json
from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

from ..._checks import as_bool_mask, check_flag, check_label, is_whole_number
from .. import style

_HERE = Path(__file__).resolve().parent
# the JavaScript, with the course's look (figures/style.py) put in front of it as `const STYLE`
ESM = (f"const STYLE = {json.dumps(style.live_style(), ensure_ascii=False)};\n"
        + (_HERE / "live_figures.js").read_text(encoding="utf-8"))
_CSS = (_HERE / "live_figures.css").read_text(encoding="utf-8")


# ------------------------------------------------------------------ checks


def hidden_cells(m: np.ndarray, mask, name: str = "mask") -> np.ndarray:
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


# ------------------------------------------------------------------ the widgets
class LiveFigure(anywidget.AnyWidget):
    """Base of the live figures: the JavaScript, the size in CSS pixels, a title and an alt text.

    ``width``/``height`` are fixed, so a redraw never makes the page jump. ``alt``
    is the figure's name for screen readers (the canvas's aria-label): what it shows,
    the explorers write their settings and what the data does there ("d_k = 64: the
    row of “sat” puts 0.31 on “mat”, its largest weight"), which the browser test reads.
    The figure takes focus; its cell cursor (arrow keys) reads out what hovering shows.

    A kind of live figure is a subclass that sets ``_kind`` (the name of its drawing code,
    ``KINDS.<kind>`` in ``live_figures.js``) and draws with :meth:`send`; :meth:`kinds` finds
    them all (CONTRIBUTING.md, "Adding a live figure kind").
    """

    #: what the default alt text starts with when the figure has no title
    NAME = "Live figure"

    _esm = ESM
    _css = _CSS
    _kind = t.Unicode("").tag(sync=True)
    title = t.Unicode("").tag(sync=True)
    alt = t.Unicode("").tag(sync=True)
    width = t.Int(480).tag(sync=True)
    height = t.Int(420).tag(sync=True)

    def __init__(self, *, width: int = 480, height: int = 420, title: str = "", **kwargs):
        for value, name in ((width, "width"), (height, "height")):
            if not is_whole_number(value) or not 80 <= value <= 4000:
                raise ValueError(f"{name} must be a whole number of pixels from 80 to 4000; got {value!r}.")
        super().__init__(width=int(width), height=int(height), title=check_label(title, "title"), **kwargs)
        self.add_class("lessons-live")

    @classmethod
    def kinds(cls) -> dict[str, type[LiveFigure]]:
        """Every kind of live figure: ``_kind`` -> its class, found among the subclasses (none listed)."""
        found, stack = {}, list(cls.__subclasses__())
        while stack:
            sub = stack.pop()
            stack += sub.__subclasses__()
            kind = sub.class_traits()["_kind"].default_value
            if kind:
                found[kind] = sub
        return dict(sorted(found.items()))

    def send(self, state: dict, *, title: str | None = None, alt: str | None = None,
             summary: str = "") -> None:
        """Set the traits of ``state`` in one message to the browser (``hold_sync``): a trait whose value did
        not change does not cross again, and the browser draws once, the newest state.

        ``title`` (None keeps the figure's) is checked and sent with it; ``alt`` is the text a screen reader
        says, by default the title's first line (or the kind's :attr:`NAME`) and ``summary``.
        """
        state = dict(state)
        if title is not None:
            state["title"] = check_label(title, "title")
        shown = title if title is not None else self.title
        heading = shown.splitlines()[0] if shown else self.NAME
        state["alt"] = alt if alt is not None else (f"{heading}: {summary}" if summary else heading)
        with self.hold_sync():
            for name, value in state.items():
                setattr(self, name, value)

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, tuple):
            data = data[0]
        data = dict(data or {})
        data["text/plain"] = (f"{type(self).__name__}: {self.alt or self.title or 'live figure'} "
                              f"(drawn in the browser; run the notebook in JupyterLab to see it)")
        return data


class MatrixFigure(LiveFigure):
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
    ink = t.Bytes(b"").tag(sync=True)     # per colour of lut: a number on it in black (0) or white (1)
    xlabel = t.Unicode(style.XLABEL).tag(sync=True)
    ylabel = t.Unicode(style.YLABEL).tag(sync=True)
    colorbar_label = t.Unicode("").tag(sync=True)
    decimals = t.Int(2).tag(sync=True)
    annotate_max = t.Int(12).tag(sync=True)
    percent = t.Bool(False).tag(sync=True)
    row_name = t.Unicode("query").tag(sync=True)
    col_name = t.Unicode("key").tag(sync=True)
    hidden_text = t.Unicode("").tag(sync=True)    # what a hatched cell's table entry says ("" : "masked")

    def __init__(self, *, cmap: str = style.CMAP_WEIGHTS, colorbar_label: str = "",
                 xlabel: str = style.XLABEL, ylabel: str = style.YLABEL, decimals: int = 2,
                 annotate_max: int = 12, percent: bool = False, row_name: str = "query",
                 col_name: str = "key", hidden_text: str = "", **kwargs):
        style.check_colormap(cmap)
        if not is_whole_number(decimals) or not 0 <= decimals <= 6:
            raise ValueError(f"decimals (digits written in each cell) must be 0 to 6; got {decimals!r}.")
        if not is_whole_number(annotate_max) or annotate_max < 0:
            raise ValueError(f"annotate_max must be a whole number ≥ 0; got {annotate_max!r}.")
        percent = check_flag(percent, "percent")
        super().__init__(cmap=cmap, lut=style.colormap_table(cmap), ink=style.ink_table(cmap),
                         colorbar_label=check_label(colorbar_label, "colorbar_label"),
                         xlabel=check_label(xlabel, "xlabel"), ylabel=check_label(ylabel, "ylabel"),
                         decimals=int(decimals), annotate_max=int(annotate_max), percent=percent,
                         row_name=check_label(row_name, "row_name"),
                         col_name=check_label(col_name, "col_name"),
                         hidden_text=check_label(hidden_text, "hidden_text"),
                         **kwargs)
        self.matrix: np.ndarray | None = None
        self.hidden: np.ndarray | None = None

    @t.observe("cmap")
    def _cmap_changed(self, change):
        with self.hold_sync():
            self.lut = style.colormap_table(style.check_colormap(change["new"]))
            self.ink = style.ink_table(change["new"])

    def _labels_and_ticks(self, rows: list[str], cols: list[str]) -> dict:
        return {"row_labels": rows, "col_labels": cols,
                "row_ticks": style.tick_indices(len(rows)).tolist(),
                "col_ticks": style.tick_indices(len(cols)).tolist()}
