"""A still's numbers as tables: what a screen reader or a magnifier user reads instead of colours and bars.

Every still of the course (a :class:`~lessons_lib.figures.base.LessonFigure`) shows itself with its numbers
in a collapsed table under it (``<details><summary>Numbers as a table</summary><table>…``), as every live
figure has a "Numbers as a table" button (``live_figures.js``). The tables are read from what the figure
draws, so they can never say something else than the picture:

* a heatmap drawn by :func:`~lessons_lib.figures.base.draw_heatmap` (every heatmap of the course) records
  its matrix, its tokens and its masked cells (:func:`record_matrix`): one row per query (row), one
  column per key (column), masked cells as "masked", values as the heatmap writes them (its ``fmt``);
* bars (``ax.bar``): one row per bar, named by its tick label, one column per group of bars;
* lines and markers (``ax.plot``, ``ax.scatter``) in data coordinates: one row per point, named by its x
  (or by the text written beside a point), one column per series.

Each table is ``{"caption", "corner", "cols", "rows"}`` (``rows``: ``[row header, cell, …]``), the same
shape as the live figures' tables. A matrix past :data:`TABLE_SIDE` rows or columns keeps the part its
picture points at (a framed row, else the first rows and columns) with its shape and extremes in the
caption; a series past :data:`TABLE_POINTS` points keeps every k-th point and the last, with its extremes.
A diagram without data (boxes and arrows) has no table: its alt text says what it shows.

Alt texts and tables read LaTeX the same way, as symbols (:func:`alt_words`: ``$q_i \\cdot k_j$`` ->
``q_i · k_j``).
"""

from __future__ import annotations

import html
import re

import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

__all__ = ["figure_tables", "tables_html"]

TABLE_SIDE = 32     # a matrix up to this many rows and columns is shown whole (as the live figures do)
TABLE_POINTS = 64   # a series up to this many points is shown whole
SUMMARY = "Numbers as a table"


_LATEX_SYMBOLS = {r"\cdot": "·", r"\times": "×", r"\infty": "∞", r"\le": "≤", r"\ge": "≥",
                  r"\propto": "∝", r"\sum": "Σ", r"\dots": "…", r"\ldots": "…", r"\to": "→"}


def alt_words(text: str) -> str:
    """``text`` with each ``$…$`` LaTeX span read as plain symbols (for alt text and screen readers).

    >>> alt_words(r"colour scale: score $q_i \\cdot k_j$ (dot product), $\\sqrt{d_k}$, $K^\\top$")
    'colour scale: score q_i · k_j (dot product), √d_k, Kᵀ'
    """
    def plain(match: re.Match) -> str:
        s = match.group(1)
        s = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", s)
        s = re.sub(r"\^\{?\\top\}?|\^\{?T\}?(?![A-Za-z])", "ᵀ", s)
        s = re.sub(r"\\(?:text|mathrm|mathbf|operatorname)\{([^{}]*)\}", r"\1", s)
        for macro, symbol in _LATEX_SYMBOLS.items():
            s = re.sub(re.escape(macro) + r"(?![A-Za-z])", symbol, s)
        s = re.sub(r"\\[,;!]|[{}]", "", s).replace("\\", "")
        return re.sub(r"\s+", " ", s).strip()

    return re.sub(r"\$([^$]+)\$", plain, text)


def number_text(value: float, fmt: str = ".3g") -> str:
    """A number as a table cell: ``fmt`` (3 significant digits unless the figure writes its own), the
    minus sign of print, never "-0".

    A whole number under a billion is written whole, with thousands separated (a context of ``1,024``
    tokens, not ``1.02e+03``), as the live figures write it.

    >>> number_text(-0.0004), number_text(0.123456, ".2f"), number_text(-1.5), number_text(1024.0)
    ('−0.0004', '0.12', '−1.5', '1,024')
    """
    if not np.isfinite(value):
        return "−∞" if value < 0 else ("∞" if value > 0 else "not a number")
    if fmt == ".3g" and float(value).is_integer() and abs(value) < 1e9:
        text = f"{int(value):,}"
        return "−" + text[1:] if text.startswith("-") else text
    text = format(float(value), fmt)
    if text.lstrip("-").strip("0.") == "":   # -0.00 is 0.00
        text = text.lstrip("-")
    return "−" + text[1:] if text.startswith("-") else text


def token_head(text: str, i: int) -> str:
    """A token as a header, as the live figures write it: ``“sat” (2)``, or ``2`` for a bare index."""
    text = "" if text is None else str(text)
    return str(i) if text in ("", str(i)) else f"“{text}” ({i})"


def record_matrix(ax, m: np.ndarray, rows, cols, allowed: np.ndarray, *, what: str, fmt: str = ".2f",
                  focus: int = -1, allowed_text: str | None = None, hidden_text: str = "masked") -> None:
    """Keep a heatmap's numbers on its axes, for :func:`figure_tables` (``draw_heatmap`` calls it).

    ``allowed_text``: what a cell that is not masked says instead of its number (a mask's "✓ may attend");
    ``hidden_text``: what a masked cell says ("empty slot" in a cache that has not filled it yet).
    """
    ax.lessons_matrix = {"m": np.asarray(m, dtype=np.float64), "rows": list(rows), "cols": list(cols),
                         "allowed": np.asarray(allowed, dtype=bool), "what": what, "fmt": fmt or ".2f",
                         "focus": focus, "allowed_text": allowed_text,
                         "hidden_text": hidden_text}


