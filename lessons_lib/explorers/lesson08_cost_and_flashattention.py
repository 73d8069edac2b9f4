"""Live figures of notebook 08: the cost against N, and FlashAttention's tiles one by one.

* :class:`ScalingExplorer`: measured time and memory against N (log-log, fitted
  slopes). The N slider moves a marker and says, at once, how many scores that is,
  what they weigh, and what the fitted lines predict; the *Measure up to N* button
  measures for real (refusing sizes that would not fit, before allocating).
* :class:`TileExplorer`: one block of queries of :func:`lessons_lib.flash_attention`,
  tile by tile. The tile slider moves markers on the running maximum, the running sum
  and the output, and a table says what that tile did to each row.

Built from :mod:`lessons_lib.figures.live` (drawn in the browser; a slider move sends a
few numbers). Each explorer also shows a still picture and a sentence on pages without a
kernel (GitHub, nbviewer), drawn by :mod:`lessons_lib.figures.lesson08_cost_and_flashattention`.
Controls carry the CSS class ``lessons-slider-<name>`` / ``lessons-button-<name>``; each live figure's
``alt`` text names the current setting.
"""

from __future__ import annotations

import html

import ipywidgets as ipw
import numpy as np

from .._checks import SizeLimitError, check_positive_int, format_bytes, is_whole_number
from ..core.flash import flash_attention_steps
from ..figures import lesson08_cost_and_flashattention as cost_plots
from ..figures.base import plain_text
from ..figures.live import LinePlot
from ..lab import cost
from .base import ExplorerBase, error_html

__all__ = ["ScalingExplorer", "TileExplorer"]

#: The N slider: 128 … 16384 in steps of 128; the button measures at the powers of two up to N (and N).
N_MIN, N_MAX, N_STEP = 128, 16384, 128
N_OPTIONS = tuple(2**i for i in range(7, 15))    # where the button measures


