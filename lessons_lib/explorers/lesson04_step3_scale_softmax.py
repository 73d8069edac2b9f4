"""The explorer of lesson 04: var(q·k) against d_k, the weights and one query's bars.
"""

from __future__ import annotations

import math

import ipywidgets as ipw
import numpy as np

from .._checks import check_flag, is_real_number
from ..core import attention
from ..figures import style
from ..figures.live import Bars, Heatmap, LinePlot
from ..lab import data
from .base import (
    D_K_OPTIONS,
    LESSON_D_K,
    LESSON_D_MODEL,
    LESSON_SEED,
    LESSON_SENTENCE,
    Explorer,
    check_sentence,
    largest_weight,
    variance_data,
)

__all__ = ["ScaleSoftmaxExplorer"]


# ---------------------------------------------------------------------- notebook 04
class ScaleSoftmaxExplorer(Explorer):
    """Why divide by √d_k: var(q·k) grows like d_k, and softmax saturates without scaling (notebook 04).

    Three views: var(q·k) against d_k (:func:`measurements.measure_score_variance`,
    the current d_k marked), the weights softmax(scale·scores / temperature) with
    scale = 1/√d_k when "scale by 1/√d_k" is ticked (else 1), and one query's
    weights as bars. Data: ``data.embed_tokens``, ``data.projection_weights``,
    ``attention.attention_scores`` and ``attention.attention_weights(scores, scale=...)``.
    """

    title = "Scaling and softmax: why √d_k"
    hint = ("Untick the box and raise d_k: rows collapse onto one key. temperature divides the scores "
            "again; query (or click a row): the bars.")

    def __init__(self, sentence: str = LESSON_SENTENCE, *, d_k: int = LESSON_D_K, scaled: bool = True,
                 temperature: float = 1.0, query: int = 2, d_model: int = LESSON_D_MODEL,
                 seed: int = LESSON_SEED):
        super().__init__(d_model=d_model, seed=seed)
        self.sentence = check_sentence(sentence)
        self.tokens = data.tokenize(data.SENTENCES[sentence])
        scaled = check_flag(scaled, "scaled")
        if not is_real_number(temperature) or not 0.1 <= temperature <= 10:
            raise ValueError(f"temperature must be a number from 0.1 to 10; got {temperature!r}.")
        self._slider_d_k(d_k)
        self._control("scaled", ipw.Checkbox(value=scaled, description="scale by 1/√d_k", indent=False))
        self._control("temperature", ipw.FloatLogSlider(value=float(temperature), base=10, min=-1, max=1,
                                                        step=0.05, description="temperature",
                                                        continuous_update=True))
        self._slider_query(query, len(self.tokens))
        d_ks, raw, scaled_var = variance_data(self.seed)
        self.variance = {"d_ks": d_ks, "raw": raw, "scaled": scaled_var}
        plot = self._figure("variance", LinePlot(xlabel="d_k (length of each query and key)",
                                                 ylabel="variance of the scores", log_x=True, log_y=True,
                                                 width=470, height=285, xticks=list(D_K_OPTIONS)))
        table = style.colormap_table(style.CMAP_WEIGHTS)
        colour = ["#" + bytes(table[3 * i:3 * i + 3]).hex() for i in (64, 192)]
        plot.set_series([
            {"label": "theory: var = d_k", "x": [1, 512], "y": [1, 512], "mode": "line", "color": "#595959"},
            {"label": "theory after scaling: 1", "x": [1, 512], "y": [1, 1], "mode": "line",
             "color": "#595959", "dash": True},
            {"label": "measured, unscaled", "x": d_ks.tolist(), "y": raw.tolist(), "mode": "markers",
             "marker": "o", "color": colour[0]},
            {"label": "measured, scaled", "x": d_ks.tolist(), "y": scaled_var.tolist(), "mode": "markers",
             "marker": "s", "color": colour[1]},
        ])
        weights = self._figure("weights", Heatmap(colorbar_label="attention weight (rows sum to 1)",
                                                  cmap=style.CMAP_WEIGHTS, width=620, height=285,
                                                  percent=True, selectable=True))
        self._follow_clicks(weights)
        self._figure("row", Bars(width=1090, height=200))
        self.widget = self._layout([["variance", "weights"], ["row"]])
        self.update()

    def compute(self, d_k: int, scaled: bool, temperature: float) -> dict:
        """Scores, the factor they are multiplied by, and the weights, for these settings."""
        _, _, (q, k, _) = self._project(self.tokens, d_k)
        scores = attention.attention_scores(q, k)
        factor = (1.0 / math.sqrt(d_k) if scaled else 1.0) / float(temperature)
        weights = attention.attention_weights(scores, scale=factor)
        return {"scores": scores, "factor": factor, "weights": weights}

    def _view(self):
        c = self.controls
        d_k, scaled, temp, qi = c["d_k"].value, bool(c["scaled"].value), float(c["temperature"].value), \
            c["query"].value
        r = self.compute(d_k, scaled, temp)
        i = int(np.flatnonzero(self.variance["d_ks"] == d_k)[0])
        var = (self.variance["scaled"] if scaled else self.variance["raw"])[i]
        how = "÷√d_k" if scaled else "not scaled"
        temp_txt = "" if abs(temp - 1) < 1e-9 else f", T = {temp:.2g}"
        titles = {
            "variance": (f"Variance of the scores: ≈ d_k, or ≈ 1 after ÷√d_k\n"
                         f"at d_k = {d_k} ({how}): {var:.3g}"),
            "weights": (f"Weights softmax(scores{' / √d_k' if scaled else ''}{' / T' if temp_txt else ''})\n"
                        f"d_k = {d_k}{temp_txt}{'' if scaled else ', NOT scaled'}"),
            "row": f"Where “{self.tokens[qi]}” (query {qi}) looks: its weights (sum = 1)",
        }
        return d_k, scaled, temp, qi, r, var, titles

    def _redraw(self) -> None:
        d_k, scaled, temp, qi, r, var, titles = self._view()
        w = r["weights"]
        alt = self.settings()
        top = w.max(axis=1).mean()
        row = largest_weight(w[qi], self.tokens, self.tokens[qi])
        self.summary = row + ("; softmax is saturated: rows are nearly one-hot" if top > 0.8 else "")
        self.figures["variance"].mark(d_k, var, shape="s" if scaled else "o", title=titles["variance"],
                                      alt=f"variance of the scores against d_k; {alt}: at d_k = {d_k} "
                                          f"{'after ÷√d_k' if scaled else 'not scaled'}, {var:.3g}")
        self.figures["weights"].draw(w, self.tokens, self.tokens, vmin=0.0, vmax=1.0, highlight_row=qi,
                                     title=titles["weights"],
                                     alt=f"attention weights; {alt}: {row}; the largest weight of a row is "
                                         f"{top:.2f} on average")
        self.figures["row"].draw(w[qi], self.tokens, title=titles["row"],
                                 alt=f"one query's weights; {alt}: {row}")
        low = int(np.argmin(w[qi]))
        self.readout.value = (
            f"“{self.tokens[qi]}” gives {w[qi].max():.1%} to “{self.tokens[int(np.argmax(w[qi]))]}” and "
            f"{w[qi, low]:.1%} to “{self.tokens[low]}”. Scores entering softmax: standard deviation "
            f"{(r['scores'] * r['factor']).std():.2f}; largest weight per row {top:.2f} on average "
            f"({'nearly one-hot: softmax is saturated' if top > 0.8 else 'spread over keys'}); "
            f"every row sums to {w.sum(axis=1).mean():.3f}."
        )

    def still(self):
        from ..figures.attention_maps import plot_row_weights, plot_weights
        from ..figures.base import frame_row, panel_figure
        from ..figures.lesson04_step3_scale_softmax import plot_score_variance

        d_k, scaled, temp, qi, r, var, titles = self._view()
        fig, (ax_var, ax_w, ax_row) = panel_figure(1, 3, width=19, height=5.6)
        v = self.variance
        plot_score_variance(v["d_ks"], v["raw"], v["scaled"], current_d_k=d_k, ax=ax_var,
                                  title=titles["variance"])
        plot_weights(r["weights"], self.tokens, ax=ax_w, title=titles["weights"])
        frame_row(ax_w, qi)           # the query followed by the bars, framed as in the live heatmap
        plot_row_weights(r["weights"][qi], self.tokens, qi, ax=ax_row, title=titles["row"])
        return fig
