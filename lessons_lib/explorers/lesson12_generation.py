"""The explorers of notebook 12: generation with a KV cache, its memory, shared key/value heads, windows.

* :class:`KVCacheExplorer`: the course's sentence generated one token at a time through one head. Slider
  ``step`` (the token being generated, or click a row of the weights) and a toggle (with the cache, or
  recomputing everything): the weights so far with the new row framed, the K and V caches growing side by
  side, and the dot products each way.
* :class:`MemoryExplorer`: the KV-cache calculator. A preset (GPT-2 small, Llama-3-8B, Mistral-7B,
  Falcon-7B) and sliders for layers, query heads, key/value heads, d_head, context, batch, and the dtype: the
  cache against the context beside the model's weights, and the formula with the numbers.
* :class:`GroupedQueryExplorer`: lesson 06's head grid with the key/value heads pooled into fewer groups.
  Slider ``n_kv_heads`` (8, 4, 2, 1): which query heads share a key/value head, the cache per token, how far
  the outputs move.
* :class:`WindowExplorer`: a head with an attention sink under a sliding window with sinks. Sliders
  ``window``, ``sinks``, ``query`` (or click a row of the weights): the weights, the rolling cache's slots
  step by step, the distance of each output from full attention.

All numbers come from :mod:`lessons_lib.core.decoding`, :mod:`lessons_lib.lab.generation` and
:mod:`lessons_lib.lab.kv_memory`.
"""

from __future__ import annotations

import html

import ipywidgets as ipw
import numpy as np

from .._checks import VALUE_BYTES, check_choice, check_int_in_range, check_seed
from ..core.decoding import kv_head_of, sink_window_mask
from ..figures import style
from ..figures.lesson12_generation import CACHED_COLOUR, RECOMPUTED_COLOUR
from ..figures.live import Heatmap, HeatmapGrid, LinePlot
from ..lab import data
from ..lab import generation as lab
from ..lab.kv_memory import PRESETS, kv_cache_bytes, kv_cache_memory
from ..lab.measurements import difference_claim
from .base import ExplorerBase, embedding, favourite_per_head, largest_weight, quoted
from .lesson06_multi_head import head_projections

__all__ = ["KVCacheExplorer", "MemoryExplorer", "GroupedQueryExplorer", "WindowExplorer", "CONTEXTS",
           "KV_HEAD_OPTIONS"]

_MODES = [("with the KV cache", "cache"), ("recomputing everything", "recompute")]


