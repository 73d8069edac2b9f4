"""The explorers of notebook 07: causal masking step by step, and a mask the learner draws.

* :class:`CausalMaskExplorer`: scaled scores → scores + mask (−∞ above the diagonal)
  → weights after softmax, three live heatmaps, with a table of one query's row that
  shows exp(−∞) = 0 in numbers. Sliders ``seq_len`` and ``query`` (or click a row).
* :class:`CustomMaskExplorer`: an n × n grid of toggle buttons, one per (query, key): ✓ may
  attend, ✗ masked. The attention weights under that mask are redrawn live, and
  :func:`lessons_lib.lab.masking.causal_mask_mistake` says what the mask is (the causal mask,
  an inverted one, one without its diagonal, ...). Presets start from the gallery's masks.

All numbers come from :mod:`lessons_lib.core.attention` and :mod:`lessons_lib.core.masks`.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np

from .._checks import check_int_in_range, check_seed
from ..core import masks
from ..core.attention import attention_scores, attention_weights, project_qkv, scale_scores, softmax
from ..figures.base import plain_text
from ..figures.live import Heatmap
from ..figures.live.access import control_entry
from ..lab import data
from ..lab.masking import causal_mask_mistake
from .base import ExplorerBase, embedding, extreme_cell, largest_weight, projections, quoted

__all__ = ["CausalMaskExplorer", "CustomMaskExplorer", "mask_tokens"]

D_MODEL, D_K = 8, 4
SEQ_LEN_MAX = 16


def mask_tokens(n: int) -> list[str]:
    """"The AI Rishi is" (the lesson's ✓/✗ table), continued by the course's story past 4 tokens."""
    own = data.tokenize(data.SENTENCES["ai"])
    return own[:n] if n <= len(own) else own + data.tokens_of_length(n - len(own))


def _scaled_scores(tokens, seed: int) -> np.ndarray:
    """Q·Kᵀ/√d_k for these tokens, with the course's embeddings and projections."""
    q, k, _ = project_qkv(embedding(tuple(tokens), D_MODEL, seed), *projections(D_MODEL, D_K, seed))
    return scale_scores(attention_scores(q, k), D_K)


_PAD = "padding:1px 6px;line-height:20px"


def _fmt(v: float) -> str:
    return "−∞" if v == -np.inf else f"{v:.3f}".replace("-", "−")


class CausalMaskExplorer(ExplorerBase):
    """Scores, scores + causal mask, weights; one query's row in numbers (notebook 07).

    ``.scores``, ``.masked`` (−∞ above the diagonal) and ``.weights`` hold what is
    drawn; ``.figures`` the three live heatmaps; ``.table`` the HTML of the query's row.
    """

    title = "Causal masking: add −∞ above the diagonal, then softmax"
    hint = ("move seq_len and query (or click a row); masked cells are grey and hatched; the table "
            "follows the query's row number by number")

    def __init__(self, *, seq_len: int = 4, query: int = 2, seed: int = 0):
        super().__init__()
        self.seed = check_seed(seed, allow_generator=False)
        self._slider_seq_len(seq_len, hi=SEQ_LEN_MAX)
        self._slider_query(query, seq_len)          # a query past the last token: ValueError, not clamped
        size = dict(width=350, height=330, selectable=True)
        self.figures = {
            "scores": Heatmap(title="1 · scaled scores Q·Kᵀ/√d_k", colorbar_label="score",
                              cmap="cividis", **size),
            "masked": Heatmap(title="2 · scores + mask (−∞ above)", colorbar_label="score",
                              cmap="cividis", **size),
            "weights": Heatmap(title="3 · weights = softmax", colorbar_label="weight (rows sum to 1)",
                               cmap="viridis", percent=True, **size),
        }
        for fig in self.figures.values():
            self._follow_clicks(fig)
        # one column per key: the table's height does not depend on seq_len
        self.table = widgets.HTML(layout=widgets.Layout(height="175px", overflow="auto", max_width="100%"))
        self.table.add_class("lessons-readout")
        c = self.controls
        sliders = widgets.HBox([c["seq_len"], c["query"]], layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = self._box(sliders,
                                widgets.HBox(list(self.figures.values()),
                                             layout=widgets.Layout(flex_flow="row wrap")),
                                self.table, self.error_box)
        self.update()

    def _redraw(self) -> None:
        L, i = self.controls["seq_len"].value, self.controls["query"].value
        self.tokens = mask_tokens(L)
        self.mask = masks.causal_mask(L)
        self.scores = _scaled_scores(self.tokens, self.seed)
        self.masked = self.scores + masks.additive_mask(self.mask)
        self.weights = softmax(self.masked)
        lim = float(np.abs(self.scores).max()) or 1.0
        t, say = self.tokens, self.settings()
        hidden = int((~self.mask).sum())
        row = largest_weight(self.weights[i], t, t[i])
        later = L - 1 - i
        self.summary = (f"query {quoted(t[i])} ({i}) may see keys 0…{i}; "
                        + (f"{later} later key{'s' if later != 1 else ''} masked, weight 0; "
                           if later else "")
                        + row)
        self.figures["scores"].draw(self.scores, t, t, vmin=-lim, vmax=lim, highlight_row=i,
                                    alt=f"{say}: scaled scores, {L} × {L}; {extreme_cell(self.scores, t, t)}")
        self.figures["masked"].draw(self.masked, t, t, vmin=-lim, vmax=lim, highlight_row=i,
                                    alt=f"{say}: scores with −∞ above the diagonal, {hidden} of {L * L} "
                                        f"cells; {extreme_cell(self.masked, t, t)}")
        self.figures["weights"].draw(self.weights, t, t, vmin=0.0, vmax=1.0, mask=self.mask, highlight_row=i,
                                     alt=f"{say}: causal attention weights, {hidden} cells masked, each row "
                                         f"sums to 1; {row}")
        self.table.value = self.row_table(i)

    def readout_line(self) -> str:
        return plain_text(self.table.value)

    def row_table(self, i: int) -> str:
        """HTML table of query ``i``, one column per key: score, + mask, exp(· − max), weight."""
        row, masked, w = self.scores[i], self.masked[i], self.weights[i]
        exps = np.exp(masked - masked.max())
        hidden = ~self.mask[i]
        lines = [("key j", [str(j) for j in range(len(row))]),
                 ("token", [html.escape(t) for t in self.tokens]),
                 ("score", [_fmt(v) for v in row]),
                 ("+ mask", ["−∞" if h else "+ 0" for h in hidden]),
                 ("exp(score + mask − max)",
                  ["exp(−∞) = 0" if h else f"{e:.3f}" for h, e in zip(hidden, exps)]),
                 ("weight", [f"{v:.3f}" for v in w])]
        cell = {False: f'<td style="{_PAD}">', True: f'<td style="{_PAD};color:#555;background:#eee">'}
        body = "".join(f'<tr><th style="{_PAD};text-align:left">{name}</th>'
                       + "".join(f"{cell[bool(h)]}{v}</td>" for v, h in zip(values, hidden)) + "</tr>"
                       for name, values in lines)
        who = html.escape(self.tokens[i])
        return (f'<div style="line-height:20px"><b>Query {i}, “{who}”</b> may see keys 0…{i}. Each weight is '
                f"its exp divided by the row's sum, {exps.sum():.3f}; the weights add up to "
                f"{w.sum():.3f}.</div>"
                f'<table class="lessons-row-table" style="border-collapse:collapse;text-align:right;'
                f'font-size:12px;line-height:20px">{body}</table>')

    def still(self):
        from ..figures.lesson07_causal_masking import plot_masking_steps

        return plot_masking_steps(self.scores, self.mask, self.tokens, query=self.controls["query"].value)


# ---------------------------------------------------------------------- the mask the learner draws
def _padding_label(n: int) -> str:
    real = max(1, n - 2)                       # at n = 2, one real token and one pad
    return f"padding ({real} real token{'s' if real != 1 else ''})"


def _presets(n: int) -> dict:
    return {
        "causal": masks.causal_mask(n),
        "all allowed": np.ones((n, n), dtype=bool),
        "sliding window (3)": masks.sliding_window_mask(n, 3),
        _padding_label(n): masks.padding_mask(lengths=[max(1, n - 2)], n_keys=n)[0],
        "inverted causal (True = blocked)": ~masks.causal_mask(n),
        "none allowed": np.zeros((n, n), dtype=bool),
    }


class CustomMaskExplorer(ExplorerBase):
    """Draw a mask by toggling cells; see the attention weights it gives and what kind of mask it is.

    ``.mask`` (bool, True = may attend) is the mask drawn; ``.weights`` the weights
    under it (rows with nothing allowed are 0, not NaN); ``.verdict`` the sentence shown.
    """

    title = "Draw a mask: click a cell to allow (✓) or block (✗) it"
    hint = ("rows are queries, columns keys; the heatmap shows the weights softmax gives with your mask, "
            "the line under it what kind of mask it is; start from a preset or from scratch")

    def __init__(self, n: int = 6, *, preset: str = "causal", seed: int = 0):
        super().__init__()
        self.n = check_int_in_range(n, "n (tokens, one button per cell)", 2, 10)
        self.seed = check_seed(seed, allow_generator=False)
        self.tokens = data.tokens_of_length(self.n)
        self.scores = _scaled_scores(self.tokens, self.seed)
        self.presets = _presets(self.n)
        if preset not in self.presets:
            raise ValueError(f"preset must be one of {', '.join(self.presets)}; got {preset!r}.")
        self.cells = [[widgets.ToggleButton(value=bool(self.presets[preset][i, j]),
                                            tooltip=f"query “{self.tokens[i]}” ({i}) → "
                                                    f"key “{self.tokens[j]}” ({j})",
                                            layout=widgets.Layout(width="40px", height="32px"))
                       for j in range(self.n)] for i in range(self.n)]
        self._where = {}
        for i, row in enumerate(self.cells):
            for j, cell in enumerate(row):
                cell.add_class("lessons-toggle-cell")
                cell.add_class(f"lessons-cell-{i}-{j}")
                self._where[cell.model_id] = (i, j)
                self._access_entries.append(control_entry(
                    f"lessons-cell-{i}-{j}",
                    f"query {quoted(self.tokens[i])} ({i}) may attend to key {quoted(self.tokens[j])} ({j})"))
                cell.observe(self._toggled, names="value")
        self._news = ""   # what the learner just did: a cell toggled, a preset loaded
        buttons = []
        for name in self.presets:
            button = widgets.Button(description=name, layout=widgets.Layout(width="auto"))
            button.add_class("lessons-mask-preset")
            button.on_click(lambda _, name=name: self._preset_clicked(name))
            buttons.append(button)
        header = [widgets.HTML("<b>query ↓ key →</b>")] + [
            widgets.HTML(f'<div style="text-align:center;font-size:12px">{html.escape(t)}</div>')
            for t in self.tokens]
        grid_items = list(header)
        for i, row in enumerate(self.cells):
            grid_items.append(widgets.HTML(f'<div style="text-align:right;padding-right:4px">'
                                           f"{html.escape(self.tokens[i])} ({i})</div>"))
            grid_items.extend(row)
        # a two-dimensional table of cells: in a narrow column (400 % zoom) it scrolls sideways in its own box
        grid = widgets.GridBox(grid_items, layout=widgets.Layout(
            grid_template_columns=f"110px repeat({self.n}, 44px)", grid_gap="2px", align_items="center",
            max_width="100%", overflow="auto"))
        grid.add_class("lessons-mask-grid")
        grid.add_class("lessons-two-d")
        self.heatmap = Heatmap(title="Weights with your mask", colorbar_label="weight (rows sum to 1 or 0)",
                               cmap="viridis", percent=True, width=420, height=400)
        self.heatmap.add_class("lessons-heatmap")
        self.verdict_box = widgets.HTML(layout=widgets.Layout(height="66px", overflow="auto"))
        self.verdict_box.add_class("lessons-readout")
        self.widget = self._box(widgets.HBox(buttons, layout=widgets.Layout(flex_flow="row wrap")),
                                widgets.HBox([grid, self.heatmap],
                                             layout=widgets.Layout(align_items="center",
                                                                   flex_flow="row wrap")),
                                self.verdict_box, self.error_box)
        self.update()

    @property
    def mask(self) -> np.ndarray:
        return np.array([[cell.value for cell in row] for row in self.cells], dtype=bool)

    def load(self, preset: str) -> None:
        """Set every cell from one of ``.presets`` (one redraw)."""
        if preset not in self.presets:
            raise ValueError(f"preset must be one of {', '.join(self.presets)}; got {preset!r}.")
        self.set_mask(self.presets[preset])

    def set_mask(self, mask) -> None:
        """Set every cell from a bool ``(n, n)`` array, True = may attend (one redraw)."""
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != (self.n, self.n):
            raise ValueError(f"mask must be a boolean ({self.n}, {self.n}) array (True = may attend); "
                             f"got dtype {m.dtype}, shape {m.shape}.")
        self._quiet = True
        try:
            for i, row in enumerate(self.cells):
                for j, cell in enumerate(row):
                    cell.value = bool(m[i, j])
        finally:
            self._quiet = False
        self.update()

    def _preset_clicked(self, name: str) -> None:
        self._news = f"preset {name} loaded"
        self.load(name)

    def _toggled(self, change) -> None:
        change["owner"].description = "✓" if change["new"] else "✗"
        if not self._quiet:
            i, j = self._where[change["owner"].model_id]
            self._news = (f"query {quoted(self.tokens[i])} ({i}) → key {quoted(self.tokens[j])} ({j}) now "
                          f"{'allowed' if change['new'] else 'blocked'}")
            self.update()

    def announcement(self) -> str:
        news, self._news = self._news, ""
        return f"{news}: {self.summary}" if news else self.summary

    def _redraw(self) -> None:
        for row in self.cells:
            for cell in row:
                cell.description = "✓" if cell.value else "✗"
        m = self.mask
        self.weights = attention_weights(self.scores, scale=1.0, mask=m)
        self.verdict = self.describe(m)
        self.summary = f"{int(m.sum())} of {m.size} cells allowed. {self.verdict}"
        self.heatmap.draw(self.weights, self.tokens, self.tokens, vmin=0.0, vmax=1.0, mask=m,
                          alt=f"weights with the mask drawn ({int(m.sum())} of {m.size} cells allowed): "
                              + (extreme_cell(np.where(m, self.weights, -np.inf), self.tokens, self.tokens)
                                 + "; " if m.any() else "")
                              + self.verdict)
        self.verdict_box.value = f"<div>{html.escape(self.verdict)}</div>"

    @staticmethod
    def describe(m: np.ndarray) -> str:
        """What the mask is, in words, and what happens to rows with nothing to attend to."""
        mistake = causal_mask_mistake(m)
        parts = ["This is the causal mask: every token sees itself and the tokens before it."
                 if mistake is None else f"Compared with the causal mask: {mistake}"]
        empty = np.flatnonzero(~m.any(axis=1))
        if empty.size:
            parts.append(f"Row(s) {', '.join(map(str, empty))} may attend to nothing: this library gives "
                         f"them weights 0 and output 0 (no NaN), as torch SDPA does; nn.MultiheadAttention "
                         f"gives NaN.")
        return " ".join(parts)

    def settings(self) -> str:
        m = self.mask
        return f"{len(self.tokens)} tokens, {int(m.sum())} of {m.size} cells allowed"

    def readout_line(self) -> str:
        return self.verdict

    def still(self):
        """The first view: the ✓/✗ grid of the mask beside the weights it gives."""
        from ..figures.attention_maps import plot_weights
        from ..figures.base import panel_figure
        from ..figures.lesson07_causal_masking import plot_mask

        fig, (ax_mask, ax_weights) = panel_figure(1, 2, width=13, height=5.6)
        plot_mask(self.mask, self.tokens, ax=ax_mask, title="The mask you drew (click a cell to change it)")
        plot_weights(self.weights, self.tokens, mask=self.mask, ax=ax_weights,
                     title="Weights with the mask drawn")
        return fig
