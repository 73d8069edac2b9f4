"""Stills of lesson 02 (Q, K, V): one projection X · W drawn as three matrices.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from .._checks import check_labels
from .base import check_matrix, draw_heatmap, new_figure
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_VALUES,
    FONT_ANNOT,
    FONT_LABEL,
    FONT_TITLE,
)

__all__ = ["plot_projection"]


def plot_projection(x, w, result, tokens, name: str = "Q", *, feature_names=None) -> Figure:
    """Step 1 drawn as three heatmaps: X (seq_len, d_model) · W (d_model, d) = result (seq_len, d).

    ``name`` is "Q", "K" or "V" (the result), so W is W_Q, W_K or W_V. Each
    panel's title gives its shape, so the learner can see the inner sizes
    (d_model) cancel. Notebook 02.
    """
    if name not in ("Q", "K", "V"):
        raise ValueError(f'name must be "Q", "K" or "V" (which projection is shown); got {name!r}.')
    x = check_matrix(x, "X")
    w = check_matrix(w, f"W_{name}")
    r = check_matrix(result, name)
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
    tokens = check_labels(tokens, x.shape[0], "tokens", "row")
    dims_in = [str(i) for i in range(x.shape[1])] if feature_names is None else check_labels(
        feature_names, x.shape[1], "feature_names", "column")
    dims_out = [str(i) for i in range(w.shape[1])]
    widths = [min(5.0, max(1.6, c * 0.32)) for c in (x.shape[1], w.shape[1], w.shape[1])]
    height = min(6.0, max(2.4, max(x.shape[0], w.shape[0]) * 0.3))
    fig = new_figure(sum(widths) + 2 * 0.5 + 1.6, height + 3.0)
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
        im, _ = draw_heatmap(ax, m, rows, cols, title=title, colorbar_label=clabel, cmap=CMAP_VALUES,
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
