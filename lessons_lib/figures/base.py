"""The base of the lessons' still figures: ``LessonFigure``, ``heatmap``, ``panel_figure`` and the helpers.

Every function returns a :class:`matplotlib.figure.Figure` (a ``LessonFigure``).
Figures are made directly, not through ``pyplot``: a notebook cell that ends in
``plot_weights(...)`` shows the figure exactly once (``%matplotlib inline`` or
not), and nothing is left open in pyplot's figure list. ``fig = plot_...(...)``
shows nothing until ``fig`` (or ``display(fig)``) ends a cell.

Conventions (course-wide):

* rows are tokens; a heatmap's y axis is the **query** (the token attending),
  its x axis the **key** (the token attended to);
* token labels on both axes up to 32 tokens, every k-th token beyond;
* every heatmap has a title that says what is shown and a labelled colorbar;
* colour maps are viridis (probabilities, 0..1) and cividis (other values):
  both are readable with colour-vision deficiencies and in greyscale;
* masked cells (True = may attend, False = masked) are drawn grey with
  hatching and named in a caption, never as the number 0; the meaning never
  rests on colour alone (values are written in small heatmaps, ✓/✗ in the mask).

The look (colours, colour maps, font sizes, masked cells) comes from :mod:`lessons_lib.figures.style`,
shared with the live figures drawn in the browser (:mod:`lessons_lib.figures.live`); what the lessons
measure is computed in :mod:`lessons_lib.lab`: these functions only draw. A matrix whose
picture would need more memory than the course allows is refused at once, with what to draw instead.

Each lesson's stills live in ``figures/lessonNN_name.py`` (the lesson's notebook's name) and the
stills several lessons show in ``figures/attention_maps.py``, all built on this module (the export
table of ``lessons_lib/__init__.py`` says which module holds which); ``heatmap`` is the general tool.
"""

from __future__ import annotations

import base64
import html
import io
import re
import textwrap

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._checks import (
    as_float_array,
    check_labels,
    check_mask,
    check_memory,
    check_positive_int,
    check_text,
    color_range,
    is_flag,
)
from . import style
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_VALUES,
    CMAP_WEIGHTS,
    FONT_ANNOT,
    FONT_LABEL,
    FONT_TICK,
    FONT_TITLE,
    MASK_EDGE,
    MASK_FACE,
    MASK_HATCH,
    MASK_NOTE,
    XLABEL,
    YLABEL,
    tick_indices,
    tick_labels,
)
from .tables import alt_words, figure_tables, record_matrix, tables_html

__all__ = ["heatmap", "panel_figure", "LessonFigure"]

# Bytes matplotlib needs per cell of a heatmap it draws (the float64 data, its mask, the RGBA image in
# float64 and in uint8): what the memory guard multiplies by the number of cells.
BYTES_PER_CELL = 8 + 1 + 32 + 4


