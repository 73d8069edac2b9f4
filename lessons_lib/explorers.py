"""Explorers: sliders beside live figures, one per lesson that needs one.

=========================  ========  =================================================================
explorer                   notebook  what moves
=========================  ========  =================================================================
:class:`ProjectionExplorer`  02      X (seq_len, d_model) · W (d_model, d_k) = Q, K or V: d_k, which W
:class:`ScoresExplorer`      03      raw scores Q·Kᵀ: seq_len, d_k
:class:`ScaleSoftmaxExplorer` 04     var(q·k) against d_k, the weights, one query's bars: d_k, scaling,
                                     temperature, query
:class:`PipelineExplorer`    05      scaled scores → weights → output, one query's bars: seq_len, d_k,
                                     query, causal mask
=========================  ========  =================================================================

:class:`ExplorerBase` is the base of every explorer of the course (these, the head grid
of notebook 06, the mask explorers of 07, the cost explorers of 08 and the model views
of 09); :class:`Explorer` adds what the explorers of notebooks 02-05 share (d_model,
seed, the d_k slider, step 1 on cached data).

Each explorer opens on exactly the data and settings of its lesson ("The cat sat
on the mat.", d_model = 8, d_k = 4, seed 0), so its first picture repeats numbers
the learner has just computed. Every explorer has:

* ``.widget``: the ipywidgets box (controls on top, figures, a read-out line);
  the explorer displays as it in JupyterLab, Notebook 7, VS Code and Colab;
* ``.controls`` (name → ipywidgets control) and ``.figures`` (name → live figure
  of :mod:`lessons_lib.live_figures`, whose ``.matrix`` is what it shows);
* ``.settings()``: the controls' values in words, which the figures carry as their alt text;
* ``.set(**values)``: drive it from code, one redraw (``.set(d_k=64, seq_len=16)``);
  a value outside a slider raises ValueError, as do such values given to the constructor;
* ``.error_box``: an error in a redraw is shown there in red, never lost;
* ``.still()``: the same view as a matplotlib figure (from :mod:`lessons_lib.plots`):
  the picture that GitHub, nbviewer and nbconvert HTML show, with a sentence;
* ``.last_update_ms``: the Python side of the last redraw.

Why dragging never queues up: the browser's widget manager keeps at most one slider
message in flight per slider and merges the moves made meanwhile (only the latest
value reaches the kernel), a redraw costs the kernel a few milliseconds and sends a
few kB, and the live figures draw once per animation frame, the newest state only.
"""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import time
import traceback
from functools import lru_cache

import ipywidgets as ipw
import numpy as np

from . import attention, data, masks, style
from .live_figures import Bars, Heatmap, LinePlot, MatrixProduct, ProductPanel
from .measurements import measure_score_variance

__all__ = ["ProjectionExplorer", "ScoresExplorer", "ScaleSoftmaxExplorer", "PipelineExplorer", "D_K_OPTIONS"]

D_K_OPTIONS = tuple(2 ** i for i in range(10))   # 1, 2, 4, ..., 512 (the d_k slider)
SEQ_LEN_MIN, SEQ_LEN_MAX = 2, 128
LESSON_SENTENCE = "cat"                          # "The cat sat on the mat."
LESSON_D_MODEL, LESSON_D_K, LESSON_D_V, LESSON_SEED = 8, 4, 4, 0   # notebooks 02-05


# ------------------------------------------------------------------ small helpers
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


def _check_sentence(sentence) -> str:
    if not isinstance(sentence, str) or sentence not in data.SENTENCES:
        raise ValueError(f"sentence must be one of {sorted(data.SENTENCES)}; got {sentence!r}.")
    return sentence


def _check_whole(value, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number; got {value!r} ({type(value).__name__}).")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}; got {value}.")
    return int(value)


def _check_d_k(d_k) -> int:
    if isinstance(d_k, bool) or not isinstance(d_k, numbers.Integral) or d_k not in D_K_OPTIONS:
        raise ValueError(f"d_k must be one of the slider's values {', '.join(map(str, D_K_OPTIONS))}; "
                         f"got {d_k!r}.")
    return int(d_k)


