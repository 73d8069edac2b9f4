"""The explorers of notebook 11: shuffled tokens, the paper's sinusoids, and rotary embeddings with ALiBi.

* :class:`ShuffleExplorer`: one attention head over a sentence as written and shuffled (a *Shuffle* button,
  a button back to the written order, the kind of positions): four live heatmaps, the weights and the
  outputs of both orders. With no positions each row and column moves with its token and keeps its
  numbers; with sinusoids or RoPE they change.
* :class:`SinusoidExplorer`: the encodings PE (position × dimension) with the row of one position framed,
  and that row's dot product with every other row, which depends on the distance only. Sliders
  ``position`` and ``d_model``.
* :class:`RopeExplorer`: a query at m and a key at n, turned pair by pair (live dials), their score
  against the offset m − n in both layouts, and ALiBi's bias for the query at m, head by head. Sliders
  ``m``, ``n``, ``offset`` (moves m, keeping n), ``d_head``, ``base``, and the layout of the pairs.

All numbers come from :mod:`lessons_lib.core.position` and :mod:`lessons_lib.lab.position`.
"""

from __future__ import annotations

import html

import ipywidgets as ipw
import numpy as np

from .._checks import check_choice, check_int_in_range, check_seed, is_real_number
from ..core import position
from ..figures import style
from ..figures.lesson11_position import slope_text
from ..figures.live import Heatmap, LinePlot, RotationDials
from ..figures.live.access import control_entry
from ..lab import data
from ..lab import position as lab
from ..lab.measurements import difference_claim
from .base import ExplorerBase, extreme_cell, largest_weight, quoted

__all__ = ["ShuffleExplorer", "SinusoidExplorer", "RopeExplorer", "SHUFFLE_SENTENCES"]

#: The sentences the shuffle explorer offers: the lesson's pair of meanings, then lesson 02's sentence.
SHUFFLE_SENTENCES = ("dog bites man", "The cat sat on the mat.")
_KINDS = [("no positions", "none"), ("sinusoids added", "sinusoidal"), ("RoPE", "rope")]
_LAYOUTS = [("half: (i, i + d/2)", "half"), ("interleaved: (2i, 2i + 1)", "interleaved")]


