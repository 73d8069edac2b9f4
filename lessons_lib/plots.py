"""Figures for the lessons: heatmaps of scores, weights and outputs, the mask table, and more.

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

The look (colours, colour maps, font sizes, masked cells) comes from :mod:`lessons_lib.style`, shared
with the live figures drawn in the browser (:mod:`lessons_lib.live_figures`); what the lessons
measure is computed in :mod:`lessons_lib.measurements`: these functions only draw. A matrix whose
picture would need more memory than the course allows is refused at once, with what to draw instead.

Which lesson uses what: ``plot_projection`` (notebook 02), ``plot_scores``
(03), ``plot_score_variance``, ``plot_weights``, ``plot_row_weights`` (04),
``plot_outputs`` (05), ``plot_mask`` (07). ``heatmap`` is the general tool.
"""

from __future__ import annotations

import base64
import io
import numbers

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle
from matplotlib.ticker import FuncFormatter

from ._checks import as_bool_mask, as_float_array, check_mask, check_memory, check_positive_int
from .measurements import DEFAULT_D_KS, check_d_ks, measure_score_variance
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
    MAX_TOKEN_LABELS,
    XLABEL,
    YLABEL,
    tick_indices,
    tick_labels,
)
from .style import shorten as _shorten

__all__ = [
    "heatmap", "plot_scores", "plot_weights", "plot_mask", "plot_outputs", "plot_projection",
    "plot_score_variance", "plot_row_weights", "plot_convex_combination", "convex_hull_2d",
    "panel_figure", "LessonFigure", "plot_head_shapes", "plot_head_grid", "plot_mask_gallery",
    "plot_masking_steps",
]

# Bytes matplotlib needs per cell of a heatmap it draws (the float64 data, its mask, the RGBA image in
# float64 and in uint8): what the memory guard multiplies by the number of cells.
BYTES_PER_CELL = 8 + 1 + 32 + 4


