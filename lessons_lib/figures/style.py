"""The course's look, shared by the stills (:mod:`lessons_lib.figures`) and the live figures (``live``).

One place for colours, colour maps, font sizes, the look of masked cells and the
rule for which token gets a tick label, so that a still picture on nbviewer and
the live widget in JupyterLab agree pixel for pixel in their colours.

* Colour maps: viridis for probabilities (0..1), cividis for everything else
  (scores, Q/K/V, outputs). Both read in greyscale and with colour-vision
  deficiencies. The live figures receive matplotlib's own 256-entry table of
  the map (:func:`colormap_table`), so their colours are exactly matplotlib's.
* Text: 12 pt tick labels, 13 pt axis labels, 14 pt titles; nothing below 12 px
  on screen.
* Masked cells (True = may attend, False = masked): light grey, hatched in dark
  grey, with a note; never drawn as the number 0.
* Contrast (WCAG 2.1 AA), by the one implementation of WCAG's formula here
  (:func:`relative_luminance`, :func:`contrast_ratio`): a number written in a cell
  is black or white, whichever contrasts more with that cell's colour: white below the
  luminance :data:`INK_SWITCH_LUMINANCE` (:func:`ink_for`, :func:`ink_table`), at least 4.58:1 on
  every colour of every map; lines on white at least 3:1
  (:func:`check_mark_colour`); the cursor and hover frame is black and white together, so
  one of the two contrasts at least 3:1 with any colour beside it; the focus ring (in
  ``live/live_figures.css``) is 3 px of black on the white page.

Importing this module does not import matplotlib (only :func:`colormap_table` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

__all__ = ["CMAP_WEIGHTS", "CMAP_VALUES", "MASK_NOTE", "tick_indices", "tick_labels", "colormap_table"]

FONT_TICK = 12          # tick labels (tokens), points
FONT_LABEL = 13         # axis labels, colorbar label
FONT_TITLE = 14         # titles
FONT_ANNOT = 11         # numbers written inside cells of static figures
MAX_TOKEN_LABELS = 32   # label every token up to this many, every k-th beyond
MAX_LABEL_CHARS = 12    # longer labels are shortened with "…"
MASK_FACE = "#d4d4d4"   # masked cells: light grey ...
MASK_HATCH = "///"      # ... with hatching ...
MASK_EDGE = "#4d4d4d"   # ... in dark grey
MASK_NOTE = "▨ grey hatched = masked (may not attend); not a zero"
# WCAG 2.1 AA: text at least 4.5:1 against what is behind it, marks (lines, frames, focus rings) 3:1
MIN_TEXT_CONTRAST, MIN_MARK_CONTRAST = 4.5, 3.0
INK_DARK, INK_LIGHT = "#000000", "#ffffff"   # the two colours of text on a coloured cell
#: The relative luminance L where black and white text contrast equally with a cell, (L + 0.05) / 0.05 =
#: 1.05 / (L + 0.05): L = √(1.05 · 0.05) − 0.05 ≈ 0.179, both at 4.58:1. Darker cells get white text, the
#: others black, so every colour gets at least 4.58:1 (:func:`ink_for`, :func:`ink_table`). The one switch of
#: the course: a rule of thumb (RGB sum, a mid-grey luminance of 0.5) leaves some colours under 4.5:1.
INK_SWITCH_LUMINANCE = (1.05 * 0.05) ** 0.5 - 0.05
BACKGROUND = "#ffffff"                       # what figures are drawn on
FRAME_WIDTH = 2         # px: the cursor / hover frame, a black ring this wide with a white one beside it
# A query's and a key's marks when both are drawn (lesson 11's rotating pairs): dark enough for text (4.5:1
# on white), and never told apart by colour alone (the query solid, the key dashed).
QUERY_MARK, KEY_MARK = "#1f4e79", "#8c2d04"
# The live figures' text, in CSS pixels (their titles one step larger than a still's 14 pt).
LIVE_TICK_PX, LIVE_LABEL_PX, LIVE_TITLE_PX = FONT_TICK, FONT_LABEL, 15

XLABEL = "key (attended to)"
YLABEL = "query (attending)"
CMAP_WEIGHTS = "viridis"  # probabilities in [0, 1]
CMAP_VALUES = "cividis"   # unbounded values: scores, Q/K/V, outputs
COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma", "gray", "Greys", "RdBu_r", "coolwarm")


def tick_indices(n: int, max_labels: int = MAX_TOKEN_LABELS) -> np.ndarray:
    """Positions that get a tick label: all of ``range(n)`` up to ``max_labels``, else every k-th.

    >>> tick_indices(5).tolist()
    [0, 1, 2, 3, 4]
    >>> tick_indices(128).tolist()[:3]
    [0, 8, 16]
    """
    from .._checks import check_positive_int

    n = check_positive_int(n, "n", minimum=0)
    max_labels = check_positive_int(max_labels, "max_labels", minimum=2)
    if n <= max_labels:
        return np.arange(n)
    step = int(np.ceil(n / (max_labels // 2)))
    return np.arange(0, n, step)


def shorten(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to ``limit`` characters with "…" (token labels on axes).

    >>> shorten("extraordinarily")
    'extraordina…'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tick_labels(labels: Sequence, indices) -> list[str]:
    """The text of each tick: the token, with its position when only every k-th token is labelled.

    >>> tick_labels(["a", "b", "c"], [0, 2])
    ['a (0)', 'c (2)']
    """
    sparse = len(indices) < len(labels)
    out = []
    for i in indices:
        text = shorten(str(labels[int(i)]))
        out.append(f"{text} ({int(i)})" if sparse and text != str(int(i)) else text)
    return out


def check_colormap(name) -> str:
    """``name`` if it is a colour map the course can draw (live and static), else a ValueError.

    >>> check_colormap("viridis")
    'viridis'
    """
    if not isinstance(name, str) or name not in COLORMAPS:
        raise ValueError(
            f"cmap must be one of {', '.join(COLORMAPS)}; got {name!r}. The course uses "
            f"{CMAP_WEIGHTS!r} for weights (0..1) and {CMAP_VALUES!r} for other values."
        )
    return name


@cache
def colormap_table(name: str) -> bytes:
    """matplotlib's colour map ``name`` as 256 RGB triples (768 bytes, uint8), for the live figures.

    Entry i is the colour matplotlib gives to a value in the i-th of 256 equal
    bins of the colour range, so live and static pictures agree exactly.

    >>> len(colormap_table("viridis"))
    768
    """
    import matplotlib

    cmap = matplotlib.colormaps[check_colormap(name)].resampled(256)
    return cmap(np.arange(256), bytes=True)[:, :3].astype(np.uint8).tobytes()


def _rgb(colour) -> np.ndarray:
    """``"#rrggbb"`` or 0-255 ``(r, g, b)`` as three floats in 0..1."""
    if isinstance(colour, str):
        text = colour.lstrip("#")
        if len(text) != 6 or any(ch not in "0123456789abcdefABCDEF" for ch in text):
            raise ValueError(f"a colour must be written '#rrggbb'; got {colour!r}.")
        return np.array([int(text[i:i + 2], 16) for i in (0, 2, 4)], dtype=float) / 255.0
    rgb = np.asarray(colour, dtype=float)
    if rgb.shape[-1:] != (3,):
        raise ValueError(f"a colour must be '#rrggbb' or three numbers 0-255; got {colour!r}.")
    return rgb / 255.0


def relative_luminance(colour) -> float | np.ndarray:
    """WCAG 2.1's relative luminance of an sRGB colour (``"#rrggbb"``, or 0-255 triples, also as an (n, 3)
    array): 0 for black, 1 for white.

    >>> relative_luminance("#000000"), relative_luminance("#ffffff")
    (0.0, 1.0)
    """
    c = _rgb(colour)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lum = linear @ np.array([0.2126, 0.7152, 0.0722])
    return float(lum) if np.ndim(lum) == 0 else lum


def contrast_ratio(a, b) -> float | np.ndarray:
    """WCAG 2.1's contrast ratio of two colours, from 1 (the same) to 21 (black on white).

    >>> round(contrast_ratio("#000000", "#ffffff"), 2), round(contrast_ratio("#777777", "#ffffff"), 2)
    (21.0, 4.48)
    """
    la, lb = relative_luminance(a), relative_luminance(b)
    ratio = (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)
    return float(ratio) if np.ndim(ratio) == 0 else ratio


def light_ink(colour) -> bool | np.ndarray:
    """Whether text on ``colour`` (one colour, or an (n, 3) array of 0-255 triples) is white: its luminance
    is below :data:`INK_SWITCH_LUMINANCE`, where white contrasts more than black.

    >>> bool(light_ink("#440154")), bool(light_ink("#fde725"))
    (True, False)
    """
    return relative_luminance(colour) < INK_SWITCH_LUMINANCE


def ink_for(colour) -> str:
    """The text colour for a cell of ``colour``: black or white, whichever contrasts more (≥ 4.58:1 always).

    >>> ink_for("#fde725"), ink_for("#440154")
    ('#000000', '#ffffff')
    """
    return INK_LIGHT if light_ink(colour) else INK_DARK


@cache
def ink_table(name: str) -> bytes:
    """For each of the 256 colours of map ``name`` (:func:`colormap_table`), the ink of a number written on
    it: 0 = black, 1 = white (256 bytes, for the live figures; :func:`ink_for`'s rule).

    >>> ink_table("viridis")[0], ink_table("viridis")[255]
    (1, 0)
    """
    rgb = np.frombuffer(colormap_table(name), dtype=np.uint8).reshape(256, 3)
    return light_ink(rgb).astype(np.uint8).tobytes()


def check_mark_colour(colour, name: str = "color", on: str = BACKGROUND) -> str:
    """``colour`` if a line or mark of it stands out from ``on`` by at least 3:1 (WCAG 1.4.11), else a
    ValueError that says how far it falls short.

    >>> check_mark_colour("#595959")
    '#595959'
    """
    ratio = contrast_ratio(colour, on)
    if ratio < MIN_MARK_CONTRAST:
        raise ValueError(f"{name} {colour} stands out from the background {on} by {ratio:.2f}:1; lines and "
                         f"marks need at least {MIN_MARK_CONTRAST:g}:1 (WCAG 1.4.11): pick a darker colour, "
                         f"e.g. viridis below 0.6.")
    return colour


def live_style() -> dict:
    """The constants the live figures' JavaScript draws with, injected as ``STYLE`` when it loads.

    >>> live_style()["mask_face"] == MASK_FACE
    True
    """
    return {"tick_px": LIVE_TICK_PX, "label_px": LIVE_LABEL_PX, "title_px": LIVE_TITLE_PX,
            "mask_face": MASK_FACE, "mask_edge": MASK_EDGE, "mask_note": MASK_NOTE,
            "ink_dark": INK_DARK, "ink_light": INK_LIGHT, "background": BACKGROUND,
            "frame_width": FRAME_WIDTH, "query_mark": QUERY_MARK, "key_mark": KEY_MARK}
