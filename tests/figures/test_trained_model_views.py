"""Figures and explorers of notebook 09 (lesson09_attention_in_action): they draw what the model computed."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.figures.base import read_still
from lessons_lib.lab import coref, models


@pytest.fixture(scope="module")
def run():
    return models.train_coref_model(steps=40, snapshot_every=20, progress=False)


@pytest.fixture(scope="module")
def reading(run):
    return models.read_attention(run, coref.SENTENCE_A)


@pytest.mark.training  # every test here draws what a model trained in the module computed
def test_still_figures_draw(run, reading):
    soft = models.train_sink_head(False, steps=20, history_every=10)
    off = models.train_sink_head(True, steps=20, history_every=10)
    figures = {
        "loss": ll.plot_loss_curve(run.losses, test_accuracy=run.test_accuracy),
        "rows": ll.plot_referent_rows([reading, reading]),
        "it rows": ll.plot_it_rows(reading),
        "grid": ll.plot_layer_grid(reading),
        "training": ll.plot_training_rows(run, "B"),
        "sink": ll.plot_sink_experiment(soft, off),
    }
    for name, fig in figures.items():
        assert fig._repr_png_().startswith(b"\x89PNG"), name
    assert len(figures["grid"].axes) == 2 * 2 * 2  # four heatmaps, each with its colorbar
    it_rows = figures["it rows"].axes[0].images[0].get_array()
    np.testing.assert_allclose(it_rows[-1], reading.referent)
    np.testing.assert_allclose(it_rows[0], reading.layers[0, 0, reading.it_pos])


@pytest.mark.training
def test_bad_input_is_explained(run):
    with pytest.raises(TypeError, match="Reading"):
        ll.plot_it_rows(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="No probe sentence named 'C'"):
        ll.plot_training_rows(run, "C")
    with pytest.raises(ValueError, match="finite"):
        ll.plot_loss_curve([1.0, float("nan")])


@pytest.mark.training
def test_sentence_explorer(run):
    ex = ll.SentenceExplorer(run)
    assert ex.error is None and ex.reading.answer == "animal"
    np.testing.assert_allclose(ex.figures["referent"].bar_values, ex.reading.referent)
    assert ex.figures["heads"].matrix.shape == (4, len(ex.reading.tokens), len(ex.reading.tokens))
    ex.set(sentence="The zebra didn't cross the street because it was too tired.")
    assert "zebra" in ex.error and ex.reading is None and "Cannot read this sentence" in ex.message.value
    ex.set(sentence=coref.SENTENCE_B)
    assert ex.error is None and "street" in ex.message.value
    with pytest.raises(TypeError, match="no control"):
        ex.set(step=3)
    bundle = ex._repr_mimebundle_()
    assert "SentenceExplorer" in bundle["text/plain"]
    assert read_still(bundle)[1].startswith("Still picture of the Your sentence explorer")


@pytest.mark.training
def test_training_explorer(run):
    ex = ll.TrainingExplorer(run, step=0)
    assert list(ex.controls["step"].options) == [0, 20, 40]
    ex.set(step=40, sentence="B")
    np.testing.assert_allclose(ex.figures["referent"].bar_values, run.snapshots["B"]["referent"][-1])
    assert ex.figures["loss"].marker["x"] == 40
    with pytest.raises(ValueError, match="step must be one of"):
        ex.set(step=7)
    with pytest.raises(ValueError, match="recorded steps"):
        ll.TrainingExplorer(run, step=5)
    assert "lessons-slider-step" in ex.controls["step"]._dom_classes
    assert read_still(ex._repr_mimebundle_())
