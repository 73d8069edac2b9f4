"""Still figures of notebook 08 (cost and FlashAttention): scaling, tiles, the block-size trade-off.

* :func:`plot_scaling`: time and peak memory against N on log-log axes, one line per
  method with its fitted slope (from :class:`lessons_lib.lab.cost.CostTable`);
* :func:`plot_tile_grid`: the L × S score matrix cut into tiles, in the order
  :func:`lessons_lib.flash_attention` visits them, tiles above the diagonal skipped;
* :func:`plot_tile_steps`: one block of queries tile by tile (from
  :func:`lessons_lib.core.flash.flash_attention_steps`): the running maximum, the running
  sum and the output converging on the exact answer;
* :func:`plot_block_sizes`: time and memory of the tiled method against its block size
  (from :func:`lessons_lib.lab.cost.measure_block_sizes`).

Figures only draw: the numbers come from :mod:`lessons_lib.lab.cost` and
:mod:`lessons_lib.core.flash`. Shapes and line styles, not colours alone, tell the series
apart; colours come from viridis. The live versions are in
:mod:`lessons_lib.explorers.lesson08_cost_and_flashattention`.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter

from .._checks import check_positive_int, check_whole_number, format_bytes
from ..core.flash import TileStep, default_block_size
from ..lab.cost import MB, BlockSizes, CostTable
from . import style
from .base import new_figure, text_colour_on
from .tables import record_matrix

__all__ = ["METHOD_LOOK", "tile_order", "plot_scaling", "plot_tile_grid", "plot_tile_steps",
           "plot_block_sizes"]


def viridis_colour(x: float) -> str:
    return matplotlib.colors.to_hex(matplotlib.colormaps[style.CMAP_WEIGHTS](x))


def row_colour(r: int, n_rows: int) -> str:
    """The colour of query row ``r`` of ``n_rows`` in the tile plots (still and live): viridis from 0.05 to
    0.55, every colour at least 3:1 on white (WCAG 1.4.11; markers and dashes tell the rows apart too)."""
    return viridis_colour(0.05 + 0.5 * r / max(n_rows - 1, 1))


#: method → (colour, marker, line style): the same look in the still and the live figures; every colour
#: at least 3:1 on white (lines are marks: WCAG 1.4.11), markers and line styles tell them apart too.
METHOD_LOOK = {
    "naive numpy": (viridis_colour(0.05), "o", "-"),
    "tiled numpy": (viridis_colour(0.3), "s", "--"),
    "torch SDPA": (viridis_colour(0.58), "^", ":"),
    "torch SDPA math": ("#7f7f7f", "D", "-."),
}
ROW_MARKERS = ("o", "s", "^", "D", "v", "P")
_PLAIN = FuncFormatter(lambda v, _: f"{v:g}")


def _log2_axes(ax, xlabel: str, ylabel: str) -> None:
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.xaxis.set_major_formatter(_PLAIN)
    ax.yaxis.set_major_formatter(_PLAIN)
    ax.set_xlabel(xlabel, fontsize=style.FONT_LABEL)
    ax.set_ylabel(ylabel, fontsize=style.FONT_LABEL)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, which="major", alpha=0.3)


def _fit_line(n: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    slope, intercept = np.polyfit(np.log(n), np.log(y), 1)
    return float(slope), np.exp(intercept) * n.astype(float) ** slope


# ------------------------------------------------------------------ time and memory against N
def plot_scaling(table: CostTable, *, methods=None, mark_n: int | None = None,
                 title: str | None = None) -> Figure:
    """Time (ms) and peak memory (MB) against N, log-log, one line per method with its fitted slope.

    The slope of a straight line on log-log axes is the exponent: y ∝ N^slope. Grey
    dashed guides show ∝ N² and ∝ N. ``mark_n`` draws a dashed vertical line there.
    Memory is the peak a call allocates beyond its inputs (torch: the resident set, where
    it can be measured). Notebook 08.
    """
    if not isinstance(table, CostTable) or not table.measurements:
        raise TypeError("table must be a CostTable with measurements, from cost.measure_scaling(...).")
    mark_n = None if mark_n is None else check_positive_int(mark_n, "mark_n")
    methods = table.methods if methods is None else list(methods)
    fig = new_figure(13.0, 5.2)
    ax_t, ax_m = fig.subplots(1, 2)
    for ax, what, scale in ((ax_t, "time", 1e3), (ax_m, "memory", 1 / MB)):
        _log2_axes(ax, "sequence length N (tokens)",
                   "time per call (ms)" if what == "time" else "peak extra memory (MB)")
        all_n, all_y = [], []
        for method in methods:
            n = table.sizes(method)
            y = (table.seconds(method) if what == "time" else table.memory(method)) * scale
            keep = np.isfinite(y) & (y > 0)
            if keep.sum() < 1:
                continue
            color, marker, line = METHOD_LOOK.get(method, ("#333333", "o", "-"))
            label = method
            if keep.sum() >= 2:
                slope, fitted = _fit_line(n[keep], y[keep])
                ax.plot(n[keep], fitted, line, color=color, linewidth=1.6)
                label = f"{method}: slope {slope:.2f}"
            ax.plot(n[keep], y[keep], marker, color=color, markersize=8, markeredgecolor="black",
                    label=label, linestyle="none")
            all_n += list(n[keep])
            all_y += list(y[keep])
        if all_n:
            lo, hi = min(all_n), max(all_n)
            grid = np.array([lo, hi], dtype=float)
            anchor = min(all_y) / 2                     # guides start below the lowest point
            for power, text, dash in ((2, "guide ∝ N²", (0, (1, 2))), (1, "guide ∝ N", (0, (5, 3)))):
                ax.plot(grid, anchor * (grid / lo) ** power, color="0.5", linestyle=dash, linewidth=1.3,
                        label=text)
        if mark_n is not None:
            ax.axvline(mark_n, color="black", linestyle="--", linewidth=1.1)
        ax.legend(fontsize=style.FONT_ANNOT, loc="upper left")
    m0 = table.measurements[0]
    ax_t.set_title("Time grows like N² (slope 2)", fontsize=style.FONT_TITLE)
    ax_m.set_title("Memory: N × N scores (slope 2) vs one tile", fontsize=style.FONT_TITLE)
    fig.suptitle(title or f"Cost of one attention call against N (d = {m0.d}, {m0.dtype}, one head; "
                          f"straight line on log-log axes: y ∝ N^slope)", fontsize=style.FONT_TITLE)
    return fig


# ------------------------------------------------------------------ the tiles
def tile_order(L: int, S: int, block_size: int, causal: bool = False) -> np.ndarray:
    """Visit order of each tile by ``flash_attention`` (0, 1, 2, …; −1 = skipped above the diagonal).

    Shape ``(ceil(L / block), ceil(S / block))``: query blocks in the outer loop, key
    blocks in the inner one; with ``causal``, key blocks after a query block's last row
    are never visited.
    """
    L, S = check_positive_int(L, "L"), check_positive_int(S, "S")
    b = check_positive_int(block_size, "block_size")
    rows, cols = -(-L // b), -(-S // b)
    order = np.full((rows, cols), -1)
    k = 0
    for i in range(rows):
        last_row = min(L, (i + 1) * b) - 1
        for j in range(cols):
            if causal and j * b > last_row:
                break
            order[i, j] = k
            k += 1
    return order


def plot_tile_grid(L: int, S: int, block_size: int, *, causal: bool = False, follow_block: int | None = None,
                   title: str | None = None) -> Figure:
    """The L × S score matrix cut into tiles, numbered in the order ``flash_attention`` visits them.

    Only one tile's scores exist at a time. Skipped tiles (``causal``: entirely above the
    diagonal) are grey and hatched. ``follow_block`` outlines one block of query rows
    (the one :func:`plot_tile_steps` follows). Notebook 08.
    """
    order = tile_order(L, S, block_size, causal)
    b = block_size
    fig = new_figure(7.0, 7.0 * min(max(L / S, 0.5), 1.6) + 1.4)
    ax = fig.add_subplot()
    cmap = matplotlib.colormaps[style.CMAP_VALUES]
    visited = order.max() + 1
    for i in range(order.shape[0]):
        for j in range(order.shape[1]):
            x0, y0 = j * b, i * b
            w, h = min(b, S - x0), min(b, L - y0)
            if order[i, j] < 0:
                ax.add_patch(Rectangle((x0, y0), w, h, facecolor=style.MASK_FACE, edgecolor=style.MASK_EDGE,
                                       hatch=style.MASK_HATCH, linewidth=0.8))
                continue
            face = cmap(0.15 + 0.7 * order[i, j] / max(visited - 1, 1))
            ax.add_patch(Rectangle((x0, y0), w, h, facecolor=face, edgecolor="white", linewidth=1.5))
            ax.text(x0 + w / 2, y0 + h / 2, str(order[i, j] + 1), ha="center", va="center",
                    fontsize=style.FONT_LABEL, color=text_colour_on(face))
    if causal:
        ax.plot([0, min(L, S)], [0, min(L, S)], color="black", linewidth=1.2, linestyle=":")
    if follow_block is not None:
        y0 = check_positive_int(follow_block, "follow_block", minimum=0) * b
        if y0 >= L:
            raise ValueError(f"follow_block must be from 0 to {order.shape[0] - 1}; got {follow_block}.")
        ax.add_patch(Rectangle((0, y0), S, min(b, L - y0), fill=False, edgecolor="black", linewidth=3))
    ax.set_xlim(0, S)
    ax.set_ylim(L, 0)
    ax.set_aspect("equal")
    ticks = np.arange(0, max(L, S) + 1, b)
    ax.set_xticks(ticks[ticks <= S])
    ax.set_yticks(ticks[ticks <= L])
    note = f"{visited} of {order.size} tiles computed, numbered in order"
    if causal:
        note += ";\n▨ grey hatched = above the diagonal: all masked, skipped"
    if follow_block is not None:
        note += ";\nthick outline = the block of queries followed below"
    ax.set_xlabel(f"key position\n{note}", fontsize=style.FONT_LABEL)
    ax.set_ylabel("query position", fontsize=style.FONT_LABEL)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.set_title(title or f"{L} queries × {S} keys in {b} × {b} tiles" + (", causal" if causal else ""),
                 fontsize=style.FONT_TITLE)
    # its "Numbers as a table": the order of each tile, one row per block of queries, one per block of keys
    spans = [f"{a}–{min(a + b, n) - 1}" for n in (L, S) for a in range(0, n, b)]
    record_matrix(ax, order + 1, spans[:order.shape[0]], spans[order.shape[0]:], order >= 0,
                  what="the order in which the tiles are computed (masked: skipped)", fmt=".0f")
    return fig


def _check_steps(steps) -> list[TileStep]:
    steps = list(steps) if not isinstance(steps, TileStep) else [steps]
    if not steps or not all(isinstance(s, TileStep) for s in steps):
        raise TypeError("steps must be the list that flash.flash_attention_steps(...) returns.")
    return steps


def plot_tile_steps(steps, *, upto: int | None = None, row_labels=None, feature: int = 0,
                    title: str | None = None) -> Figure:
    """How the state of one block of queries changes tile by tile (``flash_attention_steps``).

    Three panels against the number of key tiles processed: the running maximum m of each
    row (it only grows), the running sum ℓ (it drops when m grows: the old terms are
    rescaled by exp(m − m')), and output feature ``feature`` of each row, acc/ℓ so far,
    reaching the exact answer (dotted) after the last tile. ``upto`` (1-based) draws a
    dashed line at that tile. Notebook 08.
    """
    steps = _check_steps(steps)
    upto = None if upto is None else check_positive_int(upto, "upto")
    feature = check_whole_number(feature, "feature")
    n_rows = len(steps[0].max)
    labels = [f"query {i}" for i in range(n_rows)] if row_labels is None else [str(r) for r in row_labels]
    if len(labels) != n_rows:
        raise ValueError(f"row_labels has {len(labels)} labels for {n_rows} rows.")
    d_v = steps[0].output.shape[1]
    if not 0 <= feature < d_v:
        raise ValueError(f"feature must be from 0 to {d_v - 1}; got {feature}.")
    x = np.arange(1, len(steps) + 1)
    fig = new_figure(13.5, 4.6)
    axes = fig.subplots(1, 3)
    data = (("running maximum m", np.array([s.max for s in steps])),
            ("running sum ℓ = Σ exp(s − m)", np.array([s.sum for s in steps])),
            (f"output feature {feature} so far (acc / ℓ)", np.array([s.output[:, feature] for s in steps])))
    for ax, (name, values) in zip(axes, data):
        for r in range(n_rows):
            color = row_colour(r, n_rows)
            ax.plot(x, values[:, r], marker=ROW_MARKERS[r % len(ROW_MARKERS)], color=color,
                    markeredgecolor="black", markersize=7, linewidth=1.5, label=labels[r])
            if ax is axes[2]:
                ax.axhline(values[-1, r], color=color, linestyle=":", linewidth=1.2)
        if upto is not None:
            ax.axvline(upto, color="black", linestyle="--", linewidth=1.1)
        ax.set_xticks(x)
        ax.set_xlabel("key tiles processed", fontsize=style.FONT_LABEL)
        ax.set_title(name, fontsize=style.FONT_LABEL)
        ax.tick_params(labelsize=style.FONT_TICK)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=style.FONT_ANNOT, loc="lower right")
    fig.suptitle(title or f"One block of {n_rows} queries, tile by tile: m only grows, ℓ is rescaled when "
                          f"it does, the output reaches the exact answer (dotted)", fontsize=style.FONT_TITLE)
    return fig


# ------------------------------------------------------------------ block sizes
def plot_block_sizes(result: BlockSizes, *, title: str | None = None) -> Figure:
    """Time ÷ naive and peak memory of ``flash_attention`` against its block size, at one N.

    Small blocks: little memory, but numpy pays its per-call overhead (N/block)² times.
    Large blocks: fast, but a tile of block² scores approaches the naive N × N buffer.
    The library's default block is marked. Notebook 08.
    """
    if not isinstance(result, BlockSizes):
        raise TypeError("result must be what cost.measure_block_sizes(...) returns.")
    blocks = result.block_sizes
    fig = new_figure(12.5, 4.8)
    ax_t, ax_m = fig.subplots(1, 2)
    color, marker, line = METHOD_LOOK["tiled numpy"]
    naive_color = METHOD_LOOK["naive numpy"][0]
    ax_t.plot(blocks, result.time_ratios, marker=marker, linestyle=line, color=color, markersize=8,
              markeredgecolor="black", label="tiled numpy ÷ naive numpy")
    ax_t.axhline(1.0, color=naive_color, linewidth=1.5, label="naive numpy (= 1)")
    peaks = np.array([m.peak_bytes for m in result.tiled], dtype=float) / MB
    ax_m.plot(blocks, peaks, marker=marker, linestyle=line, color=color, markersize=8,
              markeredgecolor="black", label="tiled numpy")
    ax_m.axhline(result.naive.peak_bytes / MB, color=naive_color, linewidth=1.5,
                 label=f"naive numpy ({format_bytes(result.naive.peak_bytes)})")
    for ax in (ax_t, ax_m):
        if default_block_size() in blocks:
            ax.axvline(default_block_size(), color="black", linestyle="--", linewidth=1.1,
                       label=f"default block_size = {default_block_size()} (one head)")
        _log2_axes(ax, "block size (rows and columns of one tile)",
                   "time ÷ naive time" if ax is ax_t else "peak extra memory (MB)")
        ax.legend(fontsize=style.FONT_ANNOT, loc="upper right" if ax is ax_t else "upper left")
    ax_t.set_title("Time: small tiles pay numpy's overhead per tile", fontsize=style.FONT_LABEL)
    ax_m.set_title("Memory: one tile holds block² scores", fontsize=style.FONT_LABEL)
    n = result.naive
    fig.suptitle(title or f"The block-size trade-off of flash_attention at N = {n.n:,} "
                          f"(d = {n.d}, {n.dtype})", fontsize=style.FONT_TITLE)
    return fig
