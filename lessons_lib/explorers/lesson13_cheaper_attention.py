"""The explorer of notebook 13: what a state of fixed size can hold.

* :class:`StateRecallExplorer`: random key–value pairs written straight into a d × d state by one rule
  (linear attention adds them, a decaying state fades the old ones, the delta rule overwrites what a key held)
  and read back, with no training. Sliders ``n_pairs``, ``d_state`` and ``decay``, and the rule drawn: the
  state as a heatmap, and the share of pairs every rule reads back against the number written, the setting
  marked, beside softmax attention's cache, which keeps every pair.

All numbers come from :func:`lessons_lib.lab.recall.written_state` and
:func:`lessons_lib.lab.recall.recall_curve` (milliseconds per move).
"""

from __future__ import annotations

import html

import ipywidgets as ipw
import numpy as np

from .._checks import check_choice, check_int_in_range, check_real, check_seed
from ..figures import style
from ..figures.lesson13_cheaper_attention import RULE_STYLES
from ..figures.live import Heatmap, LinePlot
from ..lab import recall as lab
from .base import ExplorerBase

__all__ = ["StateRecallExplorer", "STATE_SIZES", "PAIR_COUNTS"]

#: The state sizes the ``d_state`` slider offers, and the numbers of pairs the recall curve is drawn at.
STATE_SIZES = (4, 8, 16, 32)
PAIR_COUNTS = (1, 2, 4, 8, 16, 32, 64)
_RULES = [("linear: add", "linear"), ("decay: fade, then add", "decay"), ("delta: overwrite", "delta")]


class StateRecallExplorer(ExplorerBase):
    """Pairs written into a d × d state by one rule and read back (notebook 13). ``.curve`` is the
    :func:`~lessons_lib.lab.recall.recall_curve` drawn, ``.state`` the state shown."""

    title = "A memory of fixed size: how many pairs can a state hold?"
    hint = ("move 'n_pairs' past 'd_state' and watch the share read back fall; change the decay and the rule "
            "and compare adding, fading and overwriting")

    def __init__(self, *, n_pairs: int = 8, d_state: int = 16, decay: float = 1.0, rule: str = "delta",
                 seed: int = 0):
        super().__init__()
        check_int_in_range(n_pairs, "n_pairs", 1, PAIR_COUNTS[-1])
        check_choice(d_state, "d_state", STATE_SIZES)
        decay = check_real(decay, "decay")
        if not 0.5 <= decay <= 1.0:
            raise ValueError(f"decay must lie in [0.5, 1] (the share of the state kept at each step); got "
                             f"{decay}.")
        check_choice(rule, "rule", [value for _, value in _RULES])
        self.seed = check_seed(seed, allow_generator=False)
        self._curves: dict = {}
        self._control("n_pairs", ipw.IntSlider(value=n_pairs, min=1, max=PAIR_COUNTS[-1],
                                               description="n_pairs", continuous_update=True),
                      label="n_pairs: the key–value pairs written")
        self._control("d_state", ipw.SelectionSlider(options=list(STATE_SIZES), value=d_state,
                                                     description="d_state", continuous_update=True),
                      label="d_state: the state is d_state × d_state")
        self._control("decay", ipw.FloatSlider(value=decay, min=0.5, max=1.0, step=0.05, description="decay",
                                               readout_format=".2f", continuous_update=True),
                      label="decay: the share of the state kept at each step")
        self._control("rule", ipw.ToggleButtons(options=_RULES, value=rule, style={"button_width": "auto"}),
                      label="rule: the state drawn")
        self._figure("state", Heatmap(colorbar_label="state entry", cmap=style.CMAP_VALUES,
                                      xlabel="value feature", ylabel="key feature", row_name="key feature",
                                      col_name="value feature", width=370, height=370, annotate_max=0))
        self._figure("recall", LinePlot(xlabel="pairs written", ylabel="% read back right", log_x=True,
                                        width=450, height=370, xticks=list(PAIR_COUNTS)))
        self.readout.layout = ipw.Layout(min_height="44px")
        self.widget = self._layout([["state", "recall"]])
        self.update()

    def _redraw(self) -> None:
        c = self.controls
        n, d, a, rule = c["n_pairs"].value, c["d_state"].value, float(c["decay"].value), c["rule"].value
        _, _, state = lab.written_state(n, d, rule=rule, decay=a, seed=self.seed)
        self.state = state[0]
        if (d, a) not in self._curves:      # moving n_pairs, the commonest move, redraws no curve
            self._curves[(d, a)] = lab.recall_curve(PAIR_COUNTS, d, decay=a, seed=self.seed)
        self.curve = curve = self._curves[(d, a)]
        here = {name: lab.state_recall(n, d, rule=name, decay=a, seed=self.seed) for name in curve}
        say = self.settings()
        labels = [str(i) for i in range(d)]
        bound = max(float(np.abs(self.state).max()), 1e-12)
        largest = np.unravel_index(np.argmax(np.abs(self.state)), self.state.shape)
        self.figures["state"].draw(self.state, labels, labels, vmin=-bound, vmax=bound,
                                   title=f"the {rule} state after {n} pair{'s' if n != 1 else ''}",
                                   alt=f"the {d} × {d} state written by the {rule} rule; {say}: its "
                                       f"largest entry, {self.state[largest]:.2f}, at key feature "
                                       f"{largest[0]}, value feature {largest[1]}")
        series = []
        for name, recalls in curve.items():
            colour, line, marker = RULE_STYLES[name]
            series.append({"label": name, "x": list(PAIR_COUNTS), "y": [100 * r for r in recalls],
                           "mode": "line", "color": colour, "dash": line != "-"})
        self.figures["recall"].set_series(series)
        read = ", ".join(f"{name} {100 * r:.0f}%" for name, r in here.items())
        self.summary = (f"{n} pairs in a {d} × {d} state with decay {a:.2f}: read back right: {read}")
        self.figures["recall"].mark(n, 100 * here[rule], title="pairs read back against pairs written",
                                    alt=f"the share of pairs each rule reads back; {say}: {read}")
        more = ("more pairs than the state has dimensions: their keys must overlap, and a state of fixed "
                "size confuses some" if n > d else "no more pairs than dimensions: keys at right angles can "
                "all be told apart")
        self.readout.value = html.escape(f"{self.summary[0].upper()}{self.summary[1:]}. {more[0].upper()}"
                                         f"{more[1:]}; softmax attention's cache keeps every pair "
                                         f"({2 * n * d} numbers against the state's {d * d}).")

    def still(self):
        from ..figures.lesson13_cheaper_attention import plot_written_state

        c = self.controls
        return plot_written_state(c["n_pairs"].value, c["d_state"].value, rule=c["rule"].value,
                                  decay=float(c["decay"].value), seed=self.seed, pair_counts=PAIR_COUNTS)
