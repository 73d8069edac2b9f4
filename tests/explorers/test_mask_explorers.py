"""Lesson 07's explorers: the three stages of the causal mask, and the mask the learner draws."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch

import lessons_lib as ll
from lessons_lib.figures.base import read_still
from lessons_lib.lab import data

F = torch.nn.functional


# ------------------------------------------------------------------ the explorers of notebook 07
def test_causal_mask_explorer_draws_the_three_stages():
    from lessons_lib.explorers.lesson07_causal_masking import CausalMaskExplorer, mask_tokens

    ex = CausalMaskExplorer(seq_len=4, query=2)
    assert ex.last_error is None and ex.tokens == ["The", "AI", "Rishi", "is"]
    np.testing.assert_array_equal(np.isneginf(ex.masked), ~ll.causal_mask(4))
    expected = ll.attention_weights(ex.scores, scale=1.0, causal=True)
    np.testing.assert_allclose(ex.weights, expected, atol=1e-15)
    assert ex.figures["weights"].highlight_row == 2
    assert ex.table.value.count("exp(−∞) = 0") == 1           # 'Rishi' may not see 'is'
    ex.set(seq_len=8, query=0)
    assert ex.table.value.count("exp(−∞) = 0") == 7 and mask_tokens(8)[4:] == data.tokens_of_length(4)
    ex.set(seq_len=3)
    assert ex.controls["query"].max == 2
    ex.figures["masked"].highlight_row = 1                     # what a click on a row in the browser does
    assert ex.controls["query"].value == 1 and ex.figures["scores"].highlight_row == 1


def test_custom_mask_explorer_redraws_what_the_learner_toggles():
    from lessons_lib.explorers.lesson07_causal_masking import CustomMaskExplorer

    ed = CustomMaskExplorer(n=5, preset="causal")
    assert "This is the causal mask" in ed.verdict
    ed.cells[0][3].value = True                                # let "The" peek at token 3
    assert ed.mask[0, 3] and ed.weights[0, 3] > 0 and "1 cell(s) differ" in ed.verdict
    assert ed.cells[0][3].description == "✓"
    ed.load("inverted causal (True = blocked)")
    assert "inverted" in ed.verdict and "Row(s) 4 may attend to nothing" in ed.verdict
    assert (ed.weights[4] == 0).all() and not np.isnan(ed.weights).any()
    ed.load("none allowed")
    assert (ed.weights == 0).all()
    with pytest.raises(ValueError, match=r"boolean \(5, 5\)"):
        ed.set_mask(np.ones((4, 4), dtype=bool))
    with pytest.raises(ValueError, match="preset must be one of"):
        ed.load("diagonal")
    assert read_still(ed._repr_mimebundle_())   # the still picture, for pages without a kernel
