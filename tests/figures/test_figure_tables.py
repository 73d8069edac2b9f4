"""Every figure's numbers can be read as a table: each live figure kind's tables (built in the browser by
``live_figures.js``, run here in node) and each still's collapsed tables (``figures/tables.py``) have row
and column headers that name its labels and cells that hold its data, masked cells said as "masked".
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.figures.base import heatmap, read_still, still_numbers, still_output
from lessons_lib.figures.live import (
    Bars,
    HeadView,
    Heatmap,
    HeatmapGrid,
    LinePlot,
    LiveFigure,
    MatrixProduct,
    ProductPanel,
    RotationDials,
)
from lessons_lib.figures.live.base import ESM
from lessons_lib.figures.tables import TABLE_SIDE, figure_tables, matrix_table, number_text, tables_html
from tests.helpers.figure_tables import live_tables

TOKENS = ["The", "cat", "sat", "on", "the", "mat"]


def _number(text: str) -> float:
    """A cell's number as the reader reads it: "≈ −0.2500" -> −0.25."""
    return float(text.replace("≈", "").replace("−", "-").strip())


def _heads(labels) -> list[str]:
    """Headers as the tables write them: a token and its position, a bare position alone."""
    return [str(i) if str(t) in ("", str(i)) else f"“{t}” ({i})" for i, t in enumerate(labels)]


def _check_matrix_table(table, m, rows, cols, hidden=None, rel=5e-4, abs_=1e-6, hidden_text="masked"):
    assert table["cols"] == _heads(cols) and [r[0] for r in table["rows"]] == _heads(rows)
    for i, row in enumerate(table["rows"]):
        for j, cell in enumerate(row[1:]):
            if hidden is not None and hidden[i, j]:
                assert cell == hidden_text
            else:
                assert _number(cell) == pytest.approx(m[i, j], rel=rel, abs=abs_), (i, j, cell)


def _weights(rng, n=6):
    w = rng.random((n, n)) + 0.05
    return w / w.sum(axis=1, keepdims=True)


def _every_kind():
    """One figure of each kind, drawn with known data; what each table must hold."""
    rng = np.random.default_rng(43)
    w = _weights(rng)
    causal = np.tril(np.ones((6, 6), bool))
    hm = Heatmap(title="Attention weights\nsecond line", colorbar_label="attention weight")
    hm.draw(np.where(causal, w, 0.0), TOKENS, TOKENS, vmin=0.0, vmax=1.0, mask=causal, highlight_row=2)
    grid = HeatmapGrid(title="Heads", colorbar_label="weight")
    g = np.stack([_weights(rng), _weights(rng)])
    grid.draw(g, TOKENS, TOKENS, vmin=0.0, vmax=1.0, panel_titles=["head 0", "head 1"])
    heads = HeadView(title="Every head")
    heads.draw(g, TOKENS)
    heads.locked = 1
    bars = Bars(title="Where “sat” looks")
    bars.draw(w[2], TOKENS, mask=[True, True, True, False, False, False])
    line = LinePlot(title="var(q·k) against d_k", xlabel="d_k", ylabel="variance", log_x=True, log_y=True)
    line.set_series([{"label": "var = d_k", "x": [1, 512], "y": [1, 512], "mode": "line", "color": "#000000"},
                     {"label": "measured", "x": [1, 4, 16, 64], "y": [1.1, 3.9, 16.5, 63.4]}])
    line.mark(16, 16.5)
    product = MatrixProduct(title="Step 1: X · W_Q = Q")
    x, wq = rng.normal(size=(6, 4)), rng.normal(size=(4, 2))
    product.draw(ProductPanel(x, TOKENS, None, "X\n6 × 4", "feature", "token"),
                 ProductPanel(wq, None, None, "W_Q\n4 × 2", "column", "row"),
                 ProductPanel(x @ wq, TOKENS, None, "Q\n6 × 2", "feature", "token"))
    dials = RotationDials(title="RoPE, pair by pair")
    dials.draw(rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), [1.0, 0.1, 0.01], [0.5, -0.25, 0.125],
               [[0, 1], [2, 3], [4, 5]], m=7, n=3)
    return [hm, grid, heads, bars, line, product, dials], w