# ------------------------------------------------------------------ time and memory against N
class ScalingExplorer(ExplorerBase):
    """Measured time and memory of attention against N, with the fitted log-log lines (notebook 08).

    ``table``: a :class:`~lessons_lib.lab.cost.CostTable` (from ``cost.measure_scaling``); the
    explorer starts from it and adds what the *Measure up to N* button measures (same
    methods, same block size for the tiled one, same number of threads). ``n``:
    the slider's starting N. The slider itself only counts and predicts (instant); the
    button runs the methods of ``table`` at every power of two up to N that is not
    measured yet, with a progress bar, refusing at once a size that would not fit.
    """

    title = "The cost of attention against N"
    hint = "drag N to count and predict; press the button to measure"
    slider_width = None   # one slider: the front end's width

    def __init__(self, table: cost.CostTable, *, n: int = 2048):
        super().__init__()
        if not isinstance(table, cost.CostTable) or not table.measurements:
            raise TypeError("table must be a CostTable with measurements, from cost.measure_scaling(...).")
        self.table = table
        self.methods = table.methods
        first = table.measurements[0]
        self.d, self.dtype = first.d, first.dtype
        self.block_size = next((m.block_size for m in table.measurements if m.block_size), None)
        self.threads = first.threads
        if not is_whole_number(n) or not N_MIN <= n <= N_MAX or n % N_STEP:
            raise ValueError(f"n must be a multiple of {N_STEP} from {N_MIN} to {N_MAX}; got {n!r}.")
        self.slider = self._control("seq_len", ipw.IntSlider(value=int(n), min=N_MIN, max=N_MAX, step=N_STEP,
                                                             description="N (seq_len)",
                                                             continuous_update=True),
                                    label="N (seq_len): number of tokens")
        self.button = ipw.Button(description="Measure up to N", icon="play", layout=ipw.Layout(width="auto"),
                                 tooltip="time and memory of each method at every N up to this one")
        self.button.add_class("lessons-button-measure")
        self.methods_box = ipw.HTML()    # beside .readout (what N costs): each method's time and memory
        self.progress = ipw.Output()
        size = {"log_x": True, "log_y": True, "width": 520, "height": 330}
        self.time_plot = self._figure("time", LinePlot(title="time per call (ms)", xlabel="N (tokens)",
                                                       ylabel="ms", **size))
        self.memory_plot = self._figure("memory", LinePlot(title="peak extra memory (MB)",
                                                           xlabel="N (tokens)", ylabel="MB", **size))
        for fig in (self.time_plot, self.memory_plot):
            fig.add_class("lessons-live")
        self.button.on_click(lambda _: self.measure())
        wrap = ipw.Layout(flex_flow="row wrap")   # 400 % zoom: the button goes under the slider
        self.widget = self._box(ipw.HBox([self.slider, self.button], layout=wrap), self.error_box,
                                self.progress,
                                self._row(["time", "memory"]),
                                ipw.HBox([self.readout, self.methods_box],
                                         layout=ipw.Layout(justify_content="space-around",
                                                           flex_flow="row wrap")))
        self._draw_series()
        self.update()

    # -- what the slider shows
    def settings(self) -> str:
        return f"seq_len = {self.slider.value}"

    def readout_line(self) -> str:
        """Both tables under the plots: what N costs, then each method's time and memory."""
        return f"{plain_text(self.readout.value)}; {plain_text(self.methods_box.value)}"

    def _fit(self, method: str, what: str):
        """(slope, intercept) of log y = slope · log N + intercept, or None with < 2 points."""
        n = self.table.sizes(method)
        y = self.table.seconds(method) * 1e3 if what == "time" else self.table.memory(method) / cost.MB
        keep = np.isfinite(y) & (y > 0)
        if keep.sum() < 2 or len(np.unique(n[keep])) < 2:
            return None
        return np.polyfit(np.log(n[keep]), np.log(y[keep]), 1)

    def _value(self, method: str, what: str, n: int) -> tuple[float | None, bool]:
        """(value at n, measured?) in ms or MB: measured if it was, else from the fitted line."""
        for m in self.table.measurements:
            if m.method == method and m.n == n:
                if what == "time":
                    return m.seconds * 1e3, True
                if m.peak_bytes is not None:
                    return m.peak_bytes / cost.MB, True
        fit = self._fit(method, what)
        return (float(np.exp(fit[1]) * n ** fit[0]), False) if fit is not None else (None, False)

    def _draw_series(self) -> None:
        look = {"naive numpy": ("o", False), "tiled numpy": ("s", True), "torch SDPA": ("o", True),
                "torch SDPA math": ("s", False)}
        for fig, what in ((self.time_plot, "time"), (self.memory_plot, "memory")):
            series = []
            for method in self.methods:
                color = cost_plots.METHOD_LOOK.get(method, ("#333333",))[0]
                marker, dash = look.get(method, ("o", False))
                n = self.table.sizes(method).astype(float)
                y = (self.table.seconds(method) * 1e3 if what == "time"
                     else self.table.memory(method) / cost.MB)
                keep = np.isfinite(y) & (y > 0)
                if not keep.any():
                    continue
                fit = self._fit(method, what)
                label = method if fit is None else f"{method}: slope {fit[0]:.2f}"
                series.append({"label": label, "x": n[keep], "y": y[keep], "mode": "markers",
                               "marker": marker, "color": color})
                if fit is not None:  # the fitted line, drawn across the slider's range
                    grid = np.array([N_MIN, N_MAX], dtype=float)
                    series.append({"label": "", "x": grid, "y": np.exp(fit[1]) * grid ** fit[0],
                                   "mode": "line", "color": color, "dash": dash})
            fig.set_series(series)

    def _redraw(self) -> None:
        """Move the markers to the slider's N and write what that N costs (no measuring)."""
        n = self.slider.value
        cells = [("N", f"{n:,} tokens"), ("scores per head", f"{cost.score_count(n):,}"),
                 (f"their memory ({self.dtype})", format_bytes(cost.score_memory(n, dtype=self.dtype))),
                 (f"FLOPs (4·N²·d, d = {self.d})", f"{cost.attention_flops(n, self.d):,.0f}")]
        count = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in cells)
        count = f"<table>{count}</table>"
        rows = []
        for method in self.methods:
            t, t_measured = self._value(method, "time", n)
            mem, m_measured = self._value(method, "memory", n)
            guess = {True: "", False: " (predicted)"}
            time_text = "–" if t is None else f"{t:,.1f} ms" + guess[t_measured]
            mem_text = "–" if mem is None else format_bytes(mem * cost.MB) + guess[m_measured]
            rows.append(f"<tr><td>{html.escape(method)}</td><td>{time_text}</td><td>{mem_text}</td></tr>")
        table = ("<table><tr><th>method</th><th>time per call</th><th>peak extra memory</th></tr>"
                 + "".join(rows) + "</table>")
        self.readout.value = count
        self.methods_box.value = table
        sizes = sorted({m.n for m in self.table.measurements})
        measured = (f"measured at {len(sizes)} sizes, N = {sizes[0]:,} to {sizes[-1]:,}" if len(sizes) > 1
                    else f"measured at N = {sizes[0]:,} only")
        for fig, what in ((self.time_plot, "time"), (self.memory_plot, "memory")):
            y, _ = self._value(self.methods[0], what, n)
            fig.mark(n, y if y is not None and y > 0 else None,
                     alt=f"{fig.title} against N; {self.settings()}: {measured}; at N = {n:,}, "
                         f"{self._at(what, n)}")
        time_text = self._at("time", n)
        self.summary = (f"{cost.score_count(n):,} scores per head, "
                        f"{format_bytes(cost.score_memory(n, dtype=self.dtype))}; {time_text}")

    def _at(self, what: str, n: int) -> str:
        """Each method's time (ms) or memory at ``n`` in words, measured or predicted."""
        parts = []
        for method in self.methods:
            value, measured = self._value(method, what, n)
            if value is None:
                continue
            shown = f"{value:,.1f} ms" if what == "time" else format_bytes(value * cost.MB)
            parts.append(f"{method} {shown}{'' if measured else ' (predicted)'}")
        return ", ".join(parts) or "nothing measured"

    # -- the button
    def measure(self) -> None:
        """Measure every method at the powers of two up to the slider's N, and at N, where not measured yet.

        A method whose run would not fit the memory limit at some N is left out there, and
        the guard's message is shown (in red) instead.
        """
        n_max = self.slider.value
        done = {m.n for m in self.table.measurements}
        todo = [n for n in sorted({*N_OPTIONS, n_max}) if n <= n_max and n not in done]
        self.error_box.value = ""
        self.progress.clear_output()
        if todo:
            with self.progress:
                new = cost.measure_scaling(todo, self.methods, self.d, dtype=self.dtype, too_big="skip",
                                           block_size=self.block_size, threads=self.threads)
            self.table.measurements = sorted(self.table.measurements + new.measurements,
                                             key=lambda m: (m.n, self.methods.index(m.method)))
            if new.refused:
                self.error_box.value = "".join(error_html(SizeLimitError(text), "Not measured")
                                               for text in new.refused)
        self._draw_series()
        self._changed_names = []
        self.update()
        self.access.say(f"Measured up to N = {n_max:,}: {self.summary}")

    def still(self):
        return cost_plots.plot_scaling(self.table, mark_n=self.slider.value)


