"""Explorer of notebook 14 (latent and sparse attention): :class:`LatentSparseExplorer`.

A tiny MLA layer (:data:`~lessons_lib.lab.deepseek.TINY_MLA`, 16 tokens) with a latent of ``d_c`` numbers and
DeepSeek-V3.2's selection of ``top_k`` keys per query by a (here untrained) lightning indexer: its dense
weights, the same weights on the keys kept (the others hatched), the numbers one token keeps in the cache
beside multi-head and multi-query attention, and how far each query's output moves from dense attention.
All numbers come from :func:`lessons_lib.lab.deepseek.sparse_run`.
"""

from __future__ import annotations

import html

import ipywidgets as ipw
import numpy as np

from .._checks import check_int_in_range, check_seed
from ..figures import style
from ..figures.lesson14_latent_and_sparse import DENSE_COLOUR, SPARSE_COLOUR
from ..figures.live import Bars, Heatmap, LinePlot
from ..lab.deepseek import TINY_MLA, sparse_run
from .base import ExplorerBase

__all__ = ["LatentSparseExplorer"]

N = TINY_MLA["tokens"]


class LatentSparseExplorer(ExplorerBase):
    """The latent's size and the keys kept, live (notebook 14). ``.run`` is the
    :class:`~lessons_lib.lab.deepseek.SparseRun` drawn."""

    title = "Latent and sparse attention: what the cache keeps, which keys each query sees"
    hint = ("move d_c and watch the cache per token; move top_k and watch which keys each query keeps and "
            "how far its output moves from dense attention; move 'query' (or click a row) to follow one "
            "query")

    def __init__(self, *, d_c: int = 8, top_k: int = 4, query: int = N - 1, seed: int = 0):
        super().__init__()
        check_int_in_range(d_c, "d_c", 2, 32)
        check_int_in_range(top_k, "top_k", 1, N)
        check_int_in_range(query, "query", 0, N - 1)
        self.seed = check_seed(seed, allow_generator=False)
        self._control("d_c", ipw.IntSlider(value=d_c, min=2, max=32, description="d_c",
                                           continuous_update=True),
                      label="d_c: numbers in each token's latent")
        self._control("top_k", ipw.IntSlider(value=top_k, min=1, max=N, description="top_k",
                                             continuous_update=True),
                      label="top_k: keys each query keeps")
        self._control("query", ipw.IntSlider(value=query, min=0, max=N - 1, description="query",
                                             continuous_update=True),
                      label="query: the position followed")
        self._labels = [str(i) for i in range(N)]
        for name in ("dense", "kept"):
            self._figure(name, Heatmap(colorbar_label="dense attention weight", cmap=style.CMAP_WEIGHTS,
                                       percent=True, xlabel="key position", ylabel="query position",
                                       width=400, height=290, annotate_max=0, selectable=name == "kept"))
        self._follow_clicks(self.figures["kept"])   # a click on a kept row follows that query
        self._figure("cache", Bars(xlabel="attention", ylabel="numbers per token and layer", width=360,
                                   height=100, ymax=float(2 * TINY_MLA["n_heads"] * TINY_MLA["d_nope"]),
                                   percent=False, bar_name="attention", decimals=0))
        self._figure("difference", LinePlot(xlabel="query position", ylabel="% of the dense output's length",
                                            width=440, height=100))
        self.readout.layout = ipw.Layout(min_height="44px")
        self.widget = self._layout([["dense", "kept"], ["cache", "difference"]])
        self.update()

    def _redraw(self) -> None:
        c = self.controls
        d_c, top_k, i = c["d_c"].value, c["top_k"].value, c["query"].value
        self.run = run = sparse_run(d_c, top_k, seed=self.seed)
        say = self.settings()
        causal = np.tril(np.ones((N, N), bool))
        kept_keys = [int(j) for j in np.flatnonzero(run.keep[i])]
        self.figures["dense"].draw(run.dense, self._labels, self._labels, vmin=0.0, vmax=1.0, mask=causal,
                                   highlight_row=i, title="dense attention (head 0)",
                                   alt=f"dense attention weights of head 0; {say}: query {i} puts "
                                       f"{run.dense[i].max():.0%} on key {int(run.dense[i].argmax())}, its "
                                       f"largest weight")
        self.figures["kept"].draw(run.dense, self._labels, self._labels, vmin=0.0, vmax=1.0, mask=run.keep,
                                  highlight_row=i, title=f"the same weights on the top {top_k} keys",
                                  alt=f"dense weights on the keys the indexer keeps, the others hatched; "
                                      f"{say}: query {i} keeps keys {', '.join(map(str, kept_keys))}, which "
                                      f"hold {run.kept_weight[i]:.0%} of its dense weight")
        mha, mqa = run.multi_head_numbers, run.multi_head_numbers // TINY_MLA["n_heads"]
        self.figures["cache"].draw(np.array([mha, mqa, run.numbers_per_token], float),
                                   ["multi-head", "multi-query", f"latent {d_c} + rope {TINY_MLA['d_rope']}"],
                                   title="one token's cache in one layer",
                                   alt=f"numbers one token keeps per layer; {say}: multi-head {mha}, "
                                       f"multi-query {mqa}, latent {run.numbers_per_token}")
        positions = list(range(N))
        moved = 100 * run.difference
        self.figures["difference"].set_series([
            {"label": f"top {top_k} keys by the indexer", "x": positions, "y": moved.tolist(), "mode": "line",
             "color": SPARSE_COLOUR},
            {"label": "dense weight on keys not kept", "x": positions,
             "y": (100 * (1 - run.kept_weight)).tolist(), "mode": "line", "color": DENSE_COLOUR,
             "dash": True}])
        self.summary = (f"query {i} keeps {len(kept_keys)} of its {i + 1} keys, holding "
                        f"{run.kept_weight[i]:.0%} of its dense weight; its output moves {moved[i]:.0f}% of "
                        f"its length from dense attention; the cache keeps {run.numbers_per_token} numbers "
                        f"per token, against {mha} for multi-head attention")
        self.figures["difference"].mark(i, float(moved[i]), title="distance from dense attention",
                                        alt=f"each query's distance from dense attention; {say}: "
                                            f"{self.summary}")
        self.readout.value = html.escape(f"{self.summary[0].upper()}{self.summary[1:]}.")

    def still(self):
        from ..figures.lesson14_latent_and_sparse import plot_sparse_run

        return plot_sparse_run(self.run, self.controls["query"].value)