@pytest.mark.subprocess
def test_every_live_figure_kind_shows_its_data_as_tables_with_headers():
    figures, w = _every_kind()
    assert {f._kind for f in figures} == set(LiveFigure.kinds()), "a kind without a table test"
    hm, grid, heads, bars, line, product, dials = live_tables(figures)

    (table,) = hm
    assert table["caption"].startswith("Attention weights: attention weight; one row per query")
    assert table["corner"] == "query / key"
    _check_matrix_table(table, figures[0].matrix, TOKENS, TOKENS, hidden=figures[0].hidden)

    for tables, fig in ((grid, figures[1]), (heads, figures[2])):
        assert len(tables) == 2
        for k, table in enumerate(tables):
            _check_matrix_table(table, fig.matrix[k], TOKENS, TOKENS)
    assert "head 1 (locked)" in heads[1]["caption"] and "locked" not in heads[0]["caption"]

    (table,) = bars
    assert [r[0] for r in table["rows"]] == _heads(TOKENS) and table["corner"] == "key"
    assert [r[1] for r in table["rows"]][3:] == ["masked"] * 3
    assert [_number(r[1]) for r in table["rows"][:3]] == pytest.approx(w[2, :3], rel=5e-4)

    reference, measured = line
    assert table_shape(measured) == (4, 1) and measured["corner"] == "d_k"
    assert measured["cols"] == ["variance"]
    points = [(_number(a), _number(b)) for a, b in measured["rows"]]
    assert points == [(1, 1.1), (4, 3.9), (16, 16.5), (64, 63.4)]
    assert "Marked: d_k = 16, variance = 16.50" in reference["caption"]

    x_table, w_table, q_table = product
    q = np.frombuffer(figures[5].c, dtype="<f4").reshape(6, 2)
    assert [_number(c) for r in q_table["rows"] for c in r[1:]] == pytest.approx(q.ravel(), rel=5e-4)
    assert [r[0] for r in x_table["rows"]] == _heads(TOKENS) and x_table["cols"] == ["0", "1", "2", "3"]
    assert [r[0] for r in w_table["rows"]] == ["0", "1", "2", "3"] and "W_Q" in w_table["caption"]

    (table,) = dials
    assert [r[0] for r in table["rows"]] == ["pair 0", "pair 1", "pair 2"]
    assert [r[1] for r in table["rows"]] == ["0 and 1", "2 and 3", "4 and 5"]
    assert [_number(r[-1]) for r in table["rows"]] == [0.5, -0.25, 0.125]
    assert [_number(r[3]) for r in table["rows"]] == pytest.approx([7.0, 0.7, 0.07], abs=0.005)


def table_shape(table) -> tuple[int, int]:
    return len(table["rows"]), len(table["cols"])


@pytest.mark.subprocess
def test_a_matrix_too_large_for_a_table_keeps_the_part_it_frames_and_says_its_shape_and_extremes():
    n = 80
    m = np.arange(n * n, dtype=float).reshape(n, n) / (n * n)
    tokens = [f"t{i}" for i in range(n)]
    hm = Heatmap(title="Long sequence", colorbar_label="value")
    hm.draw(m, tokens, tokens, vmin=0.0, vmax=1.0, highlight_row=60)
    (table,) = live_tables([hm])[0]
    assert table_shape(table) == (TABLE_SIDE, TABLE_SIDE)
    assert "“t60” (60)" in [r[0] for r in table["rows"]], "the framed row is in the part shown"
    assert "80 × 80 values" in table["caption"] and "shown: rows 44–75 and columns 44–75" in table["caption"]
    assert re.search(r"smallest ≈ 0\.00\d+ \(query 0, key 0\), largest ≈ 0\.99\d+ \(query 79, key \d+\)",
                     table["caption"]), table["caption"]


def test_every_kind_in_javascript_supplies_its_tables_and_the_shell_builds_them_once():
    for kind in LiveFigure.kinds():
        block = ESM[ESM.index(f"KINDS.{kind} = {{"):]
        block = block[:block.index("\n};\n")]
        assert re.search(r"^  tables\(s\)", block, re.M), f"KINDS.{kind} has no tables"
    # one button and one builder, in the shell: a real <button> that says whether the table is shown
    assert ESM.count('textContent = "Numbers as a table"') == 1
    for attribute in ('"aria-expanded"', '"aria-controls"', 'scope = "col"', 'scope = "row"',
                      "createCaption"):
        assert attribute in ESM, attribute


