"""Stills of lesson 07 (causal masking): the mask table, the gallery, the masking steps, the masking recipes.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._checks import as_bool_mask, check_labels, check_mask, is_whole_number
from ..lab.masking import MaskingRecipe
from .base import auto_size, caption, check_matrix, draw_heatmap, new_figure
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_VALUES,
    CMAP_WEIGHTS,
    FONT_ANNOT,
    FONT_LABEL,
    FONT_TICK,
    FONT_TITLE,
    MASK_NOTE,
    XLABEL,
    YLABEL,
)
from .tables import record_matrix

__all__ = ["plot_mask", "plot_mask_gallery", "plot_masking_steps", "plot_masking_recipes"]


#: the legend of a ✓/✗ table, in place of the generic mask caption
MASK_LEGEND = "✓ may attend\n✗ masked (▨ grey hatched):\nscore set to −∞, so weight exactly 0"


def plot_mask(mask, tokens, *, ax=None, title: str | None = None, key_tokens=None) -> Figure:
    """The ✓/✗ table of a mask ``(n_queries, n_keys)``, True = may attend (notebook 07).

    Every cell carries its meaning in writing (✓ or ✗) and in texture (masked
    cells are grey and hatched), not in colour alone. Rows are queries, columns keys.
    """
    m = as_bool_mask(mask)
    if m.ndim != 2:
        raise ValueError(f"mask must be 2-D (n_queries, n_keys); got shape {m.shape}.")
    rows = check_labels(tokens, m.shape[0], "tokens", "row")
    cols = check_labels(rows if key_tokens is None else key_tokens, m.shape[1],
                         "key_tokens" if key_tokens is not None else "tokens", "column")
    if title is None:
        title = "Mask: which keys each query may attend to"
    if ax is None:
        w, h = auto_size(*m.shape)
        fig = new_figure(max(w + 1.8, 4.6), h + 2.9)
        ax = fig.add_subplot()
    _draw_mask_table(ax, m, rows, cols, title)
    caption(ax, MASK_LEGEND)
    return ax.get_figure()


def _draw_mask_table(ax, m: np.ndarray, rows: list[str], cols: list[str], title: str) -> None:
    """The ✓/✗ cells of a checked bool mask on ``ax``, without a caption."""
    tint = np.array(matplotlib.colormaps[CMAP_WEIGHTS](0.8))
    allowed_colour = tuple(0.45 * tint[:3] + 0.55) + (1.0,)  # a pale green: the ✓ carries the meaning
    draw_heatmap(ax, np.ones(m.shape), rows, cols, title=title, colorbar_label="-", mask=m,
                  cmap=ListedColormap([allowed_colour]), vmin=0.0, vmax=1.0, annotate=False, fmt="",
                  xlabel=XLABEL, ylabel=YLABEL, colorbar=False, mask_note=None)
    # its "Numbers as a table": ✓ or masked in each cell, not the 1.0 drawn under the ticks
    record_matrix(ax, np.ones(m.shape), rows, cols, m, what="✓ may attend, or masked",
                  allowed_text="✓ may attend")
    if max(m.shape) <= 24:
        size = FONT_TITLE if max(m.shape) <= 12 else FONT_ANNOT
        for (i, j), ok in np.ndenumerate(m):
            ax.text(j, i, "✓" if ok else "✗", ha="center", va="center", fontsize=size,
                    color="black", zorder=3, fontweight="bold")


PAD_LABEL = "<pad>"


def plot_mask_gallery(gallery: dict, tokens, *, title: str | None = None) -> Figure:
    """Masks side by side as ✓/✗ tables (notebook 07).

    ``gallery``: name → bool mask ``(n, n)`` or a batch ``(b, n, n)`` (each batch item
    gets its own panel, named "name, sequence 1", ...), e.g.
    :func:`lessons_lib.lab.masking.mask_gallery`. ``tokens`` labels the n rows and columns;
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
    tokens = check_labels(tokens, n, "tokens", "row")
    ncols = min(len(panels), 3 if len(panels) in (5, 6, 9) else 4)
    nrows = -(-len(panels) // ncols)
    side = min(3.2, max(2.2, 0.3 * n + 0.8))                     # inches per table
    label = 0.11 * max(len(t) for t in [*tokens, PAD_LABEL]) + 0.45
    # placed by hand, not by constrained layout: the gallery draws in about half the time
    left, gap_x, gap_y, top, bottom = label + 0.45, label + 0.55, label + 0.9, 0.8, 0.2
    width = left + ncols * side + (ncols - 1) * gap_x + 0.3
    height = top + nrows * side + (nrows - 1) * gap_y + label + 0.8 + bottom
    fig = new_figure(width, height, layout=None)
    fig.subplots_adjust(left=left / width, right=1 - 0.3 / width, top=1 - top / height,
                        bottom=(label + 0.8 + bottom) / height, wspace=gap_x / side, hspace=gap_y / side)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, (name, m, batch) in zip(axes, panels):
        # in a padded batch, keys that no query may see are padding: label them so
        labels = [PAD_LABEL if batch and not m[:, j].any() else t for j, t in enumerate(tokens)]
        _draw_mask_table(ax, m, labels, labels, name)  # one legend for the whole gallery: its title
        ax.title.set_fontsize(FONT_LABEL)
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
    from ..core.attention import softmax
    from ..core.masks import additive_mask

    s = check_matrix(scores, "scores")
    tokens = check_labels(tokens, s.shape[0], "tokens", "row")
    allowed = np.broadcast_to(check_mask(mask, s.shape), s.shape)
    masked = s + additive_mask(allowed)
    weights = softmax(masked)
    side = min(5.0, max(3.4, 0.38 * len(tokens) + 1.6))
    fig = new_figure(3 * (side + 1.7), side + 2.4)
    axes = fig.subplots(1, 3)
    lim = float(np.max(np.abs(s))) or 1.0
    draw_heatmap(axes[0], s, tokens, tokens, title="1 · scaled scores", colorbar_label="score",
                  cmap=CMAP_VALUES, vmin=-lim, vmax=lim, mask=None, annotate=None, fmt=".1f",
                  xlabel=XLABEL, ylabel=YLABEL, mask_note=None)
    draw_heatmap(axes[1], masked, tokens, tokens, title="2 · scores + mask (−∞ above the diagonal)",
                  colorbar_label="score", cmap=CMAP_VALUES, vmin=-lim, vmax=lim, mask=None, annotate=None,
                  fmt=".1f", xlabel=XLABEL, ylabel="", mask_note=None)
    if max(s.shape) <= 12:
        for i, j in np.argwhere(~allowed):
            axes[1].text(j, i, "−∞", ha="center", va="center", fontsize=FONT_ANNOT, zorder=4,
                         bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85))
    draw_heatmap(axes[2], weights, tokens, tokens, title="3 · weights = softmax (exp(−∞) = 0)",
                  colorbar_label="attention weight", cmap=CMAP_WEIGHTS, vmin=0.0, vmax=1.0, mask=allowed,
                  annotate=None, fmt=".2f", xlabel=XLABEL, ylabel="", mask_note=None)
    if query is not None:
        if not is_whole_number(query) or not 0 <= query < s.shape[0]:
            raise ValueError(f"query must be a row index 0..{s.shape[0] - 1}; got {query!r}.")
        for ax in axes:
            ax.add_patch(Rectangle((-0.5, query - 0.5), s.shape[1], 1, fill=False, edgecolor="#d62728",
                                   linewidth=2.5, zorder=5))
    for ax in axes:
        ax.title.set_fontsize(FONT_LABEL)
    fig.suptitle("Causal masking: −∞ is added before the softmax, so masked weights are exactly 0",
                 fontsize=FONT_TITLE)
    fig.supxlabel(MASK_NOTE, fontsize=FONT_TICK)
    return fig