class LessonFigure(Figure):
    """A matplotlib Figure that shows itself as a PNG in Jupyter, with or without ``%matplotlib inline``.

    (With the inline backend active IPython's own figure formatter is used;
    either way the figure is shown once.)
    """

    #: Alt text for screen readers and static pages; ``None`` describes the figure from its own text.
    alt: str | None = None

    def _repr_png_(self) -> bytes:
        out = io.BytesIO()
        self.savefig(out, format="png", bbox_inches="tight")
        return out.getvalue()

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The PNG with its alt text as output metadata (``make html`` writes it as the img's alt)."""
        png = base64.b64encode(self._repr_png_()).decode("ascii")
        alt = self.alt_text()
        return {"image/png": png, "text/plain": f"<Figure: {alt}>"}, {"image/png": {"alt": alt}}

    def alt_text(self) -> str:
        """What the figure shows, in words: ``alt`` if set, else its titles, axis labels and captions."""
        return self.alt or describe_figure(self)


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


def _new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    """A figure outside pyplot, with an Agg canvas (so it can be drawn and saved anywhere)."""
    fig = LessonFigure(figsize=(width, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _check_text(value, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty string that says what is shown; got {value!r}.")
    return value


def _check_labels(labels, n: int, name: str, what: str) -> list[str]:
    """Token labels for ``n`` rows/columns; ``None`` means 0, 1, 2, ..."""
    if labels is None:
        return [str(i) for i in range(n)]
    if isinstance(labels, str):
        raise TypeError(
            f"{name} must be a list of tokens, one per {what[:-1]}, not one string {labels!r}; "
            f"use tokenize(sentence) to split it."
        )
    try:
        labels = [str(t) for t in labels]
    except TypeError:
        raise TypeError(f"{name} must be a list of tokens; got {type(labels).__name__}.") from None
    if len(labels) != n:
        raise ValueError(
            f"{name} has {len(labels)} labels but the matrix has {n} {what}: give one label per {what[:-1]}."
        )
    return labels


def _check_matrix(matrix, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
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
    if annotate is not None and not isinstance(annotate, bool | np.bool_):
        raise TypeError(f"annotate must be True, False or None (automatic); got {annotate!r}.")
    return annotate


def panel_figure(n_rows: int, n_cols: int, *, width: float, height: float, sharey: bool = False):
    """A figure (outside pyplot) with an ``n_rows × n_cols`` grid of axes; returns ``(figure, axes)``.

    For pictures made of several plots side by side, e.g. an explorer's still:
    ``fig, (ax1, ax2) = panel_figure(1, 2, width=12, height=5)``, then
    ``plot_weights(..., ax=ax1)``. It shows itself with its alt text, as every figure of the course.
    """
    fig = _new_figure(width, height)
    axes = fig.subplots(n_rows, n_cols, squeeze=False, sharey=sharey)
    return fig, axes.ravel()


def _resolve_mask(mask, m: np.ndarray, name: str = "mask") -> np.ndarray:
    """Boolean ``(rows, cols)``: True = shown, False = masked (given as False, or −∞ in the data)."""
    allowed = np.isfinite(m)
    if mask is not None:
        allowed = allowed & np.broadcast_to(check_mask(mask, m.shape, name), m.shape)
    return allowed


def _color_range(values: np.ndarray, vmin, vmax) -> tuple[float, float]:
    for v, name in ((vmin, "vmin"), (vmax, "vmax")):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v)):
            raise TypeError(f"{name} must be a finite number or None; got {v!r}.")
    lo = float(np.min(values)) if vmin is None and values.size else (0.0 if vmin is None else float(vmin))
    hi = float(np.max(values)) if vmax is None and values.size else (1.0 if vmax is None else float(vmax))
    if lo > hi:
        raise ValueError(f"vmin={lo} is larger than vmax={hi}; the colour scale needs vmin ≤ vmax.")
    if lo == hi:  # a constant matrix: give the colour scale some room
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _auto_size(n_rows: int, n_cols: int) -> tuple[float, float]:
    """Axes size in inches: cells big enough for 12-pt labels, capped for long sequences."""
    cell = min(0.6, max(0.24, 6.5 / max(n_rows, n_cols)))
    width = min(9.0, max(2.6, n_cols * cell))
    height = min(8.5, max(2.4, n_rows * cell))
    return width, height


def _text_color(rgba) -> str:
    """Black on light cells, white on dark ones (relative luminance)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


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


def _caption(ax, text: str):
    """A note right under the x-axis label (kept inside the figure by constrained layout)."""
    return ax.annotate(text, xy=(0.5, 0.0), xycoords=ax.xaxis.label, xytext=(0, -6),
                       textcoords="offset points", ha="center", va="top", fontsize=FONT_TICK)


def _set_token_ticks(ax, rows: list[str], cols: list[str]) -> None:
    ri, ci = tick_indices(len(rows)), tick_indices(len(cols))
    ax.set_yticks(ri, tick_labels(rows, ri), fontsize=FONT_TICK)
    _set_xticks(ax, ci, tick_labels(cols, ci))


def _set_xticks(ax, positions, labels: list[str]) -> None:
    """x tick labels, upright when they fit side by side (about 0.11 inch per character at 12 pt)."""
    ax_width = ax.get_position().width * ax.get_figure().get_figwidth()
    longest = max((len(t) for t in labels), default=1)
    rotate = longest * 0.11 > 0.85 * ax_width / max(len(labels), 1)
    ax.set_xticks(positions, labels, fontsize=FONT_TICK, rotation=90 if rotate else 0, ha="center")


def _draw_heatmap(ax, m, rows, cols, *, title, colorbar_label, cmap, vmin, vmax, mask, annotate, fmt,
                  xlabel, ylabel, colorbar=True):
    """Draw a checked matrix on ``ax``; returns (image, colorbar or None)."""
    allowed = _resolve_mask(mask, m)
    hidden = ~allowed
    lo, hi = _color_range(m[allowed], vmin, vmax)
    cm = _check_cmap(cmap).with_extremes(bad=MASK_FACE)
    data = np.ma.masked_array(np.where(allowed, m, 0.0), mask=hidden)
    im = ax.imshow(data, cmap=cm, vmin=lo, vmax=hi, aspect="auto", interpolation="nearest")
    _set_token_ticks(ax, rows, cols)
    ax.set_xlabel(xlabel, fontsize=FONT_LABEL)
    ax.set_ylabel(ylabel, fontsize=FONT_LABEL)
    ax.set_title(title, fontsize=FONT_TITLE)
    if hidden.any():
        _draw_mask_patches(ax, hidden)
        _caption(ax, MASK_NOTE)
    if annotate is None:
        annotate = m.shape[0] <= 12 and m.shape[1] <= 12
    if annotate:
        norm = Normalize(lo, hi)
        for (i, j), value in np.ndenumerate(m):
            if allowed[i, j]:
                ax.text(j, i, format(value, fmt), ha="center", va="center", fontsize=FONT_ANNOT,
                        color=_text_color(cm(norm(value))), zorder=3)
    cbar = None
    if colorbar:
        cbar = ax.get_figure().colorbar(im, ax=ax)
        cbar.set_label(colorbar_label, fontsize=FONT_LABEL)
        cbar.ax.tick_params(labelsize=FONT_TICK)
    return im, cbar


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
    title = _check_text(title, "title")
    colorbar_label = _check_text(colorbar_label, "colorbar_label")
    _check_fmt(fmt)
    _check_annotate(annotate)
    _check_cmap(cmap)
    m = _check_matrix(matrix, "matrix", allow_neg_inf=True)
    rows = _check_labels(row_labels, m.shape[0], "row_labels", "rows")
    cols = _check_labels(col_labels, m.shape[1], "col_labels", "columns")
    if ax is None:
        w, h = _auto_size(*m.shape)
        fig = _new_figure(max(w + 2.4, 0.115 * len(title) + 0.6), h + 2.3)  # wide enough for the title
        ax = fig.add_subplot()
    _draw_heatmap(ax, m, rows, cols, title=title, colorbar_label=colorbar_label, cmap=cmap, vmin=vmin,
                  vmax=vmax, mask=mask, annotate=annotate, fmt=fmt, xlabel=xlabel, ylabel=ylabel)
    return ax.get_figure()


# ------------------------------------------------------------------ the four steps
def plot_scores(scores, tokens, *, scaled: bool = False, d_k: int | None = None, mask=None, ax=None,
                title: str | None = None, cmap=CMAP_VALUES, vmin=None, vmax=None) -> Figure:
    """Heatmap of attention scores ``(seq_len, seq_len)``: entry (i, j) = q_i·k_j (notebook 03).

    ``scaled=True`` labels them as Q·Kᵀ/√d_k (step 3a, notebook 04); give ``d_k``
    to print it in the title. Masked cells (``mask`` False, or −∞) are hatched.
    Colour map cividis: scores are unbounded, and the brighter cell is the better match.
    """
    s = _check_matrix(scores, "scores", allow_neg_inf=True)
    tokens = _check_labels(tokens, s.shape[0], "tokens", "rows")
    if s.shape[1] != len(tokens):
        raise ValueError(
            f"scores has shape {s.shape} but there are {len(tokens)} tokens; self-attention scores "
            f"are (seq_len, seq_len). For different keys use heatmap(scores, query_tokens, key_tokens, ...)."
        )
    if d_k is not None:
        check_positive_int(d_k, "d_k")
    if not isinstance(scaled, bool | np.bool_):
        raise TypeError(f"scaled must be True or False; got {scaled!r}.")
    what = "Q·Kᵀ/√d_k" if scaled else "Q·Kᵀ"
    if title is None:
        title = f"{'Scaled' if scaled else 'Raw'} attention scores {what}"
        if d_k is not None:
            title += f"  (d_k = {d_k})"
    label = r"scaled score $q_i \cdot k_j\,/\sqrt{d_k}$" if scaled else r"score $q_i \cdot k_j$ (dot product)"
    if vmin is None and vmax is None:
        # symmetric around 0, so the middle grey of cividis means "q_i and k_j are unrelated"
        shown = s[_resolve_mask(mask, s)]
        vmax = float(np.max(np.abs(shown))) if shown.size and np.max(np.abs(shown)) > 0 else 1.0
        vmin = -vmax
    return heatmap(s, tokens, tokens, title=title, colorbar_label=label, ax=ax, cmap=cmap,
                   vmin=vmin, vmax=vmax, mask=mask, fmt=".1f")


def _check_rows_sum_to_one(w: np.ndarray, tokens: list[str], name: str) -> None:
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


def plot_weights(weights, tokens, mask=None, *, ax=None, title: str | None = None,
                 key_tokens=None, annotate=None) -> Figure:
    """Heatmap of attention weights ``(seq_len, seq_len)`` = softmax(Q·Kᵀ/√d_k), each row sums to 1.

    Colour scale fixed to 0..1 (viridis), so two plots can be compared by eye.
    With ``mask`` (True = may attend), masked cells are hatched, and they must
    hold weight 0 (a ValueError says so if not). Notebook 04 (and 07 for masks).
    ``key_tokens`` labels the columns when the keys differ from the queries.
    """
    w = _check_matrix(weights, "weights")
    tokens = _check_labels(tokens, w.shape[0], "tokens", "rows")
    keys = tokens if key_tokens is None else key_tokens
    keys = _check_labels(keys, w.shape[1], "key_tokens" if key_tokens is not None else "tokens", "columns")
    _check_rows_sum_to_one(w, tokens, "weights")
    if mask is not None:
        allowed = np.broadcast_to(check_mask(mask, w.shape), w.shape)
        leak = ~allowed & (np.abs(w) > 1e-6)
        if leak.any():
            i, j = (int(a) for a in np.argwhere(leak)[0])
            raise ValueError(
                f"weights[{i}, {j}] = {w[i, j]:.3g} but the mask forbids query {i} from attending to "
                f"key {j}. "
                f"Apply the mask to the scores (−∞) before the softmax."
            )
    if title is None:
        title = "Attention weights softmax(Q·Kᵀ/√d_k)"
    return heatmap(w, tokens, keys, title=title, colorbar_label="attention weight (each row sums to 1)",
                   ax=ax, cmap=CMAP_WEIGHTS, vmin=0.0, vmax=1.0, mask=mask, annotate=annotate, fmt=".2f")


def plot_mask(mask, tokens, *, ax=None, title: str | None = None, key_tokens=None) -> Figure:
    """The ✓/✗ table of a mask ``(n_queries, n_keys)``, True = may attend (notebook 07).

    Every cell carries its meaning in writing (✓ or ✗) and in texture (masked
    cells are grey and hatched), not in colour alone. Rows are queries, columns keys.
    """
    m = as_bool_mask(mask)
    if m.ndim != 2:
        raise ValueError(f"mask must be 2-D (n_queries, n_keys); got shape {m.shape}.")
    rows = _check_labels(tokens, m.shape[0], "tokens", "rows")
    cols = _check_labels(rows if key_tokens is None else key_tokens, m.shape[1],
                         "key_tokens" if key_tokens is not None else "tokens", "columns")
    if title is None:
        title = "Mask: which keys each query may attend to"
    if ax is None:
        w, h = _auto_size(*m.shape)
        fig = _new_figure(max(w + 1.8, 4.6), h + 2.9)
        ax = fig.add_subplot()
    tint = np.array(matplotlib.colormaps[CMAP_WEIGHTS](0.8))
    allowed_colour = tuple(0.45 * tint[:3] + 0.55) + (1.0,)  # a pale green: the ✓ carries the meaning
    _draw_heatmap(ax, np.ones(m.shape), rows, cols, title=title, colorbar_label="-", mask=m,
                  cmap=ListedColormap([allowed_colour]), vmin=0.0, vmax=1.0, annotate=False, fmt="",
                  xlabel=XLABEL, ylabel=YLABEL, colorbar=False)
    if max(m.shape) <= 24:
        size = FONT_TITLE if max(m.shape) <= 12 else FONT_ANNOT
        for (i, j), ok in np.ndenumerate(m):
            ax.text(j, i, "✓" if ok else "✗", ha="center", va="center", fontsize=size,
                    color="black", zorder=3, fontweight="bold")
    # replace the generic caption by a legend for both symbols
    for text in list(ax.texts):
        if text.get_text() == MASK_NOTE:
            text.remove()
    _caption(ax, "✓ may attend\n✗ masked (▨ grey hatched):\nscore set to −∞, so weight exactly 0")
    return ax.get_figure()


def plot_outputs(output, tokens, *, ax=None, title: str | None = None, feature_names=None,
                 vmin=None, vmax=None) -> Figure:
    """Heatmap of the attention output ``(seq_len, d_v)`` = weights·V: rows tokens, columns features.

    Row i is the weighted average Σ_j weights[i, j]·v_j, token i's new,
    context-aware vector. Notebook 05.
    """
    out = _check_matrix(output, "output")
    tokens = _check_labels(tokens, out.shape[0], "tokens", "rows")
    names = None if feature_names is None else _check_labels(feature_names, out.shape[1], "feature_names",
                                                              "columns")
    if title is None:
        title = "Attention output weights·V (one row per token)"
    return heatmap(out, tokens, names, title=title, colorbar_label="output value", ax=ax,
                   cmap=CMAP_VALUES, vmin=vmin, vmax=vmax, xlabel="feature (dimension of V)",
                   ylabel="token (query)", fmt=".2f")


def plot_projection(x, w, result, tokens, name: str = "Q", *, feature_names=None) -> Figure:
    """Step 1 drawn as three heatmaps: X (seq_len, d_model) · W (d_model, d) = result (seq_len, d).

    ``name`` is "Q", "K" or "V" (the result), so W is W_Q, W_K or W_V. Each
    panel's title gives its shape, so the learner can see the inner sizes
    (d_model) cancel. Notebook 02.
    """
    if name not in ("Q", "K", "V"):
        raise ValueError(f'name must be "Q", "K" or "V" (which projection is shown); got {name!r}.')
    x = _check_matrix(x, "X")
    w = _check_matrix(w, f"W_{name}")
    r = _check_matrix(result, name)
    if x.shape[1] != w.shape[0]:
        raise ValueError(
            f"X has d_model={x.shape[1]} columns but W_{name} has {w.shape[0]} rows; in X·W_{name} "
            f"the inner sizes must match (X is {x.shape}, W_{name} is {w.shape})."
        )
    if r.shape != (x.shape[0], w.shape[1]):
        raise ValueError(
            f"{name} has shape {r.shape}, but X·W_{name} has shape ({x.shape[0]}, {w.shape[1]}): "
            f"one row per token, one column per column of W_{name}."
        )
    tokens = _check_labels(tokens, x.shape[0], "tokens", "rows")
    dims_in = [str(i) for i in range(x.shape[1])] if feature_names is None else _check_labels(
        feature_names, x.shape[1], "feature_names", "columns")
    dims_out = [str(i) for i in range(w.shape[1])]
    widths = [min(5.0, max(1.6, c * 0.32)) for c in (x.shape[1], w.shape[1], w.shape[1])]
    height = min(6.0, max(2.4, max(x.shape[0], w.shape[0]) * 0.3))
    fig = _new_figure(sum(widths) + 2 * 0.5 + 1.6, height + 3.0)
    grid = fig.add_gridspec(1, 5, width_ratios=[widths[0], 0.5, widths[1], 0.5, widths[2]])
    panels = [
        (x, tokens, dims_in, f"X\n{x.shape[0]} × {x.shape[1]}\ninput embeddings",
         "token", "feature of X (d_model)", "value of X"),
        (w, dims_in, dims_out, f"$W_{name}$\n{w.shape[0]} × {w.shape[1]}\nlearned weights",
         "row of W (d_model)", f"column of $W_{name}$", f"value of $W_{name}$"),
        (r, tokens, dims_out, f"{name} = X·$W_{name}$\n{r.shape[0]} × {r.shape[1]}\n"
         f"{ {'Q': 'queries', 'K': 'keys', 'V': 'values'}[name] }",
         "token", f"feature of {name}", f"value of {name}"),
    ]
    for col, (m, rows, cols, title, ylabel, xlabel, clabel) in zip((0, 2, 4), panels):
        ax = fig.add_subplot(grid[0, col])
        im, _ = _draw_heatmap(ax, m, rows, cols, title=title, colorbar_label=clabel, cmap=CMAP_VALUES,
                              vmin=None, vmax=None, mask=None, annotate=False, fmt="", xlabel=xlabel,
                              ylabel=ylabel, colorbar=False)
        cbar = fig.colorbar(im, ax=ax, orientation="horizontal", location="bottom", fraction=0.08, pad=0.02)
        cbar.set_label(clabel, fontsize=FONT_LABEL)
        cbar.ax.tick_params(labelsize=FONT_ANNOT)
    for col, symbol in ((1, "·"), (3, "=")):
        ax = fig.add_subplot(grid[0, col])
        ax.set_axis_off()
        ax.text(0.5, 0.5, symbol, ha="center", va="center", fontsize=30, transform=ax.transAxes)
    fig.suptitle(f"Step 1: {name} = X·$W_{name}$, one row per token (shapes: rows × columns)",
                 fontsize=FONT_TITLE)
    return fig


# ------------------------------------------------------------------ why √d_k
def plot_score_variance(d_ks=DEFAULT_D_KS, variances=None, scaled_variances=None, *, current_d_k=None,
                        ax=None, seed: int = 0, title: str | None = None) -> Figure:
    """var(q·k) against d_k on log-log axes: measured dots on the line var = d_k; scaled dots at 1.

    Without ``variances`` they are measured with :func:`measure_score_variance`.
    ``current_d_k`` is marked with a dashed line. Shapes, not colours alone,
    tell the series apart (circles unscaled, squares scaled). Notebook 04.
    """
    if variances is None:
        d_arr, variances, measured_scaled = measure_score_variance(d_ks, seed=seed)
        scaled_variances = measured_scaled if scaled_variances is None else scaled_variances
    else:
        d_arr = check_d_ks(d_ks).astype(float)
    var = as_float_array(variances, "variances")
    if var.shape != d_arr.shape:
        raise ValueError(f"variances has {var.size} values but d_ks has {d_arr.size}; give one per d_k.")
    if (var <= 0).any():
        raise ValueError("variances must be positive (they are plotted on a log scale).")
    if ax is None:
        fig = _new_figure(7.2, 5.0)
        ax = fig.add_subplot()
    grid = np.geomspace(d_arr.min(), d_arr.max(), 50)
    ax.plot(grid, grid, color="0.35", linestyle="-", linewidth=1.5, label="theory: var = d_k")
    ax.plot(d_arr, var, "o", color=matplotlib.colormaps[CMAP_WEIGHTS](0.25), markersize=9,
            label="measured var(q·k), unscaled")
    if scaled_variances is not None:
        sv = as_float_array(scaled_variances, "scaled_variances")
        if sv.shape != d_arr.shape:
            raise ValueError(f"scaled_variances has {sv.size} values but d_ks has {d_arr.size}.")
        ax.axhline(1.0, color="0.35", linestyle=":", linewidth=1.5, label="theory after scaling: var = 1")
        ax.plot(d_arr, sv, "s", color=matplotlib.colormaps[CMAP_WEIGHTS](0.75), markersize=8,
                markeredgecolor="black", label="measured var(q·k/√d_k), scaled")
    if current_d_k is not None:
        ax.axvline(current_d_k, color="black", linestyle="--", linewidth=1.2, label=f"d_k = {current_d_k}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.set_xlabel("d_k (length of each query and key)", fontsize=FONT_LABEL)
    ax.set_ylabel("variance of the scores", fontsize=FONT_LABEL)
    ax.tick_params(labelsize=FONT_TICK)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=FONT_ANNOT, loc="upper left")
    ax.set_title(title or "Why divide by √d_k: var(q·k) grows like d_k", fontsize=FONT_TITLE)
    return ax.get_figure()


# ------------------------------------------------------------------ one query's weights
def plot_row_weights(weights_row, tokens, query_token, *, mask=None, ax=None,
                     title: str | None = None) -> Figure:
    """Bar chart of one query's attention weights over the keys ``(seq_len,)``, summing to 1.

    ``query_token`` is the attending token (a string, or its index in ``tokens``).
    Each bar's value is written above it (up to 16 keys). ``mask`` (bool per key,
    True = may attend) draws the masked keys as grey hatched slots marked ✗
    instead of as bars of 0. Notebooks 00, 04 and 05.
    """
    row = as_float_array(weights_row, "weights_row")
    if row.ndim != 1:
        raise ValueError(f"weights_row must be one row of weights, shape (seq_len,); got shape {row.shape}. "
                         f"Pick a row: weights[i].")
    tokens = _check_labels(tokens, row.shape[0], "tokens", "keys")
    if isinstance(query_token, numbers.Integral) and not isinstance(query_token, bool):
        if not 0 <= query_token < len(tokens):
            raise ValueError(f"query_token index {query_token} is outside 0..{len(tokens) - 1}.")
        query_token = tokens[int(query_token)]
    if not isinstance(query_token, str):
        raise TypeError(
            f"query_token must be the attending token (a string) or its index; got {query_token!r}."
        )
    _check_rows_sum_to_one(row[None, :], [query_token], "weights_row")
    allowed = np.ones(row.shape, dtype=bool) if mask is None else check_mask(mask, row.shape, "mask")
    allowed = np.broadcast_to(allowed, row.shape)
    if (row[~allowed] != 0).any():
        raise ValueError("weights_row has non-zero weight on a masked key; "
                         "was the mask applied before the softmax?")
    if ax is None:
        fig = _new_figure(min(11.0, max(6.4, 0.45 * len(tokens) + 2.0)), 4.6)
        ax = fig.add_subplot()
    x = np.arange(len(tokens))
    bars = ax.bar(x[allowed], row[allowed], color=matplotlib.colormaps[CMAP_WEIGHTS](0.35), edgecolor="black",
                  linewidth=0.6)
    if (~allowed).any():
        ax.bar(x[~allowed], np.full((~allowed).sum(), 1.0), color=MASK_FACE, hatch=MASK_HATCH,
               edgecolor=MASK_EDGE, linewidth=0.6, label="masked: may not attend", zorder=0)
        for i in x[~allowed]:
            ax.text(i, 0.5, "✗", ha="center", va="center", fontsize=FONT_LABEL, color=MASK_EDGE)
        ax.legend(fontsize=FONT_ANNOT, loc="upper right")
    if len(tokens) <= 16:
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in row[allowed]], fontsize=FONT_ANNOT, padding=2)
    idx = tick_indices(len(tokens))
    _set_xticks(ax, idx, tick_labels(tokens, idx))
    ax.set_xlim(-0.6, len(tokens) - 0.4)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("attention weight", fontsize=FONT_LABEL)
    ax.set_xlabel(XLABEL, fontsize=FONT_LABEL)
    ax.tick_params(axis="y", labelsize=FONT_TICK)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title or f"Where “{query_token}” looks: its weights (sum = 1)", fontsize=FONT_TITLE)
    return ax.get_figure()


def convex_hull_2d(points) -> np.ndarray:
    """Corners of the convex hull of 2-D ``points (n, 2)``, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted(set(map(tuple, np.asarray(points, dtype=float))))
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def plot_convex_combination(values, outputs, tokens, *, weights=None, query=None, ax=None,
                            title: str | None = None) -> Figure:
    """Value vectors ``(S, 2)`` as labelled points, their convex hull, and the outputs ``(L, 2)`` inside it.

    Each output row is Σ_j w_ij v_j with non-negative weights summing to 1 (a convex
    combination), so it lies inside the grey polygon (the hull of the values).
    With ``weights (L, S)`` and ``query`` (index or token), lines join that query's
    output to every value, thicker and darker for larger weights, each labelled with
    its weight. Values are circles, outputs crosses: shape, not colour, tells them
    apart. Notebook 05.
    """
    v = _check_matrix(values, "values")
    o = _check_matrix(outputs, "outputs")
    for m, name in ((v, "values"), (o, "outputs")):
        if m.shape[1] != 2:
            raise ValueError(f"{name} must have exactly 2 features to be drawn in the plane; "
                             f"got shape {m.shape}. "
                             f"Use d_v=2 for this picture.")
    keys = _check_labels(tokens, v.shape[0], "tokens", "rows of values")
    queries = keys if o.shape[0] == v.shape[0] else [str(i) for i in range(o.shape[0])]
    w = None
    if weights is not None:
        w = _check_matrix(weights, "weights")
        if w.shape != (o.shape[0], v.shape[0]):
            raise ValueError(f"weights must have shape (n_outputs, n_values) = {(o.shape[0], v.shape[0])}; "
                             f"got {w.shape}.")
        _check_rows_sum_to_one(w, queries, "weights")
    if query is not None:
        if isinstance(query, str):
            if query not in queries:
                raise ValueError(f"query {query!r} is not one of the tokens {queries}.")
            query = queries.index(query)
        if isinstance(query, bool) or not isinstance(query, numbers.Integral) or not 0 <= query < o.shape[0]:
            raise ValueError(f"query must be a token or an index 0..{o.shape[0] - 1}; got {query!r}.")
        if w is None:
            raise ValueError("Give weights=... as well to draw the selected query's weights.")
    if ax is None:
        fig = _new_figure(7.5, 6.5)
        ax = fig.add_subplot()
    hull = convex_hull_2d(v)
    if len(hull) >= 3:
        ax.add_patch(Polygon(hull, closed=True, facecolor="0.88", edgecolor="0.35", linewidth=1.5,
                             label="convex hull of the values", zorder=1))
    cmap = matplotlib.colormaps[CMAP_WEIGHTS]
    if query is not None:
        for j in range(v.shape[0]):
            wij = float(w[query, j])
            ax.plot([o[query, 0], v[j, 0]], [o[query, 1], v[j, 1]], color=cmap(0.9 - 0.8 * wij),
                    linewidth=0.5 + 6 * wij, alpha=0.9, zorder=2)
    ax.scatter(v[:, 0], v[:, 1], s=110, marker="o", color=cmap(0.3), edgecolor="black", zorder=3,
               label="value vectors v_j")
    for j, t in enumerate(keys):
        text = _shorten(t) if query is None else f"{_shorten(t)}  (w = {float(w[query, j]):.2f})"
        ax.annotate(text, v[j], xytext=(8, 6), textcoords="offset points", fontsize=FONT_TICK, zorder=4,
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.8))
    ax.scatter(o[:, 0], o[:, 1], s=90, marker="X", color="black", zorder=4, label="outputs Σ_j w_ij v_j")
    if query is not None:
        ax.scatter(*o[query], s=260, marker="X", color=cmap(0.95), edgecolor="black", linewidth=1.2, zorder=6,
                   label=f"output of “{queries[query]}”")
    ax.set_xlabel("value feature 0", fontsize=FONT_LABEL)
    ax.set_ylabel("value feature 1", fontsize=FONT_LABEL)
    ax.tick_params(labelsize=FONT_TICK)
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=FONT_ANNOT, loc="best")
    ax.set_title(title or "Every output is a weighted average of the values:\n"
                          "it lies inside their convex hull",
                 fontsize=FONT_TITLE)
    return ax.get_figure()


