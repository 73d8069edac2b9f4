"""The stills and the live view of lesson 06's heads: the split drawn cell by cell, one panel per head, every
head in one message."""

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


# ------------------------------------------------------------------ figures
def test_plot_head_shapes_places_cells_as_split_heads_does():
    fig = ll.plot_head_shapes(seq_len=3, d_model=6, n_heads=2)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert ".reshape(3, 2, 3)" in texts and ".transpose(1, 0, 2)" in texts and ".reshape(3, 6)" in texts
    # Q's 18 cells appear in Q, in the view and in the heads: 3 times each
    for i in range(3):
        for c in range(6):
            assert texts.count(f"{i},{c}") >= 3
    with pytest.raises(ValueError, match="n_heads=4 does not divide d_model=6"):
        ll.plot_head_shapes(3, 6, 4)


def test_plot_head_shapes_labels_a_heads_cells_alike_in_the_split_and_the_merge():
    """Head 1 of 2 over d_model = 6 holds columns 3-5: its cells read "0,3" … "2,5" in both rows."""
    fig = ll.plot_head_shapes(seq_len=3, d_model=6, n_heads=2)
    texts = [t.get_text() for t in fig.axes[0].texts]
    # split: Q, the view, the heads; merge: the head outputs, tokens first, Concat: 6 times each
    assert all(texts.count(f"{i},{c}") == 6 for i in range(3) for c in range(6)), texts
    assert not any(t in texts for t in ("0,6", "3,0")), "no label beyond Q's 3 × 6 cells"


def test_plot_head_grid_one_panel_per_head_on_one_scale():
    tokens = data.tokenize(data.SENTENCES["cat"])
    x = data.embed_tokens(tokens, d_model=8, seed=0)
    rng = np.random.default_rng(0)
    _, w = ll.multi_head_attention(x, *_weights(rng, 8), n_heads=4)
    fig = ll.plot_head_grid(w, tokens, head_names=["a", "b", "c", "d"])
    images = [im for ax in fig.axes for im in ax.images]
    assert len(images) == 4
    for k, im in enumerate(images):
        np.testing.assert_allclose(im.get_array(), w[k])
        assert im.get_clim() == (0.0, 1.0)
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles == ["head 0: a", "head 1: b", "head 2: c", "head 3: d"]
    with pytest.raises(ValueError, match=r"\(n_heads, seq_len, seq_len\)"):
        ll.plot_head_grid(w[0], tokens)
