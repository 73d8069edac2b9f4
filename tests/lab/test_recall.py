"""Multi-query associative recall (notebook 13): the data asks what it says, the torch mixers are the
course's formulas, the training is deterministic, and the verdicts follow the numbers.

The MQAR sequences list distinct keys with their values, then ask every key once; each asked key's target is
the value that followed it. The five mixers, in torch float64, equal ``core.attention`` (softmax, sliding
window) and ``core.linear`` (linear attention, the decaying state, the delta rule) below 1e-12. The verdicts
of :class:`RecallTable` are computed from its runs (a table of planted recalls gives the words those
numbers mean, and other numbers give other words). Trained (marked ``training``): the same seed gives the
same losses; softmax attention recalls every pair where a window as large as the state does not.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import recall
from tests.helpers import examples

TIGHT = 1e-12


# ------------------------------------------------------------------ the data
@settings(max_examples=examples(40), deadline=None)
@given(n_pairs=st.integers(1, recall.N_KEYS), n=st.integers(1, 6), seed=st.integers(0, 2**32))
def test_every_asked_key_expects_the_value_that_followed_it(n_pairs, n, seed):
    data = ll.mqar_data(n_pairs, n, seed)
    assert data.tokens.shape == data.targets.shape == (n, 4 * n_pairs)
    half = 2 * n_pairs
    for tokens, targets in zip(data.tokens, data.targets):
        keys, values = tokens[:half:2], tokens[1:half:2]
        assert len(set(keys.tolist())) == n_pairs and keys.max() < recall.N_KEYS <= values.min()
        stored = dict(zip(keys.tolist(), (values - recall.N_KEYS).tolist()))
        asked = tokens[half::2]
        assert sorted(asked.tolist()) == sorted(keys.tolist())                  # every key asked once
        assert targets[half::2].tolist() == [stored[key] for key in asked.tolist()]
        assert (tokens[half + 1::2] - recall.N_KEYS).tolist() == targets[half::2].tolist()
        assert (targets[:half] == -1).all() and (targets[half + 1::2] == -1).all()
    again = ll.mqar_data(n_pairs, n, seed)
    assert np.array_equal(again.tokens, data.tokens)


@pytest.mark.parametrize(("call", "words"), [
    (lambda: ll.mqar_data(65, 4), "n_pairs must be from 1 to 64"),
    (lambda: ll.mqar_data(0, 4), "n_pairs must be from 1 to 64"),
    (lambda: ll.mqar_data(4, 4, seed=-1), "seed must be 0 or more"),
    (lambda: ll.numbers_kept("mamba", 10), "mixer must be one of"),
    (lambda: ll.train_recall_model("rnn"), "mixer must be one of"),
    (lambda: ll.train_recall_model("delta", 4, lr=-1.0), "lr must be positive"),
    (lambda: ll.compare_recall((), (4,)), "at least one mixer"),
    (lambda: ll.mix("delta", *(torch.zeros(1, 3, 2),) * 3), "needs gate, β_t"),
    (lambda: ll.mix("softmax", torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3, 2)), "(batch, N, d)"),
    (lambda: ll.mix("linear", torch.zeros(1, 3, 2), torch.zeros(1, 4, 2), torch.zeros(1, 4, 2)),
     "q and k must have one shape"),
])
def test_bad_settings_are_refused_by_name(call, words):
    with pytest.raises((TypeError, ValueError)) as error:
        call()
    assert words in str(error.value)


def test_a_cache_grows_and_a_state_does_not():
    for n in (8, 64, 512):
        assert ll.numbers_kept("softmax", n, 16) == 2 * 16 * n
        assert ll.numbers_kept("window", n, 16, window=8) == 2 * 16 * min(n, 8)
        assert ll.numbers_kept("linear", n, 16) == 16 * 16 + 16
        assert ll.numbers_kept("decay", n, 16) == ll.numbers_kept("delta", n, 16) == 16 * 16


# ------------------------------------------------------------------ the mixers are the course's formulas
@settings(max_examples=examples(30), deadline=None)
@given(batch=st.integers(1, 3), n=st.integers(1, 20), d_k=st.integers(1, 6), d_v=st.integers(1, 6),
       window=st.integers(1, 8), seed=st.integers(0, 2**32))
def test_the_torch_mixers_are_the_numpy_formulas(batch, n, d_k, d_v, window, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((batch, n, d_k)), rng.standard_normal((batch, n, d_k))
    v = rng.standard_normal((batch, n, d_v))
    decay, beta = rng.uniform(0.05, 1.0, (batch, n)), rng.uniform(0.0, 1.0, (batch, n))

    def ours(mixer, gate=None):
        tensors = [torch.from_numpy(x) for x in (q, k, v)]
        gate = None if gate is None else torch.from_numpy(gate)
        return ll.mix(mixer, *tensors, gate, window).numpy()

    expected = {
        "softmax": ll.scaled_dot_product_attention(q, k, v, causal=True)[0],
        "window": ll.scaled_dot_product_attention(q, k, v, mask=ll.sliding_window_mask(n, window))[0],
        "linear": ll.linear_attention(q, k, v),
        "decay": ll.decay_attention(q, k, v, decay),
        "delta": ll.delta_rule(q, k, v, beta)[0],
    }
    gates = {"decay": decay, "delta": beta}
    for mixer, reference in expected.items():
        assert np.max(np.abs(ours(mixer, gates.get(mixer)) - reference)) < TIGHT, mixer


# ------------------------------------------------------------------ the verdicts follow the numbers
def _table(recalls: dict) -> recall.RecallTable:
    counts = (4, 8, 16)
    return recall.RecallTable({m: {p: recall.RecallRun(m, p, r, np.zeros(1), ll.numbers_kept(m, 4 * p), 0.0,
                                                       config={"window": 8, "d_state": 16})
                                   for p, r in zip(counts, rs)} for m, rs in recalls.items()})


def test_the_verdicts_say_what_the_numbers_say():
    table = _table({"softmax": [1.0, 1.0, 0.99], "linear": [0.95, 0.7, 0.3], "delta": [1.0, 0.92, 0.5],
                    "window": [0.6, 0.2, 0.1]})
    said = table.verdicts()
    assert "softmax: recalls at least 90% of the asked keys at every count tried (up to 16 pairs)" in said
    assert "linear: recalls fewer than 90% from 8 pairs on" in said
    assert "delta: recalls fewer than 90% from 16 pairs on" in said
    assert "window: recalls fewer than 90% from 4 pairs on, keeping the last 8 tokens only" in said
    assert "the fixed state that recalls most is 'delta'" in said
    assert table.first_failure("softmax") is None and table.first_failure("delta") == 16
    close = _table({"linear": [0.95, 0.7, 0.31], "delta": [1.0, 0.92, 0.33]}).verdicts()
    assert "'delta' and 'linear' recall about as much" in close
    assert "softmax" not in close
    lines = table.table().splitlines()
    assert lines[0].split("│")[1].split() == ["4", "pairs", "8", "pairs", "16", "pairs"]
    assert lines[2].split("│")[1].split() == ["100%", "100%", "99%"]


# ------------------------------------------------------------------ pairs written by hand
@settings(max_examples=examples(20), deadline=None)
@given(d=st.integers(2, 12), decay=st.floats(0.3, 1.0), seed=st.integers(0, 2**32))
def test_a_state_holds_as_many_pairs_as_it_has_dimensions_and_no_more(d, decay, seed):
    """Up to d pairs, written with keys at right angles, every rule reads each one back; at 4·d pairs the
    keys must overlap and every state of d × d confuses some, while the cache still reads them all (in two
    dimensions or more: in one, every key is ±1 and two keys can be the same)."""
    for rule in recall.WRITE_RULES:
        assert ll.state_recall(d, d, rule=rule, decay=decay, seed=seed, n_trials=4) == 1.0, rule
        crowded = ll.state_recall(4 * d + 4, d, rule=rule, decay=decay, seed=seed, n_trials=4)
        assert (crowded == 1.0) if rule == "softmax" else (crowded < 1.0), rule


def test_the_recall_curve_is_state_recall_at_each_count():
    curve = ll.recall_curve((2, 20), 8, decay=0.8, seed=5, rules=("delta", "linear"))
    assert list(curve) == ["delta", "linear"]
    assert curve["delta"] == [ll.state_recall(p, 8, rule="delta", decay=0.8, seed=5) for p in (2, 20)]
    with pytest.raises(ValueError, match="rule must be one of"):
        ll.state_recall(4, rule="mamba")
    with pytest.raises(ValueError, match=r"decay must lie in \(0, 1\]"):
        ll.state_recall(4, decay=0.0)


def test_the_recall_curve_keeps_the_numbers_it_had_before_its_draws_were_kept():
    """Each count's keys and values are drawn once and shared by every rule and decay (what makes an
    explorer's move cheap): the curve is the one the course drew before, when every rule and count drew its
    own (these are its numbers, shares of 32 trials), whatever was computed first and whatever a caller did
    to the arrays it was given."""
    before = {"softmax": [1, 1, 1, 1, 1], "linear": [1, 1, 1, 71 / 128, 53 / 256],
              "decay": [1, 1, 1, 61 / 128, 43 / 256], "delta": [1, 1, 1, 49 / 128, 47 / 256]}
    keys, values, state = ll.written_state(8, 4, rule="delta", decay=0.8, seed=0, n_trials=32)
    keys[:], values[:], state[:] = 0.0, 0.0, 0.0                     # a caller's own copies
    assert ll.recall_curve((1, 2, 4, 8, 16), 4, decay=0.8, seed=0) == before
    assert ll.recall_curve((16, 8), 4, decay=0.8, seed=0, rules=("delta", "linear")) == {
        "delta": before["delta"][:2:-1], "linear": before["linear"][:2:-1]}
    keys, values, state = ll.written_state(16, 4, rule="linear", decay=0.8, seed=0, n_trials=32)
    nearest = np.argmax((keys @ state) @ np.swapaxes(values, -1, -2), axis=-1)
    assert np.mean(nearest == np.arange(16)) == before["linear"][-1]


def test_the_written_state_is_each_rules_sum_and_the_delta_rule_overwrites():
    """Linear attention's state is Σ k vᵀ, the decay's Σ a^(P−p) k_p v_pᵀ; the delta rule writing the same key
    twice keeps the second value only; softmax keeps no state."""
    keys, values, state = ll.written_state(5, 6, rule="linear", seed=3, n_trials=2)
    np.testing.assert_allclose(state, np.einsum("tpk,tpv->tkv", keys, values), atol=1e-12)
    _, _, faded = ll.written_state(5, 6, rule="decay", decay=0.5, seed=3, n_trials=2)
    np.testing.assert_allclose(faded, np.einsum("p,tpk,tpv->tkv", 0.5 ** np.arange(4, -1, -1), keys, values),
                               atol=1e-12)
    assert ll.written_state(3, 4, rule="softmax")[2] is None
    k, v1, v2 = np.eye(3)[0], np.eye(3)[1], np.eye(3)[2]
    twice = np.stack([k, k])
    _, overwritten = ll.delta_rule(twice, twice, np.stack([v1, v2]), np.ones(2), scale=1.0)
    np.testing.assert_allclose(k @ overwritten, v2, atol=1e-12)


# ------------------------------------------------------------------ training
@pytest.mark.training
def test_a_seeded_run_is_deterministic_and_softmax_recalls_where_a_window_cannot():
    first = ll.train_recall_model("softmax", 6, steps=250, seed=3)
    again = ll.train_recall_model("softmax", 6, steps=250, seed=3)
    assert np.array_equal(first.losses, again.losses) and first.recall == again.recall
    window = ll.train_recall_model("window", 6, steps=250, seed=3)
    assert first.recall >= recall.RECALLED > window.recall
    assert first.numbers_kept == 2 * 16 * 24 and window.numbers_kept == 2 * 16 * 8
