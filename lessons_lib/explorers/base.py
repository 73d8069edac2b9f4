"""Explorers: sliders beside live figures, in the module of the lesson that shows them.

==============================  ========  ============================================================
explorer                        notebook  what moves
==============================  ========  ============================================================
:class:`ProjectionExplorer`     02        X (seq_len, d_model) · W (d_model, d_k) = Q, K or V: d_k,
                                          which W
:class:`ScoresExplorer`         03        raw scores Q·Kᵀ: seq_len, d_k
:class:`ScaleSoftmaxExplorer`   04        var(q·k) against d_k, the weights, one query's bars: d_k,
                                          scaling, temperature, query
:class:`PipelineExplorer`       05        scaled scores → weights → output, one query's bars: seq_len,
                                          d_k, query, causal mask
:class:`HeadGridExplorer`       06        every head's weights, one previewed large: n_heads, d_model,
                                          seq_len, the token followed, its row or its column
:class:`CausalMaskExplorer`     07        scores → scores + mask → weights, one query's row: seq_len,
                                          query
:class:`CustomMaskExplorer`     07        the weights under a mask the learner draws cell by cell
:class:`ScalingExplorer`        08        time and memory against N, measured: N, *Measure up to N*
:class:`TileExplorer`           08        FlashAttention tile by tile, running maximum, sum, output: tile
:class:`SentenceExplorer`       09        a trained tiny model's heads on a sentence the learner types
:class:`TrainingExplorer`       09        the heads as training goes: training step, sentence
:class:`RealModelExplorer`      10        every head of one layer of a real model: layer, token
:class:`ShuffleExplorer`        11        weights and outputs as written and shuffled: sentence,
                                          positions, *Shuffle*, *Back to the written order*
:class:`SinusoidExplorer`       11        the sinusoids PE and one row's dot products: position, d_model
:class:`RopeExplorer`           11        RoPE's dials, the score against the offset, ALiBi's row: m, n,
                                          offset, d_head, base, convention
:class:`KVCacheExplorer`        12        generation step by step, the K and V caches, the work: step,
                                          with the cache or recomputing
:class:`MemoryExplorer`         12        the KV cache against the context beside the weights: model,
                                          layers, n_heads, n_kv_heads, d_head, context, batch, dtype
:class:`GroupedQueryExplorer`   12        lesson 06's heads sharing pooled key/value heads: n_kv_heads,
                                          the token followed, its row or its column
:class:`WindowExplorer`         12        a sliding window with sinks, the rolling cache, each output's
                                          distance from full attention: window, sinks, query
:class:`StateRecallExplorer`    13        pairs written into a d × d state by a rule and read back, the
                                          share read back against the pairs: n_pairs, d_state, decay,
                                          rule
:class:`LatentSparseExplorer`   14        a tiny MLA layer: the cache per token, the keys the
                                          indexer keeps over the dense weights, each output's
                                          distance from dense attention: d_c, top_k, query
==============================  ========  ============================================================

:class:`ExplorerBase` is the base of every explorer of the course; :class:`Explorer` adds what the
explorers of notebooks 02-05 share (d_model, seed, the d_k slider, step 1 on cached data).
``tests/docs/test_architecture.py`` holds this table to the explorers the lesson modules define.

Each explorer opens on exactly the data and settings of its lesson ("The cat sat
on the mat.", d_model = 8, d_k = 4, seed 0), so its first picture repeats numbers
the learner has just computed. Every explorer has:

* ``.widget``: the ipywidgets box (controls on top, figures, a read-out line);
  the explorer displays as it in JupyterLab, Notebook 7, VS Code and Colab;
* ``.controls`` (name → ipywidgets control) and ``.figures`` (name → live figure
  of :mod:`lessons_lib.figures.live`, whose ``.matrix`` is what it shows);
* ``.settings()``: the controls' values in words, which the figures carry in their names (alt text),
  with what the data shows;
* ``.access``: the explorer's one polite live region (:class:`~lessons_lib.figures.live.access.Access`),
  which says after each change what changed and what the figures show now (``.summary``,
  "d_k = 16: the row of “sat” puts 0.62 on “mat”, its largest weight"), and gives every control an
  accessible name and a value text ("d_k = 4", not the slider's position);
* ``.set(**values)``: drive it from code, one redraw (``.set(d_k=64, seq_len=16)``);
  a value outside a slider raises ValueError, as do such values given to the constructor;
* ``.error_box``: an error in a redraw is shown there in red, never lost;
* ``.still()``: the same view as a matplotlib figure (from :mod:`lessons_lib.figures`):
  the picture that GitHub, nbviewer and nbconvert HTML show, with a sentence;
* ``.last_update_ms``: the Python side of the last redraw.

Why dragging never queues up: the browser's widget manager keeps at most one slider
message in flight per slider and merges the moves made meanwhile (only the latest
value reaches the kernel), a redraw costs the kernel a few milliseconds and sends a
few kB, and the live figures draw once per animation frame, the newest state only.
"""

