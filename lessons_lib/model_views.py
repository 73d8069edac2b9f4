"""Pictures of a trained model's attention (notebook 09): still figures and two explorers.

Still figures (matplotlib, built on :mod:`lessons_lib.plots`; GitHub and nbviewer show them):

* :func:`plot_loss_curve`: the training loss against the step.
* :func:`plot_referent_rows`: the referent head's row of "it", one bar chart per sentence, side by side.
* :func:`plot_it_rows`: where "it" looks in every head of every layer, one row per head.
* :func:`plot_layer_grid`: every head's full attention matrix, layers down, heads across.
* :func:`plot_training_rows`: the referent head's row of "it" at each recorded training step.
* :func:`plot_sink_experiment`: the attention-sink experiment, softmax against the "off" slot.

Explorers (ipywidgets controls beside the live figures of :mod:`lessons_lib.live_figures`,
drawn in the browser; each also carries a still picture and a sentence for static pages):

* :class:`SentenceExplorer`: type a sentence from the model's vocabulary, see its attention.
* :class:`TrainingExplorer`: a slider over training steps; watch the pattern form.

This module does not import torch; ``SentenceExplorer`` does, when it runs the model.
"""

from __future__ import annotations

import html
import numbers

import ipywidgets as ipw
import numpy as np

from . import coref, plots, style
from ._checks import check_choice
from .explorers import ExplorerBase

__all__ = ["plot_loss_curve", "plot_referent_rows", "plot_it_rows", "plot_layer_grid", "plot_training_rows",
           "plot_sink_experiment", "head_names", "SentenceExplorer", "TrainingExplorer"]

REFERENT_HEAD = "referent"  # the row label of the referent head


def head_names(n_layers: int, n_heads: int) -> list[str]:
    """``["L1 H1", "L1 H2", "L2 H1", ...]``: layer and head, counted from 1, as the ablations count."""
    return [f"L{layer} H{head}" for layer in range(1, n_layers + 1) for head in range(1, n_heads + 1)]


def _check_reading(reading):
    if not all(hasattr(reading, name) for name in ("tokens", "it_pos", "layers", "referent")):
        raise TypeError(f"Expected a Reading (from models.read_attention); got {type(reading).__name__}.")
    return reading


def _check_run(run):
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
        ax = plots._new_figure(6.8, 3.8).add_subplot()
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
    fig = plots._new_figure(width, 4.4)
    axes = fig.subplots(1, len(readings), squeeze=False).ravel()
    for ax, r, title in zip(axes, readings, titles):
        plots.plot_row_weights(r.referent, r.tokens, r.it_pos, ax=ax, title=title)
        ax.set_xlabel("word of the sentence (key)", fontsize=style.FONT_LABEL)
    return fig


def plot_it_rows(reading, *, title: str | None = None, ax=None):
    """Where "it" looks in each head: one row per head of each layer, then the referent head."""
    r = _check_reading(reading)
    n_layers, n_heads = r.layers.shape[:2]
    rows = np.concatenate([r.layers[:, :, r.it_pos, :].reshape(n_layers * n_heads, -1), r.referent[None]])
    names = [*head_names(n_layers, n_heads), REFERENT_HEAD]
    if ax is None:
        ax = plots._new_figure(max(7.0, 0.55 * len(r.tokens) + 3.0), 0.5 * len(names) + 2.4).add_subplot()
    plots.heatmap(rows, names, r.tokens, ax=ax, cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0, annotate=True,
                  fmt=".2f", title=title or "Where “it” looks, head by head",
                  colorbar_label="weight of “it” (each row sums to 1)", xlabel="word (key)",
                  ylabel="layer and head")
    return ax.get_figure()


def plot_layer_grid(reading, *, title: str | None = None):
    """Every head's attention matrix: layers down, heads across; the row of "it" is outlined."""
    r = _check_reading(reading)
    n_layers, n_heads = r.layers.shape[:2]
    side = max(3.8, 0.26 * len(r.tokens) + 1.6)
    fig = plots._new_figure(side * n_heads + 0.8, side * n_layers + 0.7)
    axes = fig.subplots(n_layers, n_heads, squeeze=False)
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            plots.plot_weights(r.layers[layer, head], r.tokens, ax=ax, annotate=False,
                               title=f"layer {layer + 1}, head {head + 1}")
            ax.add_patch(_row_outline(r.it_pos, len(r.tokens)))
    fig.suptitle(title or "Every head of every layer (the row of “it” outlined)", fontsize=style.FONT_TITLE)
    return fig


def _row_outline(row: int, n: int):
    from matplotlib.patches import Rectangle

    return Rectangle((-0.5, row - 0.5), n, 1, fill=False, edgecolor="#d62728", linewidth=2.2)


