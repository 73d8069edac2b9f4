"""The tiny models of notebook 09 (lessons_lib.lab.models): their attention is the course's formula, the
coreference model learns to ≥ 95% held-out accuracy deterministically, and the attention-sink claim
holds numerically."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import coref, models
from tests.helpers import examples


@pytest.fixture(scope="module")
def run():
    """The notebook's model: default settings, seed 0."""
    return models.train_coref_model(progress=False)


@pytest.fixture(scope="module")
def sink_runs():
    return {off: models.train_sink_head(off) for off in (False, True)}


# ------------------------------------------------------------------ the attention formula
@settings(max_examples=examples(60))
@given(st.integers(1, 3), st.integers(1, 7), st.integers(1, 7), st.integers(1, 6), st.integers(0, 2**31))
def test_attention_matches_the_numpy_reference_and_sdpa(batch, L, S, d, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((batch, n, d)) for n in (L, S, S))
    key_mask = rng.random((batch, S)) < 0.7
    key_mask[:, 0] = True
    out, w = models.attend(*(torch.as_tensor(a) for a in (q, k, v)), torch.as_tensor(key_mask))
    ref_out, ref_w = ll.scaled_dot_product_attention(q, k, v, mask=key_mask[:, None, :])
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=0, atol=1e-12)
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        *(torch.as_tensor(a) for a in (q, k, v)), attn_mask=torch.as_tensor(key_mask)[:, None, :])
    np.testing.assert_allclose(out.numpy(), sdpa.numpy(), rtol=0, atol=1e-12)
    assert (w.numpy()[np.broadcast_to(~key_mask[:, None, :], w.shape)] == 0).all()


@settings(max_examples=examples(60))
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31), st.floats(0.1, 10))
def test_off_slot_is_a_zero_key_with_a_zero_value(L, S, seed, spread):
    rng = np.random.default_rng(seed)
    q, k, v = (torch.as_tensor(rng.standard_normal((n, 4)) * spread) for n in (L, S, S))
    out, w = models.attend(q, k, v, off_slot=True)
    scores = (q @ k.T / 2.0).numpy()
    expected = np.exp(scores) / (1.0 + np.exp(scores).sum(-1, keepdims=True))
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-10, atol=1e-300)
    off_weight = 1.0 / (1.0 + np.exp(scores).sum(-1))  # what "nothing" gets
    np.testing.assert_allclose(w.numpy().sum(-1) + off_weight, 1.0, rtol=0, atol=1e-12)
    assert (w.sum(-1) <= 1 + 1e-12).all()  # less than 1, up to rounding
    # the same as ordinary attention over one more key (score 0, value 0), with that key dropped
    k0 = torch.cat([k, torch.zeros(1, 4, dtype=k.dtype)])
    v0 = torch.cat([v, torch.zeros(1, 4, dtype=v.dtype)])
    ref_out, ref_w = ll.scaled_dot_product_attention(q.numpy(), k0.numpy(), v0.numpy())
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=0, atol=1e-10)
    np.testing.assert_allclose(w.numpy(), ref_w[:, :-1], rtol=0, atol=1e-12)


# ------------------------------------------------------------------ the model's shapes
def test_output_shapes_and_weights_sum_to_one():
    data = coref.make_coref_data(20, 5, seed=1)
    with models.deterministic(0):
        model = models.CorefModel(d_model=16, n_heads=4, n_layers=3)
    ids, it_pos = torch.as_tensor(data.train.ids), torch.as_tensor(data.train.it_pos)
    with torch.no_grad():
        logits, weights = model(ids, it_pos)
    B, L = ids.shape
    assert logits.shape == (B, L)
    assert weights.shape == (B, 3, 4, L, L)
    pad = ~torch.as_tensor(data.train.ids != 0)
    assert torch.isneginf(logits[pad]).all() and torch.isfinite(logits[~pad]).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, 3, 4, L), rtol=0, atol=1e-6)
    assert (weights * pad[:, None, None, None, :]).abs().max() == 0  # no weight on padding


def test_padding_changes_nothing():
    with models.deterministic(0):
        model = models.CorefModel()
    enc = coref.encode_sentence(coref.SENTENCE_A)
    n = enc["ids"].shape[1]
    padded = np.zeros((1, coref.MAX_LEN), dtype=np.int64)
    padded[0, :n] = enc["ids"][0]
    with torch.no_grad():
        a, wa = model(torch.as_tensor(enc["ids"]), torch.as_tensor([enc["it_pos"]]))
        b, wb = model(torch.as_tensor(padded), torch.as_tensor([enc["it_pos"]]))
    torch.testing.assert_close(a[0], b[0, :n])
    torch.testing.assert_close(wa[0], wb[0, :, :, :n, :n])


# ------------------------------------------------------------------ training
@pytest.mark.training
def test_the_notebook_model_reaches_95_percent_held_out(run):
    assert run.test_accuracy >= 0.95
    assert run.train_accuracy >= 0.95
    assert run.losses[-1] < 0.1 < run.losses[0]
    assert run.config["steps"] == len(run.losses) == 300


@pytest.mark.training
def test_a_short_fixed_seed_run_is_deterministic_and_learns():
    a = models.train_coref_model(steps=150, seed=3, snapshot_every=50, progress=False)
    b = models.train_coref_model(steps=150, seed=3, snapshot_every=50, progress=False)
    np.testing.assert_array_equal(a.losses, b.losses)
    np.testing.assert_array_equal(a.snapshots["A"]["layers"], b.snapshots["A"]["layers"])
    assert a.test_accuracy == b.test_accuracy >= 0.9
    c = models.train_coref_model(steps=5, seed=4, progress=False)
    assert not np.array_equal(a.losses[:5], c.losses)