from __future__ import annotations

import html
import math
import time
import traceback
from contextlib import ExitStack
from functools import lru_cache

import ipywidgets as ipw
import numpy as np

from .._checks import check_flag, check_int_in_range, is_real_number, is_whole_number
from ..core import attention
from ..figures.base import add_footnote, plain_text, still_output
from ..figures.live.access import Access, control_entry
from ..lab import data
from ..lab.measurements import measure_score_variance

__all__ = ["D_K_OPTIONS"]

D_K_OPTIONS = tuple(2 ** i for i in range(10))   # 1, 2, 4, ..., 512 (the d_k slider)
SEQ_LEN_MIN, SEQ_LEN_MAX = 2, 128
LESSON_SENTENCE = "cat"                          # "The cat sat on the mat."
LESSON_D_MODEL, LESSON_D_K, LESSON_D_V, LESSON_SEED = 8, 4, 4, 0   # notebooks 02-05

#: What each control sets, in words: its accessible name (the front end shows only its description).
CONTROL_NAMES = {
    "d_k": "d_k: length of each query and key",
    "seq_len": "seq_len: number of tokens",
    "query": "query: the token whose row is followed",
    "temperature": "temperature: divides the scores before softmax",
    "scaled": "scale by 1/√d_k",
    "causal": "causal mask: hide the future",
    "projection": "result: which of Q, K, V is computed",
    "n_heads": "n_heads: number of heads",
    "d_model": "d_model: width of each token's vector",
    "token": "token: the token followed in every head",
    "direction": "follow the token's row (where it looks) or its column (who looks at it)",
    "tile": "tile: key tiles processed",
    "layer": "layer: which layer's heads are shown",
    "step": "training step: the snapshot shown",
    "sentence": "sentence",
}


# ------------------------------------------------------------------ small helpers
def quoted(token) -> str:
    """A token as the course quotes it in sentences: “sat”."""
    return f"“{token}”"


def largest_weight(row, tokens, query: str, *, what: str = "weight") -> str:
    """One row in words: ``the row of “sat” puts 0.62 on “mat”, its largest weight`` (masked keys are 0).

    >>> largest_weight(np.array([0.1, 0.7, 0.2]), ["a", "b", "c"], "c")
    'the row of “c” puts 0.70 on “b”, its largest weight'
    """
    j = int(np.argmax(row))
    return f"the row of {quoted(query)} puts {row[j]:.2f} on {quoted(tokens[j])}, its largest {what}"


def favourite_per_head(weights, tokens, token: int) -> str:
    """Where one token looks in each head, in words: ``in head 0 “sat” looks most at “mat”, 0.62; ...``
    (``weights (n_heads, L, L)``, at most 4 heads named, then how many distinct keys the rest pick).

    >>> favourite_per_head(np.array([[[0.9, 0.1], [0.3, 0.7]]]), ["a", "b"], 1)
    'in head 0 “b” looks most at “b”, 0.70'
    """
    rows = np.asarray(weights)[:, token, :]
    picks = np.argmax(rows, axis=1)
    named = [f"in head {h} {quoted(tokens[token])} looks most at {quoted(tokens[j])}, {rows[h, j]:.2f}"
             for h, j in enumerate(picks[:4])]
    rest = ("" if len(picks) <= 4
            else f"; over all {len(picks)} heads it picks {len(set(picks))} different keys")
    return "; ".join(named) + rest


