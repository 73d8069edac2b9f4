"""The explorers of lesson 09: type a sentence and see its attention; watch the pattern form over training.

This module does not import torch; ``SentenceExplorer`` does, when it runs the model.
"""

from __future__ import annotations

import html

import ipywidgets as ipw
import numpy as np

from .._checks import check_choice, is_whole_number
from ..figures.base import new_figure
from ..figures.lesson09_attention_in_action import check_run, head_names, plot_it_rows, plot_reading
from ..figures.live.access import control_entry
from ..lab import coref
from .base import ExplorerBase, quoted

__all__ = ["SentenceExplorer", "TrainingExplorer"]


# ------------------------------------------------------------------ explorers
def _grid_size(n_layers: int, n_heads: int, n_tokens: int) -> tuple[int, int]:
    cell = 200 if n_tokens <= 16 else 220   # small enough that the explorer fits 1280 × 800 beside its bars
    return 90 + cell * n_heads, 80 + cell * n_layers


def _model_layout(explorer: ExplorerBase, rows) -> ipw.VBox:
    """Header, controls, the message line, then rows of figures that wrap (notebook 09's explorers)."""
    return explorer._box(explorer._controls_row(), explorer.message, explorer.error_box,
                         *(explorer._row(row) for row in rows))


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
        from ..figures.live import Bars, HeatmapGrid
        from ..lab import models

        super().__init__()
        self.message = self.readout   # the message line: the answer, or why the sentence cannot be read
        self._models = models
        self.model = models.check_model(model)
        self.reading = None
        self.error: str | None = None  # why the current sentence cannot be read, in words
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be text, e.g. {coref.SENTENCE_A!r}; got {sentence!r}.")
        self._control("sentence", ipw.Text(value=sentence, description="sentence", continuous_update=False,
                                           layout=ipw.Layout(width="640px", max_width="100%")))
        self._examples = ipw.Dropdown(options=[("examples…", "")] + [(e, e) for e in EXAMPLES], value="",
                                      description="", layout=ipw.Layout(width="260px", max_width="100%"))
        self._examples.add_class("lessons-control-examples")
        self._access_entries.append(control_entry("lessons-control-examples",
                                                  "examples: put one of these sentences in the box"))
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
            self.summary = f"Cannot read this sentence: {exc}"
            self.message.value = (f'<span style="color:#b00020"><b>Cannot read this sentence:</b> '
                                  f"{html.escape(str(exc))}</span>")
            return
        self.reading, self.error = r, None
        n_layers, n_heads = r.layers.shape[:2]
        looks = f"“it” looks most at {quoted(r.answer)}, {r.confidence:.2f}"
        self.figures["referent"].draw(r.referent, r.tokens,
                                      title=f"Referent head: “it” → {r.answer} ({r.confidence:.0%})",
                                      alt=f"the referent head's row of “it” on “{sentence}”: {looks}")
        self.figures["heads"].draw(r.layers.reshape(n_layers * n_heads, *r.layers.shape[2:]), r.tokens,
                                   r.tokens, vmin=0.0, vmax=1.0, panel_titles=head_names(n_layers, n_heads),
                                   alt=f"every head on “{sentence}”: {n_layers} layers × {n_heads} heads, "
                                       f"{len(r.tokens)} × {len(r.tokens)} weights each; in the referent "
                                       f"head {looks}")
        expected = coref.expected_referent(r.tokens)
        verdict = ("" if expected is None else
                   " A reader would say " + ("it refers to nothing." if expected == coref.NOTHING
                                             else f"“{expected}”."))
        self.message.value = (f"“it” → <b>{html.escape(r.answer)}</b> with weight {r.confidence:.2f}."
                              f"{html.escape(verdict)}")
        self.summary = f"“it” → {r.answer} with weight {r.confidence:.2f}.{verdict}"

    def still(self):
        if self.reading is None:
            fig = new_figure(7, 1.2)
            fig.text(0.02, 0.5, "No sentence shown: " + html.unescape(self.message.value), fontsize=12)
            return fig
        return plot_reading(self.reading)


class TrainingExplorer(ExplorerBase):
    """A slider over the training steps recorded by ``train_coref_model``: watch attention form (notebook 09).

    Shows, for probe sentence A or B at that step, the referent head's row of
    "it" (bars), every head of every layer (grid) and the loss so far (a line
    with the step marked).
    """

    title = "Attention during training"
    hint = "Drag the step: at step 0 the weights are nearly even; the pattern forms as the loss falls."

    def __init__(self, run, *, step: int | None = None, sentence: str = "A"):
        from ..figures.live import Bars, HeatmapGrid, LinePlot

        super().__init__()
        self.message = self.readout   # the message line: what the referent head does at this step
        self.run = check_run(run)
        steps = [int(s) for s in self.run.snapshot_steps]
        step = steps[0] if step is None else step
        if not is_whole_number(step) or step not in steps:
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
        loss = float(self.run.losses[min(step, len(self.run.losses) - 1)])
        looks = f"“it” looks most at {quoted(answer)}, {row.max():.2f}"
        self.summary = f"in the referent head {looks}; loss {loss:.3f}"
        self.figures["referent"].draw(row, tokens, title=f"Step {step}: “it” → {answer} ({row.max():.0%})",
                                      alt=f"the referent head's row of “it”; {self.settings()}: {looks}")
        self.figures["heads"].draw(layers.reshape(n_layers * n_heads, *layers.shape[2:]), tokens, tokens,
                                   vmin=0.0, vmax=1.0, panel_titles=head_names(n_layers, n_heads),
                                   title=f"Every head at step {step} (sentence {name})",
                                   alt=f"every head; {self.settings()}: {n_layers} layers × {n_heads} heads, "
                                       f"{len(tokens)} × {len(tokens)} weights each; in the referent head "
                                       f"{looks}")
        self.figures["loss"].mark(step, loss, title=f"Training loss (step {step}: {loss:.3f})",
                                  alt=f"training loss against the step; {self.settings()}: loss {loss:.3f}, "
                                      f"from {float(self.run.losses[0]):.3f} at step 0 to "
                                      f"{float(self.run.losses[-1]):.3f} at the end")
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
