"""What the lessons compute with (``lab/``: the cost lab, the masking experiments, the hand-built heads, the
model helpers) names a wrong argument: one size where a list is expected, one method name as a string, an
attend function that returns ``(output, weights)``, a ragged list, a string where a number belongs, zero
heads or layers, a zero history interval, the whole data set where one split is expected, a seed below 0,
a sharpness that is not a number: each raises ``TypeError`` or ``ValueError`` naming the argument, never
numpy's, torch's or Python's internals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll


def raises_naming(exc, words, call):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, message
    for internal in ("setting an array element", "not iterable", "division by zero", "inhomogeneous",
                     "has no attribute", "object of type"):
        assert internal not in message, message


@pytest.mark.parametrize("call, exc, words", [
    (lambda: ll.measure_scaling(512, progress=False), TypeError, ["sizes", "[512]"]),
    (lambda: ll.measure_scaling([256], "naive numpy", progress=False), TypeError, ["methods", "list"]),
    (lambda: ll.measure_block_sizes(256, 64, progress=False), TypeError, ["block_sizes"]),
    (lambda: ll.measure("naive numpy", "512"), TypeError, ["n (the sequence length)"]),
    (lambda: ll.measure("naive numpy", 64, repeats="3"), TypeError, ["repeats"]),
    (lambda: ll.estimate_memory("naive numpy", 64, "64"), TypeError, ["d (the head dimension)"]),
    (lambda: ll.measure_scaling(["256"], progress=False), TypeError, ["each size"]),
], ids=["one size", "one method as a string", "one block size", "a string for n", "a string for repeats",
        "a string for d", "a string in the sizes"])
def test_cost_lab_arguments(call, exc, words):
    raises_naming(exc, words, call)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: ll.mask_gallery(lengths=[[8, 5], [3]]), ValueError, ["lengths", "rectangular"]),
    (lambda: ll.padding_mask([[1, 1], [1]]), ValueError, ["valid", "rectangular"]),
    (lambda: ll.padding_mask(lengths=[[3, 2], [1]]), ValueError, ["lengths", "rectangular"]),
    (lambda: ll.padding_mask(lengths="32"), TypeError, ["lengths"]),
    (lambda: ll.padding_mask([1, 1], n_queries="2"), TypeError, ["n_queries"]),
    (lambda: ll.causal_mask("4"), TypeError, ["n_queries"]),
    (lambda: ll.sliding_window_mask(4, "2"), TypeError, ["window"]),
    (lambda: ll.additive_mask(ll.causal_mask(3), dtype="banana"), TypeError, ["dtype"]),
    (lambda: ll.future_leak(lambda x: ll.scaled_dot_product_attention(x, x, x, causal=True), np.eye(3), 1),
     TypeError, ["attend", "(output, weights)", "[0]"]),
], ids=["ragged gallery lengths", "ragged key padding", "ragged lengths", "lengths as a string",
        "n_queries as a string", "causal_mask size as a string", "window as a string", "dtype not a type",
        "attend returns a tuple"])
def test_mask_arguments(call, exc, words):
    raises_naming(exc, words, call)


@pytest.fixture(scope="module")
def data():
    pytest.importorskip("torch")
    return ll.make_coref_data(40, 20, seed=0)


@pytest.mark.parametrize("call, exc, words", [
    (lambda d: ll.train_coref_model(d, steps=2, n_heads=0, progress=False), ValueError, ["n_heads"]),
    (lambda d: ll.train_coref_model(d, steps=2, n_layers=0, progress=False), ValueError, ["n_layers"]),
    (lambda d: ll.train_coref_model(d, steps=2, lr="0.01", progress=False), TypeError, ["lr"]),
    (lambda d: ll.train_coref_model(d.train, steps=2, progress=False), TypeError,
     ["data", "make_coref_data"]),
    (lambda d: ll.train_coref_model(d, steps=2, probes=["the cat"], progress=False), TypeError, ["probes"]),
    (lambda d: ll.CorefModel(n_layers=0), ValueError, ["n_layers"]),
    (lambda d: ll.CorefModel(n_heads=0), ValueError, ["n_heads"]),
    (lambda d: ll.train_sink_head(steps=2, history_every=0), ValueError, ["history_every"]),
    (lambda d: ll.train_sink_head(steps=2, batch_size="64"), TypeError, ["batch_size"]),
], ids=["zero heads", "zero layers", "lr as a string", "one split for data", "probes as a list",
        "model with zero layers", "model with zero heads", "zero history interval", "batch_size as a string"])
def test_model_helper_arguments(data, call, exc, words):
    raises_naming(exc, words, lambda: call(data))


def test_the_whole_data_set_where_one_split_is_expected(data):
    run = ll.train_coref_model(data, steps=2, snapshot_every=1, progress=False)
    raises_naming(TypeError, ["split", "data.train or data.test", "whole data set"],
                  lambda: ll.accuracy(run, data))
    sink = ll.train_sink_head(steps=2)
    raises_naming(TypeError, ["split", "data.train or data.test"],
                  lambda: ll.sink_summary(sink.model, sink.data))


def test_a_diverging_training_run_stops_with_a_clear_message(data):
    """A learning rate far too large: NaN losses, said at once with what to change."""
    with pytest.raises(ValueError) as info:
        ll.train_coref_model(data, steps=60, lr=1e6, progress=False)
    message = str(info.value)
    assert "diverged" in message and "lr=1e+06" in message and "smaller" in message, message


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(max_value=-1))
def test_measure_names_a_seed_below_zero(seed):
    with pytest.raises(ValueError, match=r"^seed must be 0 or more"):
        ll.measure("naive numpy", 8, d=4, seed=seed, repeats=1, memory=False)


@settings(max_examples=40, deadline=None)
@given(sharpness=st.one_of(st.text(max_size=4), st.none(), st.booleans(), st.lists(st.integers(), max_size=2),
                           st.just(np.array([8.0])), st.complex_numbers(allow_nan=False)))
def test_handmade_heads_says_sharpness_must_be_a_number(sharpness):
    with pytest.raises(TypeError, match=r"^sharpness must be a number"):
        ll.handmade_heads(["the", "cat", "sat"], 1, sharpness=sharpness)
