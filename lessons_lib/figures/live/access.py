"""What a screen reader needs from a group of the course's widgets (an explorer, a quiz), that ipywidgets
does not give: one polite live region, and the names, value texts and states of the controls.

ipywidgets 8 draws its controls without accessible names where a label is not a ``<label for>``: a
slider's handle (``role="slider"``) is unnamed and its ``aria-valuetext`` is the slider's *position*
("2" where d_k shows 4), the editable number beside it is unnamed, a ToggleButton does not say whether
it is pressed, a radio group is not a group. :class:`Access` is a small anywidget (``access.js`` beside
this file: no CDN, no build step) placed inside the group's box: in the browser it finds the box
(``scope``, a CSS selector such as ``.lessons-explorer``) and, for each entry of ``controls``, sets on the
elements of that CSS class:

* ``label``: the accessible name (``aria-label``) of a slider's handle, a drop-down, a text field, a
  toggle button, a radio group, or (as ``role="group"``) a row of toggle buttons;
* ``value``: a slider's value text becomes ``"<value> = <what its read-out shows>"`` (``"d_k = 4"``),
  kept equal to the read-out while the slider moves;
* ``options``: the names of a radio group's options (their full text);
* ``status``: the element becomes a status region (``role="status"``, ``aria-live="polite"``);

and toggle buttons expose ``aria-pressed``; a radio group's buttons get one ``name`` (one Tab stop, the
arrow keys pick an option). The arrow keys stay the controls' and figures' inside the box: for each such
key press the focused element carries ``data-lm-suppress-shortcuts``, so JupyterLab and Notebook 7 do not
take it for their own shortcut (moving to another cell); Space, Enter and the other keys keep theirs.

``text`` is what the group's one live region (``role="status"``, ``aria-live="polite"``, visually
hidden) says: set it after a change (an explorer sets it in every redraw). The browser writes it into
the region ``delay_ms`` after the last change, so a slider dragged across ten values is announced once,
at its last value. A live figure inside the box announces there too, in the browser: the read-out of its
cell cursor, a head locked (it sends a ``lessons-announce`` event that bubbles up to the box).

Example::

    access = Access(scope=".lessons-explorer",
                    controls=[{"cls": "lessons-slider-d_k", "label": "d_k: length of each query and key",
                               "value": "d_k"}])
    box = ipywidgets.VBox([slider, figure, access]); box.add_class("lessons-explorer")
    access.text = "d_k = 16: the row of “sat” puts 0.62 on “mat”, its largest weight"
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets as t

from ..._checks import check_label

__all__ = ["Access"]

_HERE = Path(__file__).resolve().parent
DELAY_MS = 400   # the live region speaks this long after the last change (a drag is said once)

_KEYS = {"cls", "label", "value", "options", "status"}


def control_entry(cls: str, label: str = "", *, value: str = "", options=(), status: bool = False) -> dict:
    """One entry of :attr:`Access.controls`, checked: the CSS class of the element(s), their name, ...

    >>> control_entry("lessons-slider-d_k", "d_k: length of each query and key", value="d_k")["value"]
    'd_k'
    """
    if not isinstance(cls, str) or not cls.strip() or any(ch.isspace() for ch in cls):
        raise ValueError(f"cls must be one CSS class name (no spaces); got {cls!r}.")
    if not isinstance(status, bool):
        raise TypeError(f"status must be True or False; got {status!r}.")
    names = [check_label(o, "option") for o in options]
    return {"cls": cls, "label": check_label(label, "label"), "value": check_label(value, "value"),
            "options": names, "status": status}


class Access(anywidget.AnyWidget):
    """One polite live region for a group of widgets, and the names and states of its controls (see the
    module's docstring). Invisible; put it anywhere inside the group's box."""

    _esm = (_HERE / "access.js").read_text(encoding="utf-8")
    _css = (_HERE / "live_figures.css").read_text(encoding="utf-8")
    text = t.Unicode("").tag(sync=True)
    scope = t.Unicode(".lessons-explorer").tag(sync=True)
    controls = t.List(t.Dict()).tag(sync=True)
    delay_ms = t.Int(DELAY_MS).tag(sync=True)

    def __init__(self, *, scope: str = ".lessons-explorer", controls=(), text: str = ""):
        if not isinstance(scope, str) or not scope.startswith("."):
            raise ValueError(f"scope must be a CSS class selector such as '.lessons-explorer'; "
                             f"got {scope!r}.")
        entries = [control_entry(**c) if set(c) <= _KEYS else _bad_entry(c) for c in controls]
        super().__init__(scope=scope, controls=entries, text=check_label(text, "text"))
        self.add_class("lessons-access")

    def say(self, text: str) -> None:
        """What the live region says next (after :data:`DELAY_MS` without another change)."""
        self.text = check_label(text, "text")

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, tuple):
            data = data[0]
        data = dict(data or {})
        data["text/plain"] = self.text or "(the live region of a group of widgets)"
        return data


def _bad_entry(entry) -> dict:
    raise ValueError(f"a control entry has the keys {sorted(_KEYS)}; got {sorted(entry)} in {entry!r}.")
