"""The still figures of notebook 12 (generation): what GitHub, nbviewer and the explorers' stills show.

* :func:`plot_generation_step`: step t of generation with the KV cache: the weights so far (the rows not yet
  generated hatched, the new row framed), the cached keys and values, and the dot products each step costs
  with the cache and recomputing everything.
* :func:`plot_kv_memory`: a model's KV cache against the context, beside its weights, with the setting marked.
* :func:`plot_gqa_heads`: every query head's weights after pooling the key/value heads, each titled with the
  key/value head it reads.
* :func:`plot_window_run`: a head with a sink under full causal attention, a sliding window, and the window
  with sinks, with how far each output is from full attention; :func:`plot_ring_buffer`: which token each
  slot of a rolling cache holds, step by step; :func:`plot_window_view`: the window explorer's view (the
  weights under the window, the rolling cache, the distance), one query framed.
* :func:`plot_decode_times`: one run's time per token with the cache and recomputing, against the context.

What is drawn is computed in :mod:`lessons_lib.lab.generation`, :mod:`lessons_lib.lab.kv_memory` and
:mod:`lessons_lib.core.decoding`.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int_in_range
from ..core.decoding import kv_head_of
from ..lab import generation as lab
from ..lab.kv_memory import KVMemory, kv_cache_bytes, size_text
from . import style
from .attention_maps import plot_head_grid
from .base import draw_heatmap, frame_row, new_figure

__all__ = ["plot_generation_step", "plot_cache_work", "plot_kv_memory", "plot_gqa_heads", "plot_window_run",
           "plot_window_view", "plot_ring_buffer", "plot_decode_times", "CACHED_COLOUR", "RECOMPUTED_COLOUR"]

#: The two ways of generating, in every figure of the lesson: dark enough for text on white, and also told
#: apart by line style (the cache solid, recomputing dashed).
CACHED_COLOUR, RECOMPUTED_COLOUR = style.QUERY_MARK, style.KEY_MARK


def _generated(trace: lab.GenerationTrace, step: int) -> np.ndarray:
    """(L, L) bool: the cells computed by step ``step`` (rows 0 … step, causal)."""
    rows = np.arange(trace.n)[:, None] <= step
    return rows & (np.arange(trace.n)[None, :] <= np.arange(trace.n)[:, None])


def plot_cache_work(trace: lab.GenerationTrace, step: int, *, ax=None):
    """Dot products per step with the cache (one new row) and recomputing (every row again), steps
    0 … L − 1, the current step marked."""
    if not isinstance(trace, lab.GenerationTrace):
        raise TypeError(f"Expected what trace_generation returns; got {type(trace).__name__}.")
    step = check_int_in_range(step, "step", 0, trace.n - 1)
    if ax is None:
        ax = new_figure(6.0, 4.2).add_subplot()
    steps = np.arange(trace.n)
    cached = [trace.dot_products(t, cached=True) for t in steps]
    again = [trace.dot_products(t, cached=False) for t in steps]
    ax.plot(steps, cached, color=CACHED_COLOUR, marker="o", linewidth=1.8, label="with the cache: one row")
    ax.plot(steps, again, color=RECOMPUTED_COLOUR, marker="s", linestyle="--", linewidth=1.8,
            label="recomputing: every row again")
    ax.axvline(step, color="black", linestyle=":", linewidth=1.2)
    ax.set_xlabel("generation step (the new token's position)", fontsize=style.FONT_LABEL)
    ax.set_ylabel("query·key dot products this step", fontsize=style.FONT_LABEL)
    ax.set_title("Work per step", fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=style.FONT_TICK, loc="upper left")
    return ax.get_figure()


#: What a hatched cell means in the generation figures: a row (or a cached token) that does not exist yet.
NOT_YET = "▨ grey hatched = not computed yet, or a future key; not a zero"


def plot_generation_step(trace: lab.GenerationTrace, step: int, *, cached: bool = True):
    """Step ``step`` of generating ``trace.tokens``: the weights computed so far (later rows and future keys
    hatched; the new row framed), the keys and values in the cache, and the work per step."""
    if not isinstance(trace, lab.GenerationTrace):
        raise TypeError(f"Expected what trace_generation returns; got {type(trace).__name__}.")
    step = check_int_in_range(step, "step", 0, trace.n - 1)
    fig = new_figure(15.0, 10.5)
    top, bottom = fig.add_gridspec(2, 1, height_ratios=[1.25, 1])
    spec = top.subgridspec(1, 3, width_ratios=[1.6, 1, 1], wspace=0.12)
    left, keys, values = (fig.add_subplot(part) for part in spec)
    tokens = trace.tokens
    how = "the new row only" if cached else f"all {step + 1} rows again"
    draw_heatmap(left, trace.weights, tokens, tokens, title=f"Step {step}: “{tokens[step]}” attends\n({how})",
                 colorbar_label="attention weight", cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0,
                 mask=_generated(trace, step), annotate=False, fmt=".2f", xlabel=style.XLABEL,
                 ylabel=style.YLABEL, mask_note=NOT_YET,
                 hidden_text="not computed yet, or a future key")
    frame_row(left, step, inner=True)
    in_cache = (np.arange(trace.n) <= step)[:, None] & np.ones((1, trace.k.shape[1]), bool)
    lim = float(np.abs([trace.k, trace.v]).max())
    features = [str(j) for j in range(trace.k.shape[1])]
    for ax, matrix, name in ((keys, trace.k, "K"), (values, trace.v, "V")):
        draw_heatmap(ax, matrix, tokens, features, title=f"{name} cache: {step + 1} of {trace.n} rows",
                     colorbar_label=f"{name} value", cmap=style.CMAP_VALUES, vmin=-lim, vmax=lim,
                     mask=in_cache, annotate=False, fmt=".2f", xlabel="feature (d_head)", ylabel="token",
                     mask_note=None, hidden_text="not computed yet")
    plot_cache_work(trace, step, ax=fig.add_subplot(bottom))
    return fig


def plot_kv_memory(memory: KVMemory, *, ax=None):
    """A model's KV cache in GB against the context (log axes), at its batch and dtype, beside the memory of
    its weights; the setting marked. A sliding window flattens the line at the window."""
    if not isinstance(memory, KVMemory):
        raise TypeError(f"Expected what kv_cache_memory returns; got {type(memory).__name__}.")
    s = memory.shape
    if ax is None:
        ax = new_figure(7.6, 4.8).add_subplot()
    top = max(4 * memory.tokens, 2 * s.context, 1024)
    tokens = 2 ** np.arange(7, int(np.ceil(np.log2(top))) + 1)      # 128, 256, …: whole contexts
    gb = [kv_cache_bytes(s.layers, s.n_kv_heads, s.d_head, int(t), memory.batch, memory.dtype,
                         window=s.window) / 1e9 for t in tokens]
    ax.plot(tokens, gb, color=CACHED_COLOUR, linewidth=2.0, label=f"KV cache ({s.n_kv_heads} KV heads)")
    if s.kind != "multi-head":
        mha = [g * s.n_heads / s.n_kv_heads for g in gb]
        ax.plot(tokens, mha, color=RECOMPUTED_COLOUR, linestyle="--", linewidth=1.8,
                label=f"with {s.n_heads} KV heads (one per query head)")
    ax.plot(tokens, np.full(len(tokens), memory.weights_gb), color="black", linestyle=":", linewidth=1.4,
            label=f"the weights: {size_text(memory.weights_bytes)}")     # a series: its table has it too
    ax.plot([memory.tokens], [memory.gb], "o", color="black", markersize=9, fillstyle="none",
            markeredgewidth=2, label=f"{memory.tokens:,} tokens: {size_text(memory.bytes)}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("context (tokens)", fontsize=style.FONT_LABEL)
    ax.set_ylabel("GB", fontsize=style.FONT_LABEL)
    window = f", window {s.window:,}" if s.window else ""
    ax.set_title(f"{s.name}: KV cache, batch {memory.batch}, {memory.dtype}{window}",
                 fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=style.FONT_TICK - 1, loc="upper left")
    return ax.get_figure()


def plot_gqa_heads(weights, tokens, n_kv_heads: int, *, title: str | None = None):
    """Every query head's weights ``(n_heads, L, L)``, each titled with the key/value head it shares."""
    weights = np.asarray(weights)
    owner = kv_head_of(weights.shape[0], n_kv_heads)
    return plot_head_grid(weights, tokens, head_names=[f"KV {g}" for g in owner],
                          title=title or f"{weights.shape[0]} query heads sharing {n_kv_heads} key/value "
                                         f"head{'s' if n_kv_heads > 1 else ''}")


