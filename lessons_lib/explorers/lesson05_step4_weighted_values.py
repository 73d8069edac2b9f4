"""The explorer of lesson 05: scaled scores → weights → output, one query's bars.
"""

from __future__ import annotations

import ipywidgets as ipw
import numpy as np

from .._checks import check_flag, check_int_in_range
from ..core import attention, masks
from ..figures import style
from ..figures.live import Bars, Heatmap
from ..lab import data
from .base import (
    LESSON_D_K,
    LESSON_D_MODEL,
    LESSON_D_V,
    LESSON_SEED,
    LESSON_SENTENCE,
    SEQ_LEN_MIN,
    Explorer,
    check_sentence,
    extreme_cell,
    largest_weight,
    nice_bound,
    quoted,
    tokens_for,
)

__all__ = ["PipelineExplorer"]


# ---------------------------------------------------------------------- notebook 05
class PipelineExplorer(Explorer):
    """The whole of attention: scaled scores → weights → output, and one query's weights (notebook 05).

    seq_len, d_k and query sliders, and a causal-mask checkbox; the values keep their width d_v = 4
    (the lesson's) at every d_k, so the output stays a few columns wide. Computed with
    ``attention.project_qkv``, ``attention_scores``, ``scale_scores``,
    ``attention_weights(scores, d_k, causal=...)`` and ``weighted_values``.
    The selected query's row is framed in the heatmaps; a click on a row selects it.
    """

    title = "Attention, all four steps"
    hint = ("seq_len: tokens taking part; d_k: query/key length; query (or click a row): the row framed "
            "and drawn as bars; causal mask: hide the future.")

    def __init__(self, sentence: str = LESSON_SENTENCE, *, seq_len: int | None = None,
                 d_k: int = LESSON_D_K, query: int = 2, causal: bool = False, d_model: int = LESSON_D_MODEL,
                 d_v: int = LESSON_D_V, seed: int = LESSON_SEED):
        super().__init__(d_model=d_model, seed=seed)
        self.d_v = check_int_in_range(d_v, "d_v", 1, 64)
        self.sentence = check_sentence(sentence)
        if seq_len is None:
            seq_len = max(len(data.tokenize(data.SENTENCES[sentence])), SEQ_LEN_MIN)
        causal = check_flag(causal, "causal")
        self._slider_seq_len(seq_len)
        self._slider_d_k(d_k)
        self._slider_query(query, seq_len)
        self._control("causal", ipw.Checkbox(value=causal, description="causal mask", indent=False))
        size = {"width": 545, "height": 255}
        self._figure("scores", Heatmap(colorbar_label="scaled score q·k/√d_k", cmap=style.CMAP_VALUES,
                                       decimals=1, annotate_max=8, selectable=True, **size))
        self._figure("weights", Heatmap(colorbar_label="weight (rows sum to 1)", cmap=style.CMAP_WEIGHTS,
                                        annotate_max=8, percent=True, selectable=True, **size))
        self._figure("output", Heatmap(colorbar_label="output value", cmap=style.CMAP_VALUES,
                                       xlabel=f"feature of the output (d_v = {self.d_v})",
                                       ylabel="token (query)",
                                       col_name="feature", annotate_max=8, selectable=True, **size))
        self._figure("row", Bars(**size))
        for name in ("scores", "weights", "output"):
            self._follow_clicks(self.figures[name])
        self.widget = self._layout([["scores", "weights"], ["output", "row"]])
        self.update()

    def compute(self, seq_len: int, d_k: int, causal: bool) -> dict:
        tokens = tokens_for(self.sentence, seq_len)
        _, _, (q, k, v) = self._project(tokens, d_k, self.d_v)
        scores = attention.attention_scores(q, k)
        weights = attention.attention_weights(scores, d_k, causal=causal)
        return {"tokens": tokens, "q": q, "k": k, "v": v,
                "scaled_scores": attention.scale_scores(scores, d_k),
                "weights": weights, "output": attention.weighted_values(weights, v)}

    def _view(self):
        c = self.controls
        n, d_k, qi, causal = c["seq_len"].value, c["d_k"].value, c["query"].value, bool(c["causal"].value)
        r = self.compute(n, d_k, causal)
        mask = masks.causal_mask(n) if causal else None
        s = r["scaled_scores"]
        sb = nice_bound(np.max(np.abs(s if mask is None else s[mask])))
        ob = nice_bound(np.max(np.abs(r["output"])))
        titles = {"scores": f"1. Scaled scores Q·Kᵀ/√d_k\nseq_len = {n}, d_k = {d_k}",
                  "weights": "2. Weights = softmax of each row\neach row sums to 1",
                  "output": f"3. Output = weights·V\n{n} × {r['output'].shape[1]}",
                  "row": f"Where “{r['tokens'][qi]}” (query {qi}) looks"}
        return n, d_k, qi, causal, r, mask, sb, ob, titles

    def _redraw(self) -> None:
        n, d_k, qi, causal, r, mask, sb, ob, titles = self._view()
        toks, out, alt = r["tokens"], r["output"], self.settings()
        dims = [str(j) for j in range(out.shape[1])]
        row = largest_weight(r["weights"][qi], toks, toks[qi])
        spans = (f"output row of {quoted(toks[qi])} from {out[qi].min():.2f} to "
                 f"{out[qi].max():.2f}").replace("-", "−")
        masked = "" if mask is None else f"; {int((~mask).sum())} cells masked"
        self.summary = f"{row}; {spans}"
        scores = r["scaled_scores"] if mask is None else np.where(mask, r["scaled_scores"], -np.inf)
        self.figures["scores"].draw(r["scaled_scores"], toks, toks, vmin=-sb, vmax=sb, mask=mask,
                                    highlight_row=qi, title=titles["scores"],
                                    alt=f"scaled scores; {alt}: {extreme_cell(scores, toks, toks)}{masked}")
        self.figures["weights"].draw(r["weights"], toks, toks, vmin=0.0, vmax=1.0, mask=mask,
                                     highlight_row=qi, title=titles["weights"],
                                     alt=f"weights; {alt}: {row}{masked}")
        self.figures["output"].draw(out, toks, dims, vmin=-ob, vmax=ob, highlight_row=qi,
                                    title=titles["output"],
                                    alt=f"output; {alt}: {n} × {out.shape[1]}, {spans}")
        self.figures["row"].draw(r["weights"][qi], toks, mask=None if mask is None else mask[qi],
                                 title=titles["row"], alt=f"one query's weights; {alt}: {row}")
        v = r["v"]
        self.readout.value = (
            f"Output row {qi} ({quoted(toks[qi])}) is a weighted average of the values, so it stays in their "
            f"range: V from {v.min():.2f} to {v.max():.2f}, this row from {out[qi].min():.2f} to "
            f"{out[qi].max():.2f} (all {n} rows: {out.min():.2f} to {out.max():.2f})."
        )

    def still(self):
        from ..figures.attention_maps import plot_row_weights, plot_scores, plot_weights
        from ..figures.base import frame_row, panel_figure
        from ..figures.lesson05_step4_weighted_values import plot_outputs

        n, d_k, qi, causal, r, mask, sb, ob, titles = self._view()
        fig, (a, b, c, d) = panel_figure(2, 2, width=13, height=10.5)
        toks = r["tokens"]
        plot_scores(r["scaled_scores"], toks, scaled=True, d_k=d_k, mask=mask, ax=a, vmin=-sb, vmax=sb,
                          title=titles["scores"])
        plot_weights(r["weights"], toks, mask=mask, ax=b, title=titles["weights"])
        plot_outputs(r["output"], toks, ax=c, vmin=-ob, vmax=ob, title=titles["output"])
        plot_row_weights(r["weights"][qi], toks, qi, mask=None if mask is None else mask[qi], ax=d,
                               title=titles["row"])
        for ax in (a, b, c):          # the selected query's row, framed as in the live heatmaps
            frame_row(ax, qi)
        return fig
