"""Lesson 14's explorer, driven headlessly: it shows what ``sparse_run`` computes for its settings, opens on
the lesson's tiny layer (d_c = 8, top_k = 4, the last query), says what changed, and refuses values outside
its controls."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll


def _no_error(ex):
    assert ex.error_box.value == "" and ex.last_error is None, ex.error_box.value


def test_it_opens_on_the_lessons_tiny_layer():
    ex = ll.LatentSparseExplorer()
    _no_error(ex)
    run = ll.sparse_run(8, 4)
    np.testing.assert_array_equal(ex.figures["dense"].matrix, run.dense)
    assert (ex.figures["kept"].hidden == ~run.keep).all() and ex.figures["kept"].highlight_row == 15
    assert ex.figures["cache"].bar_values.tolist() == [32.0, 16.0, 12.0]
    assert "query 15 keeps 4 of its 16 keys" in ex.summary


@pytest.mark.parametrize("values", [{"top_k": 16}, {"d_c": 20, "query": 3}, {"top_k": 1}])
def test_each_setting_draws_what_the_library_computes(values):
    ex = ll.LatentSparseExplorer()
    ex.set(**values)
    _no_error(ex)
    run = ll.sparse_run(ex.controls["d_c"].value, ex.controls["top_k"].value)
    np.testing.assert_array_equal(ex.figures["dense"].matrix, run.dense)
    assert ex.figures["cache"].bar_values[-1] == run.numbers_per_token
    if values.get("top_k") == 16:
        assert "moves 0% of its length" in ex.summary


def test_values_outside_the_controls_are_refused():
    with pytest.raises(ValueError):
        ll.LatentSparseExplorer(top_k=17)
    ex = ll.LatentSparseExplorer()
    with pytest.raises(ValueError):
        ex.set(d_c=1)
    ex.set(top_k=2)
    _no_error(ex)


def test_the_still_is_the_same_view():
    ex = ll.LatentSparseExplorer()
    fig = ex.still()
    assert "top 4 keys" in fig.alt and "latent of 8" in fig.alt
