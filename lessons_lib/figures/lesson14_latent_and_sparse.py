"""The still figures of notebook 14 (latent and sparse attention): what GitHub, nbviewer and the explorer's
still show.

* :func:`plot_cache_per_token`: one token's cache in one layer of DeepSeek-V3's heads kept as multi-head,
  grouped-query, multi-query and latent attention (bars, log scale, numbers written on them).
* :func:`plot_sparse_run`: the tiny layer's dense weights, the same weights on the keys the indexer keeps
  (the others hatched), and each query's distance from dense attention.
* :func:`plot_sparse_cost`: multiplications per query of dense attention, of sparse attention over top-k
  keys and of the indexer, against the context, at DeepSeek-V3.2's sizes.

What is drawn is computed in :mod:`lessons_lib.lab.deepseek`.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int_in_range, check_positive_int
from ..lab.deepseek import DEEPSEEK_V3, TINY_MLA, LatentShape, SparseRun, cache_per_token, sparse_counts
from . import style
from .base import draw_heatmap, frame_row, new_figure

__all__ = ["plot_cache_per_token", "plot_sparse_run", "plot_sparse_cost"]

#: dense and sparse in every figure of the lesson: dark enough for text on white, told apart by line style
DENSE_COLOUR, SPARSE_COLOUR = style.KEY_MARK, style.QUERY_MARK
#: what a hatched cell means here
NOT_KEPT = "▨ grey hatched = a key not kept (or a future key); not a zero"


def plot_cache_per_token(shape: LatentShape = DEEPSEEK_V3, *, dtype: str = "bfloat16", ax=None):
    """Numbers one token keeps in one layer's cache, for ``shape``'s heads as MHA, GQA (8 key/value heads),
    MQA and MLA, on a log axis, each bar labelled with its numbers and its bytes in ``dtype``."""
    if not isinstance(shape, LatentShape):
        raise TypeError(f"Expected a LatentShape such as ll.DEEPSEEK_V3; got {type(shape).__name__}.")
    rows = cache_per_token(shape, dtype)
    if ax is None:
        ax = new_figure(7.8, 4.2).add_subplot()
    names = [row["attention"].replace(" (", "\n(") for row in rows]
    numbers = [row["numbers"] for row in rows]
    colours = [DENSE_COLOUR] * 3 + [SPARSE_COLOUR]
    bars = ax.barh(names, numbers, color=colours)
    for bar, row in zip(bars, rows):
        ax.text(bar.get_width() * 1.08, bar.get_y() + bar.get_height() / 2,
                f"{row['numbers']:,} numbers, {row['bytes']:,} bytes", va="center", fontsize=style.FONT_TICK)
    ax.set_xscale("log")
    ax.set_xlim(100, max(numbers) * 80)
    ax.invert_yaxis()
    ax.set_xlabel(f"numbers cached per token and layer (log scale; {dtype})", fontsize=style.FONT_LABEL)
    ax.set_title(f"{shape.name}'s {shape.n_heads} heads of {shape.d_head}: one token's cache in one layer",
                 fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    fig = ax.get_figure()
    fig.alt = (f"Bars on a log scale: one token's cache in one layer of {shape.name}'s heads: "
               + "; ".join(f"{row['attention']}: {row['numbers']:,} numbers" for row in rows)
               + f". The latent cache is {rows[0]['times']:.0f} times smaller than multi-head attention's "
                 f"and {1 / rows[2]['times']:.2f} times multi-query attention's.")
    return fig


def plot_sparse_run(run: SparseRun, query: int | None = None):
    """The tiny layer of :func:`~lessons_lib.lab.deepseek.sparse_run`: dense weights (head 0), the same
    weights on the kept keys only, and each query's distance from dense attention; ``query`` framed."""
    if query is not None:                                       # named before the run is looked at
        query = check_int_in_range(query, "query", 0, TINY_MLA["tokens"] - 1)   # sparse_run's sequence
    if not isinstance(run, SparseRun):
        raise TypeError(f"Expected what ll.sparse_run returns; got {type(run).__name__}.")
    n = run.dense.shape[0]
    query = n - 1 if query is None else query
    if query >= n:
        raise ValueError(f"query = {query} is past the last of the run's {n} positions (0 … {n - 1}).")
    labels = [str(i) for i in range(n)]
    fig = new_figure(15.0, 5.2)
    dense_ax, kept_ax, line_ax = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1.1]})
    causal = np.tril(np.ones((n, n), bool))
    for ax, mask, title in ((dense_ax, causal, "Dense attention (head 0)"),
                            (kept_ax, run.keep, f"The same weights on the top {run.top_k} keys kept")):
        draw_heatmap(ax, run.dense, labels, labels, title=title, colorbar_label="dense attention weight",
                     cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0, mask=mask, annotate=False, fmt=".2f",
                     xlabel="key position", ylabel="query position",
                     mask_note=NOT_KEPT if ax is kept_ax else None)
        frame_row(ax, query, inner=True)
    positions = np.arange(n)
    line_ax.plot(positions, 100 * run.difference, color=SPARSE_COLOUR, marker="o", linewidth=1.8,
                 label=f"top {run.top_k} keys by the indexer")
    line_ax.plot(positions, 100 * (1 - run.kept_weight), color=DENSE_COLOUR, marker="s", linestyle="--",
                 linewidth=1.6, label="dense weight on keys not kept")
    line_ax.set_xticks(positions[::3])
    line_ax.set_xlabel("query position", fontsize=style.FONT_LABEL)
    line_ax.set_ylabel("% (of the dense output's length, or weight)", fontsize=style.FONT_LABEL)
    line_ax.set_title("What the selection gives up", fontsize=style.FONT_TITLE)
    line_ax.grid(True, alpha=0.3)
    line_ax.legend(fontsize=style.FONT_TICK)
    fig.alt = (f"Three panels for a tiny MLA layer with a latent of {run.d_c} and the top {run.top_k} keys "
               f"per query: dense attention's weights; the same weights on the kept keys only; and per query "
               f"how far the sparse output lies from the dense one, up to "
               f"{100 * run.difference.max():.0f}% of its length, and the dense weight on keys not kept, up "
               f"to {100 * (1 - run.kept_weight).max():.0f}%.")
    return fig


