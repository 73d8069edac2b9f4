"""lessons_lib.figures: each figure has the labels, title and colorbar it promises; masks drawn as masks."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure

import lessons_lib as ll
from lessons_lib._checks import SizeLimitError
from lessons_lib.core import (
    attention,
    masks,
)
from lessons_lib.figures import style
from lessons_lib.figures.base import alt_words, contrast_with_black_and_white, new_figure, read_still
from lessons_lib.lab import (
    data,
    measurements,
)

TOKENS = data.tokenize(data.SENTENCES["cat"])  # 7 tokens
N = len(TOKENS)


def _qkv(n=N, d_k=4, seed=0):
    return data.random_qkv(n, d_k, seed=seed)


def _scores(n=N, d_k=4):
    q, k, _ = _qkv(n, d_k)
    return attention.attention_scores(q, k)


def _image(fig):
    """The (only) heatmap image of a single-heatmap figure."""
    images = [im for ax in fig.axes for im in ax.images]
    assert len(images) == 1, f"expected one heatmap, found {len(images)}"
    return images[0]


def _ticklabels(ax, axis="x"):
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in labels]


def _colorbar_label(im):
    assert im.colorbar is not None, "heatmap has no colorbar"
    return im.colorbar.ax.get_ylabel()


def _pixel(fig, ax, row, col):
    """RGB (0..255) of the rendered figure at the centre of cell (row, col) of ``ax``."""
    fig.canvas.draw()
    buf = np.asarray(fig.canvas.buffer_rgba())
    x, y = ax.transData.transform((col, row))
    return buf[int(round(buf.shape[0] - y)), int(round(x)), :3].astype(int)


# ------------------------------------------------------------------ heatmap
def test_heatmap_promises_labels_title_colorbar():
    m = _scores()
    fig = ll.heatmap(m, TOKENS, TOKENS, title="Some scores", colorbar_label="score")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "Some scores"
    assert _ticklabels(ax, "x") == TOKENS
    assert _ticklabels(ax, "y") == TOKENS
    assert ax.get_xlabel() == "key (attended to)"
    assert ax.get_ylabel() == "query (attending)"
    im = _image(fig)
    assert _colorbar_label(im) == "score"
    np.testing.assert_array_equal(np.ma.getdata(im.get_array()), m)
    # small matrix: every value written in its cell (meaning not by colour alone)
    written = {t.get_text() for t in ax.texts}
    assert format(m[2, 3], ".2f") in written
    assert len(ax.texts) == m.size


def test_heatmap_fonts_are_projector_sized():
    fig = ll.heatmap(_scores(), TOKENS, TOKENS, title="t", colorbar_label="c")
    ax = fig.axes[0]
    assert min(t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()) >= 12
    assert ax.title.get_fontsize() >= 14


def test_heatmap_masked_cells_are_masked_not_zero():
    m = _scores()
    allowed = masks.causal_mask(N)
    fig = ll.heatmap(m, TOKENS, TOKENS, title="masked", colorbar_label="score", mask=allowed)
    ax = fig.axes[0]
    arr = _image(fig).get_array()
    assert isinstance(arr, np.ma.MaskedArray)
    np.testing.assert_array_equal(np.ma.getmaskarray(arr), ~allowed)
    hatched = [c for c in ax.collections if isinstance(c, PatchCollection) and c.get_gid() == "masked-cells"]
    assert hatched and hatched[0].get_hatch() == style.MASK_HATCH
    # one patch per masked run of a row: row i has cells i+1..N-1 masked
    assert len(hatched[0].get_paths()) == N - 1
    # the caption names the convention
    assert any(ll.MASK_NOTE in t.get_text() for t in ax.texts)
    # the pixel of a masked cell is not the colour of any value (e.g. 0 or vmin): it is the grey
    lo, hi = _image(fig).get_clim()
    cmap = _image(fig).get_cmap()
    masked_px = _pixel(fig, ax, 0, N - 1)
    for v in (lo, 0.0, hi):
        value_px = (np.array(cmap((v - lo) / (hi - lo))[:3]) * 255).round()
        assert np.abs(masked_px - value_px).max() > 40, f"masked cell drawn like the value {v}"
    # masked cells carry no number
    assert len(ax.texts) - 1 == int(allowed.sum())


def test_heatmap_minus_inf_is_masked():
    m = _scores()
    m[0, 3] = -np.inf
    fig = ll.heatmap(m, TOKENS, TOKENS, title="with -inf", colorbar_label="score")
    arr = _image(fig).get_array()
    assert np.ma.getmaskarray(arr)[0, 3]
    assert np.ma.getmaskarray(arr).sum() == 1


def test_heatmap_many_tokens_fewer_ticks_with_positions():
    tokens = data.tokens_of_length(128)
    m = _scores(128)
    fig = ll.heatmap(m, tokens, tokens, title="long", colorbar_label="score")
    labels = _ticklabels(fig.axes[0], "y")
    assert 8 <= len(labels) <= 32
    assert labels[1] == f"{tokens[8]} (8)"
    assert not fig.axes[0].texts  # no numbers written in 16384 cells


def test_heatmap_32_tokens_all_labelled():
    tokens = data.tokens_of_length(32)
    fig = ll.heatmap(_scores(32), tokens, tokens, title="32", colorbar_label="score")
    assert _ticklabels(fig.axes[0], "x") == tokens


def test_heatmap_draws_into_given_axes():
    fig = new_figure(8, 4)
    ax1, ax2 = fig.subplots(1, 2)
    out = ll.heatmap(_scores(), TOKENS, TOKENS, title="left", colorbar_label="c", ax=ax1)
    assert out is fig
    assert ax1.get_title() == "left" and not ax2.images


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"matrix": np.ones((2, 3, 3))}, ValueError, r"2-D matrix"),
        ({"matrix": np.ones((3, 3), dtype=int)}, TypeError, r"dtype int"),
        ({"matrix": [[1.0, np.nan], [0.0, 1.0]]}, ValueError, r"nan"),
        ({"row_labels": ["a", "b"]}, ValueError, r"row_labels has 2 labels but there are 3 rows"),
        ({"col_labels": "abc"}, TypeError, r"list of tokens"),
        ({"title": ""}, TypeError, r"title must be a non-empty string"),
        ({"colorbar_label": None}, TypeError, r"colorbar_label"),
        ({"mask": np.ones((3, 3))}, TypeError, r"boolean"),
        ({"mask": np.ones((2, 2), dtype=bool)}, ValueError, r"does not broadcast"),
        ({"vmin": 2.0, "vmax": 1.0}, ValueError, r"vmin=2.0 is larger than vmax=1.0"),
    ],
)
def test_heatmap_bad_input(kwargs, exc, match):
    args = {"matrix": np.eye(3), "row_labels": ["a", "b", "c"], "col_labels": ["a", "b", "c"],
            "title": "t", "colorbar_label": "c"}
    args.update(kwargs)
    matrix, rows, cols = args.pop("matrix"), args.pop("row_labels"), args.pop("col_labels")
    with pytest.raises(exc, match=match):
        ll.heatmap(matrix, rows, cols, **args)


# ------------------------------------------------------------------ the steps
def test_plot_scores_raw_and_scaled():
    s = _scores(d_k=16)
    fig = ll.plot_scores(s, TOKENS)
    ax, im = fig.axes[0], _image(fig)
    assert "Q·Kᵀ" in ax.get_title() and "Raw" in ax.get_title()
    assert "q_i" in _colorbar_label(im)
    lo, hi = im.get_clim()
    assert lo == -hi == -np.abs(s).max()  # symmetric: mid colour = 0
    fig = ll.plot_scores(attention.scale_scores(s, 16), TOKENS, scaled=True, d_k=16)
    assert "√d_k" in fig.axes[0].get_title() and "d_k = 16" in fig.axes[0].get_title()
    assert "sqrt" in _colorbar_label(_image(fig))
    with pytest.raises(ValueError, match=r"scores has shape \(7, 3\) but there are 7 tokens"):
        ll.plot_scores(s[:, :3], TOKENS)


def test_plot_weights_fixed_scale_and_checks():
    w = attention.attention_weights(_scores(), d_k=4)
    fig = ll.plot_weights(w, TOKENS)
    im = _image(fig)
    assert im.get_clim() == (0.0, 1.0)
    assert "sums to 1" in _colorbar_label(im)
    assert _ticklabels(fig.axes[0], "x") == TOKENS
    with pytest.raises(ValueError, match=r"row 0 \(query 'The'\) of weights sums to"):
        ll.plot_weights(w * 2 / 3, TOKENS)
    with pytest.raises(ValueError, match=r"probabilities between 0 and 1"):
        ll.plot_weights(_scores() * 10, TOKENS)


def test_plot_weights_with_mask():
    allowed = masks.causal_mask(N)
    w = attention.attention_weights(_scores(), d_k=4, mask=allowed)
    fig = ll.plot_weights(w, TOKENS, mask=allowed)
    np.testing.assert_array_equal(np.ma.getmaskarray(_image(fig).get_array()), ~allowed)
    leaky = attention.attention_weights(_scores(), d_k=4)
    with pytest.raises(ValueError, match=r"the mask forbids query 0 from attending to key 1"):
        ll.plot_weights(leaky, TOKENS, mask=allowed)


def test_plot_mask_writes_ticks_and_crosses():
    allowed = masks.causal_mask(N)
    fig = ll.plot_mask(allowed, TOKENS)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("✓") == allowed.sum() and texts.count("✗") == (~allowed).sum()
    assert any("✓ may attend" in t and "✗ masked" in t for t in texts)
    assert "Mask" in ax.get_title()
    assert _ticklabels(ax, "y") == TOKENS
    with pytest.raises(TypeError, match=r"boolean"):
        ll.plot_mask(allowed.astype(int), TOKENS)
    with pytest.raises(ValueError, match=r"2-D"):
        ll.plot_mask(allowed[None], TOKENS)


def test_plot_outputs_rows_tokens_cols_features():
    _, _, v = _qkv(d_k=4)
    out = attention.weighted_values(attention.attention_weights(_scores(), d_k=4), v)
    fig = ll.plot_outputs(out, TOKENS)
    ax, im = fig.axes[0], _image(fig)
    assert _ticklabels(ax, "y") == TOKENS
    assert _ticklabels(ax, "x") == ["0", "1", "2", "3"]
    assert "feature" in ax.get_xlabel()
    assert _colorbar_label(im) == "output value"
    fig = ll.plot_outputs(out, TOKENS, feature_names=["a", "b", "c", "d"])
    assert _ticklabels(fig.axes[0], "x") == ["a", "b", "c", "d"]


def test_plot_projection_shapes_written():
    x = data.embed_tokens(TOKENS, 8)
    w_q, w_k, w_v = data.projection_weights(8, 4)
    q, k, v = attention.project_qkv(x, w_q, w_k, w_v)
    fig = ll.plot_projection(x, w_k, k, TOKENS, name="K")
    heat_axes = [ax for ax in fig.axes if ax.images]
    assert len(heat_axes) == 3
    titles = [ax.get_title() for ax in heat_axes]
    assert "7 × 8" in titles[0] and "8 × 4" in titles[1] and "7 × 4" in titles[2]
    assert titles[2].startswith("K = X·")
    for ax, m in zip(heat_axes, (x, w_k, k)):
        np.testing.assert_array_equal(ax.images[0].get_array(), m)
        assert ax.images[0].colorbar is not None and ax.images[0].colorbar.ax.get_xlabel()
    assert _ticklabels(heat_axes[0], "y") == TOKENS
    with pytest.raises(ValueError, match=r"X has d_model=8 columns but W_Q has 4 rows"):
        ll.plot_projection(x, w_q.T, q, TOKENS)
    with pytest.raises(ValueError, match=r"Q has shape \(7, 3\), but X·W_Q has shape \(7, 4\)"):
        ll.plot_projection(x, w_q, q[:, :3], TOKENS)
    with pytest.raises(ValueError, match=r'name must be "Q", "K" or "V"'):
        ll.plot_projection(x, w_q, q, TOKENS, name="O")


def test_measure_score_variance_grows_like_d_k():
    d_ks, raw, scaled = measurements.measure_score_variance([1, 4, 16, 64, 256])
    np.testing.assert_allclose(raw / d_ks, 1.0, rtol=0.3)   # var(q·k) ≈ d_k
    np.testing.assert_allclose(scaled, 1.0, rtol=0.3)       # var(q·k/√d_k) ≈ 1
    assert raw[-1] > 100 * raw[0]


def test_plot_score_variance():
    fig = ll.plot_score_variance(current_d_k=64)
    ax = fig.axes[0]
    assert "√d_k" in ax.get_title()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "theory: var = d_k" in labels and "d_k = 64" in labels
    markers = {line.get_marker() for line in ax.lines}
    assert {"o", "s"} <= markers  # the series differ by shape, not only colour
    with pytest.raises(ValueError, match=r"variances has 2 values but d_ks has 3"):
        ll.plot_score_variance([1, 2, 4], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"positive whole numbers"):
        ll.plot_score_variance([1.5, 2], [1.0, 2.0])


def test_plot_row_weights_bars_are_the_row():
    w = attention.attention_weights(_scores(), d_k=4)
    fig = ll.plot_row_weights(w[2], TOKENS, "sat")
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, w[2])
    assert _ticklabels(ax, "x") == TOKENS
    assert "sat" in ax.get_title()
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 1
    assert ll.plot_row_weights(w[2], TOKENS, 2).axes[0].get_title() == ax.get_title()
    with pytest.raises(ValueError, match=r"one row of weights"):
        ll.plot_row_weights(w, TOKENS, "sat")
    with pytest.raises(ValueError, match=r"sums to"):
        ll.plot_row_weights(w[2] * 0.5, TOKENS, "sat")
    with pytest.raises(ValueError, match=r"index 9 is outside 0..6"):
        ll.plot_row_weights(w[2], TOKENS, 9)


@pytest.mark.subprocess
def test_plots_do_not_use_pyplot(fresh_imports):
    """Figures are made outside pyplot: shown once in a notebook, nothing left open."""
    assert "matplotlib.pyplot" not in fresh_imports["ll.plot_weights"], "pyplot was imported"


# In a kernel as a notebook runs it (IPython with the inline backend's figure formatter, as %matplotlib
# inline sets it): what a cell that ends in a still shows.
SHOWN = r"""
import json
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from matplotlib_inline.backend_inline import configure_inline_support
shell = InteractiveShell.instance()
configure_inline_support(shell, "inline")
shell.run_cell("import lessons_lib as ll, numpy as np\n"
               "fig = ll.plot_weights(np.full((2, 2), 0.5), ['a', 'b'], title=r'Weights $Q K^\\top$ \"x\"')")
