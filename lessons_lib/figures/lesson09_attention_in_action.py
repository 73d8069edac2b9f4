"""Pictures of a trained model's attention (notebook 09): still figures and two explorers.

Still figures (matplotlib, built on :mod:`lessons_lib.figures`; GitHub and nbviewer show them):

* :func:`plot_loss_curve`: the training loss against the step.
* :func:`plot_referent_rows`: the referent head's row of "it", one bar chart per sentence, side by side.
* :func:`plot_it_rows`: where "it" looks in every head of every layer, one row per head.
* :func:`plot_layer_grid`: every head's full attention matrix, layers down, heads across.
* :func:`plot_training_rows`: the referent head's row of "it" at each recorded training step.
* :func:`plot_sink_experiment`: the attention-sink experiment, softmax against the "off" slot.

Explorers (ipywidgets controls beside the live figures of :mod:`lessons_lib.figures.live`,
drawn in the browser; each also carries a still picture and a sentence for static pages):

* :class:`SentenceExplorer`: type a sentence from the model's vocabulary, see its attention.
* :class:`TrainingExplorer`: a slider over training steps; watch the pattern form.

This module does not import torch; ``SentenceExplorer`` does, when it runs the model.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_positive_int
from . import style
from .attention_maps import plot_row_weights, plot_weights
from .base import frame_row, heatmap, new_figure

__all__ = ["plot_loss_curve", "plot_referent_rows", "plot_reading", "plot_it_rows", "plot_layer_grid",
           "plot_training_rows",
           "plot_sink_experiment", "head_names"]

REFERENT_HEAD = "referent"  # the row label of the referent head


def head_names(n_layers: int, n_heads: int) -> list[str]:
    """``["L1 H1", "L1 H2", "L2 H1", ...]``: layer and head, counted from 1, as the ablations count."""
    n_layers, n_heads = check_positive_int(n_layers, "n_layers"), check_positive_int(n_heads, "n_heads")
    return [f"L{layer} H{head}" for layer in range(1, n_layers + 1) for head in range(1, n_heads + 1)]


def _check_reading(reading):
    if not all(hasattr(reading, name) for name in ("tokens", "it_pos", "layers", "referent")):
        raise TypeError(f"Expected a Reading (from models.read_attention); got {type(reading).__name__}.")
    return reading


def check_run(run):
    if not all(hasattr(run, name) for name in ("losses", "snapshots", "snapshot_steps", "probe_tokens")):
        raise TypeError(f"Expected a TrainingRun (from models.train_coref_model); got {type(run).__name__}.")
    return run


def _check_probe(run, name):
    if name not in run.snapshots:
        raise ValueError(f"No probe sentence named {name!r}; the run recorded {sorted(run.snapshots)}.")
    return name


# ------------------------------------------------------------------ still figures
def plot_loss_curve(losses, *, test_accuracy: float | None = None, ax=None, title: str | None = None):
    """The training loss (cross-entropy of the referent head) against the step, on a log scale."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 1 or losses.size == 0 or not np.isfinite(losses).all():
        raise ValueError(f"losses must be a non-empty 1-D array of finite numbers; got shape {losses.shape}.")
    if ax is None:
        ax = new_figure(6.8, 3.8).add_subplot()
    steps = np.arange(losses.size)
    ax.plot(steps, np.maximum(losses, 1e-4), color=_colour(0.3), linewidth=1.6, label="loss of one batch")
    ax.set_yscale("log")
    ax.set_xlabel("training step", fontsize=style.FONT_LABEL)
    ax.set_ylabel("loss (cross-entropy, log scale)", fontsize=style.FONT_LABEL)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3)
    if title is None:
        title = "Training: the loss falls as the referent head learns"
        if test_accuracy is not None:
            title += f"\nheld-out accuracy at the end: {test_accuracy:.1%}"
    ax.set_title(title, fontsize=style.FONT_TITLE)
    return ax.get_figure()


def _colour(x: float):
    import matplotlib

    return matplotlib.colormaps[style.CMAP_WEIGHTS](x)