def _axis_name(ax, axis: str) -> str:
    """An axis label of a heatmap, its first line (notes follow it); panels side by side label only the
    outer ones: then the first label found."""
    own = ax.get_xlabel() if axis == "x" else ax.get_ylabel()
    if own:
        return _words(own.splitlines()[0])
    for other in ax.get_figure().axes:
        if getattr(other, "lessons_matrix", None) is not None:
            label = other.get_xlabel() if axis == "x" else other.get_ylabel()
            if label:
                return _words(label.splitlines()[0])
    return ""


def _colour_scale(ax) -> str:
    """The label of the figure's colour scale (panels that share one colorbar name it there)."""
    for other in ax.get_figure().axes:
        if getattr(other, "_colorbar", None) is not None and (other.get_ylabel() or other.get_xlabel()):
            return _words(other.get_ylabel() or other.get_xlabel())
    return ""


def _window(total: int, n: int, centre: int) -> list[int]:
    first = max(0, min(total - n, (centre if centre >= 0 else 0) - n // 2))
    return list(range(first, first + min(n, total)))


def _span(ix: list[int]) -> str:
    return str(ix[0]) if len(ix) == 1 else f"{ix[0]}–{ix[-1]}"


def _words(text: str) -> str:
    """LaTeX read as symbols, as in alt texts (``$q_i \\cdot k_j$`` -> ``q_i · k_j``), on one line."""
    return alt_words(" ".join(str(text).split()))


def _title(ax) -> str:
    title = " ".join(t.get_text() for t in (ax.title, ax._left_title, ax._right_title) if t.get_text())
    if not title and ax.get_figure()._suptitle is not None:
        title = ax.get_figure()._suptitle.get_text()
    return _words(title) or "Figure"


def matrix_table(ax, rec: dict) -> dict:
    """One recorded heatmap as a table (its rows and columns, or the part around its framed row)."""
    m, allowed, fmt = rec["m"], rec["allowed"], rec["fmt"]
    n_rows, n_cols = m.shape
    ylabel, xlabel = _axis_name(ax, "y") or "row", _axis_name(ax, "x") or "column"
    what = _words(rec["what"]) if rec["what"].strip("- ") else _colour_scale(ax)
    caption = f"{_title(ax)}: {what or 'values'}; one row per {ylabel}, one column per {xlabel}"
    ri = _window(n_rows, TABLE_SIDE, rec["focus"])
    ci = _window(n_cols, TABLE_SIDE, rec["focus"])
    if len(ri) < n_rows or len(ci) < n_cols:
        shown = np.where(allowed, m, np.nan)
        lo = np.unravel_index(np.nanargmin(shown), m.shape)
        hi = np.unravel_index(np.nanargmax(shown), m.shape)
        caption += (f". {n_rows} × {n_cols} values: smallest {number_text(m[lo], fmt)} (row {lo[0]}, column "
                    f"{lo[1]}), largest {number_text(m[hi], fmt)} (row {hi[0]}, column {hi[1]}); shown: rows "
                    f"{_span(ri)} and columns {_span(ci)}")
    body = [[token_head(rec["rows"][r], r)]
            + [(rec["allowed_text"] or number_text(m[r, c], fmt)) if allowed[r, c]
               else rec.get("hidden_text", "masked") for c in ci]
            for r in ri]
    return {"caption": caption, "corner": f"{ylabel} / {xlabel}",
            "cols": [token_head(rec["cols"][c], c) for c in ci], "rows": body}


def _tick_names(ax, positions) -> list[str] | None:
    """The x tick labels at ``positions`` (bars' names), or None when the ticks are not one per bar."""
    ticks = dict(zip(np.round(ax.get_xticks(), 6), (t.get_text() for t in ax.get_xticklabels())))
    names = [ticks.get(round(float(p), 6)) for p in positions]
    return names if all(n for n in names) else None


def bar_table(ax, containers: list[BarContainer]) -> dict:
    """Bars as a table: one row per bar position, one column per group of bars (its legend label)."""
    cols, columns = [], []   # grouped bars (side by side around x = 0, 1, 2, …) share their slot
    for k, c in enumerate(containers):
        label = c.get_label()
        cols.append(label if label and not label.startswith("_") else (ax.get_ylabel() or f"bars {k}"))
        columns.append({round(p.get_x() + p.get_width() / 2): p.get_height() for p in c.patches})
    slots = sorted({x for col in columns for x in col})
    ticks = _tick_names(ax, slots)
    names = [token_head(n, i) for i, n in enumerate(ticks)] if ticks else [number_text(x) for x in slots]
    rows = [[names[i]] + [number_text(col[x]) if x in col else "" for col in columns]
            for i, x in enumerate(slots)]
    return {"caption": f"{_title(ax)}: {_words(ax.get_ylabel()) or 'bar heights'}, one row per "
                       f"{_words(ax.get_xlabel()) or 'bar'}",
            "corner": _words(ax.get_xlabel()) or "bar", "cols": [_words(c) for c in cols], "rows": rows}


def _points_part(x: np.ndarray, y: np.ndarray, xname: str) -> tuple[list[int], str]:
    n = len(x)
    if n <= TABLE_POINTS:
        return list(range(n)), ""
    step = -(-n // TABLE_POINTS)
    ix = [i for i in range(n) if i % step == 0 or i == n - 1]
    lo, hi = int(np.nanargmin(y)), int(np.nanargmax(y))
    return ix, (f". {n} points: smallest {number_text(y[lo])} at {xname} = {number_text(x[lo])}, largest "
                f"{number_text(y[hi])} at {xname} = {number_text(x[hi])}; "
                f"shown: every {step}th point and the last")


def series_tables(ax) -> list[dict]:
    """Lines and markers drawn in data coordinates: series sharing their x values share one table."""
    xname, yname = _words(ax.get_xlabel()) or "x", _words(ax.get_ylabel()) or "value"
    found = []   # (label, x, y, names of the points)
    for line in ax.get_lines():
        if line.get_transform() != ax.transData:
            continue  # a reference line across the axes (axhline): no data points
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        if x.size == 2 and line.get_label().startswith("_"):
            continue  # an unnamed segment (a link drawn between two points): no series of its own
        if x.size and x.shape == y.shape:
            found.append((line.get_label(), x, y, None))
    labels = {tuple(np.round(t.xy, 9)): " ".join(t.get_text().split()) for t in ax.texts if hasattr(t, "xy")}
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_offset_transform() == ax.transData:
            xy = np.asarray(coll.get_offsets(), float).reshape(-1, 2)
            if len(xy):
                names = [labels.get(tuple(np.round(p, 9))) for p in xy]
                found.append((coll.get_label(), xy[:, 0], xy[:, 1], names if all(names) else None))
    tables = []
    for label, x, y, names in found:
        label = _words(label) if label and not label.startswith("_") else yname
        same = next((t for t in tables if t["x"].shape == x.shape and np.array_equal(t["x"], x)
                     and t["names"] == names), None)
        if same is not None:
            same["cols"].append(label)
            same["ys"].append(y)
        else:
            tables.append({"x": x, "names": names, "cols": [label], "ys": [y]})
    out = []
    for t in tables:
        ix, part = _points_part(t["x"], t["ys"][0], xname)
        if t["names"]:  # points named by their text: their two coordinates are the columns
            rows = [[token_head(t["names"][i], i), number_text(t["x"][i]), number_text(t["ys"][0][i])]
                    for i in ix]
            out.append({"caption": f"{_title(ax)}: {t['cols'][0]}{part}", "corner": "point",
                        "cols": [xname, yname], "rows": rows})
            continue
        rows = [[number_text(t["x"][i])] + [number_text(y[i]) for y in t["ys"]] for i in ix]
        named = f" ({', '.join(t['cols'])})" if t["cols"] != [yname] else ""
        out.append({"caption": f"{_title(ax)}: {yname} against {xname}{named}{part}", "corner": xname,
                    "cols": t["cols"], "rows": rows})
    return out


def axes_tables(ax) -> list[dict]:
    """The tables of one axes: its heatmap, else its bars, lines and markers."""
    rec = getattr(ax, "lessons_matrix", None)
    if rec is not None:
        return [matrix_table(ax, rec)]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    out = [bar_table(ax, bars)] if bars else []
    return out + series_tables(ax)


def figure_tables(fig: Figure) -> list[dict]:
    """Every table of a still: one per heatmap, group of bars or series of points (colour scales skipped)."""
    return [t for ax in fig.axes if getattr(ax, "_colorbar", None) is None for t in axes_tables(ax)]


def table_html(t: dict) -> str:
    """One table as HTML: a caption, a header row of ``<th scope="col">``, a ``<th scope="row">`` a row."""
    e = html.escape
    head = "".join(f'<th scope="col">{e(c)}</th>' for c in [t["corner"], *t["cols"]])
    body = "".join("<tr>" + f'<th scope="row">{e(r[0])}</th>' + "".join(f"<td>{e(c)}</td>" for c in r[1:])
                   + "</tr>" for r in t["rows"])
    return (f'<table class="lessons-still-table"><caption>{e(t["caption"])}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def tables_html(tables: list[dict]) -> str:
    """A still's tables, collapsed under "Numbers as a table" (``""`` for a still without data)."""
    if not tables:
        return ""
    return (f'<details class="lessons-still-numbers"><summary>{SUMMARY}</summary>'
            f'<div class="lessons-still-tables" style="overflow-x:auto" tabindex="0" role="region" '
            f'aria-label="{SUMMARY}">{"".join(table_html(t) for t in tables)}</div></details>')