def extreme_cell(m, rows, cols, *, what: str = "largest") -> str:
    """Where a matrix is largest (or smallest), in words: ``the largest, 2.47, is “sat” → “cat”``.

    >>> extreme_cell(np.array([[1.0, 3.0], [2.0, 0.0]]), ["a", "b"], ["x", "y"])
    'the largest, 3.00, is “a” → “y”'
    """
    m = np.asarray(m, dtype=float)
    shown = np.where(np.isfinite(m), m, -np.inf if what == "largest" else np.inf)
    i, j = np.unravel_index(int(np.argmax(shown) if what == "largest" else np.argmin(shown)), m.shape)
    return f"the {what}, {m[i, j]:.2f}, is {quoted(rows[i])} → {quoted(cols[j])}".replace("-", "−")


def nice_bound(value: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 × 10ⁿ ≥ ``value``: colour scales that rarely change.

    >>> nice_bound(0.7), nice_bound(41.0), nice_bound(2.0), nice_bound(0.0)
    (0.8, 50.0, 2.0, 1.0)
    """
    value = float(abs(value))
    if not np.isfinite(value) or value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for m in (1, 1.5, 2, 3, 4, 5, 6, 8, 10):
        bound = m * 10.0 ** exp
        if bound >= value * (1 - 1e-12):
            return float(f"{bound:.6g}")
    return 10.0 ** (exp + 1)


def check_sentence(sentence) -> str:
    if not isinstance(sentence, str) or sentence not in data.SENTENCES:
        raise ValueError(f"sentence must be one of {sorted(data.SENTENCES)}; got {sentence!r}.")
    return sentence


def _check_d_k(d_k) -> int:
    if not is_whole_number(d_k) or d_k not in D_K_OPTIONS:
        raise ValueError(f"d_k must be one of the slider's values {', '.join(map(str, D_K_OPTIONS))}; "
                         f"got {d_k!r}.")
    return int(d_k)


def tokens_for(sentence: str, n: int) -> list[str]:
    """The sentence's tokens, continued by the course's story when ``n`` is longer."""
    own = data.tokenize(data.SENTENCES[sentence])
    if n <= len(own):
        return own[:n]
    story = data.tokens_of_length(n)
    if story[:len(own)] == own:  # the story starts with this sentence ("The cat sat on the mat.")
        return story
    return own + data.tokens_of_length(n - len(own))


@lru_cache(maxsize=64)
def embedding(tokens: tuple, d_model: int, seed: int) -> np.ndarray:
    """``data.embed_tokens``, remembered (read-only): a slider revisits the same sequence often."""
    x = data.embed_tokens(list(tokens), d_model, seed)
    x.setflags(write=False)
    return x


@lru_cache(maxsize=64)
def projections(d_model: int, d_k: int, seed: int, d_v: int | None = None) -> tuple:
    """``data.projection_weights``, remembered (read-only)."""
    ws = data.projection_weights(d_model, d_k, seed, d_v=d_v)
    for w in ws:
        w.setflags(write=False)
    return ws


@lru_cache(maxsize=4)
def variance_data(seed: int) -> tuple:
    """``measure_score_variance`` over all d_k of the slider, measured once per seed."""
    return measure_score_variance(D_K_OPTIONS, seed=seed)


def error_html(exc: BaseException, doing: str = "The figure could not be redrawn") -> str:
    """``exc`` as a red line for an explorer's error box: what failed, where, the error and its message."""
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" (in {html.escape(where.name)})" if where else ""
    return (
        '<div class="lessons-error-message" style="color:#b00020;font-weight:bold;white-space:pre-wrap">'
        f"{html.escape(doing)}{place}: {html.escape(type(exc).__name__)}: "
        f"{html.escape(str(exc))}</div>"
    )


def _check_value(name: str, control, value) -> None:
    """Refuse a value the control would clamp or ignore, naming what it accepts."""
    if isinstance(control, ipw.SelectionSlider | ipw.ToggleButtons | ipw.Dropdown):
        labelled = control.options and isinstance(control.options[0], tuple)   # (label, value) pairs
        allowed = [v for _, v in control.options] if labelled else list(control.options)
        if isinstance(value, bool) or value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}.")
    elif isinstance(control, ipw.Checkbox):
        check_flag(value, name)
    elif isinstance(control, ipw.FloatLogSlider):
        lo, hi = control.base ** control.min, control.base ** control.max
        if not is_real_number(value) or not lo <= value <= hi:
            raise ValueError(f"{name} must be a number from {lo:g} to {hi:g}; got {value!r}.")
    elif isinstance(control, ipw.IntSlider):
        check_int_in_range(value, name, control.min, control.max)
    elif isinstance(control, ipw.Text) and not isinstance(value, str):
        raise TypeError(f"{name} must be text; got {value!r}.")


