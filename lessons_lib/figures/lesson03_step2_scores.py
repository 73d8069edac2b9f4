"""Stills of lesson 03 (scores): the raw scores Q·Kᵀ as a heatmap.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .._checks import check_flag, check_labels, check_positive_int
from .base import check_matrix, heatmap, resolve_mask
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_VALUES,
)

__all__ = ["plot_scores"]


# ------------------------------------------------------------------ the four steps
def plot_scores(scores, tokens, *, scaled: bool = False, d_k: int | None = None, mask=None, ax=None,
                title: str | None = None, cmap=CMAP_VALUES, vmin=None, vmax=None, fmt: str = ".1f") -> Figure:
    """Heatmap of attention scores ``(seq_len, seq_len)``: entry (i, j) = q_i·k_j (notebook 03).

    ``scaled=True`` labels them as Q·Kᵀ/√d_k (step 3a, notebook 04); give ``d_k``
    to print it in the title. Masked cells (``mask`` False, or −∞) are hatched.
    Colour map cividis: scores are unbounded, and the brighter cell is the better match. ``fmt``
    writes the numbers in the cells (the explorer's still: ".2f", as its live heatmap).
    """
    s = check_matrix(scores, "scores", allow_neg_inf=True)
    tokens = check_labels(tokens, s.shape[0], "tokens", "row")
    if s.shape[1] != len(tokens):
        raise ValueError(
            f"scores has shape {s.shape} but there are {len(tokens)} tokens; self-attention scores "
            f"are (seq_len, seq_len). For different keys use heatmap(scores, query_tokens, key_tokens, ...)."
        )
    if d_k is not None:
        check_positive_int(d_k, "d_k")
    scaled = check_flag(scaled, "scaled")
    what = "Q·Kᵀ/√d_k" if scaled else "Q·Kᵀ"
    if title is None:
        title = f"{'Scaled' if scaled else 'Raw'} attention scores {what}"
        if d_k is not None:
            title += f"  (d_k = {d_k})"
    label = r"scaled score $q_i \cdot k_j\,/\sqrt{d_k}$" if scaled else r"score $q_i \cdot k_j$ (dot product)"
    if vmin is None and vmax is None:
        # symmetric around 0, so the middle grey of cividis means "q_i and k_j are unrelated"
        shown = s[resolve_mask(mask, s)]
        vmax = float(np.max(np.abs(shown))) if shown.size and np.max(np.abs(shown)) > 0 else 1.0
        vmin = -vmax
    return heatmap(s, tokens, tokens, title=title, colorbar_label=label, ax=ax, cmap=cmap,
                   vmin=vmin, vmax=vmax, mask=mask, fmt=fmt)