# ---------------------------------------------------------------------- shuffling
class ShuffleExplorer(ExplorerBase):
    """Weights and outputs of a sentence as written and shuffled (notebook 11).

    ``.result`` is the :class:`~lessons_lib.lab.position.ShuffleResult` drawn; ``.shuffle()`` draws a new
    order, ``.restore()`` goes back to the written one (what the two buttons do).
    """

    title = "Shuffle the tokens: what does attention notice?"
    hint = ("press Shuffle (or pick the other sentence), then compare a token's row on the left and on the "
            "right; switch to sinusoids or RoPE and shuffle again")

    def __init__(self, sentence: str = SHUFFLE_SENTENCES[0], *, positions: str = "none", order=None,
                 seed: int = 0):
        super().__init__()
        self.seed = check_seed(seed, allow_generator=False)
        check_choice(sentence, "sentence", SHUFFLE_SENTENCES)
        check_choice(positions, "positions", [v for _, v in _KINDS])
        self._control("sentence", ipw.Dropdown(options=list(SHUFFLE_SENTENCES), value=sentence,
                                                description="sentence"),
                      label="sentence: the tokens to shuffle")
        self._control("positions", ipw.ToggleButtons(options=_KINDS, value=positions,
                                                      style={"button_width": "auto"}),
                      label="positions: what tells attention where each token stands")
        self._shuffles = 1                 # the first shuffle, unless an order is given
        self._order = None if order is None else list(order)
        self._news = ""
        buttons = []
        for name, text, action in (("shuffle", "Shuffle", self.shuffle),
                                   ("restore", "Back to the written order", self.restore)):
            button = ipw.Button(description=text, layout=ipw.Layout(width="auto"))
            button.add_class(f"lessons-button-{name}")
            button.on_click(lambda _, action=action: action())
            self._access_entries.append(control_entry(f"lessons-button-{name}", text))
            buttons.append(button)
        size = dict(width=275, height=310)
        self._figure("weights", Heatmap(colorbar_label="weight", cmap=style.CMAP_WEIGHTS, percent=True,
                                        **size))
        self._figure("weights_shuffled", Heatmap(colorbar_label="weight", cmap=style.CMAP_WEIGHTS,
                                                 percent=True, **size))
        for name in ("outputs", "outputs_shuffled"):
            self._figure(name, Heatmap(colorbar_label="output value", cmap=style.CMAP_VALUES,
                                       xlabel="feature", ylabel="token", col_name="feature", row_name="token",
                                       decimals=1, **size))
        self.readout.layout = ipw.Layout(min_height="44px")
        controls = ipw.HBox([self.controls["sentence"], self.controls["positions"], *buttons],
                            layout=ipw.Layout(flex_flow="row wrap", align_items="center"))
        self.widget = self._box(controls, self.error_box,
                                self._row(["weights", "weights_shuffled", "outputs", "outputs_shuffled"]),
                                self.readout)
        if self._order is not None:
            lab.shuffle_experiment(data.tokenize(sentence), self._order)   # a bad order: refused here
        self.update()

    # -- the buttons
    def shuffle(self) -> None:
        """A new order of the tokens (the n-th shuffle of this sentence, from the explorer's seed)."""
        self._shuffles += 1
        self._order = None
        self._news = "shuffled"
        self.update()

    def restore(self) -> None:
        """Back to the order as written."""
        self._shuffles = 0
        self._order = None
        self._news = "back to the written order"
        self.update()

    def _current_order(self, n: int) -> np.ndarray:
        """The order shown on the right: the one given, the written one (after *Back*), or shuffle number
        ``_shuffles`` of this sentence (never the written order itself)."""
        if self._order is not None and len(self._order) == n:
            return np.asarray(self._order)
        if self._shuffles == 0:
            return np.arange(n)
        rng = np.random.default_rng([self.seed, n, self._shuffles])
        order = rng.permutation(n)
        while n > 1 and np.array_equal(order, np.arange(n)):
            order = rng.permutation(n)
        return order

    def _changed(self, name: str, value) -> None:
        if name == "sentence":
            self._shuffles, self._order = 1, None
        super()._changed(name, value)

    def announcement(self) -> str:
        news, self._news = self._news, ""
        if news:
            return f"{news}: {self.summary}"
        return super().announcement()

    def settings(self) -> str:
        kind = dict((v, k) for k, v in _KINDS)[self.controls["positions"].value]
        return f"{kind}, shuffled: “{' '.join(self.result.shuffled)}”" if hasattr(self, "result") else kind

    def _redraw(self) -> None:
        tokens = data.tokenize(self.controls["sentence"].value)
        kind = self.controls["positions"].value
        self.result = r = lab.shuffle_experiment(tokens, self._current_order(len(tokens)), positions=kind,
                                                 seed=self.seed)
        say = self.settings()
        written, shuffled = " ".join(r.tokens), " ".join(r.shuffled)
        lim = float(np.abs([r.outputs, r.shuffled_outputs]).max())
        features = [str(j) for j in range(r.outputs.shape[1])]
        first = r.shuffled[0]
        t, u = r.tokens, r.shuffled
        panels = (("weights", r.weights, t, t, "weights, as written", written,
                   largest_weight(r.weights[r.order[0]], t, first)),
                  ("weights_shuffled", r.shuffled_weights, u, u, "weights, shuffled", shuffled,
                   largest_weight(r.shuffled_weights[0], u, first)),
                  ("outputs", r.outputs, t, features, "outputs, as written", written,
                   extreme_cell(r.outputs, t, features)),
                  ("outputs_shuffled", r.shuffled_outputs, u, features, "outputs, shuffled", shuffled,
                   extreme_cell(r.shuffled_outputs, u, features)))
        for name, matrix, rows, cols, what, words, finding in panels:
            low, high = (0.0, 1.0) if name.startswith("weights") else (-lim, lim)
            self.figures[name].draw(matrix, rows, cols, vmin=low, vmax=high, title=f"{what}\n“{words}”",
                                    alt=f"{what}; {say}: {finding}")
        claim = difference_claim(r.shuffled_outputs, r.moved_outputs, below=1e-12)
        if r.follows:
            self.summary = (f"every token keeps its row of weights and its output, only in the new order "
                            f"({claim})")
        else:
            self.summary = (f"the tokens' outputs changed with their places (a token's output row differs by "
                            f"up to {r.difference:.2g} between the two orders)")
        self.readout.value = (f"<b>{html.escape(quoted(first))}</b> comes first now. Its output row as "
                              f"written: {_row(r.outputs[r.order[0]])}; shuffled: "
                              f"{_row(r.shuffled_outputs[0])}. "
                              f"{html.escape(self.summary[0].upper() + self.summary[1:])}.")

    def still(self):
        from ..figures.lesson11_position import plot_shuffle

        return plot_shuffle(self.result)