with capture_output() as shown:   # what a kernel sends for a cell that ends in `fig`
    result, _ = shell.display_formatter.format(shell.user_ns["fig"])
print(json.dumps([o.data for o in shown.outputs] + ([result] if result else [])))
"""


@pytest.mark.subprocess
def test_a_still_shows_once_as_an_img_with_its_alt_text_in_words():
    """JupyterLab and Notebook 7 ignore an image/png output's alt metadata: a still is an <img> with its
    alt text, its PNG stored once (no image/png beside it, whatever formatter the kernel has)."""
    run = subprocess.run([sys.executable, "-c", SHOWN], check=True, capture_output=True, text=True)
    outputs = json.loads(run.stdout)
    assert len(outputs) == 1, outputs
    data = outputs[0]
    assert set(data) == {"text/html", "text/plain"}, "a still is an <img> and a sentence, not a second PNG"
    png, alt = read_still(data)
    assert base64.b64decode(png).startswith(b"\x89PNG") and data["text/html"].count("base64,") == 1
    assert alt.startswith('Weights Q Kᵀ "x"; x axis: key') and "$" not in alt and "\\" not in alt
    assert data["text/plain"] == f"<Figure: {alt}>"


def test_alt_text_reads_latex_as_words():
    assert alt_words(r"score $q_i \cdot k_j$ (dot product)") == "score q_i · k_j (dot product)"
    assert alt_words(r"$\sqrt{d_k}$ and $Q K^\top$ and $W_Q^i$") == "√d_k and Q Kᵀ and W_Q^i"
    fig = ll.plot_weights(np.full((2, 2), 0.5), ["a", "b"], title=r"$\mathrm{softmax}(Q K^T)$")
    assert fig.alt_text().startswith("softmax(Q Kᵀ)")


def test_read_still_finds_only_a_still():
    fig = ll.plot_weights(np.full((2, 2), 0.5), ["a", "b"])
    data = fig._repr_mimebundle_()
    assert read_still(data) == (re.search(r"base64,([^\"]+)", data["text/html"])[1], fig.alt_text())
    lines = ['<img src="data:image/png;base64,iVBO" ', 'alt="x">']   # as nbformat may store it
    assert read_still({"text/html": lines}) == ("iVBO", "x")
    assert read_still({"text/html": "<b>a table</b>"}) is None and read_still({"image/png": "iVBO"}) is None


def test_numbers_in_cells_reach_aa_contrast_on_both_colour_maps():
    """WCAG 2.1 AA: every number a heatmap writes is at least 4.5:1 against its cell's colour, over the
    whole range of viridis and cividis (144 cells from 0 to 1)."""
    values = np.linspace(0, 1, 144).reshape(12, 12)
    for cmap in (style.CMAP_WEIGHTS, style.CMAP_VALUES):
        ax = ll.heatmap(values, title="t", colorbar_label="c", cmap=cmap, vmin=0, vmax=1).axes[0]
        worst = min(
            contrast_with_black_and_white(matplotlib.colormaps[cmap](value))[text.get_color() == "white"]
            for value, text in zip(values.ravel(), ax.texts, strict=True))
        assert worst >= 4.5, f"{cmap}: a number drawn in a cell reaches only {worst:.2f}:1"


def test_tick_helpers():
    assert style.tick_indices(32).tolist() == list(range(32))
    idx = style.tick_indices(33)
    assert idx[0] == 0 and len(idx) < 33
    assert style.tick_labels(["a", "b", "c"], [0, 2]) == ["a (0)", "c (2)"]
    assert style.tick_labels([str(i) for i in range(40)], [0, 8]) == ["0", "8"]
    assert style.tick_labels(["extraordinarily"], [0]) == ["extraordina…"]


# ------------------------------------------------------- sizes that would kill a kernel
def test_a_matrix_too_big_to_draw_is_refused_at_once():
    huge = np.broadcast_to(np.float64(0.25), (20000, 20000))   # a view: no memory behind it
    with pytest.raises(SizeLimitError, match=r"would need about 18.0 GB.*Show a slice.*pooled view"):
        ll.plot_weights(huge, [str(i) for i in range(20000)])
    with pytest.raises(SizeLimitError):
        ll.heatmap(huge, title="t", colorbar_label="c")


# ------------------------------------------------------------------ plot arguments are checked
@pytest.mark.parametrize("call, error, words", [
    (lambda: ll.plot_scores(np.eye(2), ["a", "b"], d_k=0), ValueError, "d_k must be at least 1"),
    (lambda: ll.plot_scores(np.eye(2), ["a", "b"], d_k=2.5), TypeError, "d_k must be a whole number"),
    (lambda: ll.plot_scores(np.eye(2), ["a", "b"], scaled="yes"), TypeError,
     "scaled must be True or False"),
    (lambda: ll.heatmap(np.eye(2), title="t", colorbar_label="c", cmap="nope"), ValueError,
     "cmap must be the name of a matplotlib colour map"),
    (lambda: ll.heatmap(np.eye(2), title="t", colorbar_label="c", fmt="%d"), ValueError,
     "fmt must be a number format such as '.2f'"),
    (lambda: ll.heatmap(np.eye(2), title="t", colorbar_label="c", annotate="no"), TypeError,
     "annotate must be True, False or None"),
    (lambda: ll.heatmap(np.zeros((0, 3)), title="t", colorbar_label="c"), ValueError, "is empty"),
    (lambda: ll.plot_row_weights(np.array([0.5, 0.5]), ["a", "b"], 2), ValueError,
     "query_token index 2 is outside 0..1"),
    (lambda: ll.plot_convex_combination(np.eye(2), np.eye(2), ["a", "b"], weights=np.eye(2), query="z"),
     ValueError, "query 'z' is not one of the tokens"),
    (lambda: ll.plot_score_variance([1, 2], [1.0]), ValueError, "variances has 1 values but d_ks has 2"),
])
def test_plot_arguments_are_checked(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


def test_plot_row_weights_draws_masked_keys_as_masked_not_zero():
    toks = data.tokenize("The cat sat on the mat.")
    q, k, v = data.random_qkv(7, 4, seed=3)
    _, w = attention.scaled_dot_product_attention(q, k, v, causal=True)
    allowed = masks.causal_mask(7)[2]
    fig = ll.plot_row_weights(w[2], toks, "sat", mask=allowed)
    ax = fig.axes[0]
    hatched = [p for p in ax.patches if p.get_hatch()]
    plain = [p for p in ax.patches if not p.get_hatch()]
    assert len(hatched) == 4 and len(plain) == 3                       # on, the, mat, . are masked
    np.testing.assert_allclose([p.get_height() for p in plain], w[2, :3])
    assert sum(t.get_text() == "✗" for t in ax.texts) == 4
    with pytest.raises(ValueError, match="non-zero weight on a masked key"):
        ll.plot_row_weights(np.full(7, 1 / 7), toks, "sat", mask=allowed)


def test_convex_hull_and_outputs_inside_it():
    hull = ll.convex_hull_2d([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.5]])
    assert sorted(map(tuple, hull)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    toks = data.tokens_of_length(6)
    q, k, v = data.random_qkv(6, 4, d_v=2, seed=16)
    out, w = attention.scaled_dot_product_attention(q, k, v)
    fig = ll.plot_convex_combination(v, out, toks, weights=w, query=4)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and "convex hull" in ax.get_title()
    assert ax.patches and ax.patches[0].get_path().contains_points(out, radius=1e-9).all()
    assert any("w = " in t.get_text() for t in ax.texts)
    with pytest.raises(ValueError, match="exactly 2 features"):
        ll.plot_convex_combination(np.ones((3, 3)), np.ones((3, 3)), toks[:3])
