"""Live explorers: sliders that redraw attention heatmaps while you drag them.

Four explorers, one per lesson that needs one (names fixed; notebooks use them):

* :class:`ProjectionExplorer`   notebook 02: X (seq_len, d_model) · W (d_model, d_k) = Q, K or V
* :class:`ScoresExplorer`       notebook 03: raw scores Q·Kᵀ for a seq_len and a d_k
* :class:`ScaleSoftmaxExplorer` notebook 04: why √d_k: var(q·k) grows like d_k, softmax saturates
* :class:`PipelineExplorer`     notebook 05: scaled scores → weights → output, one query's weights

Every explorer has ``.widget`` (the ipywidgets box; the explorer displays as it),
``.set(**values)`` (drive it from code: ``.set(d_k=64, seq_len=16)``), ``.images``
(name → ``ipywidgets.Image`` holding PNG bytes), ``.figures`` (name → the renderer, whose
``.im.get_array()`` is the matrix drawn), ``.last_update_ms`` and ``.error_box`` (an error
in a redraw is shown there in red, with its message, instead of vanishing).

All maths comes from :mod:`lessons_lib.attention` and all data from :mod:`lessons_lib.data`.

How the redraw stays fast (about 10–30 ms a heatmap; a full matplotlib draw of a
heatmap with 32 token labels costs 100–250 ms here, mostly text):

* each figure is built once, outside pyplot, on an Agg canvas of fixed pixel size;
* what never changes (frame, colorbar, axis titles) is drawn once per colour range
  and kept as an RGBA array (a few colour ranges, least recently used first out);
* on a slider move: copy that array into the canvas, ``set_data`` on the image,
  ``ax.draw_artist(image)`` (the blit), then write the token labels, the title and
  any numbers with Pillow from a cache of pre-rendered strings (text is the slow
  part of matplotlib), hatch masked cells with numpy, and encode the RGB pixels as
  PNG at ``compress_level=1``;
* colour ranges are fixed (weights 0..1) or rounded up to 1, 2, 5 × 10ⁿ, so the
  colorbar is redrawn only when the range really changes.
"""

from __future__ import annotations

import base64
import html
import io
import math
import struct
import time
import traceback
import zlib
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache

import ipywidgets as widgets
import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, findfont
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
from PIL import Image, ImageDraw, ImageFont

from . import attention, data, masks, plots

__all__ = [
    "ScoresExplorer", "ScaleSoftmaxExplorer", "PipelineExplorer", "ProjectionExplorer",
    "BlitFigure", "FastHeatmap", "FastBars", "FastVariance", "D_K_OPTIONS",
]

D_K_OPTIONS = tuple(2 ** i for i in range(10))   # 1, 2, 4, ..., 512 (the d_k slider)
SEQ_LEN_MIN, SEQ_LEN_MAX = 2, 128
DPI = 100
PX_PER_PT = DPI / 72
TICK_PX = round(plots.FONT_TICK * PX_PER_PT)     # 17 px = 12 pt
TITLE_PX = round(plots.FONT_TITLE * PX_PER_PT)   # 19 px = 14 pt
ANNOT_PX = round(plots.FONT_ANNOT * PX_PER_PT)
MIN_TICK_PX = 10                                 # labels shrink down to this when 25-32 tokens share an axis
TEXT_RGB = np.array([0, 0, 0], dtype=np.float32)
TICK_RGB = np.array([51, 51, 51], dtype=np.uint8)
HATCH_RGB = np.array(matplotlib.colors.to_rgb(plots.MASK_EDGE)) * 255
PNG_LEVEL = 1


# ====================================================================== PNG encoding
def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def _png_filter(rgba: np.ndarray) -> np.ndarray:
    """PNG scanlines of ``rgba`` (H, W, 4 uint8), each with the "Up" filter (type 2).

    "Up" stores each row minus the row above: rows of a heatmap cell repeat, so
    most bytes become 0 and deflate fast. (Pillow tries all five filters on every
    row, which on these figures costs more than this whole encoder.) RGBA rather
    than RGB: the contiguous subtraction is ~100× faster than on an RGB view, and
    the constant alpha filters to zeros that cost almost nothing to deflate.
    """
    h, w = rgba.shape[:2]
    flat = rgba.reshape(h, 4 * w)
    raw = np.empty((h, 1 + 4 * w), dtype=np.uint8)
    raw[0, 0] = 0
    raw[0, 1:] = flat[0]
    raw[1:, 0] = 2
    np.subtract(flat[1:], flat[:-1], out=raw[1:, 1:])
    return raw


def _png_from_filtered(raw: np.ndarray) -> bytes:
    """A complete PNG (8-bit RGBA) from filtered scanlines; zlib level ``PNG_LEVEL``, run-length strategy."""
    h, w = raw.shape[0], (raw.shape[1] - 1) // 4
    packer = zlib.compressobj(PNG_LEVEL, zlib.DEFLATED, 15, 9, zlib.Z_RLE)
    idat = packer.compress(raw) + packer.flush()
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b""))


def encode_png(rgba: np.ndarray) -> bytes:
    """PNG bytes of an (H, W, 4) uint8 RGBA image, written with the "Up" filter and fast deflate."""
    if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4:
        raise ValueError(f"encode_png needs an (H, W, 4) uint8 array; got {rgba.dtype} {rgba.shape}.")
    return _png_from_filtered(_png_filter(np.ascontiguousarray(rgba)))