def _tokens_for(sentence: str, n: int) -> list[str]:
    """The sentence's tokens, continued by the course's story when ``n`` is longer."""
    own = data.tokenize(data.SENTENCES[sentence])
    if n <= len(own):
        return own[:n]
    story = data.tokens_of_length(n)
    if story[:len(own)] == own:  # the story starts with this sentence ("The cat sat on the mat.")
        return story
    return own + data.tokens_of_length(n - len(own))


@lru_cache(maxsize=64)
def _embedding(tokens: tuple, d_model: int, seed: int) -> np.ndarray:
    """``data.embed_tokens``, remembered (read-only): a slider revisits the same sequence often."""
    x = data.embed_tokens(list(tokens), d_model, seed)
    x.setflags(write=False)
    return x


@lru_cache(maxsize=64)
def _projections(d_model: int, d_k: int, seed: int, d_v: int | None = None) -> tuple:
    """``data.projection_weights``, remembered (read-only)."""
    ws = data.projection_weights(d_model, d_k, seed, d_v=d_v)
    for w in ws:
        w.setflags(write=False)
    return ws


@lru_cache(maxsize=4)
def _variance_data(seed: int) -> tuple:
    """``measure_score_variance`` over all d_k of the slider, measured once per seed."""
    return measure_score_variance(D_K_OPTIONS, seed=seed)


def _error_html(exc: BaseException, doing: str = "The figure could not be redrawn") -> str:
    """``exc`` as a red line for an explorer's error box: what failed, where, the error and its message."""
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" (in {html.escape(where.name)})" if where else ""
    return (
        '<div class="lessons-error-message" style="color:#b00020;font-weight:bold;white-space:pre-wrap">'
        f"{html.escape(doing)}{place}: {html.escape(type(exc).__name__)}: "
        f"{html.escape(str(exc))}</div>"
    )


def _png(fig) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=80, bbox_inches="tight")
    return out.getvalue()