#: What a hatched cell means under a window: a key out of reach (evicted from the cache) or in the future.
OUT_OF_REACH = "▨ grey hatched = out of reach: evicted by the window, or a future token; not a zero"


def plot_window_run(run: lab.WindowRun):
    """The weights of full attention, a sliding window and the window with sinks (keys out of reach
    hatched), and how far each windowed output is from full attention, position by position."""
    if not isinstance(run, lab.WindowRun):
        raise TypeError(f"Expected what window_experiment returns; got {type(run).__name__}.")
    n = run.weights["full"].shape[0]
    labels = [str(i) for i in range(n)]
    fig = new_figure(16.0, 10.0)
    top, bottom = fig.add_gridspec(2, 1, height_ratios=[1.2, 1])
    axes = [fig.add_subplot(spec) for spec in top.subgridspec(1, 3)]
    titles = {"full": "Full causal attention", "window": f"Window of {run.window}",
              "window + sinks": f"Window of {run.window} + {run.sinks} sink{'s' if run.sinks != 1 else ''}"}
    for k, (ax, (name, title)) in enumerate(zip(axes, titles.items())):
        draw_heatmap(ax, run.weights[name], labels, labels, title=title, colorbar_label="attention weight",
                     cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0, mask=run.masks[name], annotate=False,
                     fmt=".2f", xlabel="key position", ylabel="query position" if k == 0 else "",
                     colorbar=k == 2, mask_note=OUT_OF_REACH if k == 0 else None)
    ax = fig.add_subplot(bottom)
    for name, colour, line in (("window", RECOMPUTED_COLOUR, "--"), ("window + sinks", CACHED_COLOUR, "-")):
        ax.plot(np.arange(n), 100 * run.difference(name), color=colour, linestyle=line, linewidth=1.8,
                label=titles[name].lower().replace("window", "a window", 1))
    ax.axvline(run.window + run.sinks - 0.5, color="black", linestyle=":", linewidth=1.0)
    ax.set_xlabel("position of the query", fontsize=style.FONT_LABEL)
    ax.set_ylabel("distance from full attention\n(% of a value's length)", fontsize=style.FONT_LABEL)
    ax.set_title("What the window changes in each output", fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=style.FONT_TICK)
    return fig


