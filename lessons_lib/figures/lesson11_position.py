"""The still figures of notebook 11 (positions): what GitHub, nbviewer and the explorers' stills show.

* :func:`plot_shuffle`: the weights and outputs of a sentence as written and shuffled, side by side.
* :func:`plot_sinusoids`: the paper's sinusoidal encodings as a heatmap (position × dimension) beside
  the dot product of one position's encoding with every other's.
* :func:`plot_rotation_dials`: RoPE pair by pair, each pair a dial where the query's and the key's
  2-D pieces turn; :func:`plot_offset_scores`: the score against the offset m − n in both layouts;
  :func:`plot_alibi_row`: ALiBi's bias of one query, head by head; :func:`plot_rope_view`: the three
  together, the RoPE explorer's still.
* :func:`plot_alibi`: ALiBi's bias matrix of every head.
* :func:`plot_order_losses`: the order task's training loss with no positions, sinusoids and RoPE.

What is drawn is computed in :mod:`lessons_lib.lab.position` and :mod:`lessons_lib.core.position`.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Circle, FancyArrowPatch

from .._checks import check_int_in_range, check_positive_int
from ..core import position
from ..lab import position as lab
from . import style
from .attention_maps import plot_weights
from .base import frame_row, heatmap, new_figure, panel_figure

__all__ = ["plot_shuffle", "plot_sinusoids", "plot_rotation_dials", "plot_offset_scores", "plot_alibi_row",
           "plot_rope_view", "plot_alibi", "plot_order_losses", "slope_text", "QUERY_COLOUR", "KEY_COLOUR"]

#: The query's and the key's marks (style.py: dark enough for 4.5:1 on white; also told apart by line style).
QUERY_COLOUR, KEY_COLOUR = style.QUERY_MARK, style.KEY_MARK
_KIND_NAMES = {"none": "no positions", "sinusoidal": "sinusoids added", "rope": "RoPE"}


# ------------------------------------------------------------------ shuffling
def plot_shuffle(result: lab.ShuffleResult):
    """Weights and outputs of the tokens as written (left) and shuffled (right): with no positions each
    row and column moves with its token and keeps its numbers."""
    if not isinstance(result, lab.ShuffleResult):
        raise TypeError(f"Expected what shuffle_experiment returns; got {type(result).__name__}.")
    n, d = result.outputs.shape
    fig, axes = panel_figure(2, 2, width=max(11.0, 1.1 * n + 7), height=max(8.6, 0.9 * n + 5.4))
    written, shuffled = " ".join(result.tokens), " ".join(result.shuffled)
    plot_weights(result.weights, result.tokens, ax=axes[0], title=f"Weights: “{written}”")
    plot_weights(result.shuffled_weights, result.shuffled, ax=axes[1], title=f"Weights: “{shuffled}”")
    lim = float(np.abs([result.outputs, result.shuffled_outputs]).max())
    for ax, out, tokens, words in ((axes[2], result.outputs, result.tokens, written),
                                   (axes[3], result.shuffled_outputs, result.shuffled, shuffled)):
        heatmap(out, tokens, [str(j) for j in range(d)], ax=ax, cmap=style.CMAP_VALUES, vmin=-lim, vmax=lim,
                title=f"Outputs: “{words}”", colorbar_label="output value", xlabel="feature of the output",
                ylabel="token")
    fig.suptitle(f"Shuffled tokens, {_KIND_NAMES[result.positions]}: "
                 + ("every row moves with its token" if result.follows else "the numbers change"),
                 fontsize=style.FONT_TITLE)
    return fig


# ------------------------------------------------------------------ sinusoids
def plot_sinusoids(seq_len: int = 64, d_model: int = 32, pos: int | None = None):
    """Left: PE (position × dimension), the row of ``pos`` framed. Right: PE(pos)·PE(j) against j."""
    pe = position.sinusoidal_positions(seq_len, d_model)
    pos = None if pos is None else check_int_in_range(pos, "pos", 0, seq_len - 1)
    fig = new_figure(13.0, 5.8)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
    heatmap(pe, [str(p) for p in range(seq_len)], [str(j) for j in range(d_model)], ax=left,
            cmap=style.CMAP_VALUES, vmin=-1.0, vmax=1.0, annotate=False,
            title=f"Sinusoidal positions PE, {seq_len} positions × d_model = {d_model}",
            colorbar_label="PE value (sin or cos)", xlabel="dimension (even: sin, odd: cos)",
            ylabel="position")
    if pos is not None:
        frame_row(left, pos, inner=True)
    shown = 0 if pos is None else pos
    sims = lab.sinusoid_similarity(seq_len, d_model, shown)
    right.plot(np.arange(seq_len), sims, color=QUERY_COLOUR, linewidth=1.8, marker="o", markersize=3,
               label=f"PE({shown})·PE(j)")
    right.axvline(shown, color="black", linestyle="--", linewidth=1.2, label=f"j = {shown}")
    right.set_xlabel("position j", fontsize=style.FONT_LABEL)
    right.set_ylabel(f"PE({shown})·PE(j)", fontsize=style.FONT_LABEL)
    right.set_title(f"Dot product with position {shown}: it depends on j − {shown} only",
                    fontsize=style.FONT_TITLE)
    right.tick_params(labelsize=style.FONT_TICK)
    right.grid(True, alpha=0.3)
    right.legend(fontsize=style.FONT_TICK, loc="lower left")
    return fig


# ------------------------------------------------------------------ RoPE
def _check_view(view) -> lab.RotationView:
    if not isinstance(view, lab.RotationView):
        raise TypeError(f"Expected a RotationView (from rotation_view); got {type(view).__name__}.")
    return view


def _arrow(ax, xy, colour: str, dashed: bool):
    """An arrow from the centre: the query's solid with a filled head, the key's dashed with an open one."""
    ax.add_patch(FancyArrowPatch((0, 0), tuple(xy), arrowstyle="->" if dashed else "-|>", mutation_scale=14,
                                 color=colour, linewidth=2.0, linestyle=(0, (3, 2)) if dashed else "-"))


def plot_rotation_dials(view, *, fig=None, spec=None, columns: int = 4):
    """One dial per pair: the query's 2-D piece (solid arrow) turned by m·θ_i, the key's (dashed) by
    n·θ_i; under each, how fast it turns and what it adds to the score."""
    v = _check_view(view)
    n_pairs = len(v.theta)
    columns = min(check_positive_int(columns, "columns"), n_pairs)
    rows = -(-n_pairs // columns)
    if fig is None:
        fig = new_figure(2.2 * columns + 0.6, 2.5 * rows + 0.6)
        spec = fig.add_gridspec(1, 1)[0]
    grid = spec.subgridspec(rows, columns)
    reach = float(np.hypot(*np.concatenate([v.q, v.k]).T).max()) or 1.0
    for i in range(n_pairs):
        ax = fig.add_subplot(grid[divmod(i, columns)])
        ax.add_patch(Circle((0, 0), 1.0, fill=False, color="#767676", linewidth=0.8))
        ax.axhline(0, color="#e3e3e3", linewidth=0.6, zorder=0)
        ax.axvline(0, color="#e3e3e3", linewidth=0.6, zorder=0)
        _arrow(ax, v.q[i] / reach, QUERY_COLOUR, dashed=False)
        _arrow(ax, v.k[i] / reach, KEY_COLOUR, dashed=True)
        ax.set_xlim(-1.1, 1.1)
        ax.set_ylim(-1.1, 1.1)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"pair {i}", fontsize=style.FONT_TICK)
        below = f"θ = {v.theta[i]:.3g}\nadds {v.parts[i]:+.2f}".replace("-", "−")
        ax.set_xlabel(below, fontsize=style.FONT_TICK)
    return fig


def plot_offset_scores(q, k, offset: int, *, base: float = position.DEFAULT_BASE, convention: str = "half",
                       span: int = 31, ax=None):
    """The score of the turned query and key against the offset m − n, in both layouts; the current
    layout solid, the other dashed, the current offset marked."""
    span = check_int_in_range(span, "span", 1, 4096)
    offset = check_int_in_range(offset, "offset", -span, span)
    offsets = np.arange(-span, span + 1)
    if ax is None:
        ax = new_figure(6.4, 4.4).add_subplot()
    other = "interleaved" if convention == "half" else "half"
    for name, dashed, colour in ((convention, False, QUERY_COLOUR), (other, True, KEY_COLOUR)):
        ax.plot(offsets, lab.offset_scores(q, k, offsets, base=base, convention=name), color=colour,
                linewidth=1.8, linestyle="--" if dashed else "-", label=f"“{name}” pairs")
    ax.axvline(offset, color="black", linestyle=":", linewidth=1.2)
    ax.plot([offset], lab.offset_scores(q, k, [offset], base=base, convention=convention), "o", color="black",
            markersize=8, fillstyle="none", markeredgewidth=2, label=f"m − n = {offset}".replace("-", "−"))
    ax.set_xlabel("offset m − n (query position − key position)", fontsize=style.FONT_LABEL)
    ax.set_ylabel("score (turned q)·(turned k)", fontsize=style.FONT_LABEL)
    ax.set_title("The score depends on the offset only", fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=style.FONT_TICK, loc="lower left")
    return ax.get_figure()


def plot_alibi_row(n_heads: int, m: int, n_keys: int, *, ax=None):
    """ALiBi's bias of the query at ``m`` over keys 0 … n_keys − 1, one row per head (−slope · |m − j|)."""
    n_heads = check_int_in_range(n_heads, "n_heads", 1, 64)
    n_keys = check_int_in_range(n_keys, "n_keys", 1, 512)
    m = check_int_in_range(m, "m", 0, n_keys - 1)
    rows = position.alibi_bias(n_heads, n_keys)[:, m, :]
    slopes = position.alibi_slopes(n_heads)
    if ax is None:
        ax = new_figure(max(8.0, 0.32 * n_keys + 3.0), 0.5 * n_heads + 2.6).add_subplot()
    heatmap(rows, [slope_text(s) for s in slopes], [str(j) for j in range(n_keys)], ax=ax,
            cmap=style.CMAP_VALUES, annotate=False,
            title=f"ALiBi: the bias each head adds to the scores of query {m}",
            colorbar_label="bias −slope·|m − j|", xlabel="key position j", ylabel="head's slope")
    return ax.get_figure()


