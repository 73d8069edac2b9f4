"""The head-grid explorer of notebook 06: every head's attention weights, side by side.

:class:`HeadGridExplorer` runs :func:`lessons_lib.multi_head_attention` on a sentence
with fixed (random, untrained) projections W_Q, W_K, W_V of size d_model × d_model and
shows each head's weights in a :class:`~lessons_lib.figures.live.heads.HeadView`:
a thumbnail per head, one previewed large (hover a thumbnail; click to lock), one token
followed in every head, by its row (*where does it look*) or its column (*who looks at it*).

Sliders: ``n_heads`` (1 … 16), ``d_model`` (16 … 128), ``seq_len`` (2 … 32). The
projections depend on d_model only, so moving ``n_heads`` re-reads the *same* columns
of W_Q and W_K as more, narrower heads (d_head = d_model / n_heads): head i always
owns columns i·d_head … (i+1)·d_head − 1. The token and the row/column toggle are
linked to the figure in the browser (``jslink``): they redraw without the kernel.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np

from .._checks import check_choice, check_int_in_range, check_real, check_seed
from ..core.multihead import multi_head_attention
from ..lab import data
from .base import ExplorerBase, embedding, favourite_per_head

__all__ = ["HeadGridExplorer", "N_HEADS_OPTIONS", "D_MODEL_OPTIONS"]

N_HEADS_OPTIONS = (1, 2, 4, 8, 16)
D_MODEL_OPTIONS = (16, 32, 64, 128)   # every option of n_heads divides every d_model
SEQ_LEN_MAX = 32


@lru_cache(maxsize=16)
def head_projections(d_model: int, seed: int, sharpness: float) -> tuple:
    """W_Q (times ``sharpness``), W_K, W_V (d_model, d_model) and W_O = I, read-only: fixed per d_model."""
    w_q, w_k, w_v = data.projection_weights(d_model, d_model, seed=seed)
    ws = (w_q * sharpness, w_k, w_v, np.eye(d_model))
    for w in ws:
        w.setflags(write=False)
    return ws


class HeadGridExplorer(ExplorerBase):
    """Per-head attention weights for a sentence; sliders for n_heads, d_model and seq_len (notebook 06).

    ``sharpness`` multiplies W_Q, so that untrained heads show patterns clear enough to
    compare (the scores' spread grows by that factor). ``.weights`` holds the weights
    drawn, ``(n_heads, seq_len, seq_len)``; ``.view`` is the live figure.
    """

    title = "Multi-head attention: the weights of every head"
    hint = ("hover a thumbnail to see that head large, click it to keep it; click a token (or move 'token') "
            "to follow it in every head, by its row or its column")

    def __init__(self, *, n_heads: int = 8, d_model: int = 64, seq_len: int = 12, token: int = 2,
                 seed: int = 0, sharpness: float = 3.0):
        super().__init__()
        check_choice(n_heads, "n_heads", N_HEADS_OPTIONS)
        check_choice(d_model, "d_model", D_MODEL_OPTIONS)
        seq_len = check_int_in_range(seq_len, "seq_len", 2, SEQ_LEN_MAX)
        token = check_int_in_range(token, "token", 0, seq_len - 1)
        self.seed = check_seed(seed, allow_generator=False)
        self.sharpness = check_real(sharpness, "sharpness", positive=True)
        # one line, no page jumps; more lines, never cut, where the text needs them (400 % zoom, text spacing)
        self.readout.layout = widgets.Layout(min_height="24px")
        self._control("n_heads", widgets.SelectionSlider(options=list(N_HEADS_OPTIONS), value=n_heads,
                                                         description="n_heads", continuous_update=True))
        self._control("d_model", widgets.SelectionSlider(options=list(D_MODEL_OPTIONS), value=d_model,
                                                         description="d_model", continuous_update=True))
        self._slider_seq_len(seq_len, hi=SEQ_LEN_MAX)
        self._head_view(token, seq_len)   # token and direction live in the browser, without the kernel
        c = self.controls
        self.widget = self._box(widgets.HBox([c["n_heads"], c["d_model"], c["seq_len"], c["token"]],
                                             layout=widgets.Layout(flex_flow="row wrap")),
                                c["direction"], self.view, self.readout, self.error_box)
        self.weights: np.ndarray | None = None
        self.tokens: list[str] = []
        self.update()

    def compute(self, n_heads: int, d_model: int, seq_len: int) -> np.ndarray:
        """Weights ``(n_heads, seq_len, seq_len)`` of the library's multi-head attention."""
        x = embedding(tuple(data.tokens_of_length(seq_len)), d_model, self.seed)
        _, weights = multi_head_attention(x, *head_projections(d_model, self.seed, self.sharpness), n_heads)
        return weights

    def _sync(self, values: dict) -> None:
        if "seq_len" in values:
            self.controls["token"].max = self.controls["seq_len"].value - 1

    def settings(self) -> str:
        return ", ".join(f"{n} = {self.controls[n].value}" for n in ("n_heads", "d_model", "seq_len"))

    def _redraw(self) -> None:
        h, d, L = (self.controls[n].value for n in ("n_heads", "d_model", "seq_len"))
        self.tokens = data.tokens_of_length(L)
        self.weights = self.compute(h, d, L)
        d_head = d // h
        token = min(self.controls["token"].value, L - 1)
        self.summary = (f"{h} head{'s' if h > 1 else ''} of d_head = {d_head}; "
                        f"{favourite_per_head(self.weights, self.tokens, token)}")
        self.view.draw(self.weights, self.tokens, panel_titles=[f"head {k}" for k in range(h)],
                       token=self.controls["token"].value, title=self._title(),
                       alt=f"{self.settings()}: the attention weights of {h} heads, {L} × {L} each")
        self.readout.value = (
            f"<span>d_model = {d} = {h} × {d_head}: head i reads columns i·{d_head} … i·{d_head} + "
            f"{d_head - 1} of the same W_Q, W_K, W_V; 4·d_model² = {4 * d * d:,} parameters for any "
            f"number of heads.</span>")

    def _title(self) -> str:
        h, d, L = (self.controls[n].value for n in ("n_heads", "d_model", "seq_len"))
        return f"{h} head{'s' if h > 1 else ''} of d_head = {d} / {h} = {d // h}, {L} tokens"

    def still(self):
        """The first view: thumbnails, head 0 large, the followed token's row framed in every head."""
        from ..figures.lesson06_multi_head import plot_head_view

        return plot_head_view(self.weights, self.tokens, token=self.controls["token"].value,
                              title=self._title())
