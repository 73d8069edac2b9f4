"""Lesson 11's explorers, driven headlessly: each shows what the library computes for its settings, opens on
the lesson's data, keeps its controls consistent (the offset is m − n), names every control, says what
changed, refuses values outside its controls, and shows errors in its box."""

from __future__ import annotations

import re

import ipywidgets
import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.explorers import lesson11_position as explorers


def _no_error(ex):
    assert ex.error_box.value == "" and ex.last_error is None, ex.error_box.value


# ------------------------------------------------------------------ shuffling
def test_the_shuffle_explorer_opens_on_the_lessons_sentences_and_order():
    ex = ll.ShuffleExplorer("dog bites man", order=[2, 1, 0])
    _no_error(ex)
    r = ll.shuffle_experiment(["dog", "bites", "man"], [2, 1, 0])
    np.testing.assert_array_equal(ex.figures["weights"].matrix, r.weights)
    np.testing.assert_array_equal(ex.figures["outputs_shuffled"].matrix, r.shuffled_outputs)
    assert ex.figures["weights_shuffled"].row_labels == ["man", "bites", "dog"]
    assert "only in the new order (largest difference below 1e-12)" in ex.summary


def test_shuffle_and_back_and_the_kind_of_positions():
    ex = ll.ShuffleExplorer("The cat sat on the mat.")
    first = list(ex.result.shuffled)
    assert first != ex.result.tokens and sorted(first) == sorted(ex.result.tokens)
    ex.shuffle()
    assert ex.result.shuffled != first and ex.access.text.startswith("shuffled: every token keeps")
    ex.restore()
    assert ex.result.shuffled == ex.result.tokens
    assert ex.access.text.startswith("back to the written order")
    ex.shuffle()
    ex.set(positions="rope")
    assert not ex.result.follows and "changed with their places" in ex.summary
    assert ex.access.text.startswith("positions = RoPE: the tokens' outputs changed")
    for name in ("weights", "outputs_shuffled"):
        assert ex.figures[name].alt.split(";")[1].strip().startswith("RoPE, shuffled:")
    ex.set(sentence="dog bites man")                       # a new sentence starts from its first shuffle
    assert sorted(ex.result.shuffled) == ["bites", "dog", "man"] and ex.result.shuffled != ex.result.tokens
    _no_error(ex)


def test_the_shuffle_buttons_are_named_for_screen_readers():
    ex = ll.ShuffleExplorer()
    labels = {e["cls"]: e["label"] for e in ex.access.controls}
    assert labels["lessons-button-shuffle"] == "Shuffle"
    assert labels["lessons-button-restore"] == "Back to the written order"
    assert labels["lessons-control-sentence"].startswith("sentence")
    assert labels["lessons-toggle-positions"].startswith("positions")


# ------------------------------------------------------------------ sinusoids
@pytest.mark.parametrize("d_model", explorers.D_MODEL_OPTIONS)
def test_the_sinusoid_explorer_shows_the_encodings_and_their_dot_products(d_model):
    ex = ll.SinusoidExplorer(d_model=d_model)
    for pos in (0, 10, 63):
        ex.set(position=pos)
        pe = ll.sinusoidal_positions(64, d_model)
        np.testing.assert_allclose(ex.figures["pe"].matrix, pe)
        assert ex.figures["pe"].highlight_row == pos
        line = ex.figures["similarity"].series[0]
        np.testing.assert_allclose(line["y"], pe @ pe[pos])
        assert ex.figures["similarity"].marker["x"] == pos
        assert "(largest difference below 1e-12)" in ex.readout_line()
        _no_error(ex)


# ------------------------------------------------------------------ RoPE and ALiBi
def test_the_rope_explorer_opens_on_the_lessons_query_and_key():
    ex = ll.RopeExplorer()
    q, k = ll.rope_vectors(16)
    view = ll.rotation_view(q, k, 7, 3)
    assert ex.controls["offset"].value == 4
    assert ex.view.score == view.score
    assert len(ex.figures["dials"].dials) == 8
    assert "the same offset at m = 107, n = 103" in ex.readout_line()
    assert "(largest difference below 1e-12)" in ex.readout_line()
    np.testing.assert_array_equal(ex.figures["alibi"].matrix, ll.alibi_bias(4, 32)[:, 7, :])
    _no_error(ex)


@pytest.mark.parametrize("convention", ["half", "interleaved"])
@pytest.mark.parametrize("d_head", explorers.D_HEAD_OPTIONS)
def test_every_d_head_and_layout_shows_the_librarys_numbers(d_head, convention):
    ex = ll.RopeExplorer(d_head=d_head, convention=convention, base=100.0)
    q, k = ll.rope_vectors(d_head)
    for m, n in ((0, 0), (31, 0), (0, 31), (12, 19)):
        ex.set(m=m, n=n)
        turned = (ll.rope(q[None], [m], base=100.0, convention=convention)
                  @ ll.rope(k[None], [n], base=100.0, convention=convention).T).item()
        assert ex.view.score == pytest.approx(turned, abs=1e-12)
        assert sum(d["add"] for d in ex.figures["dials"].dials) == pytest.approx(turned, abs=1e-9)
        series = ex.figures["scores"].series
        assert series[0]["label"] == f"“{convention}” pairs"
        np.testing.assert_allclose(series[0]["y"], ll.offset_scores(q, k, np.arange(-31, 32), base=100.0,
                                                                    convention=convention))
        assert ex.figures["scores"].marker["x"] == m - n
        assert "NOT below" not in ex.summary
        _no_error(ex)


