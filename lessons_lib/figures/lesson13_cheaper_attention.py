"""The still figures of notebook 13 (cheaper attention): what GitHub, nbviewer and the explorer's still show.

* :func:`plot_state_and_cache`: the numbers a KV cache and a linear-attention state hold, token by token.
* :func:`plot_decay_mask`: the decay mask L_ij = a^(i−j) that turns masked attention into a decaying state.
* :func:`plot_written_state`: a d × d state after pairs were written by one rule, beside the recall of every
  rule against the number of pairs (the explorer's still).
* :func:`plot_recall_table`: the trained models' recall against the number of pairs, one line per mixer.

What is drawn is computed in :mod:`lessons_lib.core.linear`, :mod:`lessons_lib.lab.fixed_state` and
:mod:`lessons_lib.lab.recall`.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int_in_range
from ..core.linear import decay_mask
from ..lab import recall as lab
from ..lab.fixed_state import state_and_cache
from . import style
from .base import draw_heatmap, new_figure

__all__ = ["plot_state_and_cache", "plot_decay_mask", "plot_written_state", "plot_recall_table",
           "RULE_STYLES"]

#: Each memory's colour, line and marker in every figure of the lesson (colour never alone).
RULE_STYLES = {
    "softmax": (style.QUERY_MARK, "-", "o"),
    "linear": (style.KEY_MARK, "--", "s"),
    "decay": ("#6a3d9a", "-.", "^"),
    "delta": ("#1b7837", ":", "D"),
    "window": ("#555555", (0, (1, 3)), "v"),
}


def _finish(ax, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_xlabel(xlabel, fontsize=style.FONT_LABEL)
    ax.set_ylabel(ylabel, fontsize=style.FONT_LABEL)
    ax.set_title(title, fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=style.FONT_TICK)


def plot_state_and_cache(n_tokens: int = 64, d: int = 16, *, ax=None):
    """The numbers kept after each token 1 … ``n_tokens``: a KV cache (2·t·d, growing) and a
    linear-attention state with its normaliser (d·d + d, fixed), for one head of ``d`` features."""
    held = state_and_cache(n_tokens, d)
    if ax is None:
        ax = new_figure(7.0, 4.4).add_subplot()
    t = np.arange(1, held["cache"].size + 1)
    ax.plot(t, held["cache"], color=RULE_STYLES["softmax"][0], linewidth=2.0, marker="o", markevery=8,
            label="KV cache (lesson 12): 2 · t · d")
    ax.plot(t, held["state"], color=RULE_STYLES["linear"][0], linewidth=2.0, linestyle="--", marker="s",
            markevery=8, label="linear-attention state: d · d + d")
    _finish(ax, f"Numbers kept for the next token, d = {d}", "tokens read so far (t)", "numbers kept")
    return ax.get_figure()


def plot_decay_mask(decay: float = 0.8, n: int = 8, *, ax=None):
    """The decay mask ``L (n, n)`` of a constant decay a: L_ij = a^(i−j) on and below the diagonal, the
    future hatched (:func:`lessons_lib.core.linear.decay_mask`)."""
    n = check_int_in_range(n, "n", 2, 24)
    mask = decay_mask(np.full(n, float(decay)))
    labels = [str(i) for i in range(n)]
    if ax is None:
        ax = new_figure(6.4, 5.4).add_subplot()
    allowed = np.tril(np.ones((n, n), bool))
    draw_heatmap(ax, mask, labels, labels, title=f"Decay mask, a = {decay:g}: L_ij = a^(i − j)",
                 colorbar_label="weight kept", cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0, mask=allowed,
                 annotate=n <= 12, fmt=".2f", xlabel="key position j", ylabel="query position i",
                 mask_note="▨ grey hatched = a future key (0 in the mask)")
    return ax.get_figure()


def plot_written_state(n_pairs: int = 8, d_state: int = 16, *, rule: str = "delta", decay: float = 1.0,
                       seed: int = 0, pair_counts=(1, 2, 4, 8, 16, 32, 64)):
    """Left: the ``d_state × d_state`` state after ``n_pairs`` pairs written by ``rule``
    (:func:`~lessons_lib.lab.recall.written_state`); right: the share of pairs each rule reads back against
    the number written (:func:`~lessons_lib.lab.recall.recall_curve`), the setting marked."""
    _, _, state = lab.written_state(n_pairs, d_state, rule=rule if rule != "softmax" else "linear",
                                    decay=decay, seed=seed)
    curve = lab.recall_curve(pair_counts, d_state, decay=decay, seed=seed)
    fig = new_figure(14.0, 5.6)
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.3])
    labels = [str(i) for i in range(d_state)]
    bound = max(float(np.abs(state[0]).max()), 1e-12)
    draw_heatmap(left, state[0], labels, labels, title=f"The {rule} state after {n_pairs} pairs",
                 colorbar_label="state entry", cmap=style.CMAP_VALUES, vmin=-bound, vmax=bound, mask=None,
                 annotate=False, fmt=".2f", xlabel="value feature", ylabel="key feature")
    for name, recalls in curve.items():
        colour, line, marker = RULE_STYLES[name]
        right.plot(pair_counts, [100 * r for r in recalls], color=colour, linestyle=line, marker=marker,
                   linewidth=1.8, label=f"{name}: {lab.WRITE_RULES[name].split(':')[0]}" if name != "softmax"
                   else "softmax: every pair kept")
    right.axvline(n_pairs, color="black", linestyle=":", linewidth=1.0)
    right.axvline(d_state, color="#555555", linestyle="--", linewidth=1.0)
    right.text(d_state, 4, f" d = {d_state}", fontsize=style.FONT_TICK)
    right.set_xscale("log", base=2)
    right.set_xticks(list(pair_counts), [str(p) for p in pair_counts])
    right.set_ylim(0, 105)
    _finish(right, f"Pairs read back, d = {d_state}, a = {decay:g}", "pairs written", "% read back right")
    return fig


def plot_recall_table(table: lab.RecallTable, *, ax=None):
    """One run's recall of each trained mixer (:func:`~lessons_lib.lab.recall.compare_recall`) against the
    number of key–value pairs, the line of :data:`~lessons_lib.lab.recall.RECALLED` dotted."""
    if not isinstance(table, lab.RecallTable):
        raise TypeError(f"Expected what compare_recall returns; got {type(table).__name__}.")
    if ax is None:
        ax = new_figure(7.4, 4.6).add_subplot()
    counts = table.pair_counts
    for mixer in table.runs:
        colour, line, marker = RULE_STYLES[mixer]
        ax.plot(counts, [100 * r for r in table.recall(mixer)], color=colour, linestyle=line, marker=marker,
                linewidth=1.8, label=mixer)
    ax.axhline(100 * lab.RECALLED, color="black", linestyle=":", linewidth=1.0)
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [str(p) for p in counts])
    ax.set_ylim(0, 105)
    _finish(ax, "Recall of the trained models (this run)", "key–value pairs to remember",
            "% of asked keys answered right")
    return ax.get_figure()
