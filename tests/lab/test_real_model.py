"""Lesson 10's look inside a real model: GPT-2's heads by the course's functions, or its own model offline.

Offline (no transformers, no internet, ``LESSONS_OFFLINE=1``, and always in CI) ``look_inside``
says so in one line and returns the course's own model's heads; online it reads GPT-2 small.
The GPT-2 path is held here on a small random GPT-2 (no download): the course's
``multi_head_attention`` with the adapted weights gives the model's own attention.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import real_model
from tests.helpers import require

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def run():
    return ll.train_coref_model(steps=20, snapshot_every=10, progress=False)


@pytest.mark.training
def test_offline_says_so_in_one_line_and_shows_the_course_model(run, monkeypatch):
    monkeypatch.setenv("LESSONS_OFFLINE", "1")
    seen = real_model.look_inside(ll.SENTENCE_B, run=run)
    assert seen.note.startswith("Offline") and "\n" not in seen.note and "GPT-2" in seen.note
    assert seen.weights.shape == (2, 2, len(seen.tokens), len(seen.tokens)) and seen.agreement is None
    np.testing.assert_allclose(seen.weights.sum(-1), 1, atol=1e-6)


@pytest.mark.training
def test_a_sentence_the_course_model_cannot_read_falls_back_to_lesson_09s(run):
    seen = real_model.look_inside("Transformers read every word at once.", online=False, run=run)
    assert "animal" in seen.tokens


def test_the_gpt2_path_is_the_course_functions_on_gpt2s_weights():
    require(importlib.util.find_spec("transformers") is not None, "transformers is not installed")
    import transformers

    config = transformers.GPT2Config(n_embd=16, n_head=4, n_layer=2, n_positions=32, vocab_size=50)
    torch.manual_seed(0)
    model = transformers.GPT2Model._from_config(config, attn_implementation="eager").double().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)          # non-zero biases, LayerNorms away from 1 and 0
    weights, agreement = real_model.gpt2_layer_weights(model, torch.tensor([[3, 14, 15, 9, 26, 5]]))
    assert weights.shape == (2, 4, 6, 6) and agreement < 1e-10
    assert (np.triu(weights, k=1) == 0).all()          # causal, as GPT-2


@pytest.mark.training
def test_the_explorer_builds_at_both_ends_and_refuses_outside(run):
    seen = real_model.look_inside(online=False, run=run)
    for layer in (1, seen.n_layers):
        explorer = ll.RealModelExplorer(seen, layer=layer)
        assert explorer.widget is not None and not explorer.error_box.value
    with pytest.raises(ValueError, match="layer"):
        ll.RealModelExplorer(seen, layer=seen.n_layers + 1)
    with pytest.raises(ValueError, match="token"):
        ll.RealModelExplorer(seen, token=len(seen.tokens))
    with pytest.raises(TypeError, match="sentence"):
        real_model.look_inside(42)
