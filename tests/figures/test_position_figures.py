"""Lesson 11's pictures: the stills show what they say (titles, frames, both layouts, every head), and the
live dials send one message per draw with what the read-out and the keys need, refusing what they cannot
draw."""

from __future__ import annotations

import json
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.figures import style


def _texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


def test_the_shuffle_still_shows_weights_and_outputs_as_written_and_shuffled():
    found = ll.shuffle_experiment(["dog", "bites", "man"], [2, 1, 0])
    fig = ll.plot_shuffle(found)
    text = _texts(fig)
    for words in ("Weights: “dog bites man”", "Weights: “man bites dog”", "Outputs: “man bites dog”",
                  "every row moves with its token"):
        assert words in text
    assert len([ax for ax in fig.axes if ax.images]) == 4
    moved = ll.plot_shuffle(ll.shuffle_experiment(["dog", "bites", "man"], [2, 1, 0], positions="rope"))
    assert "the numbers change" in _texts(moved)


def test_the_sinusoid_still_frames_the_position_and_draws_its_dot_products():
    fig = ll.plot_sinusoids(40, 16, pos=9)
    text = _texts(fig)
    assert "40 positions × d_model = 16" in text and "depends on j − 9 only" in text
    heat, line = fig.axes[0], next(ax for ax in fig.axes if ax.lines)
    assert heat.images[0].get_array().shape == (40, 16)
    frames = [p for p in heat.patches if p.get_height() == 1]
    assert frames and frames[0].get_y() == pytest.approx(8.5)
    x, y = line.lines[0].get_data()
    np.testing.assert_allclose(y, ll.sinusoid_similarity(40, 16, 9))
    assert y.argmax() == 9


def test_the_rope_still_has_a_dial_per_pair_both_layouts_and_alibis_row():
    q, k = ll.rope_vectors(12)
    view = ll.rotation_view(q, k, 7, 3, base=500.0, convention="interleaved")
    fig = ll.plot_rope_view(view, q, k)
    text = _texts(fig)
    dials = [ax for ax in fig.axes if ax.get_title().startswith("pair ")]
    assert len(dials) == 6
    assert "“interleaved” pairs" in text and "“half” pairs" in text and "m − n = 4" in text
    assert "ALiBi: the bias each head adds to the scores of query 7" in text
    assert f"score {view.score:.3f}".replace("-", "−") in text
    offsets_axis = next(ax for ax in fig.axes if ax.get_title() == "The score depends on the offset only")
    solid = offsets_axis.lines[0]
    np.testing.assert_allclose(solid.get_ydata(), ll.offset_scores(q, k, np.arange(-31, 32), base=500.0,
                                                                   convention="interleaved"))


def test_the_alibi_still_has_one_panel_per_head_with_its_slope():
    fig = ll.plot_alibi(4, 6)
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles == ["head 0: slope 1/4", "head 1: slope 1/16", "head 2: slope 1/64", "head 3: slope 1/256"]
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), ll.alibi_bias(4, 6)[0])


def test_the_marks_of_query_and_key_stand_out_and_come_from_the_style():
    for colour in (style.QUERY_MARK, style.KEY_MARK):
        assert style.contrast_ratio(colour, style.BACKGROUND) >= style.MIN_TEXT_CONTRAST
    assert style.live_style()["query_mark"] == style.QUERY_MARK


@pytest.mark.parametrize("call, error, words", [
    (lambda: ll.plot_shuffle("dog bites man"), TypeError, "what shuffle_experiment returns"),
    (lambda: ll.plot_sinusoids(10, 8, pos=10), ValueError, "pos must be from 0 to 9"),
    (lambda: ll.plot_rotation_dials(np.ones(3)), TypeError, "RotationView"),
    (lambda: ll.plot_order_losses(None), TypeError, "what compare_positions returns"),
])
def test_the_stills_refuse_what_they_cannot_draw(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


# ------------------------------------------------------------------ the live dials
def _dials_of(view):
    return (view.q, view.k, view.theta, view.parts, view.dims)


def test_the_dials_send_each_pair_once_with_what_the_read_out_says():
    q, k = ll.rope_vectors(8)
    view = ll.rotation_view(q, k, 5, 2)
    dials = ll.RotationDials(title="RoPE")
    sent = []
    dials.comm.send = lambda data=None, metadata=None, buffers=None: sent.append(data)
    dials.draw(*_dials_of(view), m=5, n=2)
    updates = [m for m in sent if m and m.get("method") == "update"]
    assert len(updates) == 1 and len(json.dumps(updates[0])) < 4000
    assert len(dials.dials) == 4 and dials.columns == 4
    first = dials.dials[0]
    assert first["dims"] == [0, 4] and first["theta"] == 1.0
    assert first["q_turn"] == pytest.approx(5.0) and first["k_turn"] == pytest.approx(2.0)
    assert sum(d["add"] for d in dials.dials) == pytest.approx(view.score)
    assert dials.alt.startswith("RoPE: 4 pairs, the score is their sum")
    big = ll.rotation_view(*ll.rope_vectors(64), 1, 0)
    dials.draw(*_dials_of(big), m=1, n=0)
    assert dials.columns == 8 and len(dials.dials) == 32


PAIRS = np.zeros((3, 2), int)


def _draw(q=(3, 2), theta=3, dims=PAIRS, **kw):
    settings = {"m": 0, "n": 0, **kw}
    return lambda f: f.draw(np.ones(q), np.ones(q), np.ones(theta), np.ones(3), dims, **settings)


@pytest.mark.parametrize("call, error, words", [
    (_draw(q=(3, 3)), ValueError, "must both be (n_pairs, 2)"),
    (_draw(theta=2), ValueError, "theta must have shape (3,)"),
    (_draw(dims=np.zeros((3, 2))), TypeError, "dims must be whole numbers"),
    (_draw(m=0.5), TypeError, "m must be a whole number"),
    (_draw(columns=0), ValueError, "columns must be from 1 to 64"),
])
def test_the_dials_refuse_what_they_cannot_draw(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call(ll.RotationDials())