# ---------------------------------------------------------------------- the cache, step by step
class KVCacheExplorer(ExplorerBase):
    """One head generating the course's sentence token by token (notebook 12).

    ``.trace`` is the :class:`~lessons_lib.lab.generation.GenerationTrace` drawn (lesson 02's word vectors and
    projections); the weights, keys and values are the same either way: only the work differs.
    """

    title = "Generation step by step: the KV cache fills"
    hint = ("move 'step' (or click a row of the weights) to generate the next token; switch between the "
            "cache and recomputing everything and compare the numbers and the work")

    def __init__(self, *, step: int = 5, mode: str = "cache", seed: int = 0):
        super().__init__()
        self.seed = check_seed(seed, allow_generator=False)
        self.trace = lab.trace_generation(seed=self.seed)
        n = self.trace.n
        check_int_in_range(step, "step", 0, n - 1)
        check_choice(mode, "mode", [v for _, v in _MODES])
        self._control("step", ipw.IntSlider(value=step, min=0, max=n - 1, description="step",
                                            continuous_update=True),
                      label="step: the position of the token being generated")
        self._control("mode", ipw.ToggleButtons(options=_MODES, value=mode, style={"button_width": "auto"}),
                      label="mode: each step with the KV cache, or recomputing everything")
        self._figure("weights", Heatmap(colorbar_label="attention weight", cmap=style.CMAP_WEIGHTS,
                                        percent=True, selectable=True, width=430, height=450,
                                        hidden_text="not computed yet, or a future key"))
        self.figures["weights"].on_select(lambda row: self.set(step=row) if 0 <= row < n else None)
        self._figure("cache", HeatmapGrid(colorbar_label="K or V value", cmap=style.CMAP_VALUES, columns=2,
                                          xlabel="feature", ylabel="token", row_name="token",
                                          col_name="feature", hidden_text="not computed yet", width=380,
                                          height=450))
        self._figure("work", LinePlot(xlabel="generation step", ylabel="dot products this step", width=290,
                                      height=380))
        self.figures["work"].set_series([
            {"label": "with the cache", "x": list(range(n)), "y": [self.trace.dot_products(t, cached=True)
                                                                  for t in range(n)],
             "mode": "line", "color": CACHED_COLOUR},
            {"label": "recomputing", "x": list(range(n)), "y": [self.trace.dot_products(t, cached=False)
                                                               for t in range(n)],
             "mode": "line", "color": RECOMPUTED_COLOUR, "dash": True}])
        self.readout.layout = ipw.Layout(min_height="44px")
        self.widget = self._layout([["weights", "cache", "work"]])
        self.update()

    def _redraw(self) -> None:
        t, step = self.trace, self.controls["step"].value
        cached = self.controls["mode"].value == "cache"
        n, tokens = t.n, t.tokens
        say = self.settings()
        computed = (np.arange(n)[:, None] <= step) & (np.arange(n)[None, :] <= np.arange(n)[:, None])
        new = tokens[step]
        how = "1 new row" if cached else f"{step + 1} rows recomputed"
        finding = largest_weight(t.weights[step, :step + 1], tokens, new)
        self.figures["weights"].draw(t.weights, tokens, tokens, vmin=0.0, vmax=1.0, mask=computed,
                                     highlight_row=step, title=f"step {step}: “{new}” attends ({how})",
                                     alt=f"attention weights so far; {say}: {finding}")
        rows = np.arange(n)[:, None] <= step
        lim = float(np.abs([t.k, t.v]).max())
        features = [str(j) for j in range(t.k.shape[1])]
        title = (f"K and V caches: {step + 1} rows, 1 new" if cached
                 else f"K and V for {step + 1} tokens, all recomputed")
        self.figures["cache"].draw(np.stack([t.k, t.v]), tokens, features, vmin=-lim, vmax=lim,
                                   mask=np.broadcast_to(rows, t.k.shape),
                                   panel_titles=["K (keys)", "V (values)"], title=title,
                                   alt=f"keys and values; {say}: {step + 1} of {n} tokens' keys and values, "
                                       f"the row of {quoted(new)} newest")
        dots = t.dot_products(step, cached=cached)
        other = t.dot_products(step, cached=not cached)
        way, other_way = ("with the cache", "recomputing") if cached else ("recomputing", "with the cache")
        plural = "s" if dots != 1 else ""
        self.summary = (f"“{new}” is token {step}; {way} this step computes {dots} dot product{plural} "
                        f"({other_way}: {other}); {finding}")
        self.figures["work"].mark(step, dots, title="query·key dot products per step",
                                  alt=f"work per step; {say}: {self.summary}")
        claim = difference_claim(t.outputs[step], t.full_outputs[step], below=1e-12)
        keys = (f"its query meets the {step + 1} keys in the cache (its own key was just appended), and "
                f"{t.projections(step, cached=True)} token is projected" if cached else
                f"every one of the {step + 1} tokens is projected again and every row recomputed")
        self.readout.value = html.escape(
            f"Step {step}: {keys}: {dots} dot products (the other way: {other}). The output row of "
            f"{quoted(new)} is the same either way ({claim}).")

    def still(self):
        from ..figures.lesson12_generation import plot_generation_step

        return plot_generation_step(self.trace, self.controls["step"].value,
                                    cached=self.controls["mode"].value == "cache")