def test_the_offset_moves_the_query_and_m_and_n_move_the_offset():
    ex = ll.RopeExplorer()
    c = ex.controls
    for values, (m, n) in ((dict(offset=-20), (0, 20)), (dict(offset=31), (31, 0)), (dict(m=5), (5, 0)),
                           (dict(n=30), (5, 30)), (dict(offset=0), (30, 30)), (dict(m=4, n=9), (4, 9))):
        ex.set(**values)
        assert (c["m"].value, c["n"].value, c["offset"].value) == (m, n, m - n), values
    c["offset"].value = 3                                   # what a slider move in the browser does
    assert (c["m"].value, c["n"].value) == (12, 9)
    assert ex.access.text.startswith("offset = 3: offset 3: score")


def test_the_names_follow_every_slider():
    ex = ll.RopeExplorer()
    for name, value in (("m", 9), ("n", 2), ("offset", -5), ("d_head", 64), ("base", 100.0),
                        ("convention", "interleaved")):
        ex.set(**{name: value})
        said = ex.setting(name)
        for fig in ex.figures.values():
            assert said in fig.alt or "convention = interleaved" in fig.alt, (name, fig.alt)
        assert ex.access.text.startswith(said)


@pytest.mark.parametrize("cls", [ll.ShuffleExplorer, ll.SinusoidExplorer, ll.RopeExplorer])
def test_every_control_has_a_name_that_says_what_it_sets_and_a_value_text(cls):
    ex = cls()
    entries = {e["cls"]: e for e in ex.access.controls}
    for name, control in ex.controls.items():
        mine = [entries[c] for c in control._dom_classes if c in entries]
        assert len(mine) == 1, name
        label = mine[0]["label"]
        assert (control.description or name) in label and len(label) > len(control.description or ""), label
        if isinstance(control, ipywidgets.SelectionSlider | ipywidgets.IntSlider | ipywidgets.FloatLogSlider):
            assert mine[0]["value"] == name and ex.setting(name).startswith(f"{name} = ")
    assert ex.setting("base" if "base" in ex.controls else next(iter(ex.controls)))


@pytest.mark.parametrize("make, error, words", [
    (lambda: ll.RopeExplorer(m=32), ValueError, "m must be from 0 to 31"),
    (lambda: ll.RopeExplorer(d_head=6), ValueError, "d_head must be one of 2, 4, 8, 16, 32, 64"),
    (lambda: ll.RopeExplorer(base=1.0), ValueError, "base must be a number from 10 to 1000000"),
    (lambda: ll.RopeExplorer(convention="GPT-J"), ValueError, "convention must be one of half, interleaved"),
    (lambda: ll.SinusoidExplorer(position=64), ValueError, "position must be from 0 to 63"),
    (lambda: ll.SinusoidExplorer(d_model=10), ValueError, "d_model must be one of 8, 16, 32, 64, 128"),
    (lambda: ll.ShuffleExplorer("man bites dog"), ValueError, "sentence must be one of"),
    (lambda: ll.ShuffleExplorer(order=[0, 0, 1]), ValueError, "order must list each index 0 … 2 once"),
    (lambda: ll.ShuffleExplorer(positions="learned"), ValueError, "positions must be one of none"),
    (lambda: ll.RopeExplorer().set(offset=40), ValueError, "offset must be from -31 to 31"),
])
def test_values_outside_the_controls_are_refused(make, error, words):
    with pytest.raises(error, match=re.escape(words)):
        make()


def test_an_error_in_a_redraw_reaches_the_error_box(monkeypatch):
    ex = ll.RopeExplorer()

    def broken(*args, **kwargs):
        raise ValueError("the <pairs> fell apart")

    monkeypatch.setattr(explorers.lab, "rotation_view", broken)
    ex.controls["m"].value = 9
    assert "the &lt;pairs&gt; fell apart" in ex.error_box.value and isinstance(ex.last_error, ValueError)
    monkeypatch.undo()
    ex.controls["m"].value = 10
    _no_error(ex)


@pytest.mark.parametrize("make", [lambda: ll.ShuffleExplorer(order=[2, 1, 0]), ll.SinusoidExplorer,
                                  ll.RopeExplorer])
def test_the_still_shows_the_same_view_with_its_read_out(make):
    ex = make()
    still, alt = ex.static_view()
    assert still.axes and ex.readout_line() and alt.endswith(ex.readout_line())
    assert ex.title in alt
