"""What the explorers of notebooks 06 and 07 share: controls, one redraw per change, errors shown.

An explorer is standard ipywidgets controls around live figures
(:mod:`lessons_lib.live_figures`): the kernel computes with the library and sends
numbers; the browser draws. Each explorer has

* ``.widget``: the box to display (the explorer itself displays as it);
* ``.controls``: name → control; each control carries the CSS class
  ``lessons-<slider|toggle|checkbox|control>-<name>`` (the browser test finds sliders by it);
* ``.set(**values)``: drive it from code, one redraw (unknown names and values a
  control cannot take raise, instead of being clamped silently);
* ``.settings()``: the controls' values in words (``"n_heads = 8, seq_len = 12"``), which
  the figures carry as their alt text (screen readers, and the browser test);
* ``.last_update_ms`` and ``.error_box`` (an error in a redraw is shown in red, with
  its message, and kept in ``.last_error``);
* on a page without a kernel (GitHub, nbviewer): a still picture (matplotlib PNG,
  :meth:`still`) and a sentence (:meth:`text`).

The explorer's height does not depend on the slider values (fixed-size figures, one-line
read-outs), so moving a slider never makes the page jump.

This mirrors the ``Explorer`` base of the explorers of notebooks 02–05 (issue 6), with the
same method names, so that the two can become one class when both are merged.
"""

from __future__ import annotations

import base64
import html
import io
import time

import ipywidgets as widgets
import numpy as np

__all__ = ["LiveExplorer"]

SLIDER_WIDTH = "250px"   # four sliders side by side in JupyterLab at 1280 px


class LiveExplorer:
    """Base of an explorer: register controls, build ``.widget``, implement ``_redraw`` and ``still``."""

    title = ""
    hint = ""

    def __init__(self):
        self.controls: dict[str, widgets.ValueWidget] = {}
        self.error_box = widgets.HTML(value="")
        self.error_box.add_class("lessons-error")
        self.readout = widgets.HTML(value="", layout=widgets.Layout(height="24px", overflow="hidden"))
        self.readout.add_class("lessons-readout")
        self.last_update_ms = float("nan")
        self.last_error: BaseException | None = None
        self._quiet = False
        self.widget: widgets.Widget | None = None

    # -- building
    def _control(self, name: str, control, *, redraw: bool = True):
        """Register ``control`` as ``name``; a change redraws (unless ``redraw=False``)."""
        kind = type(control).__name__
        kind = ("slider" if "Slider" in kind else "checkbox" if kind == "Checkbox"
                else "toggle" if kind == "ToggleButtons" else "control")
        control.add_class(f"lessons-{kind}-{name}")
        if hasattr(control.style, "description_width"):
            control.style.description_width = "initial"
        if kind == "slider":
            control.layout.width = SLIDER_WIDTH
        self.controls[name] = control
        if redraw:
            control.observe(lambda change: self._changed(name, change["new"]), names="value")
        return control

    def _box(self, *children) -> widgets.VBox:
        """Header (title · hint), the children, the error box."""
        header = widgets.HTML(f"<b>{html.escape(self.title)}</b> · <span>{html.escape(self.hint)}</span>")
        header.add_class("lessons-explorer-header")
        box = widgets.VBox([header, *children, self.error_box])
        box.add_class("lessons-explorer")
        return box

    # -- running
    def _changed(self, name: str, value) -> None:
        self._sync({name: value})   # first, so a redraw never sees a stale range
        if not self._quiet:
            self.update()

    def update(self) -> None:
        """Redraw from the controls' values now; an error goes to ``.error_box``."""
        start = time.perf_counter()
        try:
            self._redraw()
        except Exception as exc:  # shown to the learner, not swallowed
            self.last_error = exc
            self.error_box.value = (
                '<div class="lessons-error-message" style="color:#b00020;font-weight:bold;'
                f'white-space:pre-wrap">The figure could not be redrawn: {html.escape(type(exc).__name__)}: '
                f"{html.escape(str(exc))}</div>")
        else:
            self.last_error = None
            if self.error_box.value:
                self.error_box.value = ""
        finally:
            self.last_update_ms = (time.perf_counter() - start) * 1000.0

    def _redraw(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _sync(self, values: dict) -> None:
        """Adjust dependent controls (e.g. a slider's range) after the controls in ``values`` changed."""

    def settings(self) -> str:
        """The controls' values in words, e.g. ``"n_heads = 8, seq_len = 12"`` (the figures' alt text)."""
        return ", ".join(f"{name} = {c.value}" for name, c in self.controls.items()
                         if isinstance(c, (widgets.IntSlider, widgets.SelectionSlider)))

    def set(self, **values) -> None:
        """Set several controls at once (one redraw), e.g. ``.set(n_heads=4, seq_len=16)``."""
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no control {', '.join(unknown)}; "
                            f"it has {', '.join(self.controls)}.")
        self._quiet = True
        try:
            for name, control in self.controls.items():   # in the controls' order: seq_len before query
                if name in values:
                    _check_value(name, control, values[name])
                    control.value = values[name]
                    self._sync({name: values[name]})
        finally:
            self._quiet = False
        self.update()

    # -- pages without a kernel
    def still(self):  # pragma: no cover - overridden
        """The explorer's present picture as a matplotlib figure."""
        raise NotImplementedError

    def text(self) -> str:
        """The sentence shown where the live widget cannot be (GitHub, nbviewer, nbval)."""
        return (f"{type(self).__name__}: {self.title} ({self.settings()}). The picture is its starting view; "
                f"run the notebook in JupyterLab to move the sliders.")

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        """The live widget for JupyterLab, plus a still picture and a sentence for static pages."""
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        bundle = dict(bundle)
        out = io.BytesIO()
        self.still().savefig(out, format="png", dpi=72)   # its layout already fits it
        bundle["text/plain"] = self.text()
        bundle["image/png"] = base64.b64encode(out.getvalue()).decode("ascii")
        return bundle


def _check_value(name: str, control, value) -> None:
    """Refuse a value the control would clamp or ignore, naming what it accepts."""
    if isinstance(control, (widgets.SelectionSlider, widgets.ToggleButtons, widgets.Dropdown)):
        labelled = control.options and isinstance(control.options[0], tuple)   # (label, value) pairs
        allowed = [v for _, v in control.options] if labelled else list(control.options)
        if isinstance(value, bool) or value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}.")
    elif isinstance(control, widgets.IntSlider):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be a whole number; got {value!r}.")
        if not control.min <= value <= control.max:
            raise ValueError(f"{name} must be from {control.min} to {control.max}; got {value}.")
    elif isinstance(control, widgets.Checkbox) and not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}.")
