"""Stills of lesson 05 (weighted values): the outputs and the convex combination.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from .._checks import check_labels, is_whole_number
from .base import check_matrix, check_rows_sum_to_one, heatmap, new_figure
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_VALUES,
    CMAP_WEIGHTS,
    FONT_ANNOT,
    FONT_LABEL,
    FONT_TICK,
    FONT_TITLE,
)
from .style import shorten as _shorten

__all__ = ["plot_outputs", "plot_convex_combination", "convex_hull_2d"]


def plot_outputs(output, tokens, *, ax=None, title: str | None = None, feature_names=None,
                 vmin=None, vmax=None) -> Figure:
    """Heatmap of the attention output ``(seq_len, d_v)`` = weights·V: rows tokens, columns features.

    Row i is the weighted average Σ_j weights[i, j]·v_j, token i's new,
    context-aware vector. Notebook 05.
    """
    out = check_matrix(output, "output")
    tokens = check_labels(tokens, out.shape[0], "tokens", "row")
    names = None if feature_names is None else check_labels(feature_names, out.shape[1], "feature_names",
                                                              "column")
    if title is None:
        title = "Attention output weights·V (one row per token)"
    return heatmap(out, tokens, names, title=title, colorbar_label="output value", ax=ax,
                   cmap=CMAP_VALUES, vmin=vmin, vmax=vmax, xlabel="feature (dimension of V)",
                   ylabel="token (query)", fmt=".2f")




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
    v = check_matrix(values, "values")
    o = check_matrix(outputs, "outputs")
    for m, name in ((v, "values"), (o, "outputs")):
        if m.shape[1] != 2:
            raise ValueError(f"{name} must have exactly 2 features to be drawn in the plane; "
                             f"got shape {m.shape}. "
                             f"Use d_v=2 for this picture.")
    keys = check_labels(tokens, v.shape[0], "tokens", "row of values")
    queries = keys if o.shape[0] == v.shape[0] else [str(i) for i in range(o.shape[0])]
    w = None
    if weights is not None:
        w = check_matrix(weights, "weights")
        if w.shape != (o.shape[0], v.shape[0]):
            raise ValueError(f"weights must have shape (n_outputs, n_values) = {(o.shape[0], v.shape[0])}; "
                             f"got {w.shape}.")
        check_rows_sum_to_one(w, queries, "weights")
    if query is not None:
        if isinstance(query, str):
            if query not in queries:
                raise ValueError(f"query {query!r} is not one of the tokens {queries}.")
            query = queries.index(query)
        if not is_whole_number(query) or not 0 <= query < o.shape[0]:
            raise ValueError(f"query must be a token or an index 0..{o.shape[0] - 1}; got {query!r}.")
        if w is None:
            raise ValueError("Give weights=... as well to draw the selected query's weights.")
    if ax is None:
        fig = new_figure(7.5, 6.5)
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
    title = title or "Every output is a weighted average of the values:\nit lies inside their convex hull"
    ax.set_title(title, fontsize=FONT_TITLE)
    fig = ax.get_figure()
    if len(fig.axes) == 1:  # a figure of its own: its alt text names every point, not only the first two
        fig.alt = _convex_alt(title, v, o, keys, hull, w, query, queries)
    return fig


def _convex_alt(title, v, o, keys, hull, w, query, queries) -> str:
    """The alt text of :func:`plot_convex_combination`: every value point, the hull's corners, the outputs,
    and the selected query's weight on each value."""
    on_hull = [any(np.allclose(v[j], p) for p in hull) for j in range(v.shape[0])]
    corners = [f"“{keys[j]}”" for j in range(v.shape[0]) if on_hull[j]]
    inside = [f"“{keys[j]}”" for j in range(v.shape[0]) if not on_hull[j]]
    text = (f"{' '.join(title.split())}. {v.shape[0]} value vectors drawn as labelled points in the plane "
            f"(value feature 0 across, value feature 1 up), and the grey polygon around them, their convex "
            f"hull: its corners are {', '.join(corners)}"
            + (f"; {', '.join(inside)} {'lies' if len(inside) == 1 else 'lie'} inside it" if inside else "")
            + f". The {o.shape[0]} outputs, drawn as black crosses, all lie inside the polygon.")
    if query is not None:
        shares = ", ".join(f"“{keys[j]}” {float(w[query, j]):.2f}" for j in range(v.shape[0]))
        text += (f" The output of “{queries[query]}” is the large cross, joined to every value by a line as "
                 f"wide as its weight: {shares}.")
    return text
