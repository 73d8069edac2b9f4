"""Attention maps several lessons draw: the scores, the weights, one query's weights, every head's weights.

A still that more than one lesson shows lives here, named for what it draws, so that a fix to it is
a fix to every lesson that shows it; a lesson's own stills live in ``figures/lessonNN_slug.py``.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .._checks import (
    as_float_array,
    check_flag,
    check_head_weights,
    check_labels,
    check_mask,
    check_positive_int,
    is_whole_number,
)
from .base import (
    check_matrix,
    check_rows_sum_to_one,
    draw_heatmap,
    heatmap,
    new_figure,
    resolve_mask,
    set_xticks,
)
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
    MAX_TOKEN_LABELS,
    XLABEL,
    YLABEL,
    tick_indices,
    tick_labels,
)

__all__ = ["plot_scores", "plot_weights", "plot_row_weights", "plot_head_grid"]


# ------------------------------------------------------------------ the scores Q·Kᵀ
def plot_scores(scores, tokens, *, scaled: bool = False, d_k: int | None = None, mask=None, ax=None,
                title: str | None = None, cmap=CMAP_VALUES, vmin=None, vmax=None, fmt: str = ".1f") -> Figure:
    """Heatmap of attention scores ``(seq_len, seq_len)``: entry (i, j) = q_i·k_j (notebook 03).

    ``scaled=True`` labels them as Q·Kᵀ/√d_k (step 3a, notebook 04); give ``d_k``
    to print it in the title. Masked cells (``mask`` False, or −∞) are hatched.
    Colour map cividis: scores are unbounded, and the brighter cell is the better match. ``fmt``
    writes the numbers in the cells (the explorer's still: ".2f", as its live heatmap).
    """
    s = check_matrix(scores, "scores", allow_neg_inf=True)
    tokens = check_labels(tokens, s.shape[0], "tokens", "row")
    if s.shape[1] != len(tokens):
        raise ValueError(
            f"scores has shape {s.shape} but there are {len(tokens)} tokens; self-attention scores "
            f"are (seq_len, seq_len). For different keys use heatmap(scores, query_tokens, key_tokens, ...)."
        )
    if d_k is not None:
        check_positive_int(d_k, "d_k")
    scaled = check_flag(scaled, "scaled")
    what = "Q·Kᵀ/√d_k" if scaled else "Q·Kᵀ"
    if title is None:
        title = f"{'Scaled' if scaled else 'Raw'} attention scores {what}"
        if d_k is not None:
            title += f"  (d_k = {d_k})"
    label = r"scaled score $q_i \cdot k_j\,/\sqrt{d_k}$" if scaled else r"score $q_i \cdot k_j$ (dot product)"
    if vmin is None and vmax is None:
        # symmetric around 0, so the middle grey of cividis means "q_i and k_j are unrelated"
        shown = s[resolve_mask(mask, s)]
        vmax = float(np.max(np.abs(shown))) if shown.size and np.max(np.abs(shown)) > 0 else 1.0
        vmin = -vmax
    return heatmap(s, tokens, tokens, title=title, colorbar_label=label, ax=ax, cmap=cmap,
                   vmin=vmin, vmax=vmax, mask=mask, fmt=fmt)


# ------------------------------------------------------------------ the weights
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


# ------------------------------------------------------------------ every head's weights
def plot_head_grid(weights, tokens, *, head_names=None, title: str | None = None, mask=None,
                   ncols: int | None = None) -> Figure:
    """One heatmap of attention weights per head, ``weights (n_heads, seq_len, seq_len)`` (notebook 06).

    All heads share one 0..1 viridis scale and one colorbar, so they can be compared
    by eye; each panel is titled with the head's number (and name, from
    ``head_names``). Rows are queries, columns keys; ``mask`` (True = may attend)
    hatches masked cells in every head.
    """
    w = check_head_weights(weights)
    h, L, _ = w.shape
    tokens = check_labels(tokens, L, "tokens", "row")
    names = [f"head {k}" for k in range(h)] if head_names is None else [
        f"head {k}: {n}" for k, n in enumerate(check_labels(head_names, h, "head_names", "head"))]
    for k in range(h):
        check_rows_sum_to_one(w[k], tokens, f"weights[{k}]")
    ncols = min(h, 4) if ncols is None else check_positive_int(ncols, "ncols")
    nrows = -(-h // ncols)
    side = min(3.6, max(2.4, 0.25 * L + 1.0))                 # inches per panel
    # token labels at least 12 pt apart, and no more than MAX_TOKEN_LABELS of them
    step = max(1, int(np.ceil(0.19 * L / side)), int(np.ceil(L / MAX_TOKEN_LABELS)))
    shown = tick_labels(tokens, np.arange(0, L, step)) if step > 1 else tick_labels(tokens, np.arange(L))
    label = 0.11 * max(len(t) for t in shown) + 0.5             # room for the token labels
    # placed by hand, not by constrained layout: a grid of 8 panels then draws in half the time
    left, bottom, top, gap, bar = label + 0.35, label + 0.5, 0.9, 0.3, 1.3
    width, height = left + ncols * side + (ncols - 1) * gap + bar, bottom + nrows * (side + gap + 0.1) + top
    fig = new_figure(width, height, layout=None)
    fig.subplots_adjust(left=left / width, right=(width - bar) / width, bottom=bottom / height,
                        top=1 - top / height, wspace=gap / side, hspace=(gap + 0.3) / side)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    im = None
    for k, ax in enumerate(axes):
        if k >= h:
            ax.set_axis_off()
            continue
        im, _ = draw_heatmap(ax, w[k], tokens, tokens, title=names[k], colorbar_label="-", cmap=CMAP_WEIGHTS,
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