def _num(value: float, digits: int = 3) -> str:
    """A number as the course prints it, with a true minus sign: ``−0.734``."""
    return f"{value:.{digits}f}".replace("-", "−")


def _row(values) -> str:
    return "(" + ", ".join(_num(v, 2) for v in values) + ")"


# ---------------------------------------------------------------------- sinusoids
D_MODEL_OPTIONS = (8, 16, 32, 64, 128)
SINUSOID_POSITIONS = 64


class SinusoidExplorer(ExplorerBase):
    """The paper's positional encodings (§3.5) and how two of them meet (notebook 11).

    ``.pe`` is the ``(64, d_model)`` matrix drawn; ``.similarity`` the dot products PE(position)·PE(j).
    """

    title = "Sinusoidal positions: one clock per pair of dimensions"
    hint = "move position (the framed row) and watch the curve on the right; change d_model"

    def __init__(self, *, position: int = 10, d_model: int = 32):
        super().__init__()
        check_int_in_range(position, "position", 0, SINUSOID_POSITIONS - 1)
        check_choice(d_model, "d_model", D_MODEL_OPTIONS)
        self._control("position", ipw.IntSlider(value=position, min=0, max=SINUSOID_POSITIONS - 1,
                                                description="position", continuous_update=True),
                      label="position: the row framed and compared")
        self._control("d_model", ipw.SelectionSlider(options=list(D_MODEL_OPTIONS), value=d_model,
                                                     description="d_model", continuous_update=True))
        self._figure("pe", Heatmap(colorbar_label="PE value (sin or cos)", cmap=style.CMAP_VALUES,
                                   xlabel="dimension (even: sin, odd: cos)", ylabel="position",
                                   row_name="position", col_name="dimension", width=560, height=400,
                                   annotate_max=0))
        self._figure("similarity", LinePlot(xlabel="position j", ylabel="PE(position)·PE(j)", width=500,
                                            height=400))
        self.readout.layout = ipw.Layout(min_height="44px")
        self.widget = self._layout([["pe", "similarity"]])
        self.update()

    def _redraw(self) -> None:
        pos, d = self.controls["position"].value, self.controls["d_model"].value
        self.pe = position.sinusoidal_positions(SINUSOID_POSITIONS, d)
        self.similarity = sims = self.pe @ self.pe[pos]
        say = self.settings()
        rows = [str(p) for p in range(SINUSOID_POSITIONS)]
        self.figures["pe"].draw(self.pe, rows, [str(j) for j in range(d)], vmin=-1.0, vmax=1.0,
                                highlight_row=pos,
                                title=f"PE: {SINUSOID_POSITIONS} positions × d_model = {d}, row {pos} framed",
                                alt=f"sinusoidal positions; {say}: row {pos} framed, fast stripes in the "
                                    f"first dimensions, slow ones in the last")
        j = np.arange(SINUSOID_POSITIONS)
        self.figures["similarity"].set_series([
            {"label": "", "x": j.tolist(), "y": sims.tolist(), "mode": "line", "color": style.QUERY_MARK},
            {"label": f"PE({pos})·PE(j)", "x": j.tolist(), "y": sims.tolist(), "mode": "markers",
             "marker": "o", "color": style.QUERY_MARK}])
        far = int(np.argmin(sims))
        self.summary = (f"PE({pos}) meets itself with {_num(sims[pos], 1)} = d_model/2, its neighbours with "
                        f"{_neighbours(sims, pos)}, and position {far} least, {_num(sims[far], 2)}")
        self.figures["similarity"].mark(pos, float(sims[pos]), title=f"dot product with position {pos}",
                                        alt=f"dot products with position {pos}; {say}: {self.summary}")
        partner = pos + 5 if pos + 5 < SINUSOID_POSITIONS else pos - 5
        here, there = sims[partner], self.pe[0] @ self.pe[5]
        claim = difference_claim(np.array([here]), np.array([there]), below=1e-12)
        self.readout.value = html.escape(
            f"{self.summary}. Five positions apart, wherever: PE({pos})·PE({partner}) = {_num(here)}, "
            f"PE(0)·PE(5) = {_num(there)} ({claim}).")

    def still(self):
        from ..figures.lesson11_position import plot_sinusoids

        return plot_sinusoids(SINUSOID_POSITIONS, self.controls["d_model"].value,
                              self.controls["position"].value)