# ------------------------------------------------------------------ stills
def test_a_still_heatmap_has_its_numbers_in_a_collapsed_table_beside_it():
    rng = np.random.default_rng(5)
    w = _weights(rng)
    mask = np.tril(np.ones((6, 6), bool))
    fig = heatmap(np.where(mask, w, 0), TOKENS, TOKENS, title="Masked weights", colorbar_label="weight",
                  mask=mask, fmt=".2f")
    (table,) = figure_tables(fig)
    _check_matrix_table(table, w, TOKENS, TOKENS, hidden=~mask, rel=0, abs_=0.005 + 1e-9)
    assert all(re.fullmatch(r"\d\.\d\d|masked", c) for r in table["rows"] for c in r[1:]), "as the picture"
    data = still_output(fig, "Masked weights")
    assert read_still(data)[1] == "Masked weights", "the picture and its alt text read back as before"
    numbers = still_numbers(data)
    assert numbers.startswith('<details class="lessons-still-numbers"><summary>Numbers as a table</summary>')
    assert "<caption>Masked weights: weight; one row per query (attending)" in numbers
    assert '<th scope="col">“mat” (5)</th>' in numbers and '<th scope="row">“The” (0)</th>' in numbers


def test_bars_and_lines_and_labelled_points_in_a_still_become_rows():
    from lessons_lib.figures.base import panel_figure

    fig, (left, right) = panel_figure(1, 2, width=8, height=3)
    left.bar([0, 1, 2], [0.2, 0.5, 0.3])
    left.set_xticks([0, 1, 2], ["a", "b", "c"])
    left.set_ylabel("weight")
    left.set_title("bars")
    right.plot([1, 2, 4], [1, 4, 16], label="square")
    right.scatter([0.5, 1.5], [2.0, 3.0])
    right.annotate("p", (0.5, 2.0))
    right.annotate("q", (1.5, 3.0))
    right.set_xlabel("n")
    bars, line, points = figure_tables(fig)
    assert bars["rows"] == [["“a” (0)", "0.2"], ["“b” (1)", "0.5"], ["“c” (2)", "0.3"]]
    assert line["corner"] == "n" and line["cols"] == ["square"] and line["rows"][-1] == ["4", "16"]
    assert points["rows"] == [["“p” (0)", "0.5", "2"], ["“q” (1)", "1.5", "3"]]


def test_a_still_without_data_has_no_table():
    from lessons_lib.figures.base import new_figure

    fig = new_figure(2, 2)
    fig.add_subplot().text(0.5, 0.5, "a diagram")
    assert figure_tables(fig) == [] and tables_html([]) == ""


def test_numbers_are_written_as_print_writes_them():
    assert [number_text(v) for v in (-0.0, -1e-9, 2.5e-05, 1234.5)] == ["0", "−1e-09", "2.5e-05", "1.23e+03"]
    assert number_text(-0.001, ".2f") == "0.00" and number_text(-np.inf) == "−∞"


def test_whole_numbers_are_written_whole_as_the_live_tables_write_them():
    # a context of 1,024 tokens, never 1.02e+03 (the KV-memory table wrote 1.01e+03)
    whole = [number_text(v) for v in (1024.0, 8192, -2048.0, 32768.0)]
    assert whole == ["1,024", "8,192", "−2,048", "32,768"]
    assert number_text(1e12) == "1e+12" and number_text(1024.0, ".1f") == "1024.0"


@pytest.mark.parametrize("make", [
    lambda: ll.ScoresExplorer(), lambda: ll.ScaleSoftmaxExplorer(), lambda: ll.PipelineExplorer(),
    lambda: ll.CausalMaskExplorer(seq_len=4, query=2),
    lambda: ll.HeadGridExplorer(n_heads=8, d_model=64, seq_len=12),
], ids=["scores", "scale_softmax", "pipeline", "causal_mask", "head_grid"])
def test_an_explorers_still_has_a_table_for_each_of_its_heatmaps(make):
    still, _ = make().static_view()
    heatmaps = [ax for ax in still.axes if getattr(ax, "lessons_matrix", None) is not None]
    tables = figure_tables(still)
    assert heatmaps and len(tables) >= len(heatmaps)
    for ax in heatmaps:
        rec = ax.lessons_matrix
        assert matrix_table(ax, rec) in tables
        shown = np.where(rec["allowed"], rec["m"], np.nan)
        table = matrix_table(ax, rec)
        assert [_number(c) if c != "masked" else np.nan for c in table["rows"][0][1:]] == pytest.approx(
            shown[0, :TABLE_SIDE], abs=0.051, nan_ok=True)