@pytest.mark.training
def test_training_leaves_torch_settings_and_random_state_alone():
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    state = torch.random.get_rng_state()
    models.train_coref_model(steps=2, progress=False)
    assert torch.get_num_threads() == threads
    assert torch.are_deterministic_algorithms_enabled() == det
    assert torch.equal(torch.random.get_rng_state(), state)


@pytest.mark.training
def test_snapshots_cover_training(run):
    steps = run.snapshot_steps
    assert steps[0] == 0 and steps[-1] == 300 and (np.diff(steps) > 0).all()
    for name, tokens in run.probe_tokens.items():
        snap = run.snapshots[name]
        L = len(tokens)
        assert snap["layers"].shape == (len(steps), 2, 2, L, L)
        assert snap["referent"].shape == (len(steps), L)
        np.testing.assert_allclose(snap["layers"].sum(-1), 1.0, atol=1e-6)
        np.testing.assert_allclose(snap["referent"].sum(-1), 1.0, atol=1e-12)


@pytest.mark.training
def test_trained_attention_sends_it_to_the_referent(run):
    """Sentences A and B use the held-out pair (animal, street): "it" points at the right noun."""
    for text, answer in ((coref.SENTENCE_A, "animal"), (coref.SENTENCE_B, "street")):
        r = models.read_attention(run, text)
        assert r.answer == answer and r.confidence > 0.9
        np.testing.assert_allclose(r.referent.sum(), 1.0, atol=1e-12)
        np.testing.assert_allclose(r.layers.sum(-1), 1.0, atol=1e-6)
        final = run.snapshots["A" if answer == "animal" else "B"]["referent"][-1]
        np.testing.assert_allclose(final, r.referent, atol=1e-6)
        first = run.snapshots["A" if answer == "animal" else "B"]["referent"][0]
        assert first.max() < 0.5  # before training, the head points nowhere in particular


@pytest.mark.training
def test_read_attention_explains_unknown_words(run):
    with pytest.raises(ValueError, match="never seen 'zebra'"):
        models.read_attention(run, "the zebra didn't cross the street because it was too tired .")
    with pytest.raises(TypeError, match="CorefModel"):
        models.read_attention("model", coref.SENTENCE_A)


@pytest.mark.training
def test_ablating_heads(run):
    test = run.data.test
    assert models.accuracy(run, test) == run.test_accuracy
    everything = [(layer, head) for layer in (1, 2) for head in (1, 2)]
    assert models.accuracy(run, test, ablate=everything) < 0.75
    for bad in [(0, 1), (3, 1), (1, 3), "L1H1", (1.0, 1)]:
        with pytest.raises(ValueError, match="counted from 1"):
            models.accuracy(run, test, ablate=[bad])


# ------------------------------------------------------------------ attention sinks
@pytest.mark.training
def test_sink_claim(sink_runs):
    """A head with nothing to fetch parks its weight on <s> (whose value shrinks), unless it may attend
    to nothing: then its weights on real tokens sum to almost 0."""
    soft, off = sink_runs[False].summary, sink_runs[True].summary
    # both solve the task
    for s in (soft, off):
        assert s["ref_referent"] >= 0.95 and s["ref_error"] < 0.02 and s["none_error"] < 0.02
    # plain softmax: rows sum to 1, so a dummy "it" puts its weight on the sink ...
    assert soft["none_tokens"] == pytest.approx(1.0) and soft["ref_tokens"] == pytest.approx(1.0)
    assert soft["none_sink"] >= 0.8 and soft["ref_sink"] <= 0.05
    # ... high weight, little content: the sink's value is far shorter than a word's
    assert soft["sink_value_norm"] <= 0.25 * soft["word_value_norm"]
    # with an off slot, the weight on every real token (the sink included) nearly vanishes instead
    assert off["none_tokens"] <= 0.15 and off["none_sink"] <= 0.05
    assert off["ref_tokens"] >= 0.95
    # the sink forms during training
    history = sink_runs[False].history
    assert history["none_sink"][0] < 0.2 and history["step"][-1] == 600


@pytest.mark.training
def test_sink_runs_are_deterministic(sink_runs):
    again = models.train_sink_head(False)
    np.testing.assert_array_equal(again.losses, sink_runs[False].losses)


@pytest.mark.training
def test_course_adamw_matches_torch_adamw_bit_for_bit():
    torch.manual_seed(0)
    ours, theirs = (models.CorefModel(d_model=16, n_heads=2, n_layers=1) for _ in range(2))
    theirs.load_state_dict(ours.state_dict())
    opts = (models.AdamW(ours.parameters(), lr=3e-3, weight_decay=0.05),
            torch.optim.AdamW(theirs.parameters(), lr=3e-3, weight_decay=0.05))
    ids = torch.randint(1, 20, (8, 10))
    it_pos, target = torch.full((8,), 5), torch.randint(0, 5, (8,))
    for _ in range(5):
        for model, opt in zip((ours, theirs), opts):
            logits, _ = model(ids, it_pos)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(logits, target).backward()
            opt.step()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert torch.equal(a, b), "the course's AdamW must take exactly torch.optim.AdamW's steps"


@pytest.mark.training
@pytest.mark.subprocess
def test_training_keeps_torch_compiler_unloaded():
    code = ("import sys, lessons_lib as ll; ll.train_coref_model(steps=2, progress=False); "
            "print('torch._dynamo' in sys.modules, 'sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"], "training must not load torch's compiler (70 MB per kernel)"