_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    """Two threads that deflate PNGs while the main thread draws the next figure (zlib frees the GIL)."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lessons-png")
    return _POOL


# ====================================================================== text with Pillow
class _TextPainter:
    """Writes short strings into an RGBA buffer with Pillow, each string rendered once and cached.

    Uses matplotlib's own default font file (DejaVu Sans), so the labels match
    the text matplotlib draws.
    """

    def __init__(self, cache_size: int = 4096):
        self._paths = {
            False: findfont(FontProperties()),
            True: findfont(FontProperties(weight="bold")),
        }
        self._fonts: dict = {}
        self._widths: dict = {}
        self._sprites: OrderedDict = OrderedDict()
        self._cache_size = cache_size

    def font(self, size_px: int, bold: bool = False):
        key = (size_px, bold)
        if key not in self._fonts:
            self._fonts[key] = ImageFont.truetype(self._paths[bold], size_px)
        return self._fonts[key]

    def width(self, text: str, size_px: int, bold: bool = False) -> float:
        """Width of ``text`` in pixels (cached)."""
        key = (text, size_px, bold)
        w = self._widths.get(key)
        if w is None:
            w = self._widths[key] = self.font(size_px, bold).getlength(text)
        return w

    def fit(self, text: str, size_px: int, max_width: float, bold: bool = False) -> str:
        """``text``, shortened with "…" until it is at most ``max_width`` pixels wide."""
        if self.width(text, size_px, bold) <= max_width:
            return text
        while len(text) > 1 and self.width(text + "…", size_px, bold) > max_width:
            text = text[:-1]
        return text + "…"

    def sprite(self, text: str, size_px: int, rotate: bool = False, bold: bool = False) -> np.ndarray:
        """Coverage (0..1, float32) of ``text``; ``rotate`` turns it 90° to read bottom-to-top."""
        key = (text, size_px, rotate, bold)
        hit = self._sprites.get(key)
        if hit is not None:
            self._sprites.move_to_end(key)
            return hit
        font = self.font(size_px, bold)
        ascent, descent = font.getmetrics()
        width = max(1, math.ceil(font.getlength(text)) + 2)
        img = Image.new("L", (width, ascent + descent))
        ImageDraw.Draw(img).text((1, 0), text, font=font, fill=255)
        alpha = np.asarray(img, dtype=np.float32) / 255.0
        if rotate:
            alpha = np.ascontiguousarray(np.rot90(alpha))
        self._sprites[key] = alpha
        if len(self._sprites) > self._cache_size:
            self._sprites.popitem(last=False)
        return alpha

    def draw(self, buf: np.ndarray, text: str, x: float, y: float, *, size_px: int, anchor: str = "lt",
             rotate: bool = False, bold: bool = False, color=TEXT_RGB) -> None:
        """Blend ``text`` into ``buf`` (H, W, 4 uint8). ``anchor``: horizontal l/m/r + vertical t/m/b.

        Black text darkens (``min``) and white text lightens (``max``) the pixels under
        it: one numpy call per label, several times faster than alpha blending, and
        the same on the white and cell-coloured backgrounds the labels sit on.
        """
        if not text:
            return
        alpha = self.sprite(text, size_px, rotate, bold)
        h, w = alpha.shape
        x0 = round(x - {"l": 0, "m": w / 2, "r": w}[anchor[0]])
        y0 = round(y - {"t": 0, "m": h / 2, "b": h}[anchor[1]])
        H, W = buf.shape[:2]
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + w, W), min(y0 + h, H)
        if xa >= xb or ya >= yb:
            return
        rgb = tuple(int(c) for c in color)
        if rgb in ((0, 0, 0), (255, 255, 255)):
            region = buf[ya:yb, xa:xb]  # all four channels: whole rows at once, ~20× faster than RGB only
            ink = self._ink(text, size_px, rotate, bold, rgb[0] == 255)[ya - y0:yb - y0, xa - x0:xb - x0]
            (np.maximum if rgb[0] == 255 else np.minimum)(region, ink, out=region)
        else:
            region = buf[ya:yb, xa:xb, :3]
            a = alpha[ya - y0:yb - y0, xa - x0:xb - x0, None]
            region[...] = region * (1.0 - a) + np.asarray(rgb, dtype=np.float32) * a

    @lru_cache(maxsize=4096)  # noqa: B019 - one painter for the whole module
    def _ink(self, text: str, size_px: int, rotate: bool, bold: bool, white: bool) -> np.ndarray:
        """uint8 (h, w, 4): 255·coverage for white text, 255·(1 − coverage) for black text; alpha kept."""
        a = self.sprite(text, size_px, rotate, bold)
        ink = np.empty((*a.shape, 4), dtype=np.uint8)
        ink[..., :3] = np.round(255 * (a if white else 1.0 - a))[..., None]
        ink[..., 3] = 0 if white else 255  # max/min with these leave the alpha channel as it is
        return ink


_TEXT = _TextPainter()


def _nice_bound(value: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 × 10ⁿ ≥ ``value``: colour scales that rarely change."""
    value = float(abs(value))
    if not np.isfinite(value) or value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for m in (1, 1.5, 2, 3, 4, 5, 6, 8, 10):
        bound = m * 10.0 ** exp
        if bound >= value * (1 - 1e-12):
            return float(f"{bound:.6g}")
    return 10.0 ** (exp + 1)


