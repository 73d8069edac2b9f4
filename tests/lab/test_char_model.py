"""The character model notebook 12 trains and generates with: it learns lesson 09's sentences in seconds, the
same on every run; a loop that fills and reads one KV cache per layer (as the notebook writes it) gives its
full recomputation's logits, below 1e-12 in float64 and not bit for bit in float32; turning a new token at
position 0 under a cache (the offset bug) changes the next tokens.
"""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def model():
    return ll.train_char_model(seed=0)


def _forward(model, ids, caches, positions=None):
    """The notebook's loop body: project the new tokens, turn them at their positions, append, attend."""
    start = caches[0].next_position
    positions = np.arange(start, start + len(ids)) if positions is None else positions
    x = model.embed[ids]
    for layer, cache in zip(model.layers, caches):
        q, k, v = layer.project(x)
        q, k = ll.rope(q, positions), ll.rope(k, positions)
        cache.append(k, v)
        scores = q @ np.swapaxes(cache.keys, -1, -2) * q.shape[-1] ** -0.5
        scores[..., cache.positions[None, :] > positions[:, None]] = -np.inf
        x = layer.finish(x, ll.softmax(scores) @ cache.values)
    return model.logits_of(x)


def _cached_logits(model, ids, prompt: int, positions_at_zero: bool = False):
    caches = [ll.KVCache() for _ in model.layers]
    rows = [_forward(model, ids[:prompt], caches)]
    for i in ids[prompt:]:
        rows.append(_forward(model, [i], caches, positions=np.arange(1) if positions_at_zero else None))
    return np.concatenate(rows)


def test_the_model_learns_the_sentences_in_a_few_hundred_steps(model):
    assert model.losses[:5].mean() > 2.5 and model.losses[-20:].mean() < 0.5
    text = "the dog didn't cross the road because it was"
    ids = model.encode(text)
    for _ in range(6):
        ids.append(int(np.argmax(model.full_logits(ids)[-1])))
    assert model.decode(ids).startswith(text + " too ")


def test_training_is_repeatable():
    a, b = (ll.train_char_model(steps=15, seed=3) for _ in range(2))
    assert np.array_equal(a.losses, b.losses) and np.array_equal(a.unembed, b.unembed)


def test_the_cached_loop_gives_the_recomputed_logits_in_float64_not_bit_for_bit_in_float32(model):
    ids = model.encode("the cat didn't cross the road because it was too sleepy .")
    full = model.full_logits(ids)
    assert np.abs(_cached_logits(model, ids, 20) - full).max() < 1e-12
    m32 = model.astype(np.float32)
    cached32, full32 = _cached_logits(m32, ids, 20), m32.full_logits(ids)
    assert cached32.dtype == full32.dtype == np.float32
    difference = np.abs(cached32 - full32).max()
    assert 0 < difference < 1e-3


def test_the_offset_bug_changes_the_logits_of_every_new_token(model):
    ids = model.encode("the cat didn't cross the road because it was too sleepy .")
    right, wrong = _cached_logits(model, ids, 20), _cached_logits(model, ids, 20, positions_at_zero=True)
    assert np.abs(right[:20] - wrong[:20]).max() < 1e-12            # the prompt stands where it should
    assert np.abs(right[20:] - wrong[20:]).max(axis=-1).min() > 1e-3


def test_text_the_model_never_saw_is_refused_by_name(model):
    with pytest.raises(ValueError, match="knows only the characters"):
        model.encode("The Dog")
    with pytest.raises(ValueError, match="float32 or float64"):
        model.astype(np.int32)