def plot_referent_rows(readings, titles=None):
    """The referent head's row of "it" for each reading, as bar charts side by side (sentence A vs B)."""
    readings = [_check_reading(r) for r in readings]
    if not readings:
        raise ValueError("Give at least one Reading.")
    titles = titles or [f"“it” → {r.answer} ({r.confidence:.0%})" for r in readings]
    width = sum(max(5.2, 0.42 * len(r.tokens) + 1.6) for r in readings)
    fig = new_figure(width, 4.4)
    axes = fig.subplots(1, len(readings), squeeze=False).ravel()
    for ax, r, title in zip(axes, readings, titles):
        plot_row_weights(r.referent, r.tokens, r.it_pos, ax=ax, title=title)
        ax.set_xlabel("word of the sentence (key)", fontsize=style.FONT_LABEL)
    return fig


def plot_reading(reading, *, grid_title: str = "Every head (rows: query, columns: key)"):
    """The sentence explorer's first view (notebook 09): the referent head's row of "it" as bars, and
    beside it every head of every layer (layers down, heads across), as the live explorer shows them."""
    r = _check_reading(reading)
    n_layers, n_heads = r.layers.shape[:2]
    bars_w, side = max(5.2, 0.42 * len(r.tokens) + 1.6), max(3.4, 0.22 * len(r.tokens) + 1.4)
    fig = new_figure(bars_w + side * n_heads + 1.0, max(4.6, side * n_layers + 1.0))
    left, right = fig.add_gridspec(1, 2, width_ratios=[bars_w, side * n_heads + 1.0])
    plot_row_weights(r.referent, r.tokens, r.it_pos, ax=fig.add_subplot(left),
                     title=f"Referent head: “it” → {r.answer} ({r.confidence:.0%})")
    grid = right.subgridspec(n_layers, n_heads)
    for k, name in enumerate(head_names(n_layers, n_heads)):
        layer, head = divmod(k, n_heads)
        plot_weights(r.layers[layer, head], r.tokens, ax=fig.add_subplot(grid[layer, head]), annotate=False,
                     title=name)
    fig.suptitle(grid_title, x=0.5 + 0.5 * bars_w / (bars_w + side * n_heads + 1.0),
                 fontsize=style.FONT_TITLE)
    return fig


def plot_it_rows(reading, *, title: str | None = None, ax=None):
    """Where "it" looks in each head: one row per head of each layer, then the referent head."""
    r = _check_reading(reading)
    n_layers, n_heads = r.layers.shape[:2]
    rows = np.concatenate([r.layers[:, :, r.it_pos, :].reshape(n_layers * n_heads, -1), r.referent[None]])
    names = [*head_names(n_layers, n_heads), REFERENT_HEAD]
    if ax is None:
        ax = new_figure(max(7.0, 0.55 * len(r.tokens) + 3.0), 0.5 * len(names) + 2.4).add_subplot()
    heatmap(rows, names, r.tokens, ax=ax, cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0, annotate=True,
                  fmt=".2f", title=title or "Where “it” looks, head by head",
                  colorbar_label="weight of “it” (each row sums to 1)", xlabel="word (key)",
                  ylabel="layer and head")
    return ax.get_figure()


def plot_layer_grid(reading, *, title: str | None = None):
    """Every head's attention matrix: layers down, heads across; the row of "it" is outlined."""
    r = _check_reading(reading)
    n_layers, n_heads = r.layers.shape[:2]
    side = max(3.8, 0.26 * len(r.tokens) + 1.6)
    fig = new_figure(side * n_heads + 0.8, side * n_layers + 0.7)
    axes = fig.subplots(n_layers, n_heads, squeeze=False)
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            plot_weights(r.layers[layer, head], r.tokens, ax=ax, annotate=False,
                               title=f"layer {layer + 1}, head {head + 1}")
            frame_row(ax, r.it_pos, color="#d62728", linewidth=2.2)
    fig.suptitle(title or "Every head of every layer (the row of “it” outlined)", fontsize=style.FONT_TITLE)
    return fig


