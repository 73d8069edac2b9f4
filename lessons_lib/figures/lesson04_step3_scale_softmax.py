"""Stills of lesson 04 (scale and softmax): why √d_k.

The weights themselves, which many lessons show, are drawn by :mod:`.attention_maps`.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .._checks import as_float_array
from ..lab.measurements import DEFAULT_D_KS, check_d_ks, measure_score_variance
from .base import new_figure
from .style import (  # the course's look: one definition, shared with the live figures
    CMAP_WEIGHTS,
    FONT_ANNOT,
    FONT_LABEL,
    FONT_TICK,
    FONT_TITLE,
)

__all__ = ["plot_score_variance"]


# ------------------------------------------------------------------ why √d_k
def plot_score_variance(d_ks=DEFAULT_D_KS, variances=None, scaled_variances=None, *, current_d_k=None,
                        ax=None, seed: int = 0, title: str | None = None) -> Figure:
    """var(q·k) against d_k on log-log axes: measured dots on the line var = d_k; scaled dots at 1.

    Without ``variances`` they are measured with :func:`measure_score_variance`.
    ``current_d_k`` is marked with a dashed line. Shapes, not colours alone,
    tell the series apart (circles unscaled, squares scaled). Notebook 04.
    """
    if variances is None:
        d_arr, variances, measured_scaled = measure_score_variance(d_ks, seed=seed)
        scaled_variances = measured_scaled if scaled_variances is None else scaled_variances
    else:
        d_arr = check_d_ks(d_ks).astype(float)
    var = as_float_array(variances, "variances")
    if var.shape != d_arr.shape:
        raise ValueError(f"variances has {var.size} values but d_ks has {d_arr.size}; give one per d_k.")
    if (var <= 0).any():
        raise ValueError("variances must be positive (they are plotted on a log scale).")
    if ax is None:
        fig = new_figure(7.2, 5.0)
        ax = fig.add_subplot()
    grid = np.geomspace(d_arr.min(), d_arr.max(), 50)
    ax.plot(grid, grid, color="0.35", linestyle="-", linewidth=1.5, label="theory: var = d_k")
    ax.plot(d_arr, var, "o", color=matplotlib.colormaps[CMAP_WEIGHTS](0.25), markersize=9,
            label="measured var(q·k), unscaled")
    if scaled_variances is not None:
        sv = as_float_array(scaled_variances, "scaled_variances")
        if sv.shape != d_arr.shape:
            raise ValueError(f"scaled_variances has {sv.size} values but d_ks has {d_arr.size}.")
        ax.axhline(1.0, color="0.35", linestyle=":", linewidth=1.5, label="theory after scaling: var = 1")
        ax.plot(d_arr, sv, "s", color=matplotlib.colormaps[CMAP_WEIGHTS](0.75), markersize=8,
                markeredgecolor="black", label="measured var(q·k/√d_k), scaled")
    if current_d_k is not None:
        ax.axvline(current_d_k, color="black", linestyle="--", linewidth=1.2, label=f"d_k = {current_d_k}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.set_xlabel("d_k (length of each query and key)", fontsize=FONT_LABEL)
    ax.set_ylabel("variance of the scores", fontsize=FONT_LABEL)
    ax.tick_params(labelsize=FONT_TICK)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=FONT_ANNOT, loc="upper left")
    ax.set_title(title or "Why divide by √d_k: var(q·k) grows like d_k", fontsize=FONT_TITLE)
    return ax.get_figure()