def _check_value(name: str, control, value) -> None:
    """Refuse a value the control would clamp or ignore, naming what it accepts."""
    if isinstance(control, ipw.SelectionSlider | ipw.ToggleButtons | ipw.Dropdown):
        labelled = control.options and isinstance(control.options[0], tuple)   # (label, value) pairs
        allowed = [v for _, v in control.options] if labelled else list(control.options)
        if isinstance(value, bool) or value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}.")
    elif isinstance(control, ipw.Checkbox):
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"{name} must be True or False; got {value!r}.")
    elif isinstance(control, ipw.FloatLogSlider):
        lo, hi = control.base ** control.min, control.base ** control.max
        number = isinstance(value, int | float | np.floating) and not isinstance(value, bool)
        if not number or not lo <= value <= hi:
            raise ValueError(f"{name} must be a number from {lo:g} to {hi:g}; got {value!r}.")
    elif isinstance(control, ipw.IntSlider):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise TypeError(f"{name} must be a whole number; got {value!r}.")
        if not control.min <= value <= control.max:
            raise ValueError(f"{name} must be from {control.min} to {control.max}; got {value}.")
    elif isinstance(control, ipw.Text) and not isinstance(value, str):
        raise TypeError(f"{name} must be text; got {value!r}.")


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
        self.error_box = ipw.HTML(value="")
        self.error_box.add_class("lessons-error")
        self.readout = ipw.HTML(value="")
        self.readout.add_class("lessons-readout")
        self.last_update_ms = float("nan")
        self.last_error: BaseException | None = None
        self._quiet = False
        self.widget: ipw.Widget | None = None

    # -- building
    def _control(self, name: str, control, *, redraw: bool = True):
        """Register ``control`` as ``name``; a change redraws (unless ``redraw=False``)."""
        kind = type(control).__name__
        kind = ("slider" if "Slider" in kind else "checkbox" if kind == "Checkbox"
                else "toggle" if kind == "ToggleButtons" else "control")
        control.add_class(f"lessons-{kind}-{name}")
        if hasattr(control.style, "description_width"):
            control.style.description_width = "initial"  # "temperature", not "temperat…"
        if kind == "slider" and self.slider_width and not control.layout.width:
            control.layout.width = self.slider_width
        self.controls[name] = control
        if redraw:
            control.observe(lambda change, name=name: self._changed(name, change["new"]), names="value")
        return control

    def _slider_seq_len(self, value, *, hi: int = SEQ_LEN_MAX) -> ipw.IntSlider:
        value = _check_whole(value, "seq_len", SEQ_LEN_MIN, hi)
        return self._control("seq_len", ipw.IntSlider(value=value, min=SEQ_LEN_MIN, max=hi, step=1,
                                                      description="seq_len", continuous_update=True))

    def _slider_query(self, value, n: int) -> ipw.IntSlider:
        """The query slider (0 … n − 1); it follows seq_len (see :meth:`_sync`)."""
        value = _check_whole(value, "query", 0, n - 1)
        return self._control("query", ipw.IntSlider(value=value, min=0, max=n - 1, description="query",
                                                    continuous_update=True))

    def _figure(self, name: str, fig):
        self.figures[name] = fig
        return fig

    def _follow_clicks(self, heatmap) -> None:
        """A click on a row of ``heatmap`` (in the browser) moves the query slider there."""
        heatmap.on_select(lambda row: self.set(query=row) if 0 <= row <= self.controls["query"].max else None)

    def _box(self, *children) -> ipw.VBox:
        """The explorer's box: a header (title · hint), then ``children``."""
        header = ipw.HTML(f"<b>{html.escape(self.title)}</b> · <span>{html.escape(self.hint)}</span>")
        header.add_class("lessons-explorer-header")
        box = ipw.VBox([header, *children])
        box.add_class("lessons-explorer")
        return box

    def _row(self, items, *, wrap: bool = False) -> ipw.HBox:
        """Figures (by name) or widgets side by side: shrinking to fit, or (``wrap``) wrapping."""
        layout = (ipw.Layout(flex_flow="row wrap", align_items="flex-start") if wrap
                  else ipw.Layout(flex_flow="row nowrap", align_items="center", width="100%"))
        return ipw.HBox([self.figures[n] if isinstance(n, str) else n for n in items], layout=layout)

    def _controls_row(self) -> ipw.HBox:
        return ipw.HBox(list(self.controls.values()), layout=ipw.Layout(flex_flow="row wrap"))

    def _layout(self, rows) -> ipw.VBox:
        """Header, controls, error box, rows of figures side by side (they shrink to fit), read-out."""
        return self._box(self._controls_row(), self.error_box, *(self._row(r) for r in rows), self.readout)

    # -- running
    def _changed(self, name: str, value) -> None:
        self._sync({name: value})  # first, so a redraw never sees a stale range
        if not self._quiet:
            self.update()

    def update(self) -> None:
        """Redraw now from the controls' values. Errors go to ``.error_box`` (and ``.last_error``)."""
        start = time.perf_counter()
        try:
            self._redraw()
        except Exception as exc:  # shown to the learner, not swallowed
            self.last_error = exc
            self.error_box.value = _error_html(exc)
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
        return ", ".join(f"{name} = {control.value}" for name, control in self.controls.items())

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
        self.update()

    # -- static pages
    def still(self):  # pragma: no cover - overridden
        """The current view as a matplotlib figure (for GitHub, nbviewer, nbconvert HTML)."""
        raise NotImplementedError

    def text(self) -> str:
        """The sentence a page without a kernel shows beside the still picture."""
        return (f"{type(self).__name__}: {self.title} ({self.settings()}). The picture is its starting view; "
                f"run the notebook in JupyterLab, Notebook 7, VS Code or Colab to move the sliders.")

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        """The live widget for front ends that run widgets; a still picture (with alt text) and a sentence."""
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        bundle = dict(bundle)
        bundle["text/plain"] = self.text()
        still = self.still()
        bundle["image/png"] = base64.b64encode(_png(still)).decode("ascii")
        alt = f"Still picture of the {self.title} explorer ({self.settings()}): {still.alt_text()}"
        return bundle, {"image/png": {"alt": alt}}