def _neighbours(sims, pos: int) -> str:
    near = [_num(sims[p], 1) for p in (pos - 1, pos + 1) if 0 <= p < len(sims)]
    return " and ".join(near)


# ---------------------------------------------------------------------- RoPE and ALiBi
D_HEAD_OPTIONS = (2, 4, 8, 16, 32, 64)
MAX_POSITION = 31
ALIBI_HEADS = 4
SHIFT = 100   # the readout compares (m, n) with (m + SHIFT, n + SHIFT): the same offset


class RopeExplorer(ExplorerBase):
    """A query at m and a key at n, turned by RoPE pair by pair; their score against the offset in both
    layouts; ALiBi's bias for the query at m (notebook 11).

    ``.q``, ``.k`` are the query and key (:func:`~lessons_lib.lab.position.rope_vectors`), ``.view`` the
    :class:`~lessons_lib.lab.position.RotationView` drawn.
    """

    title = "Rotary embeddings: turn the query and the key by their positions"
    hint = "move m, n or the offset (it moves m): the dials turn; d_head and base change the pairs"

    def __init__(self, *, m: int = 7, n: int = 3, d_head: int = 16, base: float = 10000.0,
                 convention: str = "half", seed: int = 0):
        super().__init__()
        self.seed = check_seed(seed, allow_generator=False)
        for value, name in ((m, "m"), (n, "n")):
            check_int_in_range(value, name, 0, MAX_POSITION)
        check_choice(d_head, "d_head", D_HEAD_OPTIONS)
        if not is_real_number(base) or not 10 <= base <= 1e6:
            raise ValueError(f"base must be a number from 10 to 1000000 (the slider's range); got {base!r}.")
        check_choice(convention, "convention", [v for _, v in _LAYOUTS])
        slider = dict(continuous_update=True)
        self._control("m", ipw.IntSlider(value=m, min=0, max=MAX_POSITION, description="m", **slider),
                      label="m: the query's position")
        self._control("n", ipw.IntSlider(value=n, min=0, max=MAX_POSITION, description="n", **slider),
                      label="n: the key's position")
        self._control("offset", ipw.IntSlider(value=m - n, min=-MAX_POSITION, max=MAX_POSITION,
                                              description="offset", **slider),
                      label="offset: m − n, moves the query")
        self._control("d_head", ipw.SelectionSlider(options=list(D_HEAD_OPTIONS), value=d_head,
                                                    description="d_head", **slider),
                      label="d_head: size of the query and the key")
        self._control("base", ipw.FloatLogSlider(value=float(base), base=10, min=1, max=6, step=0.25,
                                                 readout_format=".0f", description="base", **slider),
                      label="base: how fast the frequencies fall")
        self._control("convention", ipw.ToggleButtons(options=_LAYOUTS, value=convention,
                                                       style={"button_width": "auto"}),
                      label="convention: which dimensions turn together")
        self._figure("dials", RotationDials(width=560, height=295))
        self._figure("scores", LinePlot(xlabel="offset m − n", ylabel="score", width=500, height=295))
        self._figure("alibi", Heatmap(colorbar_label="bias", cmap=style.CMAP_VALUES, xlabel="key position j",
                                      ylabel="head's slope", row_name="head", col_name="key",
                                      width=1070, height=140, annotate_max=0))
        self.readout.layout = ipw.Layout(min_height="44px")
        self.widget = self._layout([["dials", "scores"], ["alibi"]])
        self.update()

    # -- the offset moves m (keeping n); m and n move the offset
    def _sync(self, values: dict) -> None:
        c = self.controls
        if getattr(self, "_syncing", False):   # a control moved here: its own change needs no second sync
            return
        quiet, self._quiet, self._syncing = self._quiet, True, True
        try:
            if "offset" in values:
                target = c["n"].value + c["offset"].value
                if 0 <= target <= MAX_POSITION:
                    c["m"].value = target
                else:
                    c["m"].value = min(max(target, 0), MAX_POSITION)
                    c["n"].value = c["m"].value - c["offset"].value
            elif "m" in values or "n" in values:
                c["offset"].value = c["m"].value - c["n"].value
        finally:
            self._quiet, self._syncing = quiet, False

    def _redraw(self) -> None:
        c = self.controls
        m, n, d_head = c["m"].value, c["n"].value, c["d_head"].value
        base, convention = float(c["base"].value), c["convention"].value
        other = "interleaved" if convention == "half" else "half"
        self.q, self.k = lab.rope_vectors(d_head, self.seed)
        self.view = v = lab.rotation_view(self.q, self.k, m, n, base=base, convention=convention)
        shifted = lab.rotation_view(self.q, self.k, m + SHIFT, n + SHIFT, base=base, convention=convention)
        swapped = lab.rotation_view(self.q, self.k, m, n, base=base, convention=other).score
        claim = difference_claim(np.array([v.score]), np.array([shifted.score]), below=1e-12)
        say = self.settings()
        top = int(np.argmax(np.abs(v.parts)))
        self.figures["dials"].draw(v.q, v.k, v.theta, v.parts, v.dims, m=m, n=n,
                                   title=f"{len(v.theta)} pairs, turned: score {_num(v.score)}",
                                   alt=f"rotating pairs; {say}: the score is {_num(v.score)}, pair {top} "
                                       f"adds the most, {_num(v.parts[top], 2)}")
        offsets = np.arange(-MAX_POSITION, MAX_POSITION + 1)
        here = lab.offset_scores(self.q, self.k, offsets, base=base, convention=convention)
        there = lab.offset_scores(self.q, self.k, offsets, base=base, convention=other)
        x = offsets.tolist()
        self.figures["scores"].set_series([
            {"label": f"“{convention}” pairs", "x": x, "y": here.tolist(), "mode": "line",
             "color": style.QUERY_MARK},
            {"label": f"“{other}” pairs", "x": x, "y": there.tolist(), "mode": "line",
             "color": style.KEY_MARK, "dash": True}])
        self.summary = (f"offset {_num(m - n, 0)}: score {_num(v.score)}; the same offset at "
                        f"m = {m + SHIFT}, n = {n + SHIFT} scores {_num(shifted.score)} ({claim}); the other "
                        f"layout gives {_num(swapped)}")
        self.figures["scores"].mark(m - n, v.score, title="score against the offset m − n",
                                    alt=f"score against the offset; {say}: {self.summary}")
        bias = position.alibi_bias(ALIBI_HEADS, MAX_POSITION + 1)[:, m, :]
        slopes = [slope_text(s) for s in position.alibi_slopes(ALIBI_HEADS)]
        at_n = ", ".join(_num(b, 2) for b in bias[:, n])
        self.figures["alibi"].draw(bias, slopes, [str(j) for j in range(MAX_POSITION + 1)],
                                   title=f"ALiBi instead: the bias each head adds to query {m}'s scores",
                                   alt=f"ALiBi's bias of query {m}; {say}: 0 at key {m}, falling with the "
                                       f"distance; at key {n}: {at_n} in heads of slope {', '.join(slopes)}")
        self.readout.value = html.escape(
            f"Query at m = {m}, key at n = {n}: score {_num(v.score)}; the same offset at m = {m + SHIFT}, "
            f"n = {n + SHIFT}: {_num(shifted.score)} ({claim}). The same query and key in the other layout: "
            f"{_num(swapped)}. ALiBi adds {at_n} instead (heads of slope {', '.join(slopes)}).")

    def still(self):
        from ..figures.lesson11_position import plot_rope_view

        return plot_rope_view(self.view, self.q, self.k, n_heads=ALIBI_HEADS, n_keys=MAX_POSITION + 1,
                              span=MAX_POSITION)