def plot_training_rows(run, name: str = "A", *, max_rows: int = 16):
    """The referent head's row of "it" for probe sentence ``name`` at recorded steps (rows) of training."""
    run = _check_run(run)
    name = _check_probe(run, name)
    steps = run.snapshot_steps
    pick = np.unique(np.linspace(0, len(steps) - 1, min(max_rows, len(steps))).round().astype(int))
    rows = run.snapshots[name]["referent"][pick]
    tokens = run.probe_tokens[name]
    ax = plots._new_figure(max(7.0, 0.55 * len(tokens) + 3.0), 0.36 * len(pick) + 2.6).add_subplot()
    plots.heatmap(rows, [f"step {s}" for s in steps[pick]], tokens, ax=ax, cmap=style.CMAP_WEIGHTS,
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
    fig = plots._new_figure(13.0, 4.8)
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


# ------------------------------------------------------------------ explorers
def _grid_size(n_layers: int, n_heads: int, n_tokens: int) -> tuple[int, int]:
    cell = 200 if n_tokens <= 16 else 220   # small enough that the explorer fits 1280 × 800 beside its bars
    return 90 + cell * n_heads, 80 + cell * n_layers


def _model_layout(explorer: ExplorerBase, rows) -> ipw.VBox:
    """Header, controls, the message line, then rows of figures that wrap (notebook 09's explorers)."""
    return explorer._box(explorer._controls_row(), explorer.message, explorer.error_box,
                         *(explorer._row(row, wrap=True) for row in rows))


EXAMPLES = (
    coref.SENTENCE_A,
    coref.SENTENCE_B,
    "The road was ahead of the dog, but it was too hungry.",
    "Near the bridge, the fox stopped because it was much too icy.",
    "The dog didn't cross the cat because it was too tired.",
    "The street didn't cross the road because it was too sleepy.",
)


class SentenceExplorer(ExplorerBase):
    """Type a sentence from the model's vocabulary; see where "it" looks (notebook 09).

    Shows the referent head's row of "it" as bars and every head of every layer as
    a grid of heatmaps (hover a cell for its value). An unknown word, or a
    sentence without exactly one "it", is answered in the message line, naming the word.
    """

    title = "Your sentence"
    hint = "Type a sentence with one “it” (press Enter), or pick an example; hover the cells for values."

    def __init__(self, model, sentence: str = coref.SENTENCE_A):
        from . import models
        from .live_figures import Bars, HeatmapGrid

        super().__init__()
        self.message = self.readout   # the message line: the answer, or why the sentence cannot be read
        self._models = models
        self.model = models._check_model(model)
        self.reading = None
        self.error: str | None = None  # why the current sentence cannot be read, in words
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be text, e.g. {coref.SENTENCE_A!r}; got {sentence!r}.")
        self._control("sentence", ipw.Text(value=sentence, description="sentence", continuous_update=False,
                                           layout=ipw.Layout(width="640px")))
        self._examples = ipw.Dropdown(options=[("examples…", "")] + [(e, e) for e in EXAMPLES], value="",
                                      description="", layout=ipw.Layout(width="260px"))
        self._examples.add_class("lessons-control-examples")
        self._examples.observe(self._pick_example, names="value")
        cfg = self.model.config
        w, h = _grid_size(cfg["n_layers"], cfg["n_heads"], coref.MAX_LEN)
        self.figures["referent"] = Bars(title="The referent head: where “it” looks", width=440, height=320,
                                        xlabel="word (key)")
        self.figures["heads"] = HeatmapGrid(title="Every head (rows: query, columns: key)",
                                            colorbar_label="weight", columns=cfg["n_heads"], width=w,
                                            height=h, percent=True)
        self.widget = _model_layout(self, [[self._examples], ["referent", "heads"]])
        self.update()

    def _pick_example(self, change) -> None:
        if change["new"]:
            self.controls["sentence"].value = change["new"]
            self._examples.value = ""

    def _redraw(self) -> None:
        sentence = self.controls["sentence"].value
        try:
            r = self._models.read_attention(self.model, sentence)
        except (ValueError, TypeError) as exc:
            self.reading, self.error = None, str(exc)
            self.message.value = (f'<span style="color:#b00020"><b>Cannot read this sentence:</b> '
                                  f"{html.escape(str(exc))}</span>")
            return
        self.reading, self.error = r, None
        n_layers, n_heads = r.layers.shape[:2]
        self.figures["referent"].draw(r.referent, r.tokens,
                                      title=f"Referent head: “it” → {r.answer} ({r.confidence:.0%})")
        self.figures["heads"].draw(r.layers.reshape(n_layers * n_heads, *r.layers.shape[2:]), r.tokens,
                                   r.tokens, vmin=0.0, vmax=1.0, panel_titles=head_names(n_layers, n_heads))
        expected = coref.expected_referent(r.tokens)
        verdict = ("" if expected is None else
                   " A reader would say " + ("it refers to nothing." if expected == coref.NOTHING
                                             else f"“{expected}”."))
        self.message.value = (f"“it” → <b>{html.escape(r.answer)}</b> with weight {r.confidence:.2f}."
                              f"{html.escape(verdict)}")

    def still(self):
        if self.reading is None:
            fig = plots._new_figure(7, 1.2)
            fig.text(0.02, 0.5, "No sentence shown: " + html.unescape(self.message.value), fontsize=12)
            return fig
        return plot_referent_rows([self.reading])


class TrainingExplorer(ExplorerBase):
    """A slider over the training steps recorded by ``train_coref_model``: watch attention form (notebook 09).

    Shows, for probe sentence A or B at that step, the referent head's row of
    "it" (bars), every head of every layer (grid) and the loss so far (a line
    with the step marked).
    """

    title = "Attention during training"
    hint = "Drag the step: at step 0 the weights are nearly even; the pattern forms as the loss falls."

    def __init__(self, run, *, step: int | None = None, sentence: str = "A"):
        from .live_figures import Bars, HeatmapGrid, LinePlot

        super().__init__()
        self.message = self.readout   # the message line: what the referent head does at this step
        self.run = _check_run(run)
        steps = [int(s) for s in self.run.snapshot_steps]
        step = steps[0] if step is None else step
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step not in steps:
            raise ValueError(f"step must be one of the recorded steps {steps[0]}, {steps[1]}, …, "
                             f"{steps[-1]}; got {step!r}.")
        self._control("step", ipw.SelectionSlider(options=steps, value=int(step), description="training step",
                                                  continuous_update=True, layout=ipw.Layout(width="520px")))
        check_choice(sentence, "sentence", sorted(self.run.snapshots))
        self._control("sentence", ipw.ToggleButtons(options=sorted(self.run.snapshots), value=sentence,
                                                    description="sentence"))
        n_layers, n_heads = self.run.snapshots[sentence]["layers"].shape[1:3]
        w, h = _grid_size(n_layers, n_heads, len(self.run.probe_tokens[sentence]))
        self.figures["referent"] = Bars(title="Referent head", width=440, height=250, xlabel="word (key)")
        self.figures["heads"] = HeatmapGrid(title="Every head", colorbar_label="weight", columns=n_heads,
                                            width=w, height=h, percent=True)
        self.figures["loss"] = LinePlot(title="Training loss", xlabel="training step",
                                        ylabel="loss (cross-entropy)", width=440, height=220)
        losses = self.run.losses
        self.figures["loss"].set_series([{"label": "loss", "x": list(range(len(losses))),
                                          "y": losses.tolist(), "mode": "line", "color": "#3b528b"}])
        left = ipw.VBox([self.figures["referent"], self.figures["loss"]])
        self.widget = _model_layout(self, [[left, "heads"]])
        self.update()

    def _redraw(self) -> None:
        step, name = self.controls["step"].value, self.controls["sentence"].value
        k = int(np.searchsorted(self.run.snapshot_steps, step))
        snap, tokens = self.run.snapshots[name], self.run.probe_tokens[name]
        row = snap["referent"][k]
        layers = snap["layers"][k]
        n_layers, n_heads = layers.shape[:2]
        answer = tokens[int(np.argmax(row))]
        self.figures["referent"].draw(row, tokens, title=f"Step {step}: “it” → {answer} ({row.max():.0%})")
        self.figures["heads"].draw(layers.reshape(n_layers * n_heads, *layers.shape[2:]), tokens, tokens,
                                   vmin=0.0, vmax=1.0, panel_titles=head_names(n_layers, n_heads),
                                   title=f"Every head at step {step} (sentence {name})")
        loss = float(self.run.losses[min(step, len(self.run.losses) - 1)])
        self.figures["loss"].mark(step, loss, title=f"Training loss (step {step}: {loss:.3f})")
        self.message.value = (f"Sentence {name}, step {step} of {int(self.run.snapshot_steps[-1])}: "
                              f"the referent head gives “{html.escape(answer)}” {row.max():.2f}.")

    def still(self):
        from types import SimpleNamespace

        step, name = self.controls["step"].value, self.controls["sentence"].value
        k = int(np.searchsorted(self.run.snapshot_steps, step))
        tokens = self.run.probe_tokens[name]
        snap = self.run.snapshots[name]
        view = SimpleNamespace(tokens=tokens, it_pos=tokens.index("it"), layers=snap["layers"][k],
                               referent=snap["referent"][k])
        return plot_it_rows(view, title=f"Sentence {name} at training step {step}: where “it” looks")