# ------------------------------------------------------------------ every explorer's live figures
def _explorers():
    """The explorers with the arguments their notebooks give (the lessons 08-10 ones that need a measured
    table, a trained model or a real model's weights are held by the kinds' test above)."""
    seed = 0
    q, k, v = ll.random_qkv(16, 8, seed=30)
    return {
        "02 ProjectionExplorer": ll.ProjectionExplorer(), "03 ScoresExplorer": ll.ScoresExplorer(),
        "04 ScaleSoftmaxExplorer": ll.ScaleSoftmaxExplorer(), "05 PipelineExplorer": ll.PipelineExplorer(),
        "06 HeadGridExplorer": ll.HeadGridExplorer(n_heads=8, d_model=64, seq_len=12),
        "07 CausalMaskExplorer": ll.CausalMaskExplorer(seq_len=4, query=2),
        "07 CustomMaskExplorer": ll.CustomMaskExplorer(n=6, preset="causal"),
        "08 TileExplorer": ll.TileExplorer(q, k, v, block_size=4, rows=range(4, 8)),
        "11 ShuffleExplorer": ll.ShuffleExplorer("dog bites man", order=[2, 1, 0], seed=seed),
        "11 SinusoidExplorer": ll.SinusoidExplorer(position=10, d_model=32),
        "11 RopeExplorer": ll.RopeExplorer(m=7, n=3, d_head=16, seed=seed),
        "12 KVCacheExplorer": ll.KVCacheExplorer(step=5, seed=seed),
        "12 MemoryExplorer": ll.MemoryExplorer("Llama-3-8B", context=8192, batch=1, dtype="bfloat16"),
        "12 GroupedQueryExplorer": ll.GroupedQueryExplorer(n_kv_heads=2, seed=seed),
        "12 WindowExplorer": ll.WindowExplorer(window=8, sinks=2, query=40, seed=seed),
    }


def _live_figures(widget) -> list:
    """The live figures inside an explorer's box, in page order."""
    if isinstance(widget, LiveFigure):
        return [widget]
    return [f for child in getattr(widget, "children", ()) for f in _live_figures(child)]


@pytest.mark.subprocess
@pytest.mark.slow
def test_every_explorers_figures_show_their_current_data_as_tables():
    figures = [(f"{name}: figure #{k}", fig) for name, explorer in _explorers().items()
               for k, fig in enumerate(_live_figures(explorer.widget))]
    assert len(figures) >= 30
    tables = live_tables([fig for _, fig in figures])
    for (what, fig), shown in zip(figures, tables, strict=True):
        assert shown, f"{what}: no table"
        for t in shown:
            assert t["caption"].strip() and t["rows"], what
            assert all(len(r) == len(t["cols"]) + 1 for r in t["rows"]), f"{what}: ragged rows"
        matrix = getattr(fig, "matrix", None)
        if matrix is None or fig.encoding != "f32":
            continue   # 8-bit data: the bin centres, held by the large-matrix test
        panels = matrix if matrix.ndim == 3 else matrix[None]
        hidden = fig.hidden if fig.hidden is not None else np.zeros(panels.shape[1:], bool)
        for t, m in zip(shown, panels, strict=True):
            _check_matrix_table(t, m, fig.row_labels, fig.col_labels, hidden=hidden.reshape(m.shape),
                                rel=5e-4, abs_=1e-5, hidden_text=fig.hidden_text or "masked")


# ------------------------------------------------------------------ the committed notebooks
DIAGRAMS = ("Multi-head attention, shape at each stage",)   # boxes and arrows: no data, the alt text says it


def test_every_still_in_the_notebooks_has_its_numbers_in_a_table_beside_it():
    import nbformat

    from tests.helpers import NOTEBOOKS

    missing, stills = [], 0
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                still = read_still(data)
                if still is None:
                    continue
                stills += 1
                numbers = still_numbers(data)
                if not numbers and not still[1].startswith(DIAGRAMS):
                    missing.append(f"{path.name}: {still[1][:80]}")
                for table in re.findall(r"<table.*?</table>", numbers, re.S):
                    if not ("<caption>" in table and 'scope="col"' in table and 'scope="row"' in table):
                        missing.append(f"{path.name}: a table without caption or headers: {table[:120]}")
    assert stills > 40 and not missing, missing