def plot_window_view(run: lab.WindowRun, query: int):
    """What the window explorer shows: the weights under the window with its sinks (the row of ``query``
    framed, keys out of reach hatched), the rolling cache step by step (the same row framed: the positions
    its slots hold then) and each output's distance from full attention, with and without the sinks."""
    query = check_int_in_range(query, "query", 0, 511)           # window_experiment's longest sequence
    if not isinstance(run, lab.WindowRun):
        raise TypeError(f"Expected what window_experiment returns; got {type(run).__name__}.")
    n = run.weights["full"].shape[0]
    if query >= n:
        raise ValueError(f"query = {query} is past the last of the run's {n} positions (0 … {n - 1}).")
    labels = [str(i) for i in range(n)]
    fig = new_figure(18.0, 6.6)
    weights_ax, ring_ax, distance_ax = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.3, 0.9, 1.1]})
    name = "window + sinks"
    s = "s" if run.sinks != 1 else ""
    draw_heatmap(weights_ax, run.weights[name], labels, labels,
                 title=f"Window of {run.window} + {run.sinks} sink{s}: query {query} framed",
                 colorbar_label="attention weight", cmap=style.CMAP_WEIGHTS, vmin=0.0, vmax=1.0,
                 mask=run.masks[name], annotate=False, fmt=".2f", xlabel="key position",
                 ylabel="query position", mask_note=OUT_OF_REACH, hidden_text="out of reach")
    frame_row(weights_ax, query, inner=True)
    plot_ring_buffer(lab.ring_buffer(n, run.window, run.sinks), sinks=run.sinks, ax=ring_ax)
    ring_ax.set_title(f"Rolling cache: {run.sinks + run.window} slots\n(row {query}: what query {query} "
                      f"sees)", fontsize=style.FONT_TITLE)
    frame_row(ring_ax, query, inner=True)
    for key, colour, line in (("window", RECOMPUTED_COLOUR, "--"), (name, CACHED_COLOUR, "-")):
        label = (f"window {run.window}, no sinks" if key == "window"
                 else f"window {run.window} + {run.sinks} sink{s}")
        distance_ax.plot(np.arange(n), 100 * run.difference(key), color=colour, linestyle=line, linewidth=1.8,
                         label=label)
    distance_ax.axvline(query, color="black", linestyle=":", linewidth=1.2)
    distance_ax.set_xlabel("query position", fontsize=style.FONT_LABEL)
    distance_ax.set_ylabel("% of a value's length", fontsize=style.FONT_LABEL)
    distance_ax.set_title("Distance from full attention", fontsize=style.FONT_TITLE)
    distance_ax.tick_params(labelsize=style.FONT_TICK)
    distance_ax.grid(True, alpha=0.3)
    distance_ax.legend(fontsize=style.FONT_TICK)
    return fig


