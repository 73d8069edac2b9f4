"""The stills of lesson 07: the masking steps, the recipes compared row by row, the gallery of masks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch

import lessons_lib as ll
from lessons_lib.lab import data, masking

F = torch.nn.functional


# ------------------------------------------------------------------ figures
def test_plot_masking_steps_shows_scores_minus_infinity_and_weights():
    tokens = data.tokenize(data.SENTENCES["ai"])
    q, k, _ = ll.random_qkv(4, 4, seed=0)
    scores = ll.scale_scores(ll.attention_scores(q, k), 4)
    fig = ll.plot_masking_steps(scores, ll.causal_mask(4), tokens, query=2)
    images = [im for ax in fig.axes for im in ax.images]
    assert len(images) == 3
    np.testing.assert_allclose(images[0].get_array(), scores)
    np.testing.assert_allclose(np.ma.filled(images[2].get_array(), 0.0),
                               ll.attention_weights(scores, scale=1.0, causal=True), atol=1e-15)
    assert [t.get_text() for t in fig.axes[1].texts].count("−∞") == 6   # 4·3/2 cells above the diagonal


def test_plot_mask_gallery_one_panel_per_mask_and_sequence():
    tokens = data.tokens_of_length(5)
    fig = ll.plot_mask_gallery(masking.mask_gallery(5, lengths=(5, 3), window=2), tokens)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["causal", "padding, sequence 1", "padding, sequence 2", "causal + padding, sequence 1",
                      "causal + padding, sequence 2", "sliding window"]
    with pytest.raises(TypeError, match="non-empty dict"):
        ll.plot_mask_gallery({}, tokens)


def test_plot_masking_recipes_one_panel_per_recipe_with_each_rows_sum():
    scores = np.random.default_rng(0).normal(size=(4, 4))
    fig = ll.plot_masking_recipes(masking.compare_masking(scores, ll.causal_mask(4)), ["a", "b", "c", "d"])
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 4
    sums = [t.get_text() for t in heatmaps[2].texts if t.get_text().startswith("Σ")]
    assert len(sums) == 4 and sums[-1] == "Σ 1.00" and sums[0] != "Σ 1.00"    # "after": rows below 1
    with pytest.raises(ValueError, match="start with the right recipe"):
        ll.plot_masking_recipes(masking.compare_masking(scores, ll.causal_mask(4))[1:], ["a", "b", "c", "d"])
