"""Lesson 06's head grid explorer and its live head view: the library's heads, few bytes per move, linked in
the browser, a still for pages."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import data

# (n_heads, d_model) pairs where the heads divide d_model
HEADS_AND_WIDTH = st.sampled_from([(1, 4), (2, 4), (4, 8), (3, 6), (8, 16), (2, 10)])


def _weights(rng, d):
    return [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4)]


# ------------------------------------------------------------------ the live head view and the explorer
def _sent(widget):
    """Record what ``widget`` sends to the browser: (names of the traits sent, total bytes) per message."""
    import json

    sent = []
    real = widget.comm.send

    def spy(data=None, metadata=None, buffers=None):
        size = len(json.dumps(data, default=str)) + sum(len(memoryview(b).cast("B")) for b in buffers or [])
        names = set(data.get("state", {})) | {path[0] for path in data.get("buffer_paths", [])}
        sent.append((names, size))
        return real(data=data, metadata=metadata, buffers=buffers)
    widget.comm.send = spy
    return sent


def test_head_view_sends_the_weights_of_every_head_in_one_message():
    from lessons_lib.figures.live.heads import HeadView
    from lessons_lib.figures.live.wire import decode_matrix

    rng = np.random.default_rng(0)
    w = ll.softmax(rng.standard_normal((8, 32, 32)) * 3)
    view = HeadView()
    sent = _sent(view)
    view.draw(w, data.tokens_of_length(32), token=5)
    assert len(sent) == 1, "one draw, one message"
    assert view.shape == [8, 32, 32] and view.token == 5 and view.panel_titles[7] == "head 7"
    shown = decode_matrix(view.encoding, view.values, view.shape, view.vmin, view.vmax)
    assert np.abs(shown - w).max() <= 0.5 / 256 + 1e-6     # 8-bit colour bins at this size: ±half a bin
    assert sent[0][1] < 32 * 1024, f"{sent[0][1]} bytes for 8 heads × 32 tokens"
    # the same tokens again: labels and ticks do not cross a second time
    view.draw(ll.softmax(rng.standard_normal((8, 32, 32))), data.tokens_of_length(32))
    assert "row_labels" not in sent[1][0] and "values" in sent[1][0]


def test_head_view_keeps_token_and_lock_valid_when_the_sizes_shrink():
    from lessons_lib.figures.live.heads import HeadView

    view = HeadView()
    view.draw(np.full((8, 10, 10), 0.1), token=9)
    view.locked = 6
    view.draw(np.full((4, 5, 5), 0.2))
    assert view.token == 4 and view.locked == -1
    with pytest.raises(ValueError, match=r"\(n_heads, seq_len, seq_len\)"):
        view.draw(np.ones((3, 4)))
    with pytest.raises(ValueError, match="token must be from 0 to 4"):
        view.draw(np.full((4, 5, 5), 0.2), token=7)


def test_head_view_traits_are_the_ones_its_javascript_reads():
    """Every synced trait of HeadView appears in the `heads` kind of live_figures.js, and back."""
    import re
    from pathlib import Path

    from lessons_lib.figures.live.heads import HeadView

    js = (Path(ll.__file__).parent / "figures" / "live" / "live_figures.js").read_text(encoding="utf-8")
    block = js[js.index("KINDS.heads = {"):]
    listed = set(re.findall(r'"(\w+)"', block[:block.index("]")]))
    synced = {name for name in HeadView().traits(sync=True)
              if not name.startswith("_")}
    assert listed <= synced, listed - synced
    assert {"values", "shape", "locked", "hovered", "token", "direction", "panel_titles"} <= listed


def test_head_grid_explorer_shows_the_librarys_heads():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer

    ex = HeadGridExplorer(n_heads=8, d_model=64, seq_len=12, token=3)
    assert ex.last_error is None and ex.weights.shape == (8, 12, 12)
    np.testing.assert_allclose(ex.view.matrix, ex.weights)
    np.testing.assert_allclose(ex.weights.sum(axis=-1), 1.0)
    ex.set(n_heads=1)
    x = data.embed_tokens(data.tokens_of_length(12), 64, 0)
    w_q, w_k, w_v = data.projection_weights(64, 64, seed=0)
    _, single = ll.scaled_dot_product_attention(*ll.project_qkv(x, 3.0 * w_q, w_k, w_v))
    np.testing.assert_allclose(ex.weights[0], single, atol=1e-12)   # 1 head = single-head attention
    ex.set(seq_len=5)
    assert ex.controls["token"].max == 4 and ex.view.shape == [1, 5, 5]
    with pytest.raises(ValueError, match="n_heads must be one of 1, 2, 4, 8, 16; got 3"):
        ex.set(n_heads=3)
    with pytest.raises(TypeError, match="has no control heads"):
        ex.set(heads=2)


def test_head_grid_explorer_moves_cross_as_few_bytes():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer

    ex = HeadGridExplorer(n_heads=8, d_model=64, seq_len=32)
    sent = _sent(ex.view)
    for n in (4, 8, 16, 8):
        ex.set(n_heads=n)
    for L in (31, 32):
        ex.set(seq_len=L)
    assert len(sent) == 6 and max(size for _, size in sent) < 32 * 1024


def test_head_grid_explorer_links_token_and_direction_in_the_browser():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer

    ex = HeadGridExplorer()
    linked = {(link.source[1], link.target[1]) for link in ex._links}
    assert linked == {("value", "token"), ("index", "direction")}
    assert all(link.target[0] is ex.view for link in ex._links)


def test_head_grid_explorer_still_and_sentence_for_static_pages():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer
    from lessons_lib.figures.base import read_still

    bundle = HeadGridExplorer(n_heads=4, seq_len=6)._repr_mimebundle_()
    assert "n_heads = 4" in read_still(bundle)[1]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "n_heads = 4" in bundle["text/plain"] and "JupyterLab" in bundle["text/plain"]