# ---------------------------------------------------------------------- memory
#: The context lengths of the calculator's slider: 128 … 1,048,576 tokens, powers of two.
CONTEXTS = tuple(2 ** i for i in range(7, 21))
D_HEADS = (32, 64, 80, 96, 128, 256)
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_DTYPES = [(f"{name} ({size} B)", name) for name, size in VALUE_BYTES.items()]


def _divisors(n: int) -> list[int]:
    return [g for g in range(1, n + 1) if n % g == 0]


def _nearest(options, value):
    return min(options, key=lambda o: (abs(np.log(o) - np.log(value)), o))


class MemoryExplorer(ExplorerBase):
    """The KV cache of a model's shape, against the context and beside its weights (notebook 12).

    A preset sets every slider from the model's public config (``ll.PRESETS``); the sliders then change the
    shape. ``.memory`` is the :class:`~lessons_lib.lab.kv_memory.KVMemory` drawn; the weights compared are
    the preset model's.
    """

    title = "KV-cache calculator: what the cache costs"
    hint = ("pick a model, then move the context, the batch, the key/value heads or the dtype; the line is "
            "the cache against the context, the dotted line the model's weights")
    slider_width = "330px"

    def __init__(self, preset: str = "Llama-3-8B", *, context: int = 8192, batch: int = 1,
                 dtype: str | None = None):
        super().__init__()
        check_choice(preset, "preset", list(PRESETS))
        shape = PRESETS[preset]
        check_choice(context, "context", CONTEXTS)
        check_choice(batch, "batch", BATCHES)
        dtype = shape.dtype if dtype is None else check_choice(dtype, "dtype", list(VALUE_BYTES))
        self._control("preset", ipw.Dropdown(options=list(PRESETS), value=preset, description="model"),
                      label="model: the preset whose public config sets the sliders")
        sliders = (
            ("layers", ipw.IntSlider(value=shape.layers, min=1, max=128),
             "layers: how many attention layers"),
            ("n_heads", ipw.IntSlider(value=shape.n_heads, min=1, max=128), "n_heads: query heads per layer"),
            ("n_kv_heads", ipw.SelectionSlider(options=_divisors(shape.n_heads), value=shape.n_kv_heads),
             "n_kv_heads: key/value heads per layer, each shared by a group of query heads"),
            ("d_head", ipw.SelectionSlider(options=list(D_HEADS), value=shape.d_head),
             "d_head: numbers per key or value of one head"),
            ("context", ipw.SelectionSlider(options=list(CONTEXTS), value=context),
             "context: tokens in the cache"),
            ("batch", ipw.SelectionSlider(options=list(BATCHES), value=batch),
             "batch: sequences generated at once"),
        )
        for name, slider, label in sliders:
            slider.description, slider.continuous_update = name, True
            self._control(name, slider, label=label)
        self._control("dtype", ipw.ToggleButtons(options=_DTYPES, value=dtype,
                                                 style={"button_width": "auto"}),
                      label="dtype: how each cached number is stored")
        self._figure("memory", LinePlot(xlabel="context (tokens)", ylabel="GB", log_x=True, log_y=True,
                                        width=640, height=400))
        self.readout.layout = ipw.Layout(min_height="66px")
        self.widget = self._layout([["memory"]])
        self.update()

    def _sync(self, values: dict) -> None:
        c = self.controls
        quiet, self._quiet = self._quiet, True
        try:
            if "preset" in values:
                shape = PRESETS[c["preset"].value]
                c["n_kv_heads"].options = _divisors(shape.n_heads)
                for name in ("layers", "n_heads", "n_kv_heads", "d_head"):
                    c[name].value = getattr(shape, name)
                c["dtype"].value = shape.dtype
                c["context"].value = _nearest(CONTEXTS, shape.context)
            elif "n_heads" in values:
                kept = c["n_kv_heads"].value
                options = _divisors(c["n_heads"].value)
                c["n_kv_heads"].options = options
                c["n_kv_heads"].value = max(g for g in options if g <= kept) if kept not in options else kept
        finally:
            self._quiet = quiet

    def settings(self) -> str:
        c = self.controls
        return (f"{c['preset'].value}: {c['layers'].value} layers, {c['n_heads'].value} query heads, "
                f"{c['n_kv_heads'].value} KV heads, d_head = {c['d_head'].value}, "
                f"{c['context'].value:,} tokens, batch {c['batch'].value}, {c['dtype'].value}")

    def _redraw(self) -> None:
        c = self.controls
        shape = {name: c[name].value for name in ("layers", "n_heads", "n_kv_heads", "d_head")}
        self.memory = m = kv_cache_memory(c["preset"].value, c["context"].value, c["batch"].value,
                                          c["dtype"].value, **shape)
        s = m.shape
        x = [float(t) for t in CONTEXTS]
        line = [kv_cache_bytes(s.layers, s.n_kv_heads, s.d_head, t, m.batch, m.dtype, window=s.window) / 1e9
                for t in CONTEXTS]
        series = [{"label": f"KV cache, {s.n_kv_heads} KV heads", "x": x, "y": line, "mode": "line",
                   "color": CACHED_COLOUR}]
        if s.n_kv_heads != s.n_heads:
            series.append({"label": f"with {s.n_heads} KV heads", "x": x,
                           "y": [g * s.n_heads / s.n_kv_heads for g in line], "mode": "line",
                           "color": RECOMPUTED_COLOUR, "dash": True})
        series.append({"label": f"{s.name}'s weights", "x": [x[0], x[-1]], "y": [m.weights_gb] * 2,
                       "mode": "line", "color": "#000000", "dash": True})
        self.figures["memory"].set_series(series)
        self.summary = m.sentence()
        window = f", a window of {s.window:,}" if s.window else ""
        self.figures["memory"].mark(float(m.tokens), m.gb, title=f"KV cache of {s.name}'s shape{window}",
                                    alt=f"KV cache against the context; {self.settings()}: {self.summary}")
        self.readout.value = html.escape(f"{m.formula()}. {self.summary}")

    def still(self):
        from ..figures.lesson12_generation import plot_kv_memory

        return plot_kv_memory(self.memory)


