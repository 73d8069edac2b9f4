"""Stills of lesson 06 (multi-head): the head shapes and the head explorer's first view.

The grid of every head's weights, which lesson 10 shows too, is in :mod:`.attention_maps`.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._checks import check_head_weights, check_labels, check_positive_int, check_whole_number
from .base import draw_heatmap, frame_row, new_figure
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_WEIGHTS,
    FONT_ANNOT,
    FONT_TICK,
    FONT_TITLE,
    XLABEL,
    YLABEL,
)

HEAD_HATCHES = ("", "//", "..", "\\\\", "xx", "oo", "--", "++")  # head identity by texture, not colour only

__all__ = ["plot_head_shapes", "plot_head_view"]


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
    labelled "token, column of d_model" in both rows (head k's output cell (i, c) is labelled
    i, k·d_head + c: the column of the concatenation it lands in, the same columns its queries came
    from) and filled by its head (a tint and a hatch per head), so each number can be followed. The
    cells are placed by :func:`lessons_lib.core.multihead.split_heads` and ``merge_heads``
    themselves, run on an array of cell numbers: the figure shows what the library does.
    """
    from .._checks import check_positive_int
    from ..core.multihead import check_heads, merge_heads, split_heads

    L = check_positive_int(seq_len, "seq_len")
    d = check_positive_int(d_model, "d_model")
    h = check_heads(n_heads, d)
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
    # head k's output cell (i, c) carries the label of the column it will fill, k·d_head + c, as in the split
    for k in range(h):
        yk = y2 + k * (L + stack_gap)
        blocks.append((0.0, yk, names(split[k], d), np.full((L, dh), k), None))
        ax_items.append(("label", -0.3, yk + L / 2, f"head {k}", "right"))
    title(0.0, y2, f"head outputs = weights·V\n({h}, {L}, {dh})")
    merged = merge_heads(split.astype(float)).astype(int)               # where merge_heads puts each cell
    merged_texts, merged_heads = names(merged, d), (merged % d) // dh
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
    fig = new_figure(width * inch + 0.3, height * inch + 0.6, layout=None)
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


def plot_head_view(weights, tokens, *, token: int, shown: int = 0, title: str | None = None,
                   width_px: int = 1000, height_px: int = 450) -> Figure:
    """The head explorer's first view as a still (notebook 06): what ``HeadView`` draws on opening.

    Left, one thumbnail per head in as many columns as give the largest thumbnails in 42% of the
    width (the live view's rule); right, head ``shown`` large with token labels and the colour
    scale. The row of ``token`` is framed in every head. ``weights (n_heads, L, L)``.
    """
    w = check_head_weights(weights)
    h, L, _ = w.shape
    tokens = check_labels(tokens, L, "tokens", "rows")
    token, shown = check_whole_number(token, "token"), check_whole_number(shown, "shown")
    width_px, height_px = check_positive_int(width_px, "width_px"), check_positive_int(height_px, "height_px")
    if not 0 <= token < L or not 0 <= shown < h:
        raise ValueError(f"token must be from 0 to {L - 1} and shown from 0 to {h - 1}; "
                         f"got {token}, {shown}.")
    left_w, area_h, gap, label = 0.42 * width_px - 4, height_px - 40, 8, 16
    ncol = max(range(1, h + 1), key=lambda c: min(left_w / c - gap, area_h / -(-h // c) - label - gap))
    nrow = -(-h // ncol)
    fig = new_figure(13.0, 6.2)
    outer = fig.add_gridspec(1, 2, width_ratios=[0.42, 0.58])
    grid = outer[0].subgridspec(nrow, ncol)
    for k in range(h):
        ax = fig.add_subplot(grid[k // ncol, k % ncol])
        ax.imshow(w[k], cmap=CMAP_WEIGHTS, vmin=0.0, vmax=1.0, aspect="equal", interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"head {k}", fontsize=FONT_TICK, loc="left", fontweight="bold" if k == shown else None)
        frame_row(ax, token, color="white", linewidth=1.5)
        if k == shown:
            for side in ax.spines.values():
                side.set_linewidth(3)
    big = fig.add_subplot(outer[1])
    draw_heatmap(big, w[shown], tokens, tokens,
                 title=f"head {shown} (hover a thumbnail to preview, click to lock)",
                 colorbar_label="attention weight (each row sums to 1)", cmap=CMAP_WEIGHTS, vmin=0.0,
                 vmax=1.0, mask=None, annotate=False, fmt="", xlabel=XLABEL, ylabel=YLABEL)
    frame_row(big, token, inner=True)
    fig.suptitle(title or f"{h} heads, {L} tokens: the row of “{tokens[token]}” framed in every head",
                 fontsize=FONT_TITLE)
    return fig
