"""The explorer of lesson 03: the raw scores Q·Kᵀ, with seq_len and d_k as sliders.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import attention
from ..figures import style
from ..figures.live import Heatmap
from ..lab import data
from .base import (
    LESSON_D_K,
    LESSON_D_MODEL,
    LESSON_SEED,
    LESSON_SENTENCE,
    SEQ_LEN_MIN,
    Explorer,
    check_sentence,
    extreme_cell,
    nice_bound,
    tokens_for,
)

__all__ = ["ScoresExplorer"]


# ---------------------------------------------------------------------- notebook 03
class ScoresExplorer(Explorer):
    """Raw scores Q·Kᵀ (seq_len, seq_len) of a sentence; sliders for seq_len and d_k (notebook 03).

    X = ``data.embed_tokens(tokens, d_model, seed)``, W_Q, W_K =
    ``data.projection_weights(d_model, d_k, seed)``, Q, K = ``attention.project_qkv``,
    scores = ``attention.attention_scores(Q, K)``; entry (i, j) = q_i·k_j. Longer
    sequences continue the sentence with the course's story.
    """

    title = "Raw attention scores Q·Kᵀ"
    hint = ("seq_len: how many tokens take part (the grid has seq_len² cells). d_k: the length of each "
            "query and key; watch the colour scale as d_k grows. Hover a cell for its exact score.")

    def __init__(self, sentence: str = LESSON_SENTENCE, *, seq_len: int | None = None, d_k: int = LESSON_D_K,
                 d_model: int = LESSON_D_MODEL, seed: int = LESSON_SEED):
        super().__init__(d_model=d_model, seed=seed)
        self.sentence = check_sentence(sentence)
        n = len(data.tokenize(data.SENTENCES[sentence]))
        self._slider_seq_len(max(n, SEQ_LEN_MIN) if seq_len is None else seq_len)
        self._slider_d_k(d_k)
        self._figure("scores", Heatmap(colorbar_label="score q·k (dot product)", cmap=style.CMAP_VALUES,
                                       width=620, height=520, decimals=2, annotate_max=12))
        self.widget = self._layout([["scores"]])
        self.update()

    def compute(self, seq_len: int, d_k: int) -> dict:
        """Tokens, Q, K and scores for these settings (what the heatmap shows)."""
        tokens = tokens_for(self.sentence, seq_len)
        _, _, (q, k, _) = self._project(tokens, d_k)
        return {"tokens": tokens, "q": q, "k": k, "scores": attention.attention_scores(q, k)}

    def _view(self):
        n, d_k = self.controls["seq_len"].value, self.controls["d_k"].value
        r = self.compute(n, d_k)
        return n, d_k, r, nice_bound(np.max(np.abs(r["scores"])))

    def _redraw(self) -> None:
        n, d_k, r, bound = self._view()
        s = r["scores"]
        self.summary = (f"{n * n} scores from {s.min():.2f} to {s.max():.2f}; "
                        f"{extreme_cell(s, r['tokens'], r['tokens'])}").replace("-", "−")
        self.figures["scores"].draw(s, r["tokens"], r["tokens"], vmin=-bound, vmax=bound,
                                    title=f"Raw scores Q·Kᵀ  (seq_len = {n}, d_k = {d_k})",
                                    alt=f"Raw scores Q·Kᵀ; {self.settings()}: {self.summary}")
        self.readout.value = (
            f"seq_len = {n}, d_k = {d_k}: {n * n} scores from {s.min():.2f} to {s.max():.2f}, standard "
            f"deviation {s.std():.2f} (√d_k = {math.sqrt(d_k):.2f}). Colour scale ±{bound:g}."
        )

    def still(self):
        from ..figures.attention_maps import plot_scores

        n, d_k, r, bound = self._view()
        return plot_scores(r["scores"], r["tokens"], d_k=d_k, vmin=-bound, vmax=bound, fmt=".2f",
                           title=f"Raw scores Q·Kᵀ  (seq_len = {n}, d_k = {d_k})")