# ---------------------------------------------------------------------- grouped-query attention
KV_HEAD_OPTIONS = (8, 4, 2, 1)
GQA_HEADS, GQA_D_MODEL, GQA_SEQ_LEN = 8, 64, 12       # lesson 06's head grid as it opens


class GroupedQueryExplorer(ExplorerBase):
    """Lesson 06's eight heads with their key/value heads pooled into ``n_kv_heads`` groups (notebook 12).

    Query heads keep their own W_Q; the key and value projections of the heads of a group are averaged
    (:func:`~lessons_lib.lab.generation.gqa_conversion`). ``.conversion`` holds the outputs before and after
    and the converted weights drawn.
    """

    title = "Grouped-query attention: query heads share keys and values"
    hint = ("move n_kv_heads from 8 (every head its own) down to 1 (multi-query); hover a head to see it "
            "large; follow a token in every head")

    def __init__(self, *, n_kv_heads: int = 2, token: int = 2, seed: int = 0):
        super().__init__()
        check_choice(n_kv_heads, "n_kv_heads", KV_HEAD_OPTIONS)
        check_int_in_range(token, "token", 0, GQA_SEQ_LEN - 1)
        self.seed = check_seed(seed, allow_generator=False)
        self.tokens = data.tokens_of_length(GQA_SEQ_LEN)
        self.x = embedding(tuple(self.tokens), GQA_D_MODEL, self.seed)
        w_q, w_k, w_v, w_o = head_projections(GQA_D_MODEL, self.seed, 3.0)
        self.layer = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o, "n_heads": GQA_HEADS}
        self._control("n_kv_heads", ipw.SelectionSlider(options=list(KV_HEAD_OPTIONS), value=n_kv_heads,
                                                        description="n_kv_heads", continuous_update=True),
                      label="n_kv_heads: key/value heads shared by the 8 query heads")
        self._head_view(token, GQA_SEQ_LEN)
        c = self.controls
        self.readout.layout = ipw.Layout(min_height="44px")
        row = ipw.HBox([c["n_kv_heads"], c["token"]], layout=ipw.Layout(flex_flow="row wrap"))
        self.widget = self._box(row, c["direction"], self.view, self.readout, self.error_box)
        self.update()

    def settings(self) -> str:
        return f"n_kv_heads = {self.controls['n_kv_heads'].value} for {GQA_HEADS} query heads"

    def _redraw(self) -> None:
        g = self.controls["n_kv_heads"].value
        self.conversion = conv = lab.gqa_conversion(self.x, self.layer, g)
        owner = kv_head_of(GQA_HEADS, g)
        d_head = GQA_D_MODEL // GQA_HEADS
        per_token = 2 * g * d_head
        token = self.controls["token"].value
        self.summary = (f"{GQA_HEADS // g} query head{'s' if g < GQA_HEADS else ''} per key/value head; "
                        f"the cache keeps {per_token} numbers per token instead of {2 * GQA_HEADS * d_head}; "
                        f"{favourite_per_head(conv.weights, self.tokens, token)}")
        self.view.draw(conv.weights, self.tokens, panel_titles=[f"head {h} · KV {owner[h]}" for h in
                                                                range(GQA_HEADS)],
                       token=token, title=f"{GQA_HEADS} query heads sharing {g} key/value head"
                                          f"{'s' if g > 1 else ''}",
                       alt=f"{self.settings()}: the attention weights of {GQA_HEADS} heads, "
                           f"{GQA_SEQ_LEN} × {GQA_SEQ_LEN} each, the heads of a group reading one key/value "
                           f"head")
        groups = "; ".join(f"KV {k}: heads {', '.join(str(h) for h in np.flatnonzero(owner == k))}"
                           for k in range(g))
        self.readout.value = html.escape(
            f"{groups}. Cache per token and layer: 2 × {g} × {d_head} = {per_token} numbers "
            f"({GQA_HEADS // g}× smaller than one key/value head per query head). {conv.verdict()}")

    def still(self):
        from ..figures.lesson12_generation import plot_gqa_heads

        g = self.controls["n_kv_heads"].value
        return plot_gqa_heads(self.conversion.weights, self.tokens, g)