def plot_masking_recipes(recipes, tokens) -> Figure:
    """The weights of each masking recipe side by side (notebook 07), from
    :func:`lessons_lib.lab.masking.compare_masking`: the right one (−∞ before the softmax) first.

    One heatmap per recipe on one 0-to-1 scale, every weight written in its cell. The keys a query
    may not see are outlined (a thick dashed line) in every panel; under the right recipe they are also
    grey and hatched, masked, because that recipe gives them no weight at all. Right of each row stands its
    sum (Σ), so a row that no longer sums to 1 can be read, not only seen.
    """
    recipes = list(recipes)
    if not recipes or not all(isinstance(r, MaskingRecipe) for r in recipes):
        raise TypeError("recipes must be the list compare_masking(scores, mask) returns.")
    right = recipes[0]
    if right.name != "minus_inf":
        raise ValueError("recipes must start with the right recipe, 'minus_inf', as compare_masking returns "
                         "them.")
    n_rows, n_cols = right.weights.shape
    tokens = check_labels(tokens, n_rows, "tokens", "row")
    allowed = right.allowed
    side = min(4.2, max(3.0, 0.42 * n_cols + 1.4))
    fig = new_figure(len(recipes) * (side + 1.6) + 0.6, side + 2.4)
    axes = np.atleast_1d(fig.subplots(1, len(recipes)))
    for k, (ax, r) in enumerate(zip(axes, recipes)):
        title = (f"{r.label} (right)\nfuture weight exactly 0" if k == 0 else
                 f"{r.label}\nfuture weight up to {r.masked_weight:.2f}")
        draw_heatmap(ax, np.nan_to_num(r.weights), tokens, tokens, title=title,
                     colorbar_label="attention weight", cmap=CMAP_WEIGHTS, vmin=0.0, vmax=1.0,
                     mask=allowed if k == 0 else None, annotate=None, fmt=".2f", xlabel=XLABEL,
                     ylabel=YLABEL if k == 0 else "", colorbar=k == len(recipes) - 1, mask_note=None)
        ax.title.set_fontsize(FONT_LABEL)
        for i, j in np.argwhere(~allowed):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.2,
                                   linestyle="--", zorder=5))
        for i, total in enumerate(r.row_sums):  # each row's sum, in writing, right of the row
            ax.text(n_cols - 0.35, i, f"Σ {total:.2f}", ha="left", va="center", fontsize=FONT_ANNOT,
                    clip_on=False)
    fig.suptitle("Four ways to mask the future, on the same scores: the weights each one gives, "
                 "and each row's sum", fontsize=FONT_TITLE)
    fig.supxlabel("dashed outline: a key after the query (the future); "
                  "▨ grey hatched: masked, weight exactly 0; "
                  "Σ: the row's sum", fontsize=FONT_TICK)
    return fig
