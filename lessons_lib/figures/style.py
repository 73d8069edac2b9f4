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


def live_style() -> dict:
    """The constants the live figures' JavaScript draws with, injected as ``STYLE`` when it loads.

    >>> live_style()["mask_face"] == MASK_FACE
    True
    """
    return {"tick_px": LIVE_TICK_PX, "label_px": LIVE_LABEL_PX, "title_px": LIVE_TITLE_PX,
            "mask_face": MASK_FACE, "mask_edge": MASK_EDGE, "mask_note": MASK_NOTE}