# ---------------------------------------------------------------------- windows and sinks
WINDOW_TOKENS = 48


class WindowExplorer(ExplorerBase):
    """A head with an attention sink on its first token, under a sliding window with ``sinks`` first tokens
    kept (notebook 12). ``.run`` is the :class:`~lessons_lib.lab.generation.WindowRun` drawn."""

    title = "Sliding window and attention sinks: what a long generation keeps"
    hint = ("move the window and the sinks; move 'query' (or click a row) along the sequence and watch "
            "which tokens the rolling cache still holds")

    def __init__(self, *, window: int = 8, sinks: int = 2, query: int = 40, seed: int = 0):
        super().__init__()
        check_int_in_range(window, "window", 2, 24)
        check_int_in_range(sinks, "sinks", 0, 4)
        check_int_in_range(query, "query", 0, WINDOW_TOKENS - 1)
        self.seed = check_seed(seed, allow_generator=False)
        self._control("window", ipw.IntSlider(value=window, min=2, max=24, description="window",
                                              continuous_update=True),
                      label="window: the last tokens each query sees")
        self._control("sinks", ipw.IntSlider(value=sinks, min=0, max=4, description="sinks",
                                             continuous_update=True),
                      label="sinks: first tokens kept in sight for good")
        self._control("query", ipw.IntSlider(value=query, min=0, max=WINDOW_TOKENS - 1, description="query",
                                             continuous_update=True),
                      label="query: the position followed")
        labels = [str(i) for i in range(WINDOW_TOKENS)]
        self._labels = labels
        self._figure("weights", Heatmap(colorbar_label="attention weight", cmap=style.CMAP_WEIGHTS,
                                        percent=True, xlabel="key position", ylabel="query position",
                                        width=440, height=430, annotate_max=0, selectable=True))
        self._follow_clicks(self.figures["weights"])
        self._figure("ring", Heatmap(colorbar_label="position held", cmap=style.CMAP_VALUES,
                                     xlabel="cache slot", ylabel="generation step", row_name="step",
                                     col_name="slot", decimals=0, width=330, height=430, annotate_max=0,
                                     hidden_text="empty slot"))
        self._figure("distance", LinePlot(xlabel="query position", ylabel="% of a value's length", width=440,
                                          height=300))
        self.readout.layout = ipw.Layout(min_height="44px")
        self.widget = self._layout([["weights", "ring", "distance"]])
        self.update()

    def _redraw(self) -> None:
        c = self.controls
        w, s, i = c["window"].value, c["sinks"].value, c["query"].value
        self.run = run = lab.window_experiment(WINDOW_TOKENS, w, s, seed=self.seed)
        say = self.settings()
        name = "window + sinks"
        weights = run.weights[name]
        self.figures["weights"].draw(weights, self._labels, self._labels, vmin=0.0, vmax=1.0,
                                     mask=sink_window_mask(WINDOW_TOKENS, w, s), highlight_row=i,
                                     title=f"window {w} + {s} sink{'s' if s != 1 else ''}",
                                     alt=f"attention weights under the window; {say}: "
                                         f"{largest_weight(weights[i], self._labels, str(i))}")
        held = lab.ring_buffer(WINDOW_TOKENS, w, s)
        slots = [f"sink {j}" if j < s else f"slot {j}" for j in range(held.shape[1])]
        kept = sorted(int(p) for p in held[i] if p >= 0)
        self.figures["ring"].draw(np.where(held < 0, 0, held).astype(float), self._labels, slots, vmin=0.0,
                                  vmax=float(WINDOW_TOKENS - 1), mask=held >= 0, highlight_row=i,
                                  title=f"rolling cache: {len(slots)} slots",
                                  alt=f"the rolling cache's slots step by step; {say}: after step {i} it "
                                      f"holds positions {_positions(kept)}")
        positions = list(range(WINDOW_TOKENS))
        lone, both = (100 * run.difference(k) for k in ("window", name))
        self.figures["distance"].set_series([
            {"label": f"window {w}, no sinks", "x": positions, "y": lone.tolist(), "mode": "line",
             "color": RECOMPUTED_COLOUR, "dash": True},
            {"label": f"window {w} + {s} sinks", "x": positions, "y": both.tolist(), "mode": "line",
             "color": CACHED_COLOUR}])
        share = run.weights["full"][i, 0]
        self.summary = (f"query {i} sees positions {_positions(kept)}; full attention puts {share:.0%} of "
                        f"its row on the first token; its output moves {both[i]:.0f}% of a value's length "
                        f"from full attention ({lone[i]:.0f}% with no sinks)")
        self.figures["distance"].mark(i, float(both[i]), title="distance from full attention",
                                      alt=f"distance of each output from full attention; {say}: "
                                          f"{self.summary}")
        self.readout.value = html.escape(f"{self.summary[0].upper()}{self.summary[1:]}. {run.sentence()}")

    def still(self):
        from ..figures.lesson12_generation import plot_window_view

        return plot_window_view(self.run, self.controls["query"].value)


def _positions(kept: list[int]) -> str:
    """``0, 1, 23 … 30``: the positions a cache holds, runs written as ranges."""
    runs, start = [], None
    for k, p in enumerate(kept):
        if start is None:
            start = p
        if k + 1 == len(kept) or kept[k + 1] != p + 1:
            span = f"{start}, {p}" if p == start + 1 else f"{start} … {p}"
            runs.append(str(start) if p == start else span)
            start = None
    return ", ".join(runs)
