"""The explorer of lesson 02: X · W = Q, K or V, with d_k and the projection as sliders.
"""

from __future__ import annotations

import ipywidgets as ipw
import numpy as np

from ..figures.live import MatrixProduct, ProductPanel
from ..lab import data
from .base import (
    LESSON_D_K,
    LESSON_D_MODEL,
    LESSON_SEED,
    LESSON_SENTENCE,
    Explorer,
    check_sentence,
    nice_bound,
    quoted,
)

__all__ = ["ProjectionExplorer"]


# ---------------------------------------------------------------------- notebook 02
class ProjectionExplorer(Explorer):
    """Step 1 with shapes: X (seq_len, d_model) · W (d_model, d_k) = Q, K or V (seq_len, d_k) (notebook 02).

    X = ``data.embed_tokens``, the W's = ``data.projection_weights``, the product
    = ``attention.project_qkv``. Move d_k: W and the result widen, X does not change.
    """

    title = "Step 1: X · W = Q, K, V"
    hint = "d_k sets how many columns W has, and so how many numbers each token's query, key or value gets."

    def __init__(self, sentence: str = LESSON_SENTENCE, *, d_k: int = LESSON_D_K,
                 d_model: int = LESSON_D_MODEL, seed: int = LESSON_SEED, projection: str = "Q"):
        super().__init__(d_model=d_model, seed=seed)
        self.sentence = check_sentence(sentence)
        self.tokens = data.tokenize(data.SENTENCES[sentence])
        if projection not in ("Q", "K", "V"):
            raise ValueError(f'projection must be "Q", "K" or "V"; got {projection!r}.')
        self._slider_d_k(d_k)
        self._control("projection", ipw.ToggleButtons(options=["Q", "K", "V"], value=projection,
                                                      description="result"))
        self._figure("product", MatrixProduct(title="", width=1100, height=330))
        self.widget = self._layout([["product"]])
        self.update()

    def compute(self, d_k: int) -> dict:
        x, (w_q, w_k, w_v), (q, k, v) = self._project(self.tokens, d_k)
        return {"x": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": q, "K": k, "V": v}

    def _panels(self):
        d_k, name = self.controls["d_k"].value, self.controls["projection"].value
        r = self.compute(d_k)
        x, w, out = r["x"], r[f"W_{name}"], r[name]
        what = {"Q": "queries", "K": "keys", "V": "values"}[name]
        bx, bw, bo = (nice_bound(np.max(np.abs(m))) for m in (x, w, out))
        return name, x, w, out, (
            ProductPanel(x, self.tokens, None, f"X: embeddings\n{x.shape[0]} × {x.shape[1]}",
                         "feature (d_model)", "token", -bx, bx),
            ProductPanel(w, None, None, f"W_{name}: learned\n{w.shape[0]} × {w.shape[1]}",
                         "column (d_k)", "row (d_model)", -bw, bw),
            ProductPanel(out, self.tokens, None,
                         f"{name} = X·W_{name}: {what}\n{out.shape[0]} × {out.shape[1]}",
                         "feature (d_k)", "token", -bo, bo))

    def _redraw(self) -> None:
        name, x, w, out, panels = self._panels()
        i, j = np.unravel_index(int(np.argmax(np.abs(out))), out.shape)
        size = " × ".join(map(str, out.shape))
        self.summary = (f"W_{name} is {w.shape[0]} × {w.shape[1]}, so {name} is {size}: d_k = {out.shape[1]} "
                        f"numbers per token; its largest entry in size, {out[i, j]:.2f}, is "
                        f"{quoted(self.tokens[i])}'s feature {j}").replace("-", "−")
        shapes = " · ".join(f"({m.shape[0]} × {m.shape[1]})" for m in (x, w)) + f" = ({size})"
        self.figures["product"].draw(*panels, alt=f"X · W_{name} = {name}; {self.settings()}: {shapes}; "
                                                  f"{self.summary}")
        self.readout.value = (
            f"({x.shape[0]} × {x.shape[1]}) · ({w.shape[0]} × {w.shape[1]}) = "
            f"({out.shape[0]} × {out.shape[1]}): "
            f"the inner sizes (d_model = {self.d_model}) cancel; each token's row of X becomes a row of "
            f"{name} with d_k = {out.shape[1]} numbers."
        )

    def still(self):
        from ..figures.lesson02_step1_qkv import plot_projection

        name, x, w, out, _ = self._panels()
        return plot_projection(x, w, out, self.tokens, name)