# ====================================================================== notebook 06: heads
HEAD_HATCHES = ("", "//", "..", "\\\\", "xx", "oo", "--", "++")  # head identity by texture, not colour only


def _head_colour(head: int, n_heads: int):
    """A light tint of viridis per head (text stays black on it)."""
    rgb = np.array(matplotlib.colormaps[CMAP_WEIGHTS](0.15 + 0.7 * head / max(n_heads - 1, 1))[:3])
    return tuple(0.45 * rgb + 0.55)


def _draw_cell_block(ax, x0: float, y0: float, texts, heads, n_heads: int,
                     gap_every: int | None = None) -> float:
    """Unit cells with text, filled by head (tint + hatch), top-left at (x0, y0), y down; returns the width.

    ``gap_every``: a small gap after every that many columns (the heads of a view, side by side).
    ``heads`` of -1 draws a neutral (white) cell.
    """
    rows, cols = len(texts), len(texts[0])
    x_of = [x0 + c + (0.3 * (c // gap_every) if gap_every else 0.0) for c in range(cols)]
    for r in range(rows):
        for c in range(cols):
            head = int(heads[r][c])
            face = "white" if head < 0 else _head_colour(head, n_heads)
            hatch = "" if head < 0 else HEAD_HATCHES[head % len(HEAD_HATCHES)]
            ax.add_patch(Rectangle((x_of[c], y0 + r), 1, 1, facecolor=face, edgecolor="0.25", linewidth=0.8,
                                   hatch=hatch, hatchcolor="0.55"))   # a light hatch: the text stays legible
            if texts[r][c]:
                ax.text(x_of[c] + 0.5, y0 + r + 0.5, texts[r][c], ha="center", va="center",
                        fontsize=FONT_ANNOT - 1, zorder=3)
    return x_of[-1] + 1 - x0


def plot_head_shapes(seq_len: int = 3, d_model: int = 6, n_heads: int = 2) -> Figure:
    """The view/transpose of multi-head attention drawn cell by cell (notebook 06).

    Top row, the split: Q ``(seq_len, d_model)`` → ``reshape`` ``(seq_len, n_heads,
    d_head)`` → ``transpose`` ``(n_heads, seq_len, d_head)``. Bottom row, the merge
    of the head outputs back to ``(seq_len, d_model)`` and W_O. Every cell is
    labelled "token, column" (of Q at the top, of its head at the bottom) and filled
    by its head (a tint and a hatch per head), so each number can be followed. The
    cells are placed by :func:`lessons_lib.multihead.split_heads` and ``merge_heads``
    themselves, run on an array of cell numbers: the figure shows what the library does.
    """
    from ._checks import check_positive_int
    from .multihead import _check_heads, merge_heads, split_heads

    L = check_positive_int(seq_len, "seq_len")
    d = check_positive_int(d_model, "d_model")
    h = _check_heads(n_heads, d)
    dh = d // h
    if L > 6 or d > 12:
        raise ValueError(f"plot_head_shapes draws every cell: keep seq_len ≤ 6 and d_model ≤ 12 "
                         f"(got {L} and {d}).")
    cell_no = np.arange(L * d).reshape(L, d)                   # cell (i, c) holds the number i·d + c
    split = split_heads(cell_no.astype(float), h).astype(int)  # (h, L, dh): where each number went
    head_of = (cell_no % d) // dh                              # the head that owns each column

    def names(numbers, width):
        return [[f"{v // width},{v % width}" for v in row] for row in numbers]

    gap, stack_gap, title_h = 5.0, 0.8, 1.7
    ax_items = []   # drawn after the size is known

    def title(x, y, text):
        ax_items.append(("title", x, y - 0.3, text))

    def step(x_from, x_to, y, code):
        ax_items.append(("step", x_from, x_to, y, code))

    blocks = []     # (x, y, texts, heads, gap_every)
    # top row: the split
    y1 = title_h
    blocks.append((0.0, y1, names(cell_no, d), head_of, None))
    title(0.0, y1, f"Q = X·W_Q\n({L}, {d})")
    x2 = d + gap
    step(d, x2, y1 + L / 2, f".reshape({L}, {h}, {dh})")
    blocks.append((x2, y1, names(cell_no, d), head_of, dh))
    title(x2, y1, f"view: heads side by side\n({L}, {h}, {dh})")
    x3 = x2 + d + 0.3 * (h - 1) + gap
    step(x2 + d + 0.3 * (h - 1), x3, y1 + L / 2, ".transpose(1, 0, 2)")
    for k in range(h):
        yk = y1 + k * (L + stack_gap)
        blocks.append((x3, yk, names(split[k], d), np.full((L, dh), k), None))
        ax_items.append(("label", x3 + dh + 0.3, yk + L / 2, f"head {k}", "left"))
    title(x3, y1, f"heads first: one matrix per head\n({h}, {L}, {dh})")
    top_bottom = y1 + h * (L + stack_gap)
    # bottom row: the merge
    y2 = top_bottom + title_h + 1.2
    out_no = np.arange(L * dh).reshape(L, dh)
    for k in range(h):
        yk = y2 + k * (L + stack_gap)
        blocks.append((0.0, yk, names(out_no, dh), np.full((L, dh), k), None))
        ax_items.append(("label", -0.3, yk + L / 2, f"head {k}", "right"))
    title(0.0, y2, f"head outputs = weights·V\n({h}, {L}, {dh})")
    tagged = np.stack([out_no] * h) + 1000 * np.arange(h)[:, None, None]   # head k's cells: 1000·k + cell
    tagged = merge_heads(tagged.astype(float)).astype(int)
    merged_texts, merged_heads = names(tagged % 1000, dh), tagged // 1000
    xb = dh + gap
    step(dh, xb, y2 + L / 2, ".transpose(1, 0, 2)")
    blocks.append((xb, y2, merged_texts, merged_heads, dh))
    title(xb, y2, f"tokens first\n({L}, {h}, {dh})")
    xc = xb + d + 0.3 * (h - 1) + gap
    step(xb + d + 0.3 * (h - 1), xc, y2 + L / 2, f".reshape({L}, {d})")
    blocks.append((xc, y2, merged_texts, merged_heads, None))
    title(xc, y2, f"Concat(heads)\n({L}, {d})")
    xd = xc + d + gap
    step(xc + d, xd, y2 + L / 2, f"@ W_O  ({d}, {d})")
    blocks.append((xd, y2, [[""] * d for _ in range(L)], np.full((L, d), -1), None))
    title(xd, y2, f"output\n({L}, {d})")
    width = max(xd + d, x3 + dh + 3.0) + 0.5
    height = y2 + h * (L + stack_gap) + 0.4
    inch = 0.42
    fig = _new_figure(width * inch + 0.3, height * inch + 0.6, layout=None)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0 - 0.6 / (height * inch + 0.6)))
    ax.set_axis_off()
    ax.set_xlim(-2.5, width)
    ax.set_ylim(height, 0.0)
    for x, y, texts, heads, every in blocks:
        _draw_cell_block(ax, x, y, texts, heads, h, gap_every=every)
    arrow = dict(arrowstyle="-|>", color="0.2", linewidth=1.6, mutation_scale=18)
    for item in ax_items:
        if item[0] == "title":
            ax.text(item[1], item[2], item[3], ha="left", va="bottom", fontsize=FONT_ANNOT + 1)
        elif item[0] == "step":
            _, x_from, x_to, y, code = item
            ax.annotate("", xy=(x_to - 0.3, y), xytext=(x_from + 0.3, y), arrowprops=arrow)
            ax.text((x_from + x_to) / 2, y - 0.35, code, ha="center", va="bottom", fontsize=FONT_ANNOT - 1,
                    family="monospace")
        else:
            _, x, y, text, ha = item
            ax.text(x, y, text, ha=ha, va="center", fontsize=FONT_ANNOT)
    ax.text(-2.4, y2 - title_h - 0.5, "…each head attends on its own (scores, softmax, weights·V), then:",
            ha="left", va="center", fontsize=FONT_ANNOT + 1, style="italic")
    handles = [Rectangle((0, 0), 1, 1, facecolor=_head_colour(k, h), edgecolor="0.25", hatchcolor="0.55",
                         hatch=HEAD_HATCHES[k % len(HEAD_HATCHES)], label=f"head {k}") for k in range(h)]
    ax.legend(handles=handles, loc="upper right", bbox_to_anchor=(0.98, 0.9), fontsize=FONT_ANNOT, ncols=1,
              frameon=False,
              title="cell text: token, column", title_fontsize=FONT_ANNOT)
    fig.suptitle(f"Multi-head attention, shape at each stage: L = {L} tokens, d_model = {d}, "
                 f"{h} heads of d_head = {dh}", fontsize=FONT_TITLE, y=0.995, va="top")
    return fig


def plot_head_grid(weights, tokens, *, head_names=None, title: str | None = None, mask=None,
                   ncols: int | None = None) -> Figure:
    """One heatmap of attention weights per head, ``weights (n_heads, seq_len, seq_len)`` (notebook 06).

    All heads share one 0..1 viridis scale and one colorbar, so they can be compared
    by eye; each panel is titled with the head's number (and name, from
    ``head_names``). Rows are queries, columns keys; ``mask`` (True = may attend)
    hatches masked cells in every head.
    """
    w = as_float_array(weights, "weights")
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (n_heads, seq_len, seq_len), one square matrix per head; "
                         f"got shape {w.shape}.")
    h, L, _ = w.shape
    tokens = _check_labels(tokens, L, "tokens", "rows")
    names = [f"head {k}" for k in range(h)] if head_names is None else [
        f"head {k}: {n}" for k, n in enumerate(_check_labels(head_names, h, "head_names", "heads"))]
    for k in range(h):
        _check_rows_sum_to_one(w[k], tokens, f"weights[{k}]")
    ncols = min(h, 4) if ncols is None else int(ncols)
    nrows = -(-h // ncols)
    side = min(3.6, max(2.4, 0.25 * L + 1.0))                 # inches per panel
    # token labels at least 12 pt apart, and no more than MAX_TOKEN_LABELS of them
    step = max(1, int(np.ceil(0.19 * L / side)), int(np.ceil(L / MAX_TOKEN_LABELS)))
    shown = tick_labels(tokens, np.arange(0, L, step)) if step > 1 else tick_labels(tokens, np.arange(L))
    label = 0.11 * max(len(t) for t in shown) + 0.5             # room for the token labels
    # placed by hand, not by constrained layout: a grid of 8 panels then draws in half the time
    left, bottom, top, gap, bar = label + 0.35, label + 0.5, 0.9, 0.3, 1.3
    width, height = left + ncols * side + (ncols - 1) * gap + bar, bottom + nrows * (side + gap + 0.1) + top
    fig = _new_figure(width, height, layout=None)
    fig.subplots_adjust(left=left / width, right=(width - bar) / width, bottom=bottom / height,
                        top=1 - top / height, wspace=gap / side, hspace=(gap + 0.3) / side)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    im = None
    for k, ax in enumerate(axes):
        if k >= h:
            ax.set_axis_off()
            continue
        im, _ = _draw_heatmap(ax, w[k], tokens, tokens, title=names[k], colorbar_label="-", cmap=CMAP_WEIGHTS,
                              vmin=0.0, vmax=1.0, mask=mask, annotate=False, fmt="", colorbar=False,
                              xlabel=XLABEL if k // ncols == nrows - 1 else "",
                              ylabel=YLABEL if k % ncols == 0 else "")
        ax.title.set_fontsize(FONT_LABEL)
        if step > 1:                  # small panels: every step-th token, with its position
            ticks = np.arange(0, L, step)
            ax.set_yticks(ticks, tick_labels(tokens, ticks), fontsize=FONT_TICK)
            ax.set_xticks(ticks, tick_labels(tokens, ticks), fontsize=FONT_TICK, rotation=90)
        if k % ncols != 0:            # tokens are the same in every panel: label the outer edges only
            ax.set_yticks([])
        if k + ncols < h:
            ax.set_xticks([])
    cax = fig.add_axes(((width - bar + 0.25) / width, bottom / height, 0.18 / width,
                        (height - bottom - top) / height))
    cbar = fig.colorbar(im, cax=cax)
    cbar.set_label("attention weight (each row sums to 1)", fontsize=FONT_LABEL)
    cbar.ax.tick_params(labelsize=FONT_TICK)
    fig.suptitle(title or f"Attention weights of {h} heads (rows: queries, columns: keys)",
                 fontsize=FONT_TITLE)
    return fig


# ====================================================================== notebook 07: masks
PAD_LABEL = "<pad>"


def plot_mask_gallery(gallery: dict, tokens, *, title: str | None = None) -> Figure:
    """Masks side by side as ✓/✗ tables (notebook 07).

    ``gallery``: name → bool mask ``(n, n)`` or a batch ``(b, n, n)`` (each batch item
    gets its own panel, named "name, sequence 1", ...), e.g.
    :func:`lessons_lib.masks.mask_gallery`. ``tokens`` labels the n rows and columns;
    in a batch, positions that no query may attend to are labelled ``<pad>``.
    """
    if not isinstance(gallery, dict) or not gallery:
        raise TypeError("gallery must be a non-empty dict: name -> boolean mask.")
    panels = []
    for name, mask in gallery.items():
        m = as_bool_mask(mask, f"gallery[{name!r}]")
        if m.ndim == 2:
            panels.append((str(name), m, False))
        elif m.ndim == 3:
            panels.extend((f"{name}, sequence {b + 1}", m[b], True) for b in range(m.shape[0]))
        else:
            raise ValueError(f"gallery[{name!r}] must be (n, n) or (batch, n, n); got shape {m.shape}.")
    n = panels[0][1].shape[0]
    tokens = _check_labels(tokens, n, "tokens", "rows")
    ncols = min(len(panels), 3 if len(panels) in (5, 6, 9) else 4)
    nrows = -(-len(panels) // ncols)
    side = min(3.2, max(2.2, 0.3 * n + 0.8))                     # inches per table
    label = 0.11 * max(len(t) for t in [*tokens, PAD_LABEL]) + 0.45
    # placed by hand, not by constrained layout: the gallery draws in about half the time
    left, gap_x, gap_y, top, bottom = label + 0.45, label + 0.55, label + 0.9, 0.8, 0.2
    width = left + ncols * side + (ncols - 1) * gap_x + 0.3
    height = top + nrows * side + (nrows - 1) * gap_y + label + 0.8 + bottom
    fig = _new_figure(width, height, layout=None)
    fig.subplots_adjust(left=left / width, right=1 - 0.3 / width, top=1 - top / height,
                        bottom=(label + 0.8 + bottom) / height, wspace=gap_x / side, hspace=gap_y / side)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, (name, m, batch) in zip(axes, panels):
        # in a padded batch, keys that no query may see are padding: label them so
        labels = [PAD_LABEL if batch and not m[:, j].any() else t for j, t in enumerate(tokens)]
        plot_mask(m, labels, ax=ax, title=name)
        ax.title.set_fontsize(FONT_LABEL)
        for text in list(ax.texts):   # one legend for the whole gallery, below
            if text.get_text().startswith("✓ may attend"):
                text.remove()
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    fig.suptitle(title or "Mask gallery: ✓ may attend, ✗ masked (grey, hatched: weight exactly 0)",
                 fontsize=FONT_TITLE)
    return fig


def plot_masking_steps(scores, mask, tokens, *, query: int | None = None) -> Figure:
    """Causal masking in three panels: scores, scores with −∞ where masked, weights after softmax.

    ``scores (seq_len, seq_len)`` (already scaled), ``mask`` bool (True = may attend).
    The middle panel writes "−∞" in every masked cell; the right one shows their
    weight is exactly 0 (hatched). ``query`` outlines one row in all three panels.
    Notebook 07.
    """
    from .attention import softmax
    from .masks import additive_mask

    s = _check_matrix(scores, "scores")
    tokens = _check_labels(tokens, s.shape[0], "tokens", "rows")
    allowed = np.broadcast_to(check_mask(mask, s.shape), s.shape)
    masked = s + additive_mask(allowed)
    weights = softmax(masked)
    side = min(5.0, max(3.4, 0.38 * len(tokens) + 1.6))
    fig = _new_figure(3 * (side + 1.7), side + 2.4)
    axes = fig.subplots(1, 3)
    lim = float(np.max(np.abs(s))) or 1.0
    _draw_heatmap(axes[0], s, tokens, tokens, title="1 · scaled scores", colorbar_label="score",
                  cmap=CMAP_VALUES, vmin=-lim, vmax=lim, mask=None, annotate=None, fmt=".1f",
                  xlabel=XLABEL, ylabel=YLABEL)
    _draw_heatmap(axes[1], masked, tokens, tokens, title="2 · scores + mask (−∞ above the diagonal)",
                  colorbar_label="score", cmap=CMAP_VALUES, vmin=-lim, vmax=lim, mask=None, annotate=None,
                  fmt=".1f", xlabel=XLABEL, ylabel="")
    if max(s.shape) <= 12:
        for i, j in np.argwhere(~allowed):
            axes[1].text(j, i, "−∞", ha="center", va="center", fontsize=FONT_ANNOT, zorder=4,
                         bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85))
    _draw_heatmap(axes[2], weights, tokens, tokens, title="3 · weights = softmax (exp(−∞) = 0)",
                  colorbar_label="attention weight", cmap=CMAP_WEIGHTS, vmin=0.0, vmax=1.0, mask=allowed,
                  annotate=None, fmt=".2f", xlabel=XLABEL, ylabel="")
    if query is not None:
        if isinstance(query, bool) or not isinstance(query, numbers.Integral) or not 0 <= query < s.shape[0]:
            raise ValueError(f"query must be a row index 0..{s.shape[0] - 1}; got {query!r}.")
        for ax in axes:
            ax.add_patch(Rectangle((-0.5, query - 0.5), s.shape[1], 1, fill=False, edgecolor="#d62728",
                                   linewidth=2.5, zorder=5))
    for ax in axes:
        ax.title.set_fontsize(FONT_LABEL)
        for text in list(ax.texts):   # one caption for the figure instead of one per panel
            if text.get_text() == MASK_NOTE:
                text.remove()
    fig.suptitle("Causal masking: −∞ is added before the softmax, so masked weights are exactly 0",
                 fontsize=FONT_TITLE)
    fig.supxlabel(MASK_NOTE, fontsize=FONT_TICK)
    return fig