class Explorer(ExplorerBase):
    """An explorer of the four steps (notebooks 02-05): its own d_model and seed, the lesson's data."""

    def __init__(self, *, d_model: int, seed: int):
        super().__init__()
        self.d_model = _check_whole(d_model, "d_model", 1, 512)
        self.seed = _check_whole(seed, "seed", 0, 2**32 - 1)

    def _slider_d_k(self, value) -> ipw.SelectionSlider:
        return self._control("d_k", ipw.SelectionSlider(options=list(D_K_OPTIONS), value=_check_d_k(value),
                                                        description="d_k", continuous_update=True))

    def _project(self, tokens, d_k: int, d_v: int | None = None) -> tuple:
        """Step 1 for these tokens: ``(X, (W_Q, W_K, W_V), (Q, K, V))`` from the library (cached data).

        ``d_v`` (the width of V) is d_k unless given.
        """
        x = _embedding(tuple(tokens), self.d_model, self.seed)
        ws = _projections(self.d_model, d_k, self.seed, d_v)
        return x, ws, attention.project_qkv(x, *ws)


# ---------------------------------------------------------------------- notebook 02
class ProjectionExplorer(Explorer):
    """Step 1 with shapes: X (seq_len, d_model) · W (d_model, d_k) = Q, K or V (seq_len, d_k) (notebook 02).

    X = ``data.embed_tokens``, the W's = ``data.projection_weights``, the product
    = ``attention.project_qkv``. Move d_k: W and the result widen, X does not change.
    """

    title = "Step 1: X · W = Q, K, V"
    hint = "d_k sets how many columns W has, and so how many numbers each token's query, key or value gets."

    def __init__(self, sentence: str = LESSON_SENTENCE, *, d_k: int = LESSON_D_K,
                 d_model: int = LESSON_D_MODEL, seed: int = LESSON_SEED, projection: str = "Q"):
        super().__init__(d_model=d_model, seed=seed)
        self.sentence = _check_sentence(sentence)
        self.tokens = data.tokenize(data.SENTENCES[sentence])
        if projection not in ("Q", "K", "V"):
            raise ValueError(f'projection must be "Q", "K" or "V"; got {projection!r}.')
        self._slider_d_k(d_k)
        self._control("projection", ipw.ToggleButtons(options=["Q", "K", "V"], value=projection,
                                                      description="result"))
        self._figure("product", MatrixProduct(title="", width=1100, height=330))
        self.widget = self._layout([["product"]])
        self.update()

    def compute(self, d_k: int) -> dict:
        x, (w_q, w_k, w_v), (q, k, v) = self._project(self.tokens, d_k)
        return {"x": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": q, "K": k, "V": v}

    def _panels(self):
        d_k, name = self.controls["d_k"].value, self.controls["projection"].value
        r = self.compute(d_k)
        x, w, out = r["x"], r[f"W_{name}"], r[name]
        what = {"Q": "queries", "K": "keys", "V": "values"}[name]
        bx, bw, bo = (nice_bound(np.max(np.abs(m))) for m in (x, w, out))
        return name, x, w, out, (
            ProductPanel(x, self.tokens, None, f"X: embeddings\n{x.shape[0]} × {x.shape[1]}",
                         "feature (d_model)", "token", -bx, bx),
            ProductPanel(w, None, None, f"W_{name}: learned\n{w.shape[0]} × {w.shape[1]}",
                         "column (d_k)", "row (d_model)", -bw, bw),
            ProductPanel(out, self.tokens, None,
                         f"{name} = X·W_{name}: {what}\n{out.shape[0]} × {out.shape[1]}",
                         "feature (d_k)", "token", -bo, bo))

    def _redraw(self) -> None:
        name, x, w, out, panels = self._panels()
        self.figures["product"].draw(*panels, alt=f"X · W_{name} = {name}; {self.settings()}")
        self.readout.value = (
            f"({x.shape[0]} × {x.shape[1]}) · ({w.shape[0]} × {w.shape[1]}) = "
            f"({out.shape[0]} × {out.shape[1]}): "
            f"the inner sizes (d_model = {self.d_model}) cancel; each token's row of X becomes a row of "
            f"{name} with d_k = {out.shape[1]} numbers."
        )

    def still(self):
        from . import plots

        name, x, w, out, _ = self._panels()
        return plots.plot_projection(x, w, out, self.tokens, name)


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
            "query and key; watch the colour scale widen. Hover a cell for its exact score.")

    def __init__(self, sentence: str = LESSON_SENTENCE, *, seq_len: int | None = None, d_k: int = LESSON_D_K,
                 d_model: int = LESSON_D_MODEL, seed: int = LESSON_SEED):
        super().__init__(d_model=d_model, seed=seed)
        self.sentence = _check_sentence(sentence)
        n = len(data.tokenize(data.SENTENCES[sentence]))
        self._slider_seq_len(max(n, SEQ_LEN_MIN) if seq_len is None else seq_len)
        self._slider_d_k(d_k)
        self._figure("scores", Heatmap(colorbar_label="score q·k (dot product)", cmap=style.CMAP_VALUES,
                                       width=620, height=520, decimals=2, annotate_max=12))
        self.widget = self._layout([["scores"]])
        self.update()

    def compute(self, seq_len: int, d_k: int) -> dict:
        """Tokens, Q, K and scores for these settings (what the heatmap shows)."""
        tokens = _tokens_for(self.sentence, seq_len)
        _, _, (q, k, _) = self._project(tokens, d_k)
        return {"tokens": tokens, "q": q, "k": k, "scores": attention.attention_scores(q, k)}

    def _view(self):
        n, d_k = self.controls["seq_len"].value, self.controls["d_k"].value
        r = self.compute(n, d_k)
        return n, d_k, r, nice_bound(np.max(np.abs(r["scores"])))

    def _redraw(self) -> None:
        n, d_k, r, bound = self._view()
        s = r["scores"]
        self.figures["scores"].draw(s, r["tokens"], r["tokens"], vmin=-bound, vmax=bound,
                                    title=f"Raw scores Q·Kᵀ  (seq_len = {n}, d_k = {d_k})",
                                    alt=f"Raw scores Q·Kᵀ; {self.settings()}")
        self.readout.value = (
            f"seq_len = {n}, d_k = {d_k}: {n * n} scores from {s.min():.2f} to {s.max():.2f}, standard "
            f"deviation {s.std():.2f} (√d_k = {math.sqrt(d_k):.2f}). Colour scale ±{bound:g}."
        )

    def still(self):
        from . import plots

        n, d_k, r, bound = self._view()
        return plots.plot_scores(r["scores"], r["tokens"], d_k=d_k, vmin=-bound, vmax=bound,
                                 title=f"Raw scores Q·Kᵀ  (seq_len = {n}, d_k = {d_k})")


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
        self.sentence = _check_sentence(sentence)
        self.tokens = data.tokenize(data.SENTENCES[sentence])
        if not isinstance(scaled, bool):
            raise TypeError(f"scaled must be True or False; got {scaled!r}.")
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
                or not 0.1 <= temperature <= 10:
            raise ValueError(f"temperature must be a number from 0.1 to 10; got {temperature!r}.")
        self._slider_d_k(d_k)
        self._control("scaled", ipw.Checkbox(value=scaled, description="scale by 1/√d_k", indent=False))
        self._control("temperature", ipw.FloatLogSlider(value=float(temperature), base=10, min=-1, max=1,
                                                        step=0.05, description="temperature",
                                                        continuous_update=True))
        self._slider_query(query, len(self.tokens))
        d_ks, raw, scaled_var = _variance_data(self.seed)
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
            "variance": f"Variance of the scores ≈ d_k\nat d_k = {d_k}: {var:.3g} ({how})",
            "weights": (f"Weights softmax(scores{' / √d_k' if scaled else ''}{' / T' if temp_txt else ''})\n"
                        f"d_k = {d_k}{temp_txt}{'' if scaled else ', NOT scaled'}"),
            "row": f"Where “{self.tokens[qi]}” (query {qi}) looks: its weights (sum = 1)",
        }
        return d_k, scaled, temp, qi, r, var, titles

    def _redraw(self) -> None:
        d_k, scaled, temp, qi, r, var, titles = self._view()
        w = r["weights"]
        alt = self.settings()
        self.figures["variance"].mark(d_k, var, shape="s" if scaled else "o", title=titles["variance"],
                                      alt=f"variance against d_k; {alt}")
        self.figures["weights"].draw(w, self.tokens, self.tokens, vmin=0.0, vmax=1.0, highlight_row=qi,
                                     title=titles["weights"], alt=f"attention weights; {alt}")
        self.figures["row"].draw(w[qi], self.tokens, title=titles["row"], alt=f"one query's weights; {alt}")
        top = w.max(axis=1).mean()
        low = int(np.argmin(w[qi]))
        self.readout.value = (
            f"“{self.tokens[qi]}” gives {w[qi].max():.1%} to “{self.tokens[int(np.argmax(w[qi]))]}” and "
            f"{w[qi, low]:.1%} to “{self.tokens[low]}”. Scores entering softmax: standard deviation "
            f"{(r['scores'] * r['factor']).std():.2f}; largest weight per row {top:.2f} on average "
            f"({'nearly one-hot: softmax is saturated' if top > 0.8 else 'spread over keys'}); "
            f"every row sums to {w.sum(axis=1).mean():.3f}."
        )

    def still(self):
        from . import plots

        d_k, scaled, temp, qi, r, var, titles = self._view()
        fig, (ax_var, ax_w, ax_row) = plots.panel_figure(1, 3, width=19, height=5.6)
        v = self.variance
        plots.plot_score_variance(v["d_ks"], v["raw"], v["scaled"], current_d_k=d_k, ax=ax_var,
                                  title=titles["variance"])
        plots.plot_weights(r["weights"], self.tokens, ax=ax_w, title=titles["weights"])
        plots.plot_row_weights(r["weights"][qi], self.tokens, qi, ax=ax_row, title=titles["row"])
        return fig


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
        self.d_v = _check_whole(d_v, "d_v", 1, 64)
        self.sentence = _check_sentence(sentence)
        if seq_len is None:
            seq_len = max(len(data.tokenize(data.SENTENCES[sentence])), SEQ_LEN_MIN)
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be True or False; got {causal!r}.")
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
        tokens = _tokens_for(self.sentence, seq_len)
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
        self.figures["scores"].draw(r["scaled_scores"], toks, toks, vmin=-sb, vmax=sb, mask=mask,
                                    highlight_row=qi, title=titles["scores"], alt=f"scaled scores; {alt}")
        self.figures["weights"].draw(r["weights"], toks, toks, vmin=0.0, vmax=1.0, mask=mask,
                                     highlight_row=qi, title=titles["weights"], alt=f"weights; {alt}")
        self.figures["output"].draw(out, toks, dims, vmin=-ob, vmax=ob, highlight_row=qi,
                                    title=titles["output"], alt=f"output; {alt}")
        self.figures["row"].draw(r["weights"][qi], toks, mask=None if mask is None else mask[qi],
                                 title=titles["row"], alt=f"one query's weights; {alt}")
        v = r["v"]
        self.readout.value = (
            f"Row {qi} of the output is Σ_j weights[{qi}, j]·v_j, a weighted average of the value vectors, "
            f"so it stays in their range: V from {v.min():.2f} to {v.max():.2f}, output from {out.min():.2f} "
            f"to {out.max():.2f}."
        )

    def still(self):
        from . import plots

        n, d_k, qi, causal, r, mask, sb, ob, titles = self._view()
        fig, (a, b, c, d) = plots.panel_figure(2, 2, width=13, height=10.5)
        toks = r["tokens"]
        plots.plot_scores(r["scaled_scores"], toks, scaled=True, d_k=d_k, mask=mask, ax=a, vmin=-sb, vmax=sb,
                          title=titles["scores"])
        plots.plot_weights(r["weights"], toks, mask=mask, ax=b, title=titles["weights"])
        plots.plot_outputs(r["output"], toks, ax=c, vmin=-ob, vmax=ob, title=titles["output"])
        plots.plot_row_weights(r["weights"][qi], toks, qi, mask=None if mask is None else mask[qi], ax=d,
                               title=titles["row"])
        return fig