def _shown(control) -> str:
    """A control's value as its read-out shows it (a float slider with its readout format: 1.12)."""
    fmt = getattr(control, "readout_format", None)
    if isinstance(control, ipw.FloatLogSlider | ipw.FloatSlider) and fmt:
        return format(control.value, fmt)
    return str(control.value)


# ------------------------------------------------------------------ the base of every explorer
class ExplorerBase:
    """Controls that trigger one redraw, live figures, errors shown in red, a still for static pages.

    The base of every explorer of the course (notebooks 02-09). A subclass registers
    its controls with :meth:`_control` and its live figures with :meth:`_figure`,
    builds ``.widget`` with :meth:`_layout` (or :meth:`_box` for a layout of its own),
    and implements ``_redraw`` (the figures and ``.readout`` from the controls' values)
    and ``still`` (the same view as a matplotlib figure). Each control carries the CSS
    class ``lessons-<slider|checkbox|toggle|control>-<name>`` (the browser test finds
    sliders by it).
    """

    title = ""
    hint = ""
    #: The width :meth:`_control` gives a slider that has none of its own (four side by side in
    #: JupyterLab at 1280 px); ``None`` leaves the front end's default.
    slider_width: str | None = "250px"

    def __init__(self):
        self.controls: dict[str, ipw.ValueWidget] = {}
        self.figures: dict = {}
        self.access = Access(scope=".lessons-explorer")
        self._access_entries: list[dict] = []
        self._changed_names: list[str] = []
        #: what the figures show now, in words (each ``_redraw`` writes it; the live region says it)
        self.summary = ""
        self.error_box = ipw.HTML(value="")
        self.error_box.add_class("lessons-error")
        self.readout = ipw.HTML(value="")
        self.readout.add_class("lessons-readout")
        self.last_update_ms = float("nan")
        self.last_error: BaseException | None = None
        self._quiet = False
        self.widget: ipw.Widget | None = None

    # -- building
    def _control(self, name: str, control, *, redraw: bool = True, label: str | None = None):
        """Register ``control`` as ``name``; a change redraws (unless ``redraw=False``).

        ``label`` is its accessible name, what it sets (default: :data:`CONTROL_NAMES`, else its
        description); a slider's value text is ``"<name> = <its read-out>"`` ("d_k = 4"), as in
        :meth:`settings` and the figures' names.
        """
        kind = type(control).__name__
        kind = ("slider" if "Slider" in kind else "checkbox" if kind == "Checkbox"
                else "toggle" if kind == "ToggleButtons" else "control")
        control.add_class(f"lessons-{kind}-{name}")
        description = getattr(control, "description", "") or name
        self._access_entries.append(control_entry(
            f"lessons-{kind}-{name}", label or CONTROL_NAMES.get(name, description),
            value=name if kind == "slider" else ""))
        if hasattr(control.style, "description_width"):
            control.style.description_width = "initial"  # "temperature", not "temperat…"
        if kind == "slider" and self.slider_width and not control.layout.width:
            control.layout.width = self.slider_width
        # 400 % zoom: a control fits the column (a slider's track shrinks; in a narrow window its read-out
        # goes under it: live_figures.css)
        if not control.layout.max_width:
            control.layout.max_width = "100%"
        self.controls[name] = control
        if redraw:
            control.observe(lambda change, name=name: self._changed(name, change["new"]), names="value")
        return control

    def _slider_seq_len(self, value, *, hi: int = SEQ_LEN_MAX) -> ipw.IntSlider:
        value = check_int_in_range(value, "seq_len", SEQ_LEN_MIN, hi)
        return self._control("seq_len", ipw.IntSlider(value=value, min=SEQ_LEN_MIN, max=hi, step=1,
                                                      description="seq_len", continuous_update=True))

    def _slider_query(self, value, n: int) -> ipw.IntSlider:
        """The query slider (0 … n − 1); it follows seq_len (see :meth:`_sync`)."""
        value = check_int_in_range(value, "query", 0, n - 1)
        return self._control("query", ipw.IntSlider(value=value, min=0, max=n - 1, description="query",
                                                    continuous_update=True))

    def _head_view(self, token: int, n_tokens: int):
        """The head grid's view (lessons 06 and 10): a ``token`` slider, a row/column toggle and a
        :class:`~lessons_lib.figures.live.heads.HeadView` that follows both in the browser, without the
        kernel (the token and the direction only change what is framed, not the weights)."""
        from ..figures.live.heads import COLUMN, ROW, HeadView

        self._control("token", ipw.IntSlider(value=token, min=0, max=n_tokens - 1, description="token",
                                             continuous_update=True), redraw=False)
        self._control("direction", ipw.ToggleButtons(
            options=[("where does this token look? (its row)", ROW),
                     ("who looks at this token? (its column)", COLUMN)], value=ROW,
            style={"button_width": "auto"}), redraw=False)
        self.view = HeadView(width=1000, height=450)
        self._links = [ipw.jslink((self.controls["token"], "value"), (self.view, "token")),
                       ipw.jslink((self.controls["direction"], "index"), (self.view, "direction"))]
        return self.view

    def _figure(self, name: str, fig):
        self.figures[name] = fig
        return fig

    def _follow_clicks(self, heatmap) -> None:
        """A click on a row of ``heatmap`` (in the browser) moves the query slider there."""
        heatmap.on_select(lambda row: self.set(query=row) if 0 <= row <= self.controls["query"].max else None)

    def _box(self, *children) -> ipw.VBox:
        """The explorer's box: a header (title · hint), then ``children``, and the live region (hidden)."""
        header = ipw.HTML(f"<b>{html.escape(self.title)}</b> · <span>{html.escape(self.hint)}</span>")
        header.add_class("lessons-explorer-header")
        self.access.controls = list(self._access_entries)
        box = ipw.VBox([header, *children, self.access])
        box.add_class("lessons-explorer")
        return box

    def _row(self, items) -> ipw.HBox:
        """Figures (by name) or widgets side by side; each figure may shrink to 80 % of its width, below
        that the row wraps (at 200 % zoom each figure gets the whole width, not half of it)."""
        layout = ipw.Layout(flex_flow="row wrap", align_items="flex-start", width="100%")
        return ipw.HBox([self.figures[n] if isinstance(n, str) else n for n in items], layout=layout)

    def _controls_row(self) -> ipw.HBox:
        return ipw.HBox(list(self.controls.values()), layout=ipw.Layout(flex_flow="row wrap"))

    def _layout(self, rows) -> ipw.VBox:
        """Header, controls, error box, rows of figures side by side (they shrink to fit), read-out."""
        return self._box(self._controls_row(), self.error_box, *(self._row(r) for r in rows), self.readout)

    # -- running
    def _changed(self, name: str, value) -> None:
        # The controls that follow this one (the query slider's range after seq_len) reach the browser
        # after the figures: the picture a learner waits for is drawn first.
        with ExitStack() as held:
            for other, control in self.controls.items():
                if other != name:
                    held.enter_context(control.hold_sync())
            self._sync({name: value})  # first, so a redraw never sees a stale range
            if not self._quiet:
                self._changed_names = [name]
                self.update()

    def update(self) -> None:
        """Redraw now from the controls' values. Errors go to ``.error_box`` (and ``.last_error``)."""
        start = time.perf_counter()
        try:
            self._redraw()
            self.access.say(self.announcement())
        except Exception as exc:  # shown to the learner, not swallowed
            self.last_error = exc
            self.error_box.value = error_html(exc)
        else:
            if self.last_error is not None:  # the previous redraw's error is gone
                self.error_box.value = ""
            self.last_error = None
        finally:
            self.last_update_ms = (time.perf_counter() - start) * 1000.0

    def _redraw(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _sync(self, values: dict) -> None:
        """Adjust dependent controls before a redraw: the query slider's range follows seq_len."""
        if "seq_len" in values and "query" in self.controls:
            quiet, self._quiet = self._quiet, True   # a clamped query redraws once, with seq_len
            try:
                self.controls["query"].max = self.controls["seq_len"].value - 1
            finally:
                self._quiet = quiet

    def settings(self) -> str:
        """The controls' values in words, e.g. ``"seq_len = 7, d_k = 4"`` (the figures' alt text)."""
        return ", ".join(f"{name} = {_shown(control)}" for name, control in self.controls.items())

    def setting(self, name: str) -> str:
        """One control's value as the learner hears it: ``"d_k = 16"`` (as the slider's value text says
        it), ``"causal mask on"``, a toggle's choice (``"projection = K"``, or its label when long)."""
        control = self.controls[name]
        if isinstance(control, ipw.Checkbox):
            return f"{control.description or name} {'on' if control.value else 'off'}"
        if isinstance(control, ipw.ToggleButtons | ipw.Dropdown):
            label = control.label if control.label is not None else str(control.value)
            return label if len(label) > 12 else f"{name} = {label}"
        return f"{name} = {_shown(control)}"

    def announcement(self) -> str:
        """What the live region says after a change: what changed, then what the figures show now."""
        changed = [n for n in self._changed_names if n in self.controls]
        head = "; ".join(self.setting(n) for n in changed)
        return f"{head}: {self.summary}" if head and self.summary else head or self.summary

    def set(self, **values) -> None:
        """Set several controls at once (one redraw), e.g. ``.set(d_k=64, seq_len=16)``.

        Raises ``TypeError`` for an unknown name and ``ValueError`` for a value the
        control cannot take (sliders would silently clamp it otherwise).
        """
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no control {', '.join(unknown)}; "
                            f"it has {', '.join(self.controls)}.")
        self._quiet = True
        try:
            for name, control in self.controls.items():  # in the controls' order: seq_len before query
                if name in values:
                    _check_value(name, control, values[name])
                    control.value = values[name]
                    self._sync({name: values[name]})
        finally:
            self._quiet = False
        self._changed_names = [n for n in self.controls if n in values]
        self.update()

    # -- static pages
    def still(self):  # pragma: no cover - overridden
        """The current view as a matplotlib figure (for GitHub, nbviewer, nbconvert HTML)."""
        raise NotImplementedError

    def _named_settings(self) -> str:
        """`` (seq_len = 7, d_k = 4)``, or nothing for an explorer without settings: never ``()``."""
        settings = self.settings()
        return f" ({settings})" if settings else ""

    def text(self) -> str:
        """The sentence a page without a kernel shows beside the still picture."""
        return (f"{type(self).__name__}: {self.title}{self._named_settings()}. The picture is its starting "
                f"view; run the notebook in JupyterLab, Notebook 7, VS Code or Colab to move the sliders.")

    def __repr__(self) -> str:
        return self.text()

    def readout_line(self) -> str:
        """The read-out under the figures, as one line of text (what the still writes under itself)."""
        return plain_text(self.readout.value)

    def static_view(self):
        """The still as a page without a kernel shows it, and its alt text: the live view's figures, then
        the read-out line under them (written into the picture)."""
        still = self.still()
        readout = self.readout_line()
        add_footnote(still, readout)
        alt = f"Still picture of the {self.title} explorer{self._named_settings()}: {still.alt_text()}"
        return still, (f"{alt.rstrip('. ')}. Under it: {readout}" if readout else alt)

    def _repr_mimebundle_(self, **kwargs):
        """The live widget for front ends that run widgets; a still picture with its alt text (an ``<img>``
        as every still of the course, :func:`~lessons_lib.figures.base.still_output`) and a sentence."""
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        bundle = dict(bundle)
        still, alt = self.static_view()
        bundle.update(still_output(still, alt, dpi=80))
        bundle["text/plain"] = self.text()
        return bundle


class Explorer(ExplorerBase):
    """An explorer of the four steps (notebooks 02-05): its own d_model and seed, the lesson's data."""

    def __init__(self, *, d_model: int, seed: int):
        super().__init__()
        self.d_model = check_int_in_range(d_model, "d_model", 1, 512)
        self.seed = check_int_in_range(seed, "seed", 0, 2**32 - 1)

    def _slider_d_k(self, value) -> ipw.SelectionSlider:
        return self._control("d_k", ipw.SelectionSlider(options=list(D_K_OPTIONS), value=_check_d_k(value),
                                                        description="d_k", continuous_update=True))

    def _project(self, tokens, d_k: int, d_v: int | None = None) -> tuple:
        """Step 1 for these tokens: ``(X, (W_Q, W_K, W_V), (Q, K, V))`` from the library (cached data).

        ``d_v`` (the width of V) is d_k unless given.
        """
        x = embedding(tuple(tokens), self.d_model, self.seed)
        ws = projections(self.d_model, d_k, self.seed, d_v)
        return x, ws, attention.project_qkv(x, *ws)