class LessonFigure(Figure):
    """A matplotlib Figure that shows itself in Jupyter as a picture with its alt text (:func:`still_output`).

    It shows itself once, with or without ``%matplotlib inline``: it publishes its own output, so that
    neither IPython's PNG formatter nor the inline backend's adds a second copy of the picture.
    """

    #: Alt text for screen readers and static pages; ``None`` describes the figure from its own text.
    alt: str | None = None

    def _repr_png_(self) -> bytes:
        return figure_png(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The picture as an ``<img>`` with its alt text, and the alt text as plain text."""
        return still_output(self, self.alt_text())

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)

    def alt_text(self) -> str:
        """What the figure shows, in words: ``alt`` if set, else its titles, axis labels and captions;
        LaTeX read as symbols (``$q_i \\cdot k_j$`` -> ``q_i · k_j``)."""
        return alt_words(self.alt or describe_figure(self))


# ------------------------------------------------------------------ the still as a notebook output
# A still is stored as text/html, an <img> that holds its alt text, and not as image/png: JupyterLab and
# Notebook 7 draw an image/png output without the alt text of its metadata (a screen reader meets an
# unnamed image), while an <img> keeps its alt: in JupyterLab and Notebook 7 (whose sanitizer, for an
# untrusted notebook, keeps data: images and alt), in nbconvert's pages (make html, nbviewer) and in the
# viewers that show HTML outputs (GitHub, VS Code). The PNG is stored once: the notebook does not grow.
_STILL = re.compile(r'<img src="data:image/png;base64,(?P<png>[A-Za-z0-9+/=]+)" alt="(?P<alt>[^"]*)"')
def figure_png(fig: Figure, dpi: float | None = None) -> bytes:
    """The figure as PNG bytes, cropped to what is drawn (``dpi``: matplotlib's default unless given)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", bbox_inches="tight", **({"dpi": dpi} if dpi else {}))
    return out.getvalue()


def still_output(fig: Figure, alt: str, *, dpi: float | None = None) -> dict:
    """The figure as a notebook output: ``text/html``, an ``<img>`` of its PNG with ``alt`` (LaTeX read as
    words) and its numbers in a collapsed table under it (:mod:`.tables`), and ``text/plain``,
    ``<Figure: alt>``. :func:`read_still` reads it back."""
    alt = alt_words(" ".join(alt.split()))
    data = figure_png(fig, dpi)
    png = base64.b64encode(data).decode("ascii")
    numbers = tables_html(figure_tables(fig))
    # a block, not an inline image: no line's descender space under it; never narrower than a quarter of its
    # width, so that at 400 % zoom its labels are no smaller on screen than at 100 % (WCAG 1.4.10: a picture
    # may scroll sideways in its output, the text around it reflows)
    return {"text/html": f'<img src="data:image/png;base64,{png}" alt="{html.escape(alt)}"'
                         f' style="{still_style(data)}">{numbers}',
            "text/plain": f"<Figure: {alt}>"}


def still_style(png: bytes) -> str:
    """The inline style of a still's ``<img>``: a block, at least a quarter of the PNG's width (its IHDR)."""
    width = int.from_bytes(png[16:20], "big")
    return f"display:block;min-width:{-(-width // 4)}px"


def read_still(data: dict) -> tuple[str, str] | None:
    """``(PNG as base64, alt text)`` of a still in an output's ``data`` (:func:`still_output`), else ``None``.

    >>> read_still({"text/html": '<img src="data:image/png;base64,iVBORw0KGgo=" alt="A &quot;plot&quot;">'})
    ('iVBORw0KGgo=', 'A "plot"')
    """
    markup = data.get("text/html", "")
    markup = "".join(markup) if isinstance(markup, list) else markup
    match = _STILL.match(markup.strip())
    return (match["png"], html.unescape(match["alt"])) if match else None


def still_numbers(data: dict) -> str:
    """The collapsed tables of a still's output (``<details>…</details>``, :func:`still_output`), or ""."""
    markup = data.get("text/html", "")
    markup = "".join(markup) if isinstance(markup, list) else markup
    start = markup.find('<details class="lessons-still-numbers">')
    return markup[start:markup.index("</details>", start) + len("</details>")] if start >= 0 else ""


def describe_figure(fig: Figure) -> str:
    """A figure's own text as one sentence for a screen reader: titles, axes, colour scales, notes."""
    parts = []
    if fig._suptitle is not None and fig._suptitle.get_text().strip():
        parts.append(fig._suptitle.get_text().strip())
    for ax in fig.axes:
        if getattr(ax, "_colorbar", None) is not None:  # a colour scale, not a plot of its own
            label = ax.get_ylabel() or ax.get_xlabel()
            parts.append(f"colour scale: {label}" if label else "")
            continue
        title = " ".join(t.get_text() for t in (ax.title, ax._left_title, ax._right_title) if t.get_text())
        x, y = ax.get_xlabel(), ax.get_ylabel()
        if not (title or x or y):
            continue
        axis = [title] if title else []
        axis += [f"x axis: {x}"] if x else []
        axis += [f"y axis: {y}"] if y else []
        notes = [t.get_text() for t in ax.texts if len(t.get_text()) > 12]
        parts.append("; ".join(axis + notes[:2]))
    text = ". ".join(p.replace("\n", " ") for p in parts if p)
    return " ".join(text.split()) or "A figure of the lesson (see the text beside it)."


def plain_text(markup: str) -> str:
    """An explorer's HTML read-out as one line of text; a table row reads "name: value, value"."""
    def row(match) -> str:
        cells = [c.strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", match.group(0), flags=re.S)]
        return f" {cells[0]}: {', '.join(cells[1:])}; " if len(cells) > 1 else f" {''.join(cells)}; "

    text = re.sub(r"<tr[^>]*>.*?</tr>", row, markup, flags=re.S)
    text = html.unescape(re.sub(r"<br\s*/?>|<[^>]+>", " ", text))
    text = re.sub(r"\s+([:;,.])", r"\1", " ".join(text.split()))
    return re.sub(r"(;\s*)+", "; ", text).strip(" ;")


def frame_row(ax, row: int, *, color: str = "black", linewidth: float = 3.0,
              inner: bool = False) -> Rectangle:
    """Outline row ``row`` of the heatmap on ``ax`` (the selected query, as the live figures frame it).

    ``inner``: a thin white line inside the frame too, so that it shows on dark cells as well.
    """
    n_cols = ax.images[0].get_array().shape[1]
    if getattr(ax, "lessons_matrix", None) is not None:  # the table shows the framed row's part
        ax.lessons_matrix["focus"] = row
    frame = ax.add_patch(Rectangle((-0.5, row - 0.5), n_cols, 1, fill=False, edgecolor=color,
                                   linewidth=linewidth, zorder=4))
    if inner:
        ax.add_patch(Rectangle((-0.42, row - 0.38), n_cols - 0.16, 0.76, fill=False, edgecolor="white",
                               linewidth=1.0, zorder=4))
    return frame


def add_footnote(fig: Figure, text: str) -> None:
    """Write ``text`` under the figure, wrapped to its width (an explorer's read-out line in its still)."""
    if text:
        width = max(40, int(fig.get_figwidth() * 72 / (0.55 * FONT_LABEL)))
        fig.text(0.5, 0.0, textwrap.fill(text, width), ha="center", va="top", fontsize=FONT_LABEL,
                 transform=fig.transFigure)


def new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    """A figure outside pyplot, with an Agg canvas (so it can be drawn and saved anywhere)."""
    fig = LessonFigure(figsize=(width, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig




def check_matrix(matrix, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
    shape = np.shape(matrix)
    if len(shape) == 2:  # refuse a matrix too big to draw before even looking at its values
        _check_size(shape, name)
    m = as_float_array(matrix, name, min_ndim=2, allow_neg_inf=allow_neg_inf)
    if m.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D matrix (rows, columns), e.g. (seq_len, seq_len); got shape {m.shape}. "
            f"For a batch or several heads, plot one slice at a time, e.g. {name}[0]."
        )
    return m


def _check_size(shape: tuple, name: str) -> None:
    """Refuse at once to draw a matrix whose image would not fit in the course's memory limit."""
    n_rows, n_cols = shape
    check_memory(
        n_rows * n_cols * BYTES_PER_CELL, f"Drawing the {n_rows} × {n_cols} matrix {name}",
        f"Show a slice, e.g. {name}[:256, :256], or a pooled view, e.g. the mean over blocks of 16 × 16 "
        f"cells: {name}[:n - n % 16, :m - m % 16].reshape(n // 16, 16, m // 16, 16).mean(axis=(1, 3)).",
    )


def _check_cmap(cmap):
    """A colour map name matplotlib knows (or a Colormap), else a ValueError naming the course's two."""
    if isinstance(cmap, matplotlib.colors.Colormap):
        return cmap
    if not isinstance(cmap, str) or cmap not in matplotlib.colormaps:
        raise ValueError(f"cmap must be the name of a matplotlib colour map, such as {CMAP_WEIGHTS!r} "
                         f"(weights, 0..1) or {CMAP_VALUES!r} (other values); got {cmap!r}.")
    return matplotlib.colormaps[cmap]


def _check_fmt(fmt) -> str:
    """A number format such as ".2f" (what goes after the colon in an f-string), else a ValueError."""
    try:
        format(1.5, fmt)
    except (TypeError, ValueError):
        raise ValueError(f"fmt must be a number format such as '.2f' (2 decimals) or '.1e'; "
                         f"got {fmt!r}.") from None
    return fmt


def _check_annotate(annotate):
    if annotate is not None and not is_flag(annotate):
        raise TypeError(f"annotate must be True, False or None (automatic); got {annotate!r}.")
    return annotate


def panel_figure(n_rows: int, n_cols: int, *, width: float, height: float, sharey: bool = False):
    """A figure (outside pyplot) with an ``n_rows × n_cols`` grid of axes; returns ``(figure, axes)``.

    For pictures made of several plots side by side, e.g. an explorer's still:
    ``fig, (ax1, ax2) = panel_figure(1, 2, width=12, height=5)``, then
    ``plot_weights(..., ax=ax1)``. It shows itself with its alt text, as every figure of the course.
    """
    n_rows, n_cols = check_positive_int(n_rows, "n_rows"), check_positive_int(n_cols, "n_cols")
    fig = new_figure(width, height)
    axes = fig.subplots(n_rows, n_cols, squeeze=False, sharey=sharey)
    return fig, axes.ravel()


def resolve_mask(mask, m: np.ndarray, name: str = "mask") -> np.ndarray:
    """Boolean ``(rows, cols)``: True = shown, False = masked (given as False, or −∞ in the data)."""
    allowed = np.isfinite(m)
    if mask is not None:
        allowed = allowed & np.broadcast_to(check_mask(mask, m.shape, name), m.shape)
    return allowed



def auto_size(n_rows: int, n_cols: int) -> tuple[float, float]:
    """Axes size in inches: cells big enough for 12-pt labels, capped for long sequences."""
    cell = min(0.6, max(0.24, 6.5 / max(n_rows, n_cols)))
    width = min(9.0, max(2.6, n_cols * cell))
    height = min(8.5, max(2.4, n_rows * cell))
    return width, height


def contrast_with_black_and_white(rgba) -> tuple[float, float]:
    """WCAG 2.1 contrast ratios of an sRGB colour (0..1 channels) with black and with white text."""
    rgb = np.asarray(rgba[:3], dtype=float) * 255
    return style.contrast_ratio(rgb, style.INK_DARK), style.contrast_ratio(rgb, style.INK_LIGHT)


def text_colour_on(rgba) -> str:
    """Black or white for text on a cell of ``rgba`` (0..1 channels), by the course's one switch
    (:func:`~lessons_lib.figures.style.light_ink`): at least 4.58:1 on any colour (WCAG AA)."""
    return "white" if style.light_ink(np.asarray(rgba[:3], dtype=float) * 255) else "black"


def _masked_runs(hidden: np.ndarray) -> list[tuple[int, int, int]]:
    """Each row's runs of masked cells as (row, first_col, length): one hatched patch per run."""
    runs = []
    for r, row in enumerate(hidden):
        padded = np.concatenate(([False], row, [False]))
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        runs.extend((r, int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2]))
    return runs


def _draw_mask_patches(ax, hidden: np.ndarray) -> PatchCollection:
    patches = [Rectangle((c - 0.5, r - 0.5), n, 1) for r, c, n in _masked_runs(hidden)]
    coll = PatchCollection(patches, facecolor=MASK_FACE, edgecolor=MASK_EDGE, hatch=MASK_HATCH,
                           linewidth=0.0, zorder=2)
    coll.set_gid("masked-cells")
    ax.add_collection(coll)
    return coll


def caption(ax, text: str):
    """A note right under the x-axis label (kept inside the figure by constrained layout)."""
    return ax.annotate(text, xy=(0.5, 0.0), xycoords=ax.xaxis.label, xytext=(0, -6),
                       textcoords="offset points", ha="center", va="top", fontsize=FONT_TICK)


def _set_token_ticks(ax, rows: list[str], cols: list[str]) -> None:
    ri, ci = tick_indices(len(rows)), tick_indices(len(cols))
    ax.set_yticks(ri, tick_labels(rows, ri), fontsize=FONT_TICK)
    set_xticks(ax, ci, tick_labels(cols, ci))


def set_xticks(ax, positions, labels: list[str]) -> None:
    """x tick labels, upright when they fit side by side (about 0.11 inch per character at 12 pt)."""
    ax_width = ax.get_position().width * ax.get_figure().get_figwidth()
    longest = max((len(t) for t in labels), default=1)
    rotate = longest * 0.11 > 0.85 * ax_width / max(len(labels), 1)
    ax.set_xticks(positions, labels, fontsize=FONT_TICK, rotation=90 if rotate else 0, ha="center")


def draw_heatmap(ax, m, rows, cols, *, title, colorbar_label, cmap, vmin, vmax, mask, annotate, fmt,
                  xlabel, ylabel, colorbar=True, mask_note: str | None = MASK_NOTE,
                  hidden_text: str = "masked"):
    """Draw a checked matrix on ``ax``; returns (image, colorbar or None).

    ``mask_note`` is the caption under masked cells (None: no caption, when the figure
    carries one note for all its panels, or a legend of its own); ``hidden_text`` is what the
    figure's table says for them ("empty slot", "not computed yet" where they are not a mask).
    """
    allowed = resolve_mask(mask, m)
    hidden = ~allowed
    lo, hi = color_range(m[allowed], vmin, vmax)
    cm = _check_cmap(cmap).with_extremes(bad=MASK_FACE)
    data = np.ma.masked_array(np.where(allowed, m, 0.0), mask=hidden)
    im = ax.imshow(data, cmap=cm, vmin=lo, vmax=hi, aspect="auto", interpolation="nearest")
    _set_token_ticks(ax, rows, cols)
    record_matrix(ax, m, rows, cols, allowed, what=colorbar_label, fmt=fmt,   # its "Numbers as a table"
                  hidden_text=hidden_text)
    ax.set_xlabel(xlabel, fontsize=FONT_LABEL)
    ax.set_ylabel(ylabel, fontsize=FONT_LABEL)
    ax.set_title(title, fontsize=FONT_TITLE)
    if hidden.any():
        _draw_mask_patches(ax, hidden)
        if mask_note is not None:
            caption(ax, mask_note)
    if annotate is None:
        annotate = m.shape[0] <= 12 and m.shape[1] <= 12
    if annotate:
        norm = Normalize(lo, hi)
        for (i, j), value in np.ndenumerate(m):
            if allowed[i, j]:
                ax.text(j, i, format(value, fmt), ha="center", va="center", fontsize=FONT_ANNOT,
                        color=text_colour_on(cm(norm(value))), zorder=3)
    cbar = None
    if colorbar:
        cbar = ax.get_figure().colorbar(im, ax=ax)
        cbar.set_label(colorbar_label, fontsize=FONT_LABEL)
        cbar.ax.tick_params(labelsize=FONT_TICK)
    return im, cbar


def check_rows_sum_to_one(w: np.ndarray, tokens: list[str], name: str) -> None:
    tol = 1e-4 if w.dtype == np.float32 else 1e-6
    if (w < -tol).any() or (w > 1 + tol).any():
        i, j = (int(a) for a in np.argwhere((w < -tol) | (w > 1 + tol))[0])
        raise ValueError(
            f"{name}[{i}, {j}] = {w[i, j]:.4g}, but attention weights are probabilities between 0 and 1. "
            f"Did you pass scores instead of softmax(scores)?"
        )
    sums = w.sum(axis=-1)
    bad = ~(np.isclose(sums, 1.0, atol=tol * w.shape[-1]) | np.isclose(sums, 0.0, atol=tol))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        who = f" (query {tokens[i]!r})" if i < len(tokens) else ""
        raise ValueError(
            f"row {i}{who} of {name} sums to {sums[i]:.4g}, but each row of attention weights sums to 1 "
            f"(softmax over the keys, axis=-1)."
        )


# ------------------------------------------------------------------ the general heatmap
def heatmap(matrix, row_labels=None, col_labels=None, *, title: str, colorbar_label: str, ax=None,
            cmap="viridis", vmin=None, vmax=None, mask=None, annotate=None, fmt: str = ".2f",
            xlabel: str = XLABEL, ylabel: str = YLABEL) -> Figure:
    """Draw a ``(n_rows, n_cols)`` matrix as a labelled heatmap with a colorbar; return the figure.

    ``row_labels``/``col_labels``: one token per row/column (default 0, 1, 2, ...).
    ``mask`` (bool, broadcastable to the matrix; True = may attend): False cells
    are drawn grey and hatched, with a caption, not coloured as a value. ``-inf``
    entries (masked scores) are drawn the same way. ``annotate`` writes each value
    in its cell (default: when the matrix is at most 12×12), formatted with ``fmt``.
    ``vmin``/``vmax`` fix the colour scale (default: the data's range).
    With ``ax`` given, draws there and returns ``ax``'s figure.
    """
    title = check_text(title, "title")
    colorbar_label = check_text(colorbar_label, "colorbar_label")
    _check_fmt(fmt)
    _check_annotate(annotate)
    _check_cmap(cmap)
    m = check_matrix(matrix, "matrix", allow_neg_inf=True)
    rows = check_labels(row_labels, m.shape[0], "row_labels", "row")
    cols = check_labels(col_labels, m.shape[1], "col_labels", "column")
    if ax is None:
        w, h = auto_size(*m.shape)
        fig = new_figure(max(w + 2.4, 0.115 * len(title) + 0.6), h + 2.3)  # wide enough for the title
        ax = fig.add_subplot()
    draw_heatmap(ax, m, rows, cols, title=title, colorbar_label=colorbar_label, cmap=cmap, vmin=vmin,
                  vmax=vmax, mask=mask, annotate=annotate, fmt=fmt, xlabel=xlabel, ylabel=ylabel)
    return ax.get_figure()
