"""Stills of lesson 04 (scale and softmax): the weights, why √d_k, one query's weights.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .._checks import as_float_array, check_labels, check_mask, is_whole_number
from ..lab.measurements import DEFAULT_D_KS, check_d_ks, measure_score_variance
from .base import check_matrix, check_rows_sum_to_one, heatmap, new_figure, set_xticks
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_WEIGHTS,
    FONT_ANNOT,
    FONT_LABEL,
    FONT_TICK,
    FONT_TITLE,
    MASK_EDGE,
    MASK_FACE,
    MASK_HATCH,
    XLABEL,
    tick_indices,
    tick_labels,
)

__all__ = ["plot_weights", "plot_score_variance", "plot_row_weights"]


def plot_weights(weights, tokens, mask=None, *, ax=None, title: str | None = None,
                 key_tokens=None, annotate=None) -> Figure:
    """Heatmap of attention weights ``(seq_len, seq_len)`` = softmax(Q·Kᵀ/√d_k), each row sums to 1.

    Colour scale fixed to 0..1 (viridis), so two plots can be compared by eye.
    With ``mask`` (True = may attend), masked cells are hatched, and they must
    hold weight 0 (a ValueError says so if not). Notebook 04 (and 07 for masks).
    ``key_tokens`` labels the columns when the keys differ from the queries.
    """
    w = check_matrix(weights, "weights")
    tokens = check_labels(tokens, w.shape[0], "tokens", "row")
    keys = tokens if key_tokens is None else key_tokens
    keys = check_labels(keys, w.shape[1], "key_tokens" if key_tokens is not None else "tokens", "column")
    check_rows_sum_to_one(w, tokens, "weights")
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
        fig = new_figure(7.2, 5.0)
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
    tokens = check_labels(tokens, row.shape[0], "tokens", "key")
    if is_whole_number(query_token):
        if not 0 <= query_token < len(tokens):
            raise ValueError(f"query_token index {query_token} is outside 0..{len(tokens) - 1}.")
        query_token = tokens[int(query_token)]
    if not isinstance(query_token, str):
        raise TypeError(
            f"query_token must be the attending token (a string) or its index; got {query_token!r}."
        )
    check_rows_sum_to_one(row[None, :], [query_token], "weights_row")
    allowed = np.ones(row.shape, dtype=bool) if mask is None else check_mask(mask, row.shape, "mask")
    allowed = np.broadcast_to(allowed, row.shape)
    if (row[~allowed] != 0).any():
        raise ValueError("weights_row has non-zero weight on a masked key; "
                         "was the mask applied before the softmax?")
    if ax is None:
        fig = new_figure(min(11.0, max(6.4, 0.45 * len(tokens) + 2.0)), 4.6)
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
    set_xticks(ax, idx, tick_labels(tokens, idx))
    ax.set_xlim(-0.6, len(tokens) - 0.4)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("attention weight", fontsize=FONT_LABEL)
    ax.set_xlabel(XLABEL, fontsize=FONT_LABEL)
    ax.tick_params(axis="y", labelsize=FONT_TICK)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title or f"Where “{query_token}” looks: its weights (sum = 1)", fontsize=FONT_TITLE)
    return ax.get_figure()