def plot_sparse_cost(top_k: int = 2048, *, contexts=None, ax=None):
    """Multiplications per query against the context (log axes) at DeepSeek-V3.2's sizes
    (:func:`~lessons_lib.lab.deepseek.sparse_counts`): dense attention over every earlier key, sparse
    attention over at most ``top_k`` keys, and the lightning indexer over every key."""
    top_k = check_positive_int(top_k, "top_k")
    contexts = [int(c) for c in (contexts if contexts is not None else np.geomspace(1024, 131072, 8))]
    if ax is None:
        ax = new_figure(7.4, 4.6).add_subplot()
    work = [sparse_counts(c, top_k) for c in contexts]
    for key, colour, marker, line, label in (
            ("dense", DENSE_COLOUR, "s", "--", "dense attention: every key"),
            ("sparse", SPARSE_COLOUR, "o", "-", f"sparse attention: the top {top_k:,} keys"),
            ("indexer", "black", "^", ":", "the indexer: every key, 64 heads of 128")):
        ax.plot(contexts, [w[key] for w in work], color=colour, marker=marker, linestyle=line, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context (tokens before the query)", fontsize=style.FONT_LABEL)
    ax.set_ylabel("multiplications per query", fontsize=style.FONT_LABEL)
    ax.set_title("Work per query at DeepSeek-V3.2's sizes (128 heads, absorbed)", fontsize=style.FONT_TITLE)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=style.FONT_TICK)
    return ax.get_figure()