def plot_rope_view(view, q, k, *, n_heads: int = 4, n_keys: int = 32, span: int = 31):
    """The RoPE explorer's still: the dials, the score against the offset, ALiBi's row of the query."""
    v = _check_view(view)
    n_heads = check_int_in_range(n_heads, "n_heads", 1, 64)
    n_keys = check_int_in_range(n_keys, "n_keys", 1, 512)
    span = check_int_in_range(span, "span", 1, 4096)
    n_pairs = len(v.theta)
    columns = min(4 if n_pairs <= 8 else 8, n_pairs)
    rows = -(-n_pairs // columns)
    fig = new_figure(15.0, 2.3 * rows + 7.0)
    top, bottom = fig.add_gridspec(2, 1, height_ratios=[max(2.3 * rows, 4.4), 3.0])
    left, right = top.subgridspec(1, 2, width_ratios=[1.25, 1])
    plot_rotation_dials(v, fig=fig, spec=left, columns=columns)
    plot_offset_scores(q, k, v.m - v.n, base=v.base, convention=v.convention, span=span,
                       ax=fig.add_subplot(right))
    plot_alibi_row(n_heads, v.m, n_keys, ax=fig.add_subplot(bottom))
    fig.suptitle(f"RoPE: query at m = {v.m}, key at n = {v.n}, “{v.convention}” pairs, base {v.base:g}: "
                 f"score {v.score:.3f}".replace("-", "−"), fontsize=style.FONT_TITLE)
    return fig


# ------------------------------------------------------------------ ALiBi
def slope_text(slope: float) -> str:
    """A slope as the learner reads it: ``1/4`` for 0.25 (ALiBi's slopes are powers of two, or near)."""
    inverse = 1 / slope
    return f"1/{inverse:.0f}" if abs(inverse - round(inverse)) < 1e-9 else f"{slope:.3g}"


def plot_alibi(n_heads: int = 4, seq_len: int = 10):
    """ALiBi's bias matrix of every head: query × key, −slope·|i − j|, darker with the distance."""
    bias = position.alibi_bias(n_heads, seq_len)
    slopes = position.alibi_slopes(n_heads)
    cols = min(n_heads, 4)
    rows = -(-n_heads // cols)
    fig, axes = panel_figure(rows, cols, width=3.9 * cols + 1.0, height=3.9 * rows + 0.8)
    labels = [str(i) for i in range(seq_len)]
    low = float(bias.min())
    for h, ax in enumerate(axes):
        if h >= n_heads:
            ax.set_visible(False)
            continue
        heatmap(bias[h], labels, labels, ax=ax, cmap=style.CMAP_VALUES, vmin=low, vmax=0.0, annotate=False,
                title=f"head {h}: slope {slope_text(slopes[h])}", colorbar_label="bias added to the score",
                xlabel="key position", ylabel="query position")
    fig.suptitle("ALiBi: each head lowers a score by its slope times the distance", fontsize=style.FONT_TITLE)
    return fig


# ------------------------------------------------------------------ the order task
def plot_order_losses(comparison: lab.OrderComparison, *, ax=None):
    """The training loss of the order task per step, one line per kind of positions."""
    if not isinstance(comparison, lab.OrderComparison):
        raise TypeError(f"Expected what compare_positions returns; got {type(comparison).__name__}.")
    if ax is None:
        ax = new_figure(7.6, 4.4).add_subplot()
    looks = {"none": ("#404040", ":"), "sinusoidal": (QUERY_COLOUR, "-"), "rope": (KEY_COLOUR, "--")}
    for kind, run in comparison.runs.items():
        colour, line = looks[kind]
        ax.plot(np.arange(len(run.losses)), np.maximum(run.losses, 1e-4), color=colour, linestyle=line,
                linewidth=1.8, label=_KIND_NAMES[kind])
    ax.axhline(np.log(2), color="black", linewidth=0.8, alpha=0.6)
    ax.text(0, np.log(2) * 1.12, "ln 2: a coin toss", fontsize=style.FONT_TICK)
    ax.set_yscale("log")
    ax.set_xlabel("training step", fontsize=style.FONT_LABEL)
    ax.set_ylabel("loss of one batch (log scale)", fontsize=style.FONT_LABEL)
    ax.set_title("Which came first, cat or dog? Training with and without positions",
                 fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=style.FONT_TICK)
    return ax.get_figure()