def plot_training_rows(run, name: str = "A", *, max_rows: int = 16):
    """The referent head's row of "it" for probe sentence ``name`` at recorded steps (rows) of training."""
    run = check_run(run)
    name = _check_probe(run, name)
    max_rows = check_positive_int(max_rows, "max_rows")
    steps = run.snapshot_steps
    pick = np.unique(np.linspace(0, len(steps) - 1, min(max_rows, len(steps))).round().astype(int))
    rows = run.snapshots[name]["referent"][pick]
    tokens = run.probe_tokens[name]
    ax = new_figure(max(7.0, 0.55 * len(tokens) + 3.0), 0.36 * len(pick) + 2.6).add_subplot()
    heatmap(rows, [f"step {s}" for s in steps[pick]], tokens, ax=ax, cmap=style.CMAP_WEIGHTS,
                  vmin=0.0, vmax=1.0, annotate=len(tokens) <= 16, fmt=".2f",
                  title=f"Sentence {name}: the referent head's row of “it” as training goes on",
                  colorbar_label="weight of “it” (each row sums to 1)", xlabel="word (key)",
                  ylabel="training step")
    return ax.get_figure()


def plot_sink_experiment(softmax_run, off_run):
    """Softmax against the "off" slot: where a head's weight goes when "it" has nothing to fetch.

    Left: for sentences with a dummy "it" and with a real referent, the weight on
    ``<s>`` and the total weight on real words, for both heads. Right: the weight
    on ``<s>`` (dummy "it") during training.
    """
    fig = new_figure(13.0, 4.8)
    left, right = fig.subplots(1, 2, width_ratios=[1.25, 1.0])
    groups = [("dummy “it”:\non <s>", "none_sink"), ("dummy “it”:\non all words*", "none_tokens"),
              ("real referent:\non the referent", "ref_referent"), ("real referent:\non <s>", "ref_sink")]
    x = np.arange(len(groups))
    for k, (run, label, shade, hatch) in enumerate(((softmax_run, "softmax (rows sum to 1)", 0.25, ""),
                                                    (off_run, "softmax with an off slot", 0.75, "//"))):
        values = [run.summary[key] for _, key in groups]
        bars = left.bar(x + (k - 0.5) * 0.38, values, width=0.38, color=_colour(shade), hatch=hatch,
                        edgecolor="black", linewidth=0.6, label=label)
        left.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=style.FONT_ANNOT, padding=2)
    left.set_xticks(x, [g for g, _ in groups], fontsize=style.FONT_TICK - 1)
    left.set_ylim(0, 1.2)
    left.set_ylabel("mean attention weight of “it”", fontsize=style.FONT_LABEL)
    left.legend(fontsize=style.FONT_ANNOT, loc="upper center", ncols=2)
    left.set_title("Held-out sentences after training", fontsize=style.FONT_TITLE)
    left.text(0.0, -0.3, "* all words: every token of the sentence, <s> included", transform=left.transAxes,
              fontsize=style.FONT_ANNOT)
    left.grid(True, axis="y", alpha=0.3)
    for run, label, shade, marker in ((softmax_run, "softmax", 0.25, "o"), (off_run, "off slot", 0.75, "s")):
        h = run.history
        right.plot(h["step"], h["none_sink"], marker=marker, markersize=4, color=_colour(shade),
                   label=f"{label}: weight on <s>")
        right.plot(h["step"], h["none_tokens"], linestyle="--", color=_colour(shade),
                   label=f"{label}: all words")
    right.set_ylim(-0.02, 1.05)
    right.set_xlabel("training step", fontsize=style.FONT_LABEL)
    right.set_ylabel("mean weight of a dummy “it”", fontsize=style.FONT_LABEL)
    right.legend(fontsize=style.FONT_ANNOT, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    right.grid(True, alpha=0.3)
    right.set_title("The sink forms during training", fontsize=style.FONT_TITLE)
    for ax in (left, right):
        ax.tick_params(labelsize=style.FONT_TICK)
    return fig