# ------------------------------------------------------------------ tile by tile
class TileExplorer(ExplorerBase):
    """One block of queries of ``flash_attention``, tile by tile, with a slider for the tile (notebook 08).

    ``q (L, d_k)``, ``k (S, d_k)``, ``v (S, d_v)``; ``rows``: the block of queries to follow
    (a ``range``, default the first ``block_size`` rows); ``feature``: which output
    column the third plot follows. The state after each tile comes from
    :func:`lessons_lib.core.flash.flash_attention_steps`, the same loop as ``flash_attention``.
    """

    title = "FlashAttention, one tile at a time"
    slider_width = None   # one slider: the front end's width

    def __init__(self, q, k, v, *, block_size: int = 4, rows: range | None = None, causal: bool = False,
                 feature: int = 0, tile: int = 1):
        super().__init__()
        self.steps = flash_attention_steps(q, k, v, causal=causal, block_size=block_size, rows=rows)
        self.rows = rows if rows is not None else range(0, len(self.steps[0].max))
        d_v = self.steps[0].output.shape[1]
        if not is_whole_number(feature) or not 0 <= feature < d_v:
            raise ValueError(f"feature must be a whole number from 0 to {d_v - 1}; got {feature!r}.")
        self.feature = int(feature)
        n_tiles = len(self.steps)
        tile = check_positive_int(tile, "tile")
        if tile > n_tiles:
            raise ValueError(f"tile must be from 1 to {n_tiles} (this block of queries meets {n_tiles} key "
                             f"tiles); got {tile}.")
        self.slider = self._control("tile", ipw.IntSlider(value=tile, min=1, max=n_tiles, description="tile",
                                                          continuous_update=True))
        names = {"max": "running maximum m", "sum": "running sum ℓ",
                 "output": f"output feature {self.feature} (acc/ℓ)"}
        self.plots = [self._figure(key, LinePlot(title=name, xlabel="key tiles processed", width=350,
                                                 height=300, xticks=list(range(1, n_tiles + 1))))
                      for key, name in names.items()]
        self._draw_series()
        self.hint = (f"queries {self.rows.start}…{self.rows.stop - 1}, keys in tiles of {block_size}"
                     f"{' (causal)' if causal else ''}; drag the slider")
        self.widget = self._box(self.slider, self.error_box, self._row(list(names)), self.readout)
        self.update()

    def settings(self) -> str:
        return f"tile = {self.slider.value} of {len(self.steps)}"

    def _values(self) -> list[np.ndarray]:
        """(tiles, rows) arrays: running maximum, running sum, output feature."""
        return [np.array([s.max for s in self.steps]), np.array([s.sum for s in self.steps]),
                np.array([s.output[:, self.feature] for s in self.steps])]

    def _draw_series(self) -> None:
        x = np.arange(1, len(self.steps) + 1, dtype=float)
        n_rows = len(self.rows)
        for plot, values in zip(self.plots, self._values()):
            series = []
            for r in range(n_rows):
                color = cost_plots.row_colour(r, n_rows)
                label = f"query {self.rows.start + r}"
                series.append({"label": "", "x": x, "y": values[:, r], "mode": "line", "color": color,
                               "dash": r % 2 == 1})
                series.append({"label": label, "x": x, "y": values[:, r], "mode": "markers",
                               "marker": "os"[r % 2], "color": color})
            plot.set_series(series)

    def _redraw(self) -> None:
        """Move the markers to the slider's tile and say what that tile did to each row."""
        t = self.slider.value
        step, before = self.steps[t - 1], (self.steps[t - 2] if t > 1 else None)
        for plot, values in zip(self.plots, self._values()):
            at = ", ".join(f"query {q} at {v:.3g}" for q, v in zip(self.rows, values[t - 1]))
            plot.mark(t, float(values[t - 1, 0]), alt=f"{plot.title}; {self.settings()}: after tile {t}, "
                                                      f"{at}".replace("-", "−"))
        rows, said = [], []
        for r, query in enumerate(self.rows):
            m_old = -np.inf if before is None else before.max[r]
            m_new = step.max[r]
            factor = 0.0 if m_old == -np.inf else float(np.exp(m_old - m_new))
            grew = "rose" if m_new > m_old else "stayed"
            said.append(f"query {query}: maximum {'rose to' if grew == 'rose' else 'stayed at'} {m_new:.3g}, "
                        f"output so far "
                        f"{step.output[r, self.feature]:.4f} "
                        f"(exact {self.steps[-1].output[r, self.feature]:.4f})")
            rows.append(f"<tr><td>query {query}</td><td>{m_old:.3g} → {m_new:.3g} ({grew})</td>"
                        f"<td>× {factor:.3g}</td><td>{step.sum[r]:.4g}</td>"
                        f"<td>{step.output[r, self.feature]:.4f}</td>"
                        f"<td>{self.steps[-1].output[r, self.feature]:.4f}</td></tr>")
        self.summary = (f"keys {step.keys.start}…{step.keys.stop - 1} processed; "
                        + "; ".join(said)).replace("-", "−")
        self.readout.value = (
            f"<b>Tile {t} of {len(self.steps)}</b> (keys {step.keys.start}…{step.keys.stop - 1}). "
            f"Where the maximum rose, the old sum and the old weighted sum of values were multiplied by "
            f"exp(m_old − m_new) &lt; 1 before this tile's terms were added."
            "<table><tr><th>row</th><th>max m</th><th>old sums scaled</th><th>sum ℓ</th>"
            f"<th>output feature {self.feature} so far</th><th>exact (after all tiles)</th></tr>"
            + "".join(rows) + "</table>")

    def still(self):
        return cost_plots.plot_tile_steps(self.steps, upto=self.slider.value, feature=self.feature,
                                          row_labels=[f"query {i}" for i in self.rows])