# ====================================================================== the blitting core
class BlitFigure:
    """A fixed-size figure that redraws only what changes, and shows itself as a PNG ``Image`` widget.

    Subclasses create the figure's artists, list the ones that change in
    ``self.dynamic``, implement ``_draw_static(key)`` (set up whatever depends on
    ``key``, e.g. the colour range) and draw each update between
    ``_begin(key)`` and ``_finish()``. The static drawing for a key is rendered by
    matplotlib once and kept (``cache_size`` keys, least recently used dropped).
    """

    def __init__(self, width_px: int, height_px: int, *, css_class: str = "lessons-heatmap",
                 cache_size: int = 6):
        self.width, self.height = int(width_px), int(height_px)
        self.figure = Figure(figsize=(self.width / DPI, self.height / DPI), dpi=DPI)
        self.canvas = FigureCanvasAgg(self.figure)
        self.image = widgets.Image(format="png")
        self.image.add_class(css_class)
        self.dynamic: list = []
        self._static: OrderedDict = OrderedDict()
        self._cache_size = cache_size
        self._buf: np.ndarray | None = None
        self._pending: Future | None = None
        self.defer = False
        self.png = b""

    # -- pixel geometry (buffer rows run top to bottom)
    def _rect(self, left: int, top: int, width: int, height: int) -> list[float]:
        """Figure-fraction rectangle of a box given in pixels from the top-left corner."""
        return [left / self.width, 1 - (top + height) / self.height, width / self.width, height / self.height]

    def _draw_static(self, key) -> None:  # pragma: no cover - overridden
        pass

    def _begin(self, key=None) -> np.ndarray:
        """Put the static drawing for ``key`` into the canvas; return the writable RGBA buffer."""
        if self._pending is not None:  # the last PNG still reads the buffer
            self.flush()
        static = self._static.get(key)
        if static is None:
            self._draw_static(key)
            visible = [a.get_visible() for a in self.dynamic]
            for a in self.dynamic:
                a.set_visible(False)
            self.canvas.draw()
            for a, v in zip(self.dynamic, visible):
                a.set_visible(v)
            static = np.asarray(self.canvas.buffer_rgba()).copy()
            self._static[key] = static
            if len(self._static) > self._cache_size:
                self._static.popitem(last=False)
        else:
            self._static.move_to_end(key)
            self._draw_static(key)  # cheap: artist properties only, no drawing
        buf = np.asarray(self.canvas.buffer_rgba())
        if buf.shape != static.shape:  # the renderer was resized (should not happen): start over
            self.canvas.draw()
            buf = np.asarray(self.canvas.buffer_rgba())
        np.copyto(buf, static)
        self._buf = buf
        return buf

    def _blit(self, artist) -> None:
        artist.axes.draw_artist(artist)

    def _finish(self, wait: bool | None = None) -> bytes | None:
        """Encode the canvas as PNG and show it in ``self.image``; return the PNG bytes.

        The encoding runs in a worker thread. With ``wait=False`` (the default when
        ``self.defer`` is set, as explorers do) this returns None at once and
        :meth:`flush`, called once all figures are drawn, collects the PNG.
        """
        self._pending = _pool().submit(encode_png, self._buf)  # the buffer is not touched until flush
        if wait is None:
            wait = not self.defer
        return self.flush() if wait else None

    def flush(self) -> bytes:
        """Wait for a pending PNG, put it into ``self.image``; return the PNG bytes."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self.png = pending.result()
            self.image.value = self.png
        return self.png


def _axis_labels(canvas, texts, centres, *, axis_len: float, strip: int, vertical: bool, edge: float,
                 bold_index: int | None = None) -> float:
    """Tick marks and token labels along one axis, drawn into ``canvas``; returns the labels' depth in px.

    ``vertical``: labels of rows, right-aligned left of ``edge`` (the axes' left side);
    else labels of columns, hanging below ``edge`` (the axes' bottom), turned 90°
    when they do not fit side by side. Label size: 12 pt, smaller when many share
    the axis (down to ``MIN_TICK_PX``) or when the longest would not fit ``strip``.
    """
    size = int(min(TICK_PX, max(MIN_TICK_PX, 0.9 * axis_len / max(len(texts), 1))))
    longest = max(_TEXT.width(t, size) for t in texts)
    if longest > strip:
        size = max(MIN_TICK_PX, int(size * strip / longest))
    longest = max(_TEXT.width(t, size) for t in texts)
    upright = vertical or longest <= 0.9 * axis_len / len(texts)
    depth = 0.0
    for k, (text, c) in enumerate(zip(texts, centres)):
        bold = k == bold_index
        text = _TEXT.fit(text, size, strip, bold)
        if vertical:
            canvas[round(c), round(edge) - 5:round(edge), :3] = TICK_RGB
            _TEXT.draw(canvas, text, edge - 8, c, size_px=size, anchor="rm", bold=bold)
            depth = max(depth, _TEXT.width(text, size, bold))
        else:
            canvas[round(edge):round(edge) + 5, round(c), :3] = TICK_RGB
            _TEXT.draw(canvas, text, c, edge + 7, size_px=size, anchor="mt", rotate=not upright, bold=bold)
            depth = max(depth, size * 1.25 if upright else _TEXT.width(text, size, bold))
    return depth + 8


LABEL_PX = round(plots.FONT_LABEL * PX_PER_PT)


class FastHeatmap(BlitFigure):
    """A heatmap whose data, token labels, title and mask change fast; see the module notes.

    Layout in pixels: the axes box is ``ax_size`` = (width, height); token labels
    sit in strips (``strip`` pixels deep) left of and below it, the colorbar on the
    right. Labels: every token up to 32 (12 pt, smaller when many share an axis),
    every k-th token with its position beyond (as :func:`plots.tick_indices`).
    ``.im`` is the matplotlib image, kept in step: ``.im.get_array()`` is the
    matrix last drawn (masked cells masked). Cells are painted with numpy (nearest,
    cell edges on whole pixels) when there are fewer cells than pixels, else
    matplotlib resamples them (antialiased).
    """

    TICK = 5
    MARGIN = 12     # labels at the ends reach this far past the axes box

    def __init__(self, *, colorbar_label: str, cmap: str = plots.CMAP_WEIGHTS, ax_size=(420, 420),
                 xlabel: str = plots.XLABEL, ylabel: str = plots.YLABEL, annotate_max: int = 10,
                 fmt: str = ".2f", strip: int = 104, cache_size: int = 6):
        self.ax_w, self.ax_h = ax_size
        self.strip = strip
        self.left = 26 + strip + self.TICK + 3
        self.top = 12 + TITLE_PX * 2 + 8          # room for a two-line title
        self.note_y = self.top + self.ax_h + self.TICK + 3 + strip + LABEL_PX + 8
        right = 12 + 18 + 56 + 26                 # gap, colorbar, its tick labels, its label
        super().__init__(self.left + self.ax_w + right, self.note_y + TICK_PX + 6, cache_size=cache_size)
        self.annotate_max, self.fmt = annotate_max, fmt
        self.xlabel, self.ylabel = xlabel, ylabel  # drawn with the tick labels, just beyond them
        fig = self.figure
        self.ax = fig.add_axes(self._rect(self.left, self.top, self.ax_w, self.ax_h))
        self.ax.set_xticks([])
        self.ax.set_yticks([])
        self.cmap = matplotlib.colormaps[cmap].with_extremes(bad=plots.MASK_FACE)
        self.im = self.ax.imshow(np.zeros((2, 2)), cmap=self.cmap, vmin=0, vmax=1, aspect="auto",
                                 interpolation="auto")
        cax = fig.add_axes(self._rect(self.left + self.ax_w + 12, self.top, 18, self.ax_h))
        self.colorbar = fig.colorbar(self.im, cax=cax)
        self.colorbar.set_label(colorbar_label, fontsize=plots.FONT_LABEL)
        # The gradient is the same for every colour range: it is drawn once, with the static parts;
        # the tick marks and numbers of the current range are painted per update (_colorbar_ticks).
        self.colorbar.set_ticks([])
        self.colorbar.ax.yaxis.set_label_coords((18 + 62) / 18, 0.5)  # beyond the painted tick numbers
        self.cbar_x = self.left + self.ax_w + 12 + 18
        self.dynamic = [self.im]
        self._stripes = None
        self._strips: OrderedDict = OrderedDict()
        self.matrix, self.labels = None, ([], [])

    def _set_range(self, vmin: float, vmax: float) -> None:
        """The colour range of the image, without redrawing the (range-free) colorbar."""
        with self.im.norm.callbacks.blocked():
            self.im.norm.vmin, self.im.norm.vmax = vmin, vmax

    def _colorbar_ticks(self, buf, vmin: float, vmax: float) -> None:
        """Tick marks and numbers for ``vmin..vmax`` beside the colorbar, placed as matplotlib would."""
        ticks = MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).tick_values(vmin, vmax)
        span = vmax - vmin
        ticks = ticks[(ticks >= vmin - 1e-9 * span) & (ticks <= vmax + 1e-9 * span)]
        step = ticks[1] - ticks[0] if len(ticks) > 1 else span
        decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
        x = self.cbar_x
        for t in ticks:
            y = round(self.top + (vmax - t) / span * (self.ax_h - 1))
            buf[y:y + 1, x:x + 4, :3] = TICK_RGB
            text = f"{t:.{decimals}f}".replace("-", "−")
            _TEXT.draw(buf, "0" if text in ("−0", "−0.0", "−0.00") else text, x + 7, y,
                       size_px=TICK_PX, anchor="lm")

    def render(self, matrix, row_labels, col_labels, *, title: str, vmin: float, vmax: float,
               mask=None, highlight_row: int | None = None, wait: bool | None = None) -> bytes | None:
        """Draw ``matrix`` (n_rows, n_cols) with its labels; ``mask`` True = may attend (False: hatched).

        ``highlight_row`` frames one row (and writes its label in bold). Returns the
        PNG bytes (None when deferred, see :meth:`BlitFigure._finish`).
        """
        m = np.asarray(matrix, dtype=float)
        n_rows, n_cols = m.shape
        rows, cols = [str(t) for t in row_labels], [str(t) for t in col_labels]
        if len(rows) != n_rows or len(cols) != n_cols:
            raise ValueError(f"{len(rows)} row labels and {len(cols)} column labels for a matrix of shape "
                             f"{m.shape}: give one label per row and per column.")
        hidden = ~np.isfinite(m)
        if mask is not None:
            hidden |= ~np.broadcast_to(np.asarray(mask, dtype=bool), m.shape)
        any_hidden = bool(hidden.any())
        # masked cells keep their (finite) value under the mask; −∞ is stored as 0
        shown = np.ma.masked_array(np.where(np.isfinite(m), m, 0.0), mask=hidden) if any_hidden else m
        self.matrix, self.labels = m, (rows, cols)
        if not vmax > vmin:
            raise ValueError(f"the colour range needs vmin < vmax; got vmin={vmin}, vmax={vmax}.")
        buf = self._begin()
        self._set_range(float(vmin), float(vmax))
        self.im.set_data(shown)
        self.im.set_extent((-0.5, n_cols - 0.5, n_rows - 0.5, -0.5))
        self.ax.set_xlim(-0.5, n_cols - 0.5)
        self.ax.set_ylim(n_rows - 0.5, -0.5)
        self._paint_cells(buf, shown, vmin, vmax)
        for spine in self.ax.spines.values():
            self._blit(spine)
        if any_hidden:
            self._hatch(buf, hidden)
        if n_rows <= self.annotate_max and n_cols <= self.annotate_max:
            self._annotate(buf, m, hidden, vmin, vmax)
        if highlight_row is not None:
            self._outline_row(buf, int(highlight_row), n_rows)
        self._labels(buf, rows, cols, highlight_row, any_hidden)
        self._colorbar_ticks(buf, float(vmin), float(vmax))
        self._title(buf, title)
        return self._finish(wait)

    # -- pieces drawn with numpy / Pillow
    def _pixel_cells(self, n: int, length: int) -> np.ndarray:
        """For each pixel along an axis of ``length`` pixels, the index of the cell it shows."""
        return np.minimum(((np.arange(length) + 0.5) * n / length).astype(np.intp), n - 1)

    def _paint_cells(self, buf, shown, vmin, vmax) -> None:
        n_rows, n_cols = shown.shape
        if n_rows > self.ax_h or n_cols > self.ax_w:  # more cells than pixels: let matplotlib resample
            self._blit(self.im)
            return
        rgba = self.cmap(matplotlib.colors.Normalize(vmin, vmax)(shown), bytes=True)
        block = rgba.take(self._pixel_cells(n_rows, self.ax_h), axis=0)
        block = block.take(self._pixel_cells(n_cols, self.ax_w), axis=1)
        buf[self.top:self.top + self.ax_h, self.left:self.left + self.ax_w] = block

    def _hatch(self, buf, hidden) -> None:
        n_rows, n_cols = hidden.shape
        if self._stripes is None:
            yy, xx = np.mgrid[0:self.ax_h, 0:self.ax_w]
            self._stripes = ((xx + yy) % 9) < 2
        rows, cols = self._pixel_cells(n_rows, self.ax_h), self._pixel_cells(n_cols, self.ax_w)
        px = hidden.take(rows, axis=0).take(cols, axis=1) & self._stripes
        region = buf[self.top:self.top + self.ax_h, self.left:self.left + self.ax_w, :3]
        region[px] = HATCH_RGB.astype(np.uint8)

    def _annotate(self, buf, m, hidden, vmin, vmax) -> None:
        n_rows, n_cols = m.shape
        rgba = self.cmap(matplotlib.colors.Normalize(vmin, vmax)(m))
        dark = (0.2126 * rgba[..., 0] + 0.7152 * rgba[..., 1] + 0.0722 * rgba[..., 2]) < 0.45
        xs = self.left + (np.arange(n_cols) + 0.5) * self.ax_w / n_cols
        ys = self.top + (np.arange(n_rows) + 0.5) * self.ax_h / n_rows
        size = min(ANNOT_PX + 2, max(9, int(0.33 * min(self.ax_w / n_cols, self.ax_h / n_rows))))
        for (i, j), value in np.ndenumerate(m):
            if not hidden[i, j]:
                _TEXT.draw(buf, format(value, self.fmt), xs[j], ys[i], size_px=size, anchor="mm",
                           color=(255, 255, 255) if dark[i, j] else (0, 0, 0))

    def _outline_row(self, buf, row: int, n_rows: int) -> None:
        """Frame one row: black, with a white line inside, so it shows on every colour of the map."""
        y0 = round(self.top + row * self.ax_h / n_rows)
        y1 = round(self.top + (row + 1) * self.ax_h / n_rows)
        x0, x1 = self.left, self.left + self.ax_w
        for (ya, yb, xa, xb), width, colour in (((y0 - 1, y1 + 1, x0, x1), 3, 0),
                                                  ((y0 + 2, y1 - 2, x0 + 3, x1 - 3), 1, 255)):
            if yb - ya < 2 * width:
                continue
            buf[ya:ya + width, xa:xb, :3] = colour
            buf[yb - width:yb, xa:xb, :3] = colour
            buf[ya:yb, xa:xa + width, :3] = colour
            buf[ya:yb, xb - width:xb, :3] = colour

    def _strip_boxes(self):
        """Pixel boxes (y0, y1, x0, x1): row labels (left), column labels (below), full width below."""
        m, below = self.MARGIN, self.top + self.ax_h + self.TICK
        clear = below + 14  # lower than the colorbar's last tick label reaches
        return ((self.top - m, self.top + self.ax_h + m, 0, self.left),
                (self.top + self.ax_h, clear, self.left - m, self.left + self.ax_w + m),
                (clear, self.height, 0, self.width))

    def _labels(self, buf, rows, cols, highlight_row, masked: bool) -> None:
        """Tick marks, token labels, axis labels and the mask note, from a cache of finished strips."""
        key = (tuple(rows), tuple(cols), highlight_row, masked)
        strips = self._strips.get(key)
        if strips is None:
            strips = self._draw_strips(rows, cols, highlight_row, masked)
            self._strips[key] = strips
            if len(self._strips) > 16:
                self._strips.popitem(last=False)
        else:
            self._strips.move_to_end(key)
        for (y0, y1, x0, x1), pixels in zip(self._strip_boxes(), strips):
            buf[y0:y1, x0:x1] = pixels

    def _draw_strips(self, rows, cols, highlight_row, masked):
        canvas = np.full_like(self._buf, 255)
        n_rows, n_cols = len(rows), len(cols)
        ri, ci = plots.tick_indices(n_rows), plots.tick_indices(n_cols)
        bold = None
        if highlight_row is not None and highlight_row in ri:
            bold = int(np.flatnonzero(ri == highlight_row)[0])
        depth = _axis_labels(canvas, plots.tick_labels(rows, ri), self.top + (ri + 0.5) * self.ax_h / n_rows,
                             axis_len=self.ax_h, strip=self.strip, vertical=True, edge=self.left,
                             bold_index=bold)
        _TEXT.draw(canvas, _TEXT.fit(self.ylabel, LABEL_PX, self.ax_h + 2 * self.MARGIN),
                   max(2, self.left - depth - 4), self.top + self.ax_h / 2, size_px=LABEL_PX, anchor="rm",
                   rotate=True)
        depth = _axis_labels(canvas, plots.tick_labels(cols, ci), self.left + (ci + 0.5) * self.ax_w / n_cols,
                             axis_len=self.ax_w, strip=self.strip, vertical=False, edge=self.top + self.ax_h)
        y = self.top + self.ax_h + depth
        _TEXT.draw(canvas, _TEXT.fit(self.xlabel, LABEL_PX, self.width - 8), self.left + self.ax_w / 2, y,
                   size_px=LABEL_PX, anchor="mt")
        if masked:
            note = _TEXT.fit(plots.MASK_NOTE, TICK_PX - 2, self.width - 8)
            half = _TEXT.width(note, TICK_PX - 2) / 2
            _TEXT.draw(canvas, note, min(max(self.left + self.ax_w / 2, half + 4), self.width - half - 4),
                       y + LABEL_PX + 8, size_px=TICK_PX - 2, anchor="mt")
        return [canvas[y0:y1, x0:x1].copy() for y0, y1, x0, x1 in self._strip_boxes()]

    def _title(self, buf, title: str) -> None:
        x = self.left + self.ax_w / 2
        for k, line in enumerate(title.split("\n")[:2]):
            line = _TEXT.fit(line, TITLE_PX, self.width - 8)
            half = _TEXT.width(line, TITLE_PX) / 2
            x_line = min(max(x, 4 + half), self.width - 4 - half)
            _TEXT.draw(buf, line, x_line, 8 + k * (TITLE_PX + 4), size_px=TITLE_PX, anchor="mt")


class FastBars(BlitFigure):
    """Bar chart of one query's attention weights (0..1), redrawn by blitting; values written on bars.

    ``.values`` holds the heights last drawn.
    """

    def __init__(self, *, ax_size=(460, 260), ylabel: str = "attention weight", xlabel: str = plots.XLABEL,
                 strip: int = 104):
        self.ax_w, self.ax_h = ax_size
        self.STRIP = strip  # room for the token labels below the bars (pixels)
        self.left, self.top = 80, 12 + TITLE_PX + 10
        bottom = 5 + 3 + self.STRIP + LABEL_PX + 12
        super().__init__(self.left + self.ax_w + 20, self.top + self.ax_h + bottom, css_class="lessons-chart")
        self.xlabel = xlabel
        self.ax = self.figure.add_axes(self._rect(self.left, self.top, self.ax_w, self.ax_h))
        self.ax.set_ylim(0, 1.12)
        self.ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        self.ax.tick_params(axis="y", labelsize=plots.FONT_TICK)
        self.ax.set_xticks([])
        self.ax.grid(True, axis="y", alpha=0.3)
        self.ax.set_ylabel(ylabel, fontsize=plots.FONT_LABEL)
        colour = matplotlib.colormaps[plots.CMAP_WEIGHTS](0.35)
        self.bars = PolyCollection([], facecolors=[colour], edgecolors="black", linewidths=0.6)
        self.ax.add_collection(self.bars)
        self.dynamic = [self.bars]
        self._strips: OrderedDict = OrderedDict()
        self.values = None

    def render(self, values, labels, *, title: str, wait: bool | None = None) -> bytes | None:
        """Draw one bar per key (``values`` (seq_len,), 0..1) labelled with ``labels``."""
        v = np.asarray(values, dtype=float)
        labels = [str(t) for t in labels]
        n = v.size
        if len(labels) != n:
            raise ValueError(f"{len(labels)} labels for {n} bars: give one label per key.")
        self.values = v
        buf = self._begin(None)
        self.ax.set_xlim(-0.6, n - 0.4)
        x = np.arange(n)
        verts = np.stack([np.stack([x - 0.4, np.zeros(n)], 1), np.stack([x - 0.4, v], 1),
                          np.stack([x + 0.4, v], 1), np.stack([x + 0.4, np.zeros(n)], 1)], axis=1)
        self.bars.set_verts(list(verts))
        self._blit(self.bars)
        key = tuple(labels)
        strip = self._strips.get(key)
        if strip is None:
            canvas = buf.copy()  # static drawing (e.g. the "0.0" tick label) under the labels
            idx = plots.tick_indices(n)
            centres = self.left + (idx + 0.6) * self.ax_w / (n + 0.2)  # xlim is (-0.6, n - 0.4)
            depth = _axis_labels(canvas, plots.tick_labels(labels, idx), centres, axis_len=self.ax_w,
                                 strip=self.STRIP, vertical=False, edge=self.top + self.ax_h)
            _TEXT.draw(canvas, self.xlabel, self.left + self.ax_w / 2, self.top + self.ax_h + depth,
                       size_px=LABEL_PX, anchor="mt")
            strip = self._strips[key] = canvas[self.top + self.ax_h + 1:, self.left - 14:].copy()
            if len(self._strips) > 16:
                self._strips.popitem(last=False)
        buf[self.top + self.ax_h + 1:, self.left - 14:] = strip
        pitch = self.ax_w / (n + 0.2)
        size = min(ANNOT_PX, int(ANNOT_PX * 0.85 * pitch / _TEXT.width("0.00", ANNOT_PX)))
        if size >= 10:  # values written above the bars while they fit side by side
            for j, value in enumerate(v):
                px = self.left + (j + 0.6) * pitch
                py = self.top + self.ax_h * (1 - value / 1.12)
                _TEXT.draw(buf, f"{value:.2f}", px, py - 3, size_px=size, anchor="mb")
        _TEXT.draw(buf, _TEXT.fit(title, TITLE_PX, self.width - 8), self.width / 2, 8, size_px=TITLE_PX,
                   anchor="mt")
        return self._finish(wait)


class FastVariance(BlitFigure):
    """The var(q·k)-against-d_k plot of :func:`plots.plot_score_variance`, with a movable marker."""

    def __init__(self, d_ks, raw, scaled, *, size=(620, 430)):
        super().__init__(*size, css_class="lessons-chart")
        self.ax = self.figure.add_axes(self._rect(78, 12 + TITLE_PX + 10, size[0] - 100, size[1] - 100))
        plots.plot_score_variance(d_ks, raw, scaled, ax=self.ax, title=" ")
        self.d_ks, self.raw, self.scaled = np.asarray(d_ks, float), np.asarray(raw), np.asarray(scaled)
        self.vline = self.ax.axvline(1, color="black", linestyle="--", linewidth=1.2)
        self.marker = Line2D([1], [1], marker="o", markersize=20, markerfacecolor="none",
                             markeredgecolor="black", markeredgewidth=2.5, linestyle="none")
        self.ax.add_line(self.marker)
        self.dynamic = [self.vline, self.marker]

    def render(self, d_k: int, scaled: bool, *, title: str, wait: bool | None = None) -> bytes | None:
        self._begin(None)
        i = int(np.flatnonzero(self.d_ks == d_k)[0])
        self.vline.set_xdata([d_k, d_k])
        self.marker.set_data([d_k], [(self.scaled if scaled else self.raw)[i]])
        self.marker.set_marker("s" if scaled else "o")
        self._blit(self.vline)
        self._blit(self.marker)
        _TEXT.draw(self._buf, _TEXT.fit(title, TITLE_PX, self.width - 8), self.width / 2, 8, size_px=TITLE_PX,
                   anchor="mt")
        return self._finish(wait)


# ====================================================================== explorers
def _slider_d_k(value: int) -> widgets.SelectionSlider:
    s = widgets.SelectionSlider(options=list(D_K_OPTIONS), value=value, description="d_k",
                                continuous_update=True)
    s.add_class("lessons-slider-d_k")
    return s


def _slider_seq_len(value: int) -> widgets.IntSlider:
    s = widgets.IntSlider(value=value, min=SEQ_LEN_MIN, max=SEQ_LEN_MAX, step=1, description="seq_len",
                          continuous_update=True)
    s.add_class("lessons-slider-seq_len")
    return s


def _error_html(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" (in {html.escape(where.name)})" if where else ""
    return (
        '<div class="lessons-error-message" style="color:#b00020;font-weight:bold;white-space:pre-wrap">'
        f"The figure could not be redrawn{place}: {html.escape(type(exc).__name__)}: "
        f"{html.escape(str(exc))}</div>"
    )


@lru_cache(maxsize=4)
def _variance_data(seed: int) -> tuple:
    """``plots.measure_score_variance`` over all d_k of the slider, measured once per seed."""
    return plots.measure_score_variance(D_K_OPTIONS, seed=seed)


@lru_cache(maxsize=64)
def _embedding(tokens: tuple, d_model: int, seed: int) -> np.ndarray:
    """``data.embed_tokens``, remembered (read-only): a slider revisits the same sequence often."""
    x = data.embed_tokens(list(tokens), d_model, seed)
    x.setflags(write=False)
    return x


@lru_cache(maxsize=64)
def _projections(d_model: int, d_k: int, seed: int) -> tuple:
    """``data.projection_weights``, remembered (read-only)."""
    ws = data.projection_weights(d_model, d_k, seed)
    for w in ws:
        w.setflags(write=False)
    return ws


def _tokens_for(sentence: str, n: int) -> list[str]:
    """The sentence's tokens, continued by the course's story when ``n`` is longer."""
    own = data.tokenize(data.SENTENCES[sentence])
    if n <= len(own):
        return own[:n]
    story = data.tokens_of_length(n)
    if story[:len(own)] == own:  # the story starts with this sentence ("The cat sat on the mat.")
        return story
    return own + data.tokens_of_length(n - len(own))


def _check_sentence(sentence: str) -> str:
    if sentence not in data.SENTENCES:
        raise ValueError(f"sentence must be one of {sorted(data.SENTENCES)}; got {sentence!r}.")
    return sentence


class _Explorer:
    """Shared machinery: controls that trigger one redraw, errors shown in red, display as ``.widget``."""

    title = ""
    hint = ""

    def __init__(self):
        self.controls: dict[str, widgets.ValueWidget] = {}
        self.figures: dict[str, BlitFigure] = {}
        self.images: dict[str, widgets.Image] = {}
        self.error_box = widgets.HTML(value="")
        self.error_box.add_class("lessons-error")
        self.readout = widgets.HTML(value="")
        self.readout.add_class("lessons-readout")
        self.last_update_ms = float("nan")
        self.last_error: BaseException | None = None
        self._quiet = False

    # -- building
    def _control(self, name: str, control):
        """Register a control; its CSS class is lessons-<slider|checkbox|toggle|control>-<name>."""
        kind = type(control).__name__
        kind = ("slider" if "Slider" in kind else "checkbox" if kind == "Checkbox"
                else "toggle" if kind == "ToggleButtons" else "control")
        control.add_class(f"lessons-{kind}-{name}")
        if hasattr(control.style, "description_width"):
            control.style.description_width = "initial"  # "temperature", not "temperat…"
        self.controls[name] = control
        control.observe(lambda change, name=name: self._changed(name, change["new"]), names="value")
        return control

    def _figure(self, name: str, fig: BlitFigure) -> BlitFigure:
        fig.defer = True  # PNGs deflate in the background; update() flushes them all
        self.figures[name] = fig
        self.images[name] = fig.image
        return fig

    def _layout(self, rows) -> widgets.VBox:
        """Header, controls, error box, rows of images (names or ready widgets), readout."""
        header = widgets.HTML(f"<b>{html.escape(self.title)}</b><br><span>{html.escape(self.hint)}</span>")
        boxes = [widgets.HBox([self.images[n] if isinstance(n, str) else n for n in row],
                              layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
                 for row in rows]
        controls = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        box = widgets.VBox([header, controls, self.error_box, *boxes, self.readout])
        box.add_class("lessons-explorer")
        self._rows = [[n for n in row if isinstance(n, str)] for row in rows]
        return box

    def snapshot(self) -> bytes:
        """One PNG of all the explorer's images as laid out now (for static pages: nbviewer, slides, PDFs).

        ``IPython.display.Image(explorer.snapshot())`` shows it; the live
        explorer itself needs a running kernel.
        """
        rows = [[Image.open(io.BytesIO(bytes(self.images[n].value))) for n in row] for row in self._rows]
        width = max(sum(im.width for im in row) for row in rows)
        sheet = Image.new("RGB", (width, sum(max(im.height for im in row) for row in rows)), "white")
        y = 0
        for row in rows:
            x = 0
            for im in row:
                sheet.paste(im.convert("RGB"), (x, y))
                x += im.width
            y += max(im.height for im in row)
        out = io.BytesIO()
        sheet.save(out, format="png", optimize=True)
        return out.getvalue()

    # -- running
    def _changed(self, name: str, value) -> None:
        self._sync({name: value})  # first, so a redraw never sees a stale range
        if not self._quiet:
            self.update()

    def update(self) -> None:
        """Redraw now from the controls' values. Errors go to ``.error_box`` (and ``.last_error``)."""
        start = time.perf_counter()
        try:
            self._redraw()
            for fig in self.figures.values():
                fig.flush()
        except Exception as exc:  # shown to the learner, not swallowed
            self.last_error = exc
            self.error_box.value = _error_html(exc)
        else:
            self.last_error = None
            self.error_box.value = ""
        finally:
            self.last_update_ms = (time.perf_counter() - start) * 1000.0

    def _redraw(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _project(self, tokens, d_k: int) -> tuple:
        """Step 1 for these tokens: ``(X, (W_Q, W_K, W_V), (Q, K, V))`` from the library (cached data)."""
        x = _embedding(tuple(tokens), self.d_model, self.seed)
        ws = _projections(self.d_model, d_k, self.seed)
        return x, ws, attention.project_qkv(x, *ws)

    def _sync(self, values: dict) -> None:
        """Adjust dependent controls (e.g. the query slider's range) before a redraw."""

    def set(self, **values) -> None:
        """Set several controls at once (one redraw), e.g. ``.set(d_k=64, seq_len=16)``.

        Raises ``TypeError`` for an unknown name and ``ValueError`` for a value the
        control cannot take (sliders would silently clamp it otherwise).
        """
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no control {', '.join(unknown)}; "
                            f"it has {', '.join(self.controls)}.")
        self._quiet = True
        try:
            for name, control in self.controls.items():  # in the controls' order: seq_len before query
                if name in values:
                    self._check_value(name, control, values[name])
                    control.value = values[name]
                    self._sync({name: values[name]})
        finally:
            self._quiet = False
        self.update()

    @staticmethod
    def _check_value(name, control, value) -> None:
        if isinstance(control, widgets.SelectionSlider | widgets.ToggleButtons | widgets.Dropdown):
            if value not in control.options:
                options = ", ".join(str(o) for o in control.options)
                raise ValueError(f"{name} must be one of {options}; got {value!r}.")
        elif isinstance(control, widgets.Checkbox):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{name} must be True or False; got {value!r}.")
        elif isinstance(control, widgets.FloatLogSlider):
            lo, hi = control.base ** control.min, control.base ** control.max
            number = isinstance(value, int | float | np.floating) and not isinstance(value, bool)
            if not number or not lo <= value <= hi:
                raise ValueError(f"{name} must be a number from {lo:g} to {hi:g}; got {value!r}.")
        elif isinstance(control, widgets.IntSlider):
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(f"{name} must be a whole number; got {value!r}.")
            if not control.min <= value <= control.max:
                raise ValueError(f"{name} must be from {control.min} to {control.max}; got {value}.")

    def text(self) -> str:
        """What a page without a kernel (GitHub, nbviewer, nbval) shows instead of the live widget."""
        controls = ", ".join(f"{name}={control.value}" for name, control in self.controls.items())
        return (f"{type(self).__name__}: {self.title} ({controls}). "
                f"Run the notebook in JupyterLab to move the sliders; the picture is its starting view.")

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        """The live widget for JupyterLab, plus a still picture and a sentence for static pages."""
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = self.text()
        bundle["image/png"] = base64.b64encode(self.snapshot()).decode("ascii")
        return bundle


# ---------------------------------------------------------------------- notebook 03
class ScoresExplorer(_Explorer):
    """Raw scores Q·Kᵀ (seq_len, seq_len) for a sentence; sliders for seq_len and d_k (notebook 03).

    Pipeline (all from the library): X = ``data.embed_tokens(tokens, d_model, seed)``,
    W_Q, W_K = ``data.projection_weights(d_model, d_k, seed)``, Q, K =
    ``attention.project_qkv``, scores = ``attention.attention_scores(Q, K)``; entry
    (i, j) = q_i·k_j. Longer sequences continue the sentence with the course's story.
    Watch the colorbar: the scores spread out like √d_k as d_k grows.
    """

    title = "Raw attention scores Q·Kᵀ"
    hint = "Each cell is q_i·k_j. Move d_k and watch the colour scale: scores spread out as d_k grows."

    def __init__(self, sentence: str = "cat", *, d_k: int = 8, d_model: int = 16, seed: int = 0):
        super().__init__()
        self.sentence = _check_sentence(sentence)
        self.d_model, self.seed = d_model, seed
        n = len(data.tokenize(data.SENTENCES[sentence]))
        self._control("seq_len", _slider_seq_len(max(n, SEQ_LEN_MIN)))
        self._control("d_k", _slider_d_k(d_k))
        self._figure("scores", FastHeatmap(colorbar_label="score q·k (dot product)", cmap=plots.CMAP_VALUES,
                                           fmt=".1f"))
        self.widget = self._layout([["scores"]])
        self.update()

    def compute(self, seq_len: int, d_k: int) -> dict:
        """Tokens, Q, K and scores for these settings (what the heatmap shows)."""
        tokens = _tokens_for(self.sentence, seq_len)
        _, _, (q, k, _) = self._project(tokens, d_k)
        return {"tokens": tokens, "q": q, "k": k, "scores": attention.attention_scores(q, k)}

    def _redraw(self) -> None:
        n, d_k = self.controls["seq_len"].value, self.controls["d_k"].value
        r = self.compute(n, d_k)
        s = r["scores"]
        bound = _nice_bound(np.max(np.abs(s)))
        self.figures["scores"].render(s, r["tokens"], r["tokens"], vmin=-bound, vmax=bound,
                                      title=f"Raw scores Q·Kᵀ  (seq_len = {n}, d_k = {d_k})")
        self.readout.value = (
            f"seq_len = {n}, d_k = {d_k}: scores from {s.min():.1f} to {s.max():.1f}, standard deviation "
            f"{s.std():.2f} (√d_k = {math.sqrt(d_k):.2f}). Colour scale ±{bound:g}."
        )


# ---------------------------------------------------------------------- notebook 04
class ScaleSoftmaxExplorer(_Explorer):
    """Why divide by √d_k: score variance grows like d_k, and softmax saturates without scaling (notebook 04).

    Three views: var(q·k) against d_k (measured with :func:`plots.measure_score_variance`,
    the current d_k circled), the weights heatmap softmax(scale·scores / temperature)
    with scale = 1/√d_k when "scale by 1/√d_k" is ticked (else 1), and one query's
    weights as bars. Data: ``data.embed_tokens`` and ``data.projection_weights``
    (unit-variance Q, K), ``attention.attention_scores`` and
    ``attention.attention_weights(scores, scale=...)``.
    """

    title = "Scaling and softmax: why √d_k"
    hint = ("Untick the box and raise d_k: the weights collapse onto one key (one-hot). "
            "Temperature divides the scores too: low = sharper, high = flatter.")

    def __init__(self, sentence: str = "cat", *, d_k: int = 64, d_model: int = 16, seed: int = 0):
        super().__init__()
        self.sentence = _check_sentence(sentence)
        self.tokens = data.tokenize(data.SENTENCES[sentence])
        self.d_model, self.seed = d_model, seed
        self._control("d_k", _slider_d_k(d_k))
        self._control("scaled", widgets.Checkbox(value=True, description="scale by 1/√d_k", indent=False))
        self._control("temperature", widgets.FloatLogSlider(
            value=1.0, base=10, min=-1, max=1, step=0.05, description="temperature", continuous_update=True))
        self._control("query", widgets.IntSlider(value=min(2, len(self.tokens) - 1), min=0,
                                                 max=len(self.tokens) - 1, description="query",
                                                 continuous_update=True))
        d_ks, raw, scaled = _variance_data(seed)
        self._figure("variance", FastVariance(d_ks, raw, scaled))
        short = max(len(t) for t in self.tokens) <= 6  # short words: less room for labels
        self._figure("weights", FastHeatmap(colorbar_label="attention weight (each row sums to 1)",
                                            cmap=plots.CMAP_WEIGHTS, ax_size=(380, 380),
                                            strip=64 if short else 104))
        self._figure("row", FastBars(strip=64 if short else 104))
        self.widget = self._layout([["variance", "weights"], ["row"]])
        self.update()

    def compute(self, d_k: int, scaled: bool, temperature: float) -> dict:
        """Scores, the factor they are multiplied by, and the weights, for these settings."""
        _, _, (q, k, _) = self._project(self.tokens, d_k)
        scores = attention.attention_scores(q, k)
        factor = (1.0 / math.sqrt(d_k) if scaled else 1.0) / float(temperature)
        weights = attention.attention_weights(scores, scale=factor)
        return {"scores": scores, "factor": factor, "weights": weights}

    def _redraw(self) -> None:
        d_k = self.controls["d_k"].value
        scaled = bool(self.controls["scaled"].value)
        temp = float(self.controls["temperature"].value)
        qi = self.controls["query"].value
        r = self.compute(d_k, scaled, temp)
        w = r["weights"]
        how = "÷√d_k" if scaled else "not scaled"
        i = int(np.flatnonzero(self.figures["variance"].d_ks == d_k)[0])
        var = (self.figures["variance"].scaled if scaled else self.figures["variance"].raw)[i]
        self.figures["variance"].render(
            d_k, scaled, title=f"Variance of the scores ≈ d_k; at d_k = {d_k}: {var:.3g} ({how})")
        temp_txt = "" if abs(temp - 1) < 1e-9 else f", T = {temp:.2g}"
        self.figures["weights"].render(w, self.tokens, self.tokens, vmin=0.0, vmax=1.0, highlight_row=qi,
                                       title=f"Weights softmax(scores{' / √d_k' if scaled else ''}"
                                             f"{' / T' if temp_txt else ''})\n"
                                             f"d_k = {d_k}{temp_txt}{'' if scaled else ', NOT scaled'}")
        self.figures["row"].render(w[qi], self.tokens, title=f"Where “{self.tokens[qi]}” looks (sum = 1)")
        top = w.max(axis=1)
        self.readout.value = (
            f"d_k = {d_k}, {how}, temperature {temp:.2g}: the scores entering softmax have standard "
            f"deviation {(r['scores'] * r['factor']).std():.2f}. The largest weight in a row is "
            f"{top.mean():.2f} on average "
            f"({'almost one-hot: softmax is saturated' if top.mean() > 0.9 else 'spread over keys'}); "
            f"every row sums to {w.sum(axis=1).mean():.3f}."
        )


# ---------------------------------------------------------------------- notebook 05
class PipelineExplorer(_Explorer):
    """The whole of attention: scaled scores → weights → output, and one query's weights (notebook 05).

    seq_len, d_k and query sliders, and a causal-mask checkbox. Computed with
    ``attention.project_qkv``, ``attention_scores``, ``scale_scores``,
    ``attention_weights(scores, d_k, causal=...)`` and ``weighted_values``.
    The selected query's row is outlined in the heatmaps.
    """

    title = "Attention, all four steps"
    hint = ("Q·Kᵀ/√d_k → softmax → weights·V. Pick a query to see where it looks; tick 'causal mask' to hide "
            "the future.")

    def __init__(self, sentence: str = "cat", *, seq_len: int = 8, d_k: int = 16, d_model: int = 16,
                 seed: int = 0):
        super().__init__()
        self.sentence = _check_sentence(sentence)
        self.d_model, self.seed = d_model, seed
        self._control("seq_len", _slider_seq_len(seq_len))
        self._control("d_k", _slider_d_k(d_k))
        self._control("query", widgets.IntSlider(value=min(2, seq_len - 1), min=0, max=seq_len - 1,
                                                 description="query", continuous_update=True))
        self._control("causal", widgets.Checkbox(value=False, description="causal mask", indent=False))
        size = (360, 360)
        self._figure("scores", FastHeatmap(colorbar_label="scaled score q·k / √d_k", cmap=plots.CMAP_VALUES,
                                           ax_size=size, fmt=".1f", annotate_max=8))
        self._figure("weights", FastHeatmap(colorbar_label="attention weight (rows sum to 1)",
                                            cmap=plots.CMAP_WEIGHTS, ax_size=size, annotate_max=8))
        self._figure("output", FastHeatmap(colorbar_label="output value", cmap=plots.CMAP_VALUES,
                                           ax_size=size,
                                           xlabel="feature of the output (d_v = d_k)", ylabel="token (query)",
                                           annotate_max=8))
        self._figure("row", FastBars(ax_size=(400, 240)))
        self.widget = self._layout([["scores", "weights"], ["output", "row"]])
        self.update()

    def _sync(self, values: dict) -> None:
        if "seq_len" in values:
            query = self.controls["query"]
            quiet, self._quiet = self._quiet, True
            try:
                query.max = values["seq_len"] - 1
            finally:
                self._quiet = quiet

    def compute(self, seq_len: int, d_k: int, causal: bool) -> dict:
        tokens = _tokens_for(self.sentence, seq_len)
        _, _, (q, k, v) = self._project(tokens, d_k)
        scores = attention.attention_scores(q, k)
        weights = attention.attention_weights(scores, d_k, causal=causal)
        return {"tokens": tokens, "q": q, "k": k, "v": v,
                "scaled_scores": attention.scale_scores(scores, d_k),
                "weights": weights, "output": attention.weighted_values(weights, v)}

    def _redraw(self) -> None:
        n, d_k = self.controls["seq_len"].value, self.controls["d_k"].value
        qi, causal = self.controls["query"].value, bool(self.controls["causal"].value)
        r = self.compute(n, d_k, causal)
        toks = r["tokens"]
        mask = masks.causal_mask(n) if causal else None
        s = r["scaled_scores"]
        sb = _nice_bound(np.max(np.abs(s if mask is None else s[mask])))
        self.figures["scores"].render(s, toks, toks, vmin=-sb, vmax=sb, mask=mask, highlight_row=qi,
                                      title=f"1. Scaled scores Q·Kᵀ/√d_k\nseq_len = {n}, d_k = {d_k}")
        self.figures["weights"].render(r["weights"], toks, toks, vmin=0.0, vmax=1.0, mask=mask,
                                       highlight_row=qi,
                                       title="2. Weights = softmax(row)\neach row sums to 1")
        out = r["output"]
        ob = _nice_bound(np.max(np.abs(out)))
        dims = [str(j) for j in range(out.shape[1])]
        self.figures["output"].render(out, toks, dims, vmin=-ob, vmax=ob, highlight_row=qi,
                                      title=f"3. Output = weights·V\n{n} × {out.shape[1]}")
        self.figures["row"].render(r["weights"][qi], toks, title=f"Where “{toks[qi]}” (query {qi}) looks")
        v = r["v"]
        self.readout.value = (
            f"Row {qi} of the output is Σ_j weights[{qi}, j]·v_j: a weighted average of the value vectors, "
            f"so it stays in their range (V from {v.min():.2f} to {v.max():.2f}; output from {out.min():.2f} "
            f"to {out.max():.2f})."
        )


# ---------------------------------------------------------------------- notebook 02
class ProjectionExplorer(_Explorer):
    """Step 1 with shapes: X (seq_len, d_model) · W (d_model, d_k) = Q, K or V (seq_len, d_k) (notebook 02).

    X = ``data.embed_tokens``, the W's = ``data.projection_weights``, the product
    = ``attention.project_qkv``. Move d_k: W and the result get wider, X does not change.
    """

    title = "Step 1: X · W = Q, K, V"
    hint = "Move d_k: W gets more columns and so does the result; the inner size d_model must match."

    def __init__(self, sentence: str = "cat", *, d_k: int = 4, d_model: int = 8, seed: int = 0):
        super().__init__()
        self.sentence = _check_sentence(sentence)
        self.tokens = data.tokenize(data.SENTENCES[sentence])
        self.d_model, self.seed = d_model, seed
        self._control("d_k", _slider_d_k(d_k))
        self._control("projection", widgets.ToggleButtons(options=["Q", "K", "V"], value="Q",
                                                          description="result"))
        # three panels and two operators fit side by side in a notebook 1,100 px wide (JupyterLab at 1280)
        common = {"cmap": plots.CMAP_VALUES, "ax_size": (150, 150), "strip": 48, "annotate_max": 0}
        self._figure("x", FastHeatmap(colorbar_label="value of X", xlabel="feature (d_model)", ylabel="token",
                                      **common))
        self._figure("w", FastHeatmap(colorbar_label="value of W", xlabel="column (d_k)",
                                      ylabel="row (d_model)", **common))
        self._figure("result", FastHeatmap(colorbar_label="value", xlabel="feature (d_k)", ylabel="token",
                                           **common))
        self._x_drawn = False
        big = "font-size:32px;line-height:1;padding:0 2px"
        self.widget = self._layout([["x", widgets.HTML(f'<div style="{big}">·</div>'), "w",
                                     widgets.HTML(f'<div style="{big}">=</div>'), "result"]])
        self.update()

    def compute(self, d_k: int) -> dict:
        x, (w_q, w_k, w_v), (q, k, v) = self._project(self.tokens, d_k)
        return {"x": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": q, "K": k, "V": v}

    def _redraw(self) -> None:
        d_k, name = self.controls["d_k"].value, self.controls["projection"].value
        r = self.compute(d_k)
        x, w, out = r["x"], r[f"W_{name}"], r[name]
        dims_in = [str(j) for j in range(self.d_model)]
        dims_out = [str(j) for j in range(d_k)]
        if not self._x_drawn:  # X never changes
            b = _nice_bound(np.max(np.abs(x)))
            self.figures["x"].render(x, self.tokens, dims_in, vmin=-b, vmax=b,
                                     title=f"X: input embeddings\n{x.shape[0]} × {x.shape[1]}")
            self._x_drawn = True
        b = _nice_bound(np.max(np.abs(w)))
        self.figures["w"].render(w, dims_in, dims_out, vmin=-b, vmax=b,
                                 title=f"W_{name}: learned weights\n{w.shape[0]} × {w.shape[1]}")
        b = _nice_bound(np.max(np.abs(out)))
        self.figures["result"].render(out, self.tokens, dims_out, vmin=-b, vmax=b,
                                      title=f"{name} = X·W_{name}\n{out.shape[0]} × {out.shape[1]}")
        self.readout.value = (
            f"({x.shape[0]} × {x.shape[1]}) · ({w.shape[0]} × {w.shape[1]}) = "
            f"({out.shape[0]} × {out.shape[1]}): each token's row of X (d_model = {self.d_model} numbers) "
            f"becomes a row of {name} with d_k = {d_k} numbers."
        )
