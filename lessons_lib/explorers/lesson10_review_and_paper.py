"""Lesson 10's explorer: every head of one layer of a real model (GPT-2 small online, the course's
own model offline), on the head grid of lesson 06. The weights come from
:func:`lessons_lib.lab.real_model.look_inside`.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._checks import check_int_in_range
from ..lab.real_model import ModelAttention
from .base import ExplorerBase, favourite_per_head

__all__ = ["RealModelExplorer"]


class RealModelExplorer(ExplorerBase):
    """Every head of one layer of a real model (:func:`look_inside`); a slider picks the layer.

    The head grid of lesson 06 (hover a head to enlarge it, click a token to follow it
    in every head, by its row or its column) on a model's own weights.
    """

    title = "Inside a real model: every head of one layer"
    hint = "move 'layer'; hover a head to see it large; click a token to follow it in every head"

    def __init__(self, attention: ModelAttention, *, layer: int = 1, token: int = 0):
        super().__init__()
        if not isinstance(attention, ModelAttention):
            raise TypeError("attention must be what look_inside(...) returns.")
        self.attention = attention
        n_layers, L = attention.n_layers, len(attention.tokens)
        layer = check_int_in_range(layer, "layer", 1, n_layers)
        token = check_int_in_range(token, "token", 0, L - 1)
        self._control("layer", widgets.IntSlider(value=layer, min=1, max=n_layers, description="layer",
                                                 continuous_update=True))
        self._head_view(token, L)
        c = self.controls
        self.widget = self._box(widgets.HBox([c["layer"], c["token"]]), c["direction"], self.view,
                                self.readout, self.error_box)
        self.update()

    def settings(self) -> str:
        return f"layer = {self.controls['layer'].value} of {self.attention.n_layers}"

    def _source(self) -> str:
        source = self.attention.source
        return source[:1].upper() + source[1:]

    def _layer(self) -> tuple[int, np.ndarray]:
        layer = self.controls["layer"].value
        return layer, self.attention.weights[layer - 1]

    def _redraw(self) -> None:
        layer, w = self._layer()
        h, L = w.shape[0], w.shape[1]
        self.summary = (f"{h} heads of layer {layer}; "
                        f"{favourite_per_head(w, self.attention.tokens, self.controls['token'].value)}")
        self.view.draw(w, self.attention.tokens, panel_titles=[f"head {k}" for k in range(h)],
                       token=self.controls["token"].value,
                       title=f"{self._source()}: layer {layer}, {h} heads, {L} tokens",
                       alt=f"{self.settings()}: the attention weights of {h} heads, {L} × {L} each")
        self.readout.value = f"<span>{self.attention.note or self.attention.source}</span>"

    def still(self):
        from ..figures.attention_maps import plot_head_grid

        layer, w = self._layer()
        return plot_head_grid(w, self.attention.tokens,
                              title=f"{self._source()}: every head of layer {layer}")