def plot_ring_buffer(held, *, sinks: int = 0, ax=None):
    """Which position each slot of a rolling KV cache holds after each step (``ring_buffer``): one row per
    step, one column per slot; empty slots hatched."""
    held = np.asarray(held)
    steps, slots = held.shape
    if ax is None:
        ax = new_figure(max(6.0, 0.5 * slots + 3.0), max(4.5, 0.26 * steps + 2.0)).add_subplot()
    names = [f"sink {j}" if j < sinks else f"slot {j}" for j in range(slots)]
    draw_heatmap(ax, np.where(held < 0, 0, held).astype(float), [str(s) for s in range(steps)], names,
                 title="Rolling KV cache: the position in each slot",
                 colorbar_label="position of the token held",
                 cmap=style.CMAP_VALUES, vmin=0.0, vmax=float(max(steps - 1, 1)), mask=held >= 0,
                 annotate=steps * slots <= 400, fmt=".0f", xlabel="cache slot", ylabel="generation step",
                 mask_note="▨ grey hatched = an empty slot (nothing cached there yet)",
                 hidden_text="empty slot")
    return ax.get_figure()


def plot_decode_times(times: lab.DecodeTimes, *, ax=None):
    """One run's time per generated token against the context, with the cache and recomputing (log axes)."""
    if not isinstance(times, lab.DecodeTimes):
        raise TypeError(f"Expected what measure_decode returns; got {type(times).__name__}.")
    if ax is None:
        ax = new_figure(7.0, 4.6).add_subplot()
    cached, again = times.slopes()
    ax.plot(times.contexts, times.cached * 1e3, color=CACHED_COLOUR, marker="o", linewidth=1.8,
            label=f"with the cache (∝ context^{cached:.2f})")
    ax.plot(times.contexts, times.recomputed * 1e3, color=RECOMPUTED_COLOUR, marker="s", linestyle="--",
            linewidth=1.8, label=f"recomputing (∝ context^{again:.2f})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context (tokens already generated)", fontsize=style.FONT_LABEL)
    ax.set_ylabel("ms per new token (this run)", fontsize=style.FONT_LABEL)
    ax.set_title(f"Time per token, d_model = {times.d_model}, {times.n_heads} heads",
                 fontsize=style.FONT_TITLE)
    ax.tick_params(labelsize=style.FONT_TICK)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=style.FONT_TICK)
    return ax.get_figure()
